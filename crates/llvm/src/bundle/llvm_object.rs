//! LLVM 22's second bundle reader (and main's: [`find_in_sections_as`]):
//! how `llvm-objdump --offloading` and
//! `llvm-readobj --offloading` find bundles in an ELF file
//! (`object::extractOffloadBundleFatBinary`, llvm/lib/Object/OffloadBundle.cpp,
//! LLVM 22.1; spec/object-bundle.md, FAT-1 "LLVM 22's second reader").
//!
//! Unlike `clang-offload-bundler`, it selects sections by their contents
//! (any section starting with `__CLANG_OFFLOAD_BUNDLE__` or `CCOB`),
//! reads several bundles per section by searching for the next magic of
//! the same kind, and checks no entry range: an uncompressed entry's
//! offset is made absolute (section offset + bundle position + entry
//! offset, wrapping as LLVM's `uint64_t` does), a compressed entry's
//! offset stays relative to its decompressed bundle. What those offsets
//! name is for the caller to judge ([`FoundEntry::file_range`]).
//!
//! # Example
//!
//! A file whose one section, at offset 64, holds a bundle: found by its
//! contents, the device entry's offset made absolute.
//!
//! ```
//! use offload_kit_llvm::bundle::{binary, llvm_object::{self, SectionRange}};
//!
//! let bundle = binary::write_to_vec(
//!     &[(b"host-x86_64-unknown-linux-gnu-", b""), (b"hip-amdgcn-amd-amdhsa--gfx906", b"CODE")],
//!     8,
//! )?;
//! let mut file = vec![0u8; 64];
//! file.extend_from_slice(&bundle);
//! let section = SectionRange { index: 1, header_pos: 0, offset: 64, size: bundle.len() as u64, nobits: false };
//! let found = llvm_object::find_in_sections(&file, [section]).into_result().map_err(|(_, e)| e)?;
//! assert_eq!(found.len(), 2);
//! let (at, len) = found[1].file_range(file.len() as u64).unwrap();
//! assert_eq!(&file[at as usize..][..len as usize], b"CODE");
//! # Ok::<(), offload_kit_llvm::Error>(())
//! ```

use crate::budget::Budget;
use crate::bundle::ccob::{self, LlvmDecompress};
use crate::format::bundle::MAGIC;
use crate::format::ccob::MAGIC as CCOB_MAGIC;

/// The plain magic's length (`Source` gives arrays a `len` of its own).
const MAGIC_LEN: usize = 24;
use crate::host::elf::Elf;
use crate::source::{Reader, Source, Sub};
use crate::{rules, Error, Release};
use std::io::Read;

/// One entry as LLVM 22's reader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundEntry {
    /// The bundle's number, from 0 across the whole file in section order.
    pub bundle: usize,
    /// The entry ID, raw.
    pub id: Vec<u8>,
    /// Uncompressed: the absolute offset in the file (wrapping).
    /// Compressed: the offset within the decompressed bundle.
    pub offset: u64,
    /// The entry's size.
    pub size: u64,
    /// Whether the bundle was compressed.
    pub compressed: bool,
    /// Where the entry's record lies: in the file (uncompressed), or in the
    /// decompressed bundle (compressed: see `compressed_at`).
    pub record: u64,
    /// Where the compressed bundle holding the entry starts in the file.
    pub compressed_at: Option<u64>,
}

impl FoundEntry {
    /// The error for this entry under `rule`: at its record in the file, or
    /// at its compressed bundle with the record's place in the
    /// decompressed bundle said (offsets nested in a `CCOB` are not file
    /// offsets).
    pub fn error(&self, rule: crate::rules::Rule, base: u64, message: String) -> Error {
        match self.compressed_at {
            Some(at) => Error::at(
                rule,
                base + at,
                format!(
                    "{message} (entry record at {:#x} of the bundle compressed here)",
                    self.record
                ),
            ),
            None => Error::at(rule, base + self.record, message),
        }
    }
}

impl FoundEntry {
    /// The bytes `llvm-objdump --offloading` writes for this entry: the
    /// range `offset .. offset + size` of the *file*, also for a
    /// compressed bundle (LLVM 22 reads the host file at the offset within
    /// the decompressed bundle). `None` when that range is not inside a
    /// file of `len` bytes: LLVM then copies memory it does not own
    /// (SIGSEGV, or heap bytes in the output).
    pub fn file_range(&self, len: u64) -> Option<(u64, u64)> {
        if self.size == 0 {
            // Nothing is copied: an empty file, wherever the offset points.
            return Some((len.min(self.offset), 0));
        }
        let end = self.offset.checked_add(self.size)?;
        (end <= len).then_some((self.offset, self.size))
    }
}

