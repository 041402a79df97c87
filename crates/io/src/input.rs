//! Opening an input file as the front ends do (the CLI, the Python
//! package), in one of two modes:
//!
//! - [`open_regular`], the native commands' mode: regular files only, and
//!   never blocking. A FIFO opened for reading would wait for a writer for
//!   ever, a device or a directory is not a container; each is refused
//!   with what it is. `/dev/null` is the one exception: it reads as empty
//!   everywhere, as build systems pass it for "no input".
//! - [`open_as_llvm`], the drop-ins' mode: what LLVM's
//!   `MemoryBuffer::getFileOrSTDIN` reads, reads. Devices, pipes,
//!   `/dev/stdin`, `/dev/fd/N` and process substitution are read to their
//!   end (a named FIFO with no writer waits for one, as LLVM does), within
//!   a byte limit; clang passes `-input=/dev/null` as the host input of
//!   every HIP fat binary.
//!
//! # Example
//!
//! ```
//! use offload_kit_io::input::{open_as_llvm, open_regular, LlvmInput, OpenError};
//! use std::path::Path;
//!
//! let dir = std::env::temp_dir();
//! assert!(matches!(open_regular(&dir), Err(OpenError::NotRegular("a directory"))));
//! let missing = open_regular(&dir.join("no-such-offload-kit-input"));
//! assert!(matches!(missing, Err(OpenError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound));
//! // /dev/null is empty in either mode.
//! assert_eq!(open_regular(Path::new("/dev/null")).unwrap().1, 0);
//! assert!(matches!(open_as_llvm(Path::new("/dev/null"), 1 << 20), Ok(LlvmInput::Read(b)) if b.is_empty()));
//! // A device LLVM would read to its end stops at the limit.
//! assert!(matches!(open_as_llvm(Path::new("/dev/zero"), 4096), Err(OpenError::TooLarge(4096))));
//! ```

use std::fs::File;
use std::path::Path;

/// Why [`open_regular`] or [`open_as_llvm`] refused a path.
#[derive(Debug)]
pub enum OpenError {
    /// Opening or reading its metadata failed.
    Io(std::io::Error),
    /// It is not a regular file: "a directory", "a FIFO", "a socket" or
    /// "a device".
    NotRegular(&'static str),
    /// A stream ([`open_as_llvm`]) that holds more than this many bytes.
    TooLarge(u64),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Io(e) => f.write_str(&crate::output::io_text(e)),
            OpenError::NotRegular(what) => write!(
                f,
                "is {what}, not a regular file (offload-kit reads regular files, /dev/null, and '-' for standard input)"
            ),
            OpenError::TooLarge(limit) => write!(
                f,
                "is a stream of more than {limit} bytes, the memory budget (--max-memory or OFFLOAD_KIT_MAX_MEMORY)"
            ),
        }
    }
}

/// The regular file at `path` (symbolic links followed), opened for
/// reading without blocking, and its length. `/dev/null` opens as an empty
/// file.
pub fn open_regular(path: &Path) -> Result<(File, u64), OpenError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nonblock())
        .open(path)
        .map_err(OpenError::Io)?;
    let meta = file.metadata().map_err(OpenError::Io)?;
    match not_regular(&meta) {
        None => Ok((file, meta.len())),
        Some(_) if is_dev_null(&meta) => Ok((file, 0)),
        Some(what) => Err(OpenError::NotRegular(what)),
    }
}

/// An input opened as LLVM opens it ([`open_as_llvm`]).
#[derive(Debug)]
pub enum LlvmInput {
    /// A regular file and its length, to be mapped.
    Regular(File, u64),
    /// Everything a device, pipe or socket gave until its end.
    Read(Vec<u8>),
}

/// `path` as LLVM's `MemoryBuffer::getFileOrSTDIN` reads it: a regular
/// file is opened (to be mapped); anything else but a directory is read to
/// its end, blocking as LLVM blocks, and refused with
/// [`OpenError::TooLarge`] past `limit` bytes (`/dev/zero` ends there).
pub fn open_as_llvm(path: &Path, limit: u64) -> Result<LlvmInput, OpenError> {
    // Blocking: a named FIFO waits for its writer, as LLVM's open(2) does.
    let file = File::open(path).map_err(OpenError::Io)?;
    let meta = file.metadata().map_err(OpenError::Io)?;
    match not_regular(&meta) {
        None => return Ok(LlvmInput::Regular(file, meta.len())),
        Some(what @ "a directory") => return Err(OpenError::NotRegular(what)),
        Some(_) => {}
    }
    read_bounded(file, limit).map(LlvmInput::Read)
}

/// Everything `file` gives until its end, refused past `limit` bytes.
fn read_bounded(file: File, limit: u64) -> Result<Vec<u8>, OpenError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(OpenError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(OpenError::TooLarge(limit));
    }
    Ok(bytes)
}

/// The text of the regular file at `path` (reports, configuration, KFD
/// `properties`): a FIFO, device or directory is refused without waiting,
/// and a file of more than `limit` bytes with [`OpenError::TooLarge`].
pub fn read_regular_text(path: &Path, limit: u64) -> Result<String, OpenError> {
    let (file, _) = open_regular(path)?;
    String::from_utf8(read_bounded(file, limit)?)
        .map_err(|e| OpenError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

/// What `meta` is when it is not a regular file.
fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let ty = meta.file_type();
    if ty.is_dir() {
        Some("a directory")
    } else if ty.is_fifo() {
        Some("a FIFO")
    } else if ty.is_socket() {
        Some("a socket")
    } else if ty.is_char_device() || ty.is_block_device() {
        Some("a device")
    } else {
        None
    }
}

/// Whether `meta` is the null device (character device 1:3 on Linux),
/// whatever path names it.
#[cfg(target_os = "linux")]
fn is_dev_null(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let rdev = meta.rdev();
    meta.file_type().is_char_device()
        && rustix::fs::major(rdev) == 1
        && rustix::fs::minor(rdev) == 3
}

/// Elsewhere: the device `/dev/null` is.
#[cfg(not(target_os = "linux"))]
fn is_dev_null(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    meta.file_type().is_char_device()
        && std::fs::metadata("/dev/null").is_ok_and(|n| n.rdev() == meta.rdev())
}

use std::os::unix::fs::OpenOptionsExt;

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
