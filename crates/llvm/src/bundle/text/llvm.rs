//! The LLVM reader model of text bundles: LLVM's `TextFileHandler` step
//! by step ([`LlvmReader`]), and the walks of reading every bundle and of
//! `-list`.

use super::scan::{show, Item, Scan};
use super::{Markers, TextEntry};
use crate::bundle::binary::Entry;
use crate::error::Error;
use crate::profile::Release;
use crate::rules;
use crate::source::Source;
use std::borrow::Cow;

/// A START line as LLVM's `ReadBundleStart` returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start<'a> {
    /// The ID: every byte between the START marker and the next `"\n"` (a
    /// CR stays). Borrowed from a slice; a copy for a reader over a
    /// [`Source`].
    pub id: Cow<'a, [u8]>,
    /// Absolute offset of the START marker's leading `"\n"`.
    pub record_pos: u64,
    /// Absolute offset of the ID.
    pub id_pos: u64,
}

impl Start<'_> {
    /// The ID as text (lossy for non-UTF-8 bytes).
    pub fn id_str(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.id)
    }
}

/// LLVM's `TextFileHandler`, step by step: its one piece of state is the
/// read position `ReadChars` (`None` standing for `npos`).
///
/// The unbundling loop of every release is
///
/// ```text
/// while worklist not empty:
///     start = read_bundle_start()  or stop
///     if no requested target matches start.id: continue   // content NOT skipped
///     entry = read_bundle(start)?                          // ReadBundle + ReadBundleEnd
/// ```
///
/// A skipped bundle leaves the position right after its START line, so
/// START markers inside its content are read as bundles, and a bundle whose
/// END line is directly followed by a START line (no blank line) is seen
/// only when the bundle before it was skipped. Callers that reproduce an
/// unbundling must drive this reader the same way; [`llvm_entries`] is the
/// walk that reads every bundle.
///
/// The reader reads its [`Source`] window by window.
pub struct LlvmReader<'a> {
    scan: Scan<'a>,
    base: u64,
    release: Release,
    m: Markers,
    read_chars: Option<usize>,
}

impl std::fmt::Debug for LlvmReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlvmReader")
            .field("len", &self.scan.len)
            .field("base", &self.base)
            .field("release", &self.release)
            .field("read_chars", &self.read_chars)
            .finish()
    }
}

impl<'a> LlvmReader<'a> {
    /// A reader at the start of `src` (absolute offset `base`), reading it
    /// through windows of [`Source::window_size`] bytes: about one window
    /// of a mapped input is resident at a time. IDs are copied. A window
    /// that cannot be had ends the walk early; [`LlvmReader::failure`]
    /// tells.
    pub fn new(src: &'a dyn Source, base: u64, comment: &str, release: Release) -> Self {
        LlvmReader {
            scan: Scan::of(src),
            base,
            release,
            m: Markers::new(comment),
            read_chars: Some(0),
        }
    }

    /// The read position (`ReadChars`), `None` once it is `npos`.
    pub fn position(&self) -> Option<usize> {
        self.read_chars
    }

    /// The error for a window of the input that could not be read, if any:
    /// the walk so far is then not to be trusted.
    pub fn failure(&self) -> Option<Error> {
        self.scan.failure(self.base)
    }

