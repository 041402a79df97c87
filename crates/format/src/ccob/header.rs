//! The CCOB header, version by version: the strict parse (CCOB-1..CCOB-4),
//! over a slice or a window of a [`Source`], its encoding for the writer,
//! and the walk of blobs stored back to back.

use super::{is_ccob, Header, Method};
use crate::error::{Error, Result};
use crate::raw::ccob::{header_size, versions_text, Layout, RawPrefix, MAGIC};
use crate::rules;
use crate::source::Source;
use binrw::BinRead;
use std::io::Cursor;

/// Offset of the uncompressed-size field within the header of `version`
/// (a version [`parse_header`] accepted: one with a layout).
pub(super) fn uncompressed_size_field(version: u16) -> u64 {
    Layout::of(version).map_or(0, |l| l.uncompressed_size.at)
}

/// Read the header (strict: CCOB-1, CCOB-2, CCOB-3).
pub fn parse_header(data: &[u8], base: u64) -> Result<Header> {
    if !is_ccob(data) {
        return Err(Error::at(
            rules::CCOB_1,
            base,
            "no compressed bundle magic \"CCOB\"",
        ));
    }
    let mut c = Cursor::new(data);
    if data.len() >= 6 {
        let v = u16::from_le_bytes([data[4], data[5]]);
        if header_size(v).is_none() {
            return Err(Error::at(
                rules::CCOB_2,
                base + 4,
                format!(
                    "unknown compressed bundle version {v} (known: {})",
                    versions_text()
                ),
            ));
        }
    }
    let prefix = RawPrefix::read(&mut c).map_err(|_| {
        let field = if data.len() < 6 { 4 } else { 6 };
        Error::at(
            rules::CCOB_2,
            base + field,
            format!(
                "the header ends inside the {} field",
                if field == 4 { "version" } else { "method" }
            ),
        )
    })?;
    let Some(hsize) = header_size(prefix.version) else {
        return Err(Error::at(
            rules::CCOB_2,
            base + 4,
            format!(
                "unknown compressed bundle version {} (known: {})",
                prefix.version,
                versions_text()
            ),
        ));
    };
    // The first field of this version's header that the data cuts short.
    let fields = Layout::of(prefix.version)
        .expect("a known version")
        .named_fields();
    let short = || {
        let len = data.len() as u64;
        let (at, name) = fields
            .iter()
            .rev()
            .find(|(at, _)| *at <= len)
            .copied()
            .unwrap_or((8, "?"));
        Error::at(
            rules::CCOB_2,
            base + at,
            format!(
                "version {} header needs {hsize} bytes, the data ends inside the {name} field ({len} bytes)",
                prefix.version
            ),
        )
    };
    // Every field where the version's layout (raw::ccob::LAYOUTS) puts it.
    let layout = Layout::of(prefix.version).expect("a known version");
    if (data.len() as u64) < layout.size {
        return Err(short());
    }
    let total_size = layout.total_size.and_then(|f| f.read(data));
    let uncompressed_size = layout.uncompressed_size.read(data).ok_or_else(short)?;
    let hash: [u8; 8] = (data.get(layout.hash as usize..layout.hash as usize + 8))
        .and_then(|h| h.try_into().ok())
        .ok_or_else(short)?;
    let h = Header {
        version: prefix.version,
        method_value: prefix.method,
        total_size,
        uncompressed_size,
        hash,
        header_size: hsize,
    };
    if h.method().is_none() {
        return Err(Error::at(
            rules::CCOB_3,
            base + 6,
            format!(
                "unknown compression method {} (0 = zlib, 1 = zstd)",
                prefix.method
            ),
        ));
    }
    Ok(h)
}

/// The extent of the CCOB blob at the start of `data` (CCOB-4): its total
/// size for v2/v3 (checked against the data), the rest of the data for v1.
pub fn blob_len(h: &Header, data: &[u8], base: u64) -> Result<u64> {
    blob_len_in(h, data.len() as u64, base)
}

