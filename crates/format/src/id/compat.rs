//! Strict compatibility of a code object with a requested target
//! (`spec/bundle-id.md`, COMPAT-1 … COMPAT-3): offload kinds, triples and
//! target IDs. What each LLVM release does instead lives in
//! `offload_kit::profile::Release::compatible`.
//!
//! # Example
//!
//! Whether a code object satisfies a request, under the spec's rules.
//!
//! ```
//! use offload_kit_format::id::compat;
//!
//! let gfx906 = "hip-amdgcn-amd-amdhsa--gfx906";
//! // hip ~ hipv4 (COMPAT-1); a request with xnack on takes code leaving it Any (COMPAT-3) ...
//! assert!(compat::is_compatible(gfx906, "hipv4-amdgcn-amd-amdhsa--gfx906:xnack+", false).unwrap());
//! // ... but a request leaving xnack Any does not take code that needs it on.
//! assert!(!compat::is_compatible("hip-amdgcn-amd-amdhsa--gfx906:xnack+", gfx906, false).unwrap());
//! assert!(!compat::kinds_compatible("hip", "openmp", false) && compat::kinds_compatible("hip", "openmp", true));
//! // An invalid request is reported with the rule it violates.
//! let err = compat::is_compatible(gfx906, "hip-amdgcn-amd-amdhsa-gfx906", false).unwrap_err();
//! assert_eq!(err.rule_id(), Some("ID-5"));
//! ```

use super::subarch::Subarch;
use super::target_id::{canonical_processor, features_compatible};
use super::triple::Triple;
use super::BundleEntryId;
use crate::error::Error;

/// COMPAT-1: whether a code object of offload kind `code_object` is
/// compatible with a target of kind `target`: equal kinds, `hip`~`hipv4`,
/// and, with `hip_openmp` (`-hip-openmp-compatible`), `hip`/`hipv4`~`openmp`.
pub fn kinds_compatible(code_object: &str, target: &str, hip_openmp: bool) -> bool {
    let hip = |k: &str| k == "hip" || k == "hipv4";
    code_object == target
        || (hip(code_object) && hip(target))
        || (hip_openmp
            && ((hip(code_object) && target == "openmp")
                || (code_object == "openmp" && hip(target))))
}

/// COMPAT-2: whether two triples are compatible: arch, vendor, OS and
/// environment equal as text, an empty environment equal to `unknown`.
/// Nothing else is normalized (unlike LLVM's
/// [`Triple::is_compatible_with`]).
pub fn triples_compatible(code_object: &Triple, target: &Triple) -> bool {
    let env = |e: &str| if e.is_empty() { "unknown" } else { e }.to_string();
    arches_compatible(&code_object.arch, &target.arch)
        && code_object.vendor == target.vendor
        && code_object.os == target.os
        && env(&code_object.env) == env(&target.env)
}

/// The arch fields under COMPAT-2 and COMPAT-4: equal text; or, for AMDGPU,
/// subarches the code object's serves ([`Subarch::serves`]), the legacy
/// `amdgcn` (no subarch) on either side leaving it to the processors.
fn arches_compatible(code_object: &str, target: &str) -> bool {
    if code_object == target {
        return true;
    }
    match (Subarch::parse(code_object), Subarch::parse(target)) {
        (Some(c), Some(t)) => c.serves(t),
        (Some(_), None) => target == "amdgcn",
        (None, Some(_)) => code_object == "amdgcn",
        (None, None) => false,
    }
}

