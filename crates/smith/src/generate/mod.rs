//! A structure-aware generator of offload containers, for people who fuzz
//! the loaders that read them (the HIP runtime, comgr, IREE, liboffload):
//! what `wasm-smith` is for WebAssembly engines.
//!
//! [`generate`] makes one file of a [`Kind`] from a seed, deterministically.
//! By default the file is valid: it passes the strict reader (every rule of
//! `spec/`). With [`Options::malformed`] it breaks exactly one rule, and the
//! returned [`Violation`] says which rule and at which absolute offset the
//! strict reader reports it. Every file is checked against the strict
//! reader before it is returned, so these labels are never wrong: a draw
//! that would break a second rule is thrown away and drawn again.
//!
//! The generator writes through its own small serialisers, which know where
//! every field lands, and stays beside the readers, not inside them (as
//! `wasm-smith` beside `wasmparser`). [`crate::mutate`] is its companion.
//!
//! # Example
//!
//! ```
//! use offload_kit_smith::generate::{generate, Kind, Options};
//! use offload_kit_format::rules;
//! use offload_kit_llvm::detect;
//!
//! let valid = generate(Kind::Binary, 7, &Options::default()).unwrap();
//! assert!(detect::list(&valid.bytes.as_slice(), None).is_ok());
//! assert_eq!(valid.bytes, generate(Kind::Binary, 7, &Options::default()).unwrap().bytes);
//!
//! let opts = Options { malformed: Some(rules::BIN_8), ..Options::default() };
//! let bad = generate(Kind::Binary, 7, &opts).unwrap();
//! let v = bad.violation.unwrap();
//! let errs = detect::list(&bad.bytes.as_slice(), None).unwrap_err();
//! assert!(errs.iter().all(|e| e.rule_id() == Some("BIN-8")));
//! assert!(errs.iter().any(|e| e.offset() == Some(v.offset)));
//! ```

pub(crate) mod binary;
pub(crate) mod ccob;
pub(crate) mod host;
pub mod image;
pub mod kpack;
mod offload_binary;
pub(crate) mod pick;
mod rng;
mod text;

pub use rng::Rng;

use crate::id::BundleEntryId;
use crate::rules::{self, Rule};
use std::fmt;

