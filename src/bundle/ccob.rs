//! Compressed bundles (`CCOB` v1/v2/v3, zlib or zstd): strict reader that
//! verifies sizes and the truncated MD5, LLVM 19/22 reader models, writer
//! byte-identical to LLVM (same libzstd/zlib, same one-shot calls).
//!
//! Decompression never allocates from the header's claim: output grows
//! with what the stream yields and stops one byte past the claim.

use crate::error::{Error, Result};
use crate::format::ccob::{
    header_size, RawPrefix, RawV1, RawV2, RawV3, MAGIC, METHOD_ZLIB, METHOD_ZSTD,
};
use crate::profile::Release;
use crate::rules;
use binrw::BinRead;
use md5::{Digest, Md5};
use std::io::{Cursor, Read, Write};

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
    let prefix = RawPrefix::read(&mut c).map_err(|_| {
        Error::at(
            rules::CCOB_2,
            base + 4,
            "the header ends inside the version and method fields",
        )
    })?;
    let Some(hsize) = header_size(prefix.version) else {
        return Err(Error::at(
            rules::CCOB_2,
            base + 4,
            format!(
                "unknown compressed bundle version {} (known: 1, 2, 3)",
                prefix.version
            ),
        ));
    };
    let short = || {
        Error::at(
            rules::CCOB_2,
            base + data.len() as u64,
            format!(
                "version {} header needs {hsize} bytes, the data has {}",
                prefix.version,
                data.len()
            ),
        )
    };
    let (total_size, uncompressed_size, hash) = match prefix.version {
        1 => {
            let r = RawV1::read(&mut c).map_err(|_| short())?;
            (None, u64::from(r.uncompressed_size), r.hash)
        }
        2 => {
            let r = RawV2::read(&mut c).map_err(|_| short())?;
            (
                Some(u64::from(r.total_size)),
                u64::from(r.uncompressed_size),
                r.hash,
            )
        }
        _ => {
            let r = RawV3::read(&mut c).map_err(|_| short())?;
            (Some(r.total_size), r.uncompressed_size, r.hash)
        }
    };
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
    let len = data.len() as u64;
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

/// A verified compressed bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decompressed {
    /// The header.
    pub header: Header,
    /// Bytes of the blob (header + compressed data).
    pub blob_len: u64,
    /// The uncompressed bundle.
    pub data: Vec<u8>,
}

/// Truncated MD5: the first 8 bytes of the digest.
pub fn truncated_md5(data: &[u8]) -> [u8; 8] {
    let d = Md5::digest(data);
    let mut h = [0u8; 8];
    h.copy_from_slice(&d[..8]);
    h
}

/// Strict read of the CCOB blob at the start of `data`: header, extent,
/// complete stream, exact size and hash (CCOB-1..CCOB-7).
pub fn decompress_strict(data: &[u8], base: u64) -> Result<Decompressed> {
    let h = parse_header(data, base)?;
    let end = blob_len(&h, data, base)?;
    let payload = &data[h.header_size as usize..end as usize];
    let mut out = Vec::new();
    decode_into(&h, payload, base + h.header_size, &mut out)?;
    if out.len() as u64 != h.uncompressed_size {
        return Err(Error::at(
            rules::CCOB_6,
            base + if h.version == 1 {
                8
            } else if h.version == 2 {
                12
            } else {
                16
            },
            format!(
                "the stream yields {} bytes, the header says {}",
                out.len(),
                h.uncompressed_size
            ),
        ));
    }
    let got = truncated_md5(&out);
    if got != h.hash {
        return Err(Error::at(
            rules::CCOB_7,
            base + h.header_size - 8,
            format!(
                "hash mismatch: header 0x{:016x}, MD5 of the uncompressed bundle gives 0x{:016x}",
                h.hash_u64(),
                u64::from_le_bytes(got)
            ),
        ));
    }
    Ok(Decompressed {
        header: h,
        blob_len: end,
        data: out,
    })
}

