//! The strict reader: [`parse_strict`] walks a byte range of concatenated
//! binaries and checks each one against `spec/offload-binary.md` (OB-1 …
//! OB-16), reporting every violation with its absolute offset. Compressed
//! version 3 binaries (OB-19) are inflated in `compressed.rs` and their
//! bodies checked here.

use super::compressed::inflate;
use super::kinds::{self, ImageKind, OffloadKind};
use super::{align8, is_offload_binary, keys, show, Binary, Entry, ReadOptions, StringPair};
use crate::error::{Error, Errors};
use crate::format::offload_binary::{
    header_size, read_u64, string_entry_size, RawEntry, RawHeader, ALIGNMENT, ENTRY_SIZE,
    HEADER_SIZE_V1, HEADER_SIZE_V3, MAGIC, OIF_METADATA,
};
use crate::rules;
use binrw::BinRead;
use std::borrow::Cow;
use std::io::Cursor;

/// A byte range being checked: errors accumulate, offsets are absolute.
pub(super) struct Ctx<'e> {
    pub(super) base: u64,
    pub(super) errs: &'e mut Vec<Error>,
}

impl Ctx<'_> {
    pub(super) fn err(&mut self, rule: rules::Rule, rel: u64, msg: impl Into<String>) {
        self.errs
            .push(Error::at(rule, self.base.saturating_add(rel), msg));
    }
}

/// A region of a binary, for the overlap check (OB-10).
#[derive(Debug, Clone, Copy)]
struct Region {
    start: u64,
    end: u64,
    what: &'static str,
    index: u64,
    /// Field that points at the region (relative), where an error is reported.
    field: u64,
    /// String bytes may overlap other string bytes (tail merging).
    is_string: bool,
}

impl Region {
    /// `[start, end)`, pointed at by `field` of entry `index`.
    fn part(start: u64, end: u64, what: &'static str, index: u64, field: u64) -> Region {
        Region {
            start,
            end,
            what,
            index,
            field,
            is_string: false,
        }
    }

    /// [`Region::part`] for string bytes.
    fn string(start: u64, end: u64, what: &'static str, index: u64, field: u64) -> Region {
        Region {
            is_string: true,
            ..Region::part(start, end, what, index, field)
        }
    }
}

/// Read the sequence of offload binaries that fills `data` (a file, an ELF
/// section, an archive member). `base` is the absolute offset of `data[0]`.
/// Every violation is returned, sorted by offset.
pub fn parse_strict(data: &[u8], base: u64, opts: ReadOptions) -> Result<Vec<Binary<'_>>, Errors> {
    let mut errs = Vec::new();
    let mut out = Vec::new();
    let len = data.len() as u64;
    let mut pos = 0u64;
    if data.is_empty() {
        errs.push(Error::at(
            rules::OB_1,
            base,
            "empty input: no offload binary magic 10 FF 10 AD",
        ));
    }
    while pos < len {
        let rest = &data[pos as usize..];
        if !is_offload_binary(rest) {
            // Zero padding (as a linker may leave between copies) followed
            // by another binary: report it and read on.
            let zeros = rest.iter().take_while(|&&b| b == 0).count();
            if pos > 0 && zeros > 0 && is_offload_binary(&rest[zeros..]) {
                errs.push(Error::at(
                    rules::OB_15,
                    base + pos,
                    format!(
                        "{zeros} zero bytes (padding such as a linker may leave between copies) separate two binaries; LLVM 16, 19 and 22 reject them: 'Invalid data was encountered while parsing the file'"
                    ),
                ));
                pos += zeros as u64;
                continue;
            }
            report_not_binary(rest, base + pos, pos == 0, &mut errs);
            break;
        }
        match parse_one(rest, base + pos, opts, &mut errs) {
            Some(b) => {
                let step = b.extent;
                out.push(b);
                pos += step;
            }
            None => break,
        }
    }
    if errs.is_empty() {
        Ok(out)
    } else {
        errs.sort_by_key(|e| e.offset());
        Err(errs.into())
    }
}

