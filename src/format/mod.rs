//! Raw definitions of each container: magic numbers and fixed records, no logic.
//!
//! Modelled on `object/src/archive.rs`: constants and declarative records
//! (`binrw`, little-endian) with one doc line per field.

pub mod bundle;
pub mod ccob;
pub mod offload_binary;
