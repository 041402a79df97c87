//! Binary bundles: strict reader, LLVM reader model, writer.
//!
//! Data flows bytes → [`BinaryBundle`] → bytes. The header scan
//! ([`scan`]) is shared: the strict reader ([`parse_strict`]) turns every
//! irregularity into an [`Error`] citing `spec/binary-bundle.md`; the LLVM
//! model ([`llvm_read`]) turns the same scan into what `ReadHeader` of a
//! given release would see, crashes included.

use crate::error::{Error, Result};
use crate::format::bundle::{RawHeader, RawRecord, HEADER_SIZE, MAGIC, RECORD_FIXED_SIZE};
use crate::id::BundleEntryId;
use crate::profile::Release;
use crate::rules;
use binrw::BinRead;
use std::borrow::Cow;
use std::io::{self, Cursor, Write};

/// One entry record of a binary bundle, with absolute positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The entry ID bytes as stored.
    pub id: &'a [u8],
    /// Payload offset, relative to the start of the bundle.
    pub offset: u64,
    /// Payload size.
    pub size: u64,
    /// Absolute offset of the record (its `offset` field).
    pub record_pos: u64,
    /// Absolute offset of the ID bytes.
    pub id_pos: u64,
}

impl<'a> Entry<'a> {
    /// The ID as text (lossy for non-UTF-8 bytes).
    pub fn id_str(&self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.id)
    }

    /// The payload slice within `bundle` (the bundle's own bytes), if in range.
    pub fn payload(&self, bundle: &'a [u8]) -> Option<&'a [u8]> {
        let end = self.offset.checked_add(self.size)?;
        bundle.get(usize::try_from(self.offset).ok()?..usize::try_from(end).ok()?)
    }
}

/// Why the header scan stopped before reading every record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// A field or ID runs past the end: absolute position of the field.
    Truncated {
        /// Absolute position of the incomplete field.
        at: u64,
        /// Index of the record being read.
        index: u64,
    },
    /// The record's offset is 0 or its range lies outside the data (LLVM's check).
    BadRange {
        /// Index of the record.
        index: u64,
        /// Absolute position of the record.
        at: u64,
    },
}

/// The result of scanning a header the way every LLVM release does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan<'a> {
    /// The count field.
    pub num_entries: u64,
    /// Records read, in header order.
    pub entries: Vec<Entry<'a>>,
    /// Records whose `offset + size` wraps past 2^64 (LLVM accepts them).
    pub wrapped: Vec<usize>,
    /// Why the scan stopped early, if it did.
    pub stop: Option<Stop>,
    /// Relative end of the last record read.
    pub header_end: u64,
}

/// Whether `data` starts with the binary-bundle magic (BIN-1).
pub fn is_binary_bundle(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}

/// Scan the header of the bundle that starts at `data[0]`; `base` is the
/// absolute offset of `data[0]` in the outermost input. Returns `None` when
/// the magic or count is missing. Never allocates from the count field.
pub fn scan(data: &[u8], base: u64) -> Option<Scan<'_>> {
    scan_prefix(data, data.len() as u64, base)
}