fn report_not_binary(rest: &[u8], at: u64, first: bool, errs: &mut Vec<Error>) {
    if first {
        let n = rest.len().min(4);
        let diff = rest[..n]
            .iter()
            .zip(MAGIC.iter())
            .position(|(a, b)| a != b)
            .unwrap_or(n) as u64;
        errs.push(Error::at(
            rules::OB_1,
            at + diff,
            "no offload binary magic 10 FF 10 AD",
        ));
    } else if rest.iter().all(|&b| b == 0) {
        errs.push(Error::at(
            rules::OB_15,
            at,
            format!(
                "{} zero bytes follow the last binary (padding such as a linker may leave between copies); LLVM 16, 19 and 22 reject them: 'Invalid data was encountered while parsing the file'",
                rest.len()
            ),
        ));
    } else {
        errs.push(Error::at(
            rules::OB_15,
            at,
            format!(
                "{} bytes after the last binary do not start another binary; LLVM 16, 19 and 22 reject them: 'Invalid data was encountered while parsing the file'",
                rest.len()
            ),
        ));
    }
}

/// Parse the binary at `data[0]`; `None` when its extent cannot be
/// determined (the sequence stops there).
fn parse_one<'a>(
    data: &'a [u8],
    base: u64,
    opts: ReadOptions,
    errs: &mut Vec<Error>,
) -> Option<Binary<'a>> {
    let len = data.len() as u64;
    let mut cx = Ctx { base, errs };
    if len < HEADER_SIZE_V1 {
        cx.err(
            rules::OB_3,
            len,
            format!("the header needs {HEADER_SIZE_V1} bytes, {len} remain"),
        );
        return None;
    }
    let h = RawHeader::read(&mut Cursor::new(data)).ok()?;
    let Some(hsize) = header_size(h.version) else {
        cx.err(
            rules::OB_2,
            4,
            format!(
                "version {} is not 1, 2 or 3 (LLVM 16, 19 and 22 read only version 1)",
                h.version
            ),
        );
        return None;
    };
    if len < hsize {
        cx.err(
            rules::OB_3,
            len,
            format!(
                "the version {} header needs {hsize} bytes, {len} remain",
                h.version
            ),
        );
        return None;
    }
    let inflated = if h.version == 3 {
        read_u64(data, 32).unwrap_or(0)
    } else {
        0
    };
    // OB-4: the size covers the header and lies inside the data.
    let mut size = h.size;
    let mut stop_after = false;
    if size < hsize {
        cx.err(
            rules::OB_4,
            8,
            format!("size {size} is smaller than the {hsize}-byte header"),
        );
        return None;
    }
    if size > len {
        cx.err(
            rules::OB_4,
            8,
            format!("size {size} runs past the end of the data ({len} bytes from this binary)"),
        );
        size = len;
        stop_after = true;
    }
    if inflated != 0 {
        return parse_compressed(data, base, h, size, inflated, opts, cx.errs, stop_after);
    }
    if h.size % ALIGNMENT != 0 && !stop_after {
        cx.err(
            rules::OB_5,
            8,
            format!(
                "size {} is not a multiple of 8 (LLVM 16, 19 and 22 accept it only when the binary ends the data)",
                h.size
            ),
        );
    }
    let entries = check_body(&data[..size as usize], base, h, hsize, opts, cx.errs);
    let extent = if stop_after { len } else { size };
    let b = Binary {
        offset: base,
        version: h.version,
        size: h.size,
        inflated_size: 0,
        extent,
        entries: entries.unwrap_or_default(),
    };
    Some(b)
}

