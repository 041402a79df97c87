//! offload-kit: a reference implementation of LLVM's offload container
//! formats, with a strict layer that follows `spec/` and LLVM release
//! profiles (14, 16, 19, 22) that reproduce what each release accepts and
//! writes.
//!
//! Data flows bytes → typed model → bytes:
//! - [`format`]: raw definitions (magic numbers, fixed records);
//! - [`bundle`]: readers and writers per container;
//! - [`id`]: bundle entry IDs, triples and target IDs;
//! - [`profile`]: per-release behaviour;
//! - [`bundler`]: the operations of `clang-offload-bundler` (bundle, unbundle, list);
//! - [`detect`]: container auto-detection for the native CLI.
//!
//! Every error carries the absolute byte offset and the spec rule it
//! violates ([`error::Error`], [`rules`]).

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod bundle;
pub mod bundler;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod detect;
pub mod error;
pub mod format;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod host;
pub mod id;
pub mod offload_binary;
pub mod output;
pub mod profile;
pub mod rules;
pub mod source;

pub use error::{Error, Errors, Result};
pub use profile::Release;
