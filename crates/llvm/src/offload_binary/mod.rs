//! Offload binaries (magic `10 FF 10 AD`): the format of
//! `clang-offload-packager` (16, 19) and `llvm-offload-binary` (22).
//!
//! Data flows bytes → [`Binary`] → bytes:
//! - [`parse_strict`] (in `read.rs`, compressed binaries in
//!   `compressed.rs`) reads a byte range holding concatenated binaries and
//!   reports **every** violation of `spec/offload-binary.md` with its
//!   absolute offset and rule (OB-1 … OB-16, OB-19);
//! - [`llvm`] models what LLVM 16, 19 and 22 make of the same bytes,
//!   their messages and their crashes included;
//! - the writer (`write.rs`: [`layout_v1`], [`layout_multi`], [`write_v1`])
//!   lays a binary out first and emits it after, byte-identical to each
//!   release;
//! - [`container`] finds binaries in raw files, ELF sections and archives
//!   and lists them ([`list`]); [`packager`] holds the operations of the
//!   packager CLI (packaging and extraction per release).
//!
//! This module holds the model both directions share: [`Binary`], [`Entry`]
//! and [`ReadOptions`] for reading, [`ImageSpec`], [`OwnedImage`] and
//! [`Compression`] for writing.
//!
//! Nothing is allocated from a count or size field before that field has
//! been checked against the bytes that hold it.

mod compressed;
pub mod container;
mod keys;
pub mod kinds;
pub mod llvm;
pub mod packager;
mod read;
pub use crate::host::strtab;
mod write;

pub use compressed::inflate;
pub use container::{list, list_with, ListedImage};
pub use kinds::{ImageKind, OffloadKind};
pub use read::parse_strict;
pub(crate) use read::NulIndex;
pub use write::{layout_multi, layout_v1, write_multi, write_v1, write_v1_all, Layout};

use crate::error::Error;
use crate::format::offload_binary::{ALIGNMENT, MAGIC};
use crate::profile::Release;
use crate::rules;
use std::borrow::Cow;

/// A key or value for a message: lossy UTF-8, escaped, at most 64
/// characters (keys in hostile inputs can be megabytes long).
pub fn show(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(64)];
    let mut t = String::from_utf8_lossy(cut).escape_debug().to_string();
    if bytes.len() > 64 {
        t.push('…');
    }
    t
}

/// Whether `data` starts with the offload-binary magic (OB-1).
pub fn is_offload_binary(data: &[u8]) -> bool {
    data.starts_with(&MAGIC)
}

/// An input that almost starts with the offload-binary magic (its first
/// three bytes are `10 FF 10`, or it is a proper prefix of the magic of at
/// least two bytes): OB-1 at the first byte that differs (at the end of a
/// proper prefix). `None` for anything else, including a real magic.
/// Detection layers use it to report such inputs against OB-1 rather than
/// as an unknown container.
pub fn magic_near_miss(data: &[u8]) -> Option<Error> {
    let common = data
        .iter()
        .zip(MAGIC.iter())
        .take_while(|(a, b)| a == b)
        .count();
    let proper_prefix = data.len() < MAGIC.len() && common == data.len() && common >= 2;
    if common == MAGIC.len() || !(common >= 3 || proper_prefix) {
        return None;
    }
    Some(Error::at(
        rules::OB_1,
        common as u64,
        if proper_prefix {
            format!("the input ends after {common} bytes of the offload binary magic 10 FF 10 AD")
        } else {
            format!(
                "byte {common} is 0x{:02x}, not 0x{:02x} of the offload binary magic 10 FF 10 AD",
                data[common], MAGIC[common]
            )
        },
    ))
}

/// `alignTo(x, 8)`, `None` on overflow.
pub fn align8(x: u64) -> Option<u64> {
    x.checked_next_multiple_of(ALIGNMENT)
}

/// One key/value pair of an entry, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringPair<'a> {
    /// The key (without its NUL).
    pub key: Cow<'a, [u8]>,
    /// The value (v1: without its NUL; v2+: exactly `value size` bytes).
    pub value: Cow<'a, [u8]>,
}