/// Check an uncompressed binary `bin` (exactly `size` bytes) and return its
/// entries when its structure allows reading them.
pub(super) fn check_body<'a>(
    bin: &'a [u8],
    base: u64,
    h: RawHeader,
    hsize: u64,
    opts: ReadOptions,
    errs: &mut Vec<Error>,
) -> Option<Vec<Entry<'a>>> {
    let size = bin.len() as u64;
    let mut cx = Ctx { base, errs };
    let first_err = cx.errs.len();
    let mut regions = vec![Region::part(0, hsize, "header", 0, 0)];
    let (eoff, count) = entry_table(h, hsize, size, &mut cx)?;
    regions.push(Region::part(
        eoff,
        eoff + count * ENTRY_SIZE,
        "entry table",
        0,
        16,
    ));
    let ses = string_entry_size(h.version);
    let mut entries = Vec::with_capacity(count as usize);
    let mut nuls = NulIndex::new(bin);
    let controls = ControlIndex::new(bin);
    // (key start, key end, entry, string entry, field) of every key read.
    let mut all_keys: Vec<(usize, usize, u64, u64, u64)> = Vec::new();
    for i in 0..count {
        let epos = eoff + i * ENTRY_SIZE;
        let e = RawEntry::read(&mut Cursor::new(&bin[epos as usize..])).ok()?;
        kind_and_flag_violations(&e, i, epos, h.version, opts, &mut cx);
        // OB-7: the string entries lie inside the binary.
        let strings_end = e
            .num_strings
            .checked_mul(ses)
            .and_then(|n| e.string_offset.checked_add(n));
        let mut strings = Vec::new();
        let mut string_pos = Vec::new();
        match strings_end {
            Some(end) if end <= size => {
                if e.num_strings > 0 {
                    regions.push(Region::part(e.string_offset, end, "string entries", i, epos + 8));
                }
                strings.reserve(e.num_strings as usize);
                for j in 0..e.num_strings {
                    let spos = e.string_offset + j * ses;
                    if let Some(p) = check_string_entry(
                        bin,
                        &mut nuls,
                        spos,
                        h.version,
                        i,
                        j,
                        &mut cx,
                        &mut regions,
                    ) {
                        strings.push(p);
                        string_pos.push(spos);
                    }
                }
            }
            _ => cx.err(
                rules::OB_7,
                epos + 16,
                format!(
                    "entry {i}: {} string entries of {ses} bytes at {} run past the end of the binary ({size} bytes)",
                    e.num_strings, e.string_offset
                ),
            ),
        }
        control_violations(bin, &controls, &strings, &string_pos, i, &mut cx);
        // OB-11 is checked after the loop, over the keys of every entry.
        for (p, &at) in strings.iter().zip(&string_pos) {
            if let Some(k) = read_u64(bin, at) {
                let start = k as usize;
                all_keys.push((
                    start,
                    start + p.key.len(),
                    i,
                    (at - e.string_offset) / ses,
                    at,
                ));
            }
        }
        // OB-9: the image lies inside the binary.
        let image_end = e.image_offset.checked_add(e.image_size);
        let image: Cow<'a, [u8]> = match image_end {
            Some(end) if end <= size => {
                if e.image_size > 0 {
                    regions.push(Region::part(e.image_offset, end, "image", i, epos + 24));
                }
                Cow::Borrowed(&bin[e.image_offset as usize..end as usize])
            }
            _ => {
                cx.err(
                    rules::OB_9,
                    epos + 32,
                    format!(
                        "entry {i}: image [{}, +{}) runs past the end of the binary ({size} bytes)",
                        e.image_offset, e.image_size
                    ),
                );
                Cow::Borrowed(&[][..])
            }
        };
        entries.push(Entry {
            image_kind: e.image_kind,
            offload_kind: e.offload_kind,
            flags: e.flags,
            strings,
            image,
            image_offset: base.saturating_add(e.image_offset),
            entry_offset: base + epos,
        });
    }
    duplicate_keys(bin, &all_keys, &mut cx);
    // OB-10: regions do not overlap (strings may share bytes with strings).
    check_overlaps(&regions, &mut cx);
    // OB-16: bytes outside every region are zero (only meaningful when the
    // layout is otherwise sound).
    if cx.errs.len() == first_err {
        check_padding(bin, &regions, &mut cx);
    }
    Some(entries)
}

/// OB-6: where the entry table lies and how many entries it holds, when it
/// lies inside the binary after the header.
fn entry_table(h: RawHeader, hsize: u64, size: u64, cx: &mut Ctx<'_>) -> Option<(u64, u64)> {
    // OB-6: the entry table.
    let (eoff, count) = if h.version == 1 {
        if h.entry_size_or_count != ENTRY_SIZE {
            cx.err(
                rules::OB_6,
                24,
                format!(
                    "entry size {} is not {ENTRY_SIZE} (LLVM only checks that it is <= size - 32)",
                    h.entry_size_or_count
                ),
            );
        }
        (h.entry_offset, 1u64)
    } else {
        (h.entry_offset, h.entry_size_or_count)
    };
    let table_end = count
        .checked_mul(ENTRY_SIZE)
        .and_then(|n| eoff.checked_add(n));
    let table_ok = match table_end {
        Some(end) if end <= size && eoff >= hsize => true,
        Some(end) if end <= size => {
            cx.err(
                rules::OB_6,
                16,
                format!("the entries at {eoff} overlap the {hsize}-byte header"),
            );
            false
        }
        _ => {
            cx.err(
                rules::OB_6,
                if h.version == 1 { 16 } else { 24 },
                format!(
                    "{count} entr{} of {ENTRY_SIZE} bytes at {eoff} run past the end of the binary ({size} bytes)",
                    if count == 1 { "y" } else { "ies" }
                ),
            );
            false
        }
    };
    if h.version >= 2 && count == 0 {
        cx.err(rules::OB_6, 24, "the binary has no entries");
    }
    table_ok.then_some((eoff, count))
}

