//! Raw definitions of each container: magic numbers and fixed records, no logic.
//!
//! Modelled on `object/src/archive.rs`: constants and declarative records
//! (`binrw`, little-endian) with one doc line per field.
//!
//! # Example
//!
//! The compressed-bundle writer starts its output with the magic defined here.
//!
//! ```
//! use offload_kit_format::{ccob, raw};
//!
//! let blob = ccob::compress(b"any bundle", ccob::WriteOptions::default()).unwrap();
//! assert!(blob.starts_with(raw::ccob::MAGIC));
//! assert_eq!(raw::ccob::header_size(3), Some(32)); // the default version
//! assert_eq!(raw::bundle::MAGIC, b"__CLANG_OFFLOAD_BUNDLE__");
//! assert_eq!(raw::offload_binary::MAGIC, [0x10, 0xFF, 0x10, 0xAD]);
//! ```

pub mod bundle;
pub mod ccob;
pub mod code_object;
pub mod offload_binary;
