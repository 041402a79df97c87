//! Raw layout of a compressed bundle (`CCOB`), versions 1, 2 and 3.
//!
//! ```text
//!        v1 (20 B)            v2 (24 B)             v3 (32 B)
//! 0      "CCOB"               "CCOB"                "CCOB"
//! 4      u16 version=1        u16 version=2         u16 version=3
//! 6      u16 method           u16 method            u16 method
//! 8      u32 uncompressed     u32 total size        u64 total size
//! 12     u64 hash             u32 uncompressed      -
//! 16     -                    u64 hash              u64 uncompressed
//! 24     -                    -                     u64 hash
//! ```
//! method: 0 = zlib, 1 = zstd. hash: the first 8 bytes of the MD5 digest of
//! the uncompressed bundle. total size: header plus compressed data.
//! See `spec/ccob.md`.
//!
//! # Example
//!
//! The fields of a version 2 header written by [`compress`](crate::ccob::compress).
//!
//! ```
//! use offload_kit_format::ccob::{compress, Method, WriteOptions};
//! use offload_kit_format::raw::ccob::{header_size, MAGIC, METHOD_ZLIB};
//!
//! let bundle = b"__CLANG_OFFLOAD_BUNDLE__ and some payload".repeat(4);
//! let opts = WriteOptions { version: 2, method: Method::Zlib, level: 6 };
//! let blob = compress(&bundle, opts).unwrap();
//! let u16_at = |at: usize| u16::from_le_bytes([blob[at], blob[at + 1]]);
//! let u32_at = |at: usize| u32::from_le_bytes(blob[at..at + 4].try_into().unwrap());
//! assert_eq!((&blob[..4], u16_at(4), u16_at(6)), (&MAGIC[..], 2, METHOD_ZLIB));
//! assert_eq!(u32_at(8) as usize, blob.len()); // total size
//! assert_eq!(u32_at(12) as usize, bundle.len()); // uncompressed size
//! assert_eq!(header_size(2), Some(24));
//! ```

use binrw::binrw;

/// The 4-byte magic of a compressed bundle.
pub const MAGIC: &[u8; 4] = b"CCOB";

/// Method value for zlib (`llvm::compression::Format::Zlib`).
pub const METHOD_ZLIB: u16 = 0;
/// Method value for zstd (`llvm::compression::Format::Zstd`).
pub const METHOD_ZSTD: u16 = 1;

/// Magic, version and method: the part common to every version.
#[binrw]
#[brw(little, magic = b"CCOB")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawPrefix {
    /// Format version (1, 2 or 3).
    pub version: u16,
    /// Compression method.
    pub method: u16,
}

/// Version 1 fields after the prefix.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawV1 {
    /// Size of the uncompressed bundle.
    pub uncompressed_size: u32,
    /// Truncated MD5 of the uncompressed bundle (digest bytes 0..8).
    pub hash: [u8; 8],
}

/// Version 2 fields after the prefix.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawV2 {
    /// Header plus compressed data.
    pub total_size: u32,
    /// Size of the uncompressed bundle.
    pub uncompressed_size: u32,
    /// Truncated MD5 of the uncompressed bundle.
    pub hash: [u8; 8],
}

/// Version 3 fields after the prefix.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawV3 {
    /// Header plus compressed data.
    pub total_size: u64,
    /// Size of the uncompressed bundle.
    pub uncompressed_size: u64,
    /// Truncated MD5 of the uncompressed bundle.
    pub hash: [u8; 8],
}

/// Header size of each version.
pub fn header_size(version: u16) -> Option<u64> {
    match version {
        1 => Some(20),
        2 => Some(24),
        3 => Some(32),
        _ => None,
    }
}