/// OB-12, OB-13, OB-14: an entry's image and offload kinds are defined in
/// the table the read follows, and its flags set only defined bits.
fn kind_and_flag_violations(
    e: &RawEntry,
    i: u64,
    epos: u64,
    version: u32,
    opts: ReadOptions,
    cx: &mut Ctx<'_>,
) {
    let (table, note) = opts.table();
    if ImageKind::from_value(e.image_kind, table).is_none() {
        cx.err(
            rules::OB_12,
            epos,
            format!(
                "entry {i}: image kind {} is not defined in LLVM {table}{note} ({})",
                e.image_kind,
                kinds::image_kind_meanings(e.image_kind)
            ),
        );
    }
    if OffloadKind::from_value(e.offload_kind, table).is_none() {
        cx.err(
            rules::OB_13,
            epos + 2,
            format!(
                "entry {i}: offload kind {} is not defined in LLVM {table}{note} ({})",
                e.offload_kind,
                kinds::offload_kind_meanings(e.offload_kind)
            ),
        );
    }
    let allowed = if version >= 2 { OIF_METADATA } else { 0 };
    if e.flags & !allowed != 0 {
        cx.err(
            rules::OB_14,
            epos + 4,
            format!(
                "entry {i}: flags 0x{:x} set undefined bits (defined: 0x{allowed:x})",
                e.flags
            ),
        );
    }
}

