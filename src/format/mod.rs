//! Raw definitions of each container: magic numbers and fixed records, no logic.
//!
//! Modelled on `object/src/archive.rs`: constants and declarative records
//! (`binrw`, little-endian) with one doc line per field.
//!
//! # Example
//!
//! The writers start their output with the magic numbers defined here.
//!
//! ```
//! use offload_kit::bundle::{binary, ccob};
//! use offload_kit::format;
//!
//! let bundle = binary::write_to_vec(&[(b"host-x86_64-unknown-linux-gnu-", b"x")], 1).unwrap();
//! assert!(bundle.starts_with(format::bundle::MAGIC));
//! let blob = ccob::compress(&bundle, ccob::WriteOptions::default()).unwrap();
//! assert!(blob.starts_with(format::ccob::MAGIC));
//! assert_eq!(format::ccob::header_size(3), Some(32)); // the default version
//! assert_eq!(format::offload_binary::MAGIC, [0x10, 0xFF, 0x10, 0xAD]);
//! ```

pub mod bundle;
pub mod ccob;
pub mod code_object;
pub mod offload_binary;