/// The kinds of file [`generate`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A binary bundle (`__CLANG_OFFLOAD_BUNDLE__`), 1–4 entries.
    Binary,
    /// A text bundle of one of the text types (`i`, `ii`, `cui`, `hipi`,
    /// `d`, `s`, `ll`).
    Text,
    /// A host ELF object with `__CLANG_OFFLOAD_BUNDLE__<ID>` sections.
    Object,
    /// A host ELF object with a `.hip_fatbin` section holding 1–3 bundles,
    /// plain or compressed, 4096-aligned.
    Fatbin,
    /// A compressed bundle (`CCOB` v1/v2/v3, zlib or zstd).
    Ccob,
    /// Offload binaries (`10 FF 10 AD`): v1 back to back, or one v2/v3
    /// (LLVM main) holding several images, v3 possibly compressed.
    OffloadBinary,
    /// A device archive: a GNU `ar` archive of bundles.
    Archive,
    /// A ROCm kpack split: a HIPK host object and one kpack archive per
    /// architecture ([`Generated::companions`]).
    Kpack,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 8] = [
        Kind::Binary,
        Kind::Text,
        Kind::Object,
        Kind::Fatbin,
        Kind::Ccob,
        Kind::OffloadBinary,
        Kind::Archive,
        Kind::Kpack,
    ];

    /// The name used on the command line and in sidecar files.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Binary => "binary",
            Kind::Text => "text",
            Kind::Object => "object",
            Kind::Fatbin => "fatbin",
            Kind::Ccob => "ccob",
            Kind::OffloadBinary => "offload-binary",
            Kind::Archive => "archive",
            Kind::Kpack => "kpack",
        }
    }

    /// The kind named `name` ([`Kind::name`]).
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// One line on what the kind is.
    pub fn description(self) -> &'static str {
        match self {
            Kind::Binary => "binary bundle (__CLANG_OFFLOAD_BUNDLE__), 1-4 entries, any alignment",
            Kind::Text => "text bundle of a random text type (i ii cui hipi d s ll)",
            Kind::Object => "host ELF object with __CLANG_OFFLOAD_BUNDLE__<ID> sections",
            Kind::Fatbin => {
                "host ELF object with .hip_fatbin: 1-3 bundles, plain and CCOB v2/v3, 4096-aligned"
            }
            Kind::Ccob => "compressed bundle CCOB v1/v2/v3, zlib or zstd",
            Kind::OffloadBinary => {
                "offload binaries 0x10FF10AD: v1 back to back, or v2/v3 (LLVM main)"
            }
            Kind::Archive => "device archive: GNU ar of bundles and compressed bundles",
            Kind::Kpack => {
                "ROCm kpack split: HIPK host object, one archive per gfx arch (plain or zstd)"
            }
        }
    }

    /// The rules this kind can break one at a time (see [`Options::malformed`]).
    pub fn malformable(self) -> &'static [Rule] {
        match self {
            Kind::Binary => binary::RULES,
            Kind::Text => text::RULES,
            Kind::Object => host::OBJECT_RULES,
            Kind::Fatbin => host::FATBIN_RULES,
            Kind::Ccob => ccob::RULES,
            Kind::OffloadBinary => offload_binary::RULES,
            Kind::Archive => host::ARCHIVE_RULES,
            Kind::Kpack => &[],
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Entry IDs to draw from (canonical bundle entry IDs, e.g.
    /// `hipv4-amdgcn-amd-amdhsa--gfx906`); empty: a built-in pool of
    /// AMDGPU, NVPTX, SPIR-V and host IDs.
    pub target_ids: Vec<String>,
    /// The largest file to make, in bytes.
    pub max_size: usize,
    /// Break exactly this rule (one of [`Kind::malformable`]).
    pub malformed: Option<Rule>,
    /// What entries carry: by default an image loaders accept.
    pub payloads: Payloads,
    /// Make only what this release's readers take (offload binary and
    /// compressed bundle versions); `None`: every version the spec has,
    /// LLVM main's included.
    pub release: Option<offload_kit_llvm::Release>,
}

/// What the entries of generated files carry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Payloads {
    /// For each entry, an image a loader accepts for the entry's target
    /// ([`image`]): AMDGPU code objects, cubins, SPIR-V, host shared objects.
    #[default]
    Loadable,
    /// Random bytes, never beginning like an ELF file (an ELF header makes a
    /// payload an image, which must conform: CO-2 … CO-5). Before
    /// 2026-11-26 offload-kit generated only these (then half of them began
    /// with an AMDGPU ELF identification).
    Random,
    /// The user's own images; entry IDs are drawn from their targets (or
    /// must be among them, with [`Options::target_ids`]).
    Given(Vec<Payload>),
}

/// One of the user's images, with the target read from its ELF header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    /// Where it came from (a file name), for messages.
    pub name: String,
    /// The image.
    pub bytes: Vec<u8>,
    /// The bundle entry ID that names it (kind, triple, target ID).
    pub id: String,
    /// The triple of an offload binary entry.
    pub triple: String,
    /// The `arch` of an offload binary entry (a target ID, `sm_N`, or empty).
    pub arch: String,
}

