//! The writer of text bundles (TXT-2), and the check that tells whether
//! what it writes passes the strict reader.

use super::read::id_violations;
use super::scan::show;
use super::{end_marker, start_marker, Markers};
use crate::error::{Error, Errors};
use crate::rules;
use std::collections::HashMap;
use std::io::{self, Write};

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
///
/// [`parse_strict`]: super::parse_strict
pub fn check_entries(entries: &[(&[u8], &[u8])], comment: &str) -> Result<(), Errors> {
    let m = Markers::new(comment);
    let mut errs = Vec::new();
    if entries.is_empty() {
        errs.push(Error::rule(
            rules::TXT_3,
            "no entries: a text bundle holds at least one bundle",
        ));
    }
    // A marker inside the content: what each reader then makes of it.
    let markers = [
        (
            &m.start_f,
            rules::TXT_9,
            "a START marker",
            ", which LLVM reads as a bundle when it skips this entry",
        ),
        (
            &m.end_f,
            rules::TXT_10,
            "an END marker",
            "; every reader, LLVM 14-22 included, ends the content there",
        ),
    ];
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
        for (marker, rule, what, effect) in markers {
            if let Some(p) = marker.find(content) {
                errs.push(Error::rule(
                    rule,
                    format!(
                        "entry {i} '{}': the content holds {what} at byte {p}{effect}",
                        show(id)
                    ),
                ));
            }
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs.into())
    }
}
