//! Rewriting a fat binary's host into a HIPK host (spec/kpack.md HIPK-3):
//! what ROCm's splitter does to a shared library once its code objects
//! went to kpack archives. Every virtual address stays where it was; only
//! file offsets move. (Executables are refused: Linux before 5.18 would
//! not find their moved program header table.)
//!
//! - The whole pages of `.hip_fatbin` leave the file: the section becomes
//!   `SHT_NOBITS` and its load segment is split around a segment with no
//!   file bytes (a fat binary under a page keeps its bytes, as ROCm's does).
//! - `.rocm_kpack_ref` (the [`HostRef`]) is added in a new read-only
//!   `PT_LOAD` above every other segment, with the program header table
//!   (moved there, one entry longer at least).
//! - Each `.hipFatBinSegment` wrapper says `HIPK`, points at
//!   `.rocm_kpack_ref` (its relative relocation retargeted) and carries its
//!   index in `reserved1`: the runtime's key is `<kernel_name>#<index>`.
//!
//! ```
//! use offload_kit_format::host::elf::hipk;
//!
//! // Not an ELF file: refused with the rule, nothing written.
//! let r = offload_kit_format::kpack::HostRef { search_paths: vec![], kernel_name: "k".into() };
//! assert_eq!(hipk::rewrite(b"not elf", &r).unwrap_err().rule_id(), Some("HIPK-3"));
//! ```

use super::{Elf, Section, SHF_ALLOC, SHT_NOBITS, SHT_NULL, SHT_PROGBITS, SHT_RELA};
use crate::kpack::{HostRef, HOST_MAGIC, REF_SECTION, WRAPPER_SECTION};
use crate::{rules, Error, Result};

/// The section clang puts a host's fat binaries in.
pub const FATBIN_SECTION: &str = ".hip_fatbin";
/// `HIPF`, the magic clang's wrappers start with (`0x48495046`, stored
/// little-endian).
pub const FATBIN_MAGIC: &[u8; 4] = b"FPIH";
/// The size of one `__CudaFatBinaryWrapper`: magic, version, pointer,
/// `reserved1`.
pub const WRAPPER_SIZE: u64 = 24;
/// The alignment of each fat binary in `.hip_fatbin`, as clang lays them.
pub const FATBIN_ALIGN: u64 = 4096;

const PT_LOAD: u32 = 1;
const PT_PHDR: u32 = 6;
const PF_R: u32 = 4;
const PHDR_SIZE: u64 = 56;
/// The largest load alignment taken (GNU ld's old x86-64 default).
const MAX_ALIGN: u64 = 2 << 20;
const SHDR_SIZE: u64 = 64;
const RELA_SIZE: u64 = 24;

/// One wrapper of `.hipFatBinSegment`: where it is and which fat binary
/// it registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wrapper {
    /// Its index (what the rewritten wrapper's `reserved1` holds).
    pub index: u64,
    /// Its virtual address.
    pub vaddr: u64,
    /// The absolute file offset of the fat binary it points at.
    pub target_offset: u64,
    /// The absolute file offset of the relocation filling its pointer, if
    /// one does (a shared library, a PIE).
    pub relocation: Option<u64>,
}

/// A `PT_LOAD` or other program header, whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Phdr {
    p_type: u32,
    flags: u32,
    offset: u64,
    vaddr: u64,
    paddr: u64,
    filesz: u64,
    memsz: u64,
    align: u64,
}

fn fail(at: u64, message: impl Into<String>) -> Error {
    Error::at(rules::HIPK_3, at, message)
}