impl Payload {
    /// Read the target of `bytes` from its header: an AMDGPU code object
    /// (`hipv4-amdgcn-amd-amdhsa--<target ID>`), a cubin
    /// (`openmp-nvptx64-nvidia-cuda--sm_N`), a SPIR-V module
    /// (`hip-spirv64-amd-amdhsa--amdgcnspirv`) or an x86-64 or AArch64 ELF
    /// file (`openmp-<arch>-unknown-linux-gnu-`). Anything else is refused.
    ///
    /// ```
    /// use offload_kit_smith::generate::{image, Payload};
    ///
    /// let co = image::for_target("amdgcn-amd-amdhsa", "gfx942:xnack-", 1).unwrap();
    /// let p = Payload::from_image("k.hsaco", co).unwrap();
    /// assert_eq!(p.id, "hipv4-amdgcn-amd-amdhsa--gfx942:xnack-");
    /// assert!(Payload::from_image("x", b"not an ELF".to_vec()).is_err());
    /// ```
    pub fn from_image(name: &str, bytes: Vec<u8>) -> Result<Payload, GenerateError> {
        use crate::inspect::code_object::{identify, CodeObject};
        let refuse = |why: String| GenerateError::BadPayload {
            name: name.to_string(),
            reason: why,
        };
        let (kind, triple, arch) = match identify(&bytes) {
            CodeObject::Amdgpu(o) => {
                if o.processor.is_none() {
                    return Err(refuse(
                        "an AMDGPU code object whose e_flags name no known processor \
                         (code object V2, or an unknown EF_AMDGPU_MACH)"
                            .into(),
                    ));
                }
                ("hipv4", "amdgcn-amd-amdhsa", o.target_id())
            }
            CodeObject::Cubin(o) => ("openmp", "nvptx64-nvidia-cuda", format!("sm_{}", o.sm)),
            CodeObject::SpirV(_) => ("hip", "spirv64-amd-amdhsa", "amdgcnspirv".to_string()),
            CodeObject::Host(h) => match h.machine {
                62 => ("openmp", "x86_64-unknown-linux-gnu", String::new()),
                183 => ("openmp", "aarch64-unknown-linux-gnu", String::new()),
                m => {
                    return Err(refuse(format!(
                        "an ELF file for machine {m}, for which no offload target is known"
                    )))
                }
            },
            other => {
                let what = match other {
                    CodeObject::Bitcode => "LLVM bitcode",
                    CodeObject::Ptx(_) => "PTX text",
                    _ => "no ELF file, SPIR-V module or code object",
                };
                return Err(refuse(format!("{what}: a payload must be a device image")));
            }
        };
        // As LLVM 19 and 22 write IDs: four triple fields, then the target ID.
        let env = if triple.matches('-').count() == 2 {
            "-"
        } else {
            ""
        };
        let id = format!("{kind}-{triple}{env}-{arch}");
        Ok(Payload {
            name: name.to_string(),
            bytes,
            id,
            triple: triple.to_string(),
            arch,
        })
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            target_ids: Vec::new(),
            max_size: 1 << 20,
            malformed: None,
            payloads: Payloads::Loadable,
            release: None,
        }
    }
}

/// The rule a malformed file breaks, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule.
    pub rule: Rule,
    /// The absolute offset the strict reader reports it at.
    pub offset: u64,
    /// What was broken, in words.
    pub description: String,
}

/// One generated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// The file.
    pub bytes: Vec<u8>,
    /// What it holds, in words (container, versions, entry IDs).
    pub description: String,
    /// `Some` for a malformed file.
    pub violation: Option<Violation>,
    /// Files that go beside this one, named for the directory it is
    /// written to ([`Kind::Kpack`]'s archives; empty for other kinds).
    pub companions: Vec<kpack::Companion>,
}

/// Why [`generate`] made nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GenerateError {
    /// [`Options::release`] reads no file of this kind (compressed bundles
    /// before 19, offload binaries before 15).
    NotRead {
        /// The kind asked for.
        kind: Kind,
        /// The release.
        release: offload_kit_llvm::Release,
    },
    /// The kind has no byte-level violation of this rule.
    Unsupported {
        /// The kind asked for.
        kind: Kind,
        /// The rule asked for.
        rule: &'static str,
    },
    /// A `target_ids` entry is not a valid canonical bundle entry ID.
    BadTargetId {
        /// The ID.
        id: String,
        /// The strict reader's complaint.
        reason: String,
    },
    /// A `--payloads` image cannot be used (not a device image).
    BadPayload {
        /// Where it came from.
        name: String,
        /// Why.
        reason: String,
    },
    /// An entry ID's target has no image ([`image::for_target`] refuses it)
    /// or, with [`Payloads::Given`], no given image is for it.
    NoImage {
        /// The ID.
        id: String,
        /// Why.
        reason: String,
    },
    /// No draw fitted `max_size` and the rules (e.g. a `.hip_fatbin` needs
    /// 4096-byte alignment, so a fat binary below 8 KiB cannot be made).
    NoFit {
        /// The kind asked for.
        kind: Kind,
        /// Why the last draw was thrown away.
        reason: String,
    },
}

