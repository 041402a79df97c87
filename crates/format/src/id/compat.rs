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
    code_object.arch == target.arch
        && code_object.vendor == target.vendor
        && code_object.os == target.os
        && env(&code_object.env) == env(&target.env)
}

/// COMPAT-3: whether the target IDs of two strictly parsed entry IDs are
/// compatible: both absent, or the same canonical processor (TID-4) with
/// every feature the code object sets set the same way in the target.
pub fn target_ids_compatible(code_object: &BundleEntryId, target: &BundleEntryId) -> bool {
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
