//! Raw layout of a binary bundle (`clang-offload-bundler -type=bc|o|gch|ast`).
//!
//! ```text
//! 0   24  magic "__CLANG_OFFLOAD_BUNDLE__"
//! 24  8   u64 number of entries N
//!     N × { u64 offset, u64 size, u64 id length L, L bytes of ID (no NUL) }
//!     payloads, each at its offset
//! ```
//! See `spec/binary-bundle.md`.
//!
//! # Example
//!
//! A one-entry bundle laid out by hand, read back through the records.
//!
//! ```
//! use binrw::BinRead;
//! use offload_kit_format::raw::bundle::{RawHeader, RawRecord, HEADER_SIZE, MAGIC, RECORD_FIXED_SIZE};
//!
//! let id = b"host-x86_64-unknown-linux-gnu-";
//! let payload_at = HEADER_SIZE + RECORD_FIXED_SIZE + id.len() as u64;
//! let mut b = MAGIC.to_vec();
//! for field in [1, payload_at, 7, id.len() as u64] {
//!     b.extend_from_slice(&field.to_le_bytes()); // count, then offset, size, ID length
//! }
//! b.extend_from_slice(id);
//! b.extend_from_slice(b"PAYLOAD");
//! let mut r = std::io::Cursor::new(&b);
//! assert_eq!(RawHeader::read(&mut r).unwrap().num_entries, 1);
//! let rec = RawRecord::read(&mut r).unwrap();
//! assert_eq!((rec.offset, rec.size, rec.id_len), (payload_at, 7, id.len() as u64));
//! assert_eq!(&b[payload_at as usize..], b"PAYLOAD");
//! ```

use binrw::binrw;

/// The 24-byte magic that starts every binary bundle (BIN-1).
pub const MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";

/// Size of the fixed header: magic plus entry count.
pub const HEADER_SIZE: u64 = 32;

/// Size of the fixed part of one entry record (offset, size, ID length).
pub const RECORD_FIXED_SIZE: u64 = 24;

/// The fixed header: magic and entry count.
#[binrw]
#[brw(little, magic = b"__CLANG_OFFLOAD_BUNDLE__")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawHeader {
    /// Number of entry records that follow.
    pub num_entries: u64,
}

/// The fixed part of one entry record; `id_len` bytes of ID follow it.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRecord {
    /// Absolute offset of the payload from byte 0 of the bundle.
    pub offset: u64,
    /// Size of the payload in bytes.
    pub size: u64,
    /// Length of the entry ID in bytes.
    pub id_len: u64,
}
