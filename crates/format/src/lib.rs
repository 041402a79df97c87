//! The spec core of offload-kit, the layer every other one stands on: what
//! `spec/` says, with no LLVM release and no process-wide state.
//!
//! - [`error`]: one error type, [`Error`], with the broken rule and the
//!   absolute byte offset; [`Errors`] for every violation of an input;
//! - [`rules`]: the catalogue of spec rule IDs, chapters and titles;
//! - [`source`]: one input abstraction, read whole, window by window or
//!   through `pread`;
//! - [`host`]: the host formats containers live in (ELF, COFF/PE, `ar`
//!   archives, their symbol tables);
//! - [`id`]: bundle entry IDs, triples and target IDs as the spec reads
//!   them, and the compatibility rules;
//! - [`uri`]: code object URIs (`file://`, `memory://`);
//! - [`raw`]: each container's layout declared once (magic numbers,
//!   fixed records);
//! - [`binary`]: binary bundles, read strictly and written;
//! - [`ccob`]: compressed bundles, read strictly and written;
//! - [`text`]: text bundles, read strictly (window by window) and written;
//! - [`limits`]: the memory budget (CLI-6), passed as a value;
//! - [`escape`]: untrusted text escaped for a terminal.
//!
//! The `offload-kit` crate re-exports each module under the same name.
//!
//! # Example
//!
//! ```
//! use offload_kit_format::{rules, Error};
//!
//! let e = Error::at(rules::BIN_1, 0, "no magic");
//! assert_eq!((e.rule_id(), e.offset()), (Some("BIN-1"), Some(0)));
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod binary;
pub mod ccob;
pub mod error;
pub mod escape;
pub mod host;
pub mod id;
pub mod kpack;
pub mod limits;
pub mod raw;
pub mod rules;
pub mod source;
pub mod text;
pub mod uri;

pub use error::{Error, Errors, LlvmError, Result};
