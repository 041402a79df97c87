//! Host ELF files (objects, shared libraries, executables) with embedded
//! fat binaries: the `.hip_fatbin` section and `__CLANG_OFFLOAD_BUNDLE__*`
//! sections.
//!
//! A `.hip_fatbin` section holds one or more bundles back to back, one per
//! translation unit the linker merged, each starting at a multiple of 4096
//! from the section start (the HIP runtime maps them page-aligned). Each
//! bundle is bounded by its own header: a binary bundle by its records
//! ([`binary::parse_strict`] with [`Extent::Embedded`]), a compressed
//! bundle by its total-size field. The walk never searches for a magic
//! inside data. See `spec/object-bundle.md` (FAT-1 … FAT-4).
//!
//! # Example
//!
//! Walk a dumped `.hip_fatbin` section holding two bundles, then dirty the
//! padding between them.
//!
//! ```
//! use offload_kit_llvm::bundle::{binary, fatbin};
//!
//! let mut sec = binary::write_to_vec(&[(b"hip-amdgcn-amd-amdhsa--gfx906", b"A")], 1).unwrap();
//! sec.resize(fatbin::FATBIN_ALIGN as usize, 0); // the next bundle starts at 4096
//! sec.extend(binary::write_to_vec(&[(b"hip-amdgcn-amd-amdhsa--gfx90a", b"B")], 1).unwrap());
//! let listing = fatbin::inspect_section_dump(&sec);
//! assert!(listing.problems.is_empty());
//! let found: Vec<(&str, usize)> = listing.entries.iter().map(|e| (e.id.as_str(), e.bundle)).collect();
//! assert_eq!(found, [("hip-amdgcn-amd-amdhsa--gfx906", 0), ("hip-amdgcn-amd-amdhsa--gfx90a", 1)]);
//! assert_eq!(listing.bundles[1].offset, 4096);
//!
//! // A non-zero byte in the padding after the first bundle violates FAT-2.
//! sec[100] = 1;
//! let problems = fatbin::inspect_section_dump(&sec).problems;
//! assert_eq!((problems[0].rule_id(), problems[0].offset()), (Some("FAT-2"), Some(100)));
//! ```

use crate::budget::Budget;
use crate::bundle::binary::{self, Extent};
use crate::bundle::object;
use crate::error::{Error, Errors, Result};
use crate::format::bundle::MAGIC as BUNDLE_MAGIC;
use crate::format::ccob;
use crate::host::elf::{Elf, SHT_NOBITS, SHT_PROGBITS};
use crate::rules;
use crate::source::{Source, Window};
use offload_kit_format::kpack;
use std::fmt;

/// The section HIP host code embeds its device code in.
pub const HIP_FATBIN: &str = ".hip_fatbin";

/// The alignment of every bundle in `.hip_fatbin` (FAT-1, FAT-2).
pub const FATBIN_ALIGN: u64 = 4096;

/// What a listed entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An entry of a binary bundle in `.hip_fatbin`.
    Embedded,
    /// A `__CLANG_OFFLOAD_BUNDLE__<ID>` section of an object-file bundle.
    Section,
    /// A compressed bundle (`CCOB`) in `.hip_fatbin`, listed whole: its
    /// entries are not read yet.
    Compressed {
        /// Format version.
        version: u16,
        /// Compression method (0 zlib, 1 zstd).
        method: u16,
    },
}

/// One listed entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatEntry {
    /// The entry ID (empty for a compressed bundle).
    pub id: String,
    /// Absolute offset of the payload (or of the compressed bundle) in the file.
    pub offset: u64,
    /// Payload size (or the compressed bundle's total size).
    pub size: u64,
    /// Index of the bundle within its section (0 for bundle sections).
    pub bundle: usize,
    /// The section holding the entry.
    pub section: String,
    /// That section's index.
    pub section_index: usize,
    /// What the entry is.
    pub kind: Kind,
}

impl fmt::Display for FatEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Kind::Compressed { version, method } => write!(
                f,
                "compressed bundle at offset 0x{:x} (not yet supported): version {version}, method {method}, {} bytes, bundle {} of section {}",
                self.offset, self.size, self.bundle, self.section
            ),
            Kind::Embedded | Kind::Section => write!(
                f,
                "{}\toffset 0x{:x}\tsize {}\tbundle {}\tsection {}",
                self.id, self.offset, self.size, self.bundle, self.section
            ),
        }
    }
}

