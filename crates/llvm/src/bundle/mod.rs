//! clang-offload-bundler containers: binary, text, object-file and
//! compressed bundles, `.hip_fatbin` host files and heterogeneous device
//! archives.
//!
//! # Example
//!
//! The same entry as a binary, a text and a compressed bundle, each read
//! back by its strict reader.
//!
//! ```
//! use offload_kit_llvm::bundle::{binary, ccob, text};
//!
//! let entries: &[(&[u8], &[u8])] = &[(b"host-x86_64-unknown-linux-gnu-", b"int main;\n")];
//! let bin = binary::write_to_vec(entries, 1).unwrap();
//! let txt = text::write_to_vec(entries, "//");
//! let zip = ccob::compress(&bin, ccob::WriteOptions::default()).unwrap();
//! assert!(binary::is_binary_bundle(&bin) && text::is_text_bundle(&txt, "//") && ccob::is_ccob(&zip));
//!
//! let b = binary::parse_strict(&bin, 0, binary::Extent::Standalone).unwrap();
//! let t = text::parse_strict(&txt, 0, "//").unwrap();
//! assert_eq!(Some(b.payload(0)), t.content(&txt, 0));
//! assert_eq!(ccob::decompress_strict(&zip, 0).unwrap().data, bin);
//! ```

pub mod archive;
pub mod binary;
pub mod ccob;
pub mod fatbin;
pub mod llvm_object;
pub mod object;
pub mod text;
