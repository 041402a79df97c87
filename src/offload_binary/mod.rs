//! Offload binaries (magic `10 FF 10 AD`): the format of
//! `clang-offload-packager` (16, 19) and `llvm-offload-binary` (22).
//!
//! Data flows bytes → [`Binary`] → bytes:
//! - [`parse_strict`] reads a byte range holding concatenated binaries and
//!   reports **every** violation of `spec/offload-binary.md` with its
//!   absolute offset and rule (OB-1 … OB-16, OB-19);
//! - [`llvm`] models what LLVM 16, 19 and 22 make of the same bytes,
//!   their messages and their crashes included;
//! - the writer ([`layout_v1`], [`layout_multi`], [`write_v1`]) lays a
//!   binary out first and emits it after, byte-identical to each release;
//! - [`container`] finds binaries in raw files, ELF sections and archives
//!   and lists them ([`list`]); [`packager`] holds the operations of the
//!   packager CLI (packaging and extraction per release).
//!
//! Nothing is allocated from a count or size field before that field has
//! been checked against the bytes that hold it.

pub mod container;
mod keys;
pub mod kinds;
pub mod llvm;
pub mod packager;
pub mod strtab;

pub use container::{list, list_with, ListedImage};
pub use kinds::{ImageKind, OffloadKind};

use crate::error::{Error, Result};
use crate::format::offload_binary::{
    header_size, read_u64, string_entry_size, RawEntry, RawHeader, ALIGNMENT, ENTRY_SIZE,
    HEADER_SIZE_V1, HEADER_SIZE_V3, MAGIC, OIF_METADATA, STRING_ENTRY_SIZE_V1,
    STRING_ENTRY_SIZE_V2,
};
use crate::profile::Release;
use crate::rules;
use binrw::BinRead;
use std::borrow::Cow;
use std::io::{self, Cursor, Read, Write};
use strtab::StrTab;

/// A key or value for a message: lossy UTF-8, escaped, at most 64
/// characters (keys in hostile inputs can be megabytes long).
pub fn show(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(64)];
    let mut t = String::from_utf8_lossy(cut).escape_debug().to_string();
    if bytes.len() > 64 {
        t.push('…');
    }
    t
}

/// Whether `data` starts with the offload-binary magic (OB-1).
pub fn is_offload_binary(data: &[u8]) -> bool {
    data.starts_with(&MAGIC)
}

/// An input that almost starts with the offload-binary magic (its first
/// three bytes are `10 FF 10`, or it is a proper prefix of the magic of at
/// least two bytes): OB-1 at the first byte that differs (at the end of a
/// proper prefix). `None` for anything else, including a real magic.
/// Detection layers use it to report such inputs against OB-1 rather than
/// as an unknown container.
pub fn magic_near_miss(data: &[u8]) -> Option<Error> {
    let common = data
        .iter()
        .zip(MAGIC.iter())
        .take_while(|(a, b)| a == b)
        .count();
    let proper_prefix = data.len() < MAGIC.len() && common == data.len() && common >= 2;
    if common == MAGIC.len() || !(common >= 3 || proper_prefix) {
        return None;
    }
    Some(Error::at(
        rules::OB_1,
        common as u64,
        if proper_prefix {
            format!("the input ends after {common} bytes of the offload binary magic 10 FF 10 AD")
        } else {
            format!(
                "byte {common} is 0x{:02x}, not 0x{:02x} of the offload binary magic 10 FF 10 AD",
                data[common], MAGIC[common]
            )
        },
    ))
}

/// `alignTo(x, 8)`, `None` on overflow.
pub fn align8(x: u64) -> Option<u64> {
    x.checked_next_multiple_of(ALIGNMENT)
}

/// One key/value pair of an entry, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringPair<'a> {
    /// The key (without its NUL).
    pub key: Cow<'a, [u8]>,
    /// The value (v1: without its NUL; v2+: exactly `value size` bytes).
    pub value: Cow<'a, [u8]>,
}