/// Decode `payload` into `out`, never producing more than the header's
/// uncompressed size plus one byte (so an overlong stream is detected
/// without trusting the claim for allocation). The stream must end exactly
/// at the end of `payload` (CCOB-5).
pub fn decode_into<W: Write>(h: &Header, payload: &[u8], base: u64, out: &mut W) -> Result<u64> {
    let limit = h.uncompressed_size.saturating_add(1);
    let stream_err = |e: std::io::Error| {
        Error::at(
            rules::CCOB_5,
            base,
            format!("the compressed stream does not decode: {e}"),
        )
    };
    let mut counting = Cursor::new(payload);
    let n = match h.method() {
        Some(Method::Zstd) => {
            let mut dec = zstd::stream::read::Decoder::with_buffer(&mut counting)
                .map_err(stream_err)?
                .single_frame();
            std::io::copy(&mut (&mut dec).take(limit), out).map_err(stream_err)?
        }
        Some(Method::Zlib) => {
            let mut dec = flate2::bufread::ZlibDecoder::new(&mut counting);
            let n = std::io::copy(&mut (&mut dec).take(limit), out).map_err(stream_err)?;
            if n < limit {
                // Make sure the decoder consumed the stream trailer.
                let mut rest = [0u8; 1];
                let _ = dec.read(&mut rest).map_err(stream_err)?;
            }
            n
        }
        None => unreachable!("method checked by parse_header"),
    };
    if n > h.uncompressed_size {
        return Err(Error::at(
            rules::CCOB_6,
            base,
            format!(
                "the stream yields more than the {} bytes the header claims",
                h.uncompressed_size
            ),
        ));
    }
    let used = counting.position();
    if used != payload.len() as u64 && h.method() == Some(Method::Zstd) {
        return Err(Error::at(
            rules::CCOB_5,
            base + used,
            format!(
                "{} bytes after the end of the compressed stream",
                payload.len() as u64 - used
            ),
        ));
    }
    Ok(n)
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

/// Decode at most `want` bytes of the bundle inside the blob at the start
/// of `data`: enough to read a bundle header without inflating the payloads.
pub fn decompress_prefix(data: &[u8], base: u64, want: u64) -> Result<(Header, Vec<u8>)> {
    let h = parse_header(data, base)?;
    let end = blob_len(&h, data, base)?;
    let payload = &data[h.header_size as usize..end as usize];
    let mut out = Vec::new();
    let limit = want.min(h.uncompressed_size);
    let err = |e: std::io::Error| {
        Error::at(
            rules::CCOB_5,
            base + h.header_size,
            format!("the compressed stream does not decode: {e}"),
        )
    };
    match h.method() {
        Some(Method::Zstd) => {
            let mut dec = zstd::stream::read::Decoder::with_buffer(payload)
                .map_err(err)?
                .single_frame();
            (&mut dec).take(limit).read_to_end(&mut out).map_err(err)?;
        }
        _ => {
            let mut dec = flate2::bufread::ZlibDecoder::new(payload);
            (&mut dec).take(limit).read_to_end(&mut out).map_err(err)?;
        }
    }
    Ok((h, out))
}

/// Options for writing a compressed bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// Format version (1, 2 or 3).
    pub version: u16,
    /// Method.
    pub method: Method,
    /// Compression level.
    pub level: i32,
}

impl Default for WriteOptions {
    /// LLVM 22's defaults: v3, zstd level 3 (long-distance matching on).
    fn default() -> Self {
        WriteOptions {
            version: 3,
            method: Method::Zstd,
            level: 3,
        }
    }
}

