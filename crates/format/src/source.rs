//! Random access to an input for walks that read many small pieces of a
//! large file.
//!
//! Readers take `&[u8]`. When the input is a mapped file, every page a
//! reader touches stays mapped, and the kernel maps whole page-cache folios
//! (2 MiB on ext4 with large folios) around each one: reading the 111
//! bundle headers of a 1.3 GB `.hip_fatbin` that way keeps gigabytes
//! resident. A [`Source`] hands out [`Window`]s instead: the CLI maps each
//! window separately and unmaps it when the window is dropped, so the
//! resident set stays what one window touches. A plain slice is a source
//! whose windows are borrowed subslices.
//!
//! # Example
//!
//! Windows of a buffer, a sub-range of it, and a reader over that.
//!
//! ```
//! use offload_kit_format::source::{Prefix, Reader, Source, Sub};
//! use std::io::Read;
//!
//! let data: Vec<u8> = (0u8..100).collect();
//! assert_eq!(&data.window(10, 3).unwrap()[..], [10, 11, 12]);
//! assert!(data.window(99, 2).is_none()); // not inside the input
//! // Bytes 50..70 as a source of their own, read through 7-byte windows.
//! let sub = Sub::new(&data, 50, 20).unwrap();
//! let mut all = Vec::new();
//! Reader::new(&sub, 0, 20, 7).read_to_end(&mut all).unwrap();
//! assert_eq!(all, (50u8..70).collect::<Vec<u8>>());
//! let mut buf = [0u8; 2];
//! assert!(sub.read_at(18, &mut buf) && buf == [68, 69]);
//! assert!(!sub.read_at(19, &mut buf));
//! // The first 8 bytes of a 4096-byte input, as a source of that length.
//! let prefix = Prefix::new(data[..8].to_vec(), 4096);
//! assert_eq!((prefix.len(), prefix.bytes().len()), (4096, 8));
//! assert!(prefix.window(8, 1).is_none()); // not at hand
//! ```

use std::ops::Deref;

/// The window size of the readers that walk a whole input
/// ([`Source::window_size`]): a mapped input is read 16 MiB at a time, so
/// scanning a multi-GB text bundle keeps about that much of it resident.
pub const WINDOW: u64 = 16 << 20;

/// The bytes of a range of an input: borrowed, or held by a mapping of its
/// own that is released when the window is dropped.
pub enum Window<'a> {
    /// A subslice of bytes already in memory.
    Borrowed(&'a [u8]),
    /// A separate mapping (or buffer) of the range.
    Held(Box<dyn Deref<Target = [u8]> + 'a>),
}

impl Deref for Window<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Window::Borrowed(b) => b,
            Window::Held(h) => h,
        }
    }
}

/// An input that can be read whole or window by window.
pub trait Source {
    /// The whole input, or as much of it as is at hand (a [`Prefix`]).
    fn bytes(&self) -> &[u8];

    /// The input's length in bytes: `bytes().len()`, except for a
    /// [`Prefix`], whose bytes are only the start of an input this long.
    fn len(&self) -> u64 {
        self.bytes().len() as u64
    }

    /// Whether the input is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The size of the windows a reader that walks the whole input (the
    /// text-bundle readers) asks for: [`WINDOW`] unless a source says
    /// otherwise (tests ask small ones to cross window boundaries often).
    fn window_size(&self) -> u64 {
        WINDOW
    }

    /// `bytes()[offset..offset + len]`, `None` when the range is not inside
    /// the input. The default borrows from [`Source::bytes`].
    fn window(&self, offset: u64, len: u64) -> Option<Window<'_>> {
        let s = usize::try_from(offset).ok()?;
        let e = s.checked_add(usize::try_from(len).ok()?)?;
        self.bytes().get(s..e).map(Window::Borrowed)
    }

    /// Fill `buf` from `offset`; `false` when the range is not inside the
    /// input. For the few bytes of a header among many: the CLI reads a
    /// file-backed input with `pread`, so nothing stays mapped. The default
    /// copies from [`Source::bytes`].
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> bool {
        let Ok(s) = usize::try_from(offset) else {
            return false;
        };
        match s
            .checked_add(buf.len())
            .and_then(|e| self.bytes().get(s..e))
        {
            Some(b) => {
                buf.copy_from_slice(b);
                true
            }
            None => false,
        }
    }
}

