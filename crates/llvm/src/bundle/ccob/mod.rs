//! Compressed bundles (`CCOB` v1/v2/v3, zlib or zstd): the strict reader
//! and the writer are the spec core's ([`offload_kit_format::ccob`],
//! re-exported here); `llvm` holds what each LLVM release makes of a
//! compressed input.
//!
//! # Example
//!
//! What LLVM 22 reads from a compressed bundle.
//!
//! ```
//! use offload_kit_llvm::bundle::{binary, ccob};
//! use offload_kit_llvm::Release;
//!
//! let bundle = binary::write_to_vec(&[(b"host-x86_64-unknown-linux-gnu-", b"HOST")], 1).unwrap();
//! let blob = ccob::compress(&bundle, ccob::WriteOptions::default()).unwrap();
//! assert!(matches!(ccob::llvm_decompress(&blob, Release::L22), ccob::LlvmDecompress::Data(d) if d == bundle));
//! ```

pub use offload_kit_format::ccob::*;

mod llvm;

pub use llvm::{
    llvm_decompress, llvm_decompress_within, llvm_list_prefix, llvm_stream_ranges,
    llvm_uncompressed_note, main_blobs, LlvmDecompress, MainBlobs, MainWalk, StreamFailure,
    LLVM_ALLOCATION_LIMIT,
};