/// One entry (one image and its metadata) of a binary that passed the
/// strict reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Stored image kind value (see [`ImageKind::from_value`]).
    pub image_kind: u16,
    /// Stored offload kind value (see [`OffloadKind::from_value`]).
    pub offload_kind: u16,
    /// Flags.
    pub flags: u32,
    /// Key/value pairs in string-entry order.
    pub strings: Vec<StringPair<'a>>,
    /// The image bytes.
    pub image: Cow<'a, [u8]>,
    /// Absolute offset of the image in the input (for a compressed binary:
    /// the offset of the binary, since the image exists only inflated).
    pub image_offset: u64,
    /// Absolute offset of the entry record (compressed: the binary's offset).
    pub entry_offset: u64,
}

impl Entry<'_> {
    /// The value of `key` (keys are unique in a strict binary).
    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.strings
            .iter()
            .find(|p| p.key.as_ref() == key.as_bytes())
            .map(|p| p.value.as_ref())
    }

    /// The value of `key` as text (lossy), empty when absent, as LLVM's
    /// `getString` returns it.
    pub fn get_str(&self, key: &str) -> String {
        String::from_utf8_lossy(self.get(key).unwrap_or_default()).into_owned()
    }

    /// The `triple` string (empty when absent).
    pub fn triple(&self) -> String {
        self.get_str("triple")
    }

    /// The `arch` string (empty when absent).
    pub fn arch(&self) -> String {
        self.get_str("arch")
    }
}

/// One offload binary that passed the strict reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binary<'a> {
    /// Absolute offset of the binary's first byte.
    pub offset: u64,
    /// Format version (1, 2 or 3).
    pub version: u32,
    /// The size field as stored (compressed v3: header plus stream).
    pub size: u64,
    /// The inflated size of a compressed v3 binary, else 0.
    pub inflated_size: u64,
    /// Bytes the binary occupies in its byte range (the size, and for a
    /// compressed binary its zero padding to a multiple of 8).
    pub extent: u64,
    /// Entries in order (exactly one in v1).
    pub entries: Vec<Entry<'a>>,
}

impl Binary<'_> {
    /// Whether the body is compressed (v3, inflated size not 0).
    pub fn is_compressed(&self) -> bool {
        self.inflated_size != 0
    }
}

/// Options of the strict reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadOptions {
    /// The release whose image and offload kind tables apply (OB-12,
    /// OB-13). `None`: LLVM 22's tables, and errors say so.
    pub release: Option<Release>,
    /// How much a compressed binary may inflate to (CLI-6).
    pub budget: crate::budget::Budget,
}

impl ReadOptions {
    fn table(&self) -> (Release, &'static str) {
        match self.release {
            Some(r) => (r, ""),
            None => (
                Release::L22,
                " (LLVM 22's table; choose another release with --llvm-version)",
            ),
        }
    }
}

/// One image to write: metadata in string-entry order and the image size
/// (the bytes are supplied when emitting).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSpec<'a> {
    /// Stored image kind value.
    pub image_kind: u16,
    /// Stored offload kind value.
    pub offload_kind: u16,
    /// Flags (0 for every release).
    pub flags: u32,
    /// Key/value pairs, in the order they are written.
    pub strings: Vec<(&'a [u8], &'a [u8])>,
    /// Size of the image in bytes.
    pub image_size: u64,
}

/// An image with its bytes, for the in-memory writers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedImage {
    /// Stored image kind value.
    pub image_kind: u16,
    /// Stored offload kind value.
    pub offload_kind: u16,
    /// Flags.
    pub flags: u32,
    /// Key/value pairs in write order.
    pub strings: Vec<(Vec<u8>, Vec<u8>)>,
    /// The image.
    pub image: Vec<u8>,
}

impl OwnedImage {
    fn spec(&self) -> ImageSpec<'_> {
        ImageSpec {
            image_kind: self.image_kind,
            offload_kind: self.offload_kind,
            flags: self.flags,
            strings: self
                .strings
                .iter()
                .map(|(k, v)| (k.as_slice(), v.as_slice()))
                .collect(),
            image_size: self.image.len() as u64,
        }
    }

    /// The image as an entry of a binary (borrowing).
    pub fn from_entry(e: &Entry<'_>) -> OwnedImage {
        OwnedImage {
            image_kind: e.image_kind,
            offload_kind: e.offload_kind,
            flags: e.flags,
            strings: e
                .strings
                .iter()
                .map(|p| (p.key.to_vec(), p.value.to_vec()))
                .collect(),
            image: e.image.to_vec(),
        }
    }
}

/// Compression of a version 3 body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// zstd at the given level (LLVM's default is 5).
    Zstd(i32),
    /// zlib at the given level 0–9 (LLVM's default is 6).
    Zlib(u32),
}