/// Compress `bundle` with LLVM's one-shot calls: zstd `ZSTD_compress2`
/// with the level and long-distance matching; zlib `compress2`.
pub fn compress_payload(bundle: &[u8], method: Method, level: i32) -> Result<Vec<u8>> {
    match method {
        Method::Zstd => {
            let mut c = zstd::bulk::Compressor::new(level)?;
            c.set_parameter(zstd::zstd_safe::CParameter::EnableLongDistanceMatching(
                true,
            ))?;
            Ok(c.compress(bundle)?)
        }
        Method::Zlib => {
            let lvl = if level < 0 { 6 } else { level.min(9) as u32 };
            let mut z = flate2::Compress::new(flate2::Compression::new(lvl), true);
            let bound = bundle.len() + bundle.len() / 1000 + bundle.len() / 4096 + 64;
            let mut out = Vec::with_capacity(bound);
            z.compress_vec(bundle, &mut out, flate2::FlushCompress::Finish)
                .map_err(|e| Error::other(format!("zlib: {e}")))?;
            Ok(out)
        }
    }
}

/// Write a CCOB blob for `bundle` (CCOB-8).
pub fn compress(bundle: &[u8], opts: WriteOptions) -> Result<Vec<u8>> {
    let hsize = header_size(opts.version).ok_or_else(|| {
        Error::rule(
            rules::CCOB_8,
            format!("cannot write compressed bundle version {}", opts.version),
        )
    })?;
    let payload = compress_payload(bundle, opts.method, opts.level)?;
    let total = hsize + payload.len() as u64;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&opts.version.to_le_bytes());
    out.extend_from_slice(&opts.method.value().to_le_bytes());
    let usize_ = bundle.len() as u64;
    let v2_limit = |what: &str| {
        Error::rule(
            rules::CCOB_8,
            format!(
                "{what} exceeds the version {} limit of 2^32-1 bytes",
                opts.version
            ),
        )
    };
    match opts.version {
        1 => {
            let u = u32::try_from(usize_).map_err(|_| v2_limit("uncompressed size"))?;
            out.extend_from_slice(&u.to_le_bytes());
        }
        2 => {
            let t = u32::try_from(total).map_err(|_| v2_limit("total file size"))?;
            let u = u32::try_from(usize_).map_err(|_| v2_limit("uncompressed size"))?;
            out.extend_from_slice(&t.to_le_bytes());
            out.extend_from_slice(&u.to_le_bytes());
        }
        _ => {
            out.extend_from_slice(&total.to_le_bytes());
            out.extend_from_slice(&usize_.to_le_bytes());
        }
    }
    out.extend_from_slice(&truncated_md5(bundle));
    out.extend_from_slice(&payload);
    Ok(out)
}

/// Length of the compressed data of a blob written by [`compress`]
/// (its length minus the header of its version).
pub fn compress_payload_len(blob: &[u8]) -> usize {
    let v = blob
        .get(4..6)
        .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
    blob.len() - header_size(v).unwrap_or(0) as usize
}

/// What an LLVM release makes of a buffer that may be compressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlvmDecompress {
    /// Not compressed as far as this release can tell: use the bytes as they are.
    Plain,
    /// Decompressed bytes.
    Data(Vec<u8>),
    /// The release fails with this message (after `Failed to decompress input: `).
    Fails(String, Error),
}

/// Claims above this size make LLVM's up-front allocation fail (observed
/// with 2^40 on a 24 GiB machine: `LLVM ERROR: out of memory`, SIGABRT).
pub const LLVM_ALLOCATION_LIMIT: u64 = 1 << 36;

