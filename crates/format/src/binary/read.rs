//! The strict reader of binary bundles (spec chapter `binary-bundle.md`):
//! every violation found, each with its absolute offset and rule.

use super::{is_binary_bundle, scan, Entry, Scan, Stop};
use crate::error::{Error, Errors, Result};
use crate::id::{BundleEntryId, Verdict};
use crate::limits::Budget;
use crate::raw::bundle::{RawRecord, HEADER_SIZE, MAGIC, RECORD_FIXED_SIZE};
use crate::rules;
use binrw::BinRead;
use std::io::Cursor;

/// Entry counts up to which a repeated ID (BIN-8) is found by scanning.
const SCANNED: usize = 8;

/// A binary bundle that passed the strict reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryBundle<'a> {
    /// The bundle's bytes (from its magic to the end of the input).
    pub data: &'a [u8],
    /// Absolute offset of `data[0]`.
    pub base: u64,
    /// Entries in header order (BIN-12).
    pub entries: Vec<Entry<'a>>,
    /// Relative end of the header.
    pub header_end: u64,
    /// Relative end of the bundle: the furthest payload end or the header end.
    pub extent: u64,
}

impl<'a> BinaryBundle<'a> {
    /// The payload of entry `i`.
    pub fn payload(&self, i: usize) -> &'a [u8] {
        self.entries[i]
            .payload(self.data)
            .expect("strict reader checked ranges")
    }

    /// Find an entry by exact ID.
    pub fn find(&self, id: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.id == id.as_bytes())
    }
}

/// How a strict read treats bytes after the last payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// The bundle is the whole input: trailing bytes violate BIN-10.
    Standalone,
    /// The bundle is followed by other data (a section holding several
    /// bundles): the bundle ends at its furthest payload.
    Embedded,
}

/// Strict reader (spec chapter `binary-bundle.md`): every violation found is
/// returned, each with its absolute offset and rule. The listed entries are
/// held only within `budget` (CLI-6).
pub fn parse_strict_within(
    data: &[u8],
    base: u64,
    extent: Extent,
    budget: Budget,
) -> Result<BinaryBundle<'_>, Errors> {
    if !is_binary_bundle(data) {
        let n = data.len().min(MAGIC.len());
        let at = data[..n]
            .iter()
            .zip(MAGIC.iter())
            .position(|(a, b)| a != b)
            .unwrap_or(n) as u64;
        return Err(vec![Error::at(
            rules::BIN_1,
            base + at,
            "no binary bundle magic \"__CLANG_OFFLOAD_BUNDLE__\"",
        )]
        .into());
    }
    let Some(scan) = scan(data, base) else {
        return Err(vec![Error::at(
            rules::BIN_2,
            base + MAGIC.len() as u64,
            format!(
                "the entry count field needs 8 bytes, {} remain",
                data.len() - MAGIC.len()
            ),
        )]
        .into());
    };
    let len = data.len() as u64;
    // Records are cheap to scan, dear to hold as listed entries and errors.
    budget
        .hold_entries(scan.entries.len(), base + MAGIC.len() as u64)
        .map_err(|e| vec![e])?;
    let mut errs = Vec::new();
    if scan.num_entries == 0 {
        errs.push(Error::at(
            rules::BIN_3,
            base + MAGIC.len() as u64,
            "the bundle has zero entries",
        ));
    }
    match scan.stop {
        Some(Stop::Truncated { at, index }) => errs.push(Error::at(
            rules::BIN_2,
            at,
            format!(
                "entry record {index} of {} runs past the end of the bundle ({len} bytes)",
                scan.num_entries
            ),
        )),
        Some(Stop::BadRange { .. }) | None => {}
    }
    // Re-read records past a BadRange stop: the strict reader reports them all.
    let mut entries = scan.entries.clone();
    if let Some(Stop::BadRange { index, .. }) = scan.stop {
        records_past_stop(data, base, &scan, index, &mut entries, &mut errs);
    }
    let header_end = entries
        .last()
        .map_or(HEADER_SIZE, |e| e.id_pos - base + e.id.len() as u64);
    entry_violations(&entries, base, header_end, len, &mut errs);
    let extent_end = layout_violations(data, base, &entries, header_end, extent, &mut errs);
    if !errs.is_empty() {
        errs.sort_by_key(|e| e.offset());
        return Err(errs.into());
    }
    Ok(BinaryBundle {
        data,
        base,
        entries,
        header_end,
        extent: extent_end,
    })
}