impl Source for [u8] {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl Source for &[u8] {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl<const N: usize> Source for [u8; N] {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl Source for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// The first bytes of an input of [`Source::len`] bytes: a compressed
/// bundle decoded only as far as its header, so that a reader can check
/// its records against the bundle's full length without the payloads.
/// Windows and reads beyond the bytes at hand are `None`/`false`, as for
/// any range outside an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    bytes: Vec<u8>,
    len: u64,
}

impl Prefix {
    /// `bytes`, the start of an input of `len` bytes (at least
    /// `bytes.len()`).
    pub fn new(bytes: Vec<u8>, len: u64) -> Prefix {
        let len = len.max(bytes.len() as u64);
        Prefix { bytes, len }
    }

    /// The bytes at hand.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

impl Source for Prefix {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn len(&self) -> u64 {
        self.len
    }
}

/// A sequential reader over `[start, end)` of a [`Source`] that holds one
/// buffer of at most `chunk` bytes: streaming a compressed bundle through a
/// decoder keeps only that much of the input in memory. It reads with
/// [`Source::read_at`] (`pread` for a file), never through a mapping, so a
/// file that another process truncates meanwhile gives an I/O error, not
/// SIGBUS.
pub struct Reader<'s> {
    src: &'s dyn Source,
    pos: u64,
    end: u64,
    chunk: u64,
    buf: Vec<u8>,
    used: usize,
}

impl<'s> Reader<'s> {
    /// A reader of `src[start..end]` in pieces of `chunk` bytes.
    pub fn new(src: &'s dyn Source, start: u64, end: u64, chunk: u64) -> Reader<'s> {
        Reader {
            src,
            pos: start,
            end: end.max(start),
            chunk: chunk.max(1),
            buf: Vec::new(),
            used: 0,
        }
    }
}

impl std::io::Read for Reader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let avail = std::io::BufRead::fill_buf(self)?;
        let n = avail.len().min(buf.len());
        buf[..n].copy_from_slice(&avail[..n]);
        std::io::BufRead::consume(self, n);
        Ok(n)
    }
}

impl std::io::BufRead for Reader<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.used >= self.buf.len() && self.pos < self.end {
            let n = self.chunk.min(self.end - self.pos) as usize;
            self.buf.resize(n, 0);
            self.used = 0;
            if !self.src.read_at(self.pos, &mut self.buf) {
                self.buf.clear();
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!(
                        "cannot read {n} bytes at offset {} (did the input change while it was read?)",
                        self.pos
                    ),
                ));
            }
            self.pos += n as u64;
        }
        Ok(&self.buf[self.used.min(self.buf.len())..])
    }

    fn consume(&mut self, amt: usize) {
        self.used += amt;
    }
}

/// The range `[start, start + len)` of another source, as a source of its
/// own (a compressed bundle inside a section or an archive member): its
/// windows and reads go to the parent, so they keep the parent's way of
/// reading (separate mappings, `pread`).
pub struct Sub<'s> {
    src: &'s dyn Source,
    start: u64,
    len: u64,
}

impl<'s> Sub<'s> {
    /// `src[start..start + len]`; `None` when the range is not inside `src`.
    pub fn new(src: &'s dyn Source, start: u64, len: u64) -> Option<Sub<'s>> {
        let end = start.checked_add(len)?;
        (end <= src.len()).then_some(Sub { src, start, len })
    }
}

impl Source for Sub<'_> {
    /// The bytes of the range that the parent has at hand (all of them,
    /// unless the parent is a [`Prefix`]).
    fn bytes(&self) -> &[u8] {
        let b = self.src.bytes();
        let s = (self.start as usize).min(b.len());
        let e = ((self.start + self.len) as usize).min(b.len());
        &b[s..e]
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn window(&self, offset: u64, len: u64) -> Option<Window<'_>> {
        let end = offset.checked_add(len)?;
        if end > self.len {
            return None;
        }
        self.src.window(self.start + offset, len)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> bool {
        match offset.checked_add(buf.len() as u64) {
            Some(end) if end <= self.len => self.src.read_at(self.start + offset, buf),
            _ => false,
        }
    }
}