/// One bundle found in a `.hip_fatbin` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Index of the bundle within its section.
    pub index: usize,
    /// Absolute offset of the bundle's first byte.
    pub offset: u64,
    /// The bundle's extent: header and payloads, or the compressed total size.
    pub size: u64,
    /// `Some((version, method))` for a compressed bundle.
    pub compressed: Option<(u16, u16)>,
}

/// What a walk over a file or a section found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Listing {
    /// Entries in file order: bundles in section order, entries in header order.
    pub entries: Vec<FatEntry>,
    /// The bundles of `.hip_fatbin` sections, in order.
    pub bundles: Vec<Span>,
    /// Every strict violation found (FAT-*, BIN-*, OBJ-*, ID-*), sorted by offset.
    pub problems: Vec<Error>,
    /// A HIPK host's reference to its kpack archives (spec/kpack.md HIPK-1).
    pub kpack_ref: Option<kpack::HostRef>,
}

/// Walk the bytes of one `.hip_fatbin` section (or a file dumped from one):
/// `sec` starts at absolute offset `base`. Entries, bundles and problems
/// are appended to `out`; the walk stops at the first bundle it cannot
/// bound.
pub fn walk_section(sec: &[u8], base: u64, name: &str, index: usize, out: &mut Listing) {
    let rest_at = |pos: u64| sec.get(pos as usize..).map(Window::Borrowed);
    let mut walked = Walked::within(Budget::default());
    walk(
        &rest_at,
        sec.len() as u64,
        base,
        name,
        index,
        out,
        &mut walked,
    );
}

/// The bundles a walk over one file has read, by absolute offset: the
/// absolute end of each bundle read whole, `None` where the walk stopped.
/// Section headers may name the same bytes any number of times; each bundle
/// is read, listed and reported once, so that work and output follow the
/// file's bytes, not headers × entries. Each bundle's entries are held
/// within `budget` (CLI-6).
struct Walked {
    ends: std::collections::HashMap<u64, Option<u64>>,
    budget: Budget,
}

impl Walked {
    fn within(budget: Budget) -> Walked {
        Walked {
            ends: Default::default(),
            budget,
        }
    }
}

/// [`walk_section`] over a section of `len` bytes whose remainder from
/// relative position `pos` is `rest_at(pos)`: each bundle is read through
/// its own window, released before the next bundle is read.
fn walk<'s>(
    rest_at: &dyn Fn(u64) -> Option<Window<'s>>,
    len: u64,
    base: u64,
    name: &str,
    index: usize,
    out: &mut Listing,
    walked: &mut Walked,
) {
    let mut pos = 0u64;
    let mut bundle = 0usize;
    while pos < len {
        match walked.ends.get(&(base + pos)) {
            // Read before, through another header: go on after it.
            Some(&Some(end)) => {
                pos = (end - base)
                    .min(len)
                    .next_multiple_of(FATBIN_ALIGN)
                    .min(len);
                bundle += 1;
                continue;
            }
            Some(None) => return,
            None => {}
        }
        // Until the bundle is bounded, a return below is where the walk stopped.
        walked.ends.insert(base + pos, None);
        let Some(window) = rest_at(pos) else {
            out.problems.push(Error::at(
                rules::FAT_1,
                base + pos,
                format!("cannot read section {name} at offset 0x{pos:x}"),
            ));
            return;
        };
        let rest: &[u8] = &window;
        let at = base + pos;
        let extent = if rest.starts_with(BUNDLE_MAGIC) {
            match binary::parse_strict_within(rest, at, Extent::Embedded, walked.budget) {
                Ok(b) => {
                    for e in &b.entries {
                        out.entries.push(FatEntry {
                            id: e.id_str().into_owned(),
                            offset: at + e.offset,
                            size: e.size,
                            bundle,
                            section: name.to_string(),
                            section_index: index,
                            kind: Kind::Embedded,
                        });
                    }
                    b.extent
                }
                Err(es) => {
                    out.problems.extend(
                        es.into_iter()
                            .map(|e| e.context(format!("in bundle {bundle} of section {name}"))),
                    );
                    return;
                }
            }
        } else if rest.starts_with(ccob::MAGIC) {
            let (version, method, total) = match compressed_extent(rest, at) {
                Ok(v) => v,
                Err(e) => {
                    out.problems
                        .push(e.context(format!("in bundle {bundle} of section {name}")));
                    return;
                }
            };
            // Version 1 has no size: it is listed up to the section end (where
            // LLVM 19 and 22 read it to), reported, and ends the walk.
            let size = total.unwrap_or(len - pos);
            out.entries.push(FatEntry {
                id: String::new(),
                offset: at,
                size,
                bundle,
                section: name.to_string(),
                section_index: index,
                kind: Kind::Compressed { version, method },
            });
            out.bundles.push(Span {
                index: bundle,
                offset: at,
                size,
                compressed: Some((version, method)),
            });
            if total.is_none() {
                out.problems.push(Error::at(
                    rules::FAT_3,
                    at + 4,
                    format!(
                        "bundle {bundle} of section {name}: compressed bundle version 1 has no total-size field, so nothing after it can be located"
                    ),
                ));
                return;
            }
            size
        } else {
            out.problems.push(Error::at(
                rules::FAT_1,
                at,
                format!(
                    "no bundle magic at offset 0x{pos:x} of section {name}: expected \"__CLANG_OFFLOAD_BUNDLE__\" or \"CCOB\""
                ),
            ));
            return;
        };
        if rest.starts_with(BUNDLE_MAGIC) {
            out.bundles.push(Span {
                index: bundle,
                offset: at,
                size: extent,
                compressed: None,
            });
        }
        let end = pos.saturating_add(extent).min(len);
        walked.ends.insert(base + pos, Some(base + end));
        let next = end.next_multiple_of(FATBIN_ALIGN).min(len);
        if let Some(p) = rest[(end - pos) as usize..(next - pos) as usize]
            .iter()
            .position(|&b| b != 0)
        {
            out.problems.push(Error::at(
                rules::FAT_2,
                base + end + p as u64,
                format!(
                    "non-zero byte in the padding after bundle {bundle} of section {name} (the padding runs to 0x{:x})",
                    base + next
                ),
            ));
        }
        pos = next;
        bundle += 1;
    }
}

