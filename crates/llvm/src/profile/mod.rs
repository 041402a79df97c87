//! LLVM release profiles: what clang-offload-bundler 14, 16, 19 and 22 accept,
//! how they spell IDs when writing, how they match targets, and in what
//! order `-list` prints (LLVM's `StringMap` bucket order).
//!
//! Sources: `OffloadTargetInfo`, `isCodeObjectCompatible` and
//! `ListBundleIDsInFile` in `clang/lib/Driver/OffloadBundler.cpp` (16.0.6,
//! 19.1.7, 22.1.8; `clang/tools/clang-offload-bundler/ClangOffloadBundler.cpp`
//! in 14.0.6) and `clang/lib/Basic/TargetID.cpp`; every behaviour is pinned
//! by `tests/data/llvm-id-vectors.json` (recorded from those releases) and
//! the differential tests.
//!
//! # Example
//!
//! One `-targets` value as four releases write and match it.
//!
//! ```
//! use offload_kit_llvm::Release;
//!
//! let target = "hip-amdgcn-amd-amdhsa-gfx906"; // a processor where the environment goes
//! assert_eq!(Release::L16.written_id(target).unwrap(), target); // verbatim
//! assert_eq!(Release::L22.written_id(target).unwrap(), "hip-amdgcn-amd-amdhsa--");
//! // Unbundling: 16 finds gfx906 in it, 14 compares whole strings.
//! let entry = "hip-amdgcn-amd-amdhsa--gfx906";
//! assert!(Release::L16.compatible(entry, target, false));
//! assert!(!Release::L14.compatible(entry, target, false));
//! // hip and hipv4 match from LLVM 19 on.
//! assert!(!Release::L16.compatible(entry, "hipv4-amdgcn-amd-amdhsa--gfx906", false));
//! assert!(Release::L19.compatible(entry, "hipv4-amdgcn-amd-amdhsa--gfx906", false));
//! assert_eq!("llvm19".parse::<Release>(), Ok(Release::L19));
//! ```

use crate::error::{Error, LlvmError};

use crate::id::target_id::features_compatible;
use crate::id::triple::{self, CanonicalForm, Triple};
use crate::id::OFFLOAD_KINDS;
use crate::rules;
use std::fmt;
use std::str::FromStr;

pub mod hash_order;
pub mod main_amdgpu;
pub mod quirks;
pub mod target_id;

pub use quirks::Quirks;

/// An LLVM release whose behaviour is reproduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Release {
    /// LLVM 13 (13.0.1).
    L13,
    /// LLVM 14 (14.0.6).
    L14,
    /// LLVM 15 (15.0.6).
    L15,
    /// LLVM 16 (16.0.6).
    L16,
    /// LLVM 19 (19.1.7).
    L19,
    /// LLVM 22 (22.1.8).
    L22,
    /// LLVM 23 (release/23.x, 23.1): modelled from the newest sources
    /// readable before and after its branch (docs/llvm-23.md cites each
    /// behaviour); no binary to run, so not in [`Release::WITH_BINARY`].
    L23,
    /// LLVM `main` (24.0.0git: [`MAIN_COMMIT`] is after the 23 branch of
    /// 2026-07-14), modelled from its
    /// source at llvm-project commit [`MAIN_COMMIT`]: no binary to run, so
    /// not in [`Release::WITH_BINARY`], which the differential tests run against.
    Main,
}

/// The llvm-project commit of `clang/lib/Driver/OffloadBundler.cpp` that
/// [`Release::Main`] is modelled from (source-modelled: no binary was run).
pub const MAIN_COMMIT: &str = "0629daa018e3";

/// The llvm-project commit of `llvm/lib/Object/OffloadBinary.cpp` that the
/// offload-binary side of [`Release::Main`] is modelled from
/// (spec/offload-binary.md; `tools/llvm-main-changes` lists what changed
/// since).
pub const MAIN_OFFLOAD_BINARY_COMMIT: &str = "02dc39ba9835";