impl fmt::Display for GenerateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenerateError::NotRead { kind, release } => {
                write!(f, "LLVM {release} reads no {kind} file")
            }
            GenerateError::Unsupported { kind, rule } => {
                let can: Vec<&str> = kind.malformable().iter().map(|r| r.id).collect();
                write!(
                    f,
                    "kind {kind} cannot break rule {rule}; it can break: {}",
                    can.join(" ")
                )
            }
            GenerateError::BadTargetId { id, reason } => {
                write!(
                    f,
                    "target ID '{id}' is not a valid bundle entry ID: {reason}"
                )
            }
            GenerateError::BadPayload { name, reason } => {
                write!(f, "payload '{name}' cannot be used: {reason}")
            }
            GenerateError::NoImage { id, reason } => {
                write!(f, "no payload for the entry ID '{id}': {reason}")
            }
            GenerateError::NoFit { kind, reason } => {
                write!(
                    f,
                    "no {kind} file could be made within the limits: {reason}"
                )
            }
        }
    }
}

impl std::error::Error for GenerateError {}

/// What a kind's builder returns before the strict reader checks it.
pub(crate) struct Draft {
    bytes: Vec<u8>,
    description: String,
    violation: Option<Violation>,
}

/// Draws per call: a draw whose check fails (a second rule broken, the
/// size limit exceeded) is replaced by the next one.
const ATTEMPTS: u64 = 64;

/// At most this many files are read from a payload directory.
pub const MAX_PAYLOAD_FILES: usize = 4096;

/// The images in `dir` (every regular file, in name order, none larger
/// than `max_size`, together at most `max_total` bytes: the caller's
/// memory budget, CLI-6), each with its target ([`Payload::from_image`]).
pub fn payloads_from_dir(
    dir: &std::path::Path,
    max_size: usize,
    max_total: u64,
) -> Result<Vec<Payload>, GenerateError> {
    use std::io::Read;
    let shown = dir.display().to_string();
    let bad = |reason: String| GenerateError::BadPayload {
        name: shown.clone(),
        reason,
    };
    let mut names = Vec::new();
    let mut total = 0u64;
    for entry in
        std::fs::read_dir(dir).map_err(|e| bad(format!("cannot read the directory: {e}")))?
    {
        let entry = entry.map_err(|e| bad(format!("cannot read the directory: {e}")))?;
        let meta = std::fs::metadata(entry.path())
            .map_err(|e| bad(format!("{}: {e}", entry.path().display())))?;
        if meta.is_file() {
            names.push(entry.path());
            // Sizes on disk: a directory of sparse or huge files is refused
            // before anything is read (one larger than max_size is refused
            // by name below).
            total = total.saturating_add(meta.len().min(max_size as u64));
        }
        if names.len() > MAX_PAYLOAD_FILES {
            return Err(bad(format!("more than {MAX_PAYLOAD_FILES} files")));
        }
    }
    if names.is_empty() {
        return Err(bad("the directory holds no files".into()));
    }
    if total > max_total {
        return Err(bad(format!(
            "its images add up to more than {max_total} bytes, the memory budget (CLI-6): \
             name fewer or smaller images, or raise the budget (--max-memory)"
        )));
    }
    names.sort();
    let mut out = Vec::with_capacity(names.len());
    for path in names {
        let name = path.display().to_string();
        let mut bytes = Vec::new();
        std::fs::File::open(&path)
            .and_then(|f| f.take(max_size as u64 + 1).read_to_end(&mut bytes))
            .map_err(|e| GenerateError::BadPayload {
                name: name.clone(),
                reason: format!("cannot read: {e}"),
            })?;
        if bytes.len() > max_size {
            return Err(GenerateError::BadPayload {
                name,
                reason: format!("larger than the size limit of {max_size} bytes"),
            });
        }
        out.push(Payload::from_image(&name, bytes)?);
    }
    Ok(out)
}