/// Bound a compressed bundle at the start of `rest` (absolute offset
/// `at`): `(version, method, total size)`; the size is `None` for version
/// 1, which has no size field (FAT-3).
fn compressed_extent(rest: &[u8], at: u64) -> Result<(u16, u16, Option<u64>)> {
    let u16_at = |o: usize| rest.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let (Some(version), Some(method)) = (u16_at(4), u16_at(6)) else {
        return Err(Error::at(
            rules::FAT_3,
            at + rest.len() as u64,
            "the compressed bundle header is truncated before its version and method",
        ));
    };
    let total = match ccob::Layout::of(version) {
        Some(ccob::Layout {
            total_size: Some(field),
            ..
        }) => field.read(rest),
        Some(_) => return Ok((version, method, None)),
        None => {
            // The versions whose size a reader can bound: those with a
            // total-size field.
            let sized: Vec<String> = ccob::LAYOUTS
                .iter()
                .filter(|l| l.total_size.is_some())
                .map(|l| l.version.to_string())
                .collect();
            return Err(Error::at(
                rules::FAT_3,
                at + 4,
                format!(
                    "compressed bundle version {version} is not {}",
                    sized.join(" or ")
                ),
            ));
        }
    };
    let Some(total) = total else {
        return Err(Error::at(
            rules::FAT_3,
            at + rest.len() as u64,
            "the compressed bundle header is truncated before its total size",
        ));
    };
    let header = ccob::header_size(version).unwrap_or(0);
    if total < header || total > rest.len() as u64 {
        return Err(Error::at(
            rules::FAT_3,
            at + 8,
            format!(
                "compressed bundle total size {total} is below its {header}-byte header or runs past the section ({} bytes remain)",
                rest.len()
            ),
        ));
    }
    Ok((version, method, Some(total)))
}

/// Walk a host ELF file: every `.hip_fatbin` section and every
/// `__CLANG_OFFLOAD_BUNDLE__*` section. Structural ELF errors (OBJ-1,
/// OBJ-2) fail the walk; everything else is collected in
/// [`Listing::problems`].
///
/// Each bundle of `.hip_fatbin` is read through its own [`Source::window`],
/// so that a walk over a large mapped file keeps only one bundle's pages
/// resident at a time. Entries are held within the default memory budget
/// ([`inspect_within`] takes one).
pub fn inspect(src: &dyn Source) -> Result<Listing> {
    inspect_within(src, Budget::default())
}