impl Release {
    /// The release reproduced when none is named (`--llvm-version`, a
    /// drop-in's configuration): the newest with a binary, which the
    /// differential tests hold it to.
    pub const DEFAULT: Release = Release::L22;

    /// The releases with a binary (Debian's clang-N and llvm-N), oldest
    /// first: what the differential tests and `tools/setup` run.
    pub const WITH_BINARY: [Release; 6] = [
        Release::L13,
        Release::L14,
        Release::L15,
        Release::L16,
        Release::L19,
        Release::L22,
    ];

    /// Every numbered release offload-kit reproduces, oldest first: those
    /// with a binary, then LLVM 23, modelled from source.
    pub const NUMBERED: [Release; 7] = appended(Release::WITH_BINARY, Release::L23);

    /// The numbered releases ([`Release::NUMBERED`]) for a message: `sep`
    /// between them, `last` before the newest.
    ///
    /// ```
    /// use offload_kit_llvm::Release;
    /// assert_eq!(Release::listed(", ", " or "), "13, 14, 15, 16, 19, 22 or 23");
    /// assert_eq!(Release::listed("|", "|"), "13|14|15|16|19|22|23");
    /// ```
    pub fn listed(sep: &str, last: &str) -> String {
        let numbers: Vec<String> = Release::NUMBERED.iter().map(Release::to_string).collect();
        let (newest, older) = numbers.split_last().expect("at least one release");
        format!("{}{last}{newest}", older.join(sep))
    }

    /// Every modelled release ([`Release::NUMBERED`], then
    /// [`Release::Main`]): what the fuzz targets and the panic-freedom
    /// properties run through.
    pub const MODELLED: [Release; 8] = appended(Release::NUMBERED, Release::Main);

    /// The release a build of LLVM `major` is judged as: its own where
    /// modelled, `main` from 24 (today's main is 24.0.0git), otherwise the
    /// newest modelled release older than it (`None` when it is older
    /// than all).
    ///
    /// ```
    /// use offload_kit_llvm::Release;
    /// assert_eq!(Release::for_major(23), Some(Release::L23));
    /// assert_eq!(Release::for_major(24), Some(Release::Main));
    /// assert_eq!(Release::for_major(25), Some(Release::Main));
    /// assert_eq!(Release::for_major(21), Some(Release::L19));
    /// assert_eq!(Release::for_major(12), None);
    /// ```
    pub fn for_major(major: u32) -> Option<Release> {
        if major >= Release::Main.major() {
            return Some(Release::Main);
        }
        Release::NUMBERED
            .into_iter()
            .filter(|r| r.major() <= major)
            .max()
    }

    /// Whether LLVM `major` is newer than every modelled release (main
    /// included), so that no profile describes it.
    pub fn newer_than_modelled(major: u32) -> bool {
        major > Release::Main.major()
    }

    /// The major version number (`main` is 24.0.0git).
    pub fn major(self) -> u32 {
        match self {
            Release::L13 => 13,
            Release::L14 => 14,
            Release::L15 => 15,
            Release::L16 => 16,
            Release::L19 => 19,
            Release::L22 => 22,
            Release::L23 => 23,
            Release::Main => 24,
        }
    }

    /// Whether the bundler writes each payload by seeking to its offset
    /// (14 and 16; 13 and 15 alike), so that an empty payload at the end
    /// never extends the file; 19 and later pad up to every offset.
    pub fn seeks_to_payloads(self) -> bool {
        self.quirks().seeks_to_payloads
    }