/// Check `opts` as [`generate`] does before drawing: the IDs parse, every
/// ID can carry a payload of the chosen sort.
pub fn check_options(opts: &Options) -> Result<(), GenerateError> {
    with_pool(opts, |_| ())
}

/// Generate one file of `kind` from `seed` (see the [module docs](self)).
pub fn generate(kind: Kind, seed: u64, opts: &Options) -> Result<Generated, GenerateError> {
    if let Some(release) = opts.release {
        let unread = match kind {
            Kind::Ccob => release.ccob_versions_read().is_empty(),
            Kind::OffloadBinary => release.offload_binary_versions_read().is_empty(),
            _ => false,
        };
        if unread {
            return Err(GenerateError::NotRead { kind, release });
        }
    }
    if let Some(r) = opts.malformed {
        if !kind.malformable().contains(&r) {
            return Err(GenerateError::Unsupported { kind, rule: r.id });
        }
    }
    with_pool(opts, |ids| draw(kind, seed, opts, ids))?
}

/// Call `f` with the ID pool `opts` asks for, once every ID of it is known
/// to carry a payload of the chosen sort.
fn with_pool<R>(opts: &Options, f: impl FnOnce(&pick::Ids) -> R) -> Result<R, GenerateError> {
    let user;
    let ids = match (&opts.payloads, opts.target_ids.is_empty()) {
        (Payloads::Loadable | Payloads::Random, true) => pick::Ids::builtin(),
        (Payloads::Given(given), true) => {
            let mut from: Vec<String> = given.iter().map(|p| p.id.clone()).collect();
            from.sort();
            from.dedup();
            user = pick::Ids::new(&from)?;
            &user
        }
        (_, false) => {
            user = pick::Ids::new(&opts.target_ids)?;
            &user
        }
    };
    // The built-in pool carries images and random bytes (a unit test checks
    // it); the generator is called too often to check it each time.
    if !opts.target_ids.is_empty() || matches!(opts.payloads, Payloads::Given(_)) {
        pick::check_payloads(ids, &opts.payloads)?;
    }
    Ok(f(ids))
}

/// Draw files of `kind` until one checks out.
fn draw(
    kind: Kind,
    seed: u64,
    opts: &Options,
    ids: &pick::Ids,
) -> Result<Generated, GenerateError> {
    let mut why = String::new();
    for attempt in 0..ATTEMPTS {
        let mut rng = Rng::new(seed ^ attempt.wrapping_mul(0xa076_1d64_78bd_642f));
        // Later attempts draw smaller files, so tight limits still fit.
        let small = attempt >= ATTEMPTS / 2;
        let cx = Cx {
            rng: &mut rng,
            ids,
            small,
            payloads: &opts.payloads,
            release: opts.release,
        };
        let Some((draft, companions)) = build(kind, cx, opts.malformed, seed) else {
            why = match kind {
                Kind::Kpack => "no legacy amdgcn ID in the pool".into(),
                _ => "this draw cannot break the rule".into(),
            };
            continue;
        };
        let size = draft.bytes.len() + companions.iter().map(|c| c.1.len()).sum::<usize>();
        if size > opts.max_size {
            why = format!("{size} bytes, over the limit of {}", opts.max_size);
            continue;
        }
        match check(&draft).and_then(|()| check_companions(&companions)) {
            Ok(()) => {
                return Ok(Generated {
                    bytes: draft.bytes,
                    description: draft.description,
                    violation: draft.violation,
                    companions,
                })
            }
            Err(e) => why = e,
        }
    }
    Err(GenerateError::NoFit { kind, reason: why })
}

