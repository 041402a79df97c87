//! The ELF writers: [`add_sections`] and [`remove_sections`], and the
//! rebuild behind both. It runs in phases, each deciding one thing: which
//! sections stay and their new indices, the section name table, the input
//! bytes that stay in place, the output section list, the layout, then the
//! bytes (contents, section headers, counts and file header, symbols).

use super::{
    obj2, Ehdr, Elf, Encoding, Section, Shdr, SHN_LORESERVE, SHN_UNDEF, SHN_XINDEX, SHT_DYNSYM,
    SHT_GROUP, SHT_PROGBITS, SHT_SYMTAB, SHT_SYMTAB_SHNDX,
};
use crate::error::{Error, Result};
use crate::host::strtab::StrTab;
use crate::rules;
use std::borrow::Cow;

/// Where an output section's contents come from.
enum Src<'a> {
    /// Bytes of the input (copied to the new offset).
    Input(&'a [u8]),
    /// Rebuilt bytes (name table, group members, new sections).
    Owned(Cow<'a, [u8]>),
    /// No file bytes (NOBITS, NULL).
    None,
}

/// One section of the output, in section header order, with its header
/// fields as the output stores them.
struct Out<'a> {
    /// The input section, or `None` for a new one.
    old: Option<Section<'a>>,
    src: Src<'a>,
    /// Fixed offset (inside a preserved segment), if any.
    fixed: Option<u64>,
    new_name: u32,
    offset: u64,
    size: u64,
    sh_type: u32,
    flags: u64,
    align: u64,
}

/// Add sections at the end of the section header table, as
/// `llvm-objcopy --add-section=NAME=FILE --set-section-flags=NAME=…` does:
/// each new section is `SHT_PROGBITS`, address 0, alignment 1, with the
/// given `sh_flags`, and its name is added to the section name table.
/// `new` holds `(name, contents, flags)`.
pub fn add_sections(elf: &[u8], new: &[(&str, &[u8], u64)]) -> Result<Vec<u8>> {
    add_sections_as(elf, new, Objcopy::default())
}

/// What tells one release's `llvm-objcopy` rebuild from another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Objcopy {
    /// The order of the input's section headers.
    pub order: SectionOrder,
    /// Whether `.llvm_addrsig` keeps its `sh_link` to the symbol table
    /// (LLVM 19 and later); 13 … 16 write 0.
    pub addrsig_link: bool,
}

impl Default for Objcopy {
    /// LLVM 19's and 22's.
    fn default() -> Self {
        Objcopy {
            order: SectionOrder::AsInput,
            addrsig_link: true,
        }
    }
}

impl Objcopy {
    /// The `llvm-objcopy` of LLVM `major` (observed on 13 … 22).
    pub fn of_llvm(major: u32) -> Objcopy {
        Objcopy {
            order: if major <= 13 {
                SectionOrder::ByOffset
            } else {
                SectionOrder::AsInput
            },
            addrsig_link: major >= 19,
        }
    }
}

/// `SHT_LLVM_ADDRSIG`: the address-significance table of LLVM objects.
const SHT_LLVM_ADDRSIG: u32 = 0x6fff_4c03;

/// The order in which a rebuild writes the input's section headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionOrder {
    /// The input's header order (`llvm-objcopy` of LLVM 14 and later).
    AsInput,
    /// Section 0, then group sections, then by file offset, ties in header
    /// order: LLVM 13's `llvm-objcopy` (observed on clang-13 objects, whose
    /// `.strtab` comes first in the headers and last in the file, and on
    /// clang-14 objects, whose `.group` follows the sections before it in
    /// the file).
    ByOffset,
}