/// [`scan`] over the first bytes of a bundle whose full length is `total`
/// (a bundle being decompressed): records must lie in `data`, payload
/// ranges are checked against `total`.
pub fn scan_prefix(data: &[u8], total: u64, base: u64) -> Option<Scan<'_>> {
    let header = RawHeader::read(&mut Cursor::new(data)).ok()?;
    let len = data.len() as u64;
    let n = header.num_entries;
    let mut entries = Vec::with_capacity(n.min(len / RECORD_FIXED_SIZE) as usize);
    let mut wrapped = Vec::new();
    let mut pos = HEADER_SIZE;
    let mut stop = None;
    for index in 0..n {
        let rec_pos = pos;
        let mut cur = Cursor::new(&data[pos as usize..]);
        let Ok(rec) = RawRecord::read(&mut cur) else {
            stop = Some(Stop::Truncated {
                at: base + pos + (len - pos).min(RECORD_FIXED_SIZE) / 8 * 8,
                index,
            });
            break;
        };
        pos += RECORD_FIXED_SIZE;
        if rec.id_len > len - pos {
            stop = Some(Stop::Truncated {
                at: base + pos - 8,
                index,
            });
            break;
        }
        let id = &data[pos as usize..(pos + rec.id_len) as usize];
        let id_pos = pos;
        pos += rec.id_len;
        let end = rec.offset.wrapping_add(rec.size);
        if rec.offset == 0 || end > total {
            stop = Some(Stop::BadRange {
                index,
                at: base + rec_pos,
            });
            break;
        }
        if end < rec.offset {
            wrapped.push(entries.len());
        }
        entries.push(Entry {
            id,
            offset: rec.offset,
            size: rec.size,
            record_pos: base + rec_pos,
            id_pos: base + id_pos,
        });
    }
    Some(Scan {
        num_entries: n,
        entries,
        wrapped,
        stop,
        header_end: pos,
    })
}

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
/// returned, each with its absolute offset and rule.
pub fn parse_strict(
    data: &[u8],
    base: u64,
    extent: Extent,
) -> Result<BinaryBundle<'_>, Vec<Error>> {
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
        )]);
    }
    let Some(scan) = scan(data, base) else {
        return Err(vec![Error::at(
            rules::BIN_2,
            base + MAGIC.len() as u64,
            format!(
                "the entry count field needs 8 bytes, {} remain",
                data.len() - MAGIC.len()
            ),
        )]);
    };
    let len = data.len() as u64;
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
        let mut pos = (scan
            .entries
            .last()
            .map_or(HEADER_SIZE, |e| e.id_pos - base + e.id.len() as u64))
            as usize;
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
    let header_end = entries
        .last()
        .map_or(HEADER_SIZE, |e| e.id_pos - base + e.id.len() as u64);
    let mut hosts = 0;
    let mut parsed: Vec<(usize, BundleEntryId)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        match std::str::from_utf8(e.id) {
            Ok(text) => match BundleEntryId::parse_strict(text) {
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
                    parsed.push((i, id));
                }
                Err(es) => errs.extend(es.into_iter().map(|ie| {
                    Error::at(
                        ie.rule,
                        e.id_pos + ie.pos as u64,
                        format!("entry {i}: {}", ie.message),
                    )
                })),
            },
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
        if let Some(j) = entries[..i].iter().position(|p| p.id == e.id) {
            errs.push(Error::at(
                rules::BIN_8,
                e.id_pos,
                format!("entry {i} repeats the ID '{}' of entry {j}", e.id_str()),
            ));
        }
    }
    errs.extend(composition_violations(&entries, &parsed));
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
    if !errs.is_empty() {
        errs.sort_by_key(|e| e.offset());
        return Err(errs);
    }
    Ok(BinaryBundle {
        data,
        base,
        entries,
        header_end,
        extent: extent_end,
    })
}