/// LLVM's message for a buffer too short for the magic or entry count.
pub const INVALID_DATA: &str = "Invalid data was encountered while parsing the file";
/// LLVM's message for an entry record cut off.
pub const STREAM_TOO_SHORT: &str =
    "Stream Error: The stream is too short to perform the requested operation.";
/// LLVM's message for section contents outside the file.
pub const UNEXPECTED_EOF: &str = "The end of the file was unexpectedly encountered";

/// A section as the reader needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectionRange {
    /// The section's index (for reports).
    pub index: usize,
    /// Where its header lies in the file (for reports).
    pub header_pos: u64,
    /// `sh_offset`.
    pub offset: u64,
    /// `sh_size`.
    pub size: u64,
    /// `SHT_NOBITS`: no contents in the file.
    pub nobits: bool,
}

/// What LLVM 22 collects from a file: the entries of every bundle read
/// whole, and the failure that stopped it, if one did: LLVM's message
/// (which `llvm-objdump` prefixes with `while extracting offload FatBin
/// bundles: ` and `llvm-readobj` prints as a warning) and offload-kit's
/// rule and absolute offset.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Found {
    /// Entries of the bundles read before any failure.
    pub entries: Vec<FoundEntry>,
    /// The failure, if any.
    pub failure: Option<(String, Error)>,
    /// LLVM main only: each compressed bundle's number and decompressed
    /// bytes, which main's objdump copies its entries from (llvm#192729).
    pub decompressed: Vec<(usize, Vec<u8>)>,
}

impl Found {
    /// The entries, or the failure when there was one.
    pub fn into_result(self) -> Result<Vec<FoundEntry>, (String, Error)> {
        match self.failure {
            Some(f) => Err(f),
            None => Ok(self.entries),
        }
    }
}

/// Every bundle entry of an ELF file, as LLVM 22 collects them before
/// printing or writing anything.
pub fn find_bundles(elf: &Elf<'_>) -> Found {
    find_bundles_in(elf, &elf.data)
}

/// [`find_bundles`] reading section contents from `src` (the file `elf`
/// was parsed from, read through windows: a mapped multi-GB library is
/// scanned with one window resident at a time).
pub fn find_bundles_in(elf: &Elf<'_>, src: &dyn Source) -> Found {
    find_bundles_as(elf, src, Release::L22, Budget::default())
}

/// [`find_bundles_in`] as `release` reads (22, or main: see
/// [`find_in_sections_as`]), holding at most `budget`.
pub fn find_bundles_as(elf: &Elf<'_>, src: &dyn Source, release: Release, budget: Budget) -> Found {
    let sections = elf.sections.iter().map(|s| SectionRange {
        index: s.index,
        header_pos: s.header_pos,
        offset: s.offset,
        size: s.size,
        nobits: s.sh_type == crate::host::elf::SHT_NOBITS,
    });
    find_in_sections_as(src, sections, release, budget)
}

/// [`find_bundles`] over the sections of `src` given in header order.
pub fn find_in_sections(
    src: &dyn Source,
    sections: impl IntoIterator<Item = SectionRange>,
) -> Found {
    find_in_sections_as(src, sections, Release::L22, Budget::default())
}

/// [`find_in_sections`] as `release` reads. LLVM main differs from 22
/// (spec/object-bundle.md, *LLVM main*): a version 2 or 3 compressed
/// bundle ends at its total size, and the next `CCOB` is searched from
/// there on (llvm#205587, #206745); the decompressed bundles are kept in
/// [`Found::decompressed`] (llvm#192729). What is held, the entries and
/// the decompressed bundles, stays within `budget` (CLI-6).
pub fn find_in_sections_as(
    src: &dyn Source,
    sections: impl IntoIterator<Item = SectionRange>,
    release: Release,
    budget: Budget,
) -> Found {
    let mut found = Found::default();
    let mut held = Held { bytes: 0, budget };
    if let Err(f) = collect(src, sections, release, &mut found, &mut held) {
        found.failure = Some(f);
    }
    found
}

