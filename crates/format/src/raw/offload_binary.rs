//! Raw layout of an offload binary (`clang-offload-packager`,
//! `llvm-offload-binary`; magic bytes `10 FF 10 AD`), versions 1, 2 and 3.
//!
//! ```text
//! header          v1 / v2 (32 B)                  v3 (40 B)
//! 0   4  magic    10 FF 10 AD                     10 FF 10 AD
//! 4   4  u32      version = 1 | 2                 version = 3
//! 8   8  u64      size of this binary             size (compressed: header + stream)
//! 16  8  u64      entry offset (v1) /             entries offset
//!                 entries offset (v2)
//! 24  8  u64      entry size = 40 (v1) /          entries count
//!                 entries count (v2)
//! 32  8  u64      -                               inflated size (0: not compressed)
//!
//! entry (40 B)
//! 0   2  u16  image kind        4   4  u32  flags
//! 2   2  u16  offload kind      8   8  u64  string-entry offset
//! 16  8  u64  number of string entries
//! 24  8  u64  image offset      32  8  u64  image size
//!
//! string entry    v1 (16 B): u64 key offset, u64 value offset (values NUL-terminated)
//!                 v2, v3 (24 B): u64 key offset, u64 value offset, u64 value size
//! ```
//! Offsets count from the first byte of the binary that holds them. Binaries
//! are concatenated; each one's size is a multiple of 8. See
//! `spec/offload-binary.md`.
//!
//! # Example
//!
//! The first fields of a version 1 header, read back with [`read_u64`].
//!
//! ```
//! use offload_kit_format::raw::offload_binary::{header_size, read_u64, string_entry_size, HEADER_SIZE_V1, MAGIC};
//!
//! let mut head = MAGIC.to_vec();
//! head.extend_from_slice(&1u32.to_le_bytes()); // version
//! head.extend_from_slice(&112u64.to_le_bytes()); // size of this binary
//! assert_eq!(read_u64(&head, 8), Some(112));
//! assert_eq!(read_u64(&head, 9), None); // runs past the end: no panic
//! assert_eq!(header_size(1), Some(HEADER_SIZE_V1));
//! assert_eq!(header_size(3), Some(40));
//! assert_eq!(header_size(4), None);
//! assert_eq!((string_entry_size(1), string_entry_size(2)), (16, 24));
//! ```

use binrw::binrw;

/// The four magic bytes (`0x10FF10AD` read as bytes; `0xAD10FF10` as a
/// little-endian u32) (OB-1).
pub const MAGIC: [u8; 4] = [0x10, 0xFF, 0x10, 0xAD];

/// Size of a version 1 or 2 header.
pub const HEADER_SIZE_V1: u64 = 32;
/// Size of a version 3 header (adds the inflated size).
pub const HEADER_SIZE_V3: u64 = 40;
/// Size of one entry.
pub const ENTRY_SIZE: u64 = 40;
/// Size of a version 1 string entry.
pub const STRING_ENTRY_SIZE_V1: u64 = 16;
/// Size of a version 2 or 3 string entry.
pub const STRING_ENTRY_SIZE_V2: u64 = 24;
/// Alignment of every binary, image and size (`OffloadBinary::getAlignment`).
pub const ALIGNMENT: u64 = 8;
/// The smallest buffer LLVM 16, 19 and 22 try to read: a v1 header and one entry.
pub const MIN_V1_BUFFER: u64 = HEADER_SIZE_V1 + ENTRY_SIZE;

/// ELF section type `SHT_LLVM_OFFLOADING`.
pub const SHT_LLVM_OFFLOADING: u32 = 0x6fff_4c0b;
/// The section name clang gives embedded offload binaries.
pub const SECTION_NAME: &str = ".llvm.offloading";

/// Entry flag (v2+, post-22 `main`): the entry carries metadata and no image.
pub const OIF_METADATA: u32 = 1;

/// The header fields common to every version.
#[binrw]
#[brw(little, magic = b"\x10\xff\x10\xad")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawHeader {
    /// Format version.
    pub version: u32,
    /// Size of this binary in bytes.
    pub size: u64,
    /// v1: offset of the entry; v2, v3: offset of the entry table.
    pub entry_offset: u64,
    /// v1: size of the entry; v2, v3: number of entries.
    pub entry_size_or_count: u64,
}

/// One entry.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawEntry {
    /// Image kind (`IMG_*`).
    pub image_kind: u16,
    /// Offload kind (`OFK_*`), the producer.
    pub offload_kind: u16,
    /// Flags.
    pub flags: u32,
    /// Offset of the first string entry.
    pub string_offset: u64,
    /// Number of string entries.
    pub num_strings: u64,
    /// Offset of the image.
    pub image_offset: u64,
    /// Size of the image.
    pub image_size: u64,
}

/// One string entry; `value_size` exists from version 2 on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawStringEntry {
    /// Offset of the NUL-terminated key.
    pub key_offset: u64,
    /// Offset of the value.
    pub value_offset: u64,
    /// Size of the value (v2, v3); `None` in v1, where the value is NUL-terminated.
    pub value_size: Option<u64>,
}

/// Header size of `version`, or `None` for an unknown version.
pub fn header_size(version: u32) -> Option<u64> {
    match version {
        1 | 2 => Some(HEADER_SIZE_V1),
        3 => Some(HEADER_SIZE_V3),
        _ => None,
    }
}

/// String-entry size of `version` (16 for v1, 24 from v2 on).
pub fn string_entry_size(version: u32) -> u64 {
    if version <= 1 {
        STRING_ENTRY_SIZE_V1
    } else {
        STRING_ENTRY_SIZE_V2
    }
}

/// Read a little-endian u64 at `at`, if the 8 bytes are there.
pub fn read_u64(data: &[u8], at: u64) -> Option<u64> {
    let at = usize::try_from(at).ok()?;
    let b: [u8; 8] = data.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}