/// One entry (one image and its metadata) of a binary that passed the
/// strict reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Stored image kind value (see [`ImageKind::from_value`]).
    pub image_kind: u16,
    /// Stored offload kind value (see [`OffloadKind::from_value`]).
    pub offload_kind: u16,
    /// Flags.
    pub flags: u32,
    /// Key/value pairs in string-entry order.
    pub strings: Vec<StringPair<'a>>,
    /// The image bytes.
    pub image: Cow<'a, [u8]>,
    /// Absolute offset of the image in the input (for a compressed binary:
    /// the offset of the binary, since the image exists only inflated).
    pub image_offset: u64,
    /// Absolute offset of the entry record (compressed: the binary's offset).
    pub entry_offset: u64,
}

impl Entry<'_> {
    /// The value of `key` (keys are unique in a strict binary).
    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.strings
            .iter()
            .find(|p| p.key.as_ref() == key.as_bytes())
            .map(|p| p.value.as_ref())
    }

    /// The value of `key` as text (lossy), empty when absent, as LLVM's
    /// `getString` returns it.
    pub fn get_str(&self, key: &str) -> String {
        String::from_utf8_lossy(self.get(key).unwrap_or_default()).into_owned()
    }

    /// The `triple` string (empty when absent).
    pub fn triple(&self) -> String {
        self.get_str("triple")
    }

    /// The `arch` string (empty when absent).
    pub fn arch(&self) -> String {
        self.get_str("arch")
    }
}

/// One offload binary that passed the strict reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binary<'a> {
    /// Absolute offset of the binary's first byte.
    pub offset: u64,
    /// Format version (1, 2 or 3).
    pub version: u32,
    /// The size field as stored (compressed v3: header plus stream).
    pub size: u64,
    /// The inflated size of a compressed v3 binary, else 0.
    pub inflated_size: u64,
    /// Bytes the binary occupies in its byte range (the size, and for a
    /// compressed binary its zero padding to a multiple of 8).
    pub extent: u64,
    /// Entries in order (exactly one in v1).
    pub entries: Vec<Entry<'a>>,
}

impl Binary<'_> {
    /// Whether the body is compressed (v3, inflated size not 0).
    pub fn is_compressed(&self) -> bool {
        self.inflated_size != 0
    }
}

/// Options of the strict reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadOptions {
    /// The release whose image and offload kind tables apply (OB-12,
    /// OB-13). `None`: LLVM 22's tables, and errors say so.
    pub release: Option<Release>,
}

impl ReadOptions {
    fn table(&self) -> (Release, &'static str) {
        match self.release {
            Some(r) => (r, ""),
            None => (
                Release::L22,
                " (LLVM 22's table; choose another release with --llvm-version)",
            ),
        }
    }
}

/// A byte range being checked: errors accumulate, offsets are absolute.
struct Ctx<'e> {
    base: u64,
    errs: &'e mut Vec<Error>,
}

