//! A compressed-bundle layout no release knows, added as one row of the
//! spec core's table (`raw::ccob::LAYOUTS`, feature `fake-ccob-layout`):
//! every component either handles it or refuses it by name, none reads
//! it as a version it knows. `tools/test` runs this with the feature:
//! `cargo test -p offload-kit-llvm --features fake-ccob-layout --test fake_layout`.
#![cfg(feature = "fake-ccob-layout")]

use offload_kit_format::ccob::{self, Method, WriteOptions};
use offload_kit_format::raw::ccob::{versions_text, Layout, VERSIONS};
use offload_kit_llvm::bundle::binary;
use offload_kit_llvm::bundle::ccob::{llvm_decompress, LlvmDecompress};
use offload_kit_llvm::Release;

fn bundle() -> Vec<u8> {
    let entries: [(&[u8], &[u8]); 2] = [
        (b"host-x86_64-unknown-linux-gnu-", b"host"),
        (b"hip-amdgcn-amd-amdhsa--gfx906", b"device code"),
    ];
    binary::write_to_vec(&entries, 8).unwrap()
}

fn v9() -> Vec<u8> {
    let opts = WriteOptions {
        version: 9,
        method: Method::Zstd,
        level: 3,
    };
    ccob::compress(&bundle(), opts).expect("the writer writes any row of the table")
}

/// The spec core handles the new row: written and read by its layout.
#[test]
fn the_spec_core_handles_the_new_row() {
    assert_eq!(VERSIONS, [1, 2, 3, 9]);
    assert_eq!(versions_text(), "1, 2, 3, 9");
    let blob = v9();
    let layout = Layout::of(9).unwrap();
    let h = ccob::parse_header(&blob, 0).unwrap();
    assert_eq!((h.version, h.header_size), (9, layout.size));
    assert_eq!(h.total_size, Some(blob.len() as u64));
    assert_eq!(h.uncompressed_size, bundle().len() as u64);
    assert_eq!(
        layout.total_size.unwrap().read(&blob),
        Some(blob.len() as u64)
    );
    assert_eq!(ccob::decompress_strict(&blob, 0).unwrap().data, bundle());
}

/// No release model reads the new row as a version it knows: those
/// before 19 see no compressed bundle at all; 19 reads any version from 2
/// on with version 2's header, as LLVM 19 does (spec/ccob.md), and fails
/// on what that makes of the stream; every other release refuses it
/// naming the version (CCOB-2).
#[test]
fn every_release_refuses_the_new_row_by_name() {
    let blob = v9();
    for r in Release::MODELLED {
        match (llvm_decompress(&blob, r), r.ccob_versions_read().is_empty()) {
            (LlvmDecompress::Plain, true) => {}
            (LlvmDecompress::Fails(_, e), false) if r.quirks().ccob_header_v1_or_v2 => {
                assert_ne!(e.rule_id(), Some("CCOB-2"), "LLVM {r} reads it as v2: {e}");
            }
            (LlvmDecompress::Fails(_, e), false) => {
                assert_eq!(e.rule_id(), Some("CCOB-2"), "LLVM {r}: {e}");
                assert!(e.message().contains("version 9"), "LLVM {r}: {e}");
            }
            (other, _) => panic!("LLVM {r} read a version it does not know: {other:?}"),
        }
        assert!(!r.ccob_versions_read().contains(&9), "LLVM {r}");
        assert!(!r.ccob_versions_written().contains(&9), "LLVM {r}");
    }
}
