//! Bundle entry IDs (`<kind>-<triple>[-<target-id>]`) and target IDs.
//!
//! The strict layer here follows `spec/bundle-id.md`: a `nom` grammar for
//! the documented syntax (ID-1), then table checks (ID-2, ID-3, ID-5, ID-6,
//! TID-*), and the canonical spelling (ID-4). What each LLVM release does
//! instead lives in `offload_kit::profile` (the release models).
//!
//! # Example
//!
//! Parse an ID, spell it canonically, and see a violation with its position.
//!
//! ```
//! use offload_kit_format::id::BundleEntryId;
//!
//! let id = BundleEntryId::parse_strict("openmp-nvptx64-nvidia-cuda--sm_70").unwrap();
//! assert_eq!((id.kind.as_str(), id.triple.arch.as_str(), id.target_id.as_str()), ("openmp", "nvptx64", "sm_70"));
//! // ID-4: six fields, the triple normalized to four components.
//! assert_eq!(id.canonical(), "openmp-nvptx64-nvidia-cuda-unknown-sm_70");
//!
//! // A processor where the environment goes violates ID-5, at byte 22 of the ID.
//! let errs = BundleEntryId::parse_strict("hip-amdgcn-amd-amdhsa-gfx906").unwrap_err();
//! assert_eq!((errs[0].rule.id, errs[0].pos), ("ID-5", 22));
//! ```

pub mod compat;
pub mod processor;
pub mod subarch;
pub mod target_id;
pub mod triple;

use crate::rules::{self, Rule};
use nom::bytes::complete::{tag, take_while};
use nom::combinator::{all_consuming, opt, rest};
use nom::sequence::preceded;
use nom::Parser;
use target_id::TargetId;
use triple::{CanonicalForm, Triple};

/// The offload kinds a bundle entry may carry (ID-2).
pub const OFFLOAD_KINDS: &[&str] = &["host", "hip", "hipv4", "openmp"];

/// A violation found in an entry ID: rule, position inside the ID, message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdError {
    /// The violated rule.
    pub rule: Rule,
    /// Byte position inside the ID text.
    pub pos: usize,
    /// Explanation.
    pub message: String,
}

/// A bundle entry ID split by the strict grammar (ID-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleEntryId {
    /// Offload kind (`host`, `hip`, `hipv4`, `openmp`).
    pub kind: String,
    /// The triple: arch, vendor, OS and, when written, environment.
    pub triple: Triple,
    /// Whether the environment field was written (even empty).
    pub has_env: bool,
    /// The target ID text, possibly empty.
    pub target_id: String,
    /// The parsed target ID, if non-empty.
    pub parsed_target_id: Option<TargetId>,
}

