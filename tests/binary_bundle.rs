//! Binary bundles as LLVM reads them: what `ReadHeader` of each release
//! sees of bytes the strict reader judges (spec/binary-bundle.md). The
//! strict reader and the writer, one test per spec rule, are tested in
//! the spec core: crates/format/tests/binary_bundle.rs.

use offload_kit::bundle::binary::{self, LlvmView};
use offload_kit::Release;
use proptest::prelude::*;

#[path = "../crates/format/tests/util/binary_cases.rs"]
mod binary_cases;
use binary_cases::*;

#[test]
fn bin_3_llvm_sees_no_bundles() {
    let d = binary::write_to_vec(&[], 1).unwrap();
    assert_eq!(binary::llvm_read(&d, 0, Release::L22), LlvmView::NoBundles);
}

#[test]
fn bin_8_llvm_last_wins() {
    let d = binary::write_to_vec(&[(GFX906, b"FIRST"), (GFX906, b"SECOND")], 1).unwrap();
    for r in Release::WITH_BINARY {
        let LlvmView::Entries(e) = binary::llvm_read(&d, 0, r) else {
            panic!()
        };
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].payload(&d), Some(&b"SECOND"[..]));
    }
}

#[test]
fn bin_12_llvm_hash_order() {
    let d = binary::write_to_vec(
        &[
            (b"openmp-nvptx64-nvidia-cuda--sm_70", b"1"),
            (b"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", b"2"),
            (b"host-x86_64-unknown-linux-gnu", b"3"),
            (GFX906, b"4"),
        ],
        1,
    )
    .unwrap();
    let LlvmView::Entries(e16) = binary::llvm_read(&d, 0, Release::L16) else {
        panic!()
    };
    let o16: Vec<String> = e16.iter().map(|e| e.id_str().into_owned()).collect();
    assert_eq!(
        o16,
        [
            "hip-amdgcn-amd-amdhsa--gfx906",
            "openmp-nvptx64-nvidia-cuda--sm_70",
            "host-x86_64-unknown-linux-gnu",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
        ]
    );
}

#[test]
fn llvm_crash_cases_are_reported() {
    let mut d = good();
    put(&mut d, 0x56, 0); // second offset 0: LLVM SIGSEGV
    assert!(matches!(
        binary::llvm_read(&d, 0, Release::L22),
        LlvmView::Crash(_)
    ));
    let mut d = good();
    put(&mut d, 0x20, 0); // first offset 0: LLVM sees no bundles
    assert_eq!(binary::llvm_read(&d, 0, Release::L14), LlvmView::NoBundles);
}

proptest! {
    #[test]
    fn model_bytes_llvm_model(es in entries(), align in 1u64..80) {
        let refs: Vec<(&[u8], &[u8])> = es.iter().map(|(i, p)| (&i[..], &p[..])).collect();
        let bytes = binary::write_to_vec(&refs, align).unwrap();
        // Every release sees the same entries (in its own order).
        for r in Release::WITH_BINARY {
            let LlvmView::Entries(e) = binary::llvm_read(&bytes, 0, r) else { panic!("{r}") };
            prop_assert_eq!(e.len(), es.len());
        }
    }

    #[test]
    fn llvm_readers_never_panic_on_bytes(tail in prop::collection::vec(any::<u8>(), 0..300)) {
        let mut d = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
        d.extend_from_slice(&tail);
        for r in Release::WITH_BINARY { let _ = binary::llvm_read(&d, 0, r); }
    }

    #[test]
    fn llvm_readers_never_panic_on_mutations(es in entries(), pos in any::<prop::sample::Index>(), v in any::<u64>()) {
        let refs: Vec<(&[u8], &[u8])> = es.iter().map(|(i, p)| (&i[..], &p[..])).collect();
        let mut d = binary::write_to_vec(&refs, 8).unwrap();
        let at = pos.index(d.len().saturating_sub(8).max(1));
        let n = (d.len() - at).min(8);
        d[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
        for r in Release::WITH_BINARY { let _ = binary::llvm_read(&d, 0, r); }
    }
}