/// OB-25: no control characters in an entry's keys and values.
fn control_violations(
    bin: &[u8],
    controls: &ControlIndex<'_>,
    strings: &[StringPair<'_>],
    string_pos: &[u64],
    i: u64,
    cx: &mut Ctx<'_>,
) {
    for (p, &at) in strings.iter().zip(string_pos) {
        for (what, text, field) in [("key", &p.key, at), ("value", &p.value, at + 8)] {
            let start = read_u64(bin, field).unwrap_or(0);
            let Some(c) = controls.first_in(start, text) else {
                continue;
            };
            let shown: Vec<u8> = text.iter().take(64).copied().collect();
            cx.err(
                rules::OB_25,
                start.saturating_add(c as u64),
                format!(
                    "entry {i}: string {what} '{}{}' holds the control character 0x{:02x}",
                    shown.escape_ascii(),
                    if text.len() > 64 { "…" } else { "" },
                    text[c]
                ),
            );
        }
    }
}

/// OB-11: keys are unique within each entry; `all_keys` holds (key start,
/// key end, entry, string entry, field) of every key read.
fn duplicate_keys(bin: &[u8], all_keys: &[(usize, usize, u64, u64, u64)], cx: &mut Ctx<'_>) {
    let spans: Vec<(usize, usize)> = all_keys.iter().map(|k| (k.0, k.1)).collect();
    let classes = keys::key_classes(bin, &spans);
    let mut seen: std::collections::HashMap<(u64, usize), u64> =
        std::collections::HashMap::with_capacity(all_keys.len());
    for (&(start, end, i, j, at), class) in all_keys.iter().zip(classes) {
        match seen.get(&(i, class)) {
            Some(&k) => cx.err(
                rules::OB_11,
                at,
                format!(
                    "entry {i}: string entry {j} repeats the key '{}' of string entry {k} (LLVM keeps the last value)",
                    show(&bin[start..end])
                ),
            ),
            None => {
                seen.insert((i, class), j);
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn check_string_entry<'a>(
    bin: &'a [u8],
    nuls: &mut NulIndex<'a>,
    spos: u64,
    version: u32,
    i: u64,
    j: u64,
    cx: &mut Ctx<'_>,
    regions: &mut Vec<Region>,
) -> Option<StringPair<'a>> {
    let size = bin.len() as u64;
    let key_off = read_u64(bin, spos)?;
    let value_off = read_u64(bin, spos + 8)?;
    let key = nuls.c_string(key_off);
    let mut ok = true;
    let key = match key {
        Some(k) => {
            regions.push(Region::string(
                key_off,
                key_off + k.len() as u64 + 1,
                "key",
                i,
                spos,
            ));
            Some(k)
        }
        None => {
            ok = false;
            cx.err(rules::OB_8, spos, string_problem(bin, key_off, "key", i, j));
            None
        }
    };
    let value: Option<&[u8]> = if version == 1 {
        match nuls.c_string(value_off) {
            Some(v) => {
                regions.push(Region::string(
                    value_off,
                    value_off + v.len() as u64 + 1,
                    "value",
                    i,
                    spos + 8,
                ));
                Some(v)
            }
            None => {
                cx.err(
                    rules::OB_8,
                    spos + 8,
                    string_problem(bin, value_off, "value", i, j),
                );
                None
            }
        }
    } else {
        let vsize = read_u64(bin, spos + 16)?;
        match value_off.checked_add(vsize) {
            Some(end) if end <= size => {
                if vsize > 0 {
                    regions.push(Region::string(value_off, end, "value", i, spos + 8));
                }
                Some(&bin[value_off as usize..end as usize])
            }
            _ => {
                cx.err(
                    rules::OB_8,
                    spos + 8,
                    format!(
                        "entry {i}, string entry {j}: value [{value_off}, +{vsize}) runs past the end of the binary ({size} bytes)"
                    ),
                );
                None
            }
        }
    };
    if !ok {
        return None;
    }
    Some(StringPair {
        key: Cow::Borrowed(key?),
        value: Cow::Borrowed(value?),
    })
}

fn string_problem(bin: &[u8], off: u64, what: &str, i: u64, j: u64) -> String {
    let size = bin.len() as u64;
    if off >= size {
        format!(
            "entry {i}, string entry {j}: {what} offset {off} lies outside the binary ({size} bytes); LLVM reads memory it does not own there"
        )
    } else {
        format!(
            "entry {i}, string entry {j}: the {what} at {off} has no NUL before the end of the binary ({size} bytes)"
        )
    }
}

/// Finds the NUL that ends a C string, scanning every byte of the data at
/// most once whatever the queries (many strings may start inside one long
/// unterminated run): scanned runs are remembered as `start → (end, found)`,
/// where `end` is the NUL's position, or the data length when none was found.
/// Where control bytes (0x01–0x1F, 0x7F; OB-25) lie, counted per block, so
/// that asking whether a string holds one costs at most two blocks of
/// scanning whatever its length: many long strings sharing bytes stay linear.
struct ControlIndex<'a> {
    data: &'a [u8],
    /// `before[k]`: control bytes in `data[..k * BLOCK]`.
    before: Vec<u64>,
}

impl<'a> ControlIndex<'a> {
    const BLOCK: usize = 1024;

    fn is_control(b: u8) -> bool {
        (0x01..0x20).contains(&b) || b == 0x7f
    }

    fn new(data: &'a [u8]) -> Self {
        let mut before = Vec::with_capacity(data.len() / Self::BLOCK + 2);
        let mut n = 0u64;
        before.push(0);
        for chunk in data.chunks(Self::BLOCK) {
            n += chunk.iter().filter(|&&b| Self::is_control(b)).count() as u64;
            before.push(n);
        }
        ControlIndex { data, before }
    }

    /// The index of the first control byte in `text`, which is the string
    /// at `start` of the data (or, when it is not, is scanned as it is).
    fn first_in(&self, start: u64, text: &[u8]) -> Option<usize> {
        let s = usize::try_from(start).ok();
        let inside = s.and_then(|s| Some((s, s.checked_add(text.len())?)));
        // The string borrows from the data (compared by address: comparing
        // the bytes would cost what the index saves).
        let Some((s, e)) = inside.filter(|&(s, e)| {
            e <= self.data.len() && std::ptr::eq(text.as_ptr(), self.data[s..].as_ptr())
        }) else {
            return text.iter().position(|&b| Self::is_control(b));
        };
        let b = Self::BLOCK;
        if e - s <= 2 * b {
            return text.iter().position(|&b| Self::is_control(b));
        }
        let head_end = s.next_multiple_of(b);
        if let Some(c) = self.data[s..head_end]
            .iter()
            .position(|&b| Self::is_control(b))
        {
            return Some(c);
        }
        let (first_block, last_block) = (head_end / b, e / b);
        if self.before[last_block] > self.before[first_block] {
            // The first block past `first_block` whose count rises holds it.
            let k = first_block
                + self.before[first_block..=last_block]
                    .partition_point(|&n| n == self.before[first_block])
                - 1;
            let from = k * b;
            let c = self.data[from..from + b]
                .iter()
                .position(|&b| Self::is_control(b))?;
            return Some(from + c - s);
        }
        self.data[last_block * b..e]
            .iter()
            .position(|&b| Self::is_control(b))
            .map(|c| last_block * b + c - s)
    }
}

pub(crate) struct NulIndex<'a> {
    data: &'a [u8],
    spans: std::collections::BTreeMap<usize, (usize, bool)>,
}

impl<'a> NulIndex<'a> {
    /// An index over `data`.
    pub(crate) fn new(data: &'a [u8]) -> Self {
        NulIndex {
            data,
            spans: std::collections::BTreeMap::new(),
        }
    }

    /// The position of the first NUL at or after `o`, if there is one.
    pub(crate) fn find(&mut self, o: usize) -> Option<usize> {
        let len = self.data.len();
        if o >= len {
            return None;
        }
        if let Some((_, &(end, found))) = self.spans.range(..=o).next_back() {
            if o <= end && (found || o < end) {
                return found.then_some(end);
            }
        }
        let next = self.spans.range(o + 1..).next().map(|(&s, &v)| (s, v));
        let limit = next.map_or(len, |(s, _)| s);
        match memchr::memchr(0, &self.data[o..limit]) {
            Some(k) => {
                self.spans.insert(o, (o + k, true));
                Some(o + k)
            }
            None => match next {
                Some((s, (end, found))) => {
                    self.spans.remove(&s);
                    self.spans.insert(o, (end, found));
                    found.then_some(end)
                }
                None => {
                    self.spans.insert(o, (len, false));
                    None
                }
            },
        }
    }

    /// The NUL-terminated string at `off` (without its NUL), if it ends
    /// inside the data.
    pub(crate) fn c_string(&mut self, off: u64) -> Option<&'a [u8]> {
        let start = usize::try_from(off).ok()?;
        let end = self.find(start)?;
        Some(&self.data[start..end])
    }
}