/// [`add_sections`] as the `llvm-objcopy` described by `objcopy` does it;
/// section indices are renumbered everywhere they are stored.
pub fn add_sections_as(
    elf: &[u8],
    new: &[(&str, &[u8], u64)],
    objcopy: Objcopy,
) -> Result<Vec<u8>> {
    let parsed = Elf::parse(elf)?;
    if parsed.sections.is_empty() {
        return Err(Error::at(
            rules::OBJ_2,
            0,
            "the ELF file has no section header table to add sections to",
        ));
    }
    for (name, _, _) in new {
        if name.as_bytes().contains(&0) {
            return Err(Error::other(format!(
                "section name '{}' contains a NUL byte",
                name.escape_debug()
            )));
        }
    }
    let keep = vec![true; parsed.sections.len()];
    rebuild(&parsed, keep, new, objcopy)
}

/// Remove every section for which `pred` is true, as
/// `llvm-objcopy --remove-section=…` does, and renumber section indices
/// everywhere they are stored. Relocation sections that apply to a removed
/// section are removed with it; removed sections are dropped from group
/// member lists. Section 0 and the section name table are never removed.
/// Fails when a kept section still needs a removed one (its `sh_link`, or
/// a symbol defined in it).
pub fn remove_sections(elf: &[u8], pred: impl Fn(&Section<'_>) -> bool) -> Result<Vec<u8>> {
    let parsed = Elf::parse(elf)?;
    if parsed.sections.is_empty() {
        return Ok(elf.to_vec());
    }
    let mut keep: Vec<bool> = parsed
        .sections
        .iter()
        .map(|s| s.index == 0 || !pred(s))
        .collect();
    if !keep[parsed.shstrndx] {
        return Err(Error::other(format!(
            "section {} '{}' is the section name table and cannot be removed",
            parsed.shstrndx,
            parsed.sections[parsed.shstrndx].name_str()
        )));
    }
    // Relocation sections of removed sections go too (llvm-objcopy does the same).
    for s in &parsed.sections {
        if s.info_is_section() && s.info != 0 && !keep.get(s.info as usize).copied().unwrap_or(true)
        {
            keep[s.index] = false;
        }
    }
    rebuild(&parsed, keep, &[], Objcopy::default())
}

/// `v` rounded up to a multiple of `a` (alignment 0 counts as 1), or
/// `None` on overflow.
fn align_up(v: u64, a: u64) -> Option<u64> {
    v.checked_next_multiple_of(a.max(1))
}

/// The common writer: keep the sections marked in `keep`, append `new`.
///
/// The phases run in this order, each failing before the next starts, so
/// the first error is always the same one.
fn rebuild<'a>(
    elf: &Elf<'a>,
    keep: Vec<bool>,
    new: &[(&str, &'a [u8], u64)],
    objcopy: Objcopy,
) -> Result<Vec<u8>> {
    let plan = Rebuild::new(elf, keep, new.len(), objcopy);
    plan.check_links()?;
    let mut names = plan.plan_names(new)?;
    let preserved = plan.preserved()?;
    let mut outs = plan.plan_sections(&mut names, &preserved, new)?;
    let layout = plan.lay_out(&mut outs, &preserved)?;
    let mut out = plan.write_contents(&outs, &preserved, layout)?;
    plan.write_section_headers(&outs, layout.shoff, &mut out)?;
    plan.write_counts(layout.shoff, &mut out)?;
    if plan.removed_any() || plan.renumbered() || !names.symbols.is_empty() {
        plan.renumber_symbols(&outs, &names.symbols, &mut out)?;
    }
    Ok(out)
}

/// The input of a rebuild and which of its sections stay, with their new
/// indices: what every phase reads.
struct Rebuild<'e, 'a> {
    elf: &'e Elf<'a>,
    enc: Encoding,
    shdr: Shdr,
    /// Whether each input section stays (by old index).
    keep: Vec<bool>,
    /// The kept input sections (old indices) in output order.
    order: Vec<usize>,
    /// Old index → new index (`u32::MAX` for a removed section).
    map: Vec<u32>,
    /// How many input sections stay.
    kept: usize,
    /// How many sections the output has (kept and new).
    total: usize,
    /// Whether `.llvm_addrsig` keeps its `sh_link`.
    addrsig_link: bool,
    /// Whether group sections are laid out (and numbered) first, as LLVM
    /// 13's `llvm-objcopy` does ([`SectionOrder::ByOffset`]).
    groups_first: bool,
}

/// The output's section name table and the offsets that point into it.
struct Names {
    /// The new `sh_name` of each input section (by old index).
    sections: Vec<u32>,
    /// The `sh_name` of each new section.
    added: Vec<u32>,
    /// Per symbol table sharing the name table (old index): the new
    /// `st_name` of each symbol. Empty unless the table was rebuilt.
    symbols: Vec<(usize, Vec<u32>)>,
    /// The table's new contents, when they change.
    table: Option<Vec<u8>>,
}

/// Byte ranges of the input that stay where they are: the file header
/// first, then the program header table and each segment's file bytes.
struct Preserved {
    ranges: Vec<(u64, u64)>,
}

impl Preserved {
    /// Whether a section stays in place: its file bytes (`bytes`, `size` >
    /// 0) lie inside a preserved range other than the file header, or,
    /// without file bytes, its offset points into one.
    fn holds(&self, off: u64, size: u64, bytes: bool) -> bool {
        self.ranges.iter().skip(1).any(|&(a, b)| {
            if bytes && size > 0 {
                off >= a && off.saturating_add(size) <= b
            } else {
                off >= a && off <= b
            }
        })
    }

    /// Where the preserved bytes end: the moving sections start there.
    fn end(&self) -> u64 {
        self.ranges.iter().map(|r| r.1).max().unwrap_or(0)
    }
}

/// Where the section header table goes and how long the output is.
#[derive(Clone, Copy)]
struct Layout {
    shoff: u64,
    file_len: usize,
}

impl<'e, 'a> Rebuild<'e, 'a> {
    /// Number the kept sections in `order`; new sections follow them.
    fn new(elf: &'e Elf<'a>, keep: Vec<bool>, added: usize, objcopy: Objcopy) -> Self {
        let mut kept_order: Vec<usize> = (0..elf.sections.len()).filter(|&i| keep[i]).collect();
        if objcopy.order == SectionOrder::ByOffset {
            // A stable sort: equal offsets keep their header order. Group
            // sections first: a group's header must come before its
            // members' (LLVM 13's `Object::sortSections`).
            kept_order.sort_by_key(|&i| {
                let s = &elf.sections[i];
                (i != 0, s.sh_type != super::SHT_GROUP, s.offset)
            });
        }
        let mut map = vec![u32::MAX; elf.sections.len()];
        for (new, &old) in kept_order.iter().enumerate() {
            map[old] = new as u32;
        }
        let kept = kept_order.len();
        Rebuild {
            elf,
            enc: elf.encoding,
            shdr: Shdr::of(elf.encoding),
            keep,
            order: kept_order,
            map,
            kept,
            total: kept + added,
            addrsig_link: objcopy.addrsig_link,
            groups_first: objcopy.order == SectionOrder::ByOffset,
        }
    }

    /// The new index of input section `old`; `None` when it goes or is
    /// not a section index.
    fn renumber(&self, old: u32) -> Option<u32> {
        self.map
            .get(old as usize)
            .copied()
            .filter(|&v| v != u32::MAX)
    }

    /// Whether any input section goes.
    fn removed_any(&self) -> bool {
        self.kept < self.elf.sections.len()
    }

    /// Whether any kept section gets another index than it had.
    fn renumbered(&self) -> bool {
        self.order.iter().enumerate().any(|(new, &old)| new != old)
    }

    /// The input sections that stay, in output order.
    fn kept_sections(&self) -> impl Iterator<Item = &'e Section<'a>> + '_ {
        self.order.iter().map(|&i| &self.elf.sections[i])
    }

    /// Refuse a rebuild in which a kept section's `sh_link` names a removed
    /// section (or no section at all).
    fn check_links(&self) -> Result<()> {
        let n = self.elf.sections.len();
        for sec in self.kept_sections() {
            if sec.index != 0 && sec.link != 0 && self.renumber(sec.link).is_none() {
                if sec.link as usize >= n {
                    return Err(Error::at(
                        rules::OBJ_3,
                        sec.header_pos + self.shdr.link,
                        format!(
                            "section {} '{}': sh_link {} is not a section index",
                            sec.index,
                            sec.name_str(),
                            sec.link
                        ),
                    ));
                }
                let target = self.elf.sections.get(sec.link as usize);
                return Err(Error::other(format!(
                    "section '{}' cannot be removed: section {} '{}' links to it",
                    target.map_or(Cow::Borrowed("?"), |t| t.name_str()),
                    sec.index,
                    sec.name_str()
                )));
            }
        }
        Ok(())
    }

    /// Decide the section name table. As `llvm-objcopy` does, it is
    /// rebuilt from the names in use (section names, new names, and symbol
    /// names when the table is shared with symbol tables, as `.strtab` is
    /// in LLVM objects) by LLVM's `StringTableBuilder` ([`StrTab`]).
    /// A table shared with anything else (dynamic sections, version
    /// tables), or naming a symbol outside itself, keeps its bytes, and
    /// new names are appended.
    fn plan_names(&self, new: &[(&str, &'a [u8], u64)]) -> Result<Names> {
        let elf = self.elf;
        let strtab = *elf
            .sections
            .get(elf.shstrndx)
            .ok_or_else(|| Error::other("internal: no section name table"))?;
        let names = strtab.data_or_err(elf.data)?;
        let sharers: Vec<&Section<'a>> = self
            .kept_sections()
            .filter(|x| x.link as usize == elf.shstrndx && x.index != 0)
            .collect();
        let changed = self.removed_any() || !new.is_empty();
        if changed && sharers.iter().all(|x| x.sh_type == SHT_SYMTAB) {
            if let Some(plan) = self.rebuilt_names(names, &sharers, new)? {
                return Ok(plan);
            }
        }
        let mut plan = Names {
            sections: elf.sections.iter().map(|x| x.sh_name).collect(),
            added: Vec::new(),
            symbols: Vec::new(),
            table: None,
        };
        if !new.is_empty() {
            let table = plan.table.get_or_insert_with(|| {
                let mut table = names.to_vec();
                if table.is_empty() {
                    table.push(0);
                }
                table
            });
            for (name, _, _) in new {
                let off = u32::try_from(table.len())
                    .map_err(|_| Error::other("section name table exceeds 4 GiB"))?;
                table.extend_from_slice(name.as_bytes());
                table.push(0);
                plan.added.push(off);
            }
        }
        Ok(plan)
    }

    /// The name table of the names in use (`names` is the input's), built
    /// by [`StrTab`]: the new `sh_name` of each kept section, of each
    /// new section, the new `st_name` of each symbol of the `sharers`, and
    /// the table. `None` when a symbol's name lies outside the table.
    fn rebuilt_names(
        &self,
        names: &'a [u8],
        sharers: &[&Section<'a>],
        new: &[(&'a str, &'a [u8], u64)],
    ) -> Result<Option<Names>> {
        let enc = self.enc;
        let mut wanted: Vec<&[u8]> = Vec::new();
        for sec in self.kept_sections().filter(|x| x.index != 0) {
            wanted.push(sec.name);
        }
        wanted.extend(new.iter().map(|(n, _, _)| n.as_bytes()));
        let mut sym_names: Vec<(usize, Vec<&[u8]>)> = Vec::new();
        for st in sharers {
            let contents = st.data_or_err(self.elf.data)?;
            let mut v = Vec::with_capacity(contents.len() / enc.sym_size() as usize);
            for sym in contents.chunks_exact(enc.sym_size() as usize) {
                let st_name = enc.u32(sym, 0).unwrap_or(0) as usize;
                let Some(tail) = names.get(st_name..) else {
                    // A name outside the table: keep the table as it is.
                    return Ok(None);
                };
                let len = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
                v.push(&tail[..len]);
            }
            wanted.extend(v.iter().copied());
            sym_names.push((st.index, v));
        }
        let table = StrTab::build(wanted.iter().copied());
        if table.len() > u64::from(u32::MAX) {
            return Err(Error::other("section name table exceeds 4 GiB"));
        }
        // Every name was added, so each has an offset below 2^32.
        let at = |n: &[u8]| table.offset(n).map_or(0, |o| o as u32);
        let mut sections: Vec<u32> = self.elf.sections.iter().map(|x| x.sh_name).collect();
        for sec in self.kept_sections().filter(|x| x.index != 0) {
            sections[sec.index] = at(sec.name);
        }
        Ok(Some(Names {
            sections,
            added: new.iter().map(|(n, _, _)| at(n.as_bytes())).collect(),
            symbols: sym_names
                .into_iter()
                .map(|(i, v)| (i, v.into_iter().map(at).collect()))
                .collect(),
            table: Some(table.bytes),
        }))
    }

    /// Decide which input bytes stay where they are: the file header, the
    /// program headers and every segment's file bytes. A segment outside
    /// the file is an OBJ-2 error.
    fn preserved(&self) -> Result<Preserved> {
        let (elf, enc, data) = (self.elf, self.enc, self.elf.data);
        let mut ranges: Vec<(u64, u64)> = vec![(0, enc.ehdr_size())];
        if !elf.segments.is_empty() {
            ranges.push((
                elf.phoff,
                elf.phoff + elf.segments.len() as u64 * enc.phdr_size(),
            ));
        }
        for seg in &elf.segments {
            if seg.filesz > 0 {
                let end = seg
                    .offset
                    .checked_add(seg.filesz)
                    .filter(|&e| e <= data.len() as u64);
                let Some(end) = end else {
                    return Err(obj2(
                        elf.phoff,
                        format!(
                            "a segment [0x{:x}, +0x{:x}) lies outside the file of {} bytes",
                            seg.offset,
                            seg.filesz,
                            data.len()
                        ),
                    ));
                };
                ranges.push((seg.offset, end));
            }
        }
        Ok(Preserved { ranges })
    }

    /// Decide the output's sections in header order: the kept ones (the
    /// name table with its new contents, group member lists pruned, a
    /// fixed offset for those in preserved ranges), then the new ones.
    fn plan_sections(
        &self,
        names: &mut Names,
        preserved: &Preserved,
        new: &[(&str, &'a [u8], u64)],
    ) -> Result<Vec<Out<'a>>> {
        let data = self.elf.data;
        let mut outs: Vec<Out<'a>> = Vec::with_capacity(self.total);
        for sec in self.kept_sections() {
            let contents = sec.data_or_err(data)?;
            let table = if sec.index == self.elf.shstrndx {
                names.table.take()
            } else {
                None
            };
            let src = if let Some(table) = table {
                Src::Owned(Cow::Owned(table))
            } else if sec.sh_type == SHT_GROUP && (self.removed_any() || self.renumbered()) {
                Src::Owned(Cow::Owned(self.pruned_group(sec, contents)?))
            } else if sec.has_file_data() {
                Src::Input(contents)
            } else {
                Src::None
            };
            let size = match &src {
                Src::Owned(b) => b.len() as u64,
                _ => sec.size,
            };
            let fixed_at = match src {
                Src::Input(_) if preserved.holds(sec.offset, sec.size, true) => Some(sec.offset),
                Src::None if preserved.holds(sec.offset, sec.size, false) => Some(sec.offset),
                _ => None,
            };
            outs.push(Out {
                old: Some(*sec),
                src,
                fixed: fixed_at,
                new_name: names.sections[sec.index],
                offset: 0,
                size,
                sh_type: sec.sh_type,
                flags: sec.flags,
                align: sec.align,
            });
        }
        for ((_, contents, flags), name) in new.iter().zip(&names.added) {
            outs.push(Out {
                old: None,
                src: Src::Owned(Cow::Borrowed(contents)),
                fixed: None,
                new_name: *name,
                offset: 0,
                size: contents.len() as u64,
                sh_type: SHT_PROGBITS,
                flags: *flags,
                align: 1,
            });
        }
        Ok(outs)
    }

    /// A group's member list without its removed members, the others
    /// renumbered (the flag word stays). A member that is no section index
    /// is an OBJ-3 error.
    fn pruned_group(&self, sec: &Section<'a>, contents: &[u8]) -> Result<Vec<u8>> {
        let enc = self.enc;
        let mut g = Vec::with_capacity(contents.len());
        for (k, m) in contents.chunks_exact(4).enumerate() {
            let v = enc.u32(m, 0).unwrap_or(0);
            if k == 0 {
                g.extend_from_slice(m);
                continue;
            }
            match self.renumber(v) {
                Some(nv) => {
                    let mut b = [0u8; 4];
                    enc.put_u32(&mut b, 0, u64::from(nv))?;
                    g.extend_from_slice(&b);
                }
                None if self.keep.get(v as usize).is_some() => {} // removed member
                None => {
                    return Err(Error::at(
                        rules::OBJ_3,
                        sec.offset + 4 * k as u64,
                        format!(
                            "group '{}': member {v} is not a section index",
                            sec.name_str()
                        ),
                    ))
                }
            }
        }
        Ok(g)
    }

    /// Decide every offset: sections in preserved ranges keep theirs; the
    /// others follow the preserved bytes in input file order (new sections
    /// last), each aligned, with padding bounded by the input's size (at
    /// least 1 MiB); the section header table comes last, word-aligned.
    fn lay_out(&self, outs: &mut [Out<'a>], preserved: &Preserved) -> Result<Layout> {
        let enc = self.enc;
        let budget = (self.elf.data.len() as u64).max(1 << 20);
        let mut padding = 0u64;
        let mut cursor = preserved.end();
        let mut order: Vec<usize> = (0..outs.len())
            .filter(|&i| outs[i].fixed.is_none())
            .collect();
        let groups_first = self.groups_first;
        order.sort_by_key(|&i| match outs[i].old {
            Some(o) => (
                0,
                groups_first && o.sh_type != super::SHT_GROUP,
                o.offset,
                o.index,
            ),
            None => (1, false, 0, i),
        });
        let overflow = || Error::other("the rebuilt ELF file would exceed 2^64 bytes");
        for i in order {
            let o = &mut outs[i];
            let occupies = !matches!(o.src, Src::None) && o.size > 0;
            let at = align_up(cursor, o.align).ok_or_else(overflow)?;
            if occupies {
                padding += at - cursor;
                if padding > budget {
                    return Err(Error::at(
                        rules::OBJ_3,
                        o.old.map_or(0, |x| x.header_pos + self.shdr.align),
                        format!(
                            "section alignments need more than {budget} bytes of padding (alignment {})",
                            o.align
                        ),
                    ));
                }
                o.offset = at;
                cursor = at.checked_add(o.size).ok_or_else(overflow)?;
            } else if padding + (at - cursor) <= budget && o.old.is_none_or(|x| x.index != 0) {
                // llvm-objcopy aligns the cursor for every section, an
                // empty or NOBITS one too: what follows starts there.
                padding += at - cursor;
                o.offset = at;
                cursor = at;
            } else {
                o.offset = cursor;
            }
        }
        for o in outs.iter_mut() {
            if let Some(f) = o.fixed {
                o.offset = f;
            }
        }
        let shoff = align_up(cursor, enc.word_size()).ok_or_else(overflow)?;
        let file_len = (self.total as u64)
            .checked_mul(enc.shdr_size())
            .and_then(|t| t.checked_add(shoff))
            .ok_or_else(overflow)?;
        let file_len = usize::try_from(file_len).map_err(|_| overflow())?;
        Ok(Layout { shoff, file_len })
    }

    /// The output's bytes: the preserved ranges copied, every moving
    /// section's contents at its offset, zeros elsewhere. The size is
    /// bounded by the input, the new contents and the padding budget, never
    /// by a raw field.
    fn write_contents(
        &self,
        outs: &[Out<'a>],
        preserved: &Preserved,
        layout: Layout,
    ) -> Result<Vec<u8>> {
        let data = self.elf.data;
        let mut out = vec![0u8; layout.file_len];
        for &(a, b) in &preserved.ranges {
            let (a, b) = (a as usize, b as usize);
            if let (Some(dst), Some(src)) = (out.get_mut(a..b), data.get(a..b)) {
                dst.copy_from_slice(src);
            }
        }
        for o in outs {
            if o.fixed.is_some() {
                continue;
            }
            let bytes: &[u8] = match &o.src {
                Src::Input(b) => b,
                Src::Owned(b) => b,
                Src::None => continue,
            };
            let at = o.offset as usize;
            out.get_mut(at..at + bytes.len())
                .ok_or_else(|| Error::other("internal: section outside the rebuilt file"))?
                .copy_from_slice(bytes);
        }
        Ok(out)
    }

    /// The section header table at `shoff`: a kept section's header is
    /// copied with `sh_link` and `sh_info` (when it is a section index)
    /// renumbered; a new one gets its type, flags and alignment; all but
    /// section 0 get their new name, offset and size.
    fn write_section_headers(&self, outs: &[Out<'a>], shoff: u64, out: &mut [u8]) -> Result<()> {
        let (enc, s, data) = (self.enc, &self.shdr, self.elf.data);
        let shdr_size = enc.shdr_size();
        for (j, o) in outs.iter().enumerate() {
            let at = shoff + j as u64 * shdr_size;
            match o.old {
                Some(old) => {
                    let src = data
                        .get(old.header_pos as usize..(old.header_pos + shdr_size) as usize)
                        .ok_or_else(|| Error::other("internal: header outside the input"))?;
                    out.get_mut(at as usize..(at + shdr_size) as usize)
                        .ok_or_else(|| Error::other("internal: header outside the output"))?
                        .copy_from_slice(src);
                    if old.index != 0 {
                        let link = self.renumber(old.link).filter(|_| old.link != 0);
                        let link = match old.sh_type {
                            SHT_LLVM_ADDRSIG if !self.addrsig_link => 0,
                            _ => link.unwrap_or(0),
                        };
                        enc.put_u32(out, at + s.link, u64::from(link))?;
                        if old.info_is_section() && old.info != 0 {
                            let info = self.renumber(old.info).ok_or_else(|| {
                                Error::at(
                                    rules::OBJ_3,
                                    old.header_pos + s.info,
                                    format!(
                                        "section {} '{}': sh_info {} is not a section index",
                                        old.index,
                                        old.name_str(),
                                        old.info
                                    ),
                                )
                            })?;
                            enc.put_u32(out, at + s.info, u64::from(info))?;
                        }
                    }
                }
                None => {
                    enc.put_u32(out, at + 4, u64::from(o.sh_type))?;
                    enc.put_word(out, at + s.flags, o.flags)?;
                    enc.put_word(out, at + s.align, o.align)?;
                }
            }
            if o.old.is_some_and(|x| x.index == 0) {
                continue; // section 0 stays as it is, but for the fields written by write_counts
            }
            enc.put_u32(out, at, u64::from(o.new_name))?;
            enc.put_word(out, at + s.offset, o.offset)?;
            enc.put_word(out, at + s.size, o.size)?;
        }
        Ok(())
    }

    /// The section count and the name table's index: in the file header,
    /// or, when they reach `SHN_LORESERVE`, in section 0 (`sh_size`,
    /// `sh_link`) with the header saying so; and the file header's
    /// `e_shoff`, `e_shentsize` and `e_ehsize`.
    fn write_counts(&self, shoff: u64, out: &mut [u8]) -> Result<()> {
        let (enc, s) = (self.enc, &self.shdr);
        let h = Ehdr::of(enc);
        let total = self.total as u64;
        let new_shstrndx = u64::from(self.renumber(self.elf.shstrndx as u32).unwrap_or(0));
        // (value in the file header, value in section 0)
        let (shnum, count0) = if total >= u64::from(SHN_LORESERVE) {
            (0, total)
        } else {
            (total, 0)
        };
        let (shstrndx, link0) = if new_shstrndx >= u64::from(SHN_LORESERVE) {
            (u64::from(SHN_XINDEX), new_shstrndx)
        } else {
            (new_shstrndx, 0)
        };
        enc.put_word(out, shoff + s.size, count0)?;
        enc.put_u32(out, shoff + s.link, link0)?;
        enc.put_word(out, h.shoff, shoff)?;
        enc.put_u16(out, h.shentsize, enc.shdr_size())?;
        enc.put_u16(out, h.ehsize, enc.ehdr_size())?;
        enc.put_u16(out, h.shnum, shnum)?;
        enc.put_u16(out, h.shstrndx, shstrndx)?;
        Ok(())
    }

    /// After a rebuild, the symbols of every symbol table: `st_name` from
    /// the rebuilt name table (`sym_names`), and `st_shndx` (or its
    /// `SHT_SYMTAB_SHNDX` entry) renumbered. A symbol defined in a removed
    /// section fails: offload-kit does not remove symbols.
    fn renumber_symbols(
        &self,
        outs: &[Out<'a>],
        sym_names: &[(usize, Vec<u32>)],
        out: &mut [u8],
    ) -> Result<()> {
        let (elf, enc) = (self.elf, self.enc);
        let n = elf.sections.len();
        let new_offset_of = |old: usize| {
            let mut kept = outs
                .iter()
                .filter(|o| o.old.is_some_and(|x| x.index == old));
            kept.next().map(|o| o.offset)
        };
        for o in outs {
            let Some(old) = o.old else { continue };
            if old.sh_type != SHT_SYMTAB && old.sh_type != SHT_DYNSYM {
                continue;
            }
            let count = o.size / enc.sym_size();
            if let Some((_, v)) = sym_names.iter().find(|(i, _)| *i == old.index) {
                for (k, &nm) in v.iter().enumerate() {
                    enc.put_u32(out, o.offset + k as u64 * enc.sym_size(), u64::from(nm))?;
                }
            }
            let xtab = elf
                .sections
                .iter()
                .find(|x| {
                    self.keep[x.index]
                        && x.sh_type == SHT_SYMTAB_SHNDX
                        && x.link as usize == old.index
                })
                .and_then(|x| new_offset_of(x.index).map(|off| (off, x.size)));
            for k in 0..count {
                let at = o.offset + k * enc.sym_size() + enc.sym_shndx();
                let v = u32::from(enc.u16(out, at).unwrap_or(0));
                let sym_err = |what: String| {
                    Error::other(format!(
                        "symbol {k} of '{}' {what}; offload-kit does not remove symbols",
                        old.name_str()
                    ))
                };
                let in_pos = old.offset + k * enc.sym_size() + enc.sym_shndx();
                let map_sym = |idx: u32| -> Result<u32> {
                    if idx as usize >= n {
                        return Err(Error::at(
                            rules::OBJ_3,
                            in_pos,
                            format!(
                                "symbol {k} of '{}': section index {idx} is out of range",
                                old.name_str()
                            ),
                        ));
                    }
                    self.renumber(idx)
                        .ok_or_else(|| sym_err(format!("is defined in removed section {idx}")))
                };
                if v == SHN_XINDEX {
                    let Some((xoff, _)) = xtab.filter(|t| 4 * k + 4 <= t.1) else {
                        return Err(sym_err(
                            "uses SHN_XINDEX without an index table entry".into(),
                        ));
                    };
                    let xat = xoff + 4 * k;
                    let real = enc.u32(out, xat).unwrap_or(0);
                    let nv = map_sym(real)?;
                    enc.put_u32(out, xat, u64::from(nv))?;
                } else if v != SHN_UNDEF && v < SHN_LORESERVE {
                    let nv = map_sym(v)?;
                    if nv >= SHN_LORESERVE {
                        return Err(sym_err("would need an extended section index".to_string()));
                    }
                    enc.put_u16(out, at, u64::from(nv))?;
                }
            }
        }
        Ok(())
    }
}