/// [`inspect`] holding each bundle's entries within `budget` (CLI-6).
pub fn inspect_within(src: &dyn Source, budget: Budget) -> Result<Listing> {
    let data = src.bytes();
    let elf = Elf::parse(data)?;
    let mut out = Listing {
        problems: elf.check(),
        ..Listing::default()
    };
    let mut walked = Walked::within(budget);
    let hipk = kpack_host(&elf, data, &mut out);
    for s in elf
        .sections
        .iter()
        .filter(|s| s.name == HIP_FATBIN.as_bytes())
    {
        // A HIPK host's device code is in kpack archives (HIPK-1): ROCm's
        // splitter leaves `.hip_fatbin` NOBITS.
        let emptied = hipk && s.sh_type == SHT_NOBITS;
        if (s.sh_type != SHT_PROGBITS && !emptied) || s.align == 0 || s.align % FATBIN_ALIGN != 0 {
            out.problems.push(Error::at(
                rules::FAT_4,
                s.header_pos + 4,
                format!(
                    "section {} '{HIP_FATBIN}' has type {} and alignment {}; it must be SHT_PROGBITS aligned to a multiple of {FATBIN_ALIGN}{}",
                    s.index, s.sh_type, s.align,
                    // What a kpack split leaves: say what is missing.
                    if s.sh_type == SHT_NOBITS {
                        " (SHT_NOBITS is what a kpack split leaves, with a .rocm_kpack_ref naming its archives, HIPK-1: there is none here)"
                    } else {
                        ""
                    }
                ),
            ));
        }
        if s.sh_type == SHT_PROGBITS && s.data(data).is_some() {
            let (offset, size) = (s.offset, s.size);
            let rest_at = |pos: u64| src.window(offset + pos, size - pos);
            walk(
                &rest_at,
                size,
                offset,
                HIP_FATBIN,
                s.index,
                &mut out,
                &mut walked,
            );
        }
    }
    let entries = object::scan(&elf);
    if !entries.is_empty() {
        let (_, errs) = object::check_entries(&elf, &entries);
        out.problems.extend(errs);
        for e in &entries {
            out.entries.push(FatEntry {
                id: e.id_str().into_owned(),
                offset: e.offset,
                size: e.size,
                bundle: 0,
                section: String::from_utf8_lossy(
                    elf.sections.get(e.section).map_or(&[][..], |s| s.name),
                )
                .into_owned(),
                section_index: e.section,
                kind: Kind::Section,
            });
        }
    }
    out.problems.sort_by_key(|e| e.offset());
    Ok(out)
}

/// Whether `elf` is a HIPK host (spec/kpack.md HIPK-1); its
/// `.rocm_kpack_ref` is read into `out.kpack_ref`, or is a problem.
fn kpack_host(elf: &Elf<'_>, data: &[u8], out: &mut Listing) -> bool {
    match kpack_ref(elf, data) {
        None => false,
        Some(Ok(r)) => {
            out.kpack_ref = Some(r);
            true
        }
        Some(Err(e)) => {
            out.problems.push(e);
            true
        }
    }
}

/// A HIPK host's reference to its kpack archives (spec/kpack.md HIPK-1):
/// `None` unless the fat-binary wrapper's magic is `HIPK`; then what its
/// `.rocm_kpack_ref` says, or why it cannot be read.
pub fn kpack_ref(elf: &Elf<'_>, data: &[u8]) -> Option<Result<kpack::HostRef>> {
    let section = |name: &str| elf.sections.iter().find(|s| s.name == name.as_bytes());
    let wrapper = section(kpack::WRAPPER_SECTION).and_then(|s| s.data(data));
    if !wrapper.is_some_and(|w| w.starts_with(kpack::HOST_MAGIC)) {
        return None;
    }
    if let Err(e) = loadable(elf) {
        return Some(Err(e));
    }
    Some(
        match section(kpack::REF_SECTION).map(|s| (s.data(data), s.offset)) {
            Some((Some(bytes), at)) => kpack::parse_host_ref(bytes, at),
            _ => Err(Error::at(
                rules::HIPK_1,
                0,
                format!(
                    "the wrapper says HIPK but there is no {} section with contents",
                    kpack::REF_SECTION
                ),
            )),
        },
    )
}

