//! Compressed bundles (`CCOB` v1/v2/v3, zlib or zstd): strict reader that
//! verifies sizes and the truncated MD5, LLVM 19/22 reader models, writer
//! byte-identical to LLVM (same libzstd/zlib, same one-shot calls).
//!
//! Decompression never allocates from the header's claim: output grows
//! with what the stream yields and stops one byte past the claim.

use crate::bundle::binary;
use crate::error::{Error, Result};
use crate::format::ccob::{
    header_size, RawPrefix, RawV1, RawV2, RawV3, MAGIC, METHOD_ZLIB, METHOD_ZSTD,
};
use crate::profile::Release;
use crate::rules;
use crate::source::{Reader, Source};
use binrw::BinRead;
use md5::{Digest, Md5};
use std::io::{BufRead, Cursor, Read, Write};

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

/// Offset of the uncompressed-size field within the header of `version`.
fn uncompressed_size_field(version: u16) -> u64 {
    match version {
        1 => 8,
        2 => 12,
        _ => 16,
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
    if data.len() >= 6 {
        let v = u16::from_le_bytes([data[4], data[5]]);
        if header_size(v).is_none() {
            return Err(Error::at(
                rules::CCOB_2,
                base + 4,
                format!("unknown compressed bundle version {v} (known: 1, 2, 3)"),
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
                "unknown compressed bundle version {} (known: 1, 2, 3)",
                prefix.version
            ),
        ));
    };
    // The first field of this version's header that the data cuts short.
    let fields: &[(u64, &str)] = match prefix.version {
        1 => &[(8, "uncompressed size"), (12, "hash")],
        2 => &[(8, "total size"), (12, "uncompressed size"), (16, "hash")],
        _ => &[(8, "total size"), (16, "uncompressed size"), (24, "hash")],
    };
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
    blob_len_in(h, data.len() as u64, base)
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

/// An MD5 computed on a second thread while the caller decodes: data is
/// handed over in chunks of [`Md5Thread::CHUNK`] bytes, so hashing a
/// stream costs the decoding thread one copy instead of the hash. Without
/// a thread (the spawn failed) it hashes in place.
pub struct Md5Thread {
    pending: Vec<u8>,
    tx: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
    join: Option<std::thread::JoinHandle<[u8; 16]>>,
    inline: Md5,
}

impl Md5Thread {
    /// Bytes handed over at a time.
    pub const CHUNK: usize = 1 << 20;

    /// Start the hashing thread.
    pub fn new() -> Md5Thread {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
        let join = std::thread::Builder::new()
            .name("md5".into())
            .spawn(move || {
                let mut h = Md5::new();
                for chunk in rx {
                    h.update(&chunk);
                }
                h.finalize().into()
            })
            .ok();
        Md5Thread {
            pending: Vec::with_capacity(Self::CHUNK),
            tx: join.as_ref().map(|_| tx),
            join,
            inline: Md5::new(),
        }
    }

    /// Hash `data` next.
    pub fn update(&mut self, mut data: &[u8]) {
        if self.tx.is_none() {
            self.inline.update(data);
            return;
        }
        while !data.is_empty() {
            let n = (Self::CHUNK - self.pending.len()).min(data.len());
            self.pending.extend_from_slice(&data[..n]);
            data = &data[n..];
            if self.pending.len() == Self::CHUNK {
                self.flush_chunk();
            }
        }
    }

    fn flush_chunk(&mut self) {
        let chunk = std::mem::replace(&mut self.pending, Vec::with_capacity(Self::CHUNK));
        if let Some(tx) = &self.tx {
            if tx.send(chunk).is_err() {
                // The thread is gone (it only ends when the sender is dropped
                // or it panicked): the join below reports it.
                self.tx = None;
            }
        }
    }

    /// The digest of everything hashed.
    pub fn finish(mut self) -> [u8; 16] {
        if self.tx.is_none() && self.join.is_none() {
            return self.inline.finalize().into();
        }
        if !self.pending.is_empty() {
            self.flush_chunk();
        }
        self.tx = None;
        match self.join.take().map(std::thread::JoinHandle::join) {
            Some(Ok(d)) => d,
            Some(Err(p)) => std::panic::resume_unwind(p),
            None => self.inline.finalize().into(),
        }
    }
}

impl Default for Md5Thread {
    fn default() -> Self {
        Md5Thread::new()
    }
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
    decode_stream(h, payload, payload.len() as u64, base, out)
}

/// `io::copy` with a 1 MiB buffer: decoded data reaches the hash and the
/// outputs in large pieces rather than 8 KiB ones.
fn copy_big<R: Read + ?Sized, W: Write + ?Sized>(r: &mut R, w: &mut W) -> std::io::Result<u64> {
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        w.write_all(&buf[..n])?;
        total += n as u64;
    }
}

/// A [`BufRead`] that counts the bytes its consumer took.
struct Counting<R> {
    inner: R,
    used: u64,
}

impl<R: BufRead> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.used += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.used += amt as u64;
        self.inner.consume(amt);
    }
}

