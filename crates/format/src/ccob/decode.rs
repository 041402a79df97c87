//! Bounded decoding and verification of a compressed blob: the strict
//! one-shot read (CCOB-5..CCOB-7), the decoder that never produces more
//! than the header's claim plus one byte, and the truncated MD5.

use super::header::{blob_len, parse_header, uncompressed_size_field};
use super::{Header, Method};
use crate::error::{Error, Result};
use crate::rules;
use md5::{Digest, Md5};
use std::io::{BufRead, Read, Write};

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
    check_size(&h, base, out.len() as u64)?;
    check_hash(&h, base, truncated_md5(&out))?;
    Ok(Decompressed {
        header: h,
        blob_len: end,
        data: out,
    })
}

/// CCOB-6: the stream of the blob at absolute offset `base` yields `n`
/// bytes, exactly the header's uncompressed size.
pub(super) fn check_size(h: &Header, base: u64, n: u64) -> Result<()> {
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
    Ok(())
}

/// CCOB-7: `got`, the truncated MD5 of the uncompressed bundle of the blob
/// at absolute offset `base`, is the header's hash.
pub(super) fn check_hash(h: &Header, base: u64, got: [u8; 8]) -> Result<()> {
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
    Ok(())
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
pub fn copy_big<R: Read + ?Sized, W: Write + ?Sized>(r: &mut R, w: &mut W) -> std::io::Result<u64> {
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
///
/// [`Reader`]: crate::source::Reader
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
            // `base` is where the payload starts; a caller passing 0 gets
            // the field's offset within the header.
            base.saturating_sub(h.header_size) + uncompressed_size_field(h.version),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ccob::{compress, WriteOptions};

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

    #[test]
    fn claimed_size_never_allocates() {
        let blob = compress(b"hello", WriteOptions::default()).unwrap();
        let mut big = blob.clone();
        big[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let e = decompress_strict(&big, 0).unwrap_err();
        assert_eq!(e.rule_id(), Some("CCOB-6"));
    }
}