/// COMPAT-3: whether the target IDs of two strictly parsed entry IDs are
/// compatible: both absent, or the same canonical processor (TID-4) with
/// every feature the code object sets set the same way in the target. An
/// AMDGPU entry's processor is its subarch's when its target ID is empty
/// (ID-7), and a generic processor serves its family's (COMPAT-4).
pub fn target_ids_compatible(code_object: &BundleEntryId, target: &BundleEntryId) -> bool {
    let subarch_named = |e: &BundleEntryId| Subarch::parse(&e.triple.arch).is_some();
    if subarch_named(code_object) || subarch_named(target) {
        return amdgpu_processors_compatible(code_object, target);
    }
    match (&code_object.parsed_target_id, &target.parsed_target_id) {
        (None, None) => true,
        (Some(cp), Some(tp)) => {
            let same = canonical_processor(&code_object.triple, &cp.processor)
                .zip(canonical_processor(&target.triple, &tp.processor))
                .is_some_and(|(a, b)| a == b);
            same && features_compatible(cp, tp)
        }
        _ => false,
    }
}

/// COMPAT-3 and COMPAT-4 where either entry names a subarch: both name a
/// processor (their own or their subarch's), the code object's is the
/// target's or the generic processor of its family, and the features the
/// code object sets are set the same way in the target.
fn amdgpu_processors_compatible(code_object: &BundleEntryId, target: &BundleEntryId) -> bool {
    let (Some(cp), Some(tp)) = (code_object.amdgpu_processor(), target.amdgpu_processor()) else {
        return false;
    };
    let serves = cp == tp
        || Subarch::of_processor(&cp)
            .zip(Subarch::of_processor(&tp))
            .is_some_and(|(c, t)| c.serves(t));
    let features = |e: &BundleEntryId| e.parsed_target_id.clone().unwrap_or_default();
    serves && features_compatible(&features(code_object), &features(target))
}

/// COMPAT-1 … COMPAT-3 together: whether a code object with entry ID
/// `code_object` satisfies the requested `target`.
pub fn entries_compatible(
    code_object: &BundleEntryId,
    target: &BundleEntryId,
    hip_openmp: bool,
) -> bool {
    kinds_compatible(&code_object.kind, &target.kind, hip_openmp)
        && triples_compatible(&code_object.triple, &target.triple)
        && target_ids_compatible(code_object, target)
}

/// [`BundleEntryId::parse_strict`], reporting the first violated rule (ID-*,
/// TID-*, BIN-4) as an [`Error`] without a byte offset.
pub fn strict_id(text: &str) -> Result<BundleEntryId, Error> {
    BundleEntryId::parse_strict(text).map_err(|es| {
        let first = es
            .into_iter()
            .next()
            .expect("parse_strict reports a violation");
        Error::rule(first.rule, first.message)
    })
}

/// Whether a code object with entry ID `entry` satisfies the requested
/// `request` under COMPAT-1 … COMPAT-3. Both are parsed strictly first, the
/// request first; an invalid one is reported with its first violated rule.
pub fn is_compatible(entry: &str, request: &str, hip_openmp: bool) -> Result<bool, Error> {
    let target = strict_id(request)?;
    let code_object = strict_id(entry)?;
    Ok(entries_compatible(&code_object, &target, hip_openmp))
}