/// [`decode_into`] reading the `payload_len` bytes of compressed data from
/// `payload` (a slice, or a [`Reader`] that holds one window of a
/// mapped file at a time).
pub fn decode_stream<R: BufRead, W: Write>(
    h: &Header,
    payload: R,
    payload_len: u64,
    base: u64,
    out: &mut W,
) -> Result<u64> {
    let limit = h.uncompressed_size.saturating_add(1);
    let stream_err = |e: std::io::Error| {
        Error::at(
            rules::CCOB_5,
            base,
            format!("the compressed stream does not decode: {e}"),
        )
    };
    let mut counting = Counting {
        inner: payload.take(payload_len),
        used: 0,
    };
    let n = match h.method() {
        Some(Method::Zstd) => {
            let mut dec = zstd::stream::read::Decoder::with_buffer(&mut counting)
                .map_err(stream_err)?
                .single_frame();
            copy_big(&mut (&mut dec).take(limit), out).map_err(stream_err)?
        }
        Some(Method::Zlib) => {
            let mut dec = flate2::bufread::ZlibDecoder::new(&mut counting);
            let n = copy_big(&mut (&mut dec).take(limit), out).map_err(stream_err)?;
            if n < limit {
                // Make sure the decoder consumed the stream trailer.
                let mut rest = [0u8; 1];
                let _ = dec.read(&mut rest).map_err(stream_err)?;
            }
            let consumed = dec.total_in();
            if n <= h.uncompressed_size && consumed != payload_len {
                return Err(Error::at(
                    rules::CCOB_5,
                    base + consumed,
                    format!(
                        "{} bytes after the end of the compressed stream",
                        payload_len - consumed
                    ),
                ));
            }
            n
        }
        None => unreachable!("method checked by parse_header"),
    };
    if n > h.uncompressed_size {
        return Err(Error::at(
            rules::CCOB_6,
            base - h.header_size + uncompressed_size_field(h.version),
            format!(
                "the stream yields more than the {} bytes the header claims",
                h.uncompressed_size
            ),
        ));
    }
    let used = counting.used;
    if used != payload_len && h.method() == Some(Method::Zstd) {
        return Err(Error::at(
            rules::CCOB_5,
            base + used,
            format!(
                "{} bytes after the end of the compressed stream",
                payload_len - used
            ),
        ));
    }
    Ok(n)
}

/// Stream the blob at the start of `data` through the decoder, verifying
/// its size and hash (CCOB-5..7) as a whole, and write only the bytes
/// `[offset, offset + size)` of the uncompressed bundle to `out`. Memory
/// stays bounded by the decoder's window, whatever the bundle's size.
pub fn extract_range<W: Write>(
    data: &[u8],
    base: u64,
    offset: u64,
    size: u64,
    out: &mut W,
) -> Result<()> {
    extract_range_in(&data, 0, data.len() as u64, base, offset, size, out)
}