/// One sweep in start order: every region that overlaps an earlier one
/// (other than a string overlapping strings) is reported once, against the
/// earlier region that reaches furthest. O(n log n) for any input.
fn check_overlaps(regions: &[Region], cx: &mut Ctx<'_>) {
    let mut sorted: Vec<&Region> = regions.iter().filter(|r| r.end > r.start).collect();
    sorted.sort_by_key(|r| (r.start, r.end));
    let mut reach_any: Option<&Region> = None;
    let mut reach_solid: Option<&Region> = None;
    for b in sorted {
        let against = if b.is_string { reach_solid } else { reach_any };
        if let Some(a) = against.filter(|a| a.end > b.start) {
            cx.err(
                rules::OB_10,
                b.field,
                format!(
                    "the {} of entry {} at [{}, {}) overlaps the {} of entry {} at [{}, {})",
                    b.what, b.index, b.start, b.end, a.what, a.index, a.start, a.end
                ),
            );
        }
        if reach_any.is_none_or(|a| b.end > a.end) {
            reach_any = Some(b);
        }
        if !b.is_string && reach_solid.is_none_or(|a| b.end > a.end) {
            reach_solid = Some(b);
        }
    }
}

fn check_padding(bin: &[u8], regions: &[Region], cx: &mut Ctx<'_>) {
    let mut spans: Vec<(u64, u64)> = regions
        .iter()
        .filter(|r| r.end > r.start)
        .map(|r| (r.start, r.end))
        .collect();
    spans.sort_unstable();
    let mut cur = 0u64;
    let mut gaps = Vec::new();
    for (s, e) in spans {
        if s > cur {
            gaps.push((cur, s));
        }
        cur = cur.max(e);
    }
    gaps.push((cur, bin.len() as u64));
    for (s, e) in gaps {
        if s >= e {
            continue;
        }
        if let Some(p) = bin[s as usize..e as usize].iter().position(|&b| b != 0) {
            cx.err(
                rules::OB_16,
                s + p as u64,
                "non-zero byte outside the header, entries, strings and images (padding must be zero)",
            );
        }
    }
}