    /// The compressed bundle versions the bundler writes (`-compress`,
    /// `COMPRESSED_BUNDLE_FORMAT_VERSION`): none before 19, version 2 in
    /// 19, 2 or 3 from 22.
    pub fn ccob_versions_written(self) -> &'static [u16] {
        self.quirks().ccob_versions_written
    }

    /// The compressed bundle version the bundler writes unless told
    /// otherwise: the newest it writes (2 where it writes none).
    pub fn ccob_default_version(self) -> u16 {
        self.ccob_versions_written().last().copied().unwrap_or(2)
    }

    /// The offload binary versions this release's readers take
    /// (spec/offload-binary.md): none before 15, version 1 in 15 to 22
    /// (2 is "Invalid data"), 1 to 3 in main.
    pub fn offload_binary_versions_read(self) -> &'static [u32] {
        self.quirks().offload_binary_versions_read
    }

    /// The compressed bundle versions this release's readers take: none
    /// before 19, 1 and 2 in 19, 1 to 3 from 22.
    pub fn ccob_versions_read(self) -> &'static [u16] {
        self.quirks().ccob_versions_read
    }

    /// The offload tools this release ships that clang runs by name
    /// (`clang -B DIR` looks them up), and whether offload-kit reproduces
    /// each: the bundler from 13; `clang-offload-packager` from 15 (15's
    /// first packager is not modelled); from 22 `llvm-offload-binary`,
    /// which clang 22 runs for `--offload-new-driver`, with
    /// `clang-offload-packager` kept as its deprecated name.
    pub fn offload_tools(self) -> &'static [OffloadTool] {
        const BUNDLER: OffloadTool = OffloadTool {
            name: "clang-offload-bundler",
            modelled: true,
        };
        const PACKAGER: OffloadTool = OffloadTool {
            name: "clang-offload-packager",
            modelled: true,
        };
        const OFFLOAD_BINARY: OffloadTool = OffloadTool {
            name: "llvm-offload-binary",
            modelled: true,
        };
        match self {
            Release::L13 | Release::L14 => &[BUNDLER],
            Release::L15 => &[
                BUNDLER,
                OffloadTool {
                    modelled: false,
                    ..PACKAGER
                },
            ],
            Release::L16 | Release::L19 => &[BUNDLER, PACKAGER],
            Release::L22 | Release::L23 | Release::Main => &[BUNDLER, OFFLOAD_BINARY, PACKAGER],
        }
    }

    /// Whether this release's `clang-offload-packager` is reproduced:
    /// `None` where it has none (14 and before), `Some(false)` where it is
    /// not modelled (15's first one).
    pub fn packager_modelled(self) -> Option<bool> {
        (self.offload_tools().iter())
            .find(|t| t.name == "clang-offload-packager")
            .map(|t| t.modelled)
    }

    /// Whether unbundling a fat object's host entry runs `llvm-objcopy` to
    /// strip the bundle sections (19 and later), which `-###` prints
    /// instead of running.
    pub fn strips_host_with_objcopy(self) -> bool {
        self.quirks().strips_host_with_objcopy
    }
}

/// `list` with `last` after it. `M` must be `N + 1`: the lists above spell
/// their lengths out, and one that grows fails to compile here.
const fn appended<const N: usize, const M: usize>(
    list: [Release; N],
    last: Release,
) -> [Release; M] {
    assert!(M == N + 1, "a list of releases is its base and one more");
    let mut all = [last; M];
    let mut i = 0;
    while i < N {
        all[i] = list[i];
        i += 1;
    }
    all
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Release::Main => f.write_str("main"),
            r => write!(f, "{}", r.major()),
        }
    }
}

impl FromStr for Release {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim_start_matches("llvm") {
            "13" => Ok(Release::L13),
            "14" => Ok(Release::L14),
            "15" => Ok(Release::L15),
            "16" => Ok(Release::L16),
            "19" => Ok(Release::L19),
            "22" => Ok(Release::L22),
            "23" => Ok(Release::L23),
            "main" => Ok(Release::Main),
            _ => Err(format!(
                "unknown LLVM release '{s}' (expected {} or main)",
                Release::listed(", ", ", ")
            )),
        }
    }
}

/// In JSON a release is its major number, `main` the string `"main"`
/// (conformance cases, reports).
impl serde::Serialize for Release {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Release::Main => s.serialize_str("main"),
            r => s.serialize_u32(r.major()),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Release {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ReleaseVisitor;
        impl serde::de::Visitor<'_> for ReleaseVisitor {
            type Value = Release;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a release: {} or \"main\"", Release::listed(", ", ", "))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Release, E> {
                v.to_string().parse().map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Release, E> {
                v.to_string().parse().map_err(E::custom)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Release, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_any(ReleaseVisitor)
    }
}

/// An offload tool a release ships ([`Release::offload_tools`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffloadTool {
    /// The program name clang runs.
    pub name: &'static str,
    /// Whether offload-kit reproduces this release's tool.
    pub modelled: bool,
}

