//! Spec verdicts for the ID operations, from the strict layer: the written
//! (canonical) ID of a target (ID-*, TID-*) and whether a code object
//! satisfies a requested target (COMPAT-1..3, [`crate::id::compat`]). The
//! corpus generator asks for them with `offload-kit conformance spec …`.
//!
//! # Example
//!
//! The spec's verdicts next to what each release writes.
//!
//! ```
//! use offload_kit_conformance::spec::{compatible, id_verdict, parse_id};
//! use offload_kit_llvm::Release;
//!
//! let nv = "openmp-nvptx64-nvidia-cuda--sm_70";
//! assert_eq!(parse_id(nv), Ok("openmp-nvptx64-nvidia-cuda-unknown-sm_70".to_string()));
//! assert_eq!(parse_id("hip-amdgcn-amd-amdhsa-gfx906"), Err("ID-5"));
//! assert_eq!(compatible("hip-amdgcn-amd-amdhsa--gfx906", "hipv4-amdgcn-amd-amdhsa--gfx906", false), Ok(true));
//! let v = id_verdict("hip-amdgcn-amd-amdhsa-gfx906");
//! assert_eq!(v.canonical, Err("ID-5"));
//! assert_eq!(v.written[1], (Release::L14, Ok("hip-amdgcn-amd-amdhsa-gfx906".to_string())));
//! assert_eq!(v.written[5], (Release::L22, Ok("hip-amdgcn-amd-amdhsa--".to_string())));
//! ```

pub use crate::id::compat::kinds_compatible;

use crate::error::Error;
use crate::id::compat;
use crate::profile::Release;

/// A spec verdict: a value, or the first rule violated.
pub type SpecResult<T> = Result<T, &'static str>;

/// The rule a strict ID error cites.
fn rule_of(e: Error) -> &'static str {
    e.rule_id().expect("strict ID errors cite a rule")
}

/// Parse `text` strictly: its canonical spelling (ID-4), or the first rule it violates.
pub fn parse_id(text: &str) -> SpecResult<String> {
    compat::strict_id(text)
        .map(|id| id.canonical())
        .map_err(rule_of)
}

/// Whether a code object with entry ID `entry` satisfies the requested
/// `request` under COMPAT-1..3 ([`compat::is_compatible`]). An invalid
/// request or entry is reported with its first violated rule (the request
/// first, as it is checked first).
pub fn compatible(entry: &str, request: &str, hip_openmp: bool) -> SpecResult<bool> {
    compat::is_compatible(entry, request, hip_openmp).map_err(rule_of)
}

/// The verdicts for one ID (`spec parse-id`): its canonical spelling or
/// first violated rule, and the ID each release profile writes for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdVerdict {
    /// The ID as given.
    pub id: String,
    /// [`parse_id`] of it.
    pub canonical: SpecResult<String>,
    /// For each release ([`Release::WITH_BINARY`] order), the ID it writes, or why it writes none.
    pub written: Vec<(Release, Result<String, String>)>,
}

/// The [`IdVerdict`] for `id`.
pub fn id_verdict(id: &str) -> IdVerdict {
    IdVerdict {
        id: id.to_string(),
        canonical: parse_id(id),
        written: Release::WITH_BINARY
            .iter()
            .map(|&r| (r, r.written_id(id).map_err(|e| e.message)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec verdicts are those of [`compat::is_compatible`], invalid
    /// IDs reported by their first violated rule.
    #[test]
    fn spec_compatibility() {
        for &(entry, request, hip_openmp, want) in compat::TEST_VECTORS {
            assert_eq!(
                compatible(entry, request, hip_openmp),
                want,
                "{entry} for {request} (hip_openmp {hip_openmp})"
            );
        }
    }
}
