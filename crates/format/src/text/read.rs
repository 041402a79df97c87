//! The strict reader of text bundles (spec chapter `text-bundle.md`):
//! every violation found, with its absolute offset, line number and rule.

use super::scan::{show, Item, Scan};
use super::{Markers, TextEntry};
use crate::error::{Error, Errors};
use crate::id::BundleEntryId;
use crate::rules::{self, Rule};
use crate::source::Source;
use std::borrow::Cow;
use std::collections::HashMap;

/// A bundle's own END marker and, if its line ends, where.
type OwnEnd = (usize, Option<usize>);

/// ID checks shared by the strict reader and [`check_entries`]: CR (TXT-6),
/// empty (TXT-5), then the bundle-ID rules. Returns (rule, position inside
/// `id`, message). `what` prefixes messages ("START line: ").
///
/// [`check_entries`]: super::check_entries
pub(super) fn id_violations(id: &[u8], what: &str) -> Vec<(Rule, usize, String)> {
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
            if let Err(es) = &*BundleEntryId::verdict(t) {
                out.extend(
                    es.iter()
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

/// A text bundle that passed the strict reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextBundle {
    /// Absolute offset of the bundle's first byte.
    pub base: u64,
    /// Entries in file order (TXT-13). `offset`/`size` give the content
    /// range relative to the bundle; `record_pos` is the absolute offset of
    /// the START marker's leading `"\n"`; `id_pos` the absolute offset of
    /// the ID.
    pub entries: Vec<TextEntry>,
}

impl TextBundle {
    /// The content of entry `i` in `data`, the bundle's bytes.
    pub fn content<'d>(&self, data: &'d [u8], i: usize) -> Option<&'d [u8]> {
        self.entries.get(i)?.payload(data)
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
    /// No END marker lies at or after this offset (a search reached the
    /// end without one): later bundles look only for the next START, so
    /// START lines without END lines are read in linear time.
    no_end_from: Option<usize>,
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
        self.note_repeat(&id, id_start, index, lp);
        let cs = id_end + 1;
        let (nested, end) = self.markers_after(cs);
        let Some(e) = end else {
            if let Some(&n) = nested.first() {
                return self.unclosed_before(n, &id, lp);
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
        let (q, own) = match next {
            Some(n) if eid != id || !clean_follow => self.own_end(n, &id),
            _ => (None, None),
        };
        if !nested.is_empty() && eid != id && own.is_none() {
            return self.unclosed_before(nested[0], &id, lp);
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
        self.after_end(n, q)
    }

    /// TXT-12: bundle `index` (START line at `lp`, ID at `id_start`)
    /// repeats the ID of an earlier bundle; else its ID is remembered.
    // The Cow itself is kept as the key: borrowed from the input where it is.
    #[allow(clippy::ptr_arg)]
    fn note_repeat(&mut self, id: &Cow<'a, [u8]>, id_start: usize, index: usize, lp: usize) {
        if let Some(&(j, jp, known)) = self.seen.get(&**id) {
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
                    show(id)
                ),
            );
        } else {
            self.seen.insert(id.clone(), (index, lp, None));
        }
    }

    /// The START markers nested in the content that begins at `cs`, up to
    /// its first END marker, and that END marker (one pass for both: a
    /// marker holds one "\n", its first byte, so matches never overlap).
    fn markers_after(&mut self, cs: usize) -> (Vec<usize>, Option<usize>) {
        let mut nested = Vec::new();
        let mut end = None;
        let mut at = cs;
        let no_end = self.no_end_from.is_some_and(|p| cs >= p);
        while let Some(h) = self.scan.find(&self.m.prefix_f, at, usize::MAX) {
            let after = h + self.m.prefix_len;
            if self.scan.starts_with(after, b"START__ ") {
                nested.push(h);
                if no_end {
                    // Unclosed for certain: only the next START matters.
                    break;
                }
            } else if self.scan.starts_with(after, b"END__ ") {
                end = Some(h);
                break;
            }
            at = h + 1;
        }
        if end.is_none() && !no_end {
            self.no_end_from = Some(cs);
        }
        (nested, end)
    }

    /// When the first END line after bundle `id`'s content (the next line
    /// at `n`) is not a clean close: the next START marker after it (its
    /// "\n" may be the END line's own), and the bundle's own END line before
    /// that marker with where its line ends, if any (then the content held
    /// an END marker, TXT-10).
    fn own_end(&mut self, n: usize, id: &[u8]) -> (Option<usize>, Option<OwnEnd>) {
        let len = self.scan.len;
        let q = self.scan.find(&self.m.start_f, n - 1, usize::MAX);
        let region_end = q.unwrap_or(len);
        let mut own = None;
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
        (q, own)
    }

    /// TXT-11: what follows a bundle's END line (next line at `n`) when it
    /// is not the next START line or the end of the input; `q` is the next
    /// START marker after the END line. Returns where reading goes on.
    fn after_end(&mut self, n: usize, q: Option<usize>) -> Option<usize> {
        let len = self.scan.len;
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

    /// TXT-7: the bundle `id` whose START line begins at `lp` has no END
    /// line before the START marker at `n`; reading goes on at the START
    /// line that marker begins (its "\n" is the line before's).
    fn unclosed_before(&mut self, n: usize, id: &[u8], lp: usize) -> Option<usize> {
        let nl = self.line(n + 1);
        self.err(
            rules::TXT_7,
            lp,
            format!(
                "bundle '{}' has no END line before the next START line (line {nl})",
                show(id)
            ),
        );
        Some(n + 1)
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
fn strict<'a>(scan: Scan<'a>, base: u64, comment: &str) -> Result<Vec<Item<'a>>, Errors> {
    let mut s = Strict {
        scan,
        base,
        m: Markers::new(comment),
        lines: Lines { pos: 0, line: 1 },
        errs: Vec::new(),
        entries: Vec::new(),
        seen: HashMap::new(),
        starts: 0,
        no_end_from: None,
    };
    let mut next = s.first();
    while let Some(lp) = next {
        next = s.bundle(lp);
    }
    if let Some(e) = s.scan.failure(base) {
        return Err(vec![e].into());
    }
    if s.errs.is_empty() {
        Ok(s.entries)
    } else {
        let mut errs = s.errs;
        errs.sort_by_key(|e| e.offset());
        Err(errs.into())
    }
}

/// Strict reader (spec chapter `text-bundle.md`): the text bundle that
/// starts at the start of `src`, `base` being the absolute offset of that
/// byte. Every violation found is returned, sorted by offset, each with its
/// absolute offset, its line number (in the message) and its rule. The
/// input is read through windows of [`Source::window_size`] bytes, so the
/// resident set is about one window whatever its size; a window that cannot
/// be had is an error.
pub fn parse_strict(src: &dyn Source, base: u64, comment: &str) -> Result<TextBundle, Errors> {
    let items = strict(Scan::of(src), base, comment)?;
    Ok(TextBundle {
        base,
        entries: items.into_iter().map(Item::owned).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_both_ways() {
        let d = b"a\nb\n\nc";
        for mut scan in [Scan::windows(&&d[..], 100), Scan::windows(&&d[..], 2)] {
            let mut l = Lines { pos: 0, line: 1 };
            assert_eq!(l.of(&mut scan, 5), 4);
            assert_eq!(l.of(&mut scan, 0), 1);
            assert_eq!(l.of(&mut scan, 2), 2);
            assert_eq!(l.of(&mut scan, 1), 1);
            assert_eq!(l.of(&mut scan, 100), 4);
        }
    }
}
