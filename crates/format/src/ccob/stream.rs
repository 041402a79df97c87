//! Streamed decoding over a [`Source`] read window by window: ranges of
//! the decompressed bundle, verified prefixes, undecoded prefixes, and the
//! extent of a zstd frame found from its block headers.

use super::decode::{check_hash, check_size, decode_stream, Md5Thread};
use super::header::{blob_len_in, read_header};
use super::{Header, Method};
use crate::error::{Error, Result};
use crate::rules;
use crate::source::{Prefix, Reader, Source};
use std::io::{Read, Write};

/// Stream the blob that is all of `src` (absolute offset `base` in the
/// outermost input; a [`Sub`](crate::source::Sub) for a blob inside a
/// section) through the decoder, verifying its size and hash (CCOB-5..7)
/// as a whole, and write only the bytes `[offset, offset + size)` of the
/// uncompressed bundle to `out`. The compressed data is read through
/// windows of [`STREAM_CHUNK`] bytes and memory stays bounded by the
/// decoder's window, whatever the bundle's size: a mapped input is never
/// resident as a whole.
pub fn extract_range<W: Write>(
    src: &dyn Source,
    base: u64,
    offset: u64,
    size: u64,
    out: &mut W,
) -> Result<()> {
    let h = read_header(src, base)?;
    let end = blob_len_in(&h, src.len(), base)?;
    let to = offset
        .checked_add(size)
        .ok_or_else(|| Error::other("entry range overflows"))?;
    let mut sinks = [Sink {
        start: offset,
        len: size,
        out,
    }];
    let mut tap = Tap::new(&mut sinks);
    let payload = Reader::new(src, h.header_size, end, STREAM_CHUNK);
    let decoded = decode_stream(
        &h,
        payload,
        end - h.header_size,
        base + h.header_size,
        &mut tap,
    );
    // A failed write (a full disk) is the output's fault, not the stream's.
    if let Some(e) = tap.failed.take() {
        return Err(Error::from(e));
    }
    let n = decoded?;
    check_size(&h, base, n)?;
    if to > n {
        return Err(Error::other(format!(
            "entry range ends at {to}, past the {n}-byte bundle"
        )));
    }
    let digest = tap.md5.finish();
    check_hash(&h, base, digest[..8].try_into().expect("8 bytes"))
}

/// How much of a mapped input a streamed decode holds at a time.
pub const STREAM_CHUNK: u64 = 4 << 20;

/// Stream-verify the blob that is all of `src` (size and hash, as
/// [`decompress_strict`]) while keeping only the first `keep` bytes of the
/// uncompressed bundle: enough to list a large compressed bundle without
/// holding it in memory. Streamed as [`extract_range`] streams.
///
/// [`decompress_strict`]: super::decompress_strict
pub fn verify_prefix(src: &dyn Source, base: u64, keep: u64) -> Result<(Header, Prefix)> {
    let h = read_header(src, base)?;
    let mut prefix = Vec::new();
    let keep = keep.min(h.uncompressed_size);
    extract_range(src, base, 0, keep, &mut prefix)?;
    let len = h.uncompressed_size;
    Ok((h, Prefix::new(prefix, len)))
}

/// Decode at most `want` bytes of the bundle inside the blob that is all of
/// `src` (absolute offset `base`), reading the compressed data through
/// windows: enough to read a bundle header without inflating the
/// payloads. Nothing is verified (the caller verifies the whole stream
/// later, as [`extract_range`] does).
pub fn decompress_prefix(src: &dyn Source, base: u64, want: u64) -> Result<(Header, Prefix)> {
    let h = read_header(src, base)?;
    let end = blob_len_in(&h, src.len(), base)?;
    let payload = Reader::new(src, h.header_size, end, STREAM_CHUNK);
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
    let len = h.uncompressed_size;
    Ok((h, Prefix::new(out, len)))
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

/// Where a streaming decoder (`offload_kit::bundle::ccob::llvm_stream_ranges`,
/// through a [`Tap`]) sends a range of the decompressed bundle.
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
pub struct Tap<'a, 'w> {
    pos: u64,
    /// The MD5 of everything written so far (CCOB-7's hash).
    pub md5: Md5Thread,
    sinks: &'a mut [Sink<'w>],
    /// The first failed write of a sink, if any.
    pub failed: Option<std::io::Error>,
}

impl<'a, 'w> Tap<'a, 'w> {
    /// A tap at position 0 feeding `sinks`.
    pub fn new(sinks: &'a mut [Sink<'w>]) -> Self {
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
