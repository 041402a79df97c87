//! Fuzz target bodies, shared by `fuzz/fuzz_targets/*` (cargo-fuzz,
//! libFuzzer) and the stable smoke tests in `tests/fuzz_smoke.rs`.
//! Each function must never panic, whatever the input.

use crate::bundle::binary::{self, Extent, LlvmView};
use crate::bundler::Job;
use crate::id::BundleEntryId;
use crate::profile::Release;
use arbitrary::{Arbitrary, Unstructured};

/// Every binary-bundle reader and every profile on raw bytes; a strictly
/// valid bundle must re-serialise to the same entries.
pub fn bundle_read(data: &[u8]) {
    if let Ok(b) = binary::parse_strict(data, 0, Extent::Embedded) {
        let back: Vec<(&[u8], &[u8])> = (0..b.entries.len())
            .map(|i| (b.entries[i].id, b.payload(i)))
            .collect();
        let bytes = binary::write_to_vec(&back, 1).expect("valid layout");
        let again = binary::parse_strict(&bytes, 0, Extent::Standalone).expect("round trip");
        assert_eq!(again.entries.len(), b.entries.len());
    }
    for r in Release::ALL {
        if let LlvmView::Entries(e) = binary::llvm_read(data, 0, r) {
            for entry in e {
                let _ = entry.payload(data);
            }
        }
    }
}

/// The ID grammar, canonical form and every profile's parsing and matching.
pub fn id_parse(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (a, b) = text
        .split_once('\n')
        .unwrap_or((&text, "hip-amdgcn-amd-amdhsa--gfx906"));
    if let Ok(id) = BundleEntryId::parse_strict(a) {
        let c = id.canonical();
        let again = BundleEntryId::parse_strict(&c).expect("canonical form parses");
        assert_eq!(again.canonical(), c, "canonical form is a fixed point");
    }
    for r in Release::ALL {
        let _ = r.written_id(a);
        let _ = r.validate_target(a);
        let _ = r.compatible(a, b, true);
        let _ = r.compatible(b, a, false);
    }
}

/// A structured bundler run: arbitrary targets and a bundle, every release.
#[derive(Debug, Arbitrary)]
pub struct BundlerInput {
    targets: Vec<String>,
    entries: Vec<(String, Vec<u8>)>,
    align: u8,
    allow_missing: bool,
    hip_openmp: bool,
}

/// Plan unbundling and listing for arbitrary targets and bundles.
pub fn bundler_plan(data: &[u8]) {
    let Ok(inp) = BundlerInput::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    let refs: Vec<(&[u8], &[u8])> = inp
        .entries
        .iter()
        .map(|(i, p)| (i.as_bytes(), &p[..]))
        .collect();
    let Ok(bundle) = binary::write_to_vec(&refs, u64::from(inp.align.max(1))) else {
        return;
    };
    for r in Release::ALL {
        let job = Job {
            release: r,
            file_type: "bc".into(),
            targets: inp.targets.clone(),
            inputs: vec!["in".into()],
            outputs: vec!["out".into(); inp.targets.len()],
            unbundle: true,
            list: false,
            allow_missing: inp.allow_missing,
            align: 1,
            hip_openmp: inp.hip_openmp,
            check_input_archive: false,
        };
        if let Ok(v) = job.validate() {
            if let Ok(pieces) = job.plan_unbundle(&v, &bundle) {
                assert_eq!(pieces.len(), inp.targets.len());
            }
        }
        let _ = job.plan_list(&bundle);
    }
}

/// Every container reader through auto-detection, strictly and as every
/// release reads it, plus the text, CCOB and ELF readers directly.
pub fn any_container(data: &[u8]) {
    let _ = crate::detect::list(data, None);
    for r in Release::ALL {
        let _ = crate::detect::list(data, Some(r));
        for c in ["//", "#", ";"] {
            let _ = crate::bundle::text::llvm_entries(data, 0, c, r);
            let _ = crate::bundle::text::llvm_list(data, 0, c, r);
        }
        let _ = crate::bundle::ccob::llvm_decompress(data, r);
    }
    for c in ["//", "#", ";"] {
        let _ = crate::bundle::text::parse_strict(data, 0, c);
    }
    let _ = crate::bundle::ccob::decompress_strict(data, 0);
    let _ = crate::bundle::fatbin::inspect(data);
    let _ = crate::bundle::object::parse_strict(data);
}
