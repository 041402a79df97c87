//! Binary bundles: strict reader and writer.
//!
//! Data flows bytes → [`BinaryBundle`] → bytes. The header scan
//! ([`scan`]) is shared: the strict reader ([`parse_strict_within`]) turns
//! every irregularity into an [`Error`](crate::error::Error) citing
//! `spec/binary-bundle.md`; the LLVM model (`offload_kit::bundle::binary::llvm_read`)
//! turns the same scan into what `ReadHeader` of a given release would see,
//! crashes included.
//!
//! This module holds the entry record and the header scan; the rest lives
//! in `read` (the strict reader) and `write` (layout and writer).
//!
//! # Example
//!
//! Write a bundle, read it back strictly, then break BIN-10.
//!
//! ```
//! use offload_kit_format::binary::{self, Extent};
//! use offload_kit_format::limits::Budget;
//!
//! let mut bytes = binary::write_to_vec(&[(b"host-x86_64-unknown-linux-gnu-", b"HOSTCODE")], 8).unwrap();
//! let bundle = binary::parse_strict_within(&bytes, 0, Extent::Standalone, Budget::default()).unwrap();
//! assert_eq!(bundle.find("host-x86_64-unknown-linux-gnu-"), Some(0));
//! assert_eq!(bundle.entries[0].offset % 8, 0); // the payload is aligned
//! assert_eq!(bundle.payload(0), b"HOSTCODE");
//!
//! // A byte after the last payload violates BIN-10; the offset is absolute
//! // (this bundle is read as if it started at 0x1000 of a larger file).
//! bytes.push(0);
//! let errs = binary::parse_strict_within(&bytes, 0x1000, Extent::Standalone, Budget::default()).unwrap_err();
//! assert_eq!(errs[0].rule_id(), Some("BIN-10"));
//! assert_eq!(errs[0].offset(), Some(0x1000 + bytes.len() as u64 - 1));
//! ```

use crate::raw::bundle::{RawHeader, RawRecord, HEADER_SIZE, MAGIC, RECORD_FIXED_SIZE};
use crate::source::Source;
use binrw::BinRead;
use std::borrow::Cow;
use std::io::Cursor;

mod read;
mod write;

pub use read::{parse_strict_within, BinaryBundle, Extent};
pub use write::{layout, write_to_vec, write_zeros, Layout};

/// One entry of a bundle, with absolute positions: the entry type every
/// bundle reader yields. `I` holds the ID bytes: borrowed from the input
/// ([`Entry`], binary and object bundles) or a copy (`TextEntry`, text
/// bundles read window by window).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryOf<I> {
    /// The entry ID bytes as stored.
    pub id: I,
    /// Payload offset, relative to the start of the bundle.
    pub offset: u64,
    /// Payload size.
    pub size: u64,
    /// Absolute offset of the record (a binary record's `offset` field, a
    /// text START marker's leading `"\n"`).
    pub record_pos: u64,
    /// Absolute offset of the ID bytes.
    pub id_pos: u64,
}

/// An entry whose ID is borrowed from the input.
pub type Entry<'a> = EntryOf<&'a [u8]>;

impl<'a> Entry<'a> {
    /// The ID as text (lossy for non-UTF-8 bytes).
    pub fn id_str(&self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.id)
    }

    /// The payload slice within `bundle` (the bundle's own bytes), if in range.
    pub fn payload(&self, bundle: &'a [u8]) -> Option<&'a [u8]> {
        let end = self.offset.checked_add(self.size)?;
        bundle.get(usize::try_from(self.offset).ok()?..usize::try_from(end).ok()?)
    }
}