/// The records after a scan stopped at an entry whose payload lies outside
/// the bundle (`index`): the strict reader reads and reports them all, up
/// to the first record or ID that runs past the end.
fn records_past_stop<'a>(
    data: &'a [u8],
    base: u64,
    scan: &Scan<'a>,
    index: u64,
    entries: &mut Vec<Entry<'a>>,
    errs: &mut Vec<Error>,
) {
    let len = data.len() as u64;
    let mut pos = (scan
        .entries
        .last()
        .map_or(HEADER_SIZE, |e| e.id_pos - base + e.id.len() as u64)) as usize;
    for i in index..scan.num_entries {
        let Ok(rec) = RawRecord::read(&mut Cursor::new(&data[pos..])) else {
            errs.push(Error::at(
                rules::BIN_2,
                base + pos as u64,
                format!(
                    "entry record {i} of {} runs past the end of the bundle",
                    scan.num_entries
                ),
            ));
            break;
        };
        let id_pos = pos as u64 + RECORD_FIXED_SIZE;
        if rec.id_len > len - id_pos {
            errs.push(Error::at(
                rules::BIN_2,
                base + id_pos - 8,
                format!(
                    "entry record {i}: ID length {} runs past the end of the bundle",
                    rec.id_len
                ),
            ));
            break;
        }
        entries.push(Entry {
            id: &data[id_pos as usize..(id_pos + rec.id_len) as usize],
            offset: rec.offset,
            size: rec.size,
            record_pos: base + pos as u64,
            id_pos: base + id_pos,
        });
        pos = (id_pos + rec.id_len) as usize;
    }
}