/// A target as a release's `OffloadTargetInfo` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetInfo {
    /// Offload kind text.
    pub kind: String,
    /// The triple.
    pub triple: Triple,
    /// Target ID text (may be empty).
    pub target_id: String,
}

/// The message LLVM 22 prints for a target that does not split into 5 or 6 pieces.
pub const LLVM22_FORMAT_ERROR: &str = "Targets need to follow the format '<offload kind>-<target triple>', where '<target triple>' follows the format '<kind>-<arch>-<vendor>-<os>-<env>[-<target id>[:target features]]'.";

/// LLVM 22's refusal of a target that is not `<kind>-<triple>` (ID-1).
fn format_error(target: &str) -> LlvmError {
    LlvmError::with(
        LLVM22_FORMAT_ERROR,
        Error::rule(rules::ID_1, format!("target '{target}'")),
    )
}

/// Whether release `major`'s `Triple` knows the architecture `name`, which
/// [`Triple::arch_kind`] classifies as `kind`. Observed with
/// `-targets=hip-<arch>-…` for every architecture name of the table and the
/// versioned `dxilv1.N`/`spirv1.N`, 13 to 22.
fn arch_known_in(name: &str, kind: &str, major: u32) -> bool {
    if let Some(v) = name.strip_prefix("dxilv") {
        let minor = v.strip_prefix("1.").and_then(|m| m.parse::<u32>().ok());
        return major >= 19 && minor.is_some_and(|m| m <= 8 || m == 9 && major >= 22);
    }
    if let Some(v) = name.strip_prefix("spirv").filter(|v| v.starts_with("1.")) {
        return major >= 19 && matches!(v, "1.5" | "1.6");
    }
    match kind {
        "spirv32" | "spirv64" => major >= 14,
        "dxil" | "loongarch32" | "loongarch64" => major >= 15,
        "xtensa" => major >= 16,
        "spirv" => major >= 19,
        "le32" | "le64" => major < 22,
        _ => true,
    }
}

/// `StringRef::split(Sep, MaxSplit)` semantics: at most `max + 1` pieces.
fn split_max(s: &str, sep: char, max: usize) -> Vec<&str> {
    s.splitn(max + 1, sep).collect()
}

impl Release {
    /// Whether `id` splits into the 5 or 6 pieces LLVM 22 requires.
    pub fn llvm22_well_formed(id: &str) -> bool {
        let n = split_max(id, '-', 5).len();
        n == 5 || n == 6
    }

