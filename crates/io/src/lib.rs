//! offload-kit's front-end I/O: what the CLI and the Python package share
//! when they touch the file system (spec rule CLI-5).
//!
//! - [`input`]: open an input as a regular file, never blocking on a FIFO;
//! - `guarded` (feature `guarded`, Unix): map it, a page cut away under
//!   the map read as zeros and reported, not a SIGBUS that kills the
//!   process;
//! - [`output`]: write each output to a temporary file renamed into place
//!   when complete, names from untrusted data kept inside the directory
//!   the user chose.
//!
//! # Example
//!
//! ```
//! use offload_kit_io::output::OutputFile;
//! use std::io::Write;
//!
//! let dir = std::env::temp_dir().join(format!("ok-io-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let mut out = OutputFile::create(&dir.join("payload.bin")).unwrap();
//! out.write_all(b"code object").unwrap();
//! out.commit().unwrap();
//! let (_file, len) = offload_kit_io::input::open_regular(&dir.join("payload.bin")).unwrap();
//! assert_eq!(len, 11);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

#[cfg(all(unix, feature = "guarded"))]
pub mod guarded;
pub mod input;
pub mod output;