/// The `offset` field of the record at relative position `pos`.
fn record_offset(data: &[u8], pos: u64) -> Option<u64> {
    let pos = usize::try_from(pos).ok()?;
    let b = data.get(pos..pos.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

/// COMPOSE-1: among entries of one kind, triple and processor, a feature
/// left Any by one entry may not be set by another.
fn composition_violations(entries: &[Entry<'_>], parsed: &[(usize, BundleEntryId)]) -> Vec<Error> {
    use std::collections::BTreeMap;
    let mut groups: BTreeMap<String, Vec<(usize, &crate::id::target_id::TargetId)>> =
        BTreeMap::new();
    for (i, id) in parsed {
        if let Some(t) = &id.parsed_target_id {
            let canon = id.canonical();
            let key_end = canon.len() - id.target_id.len();
            let key = format!("{}{}", &canon[..key_end], t.processor);
            groups.entry(key).or_default().push((*i, t));
        }
    }
    let mut errs = Vec::new();
    for members in groups.values() {
        for (a, ta) in members {
            for (b, tb) in members {
                if a >= b {
                    continue;
                }
                let fa = ta.feature_map();
                let fb = tb.feature_map();
                if let Some(f) = fa
                    .keys()
                    .find(|k| !fb.contains_key(*k))
                    .or_else(|| fb.keys().find(|k| !fa.contains_key(*k)))
                {
                    errs.push(Error::at(
                        rules::COMPOSE_1,
                        entries[*b].id_pos,
                        format!(
                            "entries {a} '{}' and {b} '{}' disagree on whether '{f}' is Any",
                            entries[*a].id_str(),
                            entries[*b].id_str()
                        ),
                    ));
                }
            }
        }
    }
    errs
}

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

/// Model of LLVM's lenient header reader for `release`.
pub fn llvm_read(data: &[u8], base: u64, release: Release) -> LlvmView<'_> {
    llvm_read_prefix(data, data.len() as u64, base, release)
}

/// [`llvm_read`] over the first bytes of a bundle of `total` bytes (a
/// compressed bundle decoded only as far as its header, see
/// [`crate::bundle::ccob::llvm_list_prefix`]). `data` must hold the whole
/// header; payload ranges are checked against `total`.
pub fn llvm_read_prefix(data: &[u8], total: u64, base: u64, release: Release) -> LlvmView<'_> {
    let Some(scan) = scan_prefix(data, total, base) else {
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
    let mut out = Vec::with_capacity(order.len());
    for k in order {
        let last = scan
            .entries
            .iter()
            .rev()
            .find(|e| std::str::from_utf8(e.id).unwrap_or("\u{fffd}") == k)
            .expect("key came from the entries");
        out.push(*last);
    }
    LlvmView::Entries(out)
}

/// The computed layout of a binary bundle to be written (BIN-11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The complete header bytes.
    pub header: Vec<u8>,
    /// Payload offsets, in entry order.
    pub offsets: Vec<u64>,
    /// Payload sizes, in entry order.
    pub sizes: Vec<u64>,
    /// Total size of the bundle.
    pub total: u64,
}

/// Compute the layout for entries `(id, payload size)` with alignment `align`.
pub fn layout(entries: &[(&[u8], u64)], align: u64) -> Result<Layout> {
    if align == 0 {
        return Err(Error::rule(
            rules::BIN_11,
            "bundle alignment must be at least 1 (LLVM 14-22 die of SIGFPE on 0)",
        ));
    }
    let overflow = || Error::rule(rules::BIN_11, "bundle layout exceeds 2^64 bytes");
    let mut header_size = HEADER_SIZE;
    for (id, _) in entries {
        header_size = header_size
            .checked_add(RECORD_FIXED_SIZE + id.len() as u64)
            .ok_or_else(overflow)?;
    }
    let mut header = Vec::with_capacity(header_size as usize);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    let mut cur = header_size;
    let mut offsets = Vec::with_capacity(entries.len());
    for (id, size) in entries {
        cur = cur.checked_next_multiple_of(align).ok_or_else(overflow)?;
        header.extend_from_slice(&cur.to_le_bytes());
        header.extend_from_slice(&size.to_le_bytes());
        header.extend_from_slice(&(id.len() as u64).to_le_bytes());
        header.extend_from_slice(id);
        offsets.push(cur);
        cur = cur.checked_add(*size).ok_or_else(overflow)?;
    }
    Ok(Layout {
        header,
        offsets,
        sizes: entries.iter().map(|e| e.1).collect(),
        total: cur,
    })
}

impl Layout {
    /// Emit the bundle: header, then for each entry zero padding and the
    /// payload written by `payload(i, w)`, which must write exactly
    /// `sizes[i]` bytes.
    pub fn write<W: Write>(
        &self,
        w: &mut W,
        mut payload: impl FnMut(usize, &mut W) -> io::Result<()>,
    ) -> io::Result<()> {
        w.write_all(&self.header)?;
        let mut pos = self.header.len() as u64;
        for (i, &off) in self.offsets.iter().enumerate() {
            crate::output::write_zeros(w, off - pos)?;
            payload(i, w)?;
            pos = off + self.sizes[i];
        }
        Ok(())
    }
}

/// Build a bundle in memory from `(id, payload)` pairs.
pub fn write_to_vec(entries: &[(&[u8], &[u8])], align: u64) -> Result<Vec<u8>> {
    let sized: Vec<(&[u8], u64)> = entries.iter().map(|(i, p)| (*i, p.len() as u64)).collect();
    let l = layout(&sized, align)?;
    let mut out = Vec::with_capacity(l.total as usize);
    l.write(&mut out, |i, w| w.write_all(entries[i].1))?;
    Ok(out)
}
