//! The LLVM release models of offload-kit: what each release (13, 14, 15,
//! 16, 19, 22, and main) accepts, writes and lists, standing on the spec
//! core ([`offload_kit_format`]).
//!
//! - [`profile`]: [`Release`], the table of per-release behaviours (ID
//!   grammar, map orders, compatibility, what each release refuses);
//! - [`bundle`]: the containers as each release reads and writes them
//!   (binary, text, compressed and object-file bundles, archives, HIP fat
//!   binary wrappers, the bundles `llvm-objdump --offloading` finds);
//! - [`offload_binary`]: offload binaries (`0x10FF10AD`), read strictly and
//!   as each release's `clang-offload-packager`/`llvm-offload-binary` does;
//! - [`bundler`]: the operations of `clang-offload-bundler` (bundle,
//!   unbundle, list, archives, ID validation);
//! - [`detect`]: which container a file is, for the native CLI;
//! - [`budget`]: the memory budget the command line sets (CLI-6).
//!
//! The `offload-kit` crate re-exports each module under the same name.
//!
//! # Example
//!
//! ```
//! use offload_kit_llvm::Release;
//!
//! let (host, gpu) = ("host-x86_64-unknown-linux-gnu", "hip-amdgcn-amd-amdhsa--gfx906");
//! // LLVM 22's `-list` prints entries in StringMap order.
//! assert_eq!(Release::L22.stringmap_order(&[host, gpu]), [gpu, host]);
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod budget;
pub mod bundle;
pub mod bundler;
pub mod detect;
pub mod offload_binary;
pub mod profile;

// The spec core under the names the release models use for it.
use offload_kit_format::{error, host, id, raw as format, rules, source};

pub use offload_kit_format::{Error, Errors, LlvmError, Result};
pub use profile::{Quirks, Release};