fn u64_at(d: &[u8], at: u64) -> Option<u64> {
    let at = usize::try_from(at).ok()?;
    Some(u64::from_le_bytes(
        d.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

fn u32_at(d: &[u8], at: u64) -> Option<u32> {
    let at = usize::try_from(at).ok()?;
    Some(u32::from_le_bytes(
        d.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn put(d: &mut [u8], at: u64, bytes: &[u8]) -> Result<()> {
    let at = usize::try_from(at).map_err(|_| fail(at, "offset out of range"))?;
    let end = at + bytes.len();
    d.get_mut(at..end)
        .ok_or_else(|| fail(at as u64, "internal: field outside the output"))?
        .copy_from_slice(bytes);
    Ok(())
}

/// The ELF file a rewrite accepts: 64-bit little-endian, an executable or
/// shared object of x86-64 or AArch64; its relative relocation type.
fn accepted<'a>(data: &'a [u8]) -> Result<(Elf<'a>, u32)> {
    let elf = Elf::parse(data).map_err(|e| fail(0, format!("not a host ELF file: {e}")))?;
    if !elf.encoding.is64 || elf.encoding.big_endian {
        return Err(fail(
            0,
            "only 64-bit little-endian hosts are rewritten (as ROCm's splitter)",
        ));
    }
    if elf.e_type != 3 {
        return Err(fail(
            16,
            "only shared objects are rewritten: an object file's fat binary is linked later, and an executable's moved program header table is found only by Linux 5.18 and later (AT_PHDR)",
        ));
    }
    let relative = match elf.machine {
        62 => 8,     // R_X86_64_RELATIVE
        183 => 1027, // R_AARCH64_RELATIVE
        m => {
            return Err(fail(
                18,
                format!("machine {m}: only x86-64 and AArch64 hosts are rewritten"),
            ))
        }
    };
    Ok((elf, relative))
}

fn section<'e, 'a>(elf: &'e Elf<'a>, name: &str) -> Option<&'e Section<'a>> {
    elf.sections.iter().find(|s| s.name == name.as_bytes())
}

fn phdrs(elf: &Elf<'_>) -> Result<Vec<Phdr>> {
    let d = elf.data;
    let count = u64::from(elf.encoding.u16(d, 56).unwrap_or(0));
    let entsize = u64::from(elf.encoding.u16(d, 54).unwrap_or(0));
    if count == 0xffff || (count > 0 && entsize != PHDR_SIZE) {
        return Err(fail(
            54,
            "the program header table is not plain ELF64 entries",
        ));
    }
    if count >= 0xfff0 {
        return Err(fail(
            56,
            format!("{count} program headers: no room for three more"),
        ));
    }
    let headers: Vec<Phdr> = (0..count)
        .map(|i| {
            let at = elf.phoff + i * PHDR_SIZE;
            let w = |o: u64| u64_at(d, at + o);
            let h = || -> Option<Phdr> {
                Some(Phdr {
                    p_type: u32_at(d, at)?,
                    flags: u32_at(d, at + 4)?,
                    offset: w(8)?,
                    vaddr: w(16)?,
                    paddr: w(24)?,
                    filesz: w(32)?,
                    memsz: w(40)?,
                    align: w(48)?,
                })
            };
            h().ok_or_else(|| fail(at, "program header outside the file"))
        })
        .collect::<Result<_>>()?;
    check_bounds(elf, &headers)?;
    Ok(headers)
}

/// Every segment and section within the file and the address space, so
/// that the arithmetic of a rewrite cannot overflow; at most [`MAX_ALIGN`]
/// of load alignment.
fn check_bounds(elf: &Elf<'_>, headers: &[Phdr]) -> Result<()> {
    let len = elf.data.len() as u64;
    for (i, p) in headers.iter().enumerate() {
        let at = elf.phoff + i as u64 * PHDR_SIZE;
        let in_file = p.offset.checked_add(p.filesz).is_some_and(|e| e <= len);
        let in_memory = p.vaddr.checked_add(p.memsz).is_some_and(|e| e < 1 << 62);
        if !in_file || !in_memory || (p.p_type == PT_LOAD && p.filesz > p.memsz) {
            return Err(fail(
                at,
                format!("segment {i} lies outside the file or the address space"),
            ));
        }
        if p.p_type == PT_LOAD && p.align > MAX_ALIGN {
            return Err(fail(
                at,
                format!(
                    "segment {i}: alignment 0x{:x} over 0x{MAX_ALIGN:x}",
                    p.align
                ),
            ));
        }
    }
    for s in &elf.sections {
        let in_memory = s.addr.checked_add(s.size).is_some_and(|e| e < 1 << 62);
        let in_file = !s.has_file_data() || s.offset.checked_add(s.size).is_some_and(|e| e <= len);
        if !in_memory || !in_file || s.offset > len {
            return Err(fail(
                s.header_pos,
                format!(
                    "section '{}' lies outside the file or the address space",
                    s.name_str()
                ),
            ));
        }
    }
    Ok(())
}

impl Phdr {
    /// Append the `Elf64_Phdr`.
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.p_type.to_le_bytes());
        out.extend_from_slice(&self.flags.to_le_bytes());
        for f in [
            self.offset,
            self.vaddr,
            self.paddr,
            self.filesz,
            self.memsz,
            self.align,
        ] {
            out.extend_from_slice(&f.to_le_bytes());
        }
    }
}

/// The file offset of virtual address `vaddr`, through the load segments.
fn file_offset(loads: &[Phdr], vaddr: u64) -> Option<u64> {
    loads
        .iter()
        .find(|p| p.p_type == PT_LOAD && vaddr >= p.vaddr && vaddr - p.vaddr < p.filesz)
        .map(|p| p.offset + (vaddr - p.vaddr))
}

/// Every `Elf64_Rela` of the allocated relocation sections: (its absolute
/// offset, `r_offset`, `r_info`, `r_addend`).
fn relocations(elf: &Elf<'_>) -> Vec<(u64, u64, u64, u64)> {
    let d = elf.data;
    let mut out = Vec::new();
    for s in (elf.sections.iter()).filter(|s| s.sh_type == SHT_RELA && s.flags & SHF_ALLOC != 0) {
        // Bounded by the file (check_bounds): no more entries than bytes.
        let n = s.data(d).map_or(0, |b| b.len() as u64 / RELA_SIZE);
        for i in 0..n {
            let at = s.offset + i * RELA_SIZE;
            if let (Some(o), Some(info), Some(a)) =
                (u64_at(d, at), u64_at(d, at + 8), u64_at(d, at + 16))
            {
                out.push((at, o, info, a));
            }
        }
    }
    out
}

/// The wrappers of a fat-binary host (`HIPF`), each with the fat binary it
/// registers: through its relative relocation's addend, else the pointer
/// as stored. HIPK-3 errors for a host that is not one, or a wrapper whose
/// target is not inside `.hip_fatbin`.
pub fn wrappers(data: &[u8]) -> Result<Vec<Wrapper>> {
    let (elf, relative) = accepted(data)?;
    let loads = phdrs(&elf)?;
    wrappers_of(&elf, &loads, relative, Kind::Fat)
}

/// The wrappers of a split host (`HIPK`), each with the index its
/// `reserved1` gives (the runtime's `<kernel_name>#<index>`).
pub fn split_wrappers(data: &[u8]) -> Result<Vec<Wrapper>> {
    let (elf, relative) = accepted(data)?;
    let loads = phdrs(&elf)?;
    wrappers_of(&elf, &loads, relative, Kind::Split)
}

/// Which wrappers a host has: clang's (`HIPF`, pointing into
/// `.hip_fatbin`) or a split's (`HIPK`, pointing at `.rocm_kpack_ref`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Fat,
    Split,
}

fn wrappers_of(elf: &Elf<'_>, loads: &[Phdr], relative: u32, kind: Kind) -> Result<Vec<Wrapper>> {
    let d = elf.data;
    let seg = section(elf, WRAPPER_SECTION)
        .ok_or_else(|| fail(0, format!("no {WRAPPER_SECTION} section: not a HIP host")))?;
    let fat = section(elf, FATBIN_SECTION)
        .ok_or_else(|| fail(0, format!("no {FATBIN_SECTION} section: not a HIP host")))?;
    let (magic, other, into) = match kind {
        Kind::Fat => (FATBIN_MAGIC, HOST_MAGIC, *fat),
        Kind::Split => (
            HOST_MAGIC,
            FATBIN_MAGIC,
            *section(elf, REF_SECTION)
                .filter(|s| s.sh_type != SHT_NULL)
                .ok_or_else(|| fail(0, format!("no {REF_SECTION} section: not a split host")))?,
        ),
    };
    if kind == Kind::Fat && (!fat.has_file_data() || fat.data(d).is_none()) {
        return Err(fail(
            fat.header_pos,
            format!("{FATBIN_SECTION} has no contents in the file (already split?)"),
        ));
    }
    if seg.size % WRAPPER_SIZE != 0 || seg.size == 0 || seg.data(d).is_none_or(<[u8]>::is_empty) {
        return Err(fail(
            seg.header_pos,
            format!(
                "{WRAPPER_SECTION} of {} bytes is not whole 24-byte wrappers",
                seg.size
            ),
        ));
    }
    let relocs = relocations(elf);
    let by_place: std::collections::HashMap<u64, &(u64, u64, u64, u64)> =
        relocs.iter().map(|r| (r.1, r)).collect();
    let mut out = Vec::new();
    for i in 0..seg.size / WRAPPER_SIZE {
        let vaddr = seg.addr + i * WRAPPER_SIZE;
        let at = file_offset(loads, vaddr)
            .filter(|a| {
                a.checked_add(WRAPPER_SIZE)
                    .is_some_and(|e| e <= d.len() as u64)
            })
            .ok_or_else(|| fail(seg.header_pos, format!("wrapper {i} is not in the file")))?;
        let stored = &d[at as usize..at as usize + 4];
        let name = |m: &[u8; 4]| if m == HOST_MAGIC { "HIPK" } else { "HIPF" };
        if stored == other {
            return Err(fail(
                at,
                format!(
                    "wrapper {i} says {}: {}",
                    name(other),
                    match kind {
                        Kind::Fat => "the host was split already",
                        Kind::Split => "the host is not split",
                    }
                ),
            ));
        }
        if stored != magic {
            return Err(fail(
                at,
                format!("wrapper {i} does not start with {}", name(magic)),
            ));
        }
        let reloc = by_place.get(&(vaddr + 8)).copied();
        let target = match reloc {
            Some(&(_, _, info, addend)) if info & 0xffff_ffff == u64::from(relative) => addend,
            Some(&(rat, ..)) => {
                return Err(fail(
                    rat,
                    format!("wrapper {i}'s pointer is filled by a relocation that is not relative"),
                ))
            }
            // A shared object's pointer must be relocated to be rewritten
            // (HIPK-3 (4)); a split one is read as stored.
            None if elf.e_type == 3
                && seg.flags & SHF_ALLOC != 0
                && (matches!(kind, Kind::Fat) || !relocs.is_empty()) =>
            {
                return Err(fail(
                    at + 8,
                    format!("wrapper {i}'s pointer has no relocation in a shared object (packed relocations are not rewritten)"),
                ))
            }
            None => u64_at(d, at + 8).unwrap_or(0),
        };
        if target < into.addr || target - into.addr >= into.size {
            return Err(fail(
                at + 8,
                format!(
                    "wrapper {i} points at 0x{target:x}, outside {}",
                    into.name_str()
                ),
            ));
        }
        out.push(Wrapper {
            index: match kind {
                Kind::Fat => i,
                Kind::Split => u64_at(d, at + 16).unwrap_or(0),
            },
            vaddr,
            target_offset: into.offset + (target - into.addr),
            relocation: reloc.map(|r| r.0),
        });
    }
    Ok(out)
}

fn round_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

/// The host rewritten for a split (HIPK-3): the returned bytes are a HIPK
/// host whose `.rocm_kpack_ref` holds `reference`. Refused (HIPK-3, at the
/// offending offset) for anything but an unsplit 64-bit little-endian
/// shared object whose wrappers all point into
/// `.hip_fatbin`.
pub fn rewrite(data: &[u8], reference: &HostRef) -> Result<Vec<u8>> {
    let (elf, relative) = accepted(data)?;
    let old = phdrs(&elf)?;
    let wrappers = wrappers_of(&elf, &old, relative, Kind::Fat)?;
    if let Some(s) = section(&elf, REF_SECTION).filter(|s| s.sh_type != SHT_NULL) {
        return Err(fail(
            s.header_pos,
            format!("the host already has {REF_SECTION}"),
        ));
    }
    let payload = reference.to_bytes();
    let plan = Relink {
        magic: HOST_MAGIC,
        targets: vec![0; wrappers.len()],
        indexed: true,
        payload_len: payload.len() as u64,
        adds_ref: true,
        cut_fatbin: true,
        retire: None,
    };
    Ok(relink(&elf, relative, &old, &wrappers, &plan)?.join(&payload))
}

/// A split host made whole again (the inverse of [`rewrite`]): wrapper
/// `i` (in table order) says `HIPF` and registers the fat binary at
/// `targets[i]` of `fat_binaries` (laid out [`FATBIN_ALIGN`]-aligned), in
/// a new load segment that `.hip_fatbin` now names; `.rocm_kpack_ref` is
/// retired (`SHT_NULL`). Refused (HIPK-3) for a host that is not split, or
/// not one target inside `fat_binaries` per wrapper.
pub fn restore(data: &[u8], fat_binaries: &[u8], targets: &[u64]) -> Result<Vec<u8>> {
    Ok(restore_layout(data, fat_binaries.len() as u64, targets)?.join(fat_binaries))
}

/// [`restore`] for fat binaries the caller streams: the restored host is
/// [`Relinked::head`], then the `payload_len` bytes of fat binaries, then
/// [`Relinked::tail`] (a split library's code objects are not held).
pub fn restore_layout(data: &[u8], payload_len: u64, targets: &[u64]) -> Result<Relinked> {
    let (elf, relative) = accepted(data)?;
    let old = phdrs(&elf)?;
    let wrappers = wrappers_of(&elf, &old, relative, Kind::Split)?;
    if targets.len() != wrappers.len() || targets.iter().any(|&t| t >= payload_len) {
        return Err(fail(
            0,
            format!(
                "{} fat binaries for {} wrappers: one each, inside the {payload_len} bytes given",
                targets.len(),
                wrappers.len(),
            ),
        ));
    }
    let plan = Relink {
        magic: FATBIN_MAGIC,
        targets: targets.to_vec(),
        indexed: false,
        payload_len,
        adds_ref: false,
        cut_fatbin: false,
        retire: section(&elf, REF_SECTION).map(|s| s.index),
    };
    relink(&elf, relative, &old, &wrappers, &plan)
}

/// A relinked host in three parts: `head`, the new load segment's payload
/// (`payload_len` bytes, which the caller writes), and `tail` (padding,
/// the program header table, the section header table).
#[derive(Debug, Clone)]
pub struct Relinked {
    /// The bytes before the payload.
    pub head: Vec<u8>,
    /// How many bytes of payload go between `head` and `tail`.
    pub payload_len: u64,
    /// The bytes after the payload.
    pub tail: Vec<u8>,
}

impl Relinked {
    /// The whole host, with `payload` (of `payload_len` bytes) in place.
    pub fn join(self, payload: &[u8]) -> Vec<u8> {
        let mut out = self.head;
        out.extend_from_slice(payload);
        out.extend_from_slice(&self.tail);
        out
    }
}

/// What [`relink`] writes.
struct Relink {
    /// The wrappers' new magic.
    magic: &'static [u8; 4],
    /// Per wrapper, where in `payload` it points.
    targets: Vec<u64>,
    /// Whether `reserved1` gets the wrapper's index (else 0).
    indexed: bool,
    /// The size of the new segment's section contents (the caller writes
    /// them between [`Relinked::head`] and [`Relinked::tail`]).
    payload_len: u64,
    /// A new `.rocm_kpack_ref` names the payload (else `.hip_fatbin` is
    /// re-pointed at it).
    adds_ref: bool,
    /// Whether `.hip_fatbin`'s whole pages leave the file.
    cut_fatbin: bool,
    /// A section made `SHT_NULL`.
    retire: Option<usize>,
}

/// The host with a payload of `plan.payload_len` bytes in a new read-only load segment above
/// every other (with the program header table), the wrappers pointing into
/// it, and, when asked, `.hip_fatbin`'s whole pages gone from the file.
/// Every virtual address stays; file offsets after the cut move down.
fn relink(
    elf: &Elf<'_>,
    relative: u32,
    old: &[Phdr],
    wrappers: &[Wrapper],
    plan: &Relink,
) -> Result<Relinked> {
    let data = elf.data;
    let fat = *section(elf, FATBIN_SECTION).expect("checked by wrappers_of");
    let shnum = elf.sections.len() as u64;
    if elf.shoff == 0 || shnum == 0 || shnum + 1 >= 0xff00 || elf.shstrndx >= elf.sections.len() {
        return Err(fail(
            0x3c,
            "the section header table cannot take one more section",
        ));
    }
    let align = (old.iter().filter(|p| p.p_type == PT_LOAD))
        .map(|p| p.align)
        .fold(4096, u64::max);
    if !align.is_power_of_two() || align > MAX_ALIGN {
        return Err(fail(
            elf.phoff,
            format!("load alignment 0x{align:x} is not a power of two"),
        ));
    }
    let (cut_start, cut_end) = cut_of(elf, relative, old, wrappers, plan, align)?;
    let cut = cut_end - cut_start;
    let shift = |off: u64| {
        if cut > 0 && off >= cut_end {
            off - cut
        } else {
            off
        }
    };
    let bounds = if cut > 0 {
        (cut_start, cut_end)
    } else {
        (0, 0)
    };
    let mut new_phdrs = split_segments(elf, old, &fat, bounds)?;
    let top = (old.iter().filter(|p| p.p_type == PT_LOAD))
        .map(|p| p.vaddr.saturating_add(p.memsz))
        .max()
        .unwrap_or(0);
    // The body without the pages (and without the old section header
    // table when it ends the file), then the new segment: the payload and
    // the program header table.
    let shdrs_end = elf.shoff.saturating_add(shnum * SHDR_SIZE);
    let past_fat = match fat.has_file_data() {
        true => cut_end.max(fat.offset + fat.size),
        false => cut_end,
    };
    let body_end = if shdrs_end == data.len() as u64 && elf.shoff >= past_fat {
        elf.shoff
    } else {
        data.len() as u64
    };
    let mut out = Vec::with_capacity((body_end - cut) as usize + 4096);
    if cut > 0 {
        out.extend_from_slice(&data[..cut_start as usize]);
        out.extend_from_slice(&data[cut_end as usize..body_end as usize]);
    } else {
        out.extend_from_slice(&data[..body_end as usize]);
    }
    // A page boundary in the file; in memory, above everything, at the
    // same place modulo the load alignment (no padding to a 2 MiB one).
    let seg_off = round_up(out.len() as u64, 4096);
    let seg_vaddr = round_up(top, align) + seg_off % align;
    let table_rel = round_up(plan.payload_len, 8);
    let pos = new_phdrs
        .iter()
        .rposition(|p| p.p_type == PT_LOAD)
        .map_or(new_phdrs.len(), |i| i + 1);
    let table_size = (new_phdrs.len() as u64 + 1) * PHDR_SIZE;
    let seg_size = table_rel + table_size;
    let vaddr = seg_vaddr;
    new_phdrs.insert(
        pos,
        Phdr {
            p_type: PT_LOAD,
            flags: PF_R,
            offset: seg_off,
            vaddr,
            paddr: vaddr,
            filesz: seg_size,
            memsz: seg_size,
            align,
        },
    );
    for p in new_phdrs.iter_mut().filter(|p| p.p_type == PT_PHDR) {
        let (offset, vaddr) = (seg_off + table_rel, seg_vaddr + table_rel);
        *p = Phdr {
            offset,
            vaddr,
            paddr: vaddr,
            filesz: table_size,
            memsz: table_size,
            ..*p
        };
    }
    out.resize(seg_off as usize, 0);
    // The payload goes between `out` (the head) and `tail`.
    let tail_at = seg_off + plan.payload_len;
    let mut tail = vec![0u8; (table_rel - plan.payload_len) as usize];
    new_phdrs.iter().for_each(|p| p.write(&mut tail));
    let new_section = (seg_vaddr, seg_off, plan.payload_len);
    let shoff = write_sections(
        (&mut tail, tail_at),
        elf,
        &fat,
        plan,
        cut > 0,
        &shift,
        new_section,
    )?;
    // The file header: where the tables went, how many there are.
    let sections = shnum + u64::from(plan.adds_ref);
    put(&mut out, 32, &(seg_off + table_rel).to_le_bytes())?;
    put(&mut out, 40, &shoff.to_le_bytes())?;
    put(&mut out, 56, &(new_phdrs.len() as u16).to_le_bytes())?;
    put(&mut out, 60, &(sections as u16).to_le_bytes())?;
    // Each wrapper: its magic, its pointer (through its relocation), its index.
    for (w, target) in wrappers.iter().zip(&plan.targets) {
        let at = file_offset(&new_phdrs, w.vaddr).ok_or_else(|| fail(w.vaddr, "wrapper lost"))?;
        let pointer = seg_vaddr + target;
        put(&mut out, at, plan.magic)?;
        let stored = if w.relocation.is_some() { 0 } else { pointer };
        put(&mut out, at + 8, &stored.to_le_bytes())?;
        let index = if plan.indexed { w.index } else { 0 };
        put(&mut out, at + 16, &index.to_le_bytes())?;
        if let Some(r) = w.relocation {
            let r = shift(r);
            put(&mut out, r + 8, &u64::from(relative).to_le_bytes())?;
            put(&mut out, r + 16, &pointer.to_le_bytes())?;
        }
    }
    Ok(Relinked {
        head: out,
        payload_len: plan.payload_len,
        tail,
    })
}

/// The whole pages of `.hip_fatbin` that leave the file, `[start, end)`
/// (empty when none do or none is asked for); refused when anything else
/// lies in them or points into the section.
fn cut_of(
    elf: &Elf<'_>,
    relative: u32,
    old: &[Phdr],
    wrappers: &[Wrapper],
    plan: &Relink,
    align: u64,
) -> Result<(u64, u64)> {
    let fat = *section(elf, FATBIN_SECTION).expect("checked by wrappers_of");
    let shnum = elf.sections.len() as u64;
    // The whole pages of .hip_fatbin, [cut_start, cut_end), leave the file
    // (its bounds checked by check_bounds when it has file data).
    let (cut_start, cut_end) = match plan.cut_fatbin && fat.has_file_data() {
        true => (
            round_up(fat.offset, align),
            (fat.offset + fat.size) / align * align,
        ),
        false => (0, 0),
    };
    let cut = cut_end.saturating_sub(cut_start);
    if cut > 0 {
        check_nothing_else_points_into(elf, relative, wrappers, &fat)?;
    }
    let in_cut = |off: u64, size: u64| cut > 0 && off < cut_end && off + size > cut_start;
    for s in elf
        .sections
        .iter()
        .filter(|s| s.index != fat.index && s.has_file_data() && s.size > 0)
    {
        if in_cut(s.offset, s.size) {
            return Err(fail(
                s.header_pos,
                format!("section '{}' shares {FATBIN_SECTION}'s pages", s.name_str()),
            ));
        }
    }
    // Nor may the file header or either header table lie in them.
    let tables = [
        (0, 64),
        (elf.phoff, old.len() as u64 * PHDR_SIZE),
        (elf.shoff, shnum * SHDR_SIZE),
    ];
    if let Some((at, _)) = tables.iter().find(|(at, n)| *n > 0 && in_cut(*at, *n)) {
        return Err(fail(
            *at,
            format!("a header table lies in {FATBIN_SECTION}'s pages"),
        ));
    }
    Ok(if cut > 0 {
        (cut_start, cut_end)
    } else {
        (0, 0)
    })
}

/// Refuse a cut when a relocation other than a wrapper's points into
/// `.hip_fatbin`: it would point at zeros.
fn check_nothing_else_points_into(
    elf: &Elf<'_>,
    relative: u32,
    wrappers: &[Wrapper],
    fat: &Section<'_>,
) -> Result<()> {
    for (at, _, info, addend) in relocations(elf) {
        let is_wrapper = wrappers.iter().any(|w| w.relocation == Some(at));
        if !is_wrapper
            && info & 0xffff_ffff == u64::from(relative)
            && addend >= fat.addr
            && addend - fat.addr < fat.size
        {
            return Err(fail(
                at,
                format!("a relocation other than a wrapper's points into {FATBIN_SECTION}"),
            ));
        }
    }
    Ok(())
}

/// The program headers with file offsets after the cut `[start, end)`
/// moved down, and the load segment holding `.hip_fatbin` split in three:
/// before the cut, the cut (memory only), after it.
fn split_segments(
    elf: &Elf<'_>,
    old: &[Phdr],
    fat: &Section<'_>,
    (start, end): (u64, u64),
) -> Result<Vec<Phdr>> {
    let cut = end.saturating_sub(start);
    let mut out = Vec::new();
    for p in old {
        let holds_fat = p.p_type == PT_LOAD
            && p.offset <= fat.offset
            && fat.offset + fat.size <= p.offset + p.filesz;
        if cut == 0 {
            out.push(*p);
        } else if holds_fat {
            let pre = start - p.offset;
            if pre > 0 {
                out.push(Phdr {
                    filesz: pre,
                    memsz: pre,
                    ..*p
                });
            }
            let (vaddr, paddr) = (p.vaddr + pre, p.paddr + pre);
            out.push(Phdr {
                offset: start,
                vaddr,
                paddr,
                filesz: 0,
                memsz: cut,
                ..*p
            });
            let skip = end - p.offset;
            if p.memsz > skip {
                let (vaddr, paddr) = (p.vaddr + skip, p.paddr + skip);
                let (filesz, memsz) = (p.filesz - skip, p.memsz - skip);
                out.push(Phdr {
                    offset: start,
                    vaddr,
                    paddr,
                    filesz,
                    memsz,
                    ..*p
                });
            }
        } else if p.filesz > 0 && p.offset < end && p.offset + p.filesz > start {
            return Err(fail(
                elf.phoff,
                format!(
                    "a segment of type {} overlaps {FATBIN_SECTION}'s pages",
                    p.p_type
                ),
            ));
        } else {
            let offset = if p.offset >= end {
                p.offset - cut
            } else {
                p.offset
            };
            out.push(Phdr { offset, ..*p });
        }
    }
    Ok(out)
}

/// The section header table, written at the end of `out`, which starts at
/// file offset `base` (with a copy of the name table naming
/// `.rocm_kpack_ref` when one is added); its offset.
fn write_sections(
    (out, base): (&mut Vec<u8>, u64),
    elf: &Elf<'_>,
    fat: &Section<'_>,
    plan: &Relink,
    cut: bool,
    shift: &dyn Fn(u64) -> u64,
    (addr, offset, size): (u64, u64, u64),
) -> Result<u64> {
    let data = elf.data;
    let shstr = elf.sections[elf.shstrndx];
    let names = (shstr.data(data)).ok_or_else(|| {
        fail(
            shstr.header_pos,
            "the section name table is not in the file",
        )
    })?;
    let (shstr_off, name_pos) = (base + out.len() as u64, names.len() as u64);
    if plan.adds_ref {
        out.extend_from_slice(names);
        out.extend_from_slice(REF_SECTION.as_bytes());
        out.push(0);
    }
    let shoff = round_up(base + out.len() as u64, 8);
    out.resize((shoff - base) as usize, 0);
    for s in &elf.sections {
        let hdr = s.header_pos as usize;
        let mut h = data
            .get(hdr..hdr + SHDR_SIZE as usize)
            .ok_or_else(|| fail(s.header_pos, "section header outside the file"))?
            .to_vec();
        let mut set = |at: usize, v: u64| h[at..at + 8].copy_from_slice(&v.to_le_bytes());
        if s.index == shstr.index && plan.adds_ref {
            set(24, shstr_off);
            set(32, name_pos + REF_SECTION.len() as u64 + 1);
        } else if s.index == fat.index && !plan.adds_ref {
            set(16, addr);
            set(24, offset);
            set(32, size);
            h[4..8].copy_from_slice(&SHT_PROGBITS.to_le_bytes());
        } else if s.index == fat.index && cut {
            h[4..8].copy_from_slice(&SHT_NOBITS.to_le_bytes());
        } else if Some(s.index) == plan.retire {
            h[4..8].copy_from_slice(&SHT_NULL.to_le_bytes());
        } else {
            // NOBITS sections too: their offset is where their bytes would be.
            set(24, shift(s.offset));
        }
        out.extend_from_slice(&h);
    }
    if plan.adds_ref {
        out.extend_from_slice(&(name_pos as u32).to_le_bytes());
        out.extend_from_slice(&SHT_PROGBITS.to_le_bytes());
        for f in [SHF_ALLOC, addr, offset, size] {
            out.extend_from_slice(&f.to_le_bytes());
        }
        out.extend_from_slice(&[0; 8]); // sh_link, sh_info
        out.extend_from_slice(&1u64.to_le_bytes()); // sh_addralign
        out.extend_from_slice(&0u64.to_le_bytes()); // sh_entsize
    }
    Ok(shoff)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clang 22's `libk.so` (one wrapper, gfx906 and gfx90a).
    const LIBK: &[u8] = include_bytes!("../../../../../tests/data/kpack/libk.so");

    fn reference() -> HostRef {
        HostRef {
            search_paths: vec!["k_@GFXARCH@.kpack".into()],
            kernel_name: "libk.so".into(),
        }
    }

    fn rule(r: Result<Vec<u8>>) -> String {
        let e = r.unwrap_err();
        assert_eq!(e.rule_id(), Some("HIPK-3"), "{e}");
        e.to_string()
    }

    #[test]
    fn a_split_keeps_addresses_and_goes_back() {
        let before = Elf::parse(LIBK).unwrap();
        let split = rewrite(LIBK, &reference()).unwrap();
        let after = Elf::parse(&split).unwrap();
        assert!(after.check().is_empty(), "{:?}", after.check());
        for (a, b) in before.sections.iter().zip(&after.sections) {
            // What changes: the wrapper, its relocation, the name table.
            let moved = [WRAPPER_SECTION.as_bytes(), b".rela.dyn", b".shstrtab"];
            if !moved.contains(&a.name) {
                assert_eq!((a.name, a.addr, a.size), (b.name, b.addr, b.size));
            }
            if a.has_file_data() && b.has_file_data() && !moved.contains(&a.name) {
                assert_eq!(a.data(LIBK), b.data(&split), "{}", a.name_str());
            }
        }
        let fat = after.section_by_name(FATBIN_SECTION).unwrap();
        assert_eq!(fat.sh_type, SHT_NOBITS);
        let r = after.section_by_name(REF_SECTION).unwrap();
        assert_eq!(r.data(&split).unwrap(), reference().to_bytes());
        let w = split_wrappers(&split).unwrap();
        assert_eq!((w.len(), w[0].index, w[0].target_offset), (1, 0, r.offset));
        // Split twice, or made whole when not split: refused.
        assert!(rule(rewrite(&split, &reference())).contains("split"));
        assert!(rule(restore(LIBK, b"x", &[0])).contains("split"));
        assert!(rule(restore(&split, b"x", &[0, 0])).contains("one each"));
        assert!(rule(restore(&split, b"x", &[1])).contains("one each"));
        // Made whole: the wrapper registers what it is given.
        let whole = restore(&split, b"__CLANG_OFFLOAD_BUNDLE__", &[0]).unwrap();
        let w = wrappers(&whole).unwrap();
        assert_eq!(&whole[w[0].target_offset as usize..][..8], b"__CLANG_");
        let e = Elf::parse(&whole).unwrap();
        assert_eq!(e.section_by_name(REF_SECTION).unwrap().sh_type, SHT_NULL);
        assert!(e.check().is_empty(), "{:?}", e.check());
    }

    #[test]
    fn hosts_it_cannot_rewrite_are_refused_with_an_offset() {
        let mut wrong = LIBK.to_vec();
        wrong[4] = 1; // ELF32
        rule(rewrite(&wrong, &reference()));
        let mut rel = LIBK.to_vec();
        rel[16] = 1; // ET_REL
        assert!(rule(rewrite(&rel, &reference())).contains("object file"));
        let mut exe = LIBK.to_vec();
        exe[16] = 2; // ET_EXEC: Linux before 5.18 would not find the moved table
        assert!(rule(rewrite(&exe, &reference())).contains("executable"));
        // Hostile sizes: a relocation table or alignment past any bound.
        let elf = Elf::parse(LIBK).unwrap();
        let rela = elf.section_by_name(".rela.dyn").unwrap().header_pos as usize;
        let mut huge = LIBK.to_vec();
        huge[rela + 32..rela + 40].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(rewrite(&huge, &reference()).is_err());
        let mut align = LIBK.to_vec();
        let ph = elf.phoff as usize;
        align[ph + 48..ph + 56].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(rule(rewrite(&align, &reference())).contains("alignment"));
        // The wrapper's relocation retargeted outside .hip_fatbin.
        let elf = Elf::parse(LIBK).unwrap();
        let seg = elf.section_by_name(WRAPPER_SECTION).unwrap().addr;
        let (at, ..) = relocations(&elf)
            .into_iter()
            .find(|r| r.1 == seg + 8)
            .unwrap();
        let mut out = LIBK.to_vec();
        out[at as usize + 16..at as usize + 24].copy_from_slice(&0x10u64.to_le_bytes());
        let e = rewrite(&out, &reference()).unwrap_err();
        assert_eq!(
            e.offset(),
            Some(
                elf.sections
                    .iter()
                    .find(|s| s.name == WRAPPER_SECTION.as_bytes())
                    .unwrap()
                    .offset
                    + 8
            )
        );
        // A second relocation into .hip_fatbin (not a wrapper's).
        let (other, ..) = relocations(&elf)
            .into_iter()
            .find(|r| r.1 != seg + 8 && r.2 & 0xffff_ffff == 8)
            .unwrap();
        let fat = elf.section_by_name(FATBIN_SECTION).unwrap().addr;
        let mut out = LIBK.to_vec();
        out[other as usize + 16..other as usize + 24].copy_from_slice(&fat.to_le_bytes());
        assert!(rule(rewrite(&out, &reference())).contains("other than a wrapper"));
        // No RELA relocations at all (HIPK-3 (4)): nothing to retarget.
        let mut bare = LIBK.to_vec();
        bare[rela + 4..rela + 8].copy_from_slice(&1u32.to_le_bytes()); // SHT_PROGBITS
        assert!(rule(rewrite(&bare, &reference())).contains("has no relocation"));
        // A wrapper that is neither HIPF nor HIPK.
        let w = elf.section_by_name(WRAPPER_SECTION).unwrap().offset as usize;
        let mut out = LIBK.to_vec();
        out[w] = b'X';
        assert!(rule(rewrite(&out, &reference())).contains("HIPF"));
        // Every truncation is refused without a panic.
        for n in (0..LIBK.len()).step_by(97) {
            let _ = rewrite(&LIBK[..n], &reference());
        }
    }
}
