//! Text bundles (`-type=i|ii|cui|hipi|d|ll|s`): strict reader, LLVM reader
//! model, writer. Spec chapter: `spec/text-bundle.md` (rules `TXT-*`).
//!
//! A text bundle is a sequence of bundles, each written as
//!
//! ```text
//! "\n" C " __CLANG_OFFLOAD_BUNDLE____START__ " ID "\n"
//! <content, verbatim>
//! "\n" C " __CLANG_OFFLOAD_BUNDLE____END__ " ID "\n"
//! ```
//!
//! where `C` is the comment string of the file type ([`comment`]). The `"\n"`
//! in front of each marker belongs to the marker, so the content is kept
//! byte for byte.
//!
//! Three readers share the marker definitions:
//! - [`parse_strict`] follows the spec and reports every violation with its
//!   absolute offset, line number and rule;
//! - [`LlvmReader`] is a step-by-step model of LLVM's `TextFileHandler`
//!   (`ReadBundleStart`, `ReadBundle`, `ReadBundleEnd`), for callers that
//!   reproduce an unbundling, where which bundles are read depends on the
//!   requested targets;
//! - [`llvm_entries`] and [`llvm_list`] run that model the way reading every
//!   bundle and `-list` do.
//!
//! Every reader works on a borrowed slice, searched in place with
//! `memchr::memmem`, or on a [`Source`] read through windows of a bounded
//! size (`*_source`, [`LlvmReader::from_source`]): the CLI scans a multi-GB
//! mapped input with about one window of it resident. Both modes run the
//! same reader code over the same primitives (`Scan`), so they yield the
//! same entries, messages, offsets and line numbers.

use crate::bundle::binary::Entry;
use crate::error::Error;
use crate::id::BundleEntryId;
use crate::profile::Release;
use crate::rules::{self, Rule};
use crate::source::{Source, Window};
use memchr::memmem::Finder;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};

/// The magic string inside every marker line.
pub const MAGIC: &str = "__CLANG_OFFLOAD_BUNDLE__";

/// What follows the magic in a START line, up to the ID.
const START_TAG: &str = "__START__ ";
/// What follows the magic in an END line, up to the ID.
const END_TAG: &str = "__END__ ";

/// The text file types and their comment strings (TXT-1). `hipi` exists in
/// LLVM 16 and later only; callers that reproduce a release check that.
pub const FILE_TYPES: &[(&str, &str)] = &[
    ("i", "//"),
    ("ii", "//"),
    ("cui", "//"),
    ("hipi", "//"),
    ("d", "#"),
    ("ll", ";"),
    ("s", "#"),
];

/// The comment string LLVM uses for a text file type (TXT-1): `//` for
/// `i`, `ii`, `cui`, `hipi`; `#` for `d`, `s`; `;` for `ll`. `None` for a
/// type that is not a text type.
pub fn comment(file_type: &str) -> Option<&'static str> {
    FILE_TYPES
        .iter()
        .find(|(t, _)| *t == file_type)
        .map(|(_, c)| *c)
}

/// The START marker `"\n" C " __CLANG_OFFLOAD_BUNDLE____START__ "` (TXT-4).
pub fn start_marker(comment: &str) -> Vec<u8> {
    format!("\n{comment} {MAGIC}{START_TAG}").into_bytes()
}

/// The END marker `"\n" C " __CLANG_OFFLOAD_BUNDLE____END__ "` (TXT-8).
pub fn end_marker(comment: &str) -> Vec<u8> {
    format!("\n{comment} {MAGIC}{END_TAG}").into_bytes()
}

/// The markers of one comment string, with their searchers.
struct Markers {
    start: Vec<u8>,
    end: Vec<u8>,
    /// `"\n" C " " MAGIC "__"`: what START and END markers share.
    prefix_len: usize,
    start_f: Finder<'static>,
    end_f: Finder<'static>,
    prefix_f: Finder<'static>,
}

impl Markers {
    fn new(comment: &str) -> Markers {
        let start = start_marker(comment);
        let end = end_marker(comment);
        let prefix = format!("\n{comment} {MAGIC}__").into_bytes();
        Markers {
            start_f: Finder::new(&start).into_owned(),
            end_f: Finder::new(&end).into_owned(),
            prefix_f: Finder::new(&prefix).into_owned(),
            prefix_len: prefix.len(),
            start,
            end,
        }
    }

