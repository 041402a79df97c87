//! Target IDs and processors as each LLVM release reads them
//! (`clang/lib/Basic/TargetID.cpp`, `clang/lib/Basic/Cuda.cpp` /
//! `OffloadArch.cpp`): the format-only parse, `parseTargetID`, LLVM 16's
//! `isCompatibleTargetID`, and which processors each release knows. The
//! strict grammar is [`crate::id::target_id`].
//!
//! # Example
//!
//! LLVM's lenient and table-checked target ID parses, release by release.
//!
//! ```
//! use offload_kit_format::id::triple::Triple;
//! use offload_kit_llvm::profile::target_id::{compatible_format_only, format_only, is_offload_arch_in, llvm_parse_target_id};
//!
//! let (processor, features) = format_only(b"gfx90a:xnack+").unwrap();
//! assert_eq!((processor, features.len()), (&b"gfx90a"[..], 1));
//! assert!(format_only(b"gfx90a:xnack").is_none()); // a feature needs its sign
//! // parseTargetID also checks the tables and gives the canonical processor.
//! let amdgpu = Triple::parse("amdgcn-amd-amdhsa");
//! assert_eq!(llvm_parse_target_id(&amdgpu, "gfx90a:xnack+").map(|(p, _)| p), Some("gfx90a".to_string()));
//! assert!(llvm_parse_target_id(&amdgpu, "gfx1030:xnack+").is_none()); // gfx1030 has no xnack
//! // LLVM 16 matches by format only: an unknown processor matches itself.
//! assert!(compatible_format_only("gfx9999", "gfx9999:xnack+"));
//! assert!(!is_offload_arch_in("gfx950", 19) && is_offload_arch_in("gfx950", 22));
//! ```

use crate::id::processor::is_offload_arch;
use crate::id::target_id::{Feature, TargetId};
use crate::id::triple::Triple;
use std::collections::BTreeMap;

/// `clang::parseTargetID`: format check, canonical processor, feature
/// legality. `None` when any of them fails (LLVM gives no reason).
pub fn llvm_parse_target_id(triple: &Triple, text: &str) -> Option<(String, TargetId)> {
    let tid = llvm_format_only(text)?;
    let canon = tid.check(triple).ok()?;
    Some((canon, tid))
}

/// Feature names and signs as written, in order.
pub type FormatFeatures<'a> = Vec<(&'a [u8], Feature)>;

/// `parseTargetIDWithFormatCheckingOnly` on bytes: the processor (the text
/// before the first ':') and the features with their signs, in order.
/// `None` where LLVM returns `std::nullopt`: an empty processor, a feature
/// not ending in '+' or '-' (an empty one included), a repeated feature.
pub fn format_only(text: &[u8]) -> Option<(&[u8], FormatFeatures<'_>)> {
    let mut parts = text.split(|&b| b == b':');
    let processor = parts.next().filter(|p| !p.is_empty())?;
    let mut features: FormatFeatures<'_> = Vec::new();
    for piece in parts {
        let (&sign, name) = piece.split_last()?;
        let f = match sign {
            b'+' => Feature::On,
            b'-' => Feature::Off,
            _ => return None,
        };
        if features.iter().any(|(n, _)| *n == name) {
            return None;
        }
        features.push((name, f));
    }
    Some((processor, features))
}

/// The same check on a target ID as the bundler reads it: the empty string
/// parses to an empty processor.
fn llvm_format_only(text: &str) -> Option<TargetId> {
    if text.is_empty() {
        return Some(TargetId {
            processor: String::new(),
            features: vec![],
        });
    }
    // The signs are ASCII, so every piece is whole UTF-8.
    let (processor, features) = format_only(text.as_bytes())?;
    Some(TargetId {
        processor: String::from_utf8_lossy(processor).into_owned(),
        features: features
            .into_iter()
            .map(|(n, f)| (String::from_utf8_lossy(n).into_owned(), f))
            .collect(),
    })
}

/// LLVM 16's `clang::isCompatibleTargetID`: format checking only, no
/// processor or feature tables. The processor is the text before the first
/// ':' even when the format check fails (LLVM dereferences the empty
/// optional; observed behaviour); malformed feature pieces are ignored.
pub fn compatible_format_only(provided: &str, requested: &str) -> bool {
    fn lenient(t: &str) -> (&str, BTreeMap<&str, Feature>) {
        let mut parts = t.split(':');
        let p = parts.next().unwrap_or("");
        let mut m = BTreeMap::new();
        for f in parts {
            if let Some(n) = f.strip_suffix('+') {
                m.insert(n, Feature::On);
            } else if let Some(n) = f.strip_suffix('-') {
                m.insert(n, Feature::Off);
            }
        }
        (p, m)
    }
    // A code object whose target ID fails the format check never matches
    // (observed); a malformed request is read leniently.
    if llvm_format_only(provided).is_none() {
        return false;
    }
    let (pp, pf) = lenient(provided);
    let (rp, rf) = lenient(requested);
    pp == rp && pf.iter().all(|(n, f)| rf.get(n) == Some(f))
}

/// Processors first known to LLVM 20 or later: LLVM 16 and 19 treat them
/// as unknown (observed: 19 writes `…--gfx950` as `…--gfx950-`).
const SINCE_20: &[&str] = &[
    "gfx950",
    "gfx1153",
    "gfx1250",
    "gfx9-4-generic",
    "sm_100",
    "sm_100a",
    "sm_101",
    "sm_101a",
    "sm_103",
    "sm_103a",
    "sm_110",
    "sm_110a",
    "sm_120",
    "sm_120a",
    "sm_121",
    "sm_121a",
];

/// Processors LLVM 14 does not know and 15 does (added in 15). Observed
/// through `-unbundle -type=a` member names (AR-4: `.bc` or `.cubin` only
/// for a known processor), every table name probed.
const SINCE_15: &[&str] = &[
    "gfx1036", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx940",
];

/// Processors LLVM 15 does not know and 16 does, observed as [`SINCE_15`].
const SINCE_16: &[&str] = &["sm_87", "sm_89", "sm_90"];

/// Processors LLVM 14-16 do not know and 19 does (added in 17-19),
/// observed as [`SINCE_15`].
const SINCE_19: &[&str] = &[
    "gfx1150",
    "gfx1151",
    "gfx1152",
    "gfx1200",
    "gfx1201",
    "gfx941",
    "gfx942",
    "sm_90a",
    "amdgcnspirv",
];

/// Processors LLVM 22 no longer knows (it writes `…--gfx940` as `…--`).
const REMOVED_BY_22: &[&str] = &["gfx940", "gfx941"];

/// Processors only LLVM 22 knows among the modelled releases.
const SINCE_22: &[&str] = &["gfx1251", "sm_88"];

/// `is_offload_arch` as LLVM `major` has it. LLVM 16 and 19 also know the
/// name `generic`, so in `gfx9-generic` they take `generic` as the processor.
pub fn is_offload_arch_in(name: &str, major: u32) -> bool {
    if major < 15 && SINCE_15.contains(&name)
        || major < 16 && SINCE_16.contains(&name)
        || major < 19 && SINCE_19.contains(&name)
    {
        return false;
    }
    if major < 20 {
        if name == "generic" {
            return true;
        }
        if SINCE_20.contains(&name) {
            return false;
        }
    }
    if major < 22 && SINCE_22.contains(&name) {
        return false;
    }
    if major >= 22 && REMOVED_BY_22.contains(&name) {
        return false;
    }
    is_offload_arch(name)
}