fn collect(
    src: &dyn Source,
    sections: impl IntoIterator<Item = SectionRange>,
    release: Release,
    found: &mut Found,
    held: &mut Held,
) -> Result<(), (String, Error)> {
    let mut bundle = 0usize;
    // LLVM holds every entry of every bundle before it prints one; bundles
    // can nest their records in each other's (the next magic is searched
    // from 24 bytes on), so what is held can grow with the square of the
    // section: bounded by the memory budget (CLI-6).
    for s in sections {
        if s.nobits {
            continue; // getContents: empty
        }
        // Anything else must lie inside the file, whatever it is for.
        let Some(contents) = Sub::new(src, s.offset, s.size) else {
            return Err((
                UNEXPECTED_EOF.to_string(),
                Error::at(
                    rules::OBJ_2,
                    s.header_pos,
                    format!(
                        "section {} [{:#x}, +{:#x}) does not lie inside the file of {} bytes",
                        s.index,
                        s.offset,
                        s.size,
                        src.len()
                    ),
                ),
            ));
        };
        if kind_at(&contents, 0).is_some() {
            let mut walk = Walk {
                bundle: &mut bundle,
                found,
                held: &mut *held,
                release,
            };
            section_bundles(&contents, s.offset, &mut walk)?;
        }
    }
    Ok(())
}

/// What starts at `off`: a plain bundle (its magic and at least one byte
/// more, as `identify_magic` wants), a compressed one, or neither.
fn kind_at(c: &dyn Source, off: u64) -> Option<bool> {
    let mut head = [0u8; 25];
    let n = c.len().saturating_sub(off).min(25) as usize;
    if !c.read_at(off, &mut head[..n]) {
        return None;
    }
    let head = &head[..n];
    if head.starts_with(CCOB_MAGIC) {
        Some(true)
    } else if head.len() > MAGIC_LEN && head.starts_with(MAGIC) {
        Some(false)
    } else {
        None
    }
}

/// The position of the first `needle` in `c[from..]`, searched one window
/// at a time (windows overlap by the needle's length less one). A window
/// that cannot be read is an error, not "not found".
fn find(c: &dyn Source, from: u64, needle: &[u8]) -> Result<Option<u64>, (String, Error)> {
    let step = c.window_size().max(1 << 20);
    let mut pos = from;
    while pos < c.len() {
        let n = step.min(c.len() - pos);
        let w = c.window(pos, n).ok_or_else(|| {
            (
                UNEXPECTED_EOF.to_string(),
                Error::other(format!("cannot read {n} bytes at {pos:#x} of the section")),
            )
        })?;
        if let Some(i) = memchr::memmem::find(&w, needle) {
            return Ok(Some(pos + i as u64));
        }
        if pos + n >= c.len() {
            break;
        }
        pos += n - (needle.len() as u64 - 1);
    }
    Ok(None)
}

/// The bytes collected so far, and the memory budget they must stay in
/// (CLI-6).
struct Held {
    bytes: u64,
    budget: Budget,
}

/// Count one more entry with an ID of `id_len` bytes into `held`. An entry
/// counts twice its record: the vector holding it grows by doubling, and
/// the ID's allocation has a header of its own.
fn hold(held: &mut Held, id_len: u64, at: u64) -> Result<(), (String, Error)> {
    held.bytes += 2 * std::mem::size_of::<FoundEntry>() as u64 + id_len.next_multiple_of(16) + 16;
    let used = &held.bytes;
    if held.budget.exceeded(*used) {
        return Err((
            "out of memory".to_string(),
            Error::at(
                rules::CLI_6,
                at,
                format!(
                    "the entries collected so far take {} bytes: past the memory budget (LLVM 22 holds every entry before it prints one)",
                    *used
                ),
            ),
        ));
    }
    Ok(())
}

/// What the walk of one file carries from section to section.
struct Walk<'w> {
    bundle: &'w mut usize,
    found: &'w mut Found,
    held: &'w mut Held,
    release: Release,
}