/// Each entry on its own (its ID, ID-1..ID-n and BIN-13; its payload's
/// range, BIN-5/BIN-6; a repeated ID, BIN-8) and the entries together
/// (COMPOSE-1).
fn entry_violations(
    entries: &[Entry<'_>],
    base: u64,
    header_end: u64,
    len: u64,
    errs: &mut Vec<Error>,
) {
    let mut hosts = 0;
    let mut verdicts: Vec<(usize, Verdict)> = Vec::with_capacity(entries.len());
    // The first entry of each ID, for BIN-8 in one pass (a map only where
    // a scan would cost more).
    let scan = entries.len() <= SCANNED;
    let mut first_with_id: std::collections::HashMap<&[u8], usize> =
        std::collections::HashMap::new();
    if !scan {
        first_with_id.reserve(entries.len());
        for (i, e) in entries.iter().enumerate() {
            first_with_id.entry(e.id).or_insert(i);
        }
    }
    let first_with = |id: &[u8], i: usize| match scan {
        true => entries[..i].iter().position(|e| e.id == id).unwrap_or(i),
        false => first_with_id[id],
    };
    for (i, e) in entries.iter().enumerate() {
        match std::str::from_utf8(e.id) {
            Ok(text) => {
                let v = BundleEntryId::verdict(text);
                match &*v {
                    Ok(id) => {
                        if id.kind == "host" {
                            hosts += 1;
                            if hosts == 2 {
                                errs.push(Error::at(
                                    rules::BIN_13,
                                    e.record_pos,
                                    format!("entry {i} '{}' is a second host entry", e.id_str()),
                                ));
                            }
                        }
                    }
                    Err(es) => errs.extend(es.iter().map(|ie| {
                        Error::at(
                            ie.rule,
                            e.id_pos + ie.pos as u64,
                            format!("entry {i}: {}", ie.message),
                        )
                    })),
                }
                if v.is_ok() {
                    verdicts.push((i, v));
                }
            }
            Err(u) => errs.push(Error::at(
                rules::ID_1,
                e.id_pos + u.valid_up_to() as u64,
                format!("entry {i}: the ID is not ASCII text"),
            )),
        }
        let end = e.offset.checked_add(e.size);
        match end {
            Some(end) if end <= len => {
                if e.offset < header_end && e.size > 0 {
                    errs.push(Error::at(
                        rules::BIN_6,
                        e.record_pos,
                        format!(
                            "entry {i} '{}': payload at 0x{:x} overlaps the header, which ends at 0x{:x}",
                            e.id_str(),
                            base + e.offset,
                            base + header_end
                        ),
                    ));
                } else if e.offset < header_end {
                    errs.push(Error::at(
                        rules::BIN_6,
                        e.record_pos,
                        format!(
                            "entry {i} '{}': empty payload placed at 0x{:x}, inside the header (ends at 0x{:x})",
                            e.id_str(),
                            base + e.offset,
                            base + header_end
                        ),
                    ));
                }
            }
            _ => errs.push(Error::at(
                rules::BIN_5,
                e.record_pos,
                format!(
                    "entry {i} '{}': payload [0x{:x}, +0x{:x}) lies outside the bundle of {len} bytes",
                    e.id_str(),
                    e.offset,
                    e.size
                ),
            )),
        }
        let j = first_with(e.id, i);
        if j != i {
            errs.push(Error::at(
                rules::BIN_8,
                e.id_pos,
                format!("entry {i} repeats the ID '{}' of entry {j}", e.id_str()),
            ));
        }
    }
    let parsed: Vec<(usize, &BundleEntryId)> = verdicts
        .iter()
        .filter_map(|(i, v)| v.as_ref().as_ref().ok().map(|id| (*i, id)))
        .collect();
    errs.extend(composition_violations(entries, &parsed));
}

/// Where the payloads lie: overlaps (BIN-7), non-zero padding (BIN-9) and,
/// for a standalone bundle, bytes after the last payload (BIN-10). Returns
/// where the bundle ends.
fn layout_violations(
    data: &[u8],
    base: u64,
    entries: &[Entry<'_>],
    header_end: u64,
    extent: Extent,
    errs: &mut Vec<Error>,
) -> u64 {
    let len = data.len() as u64;
    // Overlaps and padding: walk the in-range payloads sorted by offset.
    let mut spans: Vec<(u64, u64, usize)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.size > 0 && e.offset >= header_end)
        .filter_map(|(i, e)| {
            let end = e.offset.checked_add(e.size)?;
            (end <= len).then_some((e.offset, end, i))
        })
        .collect();
    spans.sort();
    let mut cur = header_end;
    // Sweep: each payload that starts before the furthest end seen so far
    // overlaps the payload that reaches furthest.
    let mut reach: Option<(u64, usize)> = None;
    for &(start, end, i) in &spans {
        if let Some((far, j)) = reach {
            if start < far {
                errs.push(Error::at(
                    rules::BIN_7,
                    entries[i].record_pos,
                    format!(
                        "payloads of entries {j} and {i} overlap at 0x{:x}",
                        base + start
                    ),
                ));
            }
        }
        if reach.is_none_or(|(far, _)| end > far) {
            reach = Some((end, i));
        }
    }
    if errs.is_empty() {
        for &(start, end, _) in &spans {
            if start > cur {
                if let Some(p) = data[cur as usize..start as usize]
                    .iter()
                    .position(|&b| b != 0)
                {
                    errs.push(Error::at(
                        rules::BIN_9,
                        base + cur + p as u64,
                        "non-zero byte in the padding before a payload",
                    ));
                }
            }
            cur = cur.max(end);
        }
    }
    let extent_end = entries
        .iter()
        .filter_map(|e| e.offset.checked_add(e.size))
        .filter(|&e| e <= len)
        .fold(header_end, u64::max);
    if extent == Extent::Standalone && extent_end < len && errs.is_empty() {
        errs.push(Error::at(
            rules::BIN_10,
            base + extent_end,
            format!(
                "{} bytes follow the last payload, which ends at 0x{:x}",
                len - extent_end,
                base + extent_end
            ),
        ));
    }
    extent_end
}

/// COMPOSE-1: among entries of one kind, triple and processor, a feature
/// left Any by one entry may not be set by another.
fn composition_violations(entries: &[Entry<'_>], parsed: &[(usize, &BundleEntryId)]) -> Vec<Error> {
    use std::collections::BTreeMap;
    let mut groups: BTreeMap<String, Vec<(usize, &crate::id::target_id::TargetId)>> =
        BTreeMap::new();
    // Only a processor named twice can compose badly: the canonical key
    // (costly to spell) is built for those entries alone.
    let mut per_processor: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::new();
    for (_, id) in parsed {
        if let Some(t) = &id.parsed_target_id {
            *per_processor.entry(t.processor.as_str()).or_default() += 1;
        }
    }
    for (i, id) in parsed {
        if let Some(t) = id
            .parsed_target_id
            .as_ref()
            .filter(|t| per_processor[t.processor.as_str()] > 1)
        {
            let canon = id.canonical();
            let key_end = canon.len() - id.target_id.len();
            let key = format!("{}{}", &canon[..key_end], t.processor);
            groups.entry(key).or_default().push((*i, t));
        }
    }
    // Each member is compared with the earliest member whose set of
    // feature names differs from its own (one error per member, linear in
    // the members for the few distinct sets a group has).
    let mut errs = Vec::new();
    for members in groups.values() {
        let mut firsts: Vec<(usize, std::collections::BTreeSet<&str>)> = Vec::new();
        for &(b, tb) in members {
            let names: std::collections::BTreeSet<&str> =
                tb.features.iter().map(|(n, _)| n.as_str()).collect();
            let earliest = firsts
                .iter()
                .filter(|(a, set)| *a < b && *set != names)
                .min_by_key(|(a, _)| *a);
            if let Some((a, set)) = earliest {
                let f = set
                    .iter()
                    .find(|k| !names.contains(*k))
                    .or_else(|| names.iter().find(|k| !set.contains(*k)))
                    .expect("the sets differ");
                errs.push(Error::at(
                    rules::COMPOSE_1,
                    entries[b].id_pos,
                    format!(
                        "entries {a} '{}' and {b} '{}' disagree on whether '{f}' is Any",
                        entries[*a].id_str(),
                        entries[b].id_str()
                    ),
                ));
            }
            if !firsts.iter().any(|(_, set)| *set == names) {
                firsts.push((b, names));
            }
        }
    }
    errs
}
