//! Text bundles: the strict reader and the writer are the spec core's
//! ([`offload_kit_format::text`], re-exported here); `llvm` drives LLVM's
//! reader as each release unbundles.
//!
//! # Example
//!
//! ```
//! use offload_kit_llvm::bundle::text;
//! use offload_kit_llvm::Release;
//!
//! let entries: &[(&[u8], &[u8])] = &[(b"host-x86_64-unknown-linux-gnu-", b"int x;\n")];
//! let t = text::write_to_vec(entries, "//");
//! let ids = text::llvm_list(&t.as_slice(), 0, "//", Release::L22).unwrap();
//! assert_eq!(ids, ["host-x86_64-unknown-linux-gnu-"]);
//! ```

pub use offload_kit_format::text::*;

mod llvm;

pub use llvm::{llvm_entries, llvm_list, LlvmReader, Start};