    /// Parse a target or entry ID as this release's `OffloadTargetInfo` does.
    /// `None` only for LLVM 22 when the ID does not have 5 or 6 pieces.
    pub fn target_info(self, target: &str) -> Option<TargetInfo> {
        match self {
            Release::L13 => {
                // 13 splits at '-' into at most six pieces (kind, the four
                // triple components, a target ID with its features) without
                // a processor table, and spells the triple from its four
                // components (observed: `hip-xyz` gives triple `xyz---`).
                let pieces = split_max(target, '-', 5);
                let part = |i: usize| pieces.get(i).copied().unwrap_or("");
                Some(TargetInfo {
                    kind: part(0).to_string(),
                    triple: Triple::from_parts(part(1), part(2), part(3), part(4)),
                    target_id: part(5).to_string(),
                })
            }
            Release::L14 | Release::L15 | Release::L16 | Release::L19 => {
                let before_colon = target.split_once(':').map_or(target, |(a, _)| a);
                let (head, gpu) = before_colon.rsplit_once('-').unwrap_or(("", before_colon));
                // 16 and 19 look the empty string up in a table whose sentinel
                // entry has an empty name, so an ID ending in '-' takes the whole
                // ID as its target ID (`OffloadTargetInfo` in 16.0.6 and 19.1.7).
                let known = target_id::is_offload_arch_in(gpu, self.major())
                    || gpu.is_empty() && self > Release::L14;
                let (kind, triple_text, tid) = if known {
                    let (k, t) = head.split_once('-').unwrap_or((head, ""));
                    let tid = target.find(gpu).map_or("", |p| &target[p..]);
                    (k, t, tid)
                } else {
                    let (k, t) = before_colon.split_once('-').unwrap_or((before_colon, ""));
                    (k, t, "")
                };
                let t = Triple::parse(triple_text);
                let triple = if self == Release::L19 {
                    Triple::from_parts(&t.arch, &t.vendor, &t.os, &t.env)
                } else {
                    t
                };
                Some(TargetInfo {
                    kind: kind.to_string(),
                    triple,
                    target_id: tid.to_string(),
                })
            }
            Release::L22 | Release::L23 | Release::Main => {
                let pieces = split_max(target, '-', 5);
                if pieces.len() != 5 && pieces.len() != 6 {
                    return None;
                }
                let tid_with_features = if pieces.len() == 6 { pieces[5] } else { "" };
                let proc_ = tid_with_features.split(':').next().unwrap_or("");
                let tid = if !proc_.is_empty() && target_id::is_offload_arch_in(proc_, self.major())
                {
                    tid_with_features
                } else {
                    ""
                };
                let t = Triple::parse(&pieces[1..5].join("-"));
                Some(TargetInfo {
                    kind: pieces[0].to_string(),
                    triple: Triple::from_parts(&t.arch, &t.vendor, &t.os, &t.env),
                    target_id: tid.to_string(),
                })
            }
        }
    }

    /// The ID this release writes for a `-targets` entry (bundling), or the
    /// error it reports. 14/16 write the text verbatim.
    pub fn written_id(self, target: &str) -> Result<String, LlvmError> {
        match self {
            Release::L13 | Release::L14 | Release::L15 | Release::L16 => Ok(target.to_string()),
            Release::L19 => {
                let info = self.target_info(target).expect("19 always parses");
                Ok(format!(
                    "{}-{}-{}",
                    info.kind,
                    info.triple.as_str(),
                    info.target_id
                ))
            }
            Release::L22 | Release::L23 | Release::Main => {
                let info = self
                    .target_info(target)
                    .ok_or_else(|| format_error(target))?;
                Ok(info.str22())
            }
        }
    }

    /// Validate a target as the CLI does: kind and triple arch known.
    /// On failure, LLVM's message with the rule it breaks (ID-1 format,
    /// ID-2 offload kind, ID-3 triple).
    pub fn validate_target(self, target: &str) -> Result<TargetInfo, LlvmError> {
        let info = self
            .target_info(target)
            .ok_or_else(|| format_error(target))?;
        let kind_ok = OFFLOAD_KINDS.contains(&info.kind.as_str());
        // 23's and main's `parseArch` take every arch starting with `amdgpu`.
        let main_amdgpu =
            self.quirks().amdgpu_subarch_triples && main_amdgpu::is_amdgpu_arch(&info.triple.arch);
        let triple_ok = !info.triple.as_str().is_empty()
            && (main_amdgpu
                || (info.triple.arch_kind())
                    .is_some_and(|a| arch_known_in(&info.triple.arch, a, self.major())));
        if kind_ok && triple_ok {
            return Ok(info);
        }
        let mut msg = format!("invalid target '{target}'");
        if !kind_ok {
            msg.push_str(&format!(", unknown offloading kind '{}'", info.kind));
        }
        if !triple_ok {
            msg.push_str(&format!(
                ", unknown target triple '{}'",
                info.triple.as_str()
            ));
        }
        let rule = if kind_ok { rules::ID_3 } else { rules::ID_2 };
        Err(LlvmError::with(
            msg,
            Error::rule(rule, format!("target '{target}'")),
        ))
    }