/// Entry, request and `hip_openmp` with the verdict under COMPAT-1 …
/// COMPAT-3, or the rule the first invalid ID violates (the request is
/// checked first): run by this module's tests through [`is_compatible`]
/// and by `conformance::spec`'s through its `compatible`.
pub const TEST_VECTORS: &[(&str, &str, bool, Result<bool, &str>)] = {
    const GFX906: &str = "hip-amdgcn-amd-amdhsa--gfx906";
    const AMDGPU94: &str = "hipv4-amdgpu9.4-amd-amdhsa--";
    const AMDGPU942: &str = "hipv4-amdgpu9.42-amd-amdhsa--";
    &[
        (GFX906, GFX906, false, Ok(true)),
        (GFX906, "hipv4-amdgcn-amd-amdhsa--gfx906", false, Ok(true)),
        (
            GFX906,
            "hip-amdgcn-amd-amdhsa--gfx906:xnack+",
            false,
            Ok(true),
        ),
        (
            "hip-amdgcn-amd-amdhsa--gfx906:xnack+",
            GFX906,
            false,
            Ok(false),
        ),
        (GFX906, "openmp-amdgcn-amd-amdhsa--gfx906", false, Ok(false)),
        (GFX906, "openmp-amdgcn-amd-amdhsa--gfx906", true, Ok(true)),
        (
            "openmp-nvptx64-nvidia-cuda--sm_70",
            "openmp-nvptx64-nvidia-cuda-unknown-sm_70",
            false,
            Ok(true),
        ),
        (GFX906, "hip-amdgcn-amd-amdhsa", false, Ok(false)),
        (GFX906, "hip-amdgcn-amd-amdhsa-gfx906", false, Err("ID-5")),
        ("hip-amdgcn-amd-amdhsa-gfx906", "bogus", false, Err("ID-1")),
        // amdgpu<subarch> triples (ID-7, COMPAT-4): generic code serves
        // its family, a minor subarch only itself.
        (AMDGPU94, AMDGPU942, false, Ok(true)),
        (AMDGPU942, AMDGPU94, false, Ok(false)),
        (AMDGPU942, AMDGPU942, false, Ok(true)),
        (
            "hipv4-amdgpu9.00-amd-amdhsa--",
            "hipv4-amdgpu9.06-amd-amdhsa--",
            false,
            Ok(false),
        ),
        (
            "hip-amdgpu9.4-amd-amdhsa--gfx9-4-generic:xnack+",
            "hip-amdgpu9.42-amd-amdhsa--gfx942:xnack+",
            false,
            Ok(true),
        ),
        (
            "hip-amdgpu9.4-amd-amdhsa--gfx9-4-generic:xnack+",
            AMDGPU942,
            false,
            Ok(false),
        ),
        ("hip-amdgcn-amd-amdhsa--gfx942", AMDGPU942, false, Ok(true)),
        (AMDGPU942, "hip-amdgcn-amd-amdhsa--gfx942", false, Ok(true)),
        (AMDGPU942, "hip-amdgcn-amd-amdhsa--gfx90a", false, Ok(false)),
        (
            "hipv4-amdgpufoo-amd-amdhsa--",
            AMDGPU942,
            false,
            Err("ID-3"),
        ),
        (
            "hip-amdgpu-amd-amdhsa--gfx942",
            AMDGPU942,
            false,
            Err("ID-7"),
        ),
        (
            "hip-amdgpu9.42-amd-amdhsa--gfx90a",
            AMDGPU942,
            false,
            Err("ID-7"),
        ),
        ("hipv4-amdgpu8-amd-amdhsa--", AMDGPU942, false, Err("ID-7")),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;

    fn compat(entry: &str, request: &str, hip_openmp: bool) -> Result<bool, &'static str> {
        is_compatible(entry, request, hip_openmp).map_err(|e| e.rule_id().unwrap_or("none"))
    }

    #[test]
    fn kinds() {
        assert!(kinds_compatible("hip", "hipv4", false));
        assert!(kinds_compatible("host", "host", false));
        assert!(!kinds_compatible("host", "openmp", true));
        assert!(!kinds_compatible("hip", "openmp", false));
        assert!(kinds_compatible("openmp", "hipv4", true));
    }

    #[test]
    fn triples() {
        let t = Triple::from_parts;
        assert!(triples_compatible(
            &t("nvptx64", "nvidia", "cuda", ""),
            &t("nvptx64", "nvidia", "cuda", "unknown")
        ));
        assert!(!triples_compatible(
            &t("amdgcn", "amd", "amdhsa", "gnu"),
            &t("amdgcn", "amd", "amdhsa", "")
        ));
    }

    #[test]
    fn entries() {
        for &(entry, request, hip_openmp, want) in TEST_VECTORS {
            assert_eq!(
                compat(entry, request, hip_openmp),
                want,
                "{entry} for {request} (hip_openmp {hip_openmp})"
            );
        }
    }
}