/// [`extract_range`] for the blob at `src[at..at + avail]` (absolute offset
/// `base` in the outermost input), reading its compressed data through windows of
/// [`STREAM_CHUNK`] bytes: a mapped input is never resident as a whole.
pub fn extract_range_in<W: Write>(
    src: &dyn Source,
    at: u64,
    avail: u64,
    base: u64,
    offset: u64,
    size: u64,
    out: &mut W,
) -> Result<()> {
    let h = header_in(src, at, avail, base)?;
    let end = blob_len_in(&h, avail, base)?;
    let to = offset
        .checked_add(size)
        .ok_or_else(|| Error::other("entry range overflows"))?;
    let mut sinks = [Sink {
        start: offset,
        len: size,
        out,
    }];
    let mut tap = Tap::new(&mut sinks);
    let payload = Reader::new(src, at + h.header_size, at + end, STREAM_CHUNK);
    let n = decode_stream(
        &h,
        payload,
        end - h.header_size,
        base + h.header_size,
        &mut tap,
    )?;
    if n != h.uncompressed_size {
        return Err(Error::at(
            rules::CCOB_6,
            base + uncompressed_size_field(h.version),
            format!(
                "the stream yields {n} bytes, the header says {}",
                h.uncompressed_size
            ),
        ));
    }
    if to > n {
        return Err(Error::other(format!(
            "entry range ends at {to}, past the {n}-byte bundle"
        )));
    }
    let digest = tap.md5.finish();
    if digest[..8] != h.hash {
        return Err(Error::at(
            rules::CCOB_7,
            base + h.header_size - 8,
            format!(
                "hash mismatch: header 0x{:016x}, MD5 of the uncompressed bundle gives 0x{:016x}",
                h.hash_u64(),
                u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"))
            ),
        ));
    }
    Ok(())
}

/// How much of a mapped input a streamed decode holds at a time.
pub const STREAM_CHUNK: u64 = 4 << 20;

/// The header of the blob at `src[at..at + avail]` (read through a small window).
pub fn header_in(src: &dyn Source, at: u64, avail: u64, base: u64) -> Result<Header> {
    let w = src
        .window(at, avail.min(64))
        .ok_or_else(|| Error::at(rules::CCOB_2, base, "compressed bundle out of range"))?;
    parse_header(&w, base)
}

