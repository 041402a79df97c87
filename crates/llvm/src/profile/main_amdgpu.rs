//! How LLVM main's bundler compares entry IDs on AMDGPU triples
//! (`clang/lib/Driver/OffloadBundler.cpp` at llvm-project `0629daa018e3`,
//! with `llvm::Triple::isCompatibleWith`, `AMDGPU::isSubArchCompatible` and
//! `AMDGPU::TargetID::parse` of the same period; spec/bundle-id.md
//! COMPAT-4, *LLVM main*). `amdgcn` and every arch field starting with
//! `amdgpu` are one architecture there; a subarch (`amdgpu9.42`) carries
//! the GPU.
//!
//! ```
//! use offload_kit_format::id::triple::Triple;
//! use offload_kit_llvm::profile::main_amdgpu::{compatible, triples_compatible};
//!
//! let (gfx942, family) = (Triple::parse("amdgpu9.42-amd-amdhsa"), Triple::parse("amdgpu9.4-amd-amdhsa"));
//! assert_eq!(triples_compatible(&gfx942, &family), Some(true)); // either way
//! assert!(compatible((&Triple::parse("amdgcn-amd-amdhsa"), "gfx942"), (&gfx942, "")));
//! assert!(!compatible((&family, "gfx9-4-generic"), (&gfx942, "gfx942")));
//! ```

use crate::id::subarch::Subarch;
use crate::id::target_id::{features_compatible, TargetId};
use crate::id::triple::{parse_environment, parse_os, parse_vendor, Triple};

/// Whether `arch` is main's `Triple::amdgpu`: `amdgcn`, or anything
/// starting with `amdgpu` (`parseArch`'s `StartsWith("amdgpu")`).
pub fn is_amdgpu_arch(arch: &str) -> bool {
    arch == "amdgcn" || arch.starts_with("amdgpu")
}

/// Main's symmetric `isSubArchCompatible`: equal, or one is the major of
/// the other's family (two distinct minors never are).
fn subarches_compatible(a: Subarch, b: Subarch) -> bool {
    a.serves(b) || b.serves(a)
}

/// `Triple::isCompatibleWith` on main for two AMDGPU triples: vendor, OS
/// and environment agree, then `isSubArchCompatible(Triple, Triple)`: a
/// side without a subarch is compatible only when its arch name has six
/// letters (`amdgcn`, bare `amdgpu`: with anything); `amdgpufoo`, with
/// nothing, not even itself. `None` unless both are AMDGPU triples.
pub fn triples_compatible(a: &Triple, b: &Triple) -> Option<bool> {
    if !is_amdgpu_arch(&a.arch) || !is_amdgpu_arch(&b.arch) {
        return None;
    }
    if parse_vendor(&a.vendor) != parse_vendor(&b.vendor)
        || parse_os(&a.os) != parse_os(&b.os)
        || parse_environment(&a.env) != parse_environment(&b.env)
    {
        return Some(false);
    }
    Some(match (Subarch::parse(&a.arch), Subarch::parse(&b.arch)) {
        (None, _) => a.arch.len() == 6,
        (_, None) => b.arch.len() == 6,
        (Some(x), Some(y)) => subarches_compatible(x, y),
    })
}

/// `AMDGPU::TargetID::parse` on main: the GPU (its canonical processor;
/// `None` for `GK_NONE`) and the features. An empty or `generic` processor
/// is the subarch's; a named one must be valid for the subarch
/// (`isCPUValidForSubArch`, symmetric). `None` where main returns
/// `std::nullopt`: a non-AMDGPU triple, an `amdgpu` arch without a known
/// subarch, a processor the subarch does not admit, a feature the GPU
/// does not support.
pub fn parse_target_id(triple: &Triple, text: &str) -> Option<(Option<String>, TargetId)> {
    if !is_amdgpu_arch(&triple.arch) {
        return None;
    }
    let sub = Subarch::parse(&triple.arch);
    if sub.is_none() && triple.arch != "amdgcn" {
        return None;
    }
    let (cpu, rest) = text.split_once(':').map_or((text, ""), |(c, r)| (c, r));
    let amdgcn = Triple::parse("amdgcn-amd-amdhsa");
    let gpu = if cpu.is_empty() || cpu == "generic" {
        sub.and_then(Subarch::processor).map(str::to_string)
    } else {
        let (canonical, _) = super::target_id::llvm_parse_target_id(&amdgcn, cpu)?;
        // A processor of no subarch has NoSubArch, which fits any.
        let fits = match (sub, Subarch::of_processor(&canonical)) {
            (Some(s), Some(p)) => subarches_compatible(s, p),
            _ => true,
        };
        if !fits {
            return None;
        }
        Some(canonical)
    };
    let features = match &gpu {
        // Features need a GPU that supports them.
        None if rest.is_empty() => TargetId {
            processor: String::new(),
            features: vec![],
        },
        None => return None,
        Some(g) => {
            let with = if rest.is_empty() {
                g.clone()
            } else {
                format!("{g}:{rest}")
            };
            super::target_id::llvm_parse_target_id(&amdgcn, &with)?.1
        }
    };
    Some((gpu, features))
}

