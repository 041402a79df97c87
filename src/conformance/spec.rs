//! Spec verdicts for the ID operations, from the strict layer: the written
//! (canonical) ID of a target (ID-*, TID-*) and whether a code object
//! satisfies a requested target (COMPAT-1..3). The corpus generator asks
//! for them with `offload-kit conformance spec …`.

use crate::id::target_id::{canonical_processor, features_compatible};
use crate::id::BundleEntryId;
use crate::profile::Release;

/// A spec verdict: a value, or the first rule violated.
pub type SpecResult<T> = Result<T, &'static str>;

/// Parse `text` strictly: its canonical spelling (ID-4), or the first rule it violates.
pub fn parse_id(text: &str) -> SpecResult<String> {
    BundleEntryId::parse_strict(text)
        .map(|id| id.canonical())
        .map_err(|es| es[0].rule.id)
}

/// COMPAT-1: offload kinds.
pub fn kinds_compatible(code_object: &str, target: &str, hip_openmp: bool) -> bool {
    let hip = |k: &str| k == "hip" || k == "hipv4";
    code_object == target
        || (hip(code_object) && hip(target))
        || (hip_openmp
            && ((hip(code_object) && target == "openmp")
                || (code_object == "openmp" && hip(target))))
}

/// Whether a code object with entry ID `entry` satisfies the requested
/// `request` under COMPAT-1..3. An invalid request or entry is reported
/// with its first violated rule (the request first, as it is checked first).
pub fn compatible(entry: &str, request: &str, hip_openmp: bool) -> SpecResult<bool> {
    let t = BundleEntryId::parse_strict(request).map_err(|es| es[0].rule.id)?;
    let c = BundleEntryId::parse_strict(entry).map_err(|es| es[0].rule.id)?;
    if !kinds_compatible(&c.kind, &t.kind, hip_openmp) {
        return Ok(false);
    }
    let env = |e: &str| {
        if e.is_empty() {
            "unknown".to_string()
        } else {
            e.to_string()
        }
    };
    let (ct, tt) = (&c.triple, &t.triple);
    if ct.arch != tt.arch
        || ct.vendor != tt.vendor
        || ct.os != tt.os
        || env(&ct.env) != env(&tt.env)
    {
        return Ok(false);
    }
    match (&c.parsed_target_id, &t.parsed_target_id) {
        (None, None) => Ok(true),
        (Some(cp), Some(tp)) => {
            let same = canonical_processor(ct, &cp.processor)
                .zip(canonical_processor(tt, &tp.processor))
                .is_some_and(|(a, b)| a == b);
            Ok(same && features_compatible(cp, tp))
        }
        _ => Ok(false),
    }
}

/// `offload-kit conformance spec parse-id ID…` / `spec compatible ENTRY REQUEST [--hip-openmp]`:
/// print the spec verdicts as JSON lines (used by tools/gen-conformance-corpus.py);
/// `parse-id` adds the ID each release profile writes.
pub fn cli(args: &[String]) -> i32 {
    let out = |v: serde_json::Value| println!("{v}");
    match args.first().map(String::as_str) {
        Some("parse-id") => {
            for id in &args[1..] {
                let mut written = serde_json::Map::new();
                for r in Release::ALL {
                    written.insert(
                        r.to_string(),
                        match r.written_id(id) {
                            Ok(w) => serde_json::json!({ "id": w }),
                            Err(e) => serde_json::json!({ "error": e }),
                        },
                    );
                }
                out(match parse_id(id) {
                    Ok(c) => serde_json::json!({"id": id, "canonical": c, "written": written}),
                    Err(r) => serde_json::json!({"id": id, "fail": r, "written": written}),
                });
            }
            0
        }
        Some("compatible") => {
            let hip_openmp = args.iter().any(|a| a == "--hip-openmp");
            let pos: Vec<&String> = args[1..].iter().filter(|a| *a != "--hip-openmp").collect();
            if pos.len() != 2 {
                eprintln!(
                    "usage: offload-kit conformance spec compatible ENTRY REQUEST [--hip-openmp]"
                );
                return 2;
            }
            out(match compatible(pos[0], pos[1], hip_openmp) {
                Ok(c) => serde_json::json!({"compatible": c}),
                Err(r) => serde_json::json!({"fail": r}),
            });
            0
        }
        _ => {
            eprintln!("usage: offload-kit conformance spec parse-id ID… | spec compatible ENTRY REQUEST [--hip-openmp]");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_compatibility() {
        let e = "hip-amdgcn-amd-amdhsa--gfx906";
        assert_eq!(compatible(e, e, false), Ok(true));
        assert_eq!(
            compatible(e, "hipv4-amdgcn-amd-amdhsa--gfx906", false),
            Ok(true)
        );
        assert_eq!(
            compatible(e, "hip-amdgcn-amd-amdhsa--gfx906:xnack+", false),
            Ok(true)
        );
        assert_eq!(
            compatible("hip-amdgcn-amd-amdhsa--gfx906:xnack+", e, false),
            Ok(false)
        );
        assert_eq!(
            compatible(e, "openmp-amdgcn-amd-amdhsa--gfx906", false),
            Ok(false)
        );
        assert_eq!(
            compatible(e, "openmp-amdgcn-amd-amdhsa--gfx906", true),
            Ok(true)
        );
        assert_eq!(
            compatible(
                "openmp-nvptx64-nvidia-cuda--sm_70",
                "openmp-nvptx64-nvidia-cuda-unknown-sm_70",
                false
            ),
            Ok(true)
        );
        assert_eq!(
            compatible(e, "hip-amdgcn-amd-amdhsa-gfx906", false),
            Err("ID-5")
        );
    }
}