/// `extractOffloadBundle`: the bundles of one section's contents `c`.
fn section_bundles(
    c: &dyn Source,
    section_offset: u64,
    w: &mut Walk<'_>,
) -> Result<(), (String, Error)> {
    let mut off = 0u64;
    let mut next = Some(0u64);
    while let Some(n) = next {
        if off >= c.len() {
            break;
        }
        let at = section_offset + off;
        match kind_at(c, off) {
            Some(true) => {
                // main: a v2/v3 bundle ends at its total size (cut at the
                // section's end), the next searched from there; 22, and
                // main for v1: at the next `CCOB` after the magic.
                let total = (w.release.quirks().main_ccob_reader)
                    .then(|| total_size(c, off))
                    .flatten();
                let (len, end) = match total {
                    Some(t) => {
                        let len = t.min(c.len() - off);
                        (len, find(c, off + len, CCOB_MAGIC)?.map(|p| p - off))
                    }
                    None => {
                        let e = find(c, off + 4, CCOB_MAGIC)?.map_or(c.len(), |p| p) - off;
                        (e, Some(e))
                    }
                };
                next = end;
                let window = c.window(off, len).ok_or_else(|| {
                    (
                        UNEXPECTED_EOF.to_string(),
                        Error::at(rules::OBJ_2, at, "the compressed bundle cannot be read"),
                    )
                })?;
                let bytes = decompress(&window, at, w.held.budget)?;
                let new = read_entries(&bytes.as_ref(), 0, 0, Some(at), *w.bundle, w.held)?;
                w.found.entries.extend(new);
                if w.release.quirks().main_ccob_reader {
                    // Held until the entries are written.
                    w.held.bytes += bytes.len() as u64;
                    hold(w.held, 0, at)?;
                    w.found.decompressed.push((*w.bundle, bytes.into_owned()));
                }
                *w.bundle += 1;
            }
            Some(false) => {
                let rest = Sub::new(c, off, c.len() - off).expect("inside");
                let new = read_entries(&rest, at, at, None, *w.bundle, w.held)?;
                w.found.entries.extend(new);
                *w.bundle += 1;
                next = find(c, off + MAGIC_LEN as u64, MAGIC)?.map(|p| p - off);
            }
            // Neither: LLVM keeps the previous step (never 0 here).
            None => next = Some(n),
        }
        match next {
            Some(0) | None => break,
            Some(step) => off += step,
        }
    }
    Ok(())
}

/// The total size a version 2 or 3 compressed bundle at `off` declares
/// (`CompressedBundleHeader::tryParse`), when it is at least a header.
fn total_size(c: &dyn Source, off: u64) -> Option<u64> {
    let mut head = [0u8; 32];
    let n = c.len().saturating_sub(off).min(32) as usize;
    if !c.read_at(off, &mut head[..n]) {
        return None;
    }
    let h = ccob::parse_header(&head[..n], 0).ok()?;
    // A total size of 0 would search from the magic again; whether main's
    // Object copy loops there as clang's does (CCOB-4) is not stored, so
    // such a blob is read as 22 reads it.
    h.total_size.filter(|&t| t >= 4)
}

/// The Object library's copy of the decoder: it reads a version 2 or 3
/// bundle up to its total size when that lies inside the blob (observed:
/// two bundles back to back with padding between them decode, a total
/// size short of the stream does not), and words its failures in lower
/// case.
fn decompress(
    blob: &[u8],
    at: u64,
    budget: Budget,
) -> Result<std::borrow::Cow<'_, [u8]>, (String, Error)> {
    let blob = match ccob::parse_header(blob, 0).ok().and_then(|h| h.total_size) {
        Some(total) if total <= blob.len() as u64 => &blob[..total as usize],
        _ => blob,
    };
    match ccob::llvm_decompress_within(blob, Release::L22, budget) {
        LlvmDecompress::Data(d) => Ok(std::borrow::Cow::Owned(d)),
        LlvmDecompress::Plain => Ok(std::borrow::Cow::Borrowed(blob)),
        LlvmDecompress::Fails(m, e) => {
            let m = match m.strip_prefix("Could not") {
                Some(rest) => format!("could not{rest}"),
                None => m,
            };
            Err((format!("failed to decompress input: {m}"), e.rebase(at)))
        }
    }
}

