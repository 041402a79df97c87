//! Binary bundles: the strict reader and the writer are the spec core's
//! ([`offload_kit_format::binary`], re-exported here); `llvm` holds what
//! `ReadHeader` of each release sees.
//!
//! # Example
//!
//! ```
//! use offload_kit_llvm::bundle::binary::{self, Extent, LlvmView};
//! use offload_kit_llvm::Release;
//!
//! let bytes = binary::write_to_vec(&[(b"host-x86_64-unknown-linux-gnu-", b"HOSTCODE")], 8).unwrap();
//! let bundle = binary::parse_strict(&bytes, 0, Extent::Standalone).unwrap();
//! assert_eq!(bundle.payload(0), b"HOSTCODE");
//! assert!(matches!(binary::llvm_read(&bytes, 0, Release::L22), LlvmView::Entries(e) if e.len() == 1));
//! ```

pub use offload_kit_format::binary::*;

mod llvm;

pub use llvm::{llvm_main_list, llvm_read, LlvmView};

/// [`parse_strict_within`] the default memory budget.
pub fn parse_strict(
    data: &[u8],
    base: u64,
    extent: Extent,
) -> Result<BinaryBundle<'_>, crate::Errors> {
    parse_strict_within(data, base, extent, crate::budget::Budget::default())
}