/// `isCodeObjectCompatible` past the exact match on main, for AMDGPU
/// triples: both IDs parse and name the same GPU (`GPUKind` equality: no
/// generic code serves a family member here), and the code object's
/// features are each Any or equal.
pub fn compatible(co: (&Triple, &str), target: (&Triple, &str)) -> bool {
    match (
        parse_target_id(co.0, co.1),
        parse_target_id(target.0, target.1),
    ) {
        (Some((cg, cf)), Some((tg, tf))) => cg == tg && features_compatible(&cf, &tf),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Triple {
        Triple::parse(s)
    }

    #[test]
    fn triples_as_main_compares_them() {
        let c = |a: &str, b: &str| triples_compatible(&t(a), &t(b));
        assert_eq!(
            c("amdgpu9.4-amd-amdhsa", "amdgpu9.42-amd-amdhsa"),
            Some(true)
        );
        assert_eq!(
            c("amdgpu9.42-amd-amdhsa", "amdgpu9.4-amd-amdhsa"),
            Some(true)
        );
        assert_eq!(
            c("amdgpu9.00-amd-amdhsa", "amdgpu9.06-amd-amdhsa"),
            Some(false)
        );
        assert_eq!(c("amdgcn-amd-amdhsa", "amdgpu12.00-amd-amdhsa"), Some(true));
        assert_eq!(
            c("amdgpufoo-amd-amdhsa", "amdgpufoo-amd-amdhsa"),
            Some(false)
        );
        assert_eq!(c("nvptx64-nvidia-cuda", "amdgcn-amd-amdhsa"), None);
    }

    #[test]
    fn target_ids_as_main_parses_them() {
        let p = |tr: &str, tid: &str| parse_target_id(&t(tr), tid).map(|(g, _)| g);
        assert_eq!(p("amdgpu9.42-amd-amdhsa", ""), Some(Some("gfx942".into())));
        assert_eq!(
            p("amdgpu9.4-amd-amdhsa", "generic"),
            Some(Some("gfx9-4-generic".into()))
        );
        assert_eq!(
            p("amdgpu9.42-amd-amdhsa", "gfx9-4-generic"),
            Some(Some("gfx9-4-generic".into()))
        );
        assert_eq!(p("amdgpu9.42-amd-amdhsa", "gfx90a"), None);
        assert_eq!(p("amdgpu-amd-amdhsa", "gfx906"), None);
        assert_eq!(p("amdgcn-amd-amdhsa", ""), Some(None));
        assert_eq!(p("amdgcn-amd-amdhsa", ":xnack+"), None);
        // Generic code does not serve a family member on this path.
        assert!(!compatible(
            (&t("amdgpu9.4-amd-amdhsa"), "gfx9-4-generic:xnack+"),
            (&t("amdgpu9.42-amd-amdhsa"), "gfx942:xnack+")
        ));
        assert!(compatible(
            (&t("amdgcn-amd-amdhsa"), "gfx942"),
            (&t("amdgpu9.42-amd-amdhsa"), "")
        ));
        assert!(!compatible(
            (&t("amdgpu9.42-amd-amdhsa"), "gfx942:xnack+"),
            (&t("amdgpu9.42-amd-amdhsa"), "gfx942")
        ));
    }
}