impl Ctx<'_> {
    fn err(&mut self, rule: rules::Rule, rel: u64, msg: impl Into<String>) {
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

/// Read the sequence of offload binaries that fills `data` (a file, an ELF
/// section, an archive member). `base` is the absolute offset of `data[0]`.
/// Every violation is returned, sorted by offset.
pub fn parse_strict(
    data: &[u8],
    base: u64,
    opts: ReadOptions,
) -> Result<Vec<Binary<'_>>, Vec<Error>> {
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
        Err(errs)
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
fn check_body<'a>(
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
    let mut regions = vec![Region {
        start: 0,
        end: hsize,
        what: "header",
        index: 0,
        field: 0,
        is_string: false,
    }];
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
    if !table_ok {
        return None;
    }
    regions.push(Region {
        start: eoff,
        end: eoff + count * ENTRY_SIZE,
        what: "entry table",
        index: 0,
        field: 16,
        is_string: false,
    });
    let (table, note) = opts.table();
    let ses = string_entry_size(h.version);
    let mut entries = Vec::with_capacity(count as usize);
    let mut nuls = NulIndex::new(bin);
    // (key start, key end, entry, string entry, field) of every key read.
    let mut all_keys: Vec<(usize, usize, u64, u64, u64)> = Vec::new();
    for i in 0..count {
        let epos = eoff + i * ENTRY_SIZE;
        let e = RawEntry::read(&mut Cursor::new(&bin[epos as usize..])).ok()?;
        // OB-12, OB-13, OB-14: kinds and flags.
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
        let allowed = if h.version >= 2 { OIF_METADATA } else { 0 };
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
                    regions.push(Region {
                        start: e.string_offset,
                        end,
                        what: "string entries",
                        index: i,
                        field: epos + 8,
                        is_string: false,
                    });
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
                    regions.push(Region {
                        start: e.image_offset,
                        end,
                        what: "image",
                        index: i,
                        field: epos + 24,
                        is_string: false,
                    });
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
    // OB-11: keys are unique within each entry.
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
    // OB-10: regions do not overlap (strings may share bytes with strings).
    check_overlaps(&regions, &mut cx);
    // OB-16: bytes outside every region are zero (only meaningful when the
    // layout is otherwise sound).
    if cx.errs.len() == first_err {
        check_padding(bin, &regions, &mut cx);
    }
    Some(entries)
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
            regions.push(Region {
                start: key_off,
                end: key_off + k.len() as u64 + 1,
                what: "key",
                index: i,
                field: spos,
                is_string: true,
            });
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
                regions.push(Region {
                    start: value_off,
                    end: value_off + v.len() as u64 + 1,
                    what: "value",
                    index: i,
                    field: spos + 8,
                    is_string: true,
                });
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
                    regions.push(Region {
                        start: value_off,
                        end,
                        what: "value",
                        index: i,
                        field: spos + 8,
                        is_string: true,
                    });
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
fn parse_compressed<'a>(
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
    let body = match inflate(stream, body_len) {
        Ok(b) => b,
        Err(msg) => {
            cx.err(rules::OB_19, eoff, msg);
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

/// Inflate `stream` (zstd if it starts with the zstd magic, else zlib, as
/// LLVM decides) into exactly `want` bytes. Output grows with what the
/// stream yields, never from `want`, and stops one byte past it.
pub fn inflate(stream: &[u8], want: u64) -> std::result::Result<Vec<u8>, String> {
    let limit = want.saturating_add(1);
    let mut out = Vec::new();
    let is_zstd = stream.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
    let mut cur = Cursor::new(stream);
    let n = if is_zstd {
        let dec = zstd::stream::read::Decoder::with_buffer(&mut cur)
            .map_err(|e| format!("the zstd stream does not decode: {e}"))?;
        let mut dec = dec.single_frame();
        io::copy(&mut (&mut dec).take(limit), &mut out)
            .map_err(|e| format!("the zstd stream does not decode: {e}"))?
    } else {
        let mut dec = flate2::bufread::ZlibDecoder::new(&mut cur);
        io::copy(&mut (&mut dec).take(limit), &mut out)
            .map_err(|e| format!("the zlib stream does not decode: {e}"))?
    };
    if n != want {
        return Err(format!(
            "the compressed body inflates to {}{n} bytes, the header promises {want}",
            if n > want { "more than " } else { "" }
        ));
    }
    let used = cur.position();
    if is_zstd && used != stream.len() as u64 {
        return Err(format!(
            "{} bytes follow the end of the compressed stream",
            stream.len() as u64 - used
        ));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Writer

/// One image to write: metadata in string-entry order and the image size
/// (the bytes are supplied when emitting).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSpec<'a> {
    /// Stored image kind value.
    pub image_kind: u16,
    /// Stored offload kind value.
    pub offload_kind: u16,
    /// Flags (0 for every release).
    pub flags: u32,
    /// Key/value pairs, in the order they are written.
    pub strings: Vec<(&'a [u8], &'a [u8])>,
    /// Size of the image in bytes.
    pub image_size: u64,
}

/// The computed layout of one binary (OB-17): everything before the first
/// image, then the images at their offsets, then zero padding to `size`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Header, entries, string entries, string table and the padding up to
    /// the first image.
    pub prefix: Vec<u8>,
    /// Offset of each image, in entry order.
    pub image_offsets: Vec<u64>,
    /// Size of each image.
    pub image_sizes: Vec<u64>,
    /// Total size (a multiple of 8).
    pub size: u64,
}

fn overflow() -> Error {
    Error::rule(rules::OB_17, "offload binary layout exceeds 2^64 bytes")
}

fn check_strings(strings: &[(&[u8], &[u8])], version: u32) -> Result<()> {
    for (k, v) in strings {
        if k.contains(&0) {
            return Err(Error::rule(
                rules::OB_8,
                format!(
                    "key '{}' contains a NUL byte; keys are NUL-terminated",
                    show(k)
                ),
            ));
        }
        if version == 1 && v.contains(&0) {
            return Err(Error::rule(
                rules::OB_8,
                format!(
                    "the value of key '{}' contains a NUL byte; version 1 values are NUL-terminated",
                    show(k)
                ),
            ));
        }
    }
    Ok(())
}

/// Lay out a version 1 binary holding `spec`, as `OffloadBinary::write` of
/// LLVM 16, 19 and 22 does.
pub fn layout_v1(spec: &ImageSpec<'_>) -> Result<Layout> {
    check_strings(&spec.strings, 1)?;
    let tab = StrTab::build(spec.strings.iter().flat_map(|(k, v)| [*k, *v]));
    let n = spec.strings.len() as u64;
    let str_off = HEADER_SIZE_V1 + ENTRY_SIZE;
    let tab_off = n
        .checked_mul(STRING_ENTRY_SIZE_V1)
        .and_then(|x| x.checked_add(str_off))
        .ok_or_else(overflow)?;
    let image_offset = tab_off
        .checked_add(tab.len())
        .and_then(align8)
        .ok_or_else(overflow)?;
    let size = image_offset
        .checked_add(spec.image_size)
        .and_then(align8)
        .ok_or_else(overflow)?;
    let mut p = Vec::with_capacity(image_offset as usize);
    p.extend_from_slice(&MAGIC);
    p.extend_from_slice(&1u32.to_le_bytes());
    for v in [size, HEADER_SIZE_V1, ENTRY_SIZE] {
        p.extend_from_slice(&v.to_le_bytes());
    }
    p.extend_from_slice(&spec.image_kind.to_le_bytes());
    p.extend_from_slice(&spec.offload_kind.to_le_bytes());
    p.extend_from_slice(&spec.flags.to_le_bytes());
    for v in [str_off, n, image_offset, spec.image_size] {
        p.extend_from_slice(&v.to_le_bytes());
    }
    for (k, v) in &spec.strings {
        let ko = tab_off + tab.offset(k).unwrap_or(0);
        let vo = tab_off + tab.offset(v).unwrap_or(0);
        p.extend_from_slice(&ko.to_le_bytes());
        p.extend_from_slice(&vo.to_le_bytes());
    }
    p.extend_from_slice(&tab.bytes);
    p.resize(image_offset as usize, 0);
    Ok(Layout {
        prefix: p,
        image_offsets: vec![image_offset],
        image_sizes: vec![spec.image_size],
        size,
    })
}

/// Lay out a version 2 or 3 binary holding several entries, as post-22
/// `main` does: all entries, then all string entries, one shared string
/// table, padding to 8, the images back to back, padding to 8.
pub fn layout_multi(specs: &[ImageSpec<'_>], version: u32) -> Result<Layout> {
    if !matches!(version, 2 | 3) {
        return Err(Error::rule(
            rules::OB_17,
            format!("layout_multi writes version 2 or 3, not {version}"),
        ));
    }
    if specs.is_empty() {
        return Err(Error::rule(
            rules::OB_6,
            "a binary needs at least one entry",
        ));
    }
    for s in specs {
        check_strings(&s.strings, version)?;
    }
    let hsize = header_size(version).unwrap_or(HEADER_SIZE_V3);
    let count = specs.len() as u64;
    let total_strings: u64 = specs.iter().map(|s| s.strings.len() as u64).sum();
    let tab = StrTab::build(
        specs
            .iter()
            .flat_map(|s| s.strings.iter().flat_map(|(k, v)| [*k, *v])),
    );
    let entries_size = count.checked_mul(ENTRY_SIZE).ok_or_else(overflow)?;
    let strings_off = hsize.checked_add(entries_size).ok_or_else(overflow)?;
    let tab_off = total_strings
        .checked_mul(STRING_ENTRY_SIZE_V2)
        .and_then(|x| x.checked_add(strings_off))
        .ok_or_else(overflow)?;
    let data_size = tab_off
        .checked_add(tab.len())
        .and_then(align8)
        .ok_or_else(overflow)?;
    let mut total_images = 0u64;
    for s in specs {
        total_images = total_images
            .checked_add(s.image_size)
            .ok_or_else(overflow)?;
    }
    let size = data_size
        .checked_add(total_images)
        .and_then(align8)
        .ok_or_else(overflow)?;
    let mut p = Vec::with_capacity(data_size as usize);
    p.extend_from_slice(&MAGIC);
    p.extend_from_slice(&version.to_le_bytes());
    for v in [size, hsize, count] {
        p.extend_from_slice(&v.to_le_bytes());
    }
    if version == 3 {
        p.extend_from_slice(&0u64.to_le_bytes());
    }
    let mut so = strings_off;
    let mut io_ = data_size;
    let mut image_offsets = Vec::with_capacity(specs.len());
    for s in specs {
        p.extend_from_slice(&s.image_kind.to_le_bytes());
        p.extend_from_slice(&s.offload_kind.to_le_bytes());
        p.extend_from_slice(&s.flags.to_le_bytes());
        let n = s.strings.len() as u64;
        for v in [so, n, io_, s.image_size] {
            p.extend_from_slice(&v.to_le_bytes());
        }
        image_offsets.push(io_);
        so += n * STRING_ENTRY_SIZE_V2;
        io_ += s.image_size;
    }
    for s in specs {
        for (k, v) in &s.strings {
            let ko = tab_off + tab.offset(k).unwrap_or(0);
            let vo = tab_off + tab.offset(v).unwrap_or(0);
            for x in [ko, vo, v.len() as u64] {
                p.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    p.extend_from_slice(&tab.bytes);
    p.resize(data_size as usize, 0);
    Ok(Layout {
        prefix: p,
        image_offsets,
        image_sizes: specs.iter().map(|s| s.image_size).collect(),
        size,
    })
}

impl Layout {
    /// Emit the binary: the prefix, each image written by `image(i, w)`
    /// (which must write exactly `image_sizes[i]` bytes) at its offset, and
    /// the final zero padding.
    pub fn write<W: Write>(
        &self,
        w: &mut W,
        mut image: impl FnMut(usize, &mut W) -> io::Result<()>,
    ) -> io::Result<()> {
        w.write_all(&self.prefix)?;
        let mut pos = self.prefix.len() as u64;
        for (i, &off) in self.image_offsets.iter().enumerate() {
            crate::output::write_zeros(w, off.saturating_sub(pos))?;
            image(i, w)?;
            pos = off + self.image_sizes[i];
        }
        crate::output::write_zeros(w, self.size.saturating_sub(pos))
    }

    /// Emit into memory with the images given as slices.
    pub fn to_vec(&self, images: &[&[u8]]) -> Result<Vec<u8>> {
        if images.len() != self.image_sizes.len()
            || images
                .iter()
                .zip(&self.image_sizes)
                .any(|(i, &s)| i.len() as u64 != s)
        {
            return Err(Error::other("image sizes differ from the layout"));
        }
        let mut out = Vec::with_capacity(usize::try_from(self.size).unwrap_or(0));
        self.write(&mut out, |i, w| w.write_all(images[i]))?;
        Ok(out)
    }
}

/// An image with its bytes, for the in-memory writers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedImage {
    /// Stored image kind value.
    pub image_kind: u16,
    /// Stored offload kind value.
    pub offload_kind: u16,
    /// Flags.
    pub flags: u32,
    /// Key/value pairs in write order.
    pub strings: Vec<(Vec<u8>, Vec<u8>)>,
    /// The image.
    pub image: Vec<u8>,
}

impl OwnedImage {
    fn spec(&self) -> ImageSpec<'_> {
        ImageSpec {
            image_kind: self.image_kind,
            offload_kind: self.offload_kind,
            flags: self.flags,
            strings: self
                .strings
                .iter()
                .map(|(k, v)| (k.as_slice(), v.as_slice()))
                .collect(),
            image_size: self.image.len() as u64,
        }
    }

    /// The image as an entry of a binary (borrowing).
    pub fn from_entry(e: &Entry<'_>) -> OwnedImage {
        OwnedImage {
            image_kind: e.image_kind,
            offload_kind: e.offload_kind,
            flags: e.flags,
            strings: e
                .strings
                .iter()
                .map(|p| (p.key.to_vec(), p.value.to_vec()))
                .collect(),
            image: e.image.to_vec(),
        }
    }
}

/// Write one version 1 binary.
pub fn write_v1(img: &OwnedImage) -> Result<Vec<u8>> {
    layout_v1(&img.spec())?.to_vec(&[&img.image])
}

/// Write version 1 binaries, one per image, concatenated (what every
/// release's packager writes for several `--image`).
pub fn write_v1_all(images: &[OwnedImage]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for i in images {
        out.extend_from_slice(&write_v1(i)?);
    }
    Ok(out)
}

/// Compression of a version 3 body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// zstd at the given level (LLVM's default is 5).
    Zstd(i32),
    /// zlib at the given level 0–9 (LLVM's default is 6).
    Zlib(u32),
}

/// Write one binary of version 2 or 3 holding every image; version 3 may
/// compress the body after the header (OB-19).
pub fn write_multi(
    images: &[OwnedImage],
    version: u32,
    compression: Option<Compression>,
) -> Result<Vec<u8>> {
    let specs: Vec<ImageSpec<'_>> = images.iter().map(OwnedImage::spec).collect();
    let l = layout_multi(&specs, version)?;
    let imgs: Vec<&[u8]> = images.iter().map(|i| i.image.as_slice()).collect();
    let plain = l.to_vec(&imgs)?;
    let Some(c) = compression else {
        return Ok(plain);
    };
    if version != 3 {
        return Err(Error::rule(
            rules::OB_19,
            "only version 3 binaries can be compressed",
        ));
    }
    let body = &plain[HEADER_SIZE_V3 as usize..];
    let stream = match c {
        Compression::Zstd(level) => zstd::bulk::compress(body, level)?,
        Compression::Zlib(level) => {
            let mut e =
                flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level.min(9)));
            e.write_all(body)?;
            e.finish()?
        }
    };
    let size = HEADER_SIZE_V3 + stream.len() as u64;
    let mut out = Vec::with_capacity(size as usize + 8);
    out.extend_from_slice(&plain[..HEADER_SIZE_V3 as usize]);
    out[8..16].copy_from_slice(&size.to_le_bytes());
    out[32..40].copy_from_slice(&(plain.len() as u64).to_le_bytes());
    out.extend_from_slice(&stream);
    out.resize(align8(size).ok_or_else(overflow)? as usize, 0);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pk.22` first binary (llvm-behaviour-matrix.md §7).
    const PK22_FIRST: &str = "10ff10ad01000000a0000000000000002000000000000000280000000000000000000100000000004800000000000000020000000000000090000000000000001000000000000000690000000000000089000000000000006e000000000000007500000000000000006172636800747269706c65006e7670747836342d6e76696469612d6375646100736d5f373000004e565054582d494d4147452d534d3730";

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn writes_pk22() {
        let img = OwnedImage {
            image_kind: 0,
            offload_kind: 1,
            flags: 0,
            strings: vec![
                (b"arch".to_vec(), b"sm_70".to_vec()),
                (b"triple".to_vec(), b"nvptx64-nvidia-cuda".to_vec()),
            ],
            image: b"NVPTX-IMAGE-SM70".to_vec(),
        };
        assert_eq!(write_v1(&img).unwrap(), unhex(PK22_FIRST));
        let bytes = unhex(PK22_FIRST);
        let bins = parse_strict(&bytes, 0, ReadOptions::default()).unwrap();
        assert_eq!(bins.len(), 1);
        assert_eq!(OwnedImage::from_entry(&bins[0].entries[0]), img);
    }

    #[test]
    fn multi_round_trip() {
        let imgs = vec![
            OwnedImage {
                image_kind: 2,
                offload_kind: 4,
                flags: 0,
                strings: vec![(b"triple".to_vec(), b"amdgcn-amd-amdhsa".to_vec())],
                image: b"abc".to_vec(),
            },
            OwnedImage {
                image_kind: 1,
                offload_kind: 1,
                flags: 0,
                strings: vec![(b"arch".to_vec(), b"with\0nul".to_vec())],
                image: vec![7; 100],
            },
        ];
        for (v, c) in [
            (2, None),
            (3, None),
            (3, Some(Compression::Zstd(5))),
            (3, Some(Compression::Zlib(6))),
        ] {
            let bytes = write_multi(&imgs, v, c).unwrap();
            let bins = parse_strict(&bytes, 0, ReadOptions::default())
                .unwrap_or_else(|e| panic!("v{v} {c:?}: {e:?}"));
            let back: Vec<OwnedImage> =
                bins[0].entries.iter().map(OwnedImage::from_entry).collect();
            assert_eq!(back, imgs, "v{v} {c:?}");
        }
    }
}