/// The header of a `version` blob (`hsize` bytes, see [`header_size`]) for a
/// bundle of `uncompressed` bytes whose blob, header included, holds
/// `total` bytes compressed with `method`, `hash` being its truncated MD5
/// (CCOB-8). Versions 1 and 2 hold sizes below 2^32 only.
pub(super) fn encode_header(
    version: u16,
    hsize: u64,
    method: Method,
    total: u64,
    uncompressed: u64,
    hash: &[u8; 8],
) -> Result<Vec<u8>> {
    let layout = Layout::of(version).ok_or_else(|| {
        Error::rule(
            rules::CCOB_2,
            format!(
                "unknown compressed bundle version {version} (known: {})",
                versions_text()
            ),
        )
    })?;
    debug_assert_eq!(layout.size, hsize);
    let mut out = vec![0u8; layout.size as usize];
    out[..4].copy_from_slice(MAGIC);
    out[4..6].copy_from_slice(&version.to_le_bytes());
    out[6..8].copy_from_slice(&method.value().to_le_bytes());
    let limit = |what: &str| {
        Error::rule(
            rules::CCOB_8,
            format!("{what} exceeds the version {version} limit of 2^32-1 bytes"),
        )
    };
    let mut put = |f: crate::raw::ccob::Field, v: u64, what: &str| -> Result<()> {
        let bytes = f.encode(v).ok_or_else(|| limit(what))?;
        out[f.at as usize..(f.at + f.width) as usize].copy_from_slice(&bytes);
        Ok(())
    };
    if let Some(f) = layout.total_size {
        put(f, total, "total file size")?;
    }
    put(layout.uncompressed_size, uncompressed, "uncompressed size")?;
    out[layout.hash as usize..layout.hash as usize + 8].copy_from_slice(hash);
    Ok(out)
}

/// The header of the blob that is all of `src` (read through a small
/// window), `base` being its absolute offset.
pub fn read_header(src: &dyn Source, base: u64) -> Result<Header> {
    let w = src
        .window(0, src.len().min(64))
        .ok_or_else(|| Error::at(rules::CCOB_2, base, "compressed bundle out of range"))?;
    parse_header(&w, base)
}

/// [`blob_len`] for a blob with `len` bytes available, without touching its data.
pub(super) fn blob_len_in(h: &Header, len: u64, base: u64) -> Result<u64> {
    match h.total_size {
        None => Ok(len),
        Some(t) if t < h.header_size => Err(Error::at(
            rules::CCOB_4,
            base + 8,
            format!(
                "total size {t} is smaller than the {}-byte header",
                h.header_size
            ),
        )),
        Some(t) if t > len => Err(Error::at(
            rules::CCOB_4,
            base + 8,
            format!("total size {t} runs past the end of the data ({len} bytes)"),
        )),
        Some(t) => Ok(t),
    }
}

/// One compressed blob found in a sequence (a `.hip_fatbin` section holds
/// several back to back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// Absolute offset of the blob.
    pub offset: u64,
    /// Its length.
    pub len: u64,
    /// Its header.
    pub header: Header,
}

/// Walk the CCOB blobs stored back to back in `data` (each bounded by its
/// total size; a v1 blob runs to the end). Bytes after the last blob that
/// do not start another blob violate CCOB-4.
pub fn blobs(data: &[u8], base: u64) -> Result<Vec<Blob>> {
    let mut out = Vec::new();
    let mut pos = 0u64;
    while (pos as usize) < data.len() {
        let rest = &data[pos as usize..];
        if !is_ccob(rest) && !out.is_empty() {
            return Err(Error::at(
                rules::CCOB_4,
                base + pos,
                format!("{} bytes after the last compressed bundle", rest.len()),
            ));
        }
        let header = parse_header(rest, base + pos)?;
        let len = blob_len(&header, rest, base + pos)?;
        out.push(Blob {
            offset: base + pos,
            len,
            header,
        });
        pos += len;
    }
    Ok(out)
}
