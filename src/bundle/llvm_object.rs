//! LLVM 22's second bundle reader: how `llvm-objdump --offloading` and
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
//! use offload_kit::bundle::{binary, llvm_object::{self, SectionRange}};
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
//! # Ok::<(), offload_kit::Error>(())
//! ```

use crate::bundle::ccob::{self, LlvmDecompress};
use crate::format::bundle::MAGIC;
use crate::format::ccob::MAGIC as CCOB_MAGIC;
use crate::host::elf::Elf;
use crate::{rules, Error, Release};

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
    /// Where the entry record's offset field lies in the file (uncompressed)
    /// or in the decompressed bundle (compressed), for error reports.
    pub record: u64,
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
    let sections = elf.sections.iter().map(|s| SectionRange {
        index: s.index,
        header_pos: s.header_pos,
        offset: s.offset,
        size: s.size,
        nobits: s.sh_type == crate::host::elf::SHT_NOBITS,
    });
    find_in_sections(elf.data, sections)
}

/// [`find_bundles`] over the sections of `data` given in header order.
pub fn find_in_sections(data: &[u8], sections: impl IntoIterator<Item = SectionRange>) -> Found {
    let mut found = Vec::new();
    let failure = collect(data, sections, &mut found).err();
    Found {
        entries: found,
        failure,
    }
}

fn collect(
    data: &[u8],
    sections: impl IntoIterator<Item = SectionRange>,
    found: &mut Vec<FoundEntry>,
) -> Result<(), (String, Error)> {
    let mut bundle = 0usize;
    for s in sections {
        // getContents: SHT_NOBITS is empty; anything else must lie inside
        // the file, whatever the section is for.
        let range = usize::try_from(s.offset)
            .ok()
            .zip(usize::try_from(s.size).ok())
            .and_then(|(o, n)| data.get(o..o.checked_add(n)?));
        let contents: &[u8] = match (s.nobits, range) {
            (true, _) => &[],
            (false, Some(c)) => c,
            (false, None) => {
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
                            data.len()
                        ),
                    ),
                ))
            }
        };
        let plain = contents.len() > MAGIC.len() && contents.starts_with(MAGIC);
        if !plain && !contents.starts_with(CCOB_MAGIC) {
            continue;
        }
        section_bundles(contents, s.offset, &mut bundle, found)?;
    }
    Ok(())
}

/// `extractOffloadBundle`: the bundles of one section's contents.
fn section_bundles(
    c: &[u8],
    section_offset: u64,
    bundle: &mut usize,
    found: &mut Vec<FoundEntry>,
) -> Result<(), (String, Error)> {
    let mut off = 0usize;
    let mut next = Some(0usize);
    while let Some(n) = next {
        if off >= c.len() {
            break;
        }
        let buf = &c[off..];
        let at = section_offset + off as u64;
        if buf.starts_with(CCOB_MAGIC) {
            let end = memchr::memmem::find(&buf[4..], CCOB_MAGIC).map_or(buf.len(), |p| p + 4);
            next = Some(end);
            // The Object library's copy of the decoder reads a version 2
            // or 3 bundle up to its total size when that lies inside the
            // blob (observed: two bundles back to back with padding between
            // them decode, a total size short of the stream does not), and
            // words its failures in lower case.
            let blob = match ccob::parse_header(&buf[..end], 0)
                .ok()
                .and_then(|h| h.total_size)
            {
                Some(total) if total <= end as u64 => &buf[..total as usize],
                _ => &buf[..end],
            };
            let bytes = match ccob::llvm_decompress(blob, Release::L22) {
                LlvmDecompress::Data(d) => std::borrow::Cow::Owned(d),
                LlvmDecompress::Plain => std::borrow::Cow::Borrowed(blob),
                LlvmDecompress::Fails(m, e) => {
                    let m = match m.strip_prefix("Could not") {
                        Some(rest) => format!("could not{rest}"),
                        None => m,
                    };
                    return Err((format!("failed to decompress input: {m}"), e.rebase(at)));
                }
            };
            found.extend(read_entries(&bytes, 0, 0, true, *bundle)?);
            *bundle += 1;
        } else if buf.len() > MAGIC.len() && buf.starts_with(MAGIC) {
            found.extend(read_entries(buf, at, at, false, *bundle)?);
            *bundle += 1;
            next = memchr::memmem::find(&buf[MAGIC.len()..], MAGIC).map(|p| p + MAGIC.len());
        } else {
            // Neither: LLVM keeps the previous step (never 0 here).
            next = Some(n);
        }
        match next {
            Some(0) => break,
            Some(step) => off += step,
            None => break,
        }
    }
    Ok(())
}

/// `OffloadBundleFatBin::readEntries` on `b` (the bundle from its magic):
/// entry offsets get `shift` added; `base` is `b`'s position for reports.
/// LLVM keeps a bundle only once all its records are read.
fn read_entries(
    b: &[u8],
    shift: u64,
    base: u64,
    compressed: bool,
    bundle: usize,
) -> Result<Vec<FoundEntry>, (String, Error)> {
    let mut found = Vec::new();
    let u64_at = |p: usize| -> Option<u64> {
        let s = b.get(p..p.checked_add(8)?)?;
        Some(u64::from_le_bytes(s.try_into().ok()?))
    };
    let Some(count) = u64_at(MAGIC.len()).filter(|_| b.starts_with(MAGIC)) else {
        return Err((
            INVALID_DATA.to_string(),
            Error::at(
                rules::BIN_2,
                base,
                "the bundle has no magic and entry count",
            ),
        ));
    };
    let mut p = MAGIC.len() + 8;
    // Each record takes at least 24 bytes: the count is bounded by `b`.
    for i in 0..count {
        let rec = p;
        let short = || {
            (
                STREAM_TOO_SHORT.to_string(),
                Error::at(
                    rules::BIN_2,
                    base + rec as u64,
                    format!("entry {i} of {count} is cut off by the end of the bundle"),
                ),
            )
        };
        let (Some(offset), Some(size), Some(len)) = (u64_at(p), u64_at(p + 8), u64_at(p + 16))
        else {
            return Err(short());
        };
        p += 24;
        let id = usize::try_from(len)
            .ok()
            .and_then(|l| b.get(p..p.checked_add(l)?))
            .ok_or_else(short)?;
        p += id.len();
        found.push(FoundEntry {
            bundle,
            id: id.to_vec(),
            offset: offset.wrapping_add(shift),
            size,
            compressed,
            record: base + rec as u64,
        });
    }
    Ok(found)
}