    /// Whether a code object with entry ID `entry` satisfies the requested
    /// `target` (unbundling). 13-15 compare strings; 16+ use
    /// `isCodeObjectCompatible`.
    pub fn compatible(self, entry: &str, target: &str, hip_openmp: bool) -> bool {
        if self <= Release::L15 {
            return entry == target;
        }
        let (Some(co), Some(t)) = (self.target_info(entry), self.target_info(target)) else {
            return false;
        };
        // 23 and main: AMDGPU triples compare by subarch (`main_amdgpu`).
        let triples_ok = match self.quirks().amdgpu_subarch_triples {
            true => main_amdgpu::triples_compatible(&co.triple, &t.triple)
                .unwrap_or_else(|| co.triple.is_compatible_with(&t.triple)),
            false => co.triple.is_compatible_with(&t.triple),
        };
        if co.kind == t.kind && triples_ok && co.target_id == t.target_id {
            return true;
        }
        if !self.kinds_compatible(&co.kind, &t.kind, hip_openmp) || !triples_ok {
            return false;
        }
        if self == Release::L16 {
            return target_id::compatible_format_only(&co.target_id, &t.target_id);
        }
        // main parses both with `llvm::AMDGPU::TargetID::parse`, which
        // refuses every triple but AMDGPU ones (elsewhere only exact
        // matches), and takes an empty or `generic` processor from the
        // subarch (none for `amdgcn`, so two of them name the same GPU).
        if self.quirks().main_target_conflicts {
            return main_amdgpu::compatible((&co.triple, &co.target_id), (&t.triple, &t.target_id));
        }
        let (Some((cp, cid)), Some((tp, tid))) = (
            target_id::llvm_parse_target_id(&co.triple, &co.target_id),
            target_id::llvm_parse_target_id(&t.triple, &t.target_id),
        ) else {
            return false;
        };
        cp == tp && features_compatible(&cid, &tid)
    }

    /// `isOffloadKindCompatible` (COMPAT-1) as this release implements it.
    pub fn kinds_compatible(self, code_object: &str, target: &str, hip_openmp: bool) -> bool {
        if code_object == target {
            return true;
        }
        if self >= Release::L19
            && matches!((code_object, target), ("hip", "hipv4") | ("hipv4", "hip"))
        {
            return true;
        }
        // -hip-openmp-compatible exists from 15 (13 and 14 refuse the option).
        if hip_openmp && self >= Release::L15 {
            let hip = |k: &str| {
                k.as_bytes()
                    .get(..3)
                    .is_some_and(|p| p.eq_ignore_ascii_case(b"hip"))
            };
            return (hip(code_object) && target == "openmp")
                || (code_object == "openmp" && hip(target));
        }
        false
    }

    /// The order in which this release iterates a `StringMap` holding `keys`
    /// (inserted in the given order; repeated keys keep their first slot).
    /// This is the order of `-list` for binary bundles and of unbundling.
    pub fn stringmap_order<'k>(self, keys: &[&'k str]) -> Vec<&'k str> {
        let hash = if self <= Release::L16 {
            hash_order::djb_hash
        } else {
            hash_order::xxh3_hash
        };
        hash_order::stringmap_order(keys, hash)
    }
}