/// Entries whose ID is a copy (what the text readers find, reading the
/// input window by window).
impl EntryOf<Vec<u8>> {
    /// The entry, borrowing its ID.
    pub fn entry(&self) -> Entry<'_> {
        Entry {
            id: &self.id,
            offset: self.offset,
            size: self.size,
            record_pos: self.record_pos,
            id_pos: self.id_pos,
        }
    }

    /// The entry's content in `data`, the bundle's bytes.
    pub fn payload<'d>(&self, data: &'d [u8]) -> Option<&'d [u8]> {
        let s = usize::try_from(self.offset).ok()?;
        data.get(s..s.checked_add(usize::try_from(self.size).ok()?)?)
    }

    /// The entry, its ID borrowed from `data`, the input it was read from
    /// (absolute offset `base`); `None` when the ID is not there.
    pub fn entry_in<'a>(&self, data: &'a [u8], base: u64) -> Option<Entry<'a>> {
        let at = usize::try_from(self.id_pos.checked_sub(base)?).ok()?;
        Some(Entry {
            id: data.get(at..at.checked_add(self.id.len())?)?,
            offset: self.offset,
            size: self.size,
            record_pos: self.record_pos,
            id_pos: self.id_pos,
        })
    }

    /// The ID as text (lossy for non-UTF-8 bytes).
    pub fn id_str(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.id)
    }
}

/// Why the header scan stopped before reading every record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// A field or ID runs past the end: absolute position of the field.
    Truncated {
        /// Absolute position of the incomplete field.
        at: u64,
        /// Index of the record being read.
        index: u64,
    },
    /// The record's offset is 0 or its range lies outside the data (LLVM's check).
    BadRange {
        /// Index of the record.
        index: u64,
        /// Absolute position of the record.
        at: u64,
    },
}

/// The result of scanning a header the way every LLVM release does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan<'a> {
    /// The count field.
    pub num_entries: u64,
    /// Records read, in header order.
    pub entries: Vec<Entry<'a>>,
    /// Records whose `offset + size` wraps past 2^64 (LLVM accepts them).
    pub wrapped: Vec<usize>,
    /// Why the scan stopped early, if it did.
    pub stop: Option<Stop>,
    /// Relative end of the last record read.
    pub header_end: u64,
}

/// Whether `data` starts with the binary-bundle magic (BIN-1).
pub fn is_binary_bundle(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}

/// Scan the header of the bundle that starts at the start of `src`;
/// `base` is the absolute offset of that byte in the outermost input.
/// Records must lie in the bytes at hand; payload ranges are checked
/// against [`Source::len`], so a [`Prefix`] (a compressed bundle decoded
/// only as far as its header) scans like the whole bundle. Returns `None`
/// when the magic or count is missing. Never allocates from the count
/// field.
///
/// [`Prefix`]: crate::source::Prefix
pub fn scan<S: Source + ?Sized>(src: &S, base: u64) -> Option<Scan<'_>> {
    let (data, total) = (src.bytes(), src.len());
    let header = RawHeader::read(&mut Cursor::new(data)).ok()?;
    let len = data.len() as u64;
    let n = header.num_entries;
    let mut entries = Vec::with_capacity(n.min(len / RECORD_FIXED_SIZE) as usize);
    let mut wrapped = Vec::new();
    let mut pos = HEADER_SIZE;
    let mut stop = None;
    for index in 0..n {
        let rec_pos = pos;
        let mut cur = Cursor::new(&data[pos as usize..]);
        let Ok(rec) = RawRecord::read(&mut cur) else {
            stop = Some(Stop::Truncated {
                at: base + pos + (len - pos).min(RECORD_FIXED_SIZE) / 8 * 8,
                index,
            });
            break;
        };
        pos += RECORD_FIXED_SIZE;
        if rec.id_len > len - pos {
            stop = Some(Stop::Truncated {
                at: base + pos - 8,
                index,
            });
            break;
        }
        let id = &data[pos as usize..(pos + rec.id_len) as usize];
        let id_pos = pos;
        pos += rec.id_len;
        let end = rec.offset.wrapping_add(rec.size);
        if rec.offset == 0 || end > total {
            stop = Some(Stop::BadRange {
                index,
                at: base + rec_pos,
            });
            break;
        }
        if end < rec.offset {
            wrapped.push(entries.len());
        }
        entries.push(Entry {
            id,
            offset: rec.offset,
            size: rec.size,
            record_pos: base + rec_pos,
            id_pos: base + id_pos,
        });
    }
    Some(Scan {
        num_entries: n,
        entries,
        wrapped,
        stop,
        header_end: pos,
    })
}
