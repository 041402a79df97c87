//! Opening an input file as every front end does (the CLI, the Python
//! package): regular files only, and never blocking. A FIFO opened for
//! reading would wait for a writer for ever, a device or a directory is
//! not a container; each is refused with what it is.
//!
//! # Example
//!
//! ```
//! use offload_kit_io::input::{open_regular, OpenError};
//!
//! let dir = std::env::temp_dir();
//! assert!(matches!(open_regular(&dir), Err(OpenError::NotRegular("a directory"))));
//! let missing = open_regular(&dir.join("no-such-offload-kit-input"));
//! assert!(matches!(missing, Err(OpenError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound));
//! ```

use std::fs::File;
use std::path::Path;

/// Why [`open_regular`] refused a path.
#[derive(Debug)]
pub enum OpenError {
    /// Opening or reading its metadata failed.
    Io(std::io::Error),
    /// It is not a regular file: "a directory", "a FIFO", "a socket" or
    /// "a device".
    NotRegular(&'static str),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Io(e) => f.write_str(&crate::output::io_text(e)),
            OpenError::NotRegular(what) => write!(
                f,
                "is {what}, not a regular file (offload-kit reads regular files, and '-' for standard input)"
            ),
        }
    }
}

/// The regular file at `path` (symbolic links followed), opened for
/// reading without blocking, and its length.
pub fn open_regular(path: &Path) -> Result<(File, u64), OpenError> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nonblock())
        .open(path)
        .map_err(OpenError::Io)?;
    let meta = file.metadata().map_err(OpenError::Io)?;
    let ty = meta.file_type();
    let what = if ty.is_dir() {
        "a directory"
    } else if ty.is_fifo() {
        "a FIFO"
    } else if ty.is_socket() {
        "a socket"
    } else if ty.is_char_device() || ty.is_block_device() {
        "a device"
    } else {
        return Ok((file, meta.len()));
    };
    Err(OpenError::NotRegular(what))
}

/// `O_NONBLOCK` for `open(2)`.
#[cfg(target_os = "linux")]
fn nonblock() -> i32 {
    rustix::fs::OFlags::NONBLOCK.bits() as i32
}

/// `O_NONBLOCK` for `open(2)` (the value of the BSDs and macOS).
#[cfg(not(target_os = "linux"))]
fn nonblock() -> i32 {
    0x0004
}
