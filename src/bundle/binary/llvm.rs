//! The LLVM reader model of binary bundles: what `ReadHeader` of each
//! release sees ([`LlvmView`]), crashes included.

use super::{scan, Entry, Stop};
use crate::error::Error;
use crate::profile::Release;
use crate::rules;
use crate::source::Source;

/// What an LLVM release's `BinaryFileHandler::ReadHeader` makes of a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlvmView<'a> {
    /// Not a bundle, or the first record was bad: LLVM sees no bundles.
    NoBundles,
    /// Entries in `StringMap` iteration order, duplicates resolved (last wins).
    Entries(Vec<Entry<'a>>),
    /// LLVM would crash or disclose memory here; offload-kit reports instead.
    Crash(Error),
}

/// Model of LLVM's lenient header reader for `release`, over the bundle at
/// the start of `src` (a [`Prefix`] for a compressed bundle decoded only as
/// far as its header, see [`crate::bundle::ccob::llvm_list_prefix`]):
/// payload ranges are checked against [`Source::len`].
///
/// [`Prefix`]: crate::source::Prefix
pub fn llvm_read<S: Source + ?Sized>(src: &S, base: u64, release: Release) -> LlvmView<'_> {
    let data = src.bytes();
    let Some(scan) = scan(src, base) else {
        return LlvmView::NoBundles;
    };
    if scan.stop.is_some() && !scan.entries.is_empty() {
        let at = match scan.stop {
            Some(Stop::Truncated { at, .. }) | Some(Stop::BadRange { at, .. }) => at,
            None => unreachable!(),
        };
        let rule = match scan.stop {
            Some(Stop::Truncated { .. }) => rules::BIN_2,
            Some(Stop::BadRange { at, .. }) if record_offset(data, at - base) == Some(0) => {
                rules::BIN_6
            }
            _ => rules::BIN_5,
        };
        return LlvmView::Crash(Error::at(
            rule,
            at,
            format!(
                "malformed bundle header after {} valid entries: LLVM {release} stops reading here and then dies of SIGSEGV (uninitialised iterator)",
                scan.entries.len()
            ),
        ));
    }
    if scan.entries.is_empty() {
        return LlvmView::NoBundles;
    }
    // StringMap: one slot per distinct ID, the last record wins.
    let ids: Vec<&str> = scan
        .entries
        .iter()
        .map(|e| std::str::from_utf8(e.id).unwrap_or("\u{fffd}"))
        .collect();
    let order = release.stringmap_order(&ids);
    let mut last: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(ids.len());
    for (i, k) in ids.iter().enumerate() {
        last.insert(k, i);
    }
    let out = order.into_iter().map(|k| scan.entries[last[k]]).collect();
    LlvmView::Entries(out)
}

/// The `offset` field of the record at relative position `pos`.
fn record_offset(data: &[u8], pos: u64) -> Option<u64> {
    let pos = usize::try_from(pos).ok()?;
    let b = data.get(pos..pos.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}