/// Model of `CompressedOffloadBundle::decompress` for `release`.
pub fn llvm_decompress(data: &[u8], release: Release) -> LlvmDecompress {
    if release <= Release::L16 || !is_ccob(data) {
        return LlvmDecompress::Plain;
    }
    let min = if release == Release::L19 { 20 } else { 8 };
    if data.len() < min {
        return LlvmDecompress::Plain;
    }
    let fail = |m: &str, e: Error| LlvmDecompress::Fails(m.to_string(), e);
    let version = u16::from_le_bytes([data[4], data[5]]);
    let method = u16::from_le_bytes([data[6], data[7]]);
    let hsize = match (release, version) {
        (Release::L19, 1) => 20,
        (Release::L19, _) => 24,
        (_, v) => match header_size(v) {
            Some(h) => h as usize,
            None => {
                return fail(
                    "Compressed bundle header size too small",
                    Error::at(rules::CCOB_2, 4, format!("unknown version {version}")),
                )
            }
        },
    };
    if data.len() < hsize {
        if release == Release::L19 && data.len() < 24 && version != 1 {
            return fail(
                "Compressed bundle header size too small",
                Error::at(rules::CCOB_2, data.len() as u64, "header truncated"),
            );
        }
        return fail(
            "Compressed bundle header size too small",
            Error::at(rules::CCOB_2, data.len() as u64, "header truncated"),
        );
    }
    let usize_off = match hsize {
        20 => 8,
        24 => 12,
        _ => 16,
    };
    let claimed = if hsize == 32 {
        u64::from_le_bytes(data[16..24].try_into().expect("8 bytes"))
    } else {
        u64::from(u32::from_le_bytes(
            data[usize_off..usize_off + 4].try_into().expect("4 bytes"),
        ))
    };
    let m = match method {
        METHOD_ZLIB => Method::Zlib,
        METHOD_ZSTD => Method::Zstd,
        _ => {
            return fail(
                "Unknown compressing method",
                Error::at(rules::CCOB_3, 6, format!("method {method}")),
            )
        }
    };
    let payload = &data[hsize..];
    if payload.is_empty() && release == Release::L22 {
        return LlvmDecompress::Data(Vec::new());
    }
    let h = Header {
        version,
        method_value: method,
        total_size: None,
        uncompressed_size: claimed,
        hash: [0; 8],
        header_size: hsize as u64,
    };
    let mut out = Vec::new();
    // LLVM decompresses into a buffer of exactly `claimed` bytes.
    match decode_into(&h, payload, hsize as u64, &mut out) {
        Ok(_) if claimed > LLVM_ALLOCATION_LIMIT => fail(
            "LLVM ERROR: out of memory",
            Error::at(
                rules::CCOB_6,
                usize_off as u64,
                format!(
                    "the header claims {claimed} uncompressed bytes (the stream yields {}); LLVM {release} allocates the claim and aborts out of memory",
                    out.len()
                ),
            ),
        ),
        Ok(_) => LlvmDecompress::Data(out),
        Err(e) if e.rule_id() == Some(rules::CCOB_6.id) => fail(
            if m == Method::Zstd {
                "Could not decompress embedded file contents: Destination buffer is too small"
            } else {
                "Could not decompress embedded file contents: zlib error: Z_BUF_ERROR"
            },
            e,
        ),
        Err(e) => {
            let lib = if m == Method::Zlib {
                "zlib error: Z_DATA_ERROR"
            } else if e.message().contains("Unknown frame descriptor") {
                "Unknown frame descriptor"
            } else if e.message().contains("corruption") {
                "Data corruption detected"
            } else {
                "Src size is incorrect"
            };
            fail(&format!("Could not decompress embedded file contents: {lib}"), e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_every_version_and_method() {
        let bundle = b"__CLANG_OFFLOAD_BUNDLE__ some payload bytes, some payload bytes".repeat(10);
        for version in [1, 2, 3] {
            for method in [Method::Zlib, Method::Zstd] {
                let blob = compress(
                    &bundle,
                    WriteOptions {
                        version,
                        method,
                        level: method.default_level(),
                    },
                )
                .unwrap();
                let d = decompress_strict(&blob, 0).unwrap();
                assert_eq!(d.data, bundle);
                assert_eq!(d.header.version, version);
                assert_eq!(d.blob_len, blob.len() as u64);
            }
        }
    }

    #[test]
    fn claimed_size_never_allocates() {
        let blob = compress(b"hello", WriteOptions::default()).unwrap();
        let mut big = blob.clone();
        big[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let e = decompress_strict(&big, 0).unwrap_err();
        assert_eq!(e.rule_id(), Some("CCOB-6"));
    }
}