/// One draw of `kind`, with the files written beside it.
fn build(
    kind: Kind,
    cx: Cx<'_>,
    rule: Option<Rule>,
    seed: u64,
) -> Option<(Draft, Vec<kpack::Companion>)> {
    let single = match kind {
        Kind::Binary => binary::build(cx, rule),
        Kind::Text => text::build(cx, rule),
        Kind::Object => host::build_object(cx, rule),
        Kind::Fatbin => host::build_fatbin(cx, rule),
        Kind::Ccob => ccob::build(cx, rule),
        Kind::OffloadBinary => offload_binary::build(cx, rule),
        Kind::Archive => host::build_archive(cx, rule),
        Kind::Kpack => return kpack::build(cx, &format!("{kind}-{seed:016x}")),
    };
    single.map(|d| (d, Vec::new()))
}

/// Every companion file is a kpack archive the strict reader accepts,
/// each code object in it readable.
fn check_companions(companions: &[kpack::Companion]) -> Result<(), String> {
    for (name, bytes) in companions {
        let a = offload_kit_format::kpack::parse(bytes).map_err(|e| format!("{name}: {e}"))?;
        for k in &a.kernels {
            a.code_object(bytes, k, 1 << 28)
                .map_err(|e| format!("{name}: {e}"))?;
        }
    }
    Ok(())
}

/// The strict reader's verdict agrees with the draft's label: no violation
/// for a valid draft; only the labelled rule for a malformed one, no
/// violation before the labelled offset (the lowest offset is what
/// `offloadkit_validate` reports, and where a loader meets the error).
fn check(d: &Draft) -> Result<(), String> {
    let res = crate::inspect::validate(&d.bytes.as_slice(), Default::default());
    match (&d.violation, res) {
        (None, Ok(_)) => Ok(()),
        (None, Err(es)) => Err(format!("the strict reader rejects the draw: {es}")),
        (Some(v), Ok(_)) => Err(format!(
            "the strict reader accepts a draw breaking {}",
            v.rule.id
        )),
        (Some(v), Err(es)) => {
            let only = es.iter().all(|e| e.rule_id() == Some(v.rule.id));
            let first = es.iter().filter_map(|e| e.offset()).min();
            let at = first == Some(v.offset);
            if only && at {
                Ok(())
            } else {
                Err(format!(
                    "breaking {} at {} made the strict reader report: {es}",
                    v.rule.id, v.offset
                ))
            }
        }
    }
}

/// What every builder draws from.
pub(crate) struct Cx<'a> {
    pub(crate) rng: &'a mut Rng,
    pub(crate) ids: &'a pick::Ids,
    /// Draw few, short entries.
    pub(crate) small: bool,
    /// What entries carry.
    pub(crate) payloads: &'a Payloads,
    /// The release whose readers must take the file ([`Options::release`]).
    pub(crate) release: Option<offload_kit_llvm::Release>,
}

impl Cx<'_> {
    /// The offload binary versions the file may use.
    pub(crate) fn offload_binary_versions(&self) -> &'static [u32] {
        self.release
            .map_or(&[1, 2, 3], |r| r.offload_binary_versions_read())
    }

    /// Of `wanted` compressed bundle versions, those the release reads.
    pub(crate) fn ccob_versions(&self, wanted: &[u16]) -> Vec<u16> {
        let read = self
            .release
            .map_or(&offload_kit_format::raw::ccob::VERSIONS[..], |r| {
                r.ccob_versions_read()
            });
        wanted
            .iter()
            .copied()
            .filter(|v| read.contains(v))
            .collect()
    }
}

impl Violation {
    fn new(rule: Rule, offset: u64, description: impl Into<String>) -> Violation {
        Violation {
            rule,
            offset,
            description: description.into(),
        }
    }
}

/// Every rule some kind can break, in spec order.
pub fn malformable_rules() -> Vec<Rule> {
    rules::ALL
        .iter()
        .copied()
        .filter(|r| Kind::ALL.iter().any(|k| k.malformable().contains(r)))
        .collect()
}

/// Whether `id` is a canonical bundle entry ID the strict reader accepts.
fn strict_id(id: &str) -> Result<BundleEntryId, String> {
    BundleEntryId::parse_strict(id).map_err(|es| {
        es.iter()
            .map(|e| format!("{} ({})", e.message, e.rule.id))
            .collect::<Vec<_>>()
            .join("; ")
    })
}