/// `OffloadBundleFatBin::readEntries` on `b` (the bundle from its magic):
/// entry offsets get `shift` added; `base` is `b`'s position for reports.
/// LLVM keeps a bundle only once all its records are read.
fn read_entries(
    b: &dyn Source,
    shift: u64,
    base: u64,
    compressed_at: Option<u64>,
    bundle: usize,
    held: &mut Held,
) -> Result<Vec<FoundEntry>, (String, Error)> {
    let mut found = Vec::new();
    let u64_at = |p: u64| -> Option<u64> {
        let mut v = [0u8; 8];
        b.read_at(p, &mut v).then(|| u64::from_le_bytes(v))
    };
    let mut magic = [0u8; 24];
    let Some(count) =
        u64_at(MAGIC_LEN as u64).filter(|_| b.read_at(0, &mut magic) && magic == *MAGIC)
    else {
        return Err((
            INVALID_DATA.to_string(),
            Error::at(
                rules::BIN_2,
                base,
                "the bundle has no magic and entry count",
            ),
        ));
    };
    let mut p = MAGIC_LEN as u64 + 8;
    // The records are read in order through one buffer: a read per field
    // would be a system call per field of a file read with `pread`.
    let mut records = Reader::new(b, p, b.len(), 64 << 10);
    // Each record takes at least 24 bytes: the count is bounded by `b`.
    for i in 0..count {
        let rec = p;
        let short = || {
            (
                STREAM_TOO_SHORT.to_string(),
                Error::at(
                    rules::BIN_2,
                    base + rec,
                    format!("entry {i} of {count} is cut off by the end of the bundle"),
                ),
            )
        };
        let mut fields = [0u8; 24];
        records.read_exact(&mut fields).map_err(|_| short())?;
        let field = |k: usize| u64::from_le_bytes(fields[k..k + 8].try_into().expect("8 bytes"));
        let (offset, size, len) = (field(0), field(8), field(16));
        p += 24;
        // The ID is read only once it is known to lie inside `b`.
        let end = p
            .checked_add(len)
            .filter(|&e| e <= b.len())
            .ok_or_else(short)?;
        hold(held, len, compressed_at.unwrap_or(base + rec))?;
        let mut id = vec![0u8; (end - p) as usize];
        records.read_exact(&mut id).map_err(|_| short())?;
        p = end;
        found.push(FoundEntry {
            bundle,
            id,
            offset: offset.wrapping_add(shift),
            size,
            compressed: compressed_at.is_some(),
            record: base + rec,
            compressed_at,
        });
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One section spanning all of `data`.
    fn whole(data: &[u8]) -> SectionRange {
        SectionRange {
            index: 1,
            header_pos: 0,
            offset: 0,
            size: data.len() as u64,
            nobits: false,
        }
    }

    /// Bundles whose records hold each other's headers: LLVM reads the
    /// records of every bundle to the end of the section, so what it holds
    /// grows with the square of the section; the reader stops at the
    /// memory budget (CLI-6) instead.
    #[test]
    fn nested_bundles_stop_at_the_budget() {
        let n = 20_000u64;
        let mut section = Vec::new();
        for i in 0..n {
            section.extend_from_slice(MAGIC);
            section.extend_from_slice(&(n - i).to_le_bytes());
            // offset 0, size 0, an ID of 32 bytes: the next unit's header.
            section.extend_from_slice(&0u64.to_le_bytes());
            section.extend_from_slice(&0u64.to_le_bytes());
            section.extend_from_slice(&32u64.to_le_bytes());
        }
        section.extend_from_slice(&[0u8; 32]);
        let s = whole(&section);
        let started = std::time::Instant::now();
        let found = find_in_sections(&section, [s]);
        let (_, e) = found.failure.expect("stops");
        assert_eq!(e.rule_id(), Some("CLI-6"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
    }

    /// Two bundles in one section, the second found by searching for the
    /// magic, its offsets made absolute; a section that does not start with
    /// a magic is passed over.
    #[test]
    fn several_bundles_per_section() {
        let one =
            crate::bundle::binary::write_to_vec(&[(b"host-x86_64-unknown-linux-gnu-", b"A")], 8)
                .unwrap();
        let two =
            crate::bundle::binary::write_to_vec(&[(b"hip-amdgcn-amd-amdhsa--gfx906", b"BB")], 8)
                .unwrap();
        let mut section = one.clone();
        section.extend_from_slice(&two);
        let s = whole(&section);
        let found = find_in_sections(&section, [s])
            .into_result()
            .map_err(|(_, e)| e)
            .unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(
            (found[1].bundle, found[1].offset),
            (1, one.len() as u64 + (two.len() as u64 - 2))
        );
        // A section that starts with neither magic is passed over.
        let s = SectionRange {
            index: 1,
            header_pos: 0,
            offset: 1,
            size: section.len() as u64 - 1,
            nobits: false,
        };
        assert!(find_in_sections(&section, [s])
            .into_result()
            .unwrap()
            .is_empty());
    }
}