/// Read and check a compressed v3 binary (OB-19).
#[allow(clippy::too_many_arguments)]
pub(super) fn parse_compressed<'a>(
    data: &'a [u8],
    base: u64,
    h: RawHeader,
    size: u64,
    inflated: u64,
    opts: ReadOptions,
    errs: &mut Vec<Error>,
    stop_after: bool,
) -> Option<Binary<'a>> {
    let len = data.len() as u64;
    let mut cx = Ctx { base, errs };
    let eoff = h.entry_offset;
    if eoff != HEADER_SIZE_V3 || eoff > size || inflated < eoff {
        cx.err(
            rules::OB_19,
            16,
            format!(
                "compressed binary: entries offset {eoff} must be {HEADER_SIZE_V3}, inside the size ({size}) and below the inflated size ({inflated})"
            ),
        );
        return None;
    }
    // The binary occupies its size rounded up to 8, the padding zero.
    let extent = if stop_after {
        len
    } else {
        match align8(size) {
            Some(e) if e <= len => {
                if let Some(p) = data[size as usize..e as usize].iter().position(|&b| b != 0) {
                    cx.err(
                        rules::OB_16,
                        size + p as u64,
                        "non-zero byte in the padding after a compressed binary",
                    );
                }
                e
            }
            _ => {
                cx.err(
                    rules::OB_19,
                    8,
                    format!(
                        "compressed binary of size {size} lacks its zero padding to a multiple of 8 ({len} bytes remain)"
                    ),
                );
                len
            }
        }
    };
    let stream = &data[eoff as usize..size as usize];
    let body_len = inflated - eoff;
    let body = match inflate(stream, body_len, opts.budget) {
        Ok(b) => b,
        Err(e) => {
            let rule = e
                .rule_id()
                .and_then(rules::by_id)
                .copied()
                .unwrap_or(rules::OB_19);
            cx.err(rule, eoff, e.message().to_string());
            return Some(Binary {
                offset: base,
                version: h.version,
                size: h.size,
                inflated_size: inflated,
                extent,
                entries: Vec::new(),
            });
        }
    };
    // Restore the header as LLVM does: size = inflated, inflated = 0.
    let mut full = Vec::with_capacity(HEADER_SIZE_V3 as usize + body.len());
    full.extend_from_slice(&data[..HEADER_SIZE_V3 as usize]);
    full[8..16].copy_from_slice(&inflated.to_le_bytes());
    full[32..40].copy_from_slice(&0u64.to_le_bytes());
    full.extend_from_slice(&body);
    let mut inner_errs = Vec::new();
    let mut hh = h;
    hh.size = inflated;
    let entries = check_body(&full, 0, hh, HEADER_SIZE_V3, opts, &mut inner_errs);
    for e in inner_errs {
        let rule = e
            .rule_id()
            .and_then(rules::by_id)
            .copied()
            .unwrap_or(rules::OB_19);
        cx.err(
            rule,
            eoff,
            format!(
                "{} (at 0x{:x} of the inflated binary)",
                e.message(),
                e.offset().unwrap_or(0)
            ),
        );
    }
    let entries = entries.map(|es| {
        es.into_iter()
            .map(|e| Entry {
                image_kind: e.image_kind,
                offload_kind: e.offload_kind,
                flags: e.flags,
                strings: e
                    .strings
                    .into_iter()
                    .map(|p| StringPair {
                        key: Cow::Owned(p.key.into_owned()),
                        value: Cow::Owned(p.value.into_owned()),
                    })
                    .collect(),
                image: Cow::Owned(e.image.into_owned()),
                image_offset: base,
                entry_offset: base,
            })
            .collect()
    });
    Some(Binary {
        offset: base,
        version: h.version,
        size: h.size,
        inflated_size: inflated,
        extent,
        entries: entries.unwrap_or_default(),
    })
}

#[cfg(test)]
mod control_index_tests {
    use super::ControlIndex;

    /// The index agrees with a plain scan on strings of every length and
    /// place, sparse and dense control bytes alike.
    #[test]
    fn first_in_matches_a_scan() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for density in [0u64, 1, 50, 5000] {
            let data: Vec<u8> = (0..20_000)
                .map(|_| {
                    if density > 0 && next() % density == 0 {
                        (next() % 0x20) as u8
                    } else {
                        b'a' + (next() % 26) as u8
                    }
                })
                .collect();
            let idx = ControlIndex::new(&data);
            for _ in 0..2000 {
                let s = (next() % 20_000) as usize;
                let len = (next() % (20_000 - s as u64 + 1)) as usize;
                let text = &data[s..s + len];
                let want = text.iter().position(|&b| ControlIndex::is_control(b));
                assert_eq!(idx.first_in(s as u64, text), want, "{s} {len}");
            }
        }
    }
}