fn field(i: &str) -> nom::IResult<&str, &str> {
    take_while(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.').parse(i)
}

/// Split by the documented grammar: `kind-arch-vendor-os[-env[-target-id]]`.
/// Fields are `[A-Za-z0-9_.]*`; the target ID is the rest (it may contain
/// `-`, as in `gfx9-4-generic`, and `:`).
#[allow(clippy::type_complexity)]
fn split(text: &str) -> Result<(&str, [&str; 3], Option<&str>, Option<&str>), IdError> {
    let r = all_consuming((
        field,
        preceded(tag("-"), field),
        preceded(tag("-"), field),
        preceded(tag("-"), field),
        opt((preceded(tag("-"), field), opt(preceded(tag("-"), rest)))),
    ))
    .parse(text);
    match r {
        Ok((_, (k, a, v, o, tail))) => {
            let (env, tid) = match tail {
                Some((e, t)) => (Some(e), t),
                None => (None, None),
            };
            Ok((k, [a, v, o], env, tid))
        }
        Err(e) => {
            let restv = match e {
                nom::Err::Error(e) | nom::Err::Failure(e) => e.input,
                nom::Err::Incomplete(_) => "",
            };
            let pos = text.len() - restv.len();
            Err(IdError {
                rule: rules::ID_1,
                pos,
                message: format!(
                    "bundle entry ID '{}' does not match <kind>-<arch>-<vendor>-<os>[-<env>[-<target-id>]] at character {pos}",
                    text.escape_debug()
                ),
            })
        }
    }
}

/// The strict processor table (TID-3): AMDGPU names on `amdgcn`, CUDA
/// names on `nvptx`/`nvptx64`, `amdgcnspirv` on `spirv64`; other
/// architectures take no target ID. (LLVM accepts any name off AMDGPU.)
fn strict_processor_violation(triple: &Triple, proc_: &str) -> Option<String> {
    let arch = triple.arch_kind();
    let ok = match arch {
        _ if triple.is_amdgpu() => target_id::canonical_processor(triple, proc_).is_some(),
        Some("nvptx" | "nvptx64") => processor::is_cuda(proc_),
        Some("spirv64") => proc_ == "amdgcnspirv",
        _ => {
            return Some(format!(
                "architecture '{}' takes no target ID, found '{proc_}'",
                triple.arch
            ))
        }
    };
    (!ok).then(|| {
        format!(
            "processor '{proc_}' is not known for architecture '{}'",
            triple.arch
        )
    })
}

/// ID-7 for an `amdgpu<subarch>` triple: an empty target ID takes the
/// subarch's processor, so the subarch must name one; a named processor
/// must be the subarch's own or, for a major subarch, one of its family's.
fn subarch_violation(triple: &Triple, tid_text: &str) -> Option<String> {
    let sub = subarch::Subarch::parse(&triple.arch)?;
    let named = tid_text.split(':').next().unwrap_or("");
    if named.is_empty() {
        let what = sub.processor().is_none().then(|| {
            format!(
                "'{}' names a family without a generic processor: the target ID must name the processor",
                triple.arch
            )
        });
        return what.or_else(|| {
            tid_text.contains(':').then(|| {
                format!(
                    "target features need a processor: write '{}' before them",
                    sub.processor().unwrap_or("")
                )
            })
        });
    }
    let primary = target_id::canonical_processor(triple, named)?;
    (!sub.admits(&primary)).then(|| {
        format!(
            "processor '{named}' does not belong to subarch '{}'",
            triple.arch
        )
    })
}

/// A shared verdict of [`BundleEntryId::parse_strict`].
pub type Verdict = std::rc::Rc<Result<BundleEntryId, Vec<IdError>>>;

impl BundleEntryId {
    /// Parse and check an entry ID against every ID rule; all violations are returned.
    pub fn parse_strict(text: &str) -> Result<BundleEntryId, Vec<IdError>> {
        (*BundleEntryId::verdict(text)).clone()
    }

    /// Parse an entry ID as LLVM 14–16 wrote it where it breaks only ID-5:
    /// `hip-amdgcn-amd-amdhsa-gfx906`, the processor where the environment
    /// goes, read as `hip-amdgcn-amd-amdhsa--gfx906` (what clang meant and
    /// what LLVM 22 and the HIP runtime read). Any other violation, or an
    /// ID that is well-formed, gives what [`BundleEntryId::parse_strict`]
    /// gives; the ID-5 violation is returned beside the reading.
    ///
    /// ```
    /// use offload_kit_format::id::BundleEntryId;
    ///
    /// let (id, tolerated) = BundleEntryId::parse_tolerant("hip-amdgcn-amd-amdhsa-gfx906").unwrap();
    /// assert_eq!(id.canonical(), "hip-amdgcn-amd-amdhsa--gfx906");
    /// assert_eq!(tolerated.unwrap().rule.id, "ID-5");
    /// assert!(BundleEntryId::parse_tolerant("hip-amdgcn-amd-amdhsa--gfx906").unwrap().1.is_none());
    /// ```
    pub fn parse_tolerant(text: &str) -> Result<(BundleEntryId, Option<IdError>), Vec<IdError>> {
        let errs = match BundleEntryId::parse_strict(text) {
            Ok(id) => return Ok((id, None)),
            Err(errs) => errs,
        };
        let [only] = errs.as_slice() else {
            return Err(errs);
        };
        if only.rule.id != crate::rules::ID_5.id || !text.is_char_boundary(only.pos) {
            return Err(errs);
        }
        let meant = format!("{}-{}", &text[..only.pos], &text[only.pos..]);
        match BundleEntryId::parse_strict(&meant) {
            Ok(id) => Ok((id, Some(only.clone()))),
            Err(_) => Err(errs),
        }
    }

    /// [`BundleEntryId::parse_strict`]'s verdict, shared: the same few IDs
    /// recur in every bundle a fuzzer or a library walk reads, so the last
    /// verdicts (a pure function of the text) are remembered, a bounded
    /// number of them, and handed out without copying.
    pub fn verdict(text: &str) -> Verdict {
        /// FNV-1a: the remembered texts are short, and SipHash cost more
        /// than the lookup saved. Crafted collisions cost at most a scan of
        /// the bounded table.
        struct Fnv(u64);
        impl Default for Fnv {
            fn default() -> Fnv {
                Fnv(0xcbf2_9ce4_8422_2325)
            }
        }
        impl std::hash::Hasher for Fnv {
            fn write(&mut self, bytes: &[u8]) {
                for &b in bytes {
                    self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                }
            }
            fn finish(&self) -> u64 {
                self.0
            }
        }
        type Verdicts =
            std::collections::HashMap<Box<str>, Verdict, std::hash::BuildHasherDefault<Fnv>>;
        thread_local! {
            static SEEN: std::cell::RefCell<Verdicts> = std::cell::RefCell::new(Verdicts::default());
        }
        const REMEMBERED: usize = 1024;
        if text.len() > 256 {
            return std::rc::Rc::new(BundleEntryId::parse_strict_uncached(text));
        }
        if let Some(v) = SEEN.with(|m| m.borrow().get(text).cloned()) {
            return v;
        }
        let v = std::rc::Rc::new(BundleEntryId::parse_strict_uncached(text));
        SEEN.with(|m| {
            let mut m = m.borrow_mut();
            if m.len() >= REMEMBERED {
                m.clear();
            }
            m.insert(text.into(), v.clone());
        });
        v
    }

    fn parse_strict_uncached(text: &str) -> Result<BundleEntryId, Vec<IdError>> {
        if text.is_empty() {
            return Err(vec![IdError {
                rule: rules::BIN_4,
                pos: 0,
                message: "bundle entry ID is empty".into(),
            }]);
        }
        if let Some(p) = text.find(|c: char| !(c.is_ascii_graphic())) {
            return Err(vec![IdError {
                rule: rules::ID_1,
                pos: p,
                message: format!(
                    "bundle entry ID '{}' contains a character that is not printable ASCII at character {p}",
                    text.escape_debug()
                ),
            }]);
        }
        let (kind, [arch, vendor, os], env, tid) = split(text).map_err(|e| vec![e])?;
        let mut errs = Vec::new();
        if !OFFLOAD_KINDS.contains(&kind) {
            errs.push(IdError {
                rule: rules::ID_2,
                pos: 0,
                message: format!(
                    "unknown offload kind '{kind}' (expected host, hip, hipv4 or openmp)"
                ),
            });
        }
        let triple = Triple::from_parts(arch, vendor, os, env.unwrap_or(""));
        let arch_pos = kind.len() + 1;
        if arch == "amdgpu" {
            errs.push(IdError {
                rule: rules::ID_7,
                pos: arch_pos,
                message: "an amdgpu triple names its subarch ('amdgpu9.42', 'amdgpu9.4'), or is written 'amdgcn'".into(),
            });
        } else if triple::parse_arch(arch).is_none() && subarch::Subarch::parse(arch).is_none() {
            errs.push(IdError {
                rule: rules::ID_3,
                pos: arch_pos,
                message: format!("unknown architecture '{arch}'"),
            });
        }
        let vendor_pos = arch_pos + arch.len() + 1;
        if vendor != "unknown" && triple::parse_vendor(vendor).is_none() {
            errs.push(IdError {
                rule: rules::ID_3,
                pos: vendor_pos,
                message: format!("unknown vendor '{vendor}' (write 'unknown' when there is none)"),
            });
        }
        let os_pos = vendor_pos + vendor.len() + 1;
        if triple::parse_os(os).is_none() {
            errs.push(IdError {
                rule: rules::ID_3,
                pos: os_pos,
                message: format!("unknown OS '{os}'"),
            });
        }
        let env_pos = kind.len() + arch.len() + vendor.len() + os.len() + 4;
        if let Some(e) = env {
            if !e.is_empty()
                && e != "unknown"
                && triple::parse_environment(e).is_none()
                && !processor::is_offload_arch(e)
            {
                errs.push(IdError {
                    rule: rules::ID_3,
                    pos: env_pos,
                    message: format!("unknown environment '{e}'"),
                });
            }
        }
        if tid.is_none() {
            if let Some(e) = env {
                if processor::is_offload_arch(e.split(':').next().unwrap_or("")) || e.contains(':')
                {
                    errs.push(IdError {
                        rule: rules::ID_5,
                        pos: env_pos,
                        message: format!(
                            "'{e}' stands where the environment goes but names a processor: write '{kind}-{arch}-{vendor}-{os}--{e}'"
                        ),
                    });
                }
            }
        }
        let tid_text = tid.unwrap_or("");
        let tid_pos = env_pos + env.map_or(0, str::len) + 1;
        if let Some(e) = subarch_violation(&triple, tid_text) {
            errs.push(IdError {
                rule: rules::ID_7,
                pos: if tid_text.is_empty() {
                    arch_pos
                } else {
                    tid_pos
                },
                message: e,
            });
        }
        let mut parsed = None;
        if !tid_text.is_empty() {
            if kind == "host" {
                errs.push(IdError {
                    rule: rules::ID_6,
                    pos: tid_pos,
                    message: format!("a host entry has no target ID, found '{tid_text}'"),
                });
            }
            match target_id::parse(tid_text) {
                Ok(t) => {
                    if let Some(m) = strict_processor_violation(&triple, &t.processor) {
                        errs.push(IdError {
                            rule: rules::TID_3,
                            pos: tid_pos,
                            message: m,
                        });
                    } else if let Err(e) = t.check(&triple) {
                        errs.push(IdError {
                            rule: e.rule,
                            pos: tid_pos + e.pos,
                            message: e.message,
                        });
                    }
                    parsed = Some(t);
                }
                Err(e) => errs.push(IdError {
                    rule: e.rule,
                    pos: tid_pos + e.pos,
                    message: e.message,
                }),
            }
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        Ok(BundleEntryId {
            kind: kind.to_string(),
            triple,
            has_env: env.is_some(),
            target_id: tid_text.to_string(),
            parsed_target_id: parsed,
        })
    }

    /// The canonical spelling (ID-4): six fields; AMDHSA triples keep an empty
    /// environment, others get the 4-field normalized triple; the target ID
    /// in canonical form (TID-4).
    pub fn canonical(&self) -> String {
        let t = &self.triple;
        let text = format!("{}-{}-{}-{}", t.arch, t.vendor, t.os, t.env);
        let norm = if let Some(sub) = subarch::Subarch::parse(&t.arch) {
            // The subarch is not a component `normalize` knows: the triple
            // keeps its place, spelt as LLVM main's table spells it.
            let env = if t.env == "unknown" { "" } else { &t.env };
            format!("{}-{}-{}-{env}", sub.arch(), t.vendor, t.os)
        } else if t.os_kind() == Some("amdhsa") {
            format!("{}-", triple::normalize(&text, CanonicalForm::Three))
        } else {
            triple::normalize(&text, CanonicalForm::Four)
        };
        let tid = match &self.parsed_target_id {
            Some(p) => p.canonical(t),
            None => String::new(),
        };
        format!("{}-{}-{}", self.kind, norm, tid)
    }

    /// The AMDGPU processor the entry is for: its target ID's, canonical
    /// (TID-4), or, when that is empty, its subarch's (ID-7).
    pub fn amdgpu_processor(&self) -> Option<String> {
        match &self.parsed_target_id {
            Some(t) if self.triple.is_amdgpu() => {
                target_id::canonical_processor(&self.triple, &t.processor)
            }
            Some(_) => None,
            None => subarch::Subarch::parse(&self.triple.arch)
                .and_then(subarch::Subarch::processor)
                .map(str::to_string),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        BundleEntryId::parse_strict(s).unwrap().canonical()
    }

    #[test]
    fn amdgpu_subarch_ids() {
        // As LLVM main writes them (clang/test/Driver/linker-wrapper-hip-no-rdc.c).
        for id in [
            "hip-amdgpu9.4-amd-amdhsa--gfx9-4-generic:xnack+",
            "hip-amdgpu12.00-amd-amdhsa--gfx1200",
            "hipv4-amdgpu9.42-amd-amdhsa--",
            // Newer than 22's processor table, named by main's subarches.
            "hip-amdgpu11.70-amd-amdhsa--gfx1170",
        ] {
            assert_eq!(canon(id), id);
        }
        // Aliases are written with the table's spelling.
        assert_eq!(
            canon("hipv4-amdgpu9.5-amd-amdhsa--"),
            "hipv4-amdgpu9.4-amd-amdhsa--"
        );
        let p = |id: &str| BundleEntryId::parse_strict(id).unwrap().amdgpu_processor();
        assert_eq!(
            p("hipv4-amdgpu9.42-amd-amdhsa--").as_deref(),
            Some("gfx942")
        );
        assert_eq!(
            p("hipv4-amdgpu9.4-amd-amdhsa--").as_deref(),
            Some("gfx9-4-generic")
        );
        assert_eq!(
            p("hip-amdgpu9.4-amd-amdhsa--gfx942").as_deref(),
            Some("gfx942")
        );
        assert_eq!(p("hip-amdgcn-amd-amdhsa--fiji").as_deref(), Some("gfx803"));
        let first = |id: &str| {
            let e = BundleEntryId::parse_strict(id).unwrap_err().remove(0);
            (e.rule.id, e.pos)
        };
        assert_eq!(first("hip-amdgpu-amd-amdhsa--gfx942"), ("ID-7", 4));
        assert_eq!(first("hip-amdgpufoo-amd-amdhsa--"), ("ID-3", 4));
        assert_eq!(first("hip-amdgpu8-amd-amdhsa--"), ("ID-7", 4));
        assert_eq!(first("hip-amdgpu9.42-amd-amdhsa--gfx90a"), ("ID-7", 27));
        assert_eq!(first("hip-amdgpu9.42-amd-amdhsa--:xnack+"), ("ID-7", 27));
    }

    #[test]
    fn canonical_spellings() {
        assert_eq!(
            canon("host-x86_64-unknown-linux-gnu"),
            "host-x86_64-unknown-linux-gnu-"
        );
        assert_eq!(
            canon("hip-amdgcn-amd-amdhsa--gfx906"),
            "hip-amdgcn-amd-amdhsa--gfx906"
        );
        assert_eq!(canon("hip-amdgcn-amd-amdhsa"), "hip-amdgcn-amd-amdhsa--");
        assert_eq!(
            canon("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-"),
            "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+"
        );
        assert_eq!(
            canon("openmp-nvptx64-nvidia-cuda--sm_70"),
            "openmp-nvptx64-nvidia-cuda-unknown-sm_70"
        );
        assert_eq!(
            canon("hip-amdgcn-amd-amdhsa--gfx9-4-generic:xnack+"),
            "hip-amdgcn-amd-amdhsa--gfx9-4-generic:xnack+"
        );
    }

    fn rule_of(s: &str) -> &'static str {
        BundleEntryId::parse_strict(s).unwrap_err()[0].rule.id
    }

    #[test]
    fn violations() {
        assert_eq!(rule_of("HOST-x86_64-unknown-linux-gnu"), "ID-2");
        assert_eq!(rule_of("openmp-bogus-unknown-linux"), "ID-3");
        assert_eq!(rule_of("host-x86_64-linux-gnu-"), "ID-3");
        assert_eq!(rule_of("hip-amdgcn-AMD-AMDHSA--gfx906"), "ID-3");
        assert_eq!(rule_of("hip-amdgcn--amdhsa--gfx906"), "ID-3");
        assert_eq!(rule_of("hip-amdgcn-amd-amdhsa-gfx906"), "ID-5");
        assert_eq!(rule_of("host-x86_64-unknown-linux-gnu-gfx906"), "ID-6");
        assert_eq!(rule_of("openmp-nvptx64"), "ID-1");
        assert_eq!(rule_of("hip-amdgcn-amd-amdhsa--gfx906:xnack"), "TID-1");
        assert_eq!(rule_of("hip-amdgcn-amd-amdhsa--gfx906\r"), "ID-1");
        assert_eq!(rule_of(""), "BIN-4");
        assert_eq!(rule_of("hip-amdgcn-amd-amdhsa--gfx1030:xnack+"), "TID-3");
    }
}