impl TargetInfo {
    /// LLVM 22's `OffloadTargetInfo::str()`.
    pub fn str22(&self) -> String {
        let norm = if self.triple.os_kind() == Some("amdhsa") {
            format!(
                "{}-",
                triple::normalize(self.triple.as_str(), CanonicalForm::Three)
            )
        } else {
            triple::normalize(self.triple.as_str(), CanonicalForm::Four)
        };
        format!("{}-{}-{}", self.kind, norm, self.target_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_in_tools() {
        // tools/llvm-releases is the list tools/setup installs and the
        // generator scripts run; it names the releases with a binary, in
        // order, and the modelled-only ones are newer than all of them.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tools/llvm-releases");
        let text = std::fs::read_to_string(path).expect("tools/llvm-releases");
        let listed: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let all: Vec<String> = Release::WITH_BINARY
            .iter()
            .map(Release::to_string)
            .collect();
        assert_eq!(
            listed, all,
            "tools/llvm-releases and Release::WITH_BINARY differ"
        );
        let newest = Release::WITH_BINARY[Release::WITH_BINARY.len() - 1];
        for r in Release::MODELLED {
            assert!(Release::WITH_BINARY.contains(&r) || r > newest, "{r}");
        }
    }

    #[test]
    fn list_order_matches_observed() {
        // `-list` order printed by clang-offload-bundler 14/16 and 19/22.
        let keys = [
            "openmp-nvptx64-nvidia-cuda--sm_70",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
            "host-x86_64-unknown-linux-gnu",
            "hip-amdgcn-amd-amdhsa--gfx906",
        ];
        let o16 = Release::L16.stringmap_order(&keys);
        assert_eq!(o16, [keys[3], keys[0], keys[2], keys[1]]);
        let o22 = Release::L22.stringmap_order(&keys);
        assert_eq!(o22, [keys[1], keys[3], keys[0], keys[2]]);
    }

    #[test]
    fn written_ids() {
        let cases = [
            (
                Release::L19,
                "host-x86_64-unknown-linux-gnu",
                "host-x86_64-unknown-linux-gnu-",
            ),
            (
                Release::L19,
                "openmp-nvptx64-nvidia-cuda",
                "openmp-nvptx64-nvidia-cuda--",
            ),
            (
                Release::L19,
                "hip-amdgcn-amd-amdhsa--",
                "hip-amdgcn-amd-amdhsa--hip-amdgcn-amd-amdhsa--",
            ),
            (
                Release::L19,
                "openmp-x86_64-pc-linux-gnu--foo",
                "openmp-x86_64-pc-linux-gnu--foo-",
            ),
            (Release::L19, "openmp-nvptx64", "openmp-nvptx64----"),
            (
                Release::L22,
                "host-x86_64-unknown-linux-",
                "host-x86_64-unknown-linux-unknown-",
            ),
            (
                Release::L22,
                "host-x86_64-linux-gnu-",
                "host-x86_64-unknown-linux-gnu-",
            ),
            (
                Release::L22,
                "hip-amdgcn-amd-amdhsa-unknown-gfx906",
                "hip-amdgcn-amd-amdhsa--gfx906",
            ),
            (
                Release::L22,
                "openmp-nvptx64-nvidia-cuda-sm_70",
                "openmp-nvptx64-nvidia-cuda-sm_70-",
            ),
            (
                Release::L22,
                "hip-amdgcn-amd-amdhsa-gfx906",
                "hip-amdgcn-amd-amdhsa--",
            ),
            (
                Release::L22,
                "openmp-x86_64-pc-linux-gnu--gfx906",
                "openmp-x86_64-pc-linux-gnu-",
            ),
        ];
        for (r, id, want) in cases {
            assert_eq!(r.written_id(id).unwrap(), want, "{r} writes {id}");
        }
        assert!(Release::L22
            .written_id("openmp-nvptx64-nvidia-cuda")
            .is_err());
    }

    #[test]
    fn matching() {
        let e = "hip-amdgcn-amd-amdhsa--gfx906";
        assert!(!Release::L16.compatible(e, "hipv4-amdgcn-amd-amdhsa--gfx906", false));
        assert!(Release::L19.compatible(e, "hipv4-amdgcn-amd-amdhsa--gfx906", false));
        assert!(Release::L16.compatible(e, "hip-amdgcn-amd-amdhsa-gfx906", false));
        assert!(Release::L22.compatible(e, "hip-amdgcn-amd-amdhsa--gfx906:xnack+", false));
        assert!(!Release::L22.compatible(e, "openmp-amdgcn-amd-amdhsa--gfx906", false));
        assert!(Release::L22.compatible(e, "openmp-amdgcn-amd-amdhsa--gfx906", true));
        assert!(!Release::L14.compatible(e, "hip-amdgcn-amd-amdhsa--gfx906:xnack+", false));
    }
}
