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
    if let Some(e) = id_length_wraps(data, base, scan.stop.as_ref(), release) {
        return LlvmView::Crash(e);
    }
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

/// An ID length that wraps the bound check (`ReadChars + IDSize` past
/// 2^64, any record, the first included): the check passes and the ID is
/// hashed from memory LLVM does not own. Every release 13-22 dies of
/// SIGSEGV (found by tools/fuzz-eval on clang's OffloadBundler.cpp; main's
/// check is the same).
fn id_length_wraps(data: &[u8], base: u64, stop: Option<&Stop>, release: Release) -> Option<Error> {
    let Some(&Stop::Truncated { at, index }) = stop else {
        return None;
    };
    let field = at - base;
    let id_len = record_offset(data, field)?;
    (field + 8).checked_add(id_len).is_none().then(|| {
        Error::at(
            rules::BIN_2,
            at,
            format!(
                "record {index}'s ID length wraps LLVM {release}'s bound check (position + length past 2^64): it reads the ID from memory it does not own and dies of SIGSEGV"
            ),
        )
    })
}

/// The `offset` field of the record at relative position `pos`.
fn record_offset(data: &[u8], pos: u64) -> Option<u64> {
    let pos = usize::try_from(pos).ok()?;
    let b = data.get(pos..pos.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

/// Model of LLVM main's `FileHandler::listBundleIDs` with the binary
/// handler (spec/binary-bundle.md, BIN-10, *LLVM main*): the IDs printed
/// for `data`, in order. From the start of the buffer, and again from each
/// bundle magic found at its 26th byte or later, `ReadHeader` adds the
/// records of the bundle there to one `StringMap` that is never cleared,
/// and a header read to its end restarts the iteration at the map's first
/// entry, so every ID in the map is printed, in its order: from the second
/// bundle on, the earlier bundles' IDs are printed again (with no record
/// of its own, a bundle prints only them). A header that stops after some
/// records leaves the iteration where it was: at the end of the map (the
/// bundle prints nothing) unless the records it added made the map grow,
/// which leaves LLVM's iterator dangling, and always in the first bundle,
/// where it was never set (crashes, as in the releases: errors here).
/// What the loop prints grows with the square of the bundles, so it is
/// bounded by the memory budget (CLI-6).
///
/// ```
/// use offload_kit_llvm::bundle::binary::{llvm_main_list, write_to_vec};
/// use offload_kit_llvm::budget::Budget;
///
/// let one = write_to_vec(&[(b"host-x86_64-unknown-linux-gnu-".as_slice(), b"x".as_slice())], 1).unwrap();
/// let two = [one.clone(), one].concat();
/// // main prints the ID once per bundle found; 22 prints it once.
/// assert_eq!(llvm_main_list(&two, 0, Budget::default()).unwrap().len(), 2);
/// ```
pub fn llvm_main_list(
    data: &[u8],
    base: u64,
    budget: crate::budget::Budget,
) -> Result<Vec<String>, Error> {
    let magic = memchr::memmem::Finder::new(crate::format::bundle::MAGIC);
    let budget = budget.bytes();
    // The map's distinct keys in insertion order (and their index), and its
    // iteration order, computed again only when a bundle that prints finds
    // new keys.
    let mut keys: Vec<String> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut order: Vec<usize> = Vec::new();
    let mut ordered = 0usize;
    let mut printed = Vec::new();
    // Each line costs its bytes and a `String` (pointer, length, capacity
    // and the allocation's rounding).
    let mut printed_bytes = 0u64;
    let mut pos = 0usize;
    loop {
        let buf = &data[pos..];
        let at = base + pos as u64;
        if let Some(scan) = scan(buf, at) {
            let before = keys.len();
            for e in &scan.entries {
                let id = e.id_str();
                if !index.contains_key(id.as_ref()) {
                    index.insert(id.to_string(), keys.len());
                    keys.push(id.into_owned());
                }
            }
            if let Some(e) = id_length_wraps(buf, at, scan.stop.as_ref(), Release::Main) {
                return Err(e);
            }
            match (&scan.stop, pos) {
                // A header read to its end: the whole map again.
                (None, _) => {
                    if ordered != keys.len() {
                        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
                        order = Release::Main
                            .stringmap_order(&refs)
                            .into_iter()
                            .map(|k| index[k])
                            .collect();
                        ordered = keys.len();
                    }
                    for &k in &order {
                        printed_bytes += keys[k].len() as u64 + 1 + 48;
                        if printed_bytes > budget {
                            return Err(Error::at(
                                rules::CLI_6,
                                at,
                                format!("LLVM main prints every ID again for each bundle found: more than offload-kit's memory budget of {budget} bytes"),
                            ));
                        }
                        printed.push(keys[k].clone());
                    }
                }
                // The first bundle stops after some records: the releases' crash.
                (Some(_), 0) if !scan.entries.is_empty() => {
                    if let LlvmView::Crash(e) = llvm_read(buf, at, Release::Main) {
                        return Err(e);
                    }
                }
                (Some(_), _) if stringmap_buckets(keys.len()) != stringmap_buckets(before) => {
                    return Err(Error::at(
                        rules::BIN_2,
                        at,
                        format!(
                            "the bundle here stops after {} valid records, which make LLVM main's StringMap grow: its iterator is left dangling (undefined behaviour)",
                            scan.entries.len()
                        ),
                    ));
                }
                // Otherwise the iterator stays at the end: nothing printed.
                (Some(_), _) => {}
            }
        }
        // `find(OFFLOAD_BUNDLER_MAGIC_STR, sizeof(OFFLOAD_BUNDLER_MAGIC_STR))`:
        // from the 26th byte (the 24 bytes and a NUL).
        match buf.get(25..).and_then(|b| magic.find(b)) {
            Some(n) => pos += n + 25,
            None => return Ok(printed),
        }
    }
}

/// The buckets of an LLVM `StringMap` holding `n` keys: 16, doubled each
/// time an insertion makes it more than 3/4 full.
fn stringmap_buckets(n: usize) -> usize {
    let mut buckets = 16;
    while n * 4 > buckets * 3 {
        buckets *= 2;
    }
    buckets
}
