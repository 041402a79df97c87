//! Compressed bundles (`CCOB` v1/v2/v3, zlib or zstd): strict reader that
//! verifies sizes and the truncated MD5, and the writer, byte-identical to
//! LLVM (same libzstd/zlib, same one-shot calls). What each LLVM release
//! makes of a compressed input is `offload_kit::bundle::ccob`'s (`llvm`).
//!
//! Decompression never allocates from the header's claim: output grows
//! with what the stream yields and stops one byte past the claim.
//!
//! This module holds the method and the parsed header; the rest lives in
//! `header` (parse and encode, version by version, and the walk of blobs
//! stored back to back), `decode` (bounded decoding and verification of a
//! blob in memory), `stream` (decoding over a
//! [`Source`](crate::source::Source) read window by window, ranges of the
//! decompressed bundle, the extent of a zstd frame), `write` (the
//! compression writers).
//!
//! # Example
//!
//! Compress a bundle (version 2, zlib), read it back, then damage its hash.
//!
//! ```
//! use offload_kit_format::ccob;
//!
//! let bundle = b"__CLANG_OFFLOAD_BUNDLE__, or any bytes".to_vec();
//! let opts = ccob::WriteOptions { version: 2, method: ccob::Method::Zlib, level: 6 };
//! let mut blob = ccob::compress(&bundle, opts).unwrap();
//! let header = ccob::parse_header(&blob, 0).unwrap();
//! assert_eq!((header.version, header.method()), (2, Some(ccob::Method::Zlib)));
//! assert_eq!(header.total_size, Some(blob.len() as u64));
//! assert_eq!(ccob::decompress_strict(&blob, 0).unwrap().data, bundle);
//!
//! // The truncated MD5 is the last 8 bytes of a v2 header (16..24).
//! blob[16] ^= 0xff;
//! let err = ccob::decompress_strict(&blob, 0).unwrap_err();
//! assert_eq!((err.rule_id(), err.offset()), (Some("CCOB-7"), Some(16)));
//! ```

use crate::raw::ccob::{MAGIC, METHOD_ZLIB, METHOD_ZSTD};

mod decode;
mod header;
mod stream;
mod write;

pub use decode::{
    copy_big, decode_into, decode_stream, decompress_strict, truncated_md5, Decompressed, Md5Thread,
};
pub use header::{blob_len, blobs, parse_header, read_header, Blob};
pub use stream::{
    decompress_prefix, extract_range, verify_prefix, zstd_frame_extent, Sink, Tap, STREAM_CHUNK,
};
pub use write::{
    compress, compress_parts, compress_payload, compress_payload_len, compress_payload_threads,
    compress_threads, WriteOptions,
};

/// Compression method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// zlib (RFC 1950 stream), method 0.
    Zlib,
    /// zstd frame, method 1.
    Zstd,
}

impl Method {
    /// The header value.
    pub fn value(self) -> u16 {
        match self {
            Method::Zlib => METHOD_ZLIB,
            Method::Zstd => METHOD_ZSTD,
        }
    }
    /// LLVM's default level for the method (zstd 3, zlib 6).
    pub fn default_level(self) -> i32 {
        match self {
            Method::Zlib => 6,
            Method::Zstd => 3,
        }
    }
}

/// A parsed CCOB header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Header {
    /// Format version.
    pub version: u16,
    /// Method value as stored.
    pub method_value: u16,
    /// Total size field (v2, v3).
    pub total_size: Option<u64>,
    /// Uncompressed size field.
    pub uncompressed_size: u64,
    /// Truncated MD5 (digest bytes 0..8).
    pub hash: [u8; 8],
    /// Header size in bytes.
    pub header_size: u64,
}

impl Header {
    /// The method, if known.
    pub fn method(&self) -> Option<Method> {
        match self.method_value {
            METHOD_ZLIB => Some(Method::Zlib),
            METHOD_ZSTD => Some(Method::Zstd),
            _ => None,
        }
    }

    /// The hash as LLVM's `-verbose` prints it (`MD5Result::low()`).
    pub fn hash_u64(&self) -> u64 {
        u64::from_le_bytes(self.hash)
    }
}

/// Whether `data` starts with the CCOB magic.
pub fn is_ccob(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}

/// The bundle that `data` holds when it is one compressed bundle and
/// nothing else, written to `out` as it is decoded, its sizes and hash
/// verified (CCOB-1..7); the number of bytes written. What `offload-kit
/// decompress`, Python's `decompress` and the C ABI's
/// `offloadkit_decompress` give. `hold`: the budget of a caller that holds
/// the bundle in memory (a header claiming more is refused, CLI-6, before
/// anything is decoded); `None` where the output is written out.
///
/// ```
/// use offload_kit_format::ccob;
/// let opts = ccob::WriteOptions { version: 3, method: ccob::Method::Zstd, level: 3 };
/// let blob = ccob::compress(b"a bundle", opts).unwrap();
/// let mut out = Vec::new();
/// assert_eq!(ccob::decompress_single(&blob, None, &mut out).unwrap(), 8);
/// assert_eq!(out, b"a bundle");
/// let two = [&blob[..], &blob[..]].concat();
/// assert!(ccob::decompress_single(&two, None, &mut Vec::new()).is_err());
/// let e = ccob::decompress_single(b"ELF", None, &mut Vec::new()).unwrap_err();
/// assert_eq!(e.rule_id(), Some("CCOB-1"));
/// ```
pub fn decompress_single<W: std::io::Write>(
    data: &[u8],
    hold: Option<crate::limits::Budget>,
    out: &mut W,
) -> crate::error::Result<u64> {
    let len = single_len(data, hold)?;
    extract_range(&data, 0, 0, len, out)?;
    Ok(len)
}

/// The size of the bundle [`decompress_single`] would write for `data`,
/// after its checks that need no decoding (one compressed bundle and
/// nothing else, its header and extent, the budget): a caller can size its
/// buffer before decoding into it.
pub fn single_len(data: &[u8], hold: Option<crate::limits::Budget>) -> crate::error::Result<u64> {
    use crate::error::Error;
    if !is_ccob(data) {
        return Err(Error::at(
            crate::rules::CCOB_1,
            0,
            "not a compressed bundle",
        ));
    }
    let found = blobs(data, 0)?;
    if found.len() != 1 {
        return Err(Error::other(format!(
            "the file holds {} compressed bundles; convert one at a time",
            found.len()
        )));
    }
    let len = found[0].header.uncompressed_size;
    if let Some(budget) = hold.filter(|b| b.exceeded(len)) {
        return Err(Error::at(
            crate::rules::CLI_6,
            0,
            format!(
                "the bundle is {len} bytes, more than the memory budget of {} bytes",
                budget.bytes()
            ),
        ));
    }
    Ok(len)
}
