//! Structure-aware inputs for people who fuzz the loaders of offload
//! containers (the HIP runtime, comgr, IREE, liboffload): what `wasm-smith`
//! and `wasm-mutate` are for WebAssembly engines.
//!
//! - [`generate`]: one file of a container kind from a seed, valid or
//!   breaking exactly one named rule at a known offset, with device images
//!   that a runtime's image path accepts ([`generate::image`]);
//! - [`mutate`]: a mutator that changes structure where it can read the
//!   input and bytes where it cannot;
//! - `fuzzing` (feature `fuzzing`): the fuzz-target bodies that `fuzz/`
//!   and the smoke tests share.
//!
//! The generator and mutator write layouts through the spec core
//! ([`offload_kit_format`]) and check what they make with its strict
//! readers; the `offload-kit` crate re-exports both modules.
//!
//! # Example
//!
//! ```
//! use offload_kit_smith::generate::{generate, Kind, Options};
//! use offload_kit_smith::mutate::mutate;
//!
//! let valid = generate(Kind::Binary, 7, &Options::default()).unwrap();
//! let m = mutate(&valid.bytes, 4096, 1);
//! assert!(m.bytes.len() <= 4096);
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod generate;
pub mod mutate;

// The layers below under the names this crate uses for them.
use offload_kit_format::{host, id, raw as format, rules};
use offload_kit_inspect as inspect;
use offload_kit_llvm::{bundle, detect, offload_binary};
