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
//!
//! Each version's fields are one row of [`LAYOUTS`]:
//!
//! ```
//! use offload_kit_format::raw::ccob::{Field, Layout, VERSIONS};
//!
//! assert_eq!(VERSIONS, [1, 2, 3]);
//! let v3 = Layout::of(3).unwrap();
//! assert_eq!(v3.total_size, Some(Field { at: 8, width: 8 }));
//! assert_eq!(Field { at: 8, width: 4 }.encode(1 << 32), None);
//! assert_eq!(v3.uncompressed_size.read(&[0; 24]), Some(0));
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

/// A header field: where it lies from the magic and how wide it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Offset from the start of the header.
    pub at: u64,
    /// Width in bytes (4 or 8), little-endian.
    pub width: u64,
}

impl Field {
    /// The field's value in `header`; `None` when `header` ends before
    /// the field does.
    pub fn read(self, header: &[u8]) -> Option<u64> {
        let bytes = header.get(self.at as usize..(self.at + self.width) as usize)?;
        let mut le = [0u8; 8];
        le[..bytes.len()].copy_from_slice(bytes);
        Some(u64::from_le_bytes(le))
    }

    /// `value` in the field's width; `None` when it does not fit.
    pub fn encode(self, value: u64) -> Option<Vec<u8>> {
        let fits = self.width == 8 || value >> (8 * self.width) == 0;
        fits.then(|| value.to_le_bytes()[..self.width as usize].to_vec())
    }
}

/// Where the fields of one version's header lie: the table the readers,
/// the writer, the generator and the corpus recipes all read, so that a
/// new version is one more row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The format version.
    pub version: u16,
    /// The header's size in bytes.
    pub size: u64,
    /// Header plus compressed data; version 1 has none.
    pub total_size: Option<Field>,
    /// The size of the uncompressed bundle.
    pub uncompressed_size: Field,
    /// Where the 8-byte truncated MD5 lies.
    pub hash: u64,
}

/// The versions the spec defines, oldest first.
const SPEC_LAYOUTS: [Layout; 3] = [
    Layout {
        version: 1,
        size: 20,
        total_size: None,
        uncompressed_size: Field { at: 8, width: 4 },
        hash: 12,
    },
    Layout {
        version: 2,
        size: 24,
        total_size: Some(Field { at: 8, width: 4 }),
        uncompressed_size: Field { at: 12, width: 4 },
        hash: 16,
    },
    Layout {
        version: 3,
        size: 32,
        total_size: Some(Field { at: 8, width: 8 }),
        uncompressed_size: Field { at: 16, width: 8 },
        hash: 24,
    },
];

/// Every version's header layout, oldest first.
#[cfg(not(feature = "fake-ccob-layout"))]
pub const LAYOUTS: [Layout; 3] = SPEC_LAYOUTS;

/// Every version's header layout, oldest first; with the test-only
/// feature `fake-ccob-layout`, a version 9 no release knows (a 40-byte
/// header: total and uncompressed sizes of 8 bytes, 8 reserved bytes,
/// the hash), so a test can show that each component handles a new row
/// or refuses it by name (crates/llvm/tests/fake_layout.rs).
#[cfg(feature = "fake-ccob-layout")]
pub const LAYOUTS: [Layout; 4] = [
    SPEC_LAYOUTS[0],
    SPEC_LAYOUTS[1],
    SPEC_LAYOUTS[2],
    Layout {
        version: 9,
        size: 40,
        total_size: Some(Field { at: 8, width: 8 }),
        uncompressed_size: Field { at: 16, width: 8 },
        hash: 32,
    },
];

/// The known versions, oldest first.
pub const VERSIONS: [u16; LAYOUTS.len()] = {
    let mut v = [0; LAYOUTS.len()];
    let mut i = 0;
    while i < LAYOUTS.len() {
        v[i] = LAYOUTS[i].version;
        i += 1;
    }
    v
};

impl Layout {
    /// The layout of `version`, if it is known.
    pub fn of(version: u16) -> Option<Layout> {
        LAYOUTS.into_iter().find(|l| l.version == version)
    }

    /// The fields after magic, version and method, in order, with their
    /// names: where a header cut short ends (the strict reader's message).
    pub fn named_fields(&self) -> Vec<(u64, &'static str)> {
        let mut out: Vec<(u64, &str)> = self
            .total_size
            .map(|f| (f.at, "total size"))
            .into_iter()
            .collect();
        out.push((self.uncompressed_size.at, "uncompressed size"));
        out.push((self.hash, "hash"));
        out
    }
}

/// The known versions as a message lists them ("1, 2, 3").
pub fn versions_text() -> String {
    VERSIONS.map(|v| v.to_string()).join(", ")
}

/// Header size of each version.
pub fn header_size(version: u16) -> Option<u64> {
    Layout::of(version).map(|l| l.size)
}