/// [`blob_len`] for a blob with `len` bytes available, without touching its data.
fn blob_len_in(h: &Header, len: u64, base: u64) -> Result<u64> {
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

/// Stream-verify the blob at the start of `data` (size and hash, as
/// [`decompress_strict`]) while keeping only the first `keep` bytes of the
/// uncompressed bundle: enough to list a large compressed bundle without
/// holding it in memory.
pub fn verify_prefix(data: &[u8], base: u64, keep: u64) -> Result<(Header, Vec<u8>)> {
    verify_prefix_in(&data, 0, data.len() as u64, base, keep)
}

/// [`verify_prefix`] for the blob at `src[at..at + avail]`, streamed as
/// [`extract_range_in`] streams.
pub fn verify_prefix_in(
    src: &dyn Source,
    at: u64,
    avail: u64,
    base: u64,
    keep: u64,
) -> Result<(Header, Vec<u8>)> {
    let h = header_in(src, at, avail, base)?;
    let mut prefix = Vec::new();
    let keep = keep.min(h.uncompressed_size);
    extract_range_in(src, at, avail, base, 0, keep, &mut prefix)?;
    Ok((h, prefix))
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
    decompress_prefix_in(&data, 0, data.len() as u64, base, want)
}

/// [`decompress_prefix`] for the blob at `src[at..at + avail]` (absolute
/// offset `base`), reading the compressed data through windows: the first
/// `want` bytes of the bundle, nothing verified (the caller verifies the
/// whole stream later, as [`extract_range_in`] does).
pub fn decompress_prefix_in(
    src: &dyn Source,
    at: u64,
    avail: u64,
    base: u64,
    want: u64,
) -> Result<(Header, Vec<u8>)> {
    let h = header_in(src, at, avail, base)?;
    let end = blob_len_in(&h, avail, base)?;
    let payload = Reader::new(src, at + h.header_size, at + end, STREAM_CHUNK);
    let limit = want.min(h.uncompressed_size);
    let err = |e: std::io::Error| {
        Error::at(
            rules::CCOB_5,
            base + h.header_size,
            format!("the compressed stream does not decode: {e}"),
        )
    };
    let mut out = Vec::new();
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
    compress_payload_threads(bundle, method, level, 0)
}

/// [`compress_payload`] with `threads` zstd worker threads (0: LLVM's
/// single-threaded call). With workers the frame is cut into jobs, so the
/// bytes differ from LLVM's (still a valid CCOB every release reads); zlib
/// ignores `threads`.
pub fn compress_payload_threads(
    bundle: &[u8],
    method: Method,
    level: i32,
    threads: u32,
) -> Result<Vec<u8>> {
    match method {
        Method::Zstd => {
            let mut c = zstd::bulk::Compressor::new(level)?;
            c.set_parameter(zstd::zstd_safe::CParameter::EnableLongDistanceMatching(
                true,
            ))?;
            if threads > 0 {
                c.set_parameter(zstd::zstd_safe::CParameter::NbWorkers(threads))?;
            }
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
    compress_threads(bundle, opts, 0)
}

/// [`compress`] with `threads` zstd workers (see [`compress_payload_threads`]).
pub fn compress_threads(bundle: &[u8], opts: WriteOptions, threads: u32) -> Result<Vec<u8>> {
    let (mut out, payload) = compress_parts(bundle, opts, threads)?;
    out.extend_from_slice(&payload);
    Ok(out)
}

/// [`compress_threads`] as two parts, the header and the compressed data,
/// so that a caller writing a file need not join them. The truncated MD5
/// is computed on a second thread while the data is compressed: the same
/// bytes, in the time of the compression alone on a machine with two cores.
pub fn compress_parts(
    bundle: &[u8],
    opts: WriteOptions,
    threads: u32,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let hsize = header_size(opts.version).ok_or_else(|| {
        Error::rule(
            rules::CCOB_8,
            format!("cannot write compressed bundle version {}", opts.version),
        )
    })?;
    let (payload, hash) = std::thread::scope(|s| {
        let hasher = s.spawn(|| truncated_md5(bundle));
        let payload = compress_payload_threads(bundle, opts.method, opts.level, threads);
        let hash = hasher
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (payload, hash)
    });
    let payload = payload?;
    let total = hsize + payload.len() as u64;
    let mut out = Vec::with_capacity(hsize as usize);
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
    out.extend_from_slice(&hash);
    Ok((out, payload))
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
/// from 2^35 up on the 24 GiB reference machine: `LLVM ERROR: out of
/// memory`, SIGABRT; the threshold depends on the machine's memory).
pub const LLVM_ALLOCATION_LIMIT: u64 = 1 << 35;

/// The header fields a release uses to decompress, or what it makes of
/// the buffer when it does not get that far.
struct LlvmPrepared {
    method: Method,
    claimed: u64,
    hsize: usize,
    /// Offset of the uncompressed-size field.
    field: u64,
}

/// The header part of [`llvm_decompress`]: everything the release checks
/// before calling the decompressor.
fn llvm_prepare(
    data: &[u8],
    release: Release,
) -> std::result::Result<LlvmPrepared, LlvmDecompress> {
    if release <= Release::L16 || !is_ccob(data) {
        return Err(LlvmDecompress::Plain);
    }
    let min = if release == Release::L19 { 20 } else { 8 };
    if data.len() < min {
        return Err(LlvmDecompress::Plain);
    }
    let fail = |m: &str, e: Error| Err(LlvmDecompress::Fails(m.to_string(), e));
    let version = u16::from_le_bytes([data[4], data[5]]);
    let method = u16::from_le_bytes([data[6], data[7]]);
    let hsize = match (release, version) {
        // 19 reads a total size only for versions >= 2 and knows no v3.
        (Release::L19, v) if v < 2 => 20,
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
    let field = usize_off as u64;
    if claimed > LLVM_ALLOCATION_LIMIT {
        return fail(
            "LLVM ERROR: out of memory",
            Error::at(
                rules::CCOB_6,
                field,
                format!(
                    "the header claims {claimed} uncompressed bytes; LLVM {release} allocates the claim up front and aborts out of memory"
                ),
            ),
        );
    }
    Ok(LlvmPrepared {
        method: m,
        claimed,
        hsize,
        field,
    })
}

/// Model of `CompressedOffloadBundle::decompress` for `release`.
pub fn llvm_decompress(data: &[u8], release: Release) -> LlvmDecompress {
    let LlvmPrepared {
        method: m,
        claimed,
        hsize,
        field,
    } = match llvm_prepare(data, release) {
        Ok(p) => p,
        Err(outcome) => return outcome,
    };
    let fail = |m: &str, e: Error| LlvmDecompress::Fails(m.to_string(), e);
    let payload = &data[hsize..];
    let lib_fail = |lib: String, rule: crate::rules::Rule, at: u64, what: &str| {
        fail(
            &format!("Could not decompress embedded file contents: {lib}"),
            Error::at(rule, at, what.to_string()),
        )
    };
    match m {
        Method::Zstd => match zstd_one_shot(payload, claimed) {
            Ok(out) => LlvmDecompress::Data(out),
            Err(name) => lib_fail(
                name.clone(),
                if name.contains("buffer is too small") {
                    rules::CCOB_6
                } else {
                    rules::CCOB_5
                },
                if name.contains("buffer is too small") {
                    field
                } else {
                    hsize as u64
                },
                &format!("ZSTD_decompress: {name}"),
            ),
        },
        Method::Zlib => match zlib_uncompress(payload, claimed) {
            Ok(out) => LlvmDecompress::Data(out),
            Err(code) => lib_fail(
                format!("zlib error: {code}"),
                if code == "Z_BUF_ERROR" {
                    rules::CCOB_6
                } else {
                    rules::CCOB_5
                },
                if code == "Z_BUF_ERROR" {
                    field
                } else {
                    hsize as u64
                },
                &format!("uncompress: {code}"),
            ),
        },
    }
}

/// The first bytes of the bundle a compressed input holds, decoded only
/// as far as its binary-bundle header reaches, with the bundle's full
/// size: what `-list` needs (spec/ccob.md, "Listing a compressed
/// bundle").
///
/// `Some` only where the release would decompress the input and where the
/// outcome of its one-shot call is known without decoding everything: a
/// zstd payload that is exactly one frame (its extent found from the block
/// headers), whose content size is recorded and within the header's claim,
/// holding a binary bundle whose header ends within the content. Damage
/// inside the frame's blocks past the header is not seen (LLVM's one-shot
/// call reports it; `offload-kit verify` does). `None`: decompress the
/// whole input with [`llvm_decompress`] to learn what the release does.
pub fn llvm_list_prefix(src: &dyn Source, release: Release) -> Option<(Vec<u8>, u64)> {
    let data = src.bytes();
    let p = llvm_prepare(data, release).ok()?;
    if p.method != Method::Zstd {
        return None;
    }
    let payload_len = data.len() as u64 - p.hsize as u64;
    let (frame, total) = zstd_frame_extent(src, p.hsize as u64, data.len() as u64)?;
    if frame != payload_len {
        return None;
    }
    let total = total?;
    if total > p.claimed {
        return None;
    }
    let payload = Reader::new(src, p.hsize as u64, data.len() as u64, 1 << 20);
    let mut dec = zstd::stream::read::Decoder::with_buffer(payload)
        .ok()?
        .single_frame();
    let mut prefix = Vec::new();
    let mut want = 64u64 << 10;
    loop {
        let goal = want.min(total);
        let have = prefix.len() as u64;
        (&mut dec).take(goal - have).read_to_end(&mut prefix).ok()?;
        if (prefix.len() as u64) < goal || !binary::is_binary_bundle(&prefix) {
            return None;
        }
        let scan = binary::scan_prefix(&prefix, total, 0)?;
        let cut = matches!(scan.stop, Some(binary::Stop::Truncated { .. }));
        if !cut {
            return Some((prefix, total));
        }
        if goal == total {
            return None;
        }
        want = want.saturating_mul(4);
    }
}

/// The extent of the zstd frame at `src[start..end]` and its recorded
/// content size, found as `ZSTD_findFrameCompressedSize` finds it: from the
/// frame header and the block headers alone (a few bytes read per block,
/// nothing decoded). `None` for anything but one well-formed zstd frame.
pub fn zstd_frame_extent(src: &dyn Source, start: u64, end: u64) -> Option<(u64, Option<u64>)> {
    let mut head = [0u8; 5];
    if end < start.checked_add(5)? || !src.read_at(start, &mut head) {
        return None;
    }
    if head[..4] != [0x28, 0xb5, 0x2f, 0xfd] {
        return None;
    }
    let fhd = head[4];
    if fhd & 0x08 != 0 {
        return None; // reserved bit
    }
    let single = fhd & 0x20 != 0;
    let fcs_len = [usize::from(single), 2, 4, 8][usize::from(fhd >> 6)];
    let did_len = [0u64, 1, 2, 4][usize::from(fhd & 3)];
    let mut pos = start + 5 + u64::from(!single) + did_len;
    let mut fcs = [0u8; 8];
    if pos + fcs_len as u64 > end || !src.read_at(pos, &mut fcs[..fcs_len]) {
        return None;
    }
    let content = match fcs_len {
        0 => None,
        1 => Some(u64::from(fcs[0])),
        2 => Some(u64::from(u16::from_le_bytes([fcs[0], fcs[1]])) + 256),
        4 => Some(u64::from(u32::from_le_bytes([
            fcs[0], fcs[1], fcs[2], fcs[3],
        ]))),
        _ => Some(u64::from_le_bytes(fcs)),
    };
    pos += fcs_len as u64;
    loop {
        let mut b = [0u8; 3];
        if pos + 3 > end || !src.read_at(pos, &mut b) {
            return None;
        }
        let h = u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16;
        let size = match (h >> 1) & 3 {
            0 | 2 => u64::from(h >> 3),
            1 => 1,
            _ => return None, // reserved block type
        };
        pos = pos.checked_add(3 + size)?;
        if pos > end {
            return None;
        }
        if h & 1 == 1 {
            break;
        }
    }
    if fhd & 0x04 != 0 {
        pos += 4; // content checksum
        if pos > end {
            return None;
        }
    }
    Some((pos - start, content))
}

/// Where [`llvm_stream_ranges`] sends a range of the decompressed bundle.
pub struct Sink<'w> {
    /// First byte of the range in the decompressed bundle.
    pub start: u64,
    /// Length of the range.
    pub len: u64,
    /// Where the bytes go.
    pub out: &'w mut dyn Write,
}

/// The writer a decoder writes the decompressed bundle into: it hashes
/// everything (on a second thread) and passes each sink its range. A
/// failed write is kept in `failed` and returned to the decoder with the
/// same kind and message.
struct Tap<'a, 'w> {
    pos: u64,
    md5: Md5Thread,
    sinks: &'a mut [Sink<'w>],
    failed: Option<std::io::Error>,
}

impl<'a, 'w> Tap<'a, 'w> {
    fn new(sinks: &'a mut [Sink<'w>]) -> Self {
        Tap {
            pos: 0,
            md5: Md5Thread::new(),
            sinks,
            failed: None,
        }
    }
}

impl Write for Tap<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.md5.update(buf);
        let start = self.pos;
        let end = start + buf.len() as u64;
        for s in self.sinks.iter_mut() {
            let a = s.start.max(start);
            let b = s.start.saturating_add(s.len).min(end);
            if a < b {
                if let Err(e) = s
                    .out
                    .write_all(&buf[(a - start) as usize..(b - start) as usize])
                {
                    let again = std::io::Error::new(e.kind(), e.to_string());
                    self.failed = Some(e);
                    return Err(again);
                }
            }
        }
        self.pos = end;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.sinks.iter_mut().try_for_each(|s| s.out.flush())
    }
}