/// HIPK-4: every `PT_LOAD` of a HIPK host is one glibc maps (address
/// congruent to offset modulo the page; glibc 2.36 ignores `p_align`), or
/// the host runs nowhere.
fn loadable(elf: &Elf<'_>) -> Result<()> {
    const PT_LOAD: u32 = 1;
    const PAGE: u64 = 4096;
    for (i, s) in elf.segments.iter().enumerate() {
        if s.p_type != PT_LOAD {
            continue;
        }
        if s.vaddr.wrapping_sub(s.offset) % PAGE == 0 {
            continue;
        }
        return Err(Error::at(
            rules::HIPK_4,
            s.header_pos,
            format!(
                "load segment {i} (p_offset 0x{:x}, p_vaddr 0x{:x}, p_align 0x{:x}): glibc refuses to map it (\"ELF load command address/offset not page-aligned\"), so the host does not load",
                s.offset, s.vaddr, s.align
            ),
        ));
    }
    Ok(())
}

/// The fat binary sections of a COFF object (`.hip_fatbin`) or PE image
/// (`.hip_fat`: image section names are cut to 8 bytes), walked as
/// [`inspect`] walks ELF ones, within `budget`. COFF has no bundle
/// sections.
pub fn inspect_coff(src: &dyn Source, budget: Budget) -> Result<Listing> {
    let c = crate::host::coff::parse(src.bytes())?;
    let mut out = Listing::default();
    let mut walked = Walked::within(budget);
    for s in c
        .sections
        .iter()
        .filter(|s| s.name == HIP_FATBIN.as_bytes() || s.name == HIP_FAT_PE)
    {
        let (offset, size) = (s.offset, s.size);
        let name = String::from_utf8_lossy(s.name).into_owned();
        let rest_at = |pos: u64| src.window(offset + pos, size - pos);
        walk(
            &rest_at,
            size,
            offset,
            &name,
            s.index,
            &mut out,
            &mut walked,
        );
    }
    out.problems.sort_by_key(|e| e.offset());
    Ok(out)
}

/// `.hip_fatbin` as a PE image names it.
const HIP_FAT_PE: &[u8] = b".hip_fat";

/// [`inspect`], failing with every problem when there is any.
pub fn list_strict(src: &dyn Source) -> Result<Listing, Errors> {
    list_strict_within(src, Budget::default())
}

/// [`inspect_within`], failing with every problem when there is any.
pub fn list_strict_within(src: &dyn Source, budget: Budget) -> Result<Listing, Errors> {
    let l = inspect_within(src, budget).map_err(|e| vec![e])?;
    if l.problems.is_empty() {
        Ok(l)
    } else {
        Err(l.problems.into())
    }
}

/// Walk a file that holds the raw contents of a `.hip_fatbin` section
/// (`llvm-objcopy --dump-section=.hip_fatbin=FILE`).
pub fn inspect_section_dump(data: &[u8]) -> Listing {
    let mut out = Listing::default();
    walk_section(data, 0, HIP_FATBIN, 0, &mut out);
    out.problems.sort_by_key(|e| e.offset());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ROCm's split of a clang 22 HIP library (tests/data/kpack/README.md).
    const SPLIT_HOST: &[u8] = include_bytes!("../../../../tests/data/kpack/split-host-libk.so");

    fn load_headers(data: &[u8]) -> Vec<u64> {
        let elf = Elf::parse(data).unwrap();
        elf.segments
            .iter()
            .filter(|s| s.p_type == 1)
            .map(|s| s.header_pos)
            .collect()
    }

    fn verdict(data: &[u8]) -> Result<kpack::HostRef> {
        let elf = Elf::parse(data).unwrap();
        kpack_ref(&elf, data).expect("a HIPK host")
    }

    #[test]
    fn hosts_glibc_would_refuse_break_hipk_4_at_their_program_header() {
        assert!(verdict(SPLIT_HOST).is_ok());
        for at in load_headers(SPLIT_HOST) {
            // The address moved off its page against the offset.
            let mut moved = SPLIT_HOST.to_vec();
            let vaddr = u64::from_le_bytes(moved[at as usize + 16..][..8].try_into().unwrap());
            moved[at as usize + 16..][..8].copy_from_slice(&(vaddr + 8).to_le_bytes());
            let e = verdict(&moved).unwrap_err();
            assert_eq!((e.rule_id(), e.offset()), (Some("HIPK-4"), Some(at)), "{e}");
            assert!(
                e.to_string().contains("address/offset not page-aligned"),
                "{e}"
            );
            // glibc 2.36 ignores p_align (a host whose segments say 16 loads).
            let mut small = SPLIT_HOST.to_vec();
            small[at as usize + 48..][..8].copy_from_slice(&16u64.to_le_bytes());
            assert!(verdict(&small).is_ok());
        }
    }
}