    /// `ReadBundleStart`: find the next START marker from the read position,
    /// take the ID up to the next `"\n"` and move after it. `None` when there
    /// is no further START marker or its line has no `"\n"`.
    pub fn read_bundle_start(&mut self) -> Option<Start<'a>> {
        let from = self.read_chars?;
        let Some(p) = self.scan.find(&self.m.start_f, from, usize::MAX) else {
            self.read_chars = None;
            return None;
        };
        let id_start = p + self.m.start.len();
        let Some(id_end) = self.scan.find_nl(id_start) else {
            self.read_chars = None;
            return None;
        };
        self.read_chars = Some(id_end + 1);
        Some(Start {
            id: self.scan.get(id_start, id_end),
            record_pos: self.base + p as u64,
            id_pos: self.base + id_start as u64,
        })
    }

    /// Where `ReadBundle` would find the END marker, relative to the input.
    fn find_end(&mut self) -> Option<usize> {
        let from = self.read_chars?;
        self.scan.find(&self.m.end_f, from, usize::MAX)
    }

    /// `ReadBundleEnd` with the position at the END marker `e`: move past
    /// the END line (to `npos` when it has no `"\n"`).
    fn read_bundle_end(&mut self, e: usize) {
        self.read_chars = self.scan.find_nl(e + 1).map(|t| t + 1);
    }

    /// `ReadBundle` then `ReadBundleEnd` for the bundle whose START line was
    /// just read: the content runs from the read position to the next END
    /// marker, whatever ID that END line names. Where no END marker follows,
    /// LLVM copies memory past the end of the input; this returns an error
    /// citing TXT-7 instead. The entry's ID is the START line's.
    pub fn read_bundle<'s>(&mut self, start: &'s Start<'a>) -> Result<Entry<'s>, Error> {
        let (offset, size) = self.read_content(start)?;
        Ok(Entry {
            id: &start.id,
            offset,
            size,
            record_pos: start.record_pos,
            id_pos: start.id_pos,
        })
    }

    /// [`LlvmReader::read_bundle`]: the content's offset and size.
    fn read_content(&mut self, start: &Start<'_>) -> Result<(u64, u64), Error> {
        let Some(from) = self.read_chars else {
            return Err(Error::other(
                "read_bundle called without a START line (the read position is npos)",
            ));
        };
        let Some(e) = self.find_end() else {
            if let Some(f) = self.failure() {
                return Err(f);
            }
            let r = self.release;
            let how = if r.quirks().text_unterminated_aborts {
                "aborts (SIGABRT)"
            } else {
                "exits 1 ('IO failure on output stream: Bad address')"
            };
            return Err(Error::at(
                rules::TXT_7,
                start.record_pos + 1,
                format!(
                    "bundle '{}' has no END line: LLVM {r} writes memory past the end of the input into the output and {how}",
                    show(&start.id)
                ),
            ));
        };
        self.read_bundle_end(e);
        Ok((from as u64, (e - from) as u64))
    }

    /// Every bundle, read in file order ([`llvm_entries`]).
    fn entries(&mut self) -> Result<Vec<Item<'a>>, Error> {
        let mut out = Vec::new();
        while let Some(s) = self.read_bundle_start() {
            let (offset, size) = self.read_content(&s)?;
            out.push(Item {
                id: s.id,
                offset,
                size,
                record_pos: s.record_pos,
                id_pos: s.id_pos,
            });
        }
        self.failure().map_or(Ok(out), Err)
    }

    /// The START lines `-list` prints ([`llvm_list`]).
    fn list(&mut self) -> Result<Vec<Start<'a>>, Error> {
        let release = self.release;
        let mut starts = Vec::new();
        let mut wrapped = false;
        while let Some(s) = self.read_bundle_start() {
            match self.find_end() {
                Some(e) => self.read_bundle_end(e),
                None => {
                    if let Some(f) = self.failure() {
                        return Err(f);
                    }
                    if wrapped {
                        let first = self.scan.find_nl(0).map_or(0, |p| p + 1);
                        let printed = starts.len() + 1;
                        return Err(Error::at(
                            rules::TXT_7,
                            s.record_pos + 1,
                            format!(
                                "bundle '{}' has no END line: LLVM {release} -list prints {printed} IDs, then restarts after the first \"\\n\" (offset {first}) and prints IDs forever",
                                show(&s.id)
                            ),
                        ));
                    }
                    wrapped = true;
                    // `FC.find("\n", npos + 1)`: the search starts at 0.
                    self.read_chars = self.scan.find_nl(0).map(|p| p + 1);
                }
            }
            starts.push(s);
        }
        self.failure().map_or(Ok(starts), Err)
    }
}

/// What LLVM's `TextFileHandler` yields when every bundle is read, in file
/// order: the order unbundling walks them (with duplicate IDs, the first
/// one read wins a target). LLVM's quirks are kept: a bundle whose START
/// marker has no `"\n"` in front (at offset 0, or right after an END line)
/// is not seen, the END line's ID is not checked, the content ends at the
/// first END marker, a CR before the `"\n"` stays in the ID, and text
/// between bundles is ignored.
///
/// A bundle without an END line is an error (TXT-7): LLVM copies memory past
/// the end of the input when it unbundles it. That happens only if the
/// bundle is requested; [`LlvmReader`] reproduces unbundlings exactly.
pub fn llvm_entries(
    src: &dyn Source,
    base: u64,
    comment: &str,
    release: Release,
) -> Result<Vec<TextEntry>, Error> {
    let items = LlvmReader::new(src, base, comment, release).entries()?;
    Ok(items.into_iter().map(Item::owned).collect())
}

/// The IDs `clang-offload-bundler -list` prints for `src`, in order (one
/// line each; lossy text for non-UTF-8 bytes, as a terminal shows them).
///
/// `-list` walks like [`llvm_entries`], except for a bundle without an END
/// line: there LLVM's END search returns `npos`, `ReadBundleEnd` searches
/// for `"\n"` from `npos + 1`, which wraps to 0, and the walk restarts right
/// after the first `"\n"` of the input. If that second pass ends normally,
/// LLVM exits 0 having printed both passes (returned here); if it meets a
/// bundle without an END line again, LLVM prints forever, and this returns
/// an error citing TXT-7.
pub fn llvm_list(
    src: &dyn Source,
    base: u64,
    comment: &str,
    release: Release,
) -> Result<Vec<String>, Error> {
    let mut r = LlvmReader::new(src, base, comment, release);
    Ok(r.list()?.iter().map(|s| s.id_str().into_owned()).collect())
}