    /// The START marker without its leading `"\n"`: a START line's text.
    fn start_line(&self) -> &[u8] {
        &self.start[1..]
    }
}

// ---------------------------------------------------------------------------
// Scanning: a slice in place, or a Source window by window
// ---------------------------------------------------------------------------

/// The window size of the readers over a [`Source`] (`*_source`,
/// [`LlvmReader::from_source`]): a mapped input is read 16 MiB at a time,
/// so scanning a multi-GB text bundle keeps about that much of it resident.
pub const WINDOW: u64 = 16 << 20;

/// The input of a reader and the few operations the readers need on it:
/// searches, short reads and newline counts over ranges of offsets. A
/// slice is searched in place. A [`Source`] is read through windows of at
/// most `chunk` bytes (of a needle's length when that is longer), one held
/// at a time and released as the scan moves on; a search that goes on into
/// the next window looks back only the needle's length minus one.
struct Scan<'a> {
    src: Src<'a>,
    len: usize,
    /// The offset of the first window that could not be had.
    failed: Option<u64>,
}

enum Src<'a> {
    Slice(&'a [u8]),
    Windows {
        src: &'a dyn Source,
        chunk: usize,
        /// The window held, with its offset.
        cur: Option<(usize, Window<'a>)>,
    },
}

impl<'a> Scan<'a> {
    fn slice(data: &'a [u8]) -> Scan<'a> {
        Scan {
            src: Src::Slice(data),
            len: data.len(),
            failed: None,
        }
    }

    fn windows(src: &'a dyn Source, chunk: u64) -> Scan<'a> {
        Scan {
            len: src.bytes().len(),
            src: Src::Windows {
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
        let (ws, w): (usize, &[u8]) = match &mut self.src {
            Src::Slice(d) => (0, d),
            Src::Windows { src, chunk, cur } => {
                let held = cur.as_ref().is_some_and(|(ws, w)| {
                    let we = ws + w.len();
                    *ws <= at && (we >= to || we >= at + min)
                });
                if !held {
                    // Release the old window before taking the next one.
                    *cur = None;
                    let n = (to - at).min((*chunk).max(min));
                    match src.window(at as u64, n as u64) {
                        Some(w) if w.len() == n => *cur = Some((at, w)),
                        _ => {
                            self.failed.get_or_insert(at as u64);
                            return None;
                        }
                    }
                }
                let (ws, w) = cur.as_ref()?;
                (*ws, w)
            }
        };
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
    fn find(&mut self, f: &Finder<'_>, from: usize, to: usize) -> Option<usize> {
        self.find_with(from, to, f.needle().len(), |w| f.find(w))
    }

    /// The first `"\n"` at or after `from`.
    fn find_nl(&mut self, from: usize) -> Option<usize> {
        self.find_with(from, usize::MAX, 1, |w| memchr::memchr(b'\n', w))
    }

    /// Whether the input holds `needle` at `at`.
    fn starts_with(&mut self, at: usize, needle: &[u8]) -> bool {
        match at.checked_add(needle.len()) {
            Some(e) if e <= self.len => {
                needle.is_empty() || self.view(at, e, needle.len()) == Some(needle)
            }
            _ => false,
        }
    }

    /// The bytes `from..to`: borrowed from a slice, copied out of windows.
    fn get(&mut self, from: usize, to: usize) -> Cow<'a, [u8]> {
        let to = to.min(self.len);
        if let Src::Slice(d) = &self.src {
            let d: &'a [u8] = d;
            return Cow::Borrowed(d.get(from..to).unwrap_or_default());
        }
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
    fn count_nl(&mut self, from: usize, to: usize) -> u64 {
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
    fn show(&mut self, from: usize, to: usize) -> String {
        let cut = self.get(from, to.min(from.saturating_add(SHOW_MAX)));
        show_cut(&cut, to.saturating_sub(from))
    }

    /// The error for a window that could not be had, `base` being the
    /// absolute offset of the input.
    fn failure(&self, base: u64) -> Option<Error> {
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
fn show(id: &[u8]) -> String {
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

/// An entry a reader found: its ID borrowed from a slice or copied out of
/// a window. `offset` is relative to the input, `id_pos` absolute.
struct Item<'a> {
    id: Cow<'a, [u8]>,
    offset: u64,
    size: u64,
    record_pos: u64,
    id_pos: u64,
}

/// The ID at absolute offset `id_pos` of `data` (absolute offset `base`).
fn id_in(data: &[u8], base: u64, id_pos: u64, len: usize) -> &[u8] {
    let s = usize::try_from(id_pos.saturating_sub(base)).unwrap_or(usize::MAX);
    data.get(s..s.saturating_add(len)).unwrap_or_default()
}

impl<'a> Item<'a> {
    /// The entry, its ID borrowed from `data`, the input the item was read from.
    fn borrowed(&self, data: &'a [u8], base: u64) -> Entry<'a> {
        Entry {
            id: id_in(data, base, self.id_pos, self.id.len()),
            offset: self.offset,
            size: self.size,
            record_pos: self.record_pos,
            id_pos: self.id_pos,
        }
    }

    fn owned(self) -> SourceEntry {
        SourceEntry {
            id: self.id.into_owned(),
            offset: self.offset,
            size: self.size,
            record_pos: self.record_pos,
            id_pos: self.id_pos,
        }
    }
}

/// An entry read from a [`Source`] (`*_source`): an [`Entry`] whose ID is
/// a copy, the input not being in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceEntry {
    /// The entry ID bytes as stored.
    pub id: Vec<u8>,
    /// Content offset, relative to the input.
    pub offset: u64,
    /// Content size.
    pub size: u64,
    /// Absolute offset of the START marker's leading `"\n"`.
    pub record_pos: u64,
    /// Absolute offset of the ID.
    pub id_pos: u64,
}

impl SourceEntry {
    /// The entry, borrowing its ID.
    pub fn entry(&self) -> Entry<'_> {
        Entry {
            id: &self.id,
            offset: self.offset,
            size: self.size,
            record_pos: self.record_pos,
            id_pos: self.id_pos,
        }
    }

    /// The ID as text (lossy for non-UTF-8 bytes).
    pub fn id_str(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.id)
    }
}

// ---------------------------------------------------------------------------
// Writer (TXT-2)
// ---------------------------------------------------------------------------

/// Write a START line: `"\n" C " __CLANG_OFFLOAD_BUNDLE____START__ " ID "\n"`.
pub fn write_start<W: Write>(w: &mut W, id: &[u8], comment: &str) -> io::Result<()> {
    w.write_all(&start_marker(comment))?;
    w.write_all(id)?;
    w.write_all(b"\n")
}

/// Write an END line: `"\n" C " __CLANG_OFFLOAD_BUNDLE____END__ " ID "\n"`.
pub fn write_end<W: Write>(w: &mut W, id: &[u8], comment: &str) -> io::Result<()> {
    w.write_all(&end_marker(comment))?;
    w.write_all(id)?;
    w.write_all(b"\n")
}

/// Write a text bundle of `(id, content)` entries, in order, exactly as LLVM
/// 14–22 write it (TXT-2). Nothing is checked: [`check_entries`] tells
/// whether the result will pass the strict reader.
pub fn write<W: Write>(w: &mut W, entries: &[(&[u8], &[u8])], comment: &str) -> io::Result<()> {
    for (id, content) in entries {
        write_start(w, id, comment)?;
        w.write_all(content)?;
        write_end(w, id, comment)?;
    }
    Ok(())
}

/// The size [`write()`] produces for these entries.
pub fn written_size(entries: &[(&[u8], &[u8])], comment: &str) -> u64 {
    let fixed = (start_marker(comment).len() + end_marker(comment).len() + 2) as u64;
    entries.iter().fold(0u64, |acc, (id, c)| {
        acc.saturating_add(fixed)
            .saturating_add(2 * id.len() as u64)
            .saturating_add(c.len() as u64)
    })
}

/// Build a text bundle in memory (see [`write()`]).
pub fn write_to_vec(entries: &[(&[u8], &[u8])], comment: &str) -> Vec<u8> {
    let cap = usize::try_from(written_size(entries, comment)).unwrap_or(0);
    let mut out = Vec::with_capacity(cap);
    write(&mut out, entries, comment).expect("writing to a Vec cannot fail");
    out
}

/// Check entries before writing them: the bundle [`write()`] makes of them
/// passes [`parse_strict`] exactly when this returns `Ok`. Errors carry the
/// rule but no offset (the bundle does not exist yet); the message names
/// the entry and, for contents, the position inside the content.
pub fn check_entries(entries: &[(&[u8], &[u8])], comment: &str) -> Result<(), Vec<Error>> {
    let m = Markers::new(comment);
    let mut errs = Vec::new();
    if entries.is_empty() {
        errs.push(Error::rule(
            rules::TXT_3,
            "no entries: a text bundle holds at least one bundle",
        ));
    }
    let mut seen: HashMap<&[u8], usize> = HashMap::new();
    for (i, (id, content)) in entries.iter().enumerate() {
        if let Some(p) = memchr::memchr(b'\n', id) {
            errs.push(Error::rule(
                rules::TXT_4,
                format!(
                    "entry {i}: the ID '{}' contains a \"\\n\" at character {p}, which would end the START line early",
                    show(id)
                ),
            ));
        }
        for (rule, pos, msg) in id_violations(id, "") {
            errs.push(Error::rule(
                rule,
                format!("entry {i}: {msg} (character {pos} of the ID)"),
            ));
        }
        if let Some(j) = seen.insert(id, i) {
            seen.insert(id, j);
            errs.push(Error::rule(
                rules::TXT_12,
                format!("entry {i} repeats the ID '{}' of entry {j}", show(id)),
            ));
        }
        if let Some(p) = m.start_f.find(content) {
            errs.push(Error::rule(
                rules::TXT_9,
                format!(
                    "entry {i} '{}': the content holds a START marker at byte {p}, which LLVM reads as a bundle when it skips this entry",
                    show(id)
                ),
            ));
        }
        if let Some(p) = m.end_f.find(content) {
            errs.push(Error::rule(
                rules::TXT_10,
                format!(
                    "entry {i} '{}': the content holds an END marker at byte {p}; every reader, LLVM 14-22 included, ends the content there",
                    show(id)
                ),
            ));
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs)
    }
}

/// ID checks shared by the strict reader and [`check_entries`]: CR (TXT-6),
/// empty (TXT-5), then the bundle-ID rules. Returns (rule, position inside
/// `id`, message). `what` prefixes messages ("START line: ").
fn id_violations(id: &[u8], what: &str) -> Vec<(Rule, usize, String)> {
    let mut out = Vec::new();
    let mut text = id;
    if let Some(stripped) = id.strip_suffix(b"\r") {
        out.push((
            rules::TXT_6,
            id.len() - 1,
            format!(
                "{what}the ID '{}' ends with a CR (a CRLF line end): LLVM keeps the CR in the ID",
                show(id)
            ),
        ));
        text = stripped;
    }
    if text.is_empty() {
        out.push((rules::TXT_5, 0, format!("{what}the entry ID is empty")));
        return out;
    }
    match std::str::from_utf8(text) {
        Ok(t) => {
            if let Err(es) = BundleEntryId::parse_strict(t) {
                out.extend(
                    es.into_iter()
                        .map(|ie| (ie.rule, ie.pos, format!("{what}{}", ie.message))),
                );
            }
        }
        Err(u) => out.push((
            rules::ID_1,
            u.valid_up_to(),
            format!("{what}the entry ID '{}' is not ASCII text", show(text)),
        )),
    }
    out
}

// ---------------------------------------------------------------------------
// Strict reader
// ---------------------------------------------------------------------------

/// A text bundle that passed the strict reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextBundle<'a> {
    /// The bundle's bytes.
    pub data: &'a [u8],
    /// Absolute offset of `data[0]`.
    pub base: u64,
    /// Entries in file order (TXT-13). `offset`/`size` give the content
    /// range relative to `data`; `record_pos` is the absolute offset of the
    /// START marker's leading `"\n"`; `id_pos` the absolute offset of the ID.
    pub entries: Vec<Entry<'a>>,
}

impl<'a> TextBundle<'a> {
    /// The content of entry `i`.
    pub fn content(&self, i: usize) -> Option<&'a [u8]> {
        self.entries.get(i)?.payload(self.data)
    }

    /// Find an entry by exact ID.
    pub fn find(&self, id: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.id == id.as_bytes())
    }
}

/// Line numbers of offsets, counted incrementally in either direction.
struct Lines {
    pos: usize,
    line: u64,
}

impl Lines {
    /// The 1-based line holding byte `off` (the line of a `"\n"` is the line it ends).
    fn of(&mut self, scan: &mut Scan<'_>, off: usize) -> u64 {
        let off = off.min(scan.len);
        if off >= self.pos {
            self.line += scan.count_nl(self.pos, off);
        } else {
            self.line = self.line.saturating_sub(scan.count_nl(off, self.pos));
        }
        self.pos = off;
        self.line
    }
}

struct Strict<'a> {
    scan: Scan<'a>,
    base: u64,
    m: Markers,
    lines: Lines,
    errs: Vec<Error>,
    entries: Vec<Item<'a>>,
    /// ID → (bundle index, position of its START line, its line number
    /// once a message needed it: many repeats of an ID then do not count
    /// lines back to it each time).
    seen: HashMap<Cow<'a, [u8]>, (usize, usize, Option<u64>)>,
    starts: usize,
}

impl<'a> Strict<'a> {
    fn line(&mut self, off: usize) -> u64 {
        self.lines.of(&mut self.scan, off)
    }

    fn err(&mut self, rule: Rule, at: usize, message: String) {
        let line = self.line(at);
        self.errs.push(Error::at(
            rule,
            self.base + at as u64,
            format!("line {line}: {message}"),
        ));
    }

    /// Find the first START line; its position (the comment's first byte).
    fn first(&mut self) -> Option<usize> {
        if self.scan.starts_with(0, &self.m.start) {
            return Some(1);
        }
        if self.scan.starts_with(0, self.m.start_line()) {
            self.err(
                rules::TXT_3,
                0,
                "the file starts with the START line itself, not with the \"\\n\" in front of it: LLVM 14-22 search for \"\\n\" + START marker and never see this bundle".into(),
            );
            return Some(0);
        }
        match self.scan.find(&self.m.start_f, 0, usize::MAX) {
            Some(q) => {
                let l = self.line(q + 1);
                self.err(
                    rules::TXT_3,
                    0,
                    format!(
                        "{q} bytes of other text before the first START line (line {l}): LLVM ignores them"
                    ),
                );
                Some(q + 1)
            }
            None => {
                let msg = if self.scan.len == 0 {
                    "the input is empty: a text bundle holds at least one bundle".to_string()
                } else {
                    format!(
                        "no START line (\"\\n\" + \"{}\") in the input: not a text bundle",
                        show(self.m.start_line())
                    )
                };
                self.err(rules::TXT_3, 0, msg);
                None
            }
        }
    }

    /// Check an ID found on a marker line at `pos`.
    fn check_id(&mut self, id: &[u8], pos: usize, start_line: bool) {
        let what = if start_line {
            "START line: "
        } else {
            "END line: "
        };
        for (rule, p, msg) in id_violations(id, what) {
            // END lines are only checked for CR; their ID must equal the START's (TXT-8).
            if start_line || rule == rules::TXT_6 {
                self.err(rule, pos + p, msg);
            }
        }
    }

    /// Read the bundle whose START line begins at `lp`; returns where the
    /// next START line begins, if reading goes on.
    fn bundle(&mut self, lp: usize) -> Option<usize> {
        let len = self.scan.len;
        let index = self.starts;
        self.starts += 1;
        let id_start = lp + self.m.start_line().len();
        let Some(id_end) = self.scan.find_nl(id_start) else {
            let line = self.scan.show(lp, len);
            self.err(
                rules::TXT_4,
                len,
                format!(
                    "the START line '{line}' has no \"\\n\" after its ID: LLVM 14-22 see no bundle here"
                ),
            );
            return None;
        };
        let id = self.scan.get(id_start, id_end);
        self.check_id(&id, id_start, true);
        if let Some(&(j, jp, known)) = self.seen.get(&*id) {
            let l = match known {
                Some(l) => l,
                None => {
                    let l = self.line(jp);
                    self.seen.insert(id.clone(), (j, jp, Some(l)));
                    l
                }
            };
            self.err(
                rules::TXT_12,
                id_start,
                format!(
                    "bundle {index} repeats the ID '{}' of bundle {j} (line {l}): LLVM -list prints both, unbundling takes the first",
                    show(&id)
                ),
            );
        } else {
            self.seen.insert(id.clone(), (index, lp, None));
        }
        let cs = id_end + 1;
        // One pass over the content for both markers (a marker holds one
        // "\n", its first byte: matches never overlap).
        let mut nested = Vec::new();
        let mut end = None;
        let mut at = cs;
        while let Some(h) = self.scan.find(&self.m.prefix_f, at, usize::MAX) {
            let after = h + self.m.prefix_len;
            if self.scan.starts_with(after, b"START__ ") {
                nested.push(h);
            } else if self.scan.starts_with(after, b"END__ ") {
                end = Some(h);
                break;
            }
            at = h + 1;
        }
        let Some(e) = end else {
            if let Some(&n) = nested.first() {
                let nl = self.line(n + 1);
                self.err(
                    rules::TXT_7,
                    lp,
                    format!(
                        "bundle '{}' has no END line before the next START line (line {nl})",
                        show(&id)
                    ),
                );
                return Some(n + 1);
            }
            self.err(
                rules::TXT_7,
                lp,
                format!(
                    "bundle '{}' has no END line: LLVM 14-22 copy memory past the end of the input when they unbundle it, and -list can loop forever",
                    show(&id)
                ),
            );
            return None;
        };
        let eid_start = e + self.m.end.len();
        let eid_end = self.scan.find_nl(eid_start);
        let eid = self.scan.get(eid_start, eid_end.unwrap_or(len));
        // After the END line: the next START line (clean), the end of the
        // file (clean), or something else.
        let next = eid_end.map(|t| t + 1);
        let clean_follow = match next {
            None => true,
            Some(n) => n == len || self.scan.starts_with(n, &self.m.start),
        };
        // The next START marker after the END line (its "\n" may be the END
        // line's own), and this bundle's own END line before it, if the
        // first END line is not a clean close: then the content held an END
        // marker (TXT-10).
        let mut q = None;
        let mut own = None;
        if let Some(n) = next {
            if eid != id || !clean_follow {
                q = self.scan.find(&self.m.start_f, n - 1, usize::MAX);
                let region_end = q.unwrap_or(len);
                let mut at = n - 1;
                while let Some(h) = self.scan.find(&self.m.end_f, at, region_end) {
                    let s = h + self.m.end.len();
                    let t = self.scan.find_nl(s);
                    let te = t.unwrap_or(len);
                    if te - s == id.len() && self.scan.get(s, te) == id {
                        own = Some((h, t));
                    }
                    at = h + 1;
                }
            }
        }
        if !nested.is_empty() && eid != id && own.is_none() {
            let nl = self.line(nested[0] + 1);
            self.err(
                rules::TXT_7,
                lp,
                format!(
                    "bundle '{}' has no END line before the next START line (line {nl})",
                    show(&id)
                ),
            );
            return Some(nested[0] + 1);
        }
        let last = own.map_or(e, |(e2, _)| e2) + 1;
        if !nested.is_empty() {
            // Line numbers only when a message needs them.
            let (start_line, last_line) = (self.line(lp), self.line(last));
            self.nested_starts(&nested, &id, start_line, last_line);
        }
        self.check_id(&eid, eid_start, false);
        let mut next = match own {
            Some((_, t2)) => {
                let (end_line, last_line) = (self.line(e + 1), self.line(last));
                self.err(
                    rules::TXT_10,
                    e + 1,
                    format!(
                        "the content of bundle '{}' holds an END line (naming '{}'); the bundle's own END line is line {last_line}: every reader, LLVM 14-22 included, ends the content at line {end_line}",
                        show(&id),
                        show(&eid)
                    ),
                );
                t2.map(|t| t + 1)
            }
            None => {
                if eid != id {
                    self.end_mismatch(eid_start, &eid, &id, lp);
                }
                next
            }
        };
        self.entries.push(Item {
            id,
            offset: cs as u64,
            size: (e - cs) as u64,
            record_pos: self.base + lp.saturating_sub(1) as u64,
            id_pos: self.base + id_start as u64,
        });
        let Some(n) = next.take() else {
            self.err(
                rules::TXT_8,
                len,
                "the END line has no \"\\n\" after its ID".into(),
            );
            return None;
        };
        if n == len {
            return None;
        }
        if self.scan.starts_with(n, &self.m.start) {
            return Some(n + 1);
        }
        // Not clean: `q` was computed above (the next START after the first
        // END line, which is also the next one after the own END line).
        let prev_end = self.line(n - 1);
        match q {
            Some(q) if q + 1 == n => {
                self.err(
                    rules::TXT_11,
                    n,
                    format!(
                        "this START line follows the END line (line {prev_end}) with no blank line between them: LLVM 14-22 miss this bundle after reading the one before it"
                    ),
                );
                Some(n)
            }
            Some(q) => {
                let l = self.line(q + 1);
                self.err(
                    rules::TXT_11,
                    n,
                    format!(
                        "{} bytes of other text between the END line (line {prev_end}) and the next START line (line {l}): LLVM ignores them",
                        q - n
                    ),
                );
                Some(q + 1)
            }
            None => {
                self.err(
                    rules::TXT_11,
                    n,
                    format!(
                        "{} bytes of other text after the last END line (line {prev_end}): LLVM ignores them",
                        len - n
                    ),
                );
                None
            }
        }
    }

    fn nested_starts(&mut self, nested: &[usize], id: &[u8], start_line: u64, last_line: u64) {
        for &n in nested {
            self.err(
                rules::TXT_9,
                n + 1,
                format!(
                    "a START line inside the content of bundle '{}' (lines {start_line}-{last_line}): LLVM's -list and the unbundling of '{}' read it as content, the unbundling of any other target reads it as a bundle",
                    show(id),
                    show(id)
                ),
            );
        }
    }

    fn end_mismatch(&mut self, eid_start: usize, eid: &[u8], id: &[u8], lp: usize) {
        let start_line = self.line(lp);
        self.err(
            rules::TXT_8,
            eid_start,
            format!(
                "the END line names '{}' but the bundle started as '{}' (line {start_line}): LLVM 14-22 do not check the END ID",
                show(eid),
                show(id)
            ),
        );
    }
}

/// The strict reader over `scan`, whose first byte is at absolute offset
/// `base`.
fn strict<'a>(scan: Scan<'a>, base: u64, comment: &str) -> Result<Vec<Item<'a>>, Vec<Error>> {
    let mut s = Strict {
        scan,
        base,
        m: Markers::new(comment),
        lines: Lines { pos: 0, line: 1 },
        errs: Vec::new(),
        entries: Vec::new(),
        seen: HashMap::new(),
        starts: 0,
    };
    let mut next = s.first();
    while let Some(lp) = next {
        next = s.bundle(lp);
    }
    if let Some(e) = s.scan.failure(base) {
        return Err(vec![e]);
    }
    if s.errs.is_empty() {
        Ok(s.entries)
    } else {
        let mut errs = s.errs;
        errs.sort_by_key(|e| e.offset());
        Err(errs)
    }
}

/// Strict reader (spec chapter `text-bundle.md`): the text bundle that
/// starts at `data[0]`, `base` being the absolute offset of `data[0]`.
/// Every violation found is returned, sorted by offset, each with its
/// absolute offset, its line number (in the message) and its rule.
pub fn parse_strict<'a>(
    data: &'a [u8],
    base: u64,
    comment: &str,
) -> Result<TextBundle<'a>, Vec<Error>> {
    let items = strict(Scan::slice(data), base, comment)?;
    Ok(TextBundle {
        data,
        base,
        entries: items.iter().map(|i| i.borrowed(data, base)).collect(),
    })
}

