//! offload-kit: a reference implementation of LLVM's offload container
//! formats, with a strict layer that follows `spec/` and LLVM release
//! profiles (13, 14, 15, 16, 19, 22) that reproduce what each release accepts and
//! writes.
//!
//! Data flows bytes → typed model → bytes:
//! - [`format`](mod@format): raw definitions (magic numbers, fixed records);
//! - [`bundle`]: readers and writers per container;
//! - [`id`]: bundle entry IDs, triples and target IDs;
//! - [`profile`]: per-release behaviour;
//! - [`bundler`]: the operations of `clang-offload-bundler` (bundle, unbundle, list);
//! - [`detect`]: container auto-detection for the native CLI.
//!
//! This crate is a facade: each module is re-exported from the crate of
//! its layer (`crates/format`, `io`, `llvm`, `inspect`, `smith`,
//! `conformance`); the `offload-kit` binary is `crates/cli`'s.
//!
//! Every error carries the absolute byte offset and the spec rule it
//! violates ([`error::Error`], [`rules`]).
//!
//! # Example
//!
//! A tour: write a binary bundle, list it as LLVM 22's `-list` orders it,
//! and parse an entry ID strictly.
//!
//! ```
//! use offload_kit::bundle::binary::{self, Extent};
//! use offload_kit::id::BundleEntryId;
//! use offload_kit::Release;
//!
//! let (host, gpu) = ("host-x86_64-unknown-linux-gnu", "hip-amdgcn-amd-amdhsa--gfx906");
//! let bytes = binary::write_to_vec(&[(host.as_bytes(), b"HOST"), (gpu.as_bytes(), b"GPU")], 8).unwrap();
//! let bundle = binary::parse_strict(&bytes, 0, Extent::Standalone).unwrap();
//! let ids: Vec<String> = bundle.entries.iter().map(|e| e.id_str().into_owned()).collect();
//! assert_eq!(ids, [host, gpu]);
//! assert_eq!(bundle.payload(1), b"GPU");
//! assert_eq!(Release::L22.stringmap_order(&[host, gpu]), [gpu, host]);
//! let id = BundleEntryId::parse_strict("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-").unwrap();
//! assert_eq!(id.canonical(), "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+");
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

// The spec core, its own crate (crates/format): re-exported under the
// names it always had.
pub use offload_kit_format::raw as format;
pub use offload_kit_format::{error, host, id, kpack, rules, source, uri};
// The release models, their own crate (crates/llvm).
pub use offload_kit_llvm::{budget, bundle, bundler, detect, offload_binary, profile};
// What an input holds down to each code object (crates/inspect).
pub use offload_kit_inspect as inspect;
// The generator, the mutator and the fuzz bodies (crates/smith).
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use offload_kit_smith::fuzzing;
pub use offload_kit_smith::{generate, mutate};
// Opening inputs and writing outputs as the front ends do (crates/io).
pub use offload_kit_io::{input, output};
// The conformance runner (crates/conformance).
#[cfg(feature = "conformance")]
pub use offload_kit_conformance as conformance;

pub use error::{Error, Errors, LlvmError, Result};
pub use profile::Release;
