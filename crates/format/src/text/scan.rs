//! The input of a reader: a [`Source`] read window by window, with the few
//! operations the readers need on it; and the entries the readers collect
//! from it.

use super::TextEntry;
use crate::error::Error;
use crate::source::{Source, Window};
use memchr::memmem::Finder;
use std::borrow::Cow;

/// The input of a reader and the few operations the readers need on it:
/// searches, short reads and newline counts over ranges of offsets. The
/// [`Source`] is read through windows of at most `chunk` bytes (of a
/// needle's length when that is longer), one held at a time and released
/// as the scan moves on; a search that goes on into the next window looks
/// back only the needle's length minus one.
pub struct Scan<'a> {
    src: Src<'a>,
    /// The input's length.
    pub len: usize,
    /// The offset of the first window that could not be had.
    failed: Option<u64>,
}

struct Src<'a> {
    src: &'a dyn Source,
    chunk: usize,
    /// The window held, with its offset.
    cur: Option<(usize, Window<'a>)>,
}

impl<'a> Scan<'a> {
    /// `src` read through windows of [`Source::window_size`] bytes.
    pub fn of(src: &'a dyn Source) -> Scan<'a> {
        Scan::windows(src, src.window_size())
    }

    /// `src` read through windows of `chunk` bytes.
    pub fn windows(src: &'a dyn Source, chunk: u64) -> Scan<'a> {
        Scan {
            len: usize::try_from(src.len()).unwrap_or(usize::MAX),
            src: Src {
                src,
                chunk: usize::try_from(chunk).unwrap_or(usize::MAX).max(1),
                cur: None,
            },
            failed: None,
        }
    }

    /// Bytes from `at` (`at < to <= len`) out of one window: all of
    /// `at..to`, or at least `min` of them. `None` when the window cannot
    /// be had (recorded in `failed`).
    fn view(&mut self, at: usize, to: usize, min: usize) -> Option<&[u8]> {
        let len = self.len;
        let Src { src, chunk, cur } = &mut self.src;
        let held = cur.as_ref().is_some_and(|(ws, w)| {
            let we = ws + w.len();
            *ws <= at && (we >= to || we >= at + min)
        });
        if !held {
            // Release the old window before taking the next one.
            *cur = None;
            // A whole window from `at`, not just `at..to`: the next reads
            // are near, and a mapping per short read costs two syscalls.
            let n = (len - at).min((*chunk).max(min));
            match src.window(at as u64, n as u64) {
                Some(w) if w.len() == n => *cur = Some((at, w)),
                _ => {
                    self.failed.get_or_insert(at as u64);
                    return None;
                }
            }
        }
        let (ws, w) = cur.as_ref()?;
        let ws = *ws;
        w.get(at.checked_sub(ws)?..to.min(ws + w.len()).checked_sub(ws)?)
    }

    /// The first match of `search` (for a needle of `needle` bytes) in
    /// `from..to`, window by window.
    fn find_with(
        &mut self,
        from: usize,
        to: usize,
        needle: usize,
        search: impl Fn(&[u8]) -> Option<usize>,
    ) -> Option<usize> {
        let to = to.min(self.len);
        let needle = needle.max(1);
        let mut at = from;
        while at < to && to - at >= needle {
            let v = self.view(at, to, needle)?;
            if let Some(k) = search(v) {
                return Some(at + k);
            }
            if at + v.len() >= to || v.len() < needle {
                return None;
            }
            at += v.len() + 1 - needle;
        }
        None
    }

    /// The first occurrence of `f`'s needle in `from..to`.
    pub fn find(&mut self, f: &Finder<'_>, from: usize, to: usize) -> Option<usize> {
        self.find_with(from, to, f.needle().len(), |w| f.find(w))
    }

    /// The first `"\n"` at or after `from`.
    pub fn find_nl(&mut self, from: usize) -> Option<usize> {
        self.find_with(from, usize::MAX, 1, |w| memchr::memchr(b'\n', w))
    }

    /// Whether the input holds `needle` at `at`.
    pub fn starts_with(&mut self, at: usize, needle: &[u8]) -> bool {
        match at.checked_add(needle.len()) {
            Some(e) if e <= self.len => {
                needle.is_empty() || self.view(at, e, needle.len()) == Some(needle)
            }
            _ => false,
        }
    }

    /// The bytes `from..to`, copied out of windows.
    pub fn get(&mut self, from: usize, to: usize) -> Cow<'a, [u8]> {
        let to = to.min(self.len);
        let mut out = Vec::new();
        let mut at = from;
        while at < to {
            let Some(v) = self.view(at, to, 1) else {
                break;
            };
            out.extend_from_slice(v);
            at += v.len();
        }
        Cow::Owned(out)
    }

    /// How many `"\n"` `from..to` holds.
    pub fn count_nl(&mut self, from: usize, to: usize) -> u64 {
        let to = to.min(self.len);
        let mut n = 0;
        let mut at = from;
        while at < to {
            let Some(v) = self.view(at, to, 1) else {
                break;
            };
            n += memchr::memchr_iter(b'\n', v).count() as u64;
            at += v.len();
        }
        n
    }

    /// [`show`] for the bytes `from..to`, reading at most what it shows.
    pub fn show(&mut self, from: usize, to: usize) -> String {
        let cut = self.get(from, to.min(from.saturating_add(SHOW_MAX)));
        show_cut(&cut, to.saturating_sub(from))
    }

    /// The error for a window that could not be had, `base` being the
    /// absolute offset of the input.
    pub fn failure(&self, base: u64) -> Option<Error> {
        self.failed.map(|at| {
            Error::other(format!(
                "cannot read the input at offset {}",
                base.saturating_add(at)
            ))
        })
    }
}

/// How much of an ID (or line) a message shows.
const SHOW_MAX: usize = 200;

/// An ID (or line) for a message: escaped, at most 200 bytes of it.
pub fn show(id: &[u8]) -> String {
    show_cut(&id[..id.len().min(SHOW_MAX)], id.len())
}

/// [`show`] for the first bytes `cut` of an ID of `len` bytes.
fn show_cut(cut: &[u8], len: usize) -> String {
    let mut s = String::from_utf8_lossy(cut).escape_debug().to_string();
    if len > SHOW_MAX {
        s.push_str(&format!("... ({len} bytes)"));
    }
    s
}

/// An entry a reader found, its ID copied out of a window. `offset` is
/// relative to the input, `id_pos` absolute.
pub struct Item<'a> {
    /// The ID bytes.
    pub id: Cow<'a, [u8]>,
    /// Where the payload starts, relative to the input.
    pub offset: u64,
    /// The payload's length.
    pub size: u64,
    /// Absolute offset of the START marker's leading `"\n"`.
    pub record_pos: u64,
    /// Absolute offset of the ID.
    pub id_pos: u64,
}

impl Item<'_> {
    /// The entry with its ID copied.
    pub fn owned(self) -> TextEntry {
        TextEntry {
            id: self.id.into_owned(),
            offset: self.offset,
            size: self.size,
            record_pos: self.record_pos,
            id_pos: self.id_pos,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windowed_search_overlaps_windows() {
        let mut d = vec![b'x'; 100];
        d.extend_from_slice(b"needle");
        d.extend_from_slice(&[b'\n'; 3]);
        let src = &d[..];
        let f = Finder::new(b"needle");
        for chunk in [1, 2, 5, 6, 7, 64, 1000] {
            let mut s = Scan::windows(&src, chunk);
            assert_eq!(s.find(&f, 0, usize::MAX), Some(100), "{chunk}");
            assert_eq!(s.find(&f, 0, 105), None, "{chunk}");
            assert_eq!(s.find(&f, 101, usize::MAX), None, "{chunk}");
            assert_eq!(s.find_nl(0), Some(106));
            assert_eq!(s.count_nl(0, 200), 3);
            assert!(s.starts_with(100, b"needle\n"));
            assert_eq!(s.get(98, 104), &b"xxneed"[..]);
            assert_eq!(s.failed, None);
        }
    }
}