/// [`parse_strict`] over a [`Source`] read through windows of `chunk`
/// bytes ([`WINDOW`]), `base` being the absolute offset of its first byte:
/// the same entries and errors, with a resident set of about one window
/// whatever the size of the input. A window that cannot be had is an error.
pub fn parse_strict_source(
    src: &dyn Source,
    base: u64,
    comment: &str,
    chunk: u64,
) -> Result<Vec<SourceEntry>, Vec<Error>> {
    let items = strict(Scan::windows(src, chunk), base, comment)?;
    Ok(items.into_iter().map(Item::owned).collect())
}

/// Whether `data` starts like a text bundle for `comment`: with the START
/// marker `"\n" C " __CLANG_OFFLOAD_BUNDLE____START__ "` (TXT-3, TXT-4).
/// LLVM itself looks for bundles anywhere in the input ([`llvm_entries`]).
pub fn is_text_bundle(data: &[u8], comment: &str) -> bool {
    data.starts_with(&start_marker(comment))
}

// ---------------------------------------------------------------------------
// LLVM reader model
// ---------------------------------------------------------------------------

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
/// The reader works on a slice ([`LlvmReader::new`]) or on a [`Source`]
/// read window by window ([`LlvmReader::from_source`]).
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
    /// A reader at the start of `data` (absolute offset `base`).
    pub fn new(data: &'a [u8], base: u64, comment: &str, release: Release) -> Self {
        Self::over(Scan::slice(data), base, comment, release)
    }

    /// A reader at the start of `src` (absolute offset `base`), reading it
    /// through windows of `chunk` bytes ([`WINDOW`]): about one window of
    /// a mapped input is resident at a time. IDs are copied. A window that
    /// cannot be had ends the walk early; [`LlvmReader::failure`] tells.
    pub fn from_source(
        src: &'a dyn Source,
        base: u64,
        comment: &str,
        release: Release,
        chunk: u64,
    ) -> Self {
        Self::over(Scan::windows(src, chunk), base, comment, release)
    }

    fn over(scan: Scan<'a>, base: u64, comment: &str, release: Release) -> Self {
        LlvmReader {
            scan,
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
            let how = if r == Release::L14 {
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

    /// The START lines `-list` prints ([`llvm_list_raw`]).
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
pub fn llvm_entries<'a>(
    data: &'a [u8],
    base: u64,
    comment: &str,
    release: Release,
) -> Result<Vec<Entry<'a>>, Error> {
    let items = LlvmReader::new(data, base, comment, release).entries()?;
    Ok(items.iter().map(|i| i.borrowed(data, base)).collect())
}

/// [`llvm_entries`] over a [`Source`] read through windows of `chunk`
/// bytes ([`WINDOW`]). A window that cannot be had is an error.
pub fn llvm_entries_source(
    src: &dyn Source,
    base: u64,
    comment: &str,
    release: Release,
    chunk: u64,
) -> Result<Vec<SourceEntry>, Error> {
    let items = LlvmReader::from_source(src, base, comment, release, chunk).entries()?;
    Ok(items.into_iter().map(Item::owned).collect())
}

/// The IDs `clang-offload-bundler -list` prints for `data`, as bytes, in
/// order (one line each).
///
/// `-list` walks like [`llvm_entries`], except for a bundle without an END
/// line: there LLVM's END search returns `npos`, `ReadBundleEnd` searches
/// for `"\n"` from `npos + 1`, which wraps to 0, and the walk restarts right
/// after the first `"\n"` of the input. If that second pass ends normally,
/// LLVM exits 0 having printed both passes (returned here); if it meets a
/// bundle without an END line again, LLVM prints forever, and this returns
/// an error citing TXT-7.
pub fn llvm_list_raw<'a>(
    data: &'a [u8],
    base: u64,
    comment: &str,
    release: Release,
) -> Result<Vec<&'a [u8]>, Error> {
    let starts = LlvmReader::new(data, base, comment, release).list()?;
    Ok(starts
        .iter()
        .map(|s| id_in(data, base, s.id_pos, s.id.len()))
        .collect())
}

