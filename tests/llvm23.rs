//! LLVM 23's profile against the closest binary there is: AMD's LLVM
//! 23.0.0git build (`amd-llvm-23`, rocm-bindings-compiler 10.0, installed
//! by tools/setup). Debian ships no clang-23, so the 23 profile is
//! modelled from source (docs/llvm-23.md); where AMD's build runs the same
//! code (llvm/lib/Object's offload binary reader, `objdump-offloading`),
//! the two must give the same answer: the same LLVM message for every
//! input it refuses, success where it succeeds. The only differences
//! allowed are listed with their reason, and each must still differ (a
//! list that no longer says what happens fails).

use offload_kit::conformance::{load_corpus, run_case, Adapter, Case, Layout, RunContext};
use std::path::PathBuf;

/// Cases where the profile and AMD's build differ on purpose.
const EXPECTED_DIFFERENCES: &[(&str, &str)] = &[
    (
        "objdump/archive-member-cut",
        "a member running past its archive: LLVM reads it as a cut binary (Invalid data; Debian's llvm-objdump 22 too, a documented divergence); every profile refuses the archive (AR-1)",
    ),
    (
        "objdump/malformed-imgsize_big",
        "the image lies past the binary: AMD's build reads memory it does not own without crashing; the profile refuses (OB-9)",
    ),
    (
        "objdump/malformed-keyoff_big",
        "a key offset past the binary: AMD's build reads memory it does not own without crashing; the profile refuses (OB-8)",
    ),
    (
        "objdump/num-strings-wraps",
        "validateEntry's product wraps and AMD's build crashes reading string entries far past the binary; the profile refuses (OB-7)",
    ),
];

fn layout() -> Layout {
    Layout::new(concat!(env!("CARGO_MANIFEST_DIR"), "/conformance"))
}

/// What a run says, reduced to what both can say: success, or LLVM's
/// message (offload-kit adds the file name and its rule citation).
fn answer(observed: &str) -> String {
    if observed.starts_with("success") {
        return "success".into();
    }
    const MESSAGES: &[&str] = &[
        "The file was not recognized as a valid object file",
        "Invalid data was encountered while parsing the file",
        "The end of the file was unexpectedly encountered",
    ];
    match MESSAGES.iter().find(|m| observed.contains(*m)) {
        Some(m) => format!("error: {m}"),
        None => format!("other: {observed}"),
    }
}

#[test]
fn the_23_profile_reads_offload_binaries_as_amds_23_build() {
    let root = layout();
    let cases: Vec<Case> = load_corpus(&root.corpus()).expect("the corpus loads");
    let adapters = Adapter::load_dir(&root.adapters(), &root.messages()).expect("adapters load");
    let by_name = |n: &str| {
        adapters
            .iter()
            .find(|a| a.name == n)
            .unwrap_or_else(|| panic!("no adapter {n}"))
            .clone()
    };
    let (amd, model) = (by_name("amd-llvm-23"), by_name("offload-kit-23"));
    let rc = RunContext {
        offload_kit: PathBuf::from(env!("CARGO_BIN_EXE_offload-kit")),
        timeout: None,
    };
    assert!(
        amd.available(&rc.offload_kit),
        "amd-llvm-23 not installed: run tools/setup ({} not found)",
        amd.program_path(&rc.offload_kit)
    );
    let mut compared = 0;
    let mut unexpected = Vec::new();
    let mut stale: Vec<&str> = EXPECTED_DIFFERENCES.iter().map(|(c, _)| *c).collect();
    for case in cases.iter().filter(|c| c.op.name() == "objdump-offloading") {
        let (a, m) = (run_case(case, &amd, &rc), run_case(case, &model, &rc));
        let (a_says, m_says) = (answer(&a.observed), answer(&m.observed));
        compared += 1;
        let expected = EXPECTED_DIFFERENCES.iter().any(|(c, _)| *c == case.id);
        if a_says == m_says {
            assert!(!a_says.starts_with("other"), "{}: {}", case.id, a.observed);
            continue;
        }
        stale.retain(|c| *c != case.id);
        if !expected {
            unexpected.push(format!(
                "{}: AMD's 23.0.0git build: {}; offload-kit-23: {}",
                case.id, a.observed, m.observed
            ));
        }
    }
    assert!(compared >= 25, "only {compared} objdump cases");
    assert!(
        unexpected.is_empty(),
        "the 23 profile and AMD's 23 build differ:\n  {}",
        unexpected.join("\n  ")
    );
    assert!(
        stale.is_empty(),
        "listed as different, now the same: {stale:?} (remove them from EXPECTED_DIFFERENCES)"
    );
}
