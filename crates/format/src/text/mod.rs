//! Text bundles (`-type=i|ii|cui|hipi|d|ll|s`): strict reader and writer;
//! the LLVM reader model is `offload_kit::bundle::text`'s. Spec chapter: `spec/text-bundle.md` (rules `TXT-*`).
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
//! - `LlvmReader` (offload-kit) is a step-by-step model of LLVM's `TextFileHandler`
//!   (`ReadBundleStart`, `ReadBundle`, `ReadBundleEnd`), for callers that
//!   reproduce an unbundling, where which bundles are read depends on the
//!   requested targets;
//! - `llvm_entries` and `llvm_list` (offload-kit) run that model the way reading every
//!   bundle and `-list` do.
//!
//! Every reader works on a [`Source`] read through windows of a bounded
//! size ([`Source::window_size`], searched with `memchr::memmem`): the CLI
//! scans a multi-GB mapped input with about one window of it resident, and
//! a slice is a source whose windows are borrowed. Entries carry a copy of
//! their ID ([`TextEntry`]); the results do not depend on the window size.
//!
//! This module holds the markers and the entry type of the readers; the
//! rest lives in `scan` (the input of a reader, window by window), `write`
//! (the writer, TXT-2) and `read` (the strict reader); offload-kit's
//! `llvm` is the LLVM reader model.
//!
//! [`Source`]: crate::source::Source
//! [`Source::window_size`]: crate::source::Source::window_size
//!
//! # Example
//!
//! An LLVM IR (`-type=ll`) bundle written, read back, and cut short.
//!
//! ```
//! use offload_kit_format::text;
//!
//! let c = text::comment("ll").unwrap();
//! assert_eq!(c, ";");
//! let ir = b"define void @f() { ret void }";
//! let bytes = text::write_to_vec(&[(b"hip-amdgcn-amd-amdhsa--gfx906", ir)], c);
//! assert!(bytes.starts_with(b"\n; __CLANG_OFFLOAD_BUNDLE____START__ hip-amdgcn-amd-amdhsa--gfx906\n"));
//! let bundle = text::parse_strict(&bytes, 0, c).unwrap();
//! assert_eq!(bundle.find("hip-amdgcn-amd-amdhsa--gfx906"), Some(0));
//! assert_eq!(bundle.content(&bytes, 0), Some(&ir[..]));
//!
//! // Without its END line the START line is never closed (TXT-7).
//! let cut = &bytes[..bytes.len() - text::end_marker(c).len() - 30];
//! let errs = text::parse_strict(&cut, 0, c).unwrap_err();
//! assert_eq!(errs[0].rule_id(), Some("TXT-7"));
//! ```

use crate::binary::EntryOf;
use memchr::memmem::Finder;

mod read;
pub mod scan;
mod write;

pub use read::{parse_strict, TextBundle};
pub use write::{check_entries, write, write_end, write_start, write_to_vec, written_size};

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

/// Whether `data` starts like a text bundle for `comment`: with the START
/// marker `"\n" C " __CLANG_OFFLOAD_BUNDLE____START__ "` (TXT-3, TXT-4).
/// LLVM itself looks for bundles anywhere in the input
/// (`offload_kit::bundle::text::llvm_entries`).
pub fn is_text_bundle(data: &[u8], comment: &str) -> bool {
    data.starts_with(&start_marker(comment))
}

/// The markers of one comment string, with their searchers.
pub struct Markers {
    /// The START marker ([`start_marker`]).
    pub start: Vec<u8>,
    /// The END marker ([`end_marker`]).
    pub end: Vec<u8>,
    /// `"\n" C " " MAGIC "__"`: what START and END markers share.
    pub prefix_len: usize,
    /// The searcher for [`Markers::start`].
    pub start_f: Finder<'static>,
    /// The searcher for [`Markers::end`].
    pub end_f: Finder<'static>,
    /// The searcher for the shared prefix.
    pub prefix_f: Finder<'static>,
}

impl Markers {
    /// The markers of `comment` (`//`, `#`, `;`).
    pub fn new(comment: &str) -> Markers {
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
    pub fn start_line(&self) -> &[u8] {
        &self.start[1..]
    }
}

/// An entry the text readers found: an [`EntryOf`] whose ID is a copy (the
/// readers walk the input window by window, not holding it in memory).
/// `offset` is relative to the bundle; `record_pos` is the absolute offset
/// of the START marker's leading `"\n"`.
pub type TextEntry = EntryOf<Vec<u8>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_share_the_prefix() {
        let m = Markers::new("#");
        assert!(m.start.starts_with(&m.end[..m.prefix_len]));
        assert_eq!(&m.start[m.prefix_len..], b"START__ ");
        assert_eq!(&m.end[m.prefix_len..], b"END__ ");
    }
}