/// [`llvm_list_raw`] as text (lossy for non-UTF-8 bytes).
pub fn llvm_list(
    data: &[u8],
    base: u64,
    comment: &str,
    release: Release,
) -> Result<Vec<String>, Error> {
    list_text(LlvmReader::new(data, base, comment, release))
}

/// [`llvm_list`] over a [`Source`] read through windows of `chunk` bytes
/// ([`WINDOW`]). A window that cannot be had is an error.
pub fn llvm_list_source(
    src: &dyn Source,
    base: u64,
    comment: &str,
    release: Release,
    chunk: u64,
) -> Result<Vec<String>, Error> {
    list_text(LlvmReader::from_source(src, base, comment, release, chunk))
}

fn list_text(mut r: LlvmReader<'_>) -> Result<Vec<String>, Error> {
    Ok(r.list()?.iter().map(|s| s.id_str().into_owned()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_both_ways() {
        let d = b"a\nb\n\nc";
        for mut scan in [Scan::slice(d), Scan::windows(&&d[..], 2)] {
            let mut l = Lines { pos: 0, line: 1 };
            assert_eq!(l.of(&mut scan, 5), 4);
            assert_eq!(l.of(&mut scan, 0), 1);
            assert_eq!(l.of(&mut scan, 2), 2);
            assert_eq!(l.of(&mut scan, 1), 1);
            assert_eq!(l.of(&mut scan, 100), 4);
        }
    }

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

    #[test]
    fn markers_share_the_prefix() {
        let m = Markers::new("#");
        assert!(m.start.starts_with(&m.end[..m.prefix_len]));
        assert_eq!(&m.start[m.prefix_len..], b"START__ ");
        assert_eq!(&m.end[m.prefix_len..], b"END__ ");
    }
}