/// Why [`llvm_stream_ranges`] failed.
#[derive(Debug)]
pub enum StreamFailure {
    /// The release's decompression fails: its message (after
    /// `Failed to decompress input: `) and the detail.
    Llvm(String, Error),
    /// Writing to a sink failed.
    Write(std::io::Error),
}

/// Decode the compressed input of `src` as `release` decompresses it, in
/// one streaming pass, sending ranges of the decompressed bundle to
/// `sinks`; returns the truncated MD5 of the whole decompressed bundle
/// (for the CCOB-7 warning). Valid where [`llvm_list_prefix`] returned
/// `Some`: there the release's one-shot call and this stream agree, bytes
/// and errors alike. The compressed data is read through windows of
/// [`STREAM_CHUNK`] bytes and the decoder holds one zstd window, so memory
/// does not grow with the bundle.
pub fn llvm_stream_ranges(
    src: &dyn Source,
    release: Release,
    sinks: &mut [Sink<'_>],
) -> std::result::Result<[u8; 8], StreamFailure> {
    let data = src.bytes();
    let p = llvm_prepare(data, release).map_err(|outcome| match outcome {
        LlvmDecompress::Fails(m, e) => StreamFailure::Llvm(m, e),
        _ => StreamFailure::Llvm(
            "not a compressed bundle".into(),
            Error::at(rules::CCOB_1, 0, "not a compressed bundle"),
        ),
    })?;
    let mut tap = Tap::new(sinks);
    let payload = Reader::new(src, p.hsize as u64, data.len() as u64, STREAM_CHUNK);
    let lib_fail = |name: String| {
        StreamFailure::Llvm(
            format!("Could not decompress embedded file contents: {name}"),
            Error::at(
                rules::CCOB_5,
                p.hsize as u64,
                format!("ZSTD_decompress: {name}"),
            ),
        )
    };
    let mut dec = zstd::stream::read::Decoder::with_buffer(payload)
        .map_err(|e| lib_fail(e.to_string()))?
        .single_frame();
    // The one-shot call fails on anything after the frame; the stream
    // would stop at its end. Callers check this first (llvm_list_prefix).
    let whole = zstd_frame_extent(src, p.hsize as u64, data.len() as u64)
        .is_some_and(|(n, _)| n == data.len() as u64 - p.hsize as u64);
    if !whole {
        return Err(lib_fail("Src size is incorrect".into()));
    }
    let copied = copy_big(&mut (&mut dec).take(p.claimed), &mut tap);
    if let Some(e) = tap.failed.take() {
        return Err(StreamFailure::Write(e));
    }
    copied.map_err(|e| lib_fail(e.to_string()))?;
    let digest = tap.md5.finish();
    let mut h = [0u8; 8];
    h.copy_from_slice(&digest[..8]);
    Ok(h)
}

/// `ZSTD_decompress(dst, claimed, src)` as LLVM calls it. The claim is
/// bounded by [`LLVM_ALLOCATION_LIMIT`] before this is called, so the
/// buffer is too; an empty input decodes to nothing (zstd accepts it).
fn zstd_one_shot(src: &[u8], claimed: u64) -> std::result::Result<Vec<u8>, String> {
    if src.is_empty() {
        return Ok(Vec::new());
    }
    // Size the buffer by what the frame says it holds, never past the claim;
    // a frame without a content size is decoded as a stream instead, so no
    // allocation follows an untrusted claim.
    match zstd::zstd_safe::get_frame_content_size(src) {
        Ok(Some(n)) => {
            let mut dst = vec![0u8; n.min(claimed) as usize];
            match zstd::zstd_safe::decompress(&mut dst[..], src) {
                Ok(k) => {
                    dst.truncate(k);
                    Ok(dst)
                }
                Err(code) => Err(zstd::zstd_safe::get_error_name(code).to_string()),
            }
        }
        Ok(None) | Err(_) if src.len() < 5 => Err("Src size is incorrect".into()),
        Err(_) => {
            let mut probe = [0u8; 0];
            match zstd::zstd_safe::decompress(&mut probe[..], src) {
                Err(code) => Err(zstd::zstd_safe::get_error_name(code).to_string()),
                Ok(_) => Ok(Vec::new()),
            }
        }
        Ok(None) => {
            let h = Header {
                version: 3,
                method_value: METHOD_ZSTD,
                total_size: None,
                uncompressed_size: claimed,
                hash: [0; 8],
                header_size: 0,
            };
            let mut out = Vec::new();
            decode_into(&h, src, 0, &mut out).map(|_| out).map_err(|e| {
                if e.rule_id() == Some(rules::CCOB_6.id) {
                    "Destination buffer is too small".into()
                } else {
                    "Src size is incorrect".into()
                }
            })
        }
    }
}

/// zlib's `uncompress(dst, &claimed, src)` result, emulated on `flate2`:
/// the stream must end within the claim; running out of output space is
/// `Z_BUF_ERROR`, an incomplete or corrupt stream `Z_DATA_ERROR`.
fn zlib_uncompress(src: &[u8], claimed: u64) -> std::result::Result<Vec<u8>, &'static str> {
    let mut d = flate2::Decompress::new(true);
    if claimed == 0 {
        // zlib decodes into a 1-byte dummy: only an empty stream succeeds;
        // anything else was observed as Z_DATA_ERROR.
        let mut probe = [0u8; 1];
        return match d.decompress(src, &mut probe, flate2::FlushDecompress::Finish) {
            Ok(flate2::Status::StreamEnd) if d.total_out() == 0 => Ok(Vec::new()),
            _ => Err("Z_DATA_ERROR"),
        };
    }
    let mut out = Vec::with_capacity((claimed as usize).min(1 << 20));
    loop {
        let before_in = d.total_in();
        let before_out = d.total_out();
        let room = (claimed - d.total_out()) as usize;
        if room == 0 {
            // Output full: is the stream finished?
            let mut probe = [0u8; 1];
            let st = d.decompress(
                &src[d.total_in() as usize..],
                &mut probe,
                flate2::FlushDecompress::Finish,
            );
            return match st {
                Ok(flate2::Status::StreamEnd) if d.total_out() == before_out => Ok(out),
                Ok(_) => Err("Z_BUF_ERROR"),
                Err(_) => Err("Z_DATA_ERROR"),
            };
        }
        let chunk = room.min(1 << 20);
        let start = out.len();
        out.resize(start + chunk, 0);
        let st = d.decompress(
            &src[d.total_in() as usize..],
            &mut out[start..],
            flate2::FlushDecompress::Finish,
        );
        let wrote = (d.total_out() - before_out) as usize;
        out.truncate(start + wrote);
        match st {
            Ok(flate2::Status::StreamEnd) => return Ok(out),
            Ok(_) if d.total_in() == before_in && wrote == 0 => {
                return Err(if d.total_out() == claimed {
                    "Z_BUF_ERROR"
                } else {
                    "Z_DATA_ERROR"
                })
            }
            Ok(_) => {}
            Err(_) => return Err("Z_DATA_ERROR"),
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn md5_thread_matches_md5() {
        let data: Vec<u8> = (0..3 * Md5Thread::CHUNK + 12345)
            .map(|i| (i * 7 + i / 251) as u8)
            .collect();
        for len in [
            0,
            1,
            Md5Thread::CHUNK - 1,
            Md5Thread::CHUNK,
            Md5Thread::CHUNK + 1,
            data.len(),
        ] {
            for piece in [1usize, 4096, 100_003, Md5Thread::CHUNK * 2] {
                let mut h = Md5Thread::new();
                for c in data[..len].chunks(piece) {
                    h.update(c);
                }
                let want: [u8; 16] = Md5::digest(&data[..len]).into();
                assert_eq!(h.finish(), want, "len {len}, pieces of {piece}");
                if len < 2 {
                    break;
                }
            }
        }
    }

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
