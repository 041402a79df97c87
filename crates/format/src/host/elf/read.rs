//! The ELF reader: the field offsets of the file and section headers,
//! [`Section`], [`Segment`] and [`Elf`], which parses a file strictly
//! (OBJ-1, OBJ-2) and checks section contents and indices (OBJ-3).

use super::{
    detect, obj2, Encoding, ObjectFormat, ET_REL, SHF_INFO_LINK, SHN_LORESERVE, SHN_UNDEF,
    SHN_XINDEX, SHT_DYNSYM, SHT_GROUP, SHT_NOBITS, SHT_NULL, SHT_REL, SHT_RELA, SHT_STRTAB,
    SHT_SYMTAB, SHT_SYMTAB_SHNDX,
};
use crate::error::{Error, Errors, Result};
use crate::rules;
use std::borrow::Cow;

/// File-header field offsets for a class.
pub(crate) struct Ehdr {
    /// `e_phoff`.
    pub(crate) phoff: u64,
    /// `e_shoff`.
    pub(crate) shoff: u64,
    /// `e_ehsize`.
    pub(crate) ehsize: u64,
    /// `e_phentsize`.
    pub(crate) phentsize: u64,
    /// `e_phnum`.
    pub(crate) phnum: u64,
    /// `e_shentsize`.
    pub(crate) shentsize: u64,
    /// `e_shnum`.
    pub(crate) shnum: u64,
    /// `e_shstrndx`.
    pub(crate) shstrndx: u64,
}

impl Ehdr {
    /// The offsets for `enc`'s class.
    pub(crate) fn of(enc: Encoding) -> Ehdr {
        if enc.is64 {
            Ehdr {
                phoff: 32,
                shoff: 40,
                ehsize: 52,
                phentsize: 54,
                phnum: 56,
                shentsize: 58,
                shnum: 60,
                shstrndx: 62,
            }
        } else {
            Ehdr {
                phoff: 28,
                shoff: 32,
                ehsize: 40,
                phentsize: 42,
                phnum: 44,
                shentsize: 46,
                shnum: 48,
                shstrndx: 50,
            }
        }
    }
}

/// Section-header field offsets for a class (`sh_name` is at 0 and
/// `sh_type` at 4 in both).
pub(crate) struct Shdr {
    /// `sh_flags`.
    pub(crate) flags: u64,
    /// `sh_addr`.
    pub(crate) addr: u64,
    /// `sh_offset`.
    pub(crate) offset: u64,
    /// `sh_size`.
    pub(crate) size: u64,
    /// `sh_link`.
    pub(crate) link: u64,
    /// `sh_info`.
    pub(crate) info: u64,
    /// `sh_addralign`.
    pub(crate) align: u64,
    /// `sh_entsize`.
    pub(crate) entsize: u64,
}

impl Shdr {
    /// The offsets for `enc`'s class.
    pub(crate) fn of(enc: Encoding) -> Shdr {
        if enc.is64 {
            Shdr {
                flags: 8,
                addr: 16,
                offset: 24,
                size: 32,
                link: 40,
                info: 44,
                align: 48,
                entsize: 56,
            }
        } else {
            Shdr {
                flags: 8,
                addr: 12,
                offset: 16,
                size: 20,
                link: 24,
                info: 28,
                align: 32,
                entsize: 36,
            }
        }
    }
}

/// One section header, with absolute positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section<'a> {
    /// Index in the section header table.
    pub index: usize,
    /// The name as stored (without its NUL).
    pub name: &'a [u8],
    /// Absolute offset of the name in the file (inside the name string table).
    pub name_pos: u64,
    /// Absolute offset of the section header.
    pub header_pos: u64,
    /// `sh_name`.
    pub sh_name: u32,
    /// `sh_type`.
    pub sh_type: u32,
    /// `sh_flags`.
    pub flags: u64,
    /// `sh_addr`.
    pub addr: u64,
    /// `sh_offset`: absolute offset of the contents.
    pub offset: u64,
    /// `sh_size`.
    pub size: u64,
    /// `sh_link`.
    pub link: u32,
    /// `sh_info`.
    pub info: u32,
    /// `sh_addralign`.
    pub align: u64,
    /// `sh_entsize`.
    pub entsize: u64,
}

impl<'a> Section<'a> {
    /// The name as text (lossy for non-UTF-8 bytes).
    pub fn name_str(&self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.name)
    }

    /// Whether the section occupies bytes in the file (not `SHT_NOBITS`, not `SHT_NULL`).
    pub fn has_file_data(&self) -> bool {
        self.sh_type != SHT_NOBITS && self.sh_type != SHT_NULL
    }

    /// Whether `sh_info` holds a section index (relocation sections, `SHF_INFO_LINK`).
    pub fn info_is_section(&self) -> bool {
        self.sh_type == SHT_REL || self.sh_type == SHT_RELA || self.flags & SHF_INFO_LINK != 0
    }

    /// The contents within `file`: empty for sections without file data,
    /// `None` when the range lies outside the file (OBJ-3).
    pub fn data(&self, file: &'a [u8]) -> Option<&'a [u8]> {
        if !self.has_file_data() {
            return Some(&[]);
        }
        let start = usize::try_from(self.offset).ok()?;
        let end = start.checked_add(usize::try_from(self.size).ok()?)?;
        file.get(start..end)
    }

    /// The contents, or an OBJ-3 error at the section header.
    pub fn data_or_err(&self, file: &'a [u8]) -> Result<&'a [u8]> {
        self.data(file).ok_or_else(|| {
            Error::at(
                rules::OBJ_3,
                self.header_pos,
                format!(
                    "section {} '{}': contents [0x{:x}, +0x{:x}) lie outside the file of {} bytes",
                    self.index,
                    self.name_str(),
                    self.offset,
                    self.size,
                    file.len()
                ),
            )
        })
    }
}

/// One program header (segment): the part the writers need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// `p_type`.
    pub p_type: u32,
    /// `p_offset`.
    pub offset: u64,
    /// `p_filesz`.
    pub filesz: u64,
    /// `p_vaddr`.
    pub vaddr: u64,
    /// `p_align`.
    pub align: u64,
    /// Where the program header itself lies in the file.
    pub header_pos: u64,
}

/// A parsed ELF file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elf<'a> {
    /// The file's bytes.
    pub data: &'a [u8],
    /// Class and byte order.
    pub encoding: Encoding,
    /// `e_type` (`ET_REL`, `ET_EXEC`, `ET_DYN`, …).
    pub e_type: u16,
    /// `e_machine`.
    pub machine: u16,
    /// `e_shoff`.
    pub shoff: u64,
    /// `e_phoff`.
    pub phoff: u64,
    /// The section name string table's index (after the `SHN_XINDEX` escape).
    pub shstrndx: usize,
    /// Sections in header order (index 0 included when there is a table).
    pub sections: Vec<Section<'a>>,
    /// Program headers in order.
    pub segments: Vec<Segment>,
}

/// The ELF class and byte order of `data` (OBJ-2 when either byte is
/// invalid or missing).
fn encoding_of(data: &[u8]) -> Result<Encoding> {
    let is64 = match data.get(4) {
        Some(1) => false,
        Some(2) => true,
        Some(c) => return Err(obj2(4, format!("invalid ELF class byte {c}"))),
        None => {
            return Err(obj2(
                data.len() as u64,
                "the ELF identification is truncated",
            ))
        }
    };
    let big_endian = match data.get(5) {
        Some(1) => false,
        Some(2) => true,
        Some(c) => return Err(obj2(5, format!("invalid ELF data-encoding byte {c}"))),
        None => {
            return Err(obj2(
                data.len() as u64,
                "the ELF identification is truncated",
            ))
        }
    };
    Ok(Encoding { is64, big_endian })
}

/// The program header table, checked to lie inside the file (OBJ-2).
fn segments_of(
    data: &[u8],
    enc: Encoding,
    h: &Ehdr,
    phoff: u64,
    phnum: u64,
    phentsize: u64,
) -> Result<Vec<Segment>> {
    let len = data.len() as u64;
    let trunc = || obj2(len, "the ELF file header is truncated");
    let mut segments = Vec::new();
    if phnum > 0 {
        if phentsize != enc.phdr_size() {
            return Err(obj2(
                h.phentsize,
                format!("e_phentsize is {phentsize}, expected {}", enc.phdr_size()),
            ));
        }
        let end = phnum
            .checked_mul(phentsize)
            .and_then(|s| s.checked_add(phoff));
        if end.is_none_or(|e| e > len) {
            return Err(obj2(
                h.phoff,
                format!(
                    "the program header table ({phnum} entries at 0x{phoff:x}) lies outside the file of {len} bytes"
                ),
            ));
        }
        segments.reserve(phnum as usize);
        for i in 0..phnum {
            let at = phoff + i * phentsize;
            let (o_off, o_vaddr, o_filesz, o_align) = if enc.is64 {
                (8, 16, 32, 48)
            } else {
                (4, 8, 16, 28)
            };
            segments.push(Segment {
                p_type: enc.u32(data, at).ok_or_else(trunc)?,
                offset: enc.word(data, at + o_off).ok_or_else(trunc)?,
                filesz: enc.word(data, at + o_filesz).ok_or_else(trunc)?,
                vaddr: enc.word(data, at + o_vaddr).ok_or_else(trunc)?,
                align: enc.word(data, at + o_align).ok_or_else(trunc)?,
                header_pos: at,
            });
        }
    }
    Ok(segments)
}

/// Give every section its name from the section name table (section
/// `shstrndx`), which must be an `SHT_STRTAB` inside the file that ends
/// with a NUL (OBJ-2).
fn name_sections<'a>(
    data: &'a [u8],
    enc: Encoding,
    sections: &mut [Section<'a>],
    shstrndx: usize,
) -> Result<()> {
    let len = data.len() as u64;
    let s = Shdr::of(enc);
    let strtab = sections[shstrndx];
    if strtab.sh_type != SHT_STRTAB {
        return Err(obj2(
            strtab.header_pos + 4,
            format!(
                "the section name table (section {shstrndx}) has type {}, not SHT_STRTAB",
                strtab.sh_type
            ),
        ));
    }
    let names = strtab.data(data).ok_or_else(|| {
        obj2(
            strtab.header_pos + s.offset,
            format!(
                "the section name table [0x{:x}, +0x{:x}) lies outside the file of {len} bytes",
                strtab.offset, strtab.size
            ),
        )
    })?;
    if names.last().is_some_and(|&b| b != 0) {
        return Err(obj2(
            strtab.offset + strtab.size - 1,
            "the section name table does not end with a NUL byte",
        ));
    }
    for sec in sections.iter_mut() {
        let start = sec.sh_name as usize;
        let Some(tail) = names.get(start..).filter(|t| !t.is_empty()) else {
            if sec.index == 0 && sec.sh_name == 0 {
                continue;
            }
            return Err(obj2(
                sec.header_pos,
                format!(
                    "section {}: name offset 0x{:x} lies outside the section name table of {} bytes",
                    sec.index,
                    sec.sh_name,
                    names.len()
                ),
            ));
        };
        let n = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        sec.name = &tail[..n];
        sec.name_pos = strtab.offset + u64::from(sec.sh_name);
    }
    Ok(())
}

impl<'a> Elf<'a> {
    /// Read the file header, the program header table, the section header
    /// table and the section names. The first structural problem is
    /// returned (OBJ-1, OBJ-2); section contents are not checked here (see
    /// [`Elf::check`]). Nothing is allocated beyond what the file's size
    /// bounds.
    pub fn parse(data: &'a [u8]) -> Result<Elf<'a>> {
        let format = detect(data);
        if format != ObjectFormat::Elf {
            let what = if format == ObjectFormat::Unknown {
                "not an object file".to_string()
            } else {
                format!("unsupported object format {}", format.name())
            };
            return Err(Error::at(
                rules::OBJ_1,
                0,
                format!("{what}: object-file bundles are read from ELF files only"),
            ));
        }
        let enc = encoding_of(data)?;
        let len = data.len() as u64;
        if len < enc.ehdr_size() {
            return Err(obj2(
                len,
                format!(
                    "the ELF file header needs {} bytes, the file has {len}",
                    enc.ehdr_size()
                ),
            ));
        }
        let h = Ehdr::of(enc);
        let trunc = || obj2(len, "the ELF file header is truncated");
        let e_type = enc.u16(data, 16).ok_or_else(trunc)?;
        let machine = enc.u16(data, 18).ok_or_else(trunc)?;
        let phoff = enc.word(data, h.phoff).ok_or_else(trunc)?;
        let shoff = enc.word(data, h.shoff).ok_or_else(trunc)?;
        let phentsize = u64::from(enc.u16(data, h.phentsize).ok_or_else(trunc)?);
        let phnum = u64::from(enc.u16(data, h.phnum).ok_or_else(trunc)?);
        let shentsize = u64::from(enc.u16(data, h.shentsize).ok_or_else(trunc)?);
        let e_shnum = u64::from(enc.u16(data, h.shnum).ok_or_else(trunc)?);
        let e_shstrndx = u64::from(enc.u16(data, h.shstrndx).ok_or_else(trunc)?);

        let segments = segments_of(data, enc, &h, phoff, phnum, phentsize)?;

        let mut elf = Elf {
            data,
            encoding: enc,
            e_type,
            machine,
            shoff,
            phoff,
            shstrndx: 0,
            sections: Vec::new(),
            segments,
        };
        if shoff == 0 {
            return Ok(elf);
        }
        if shentsize != enc.shdr_size() {
            return Err(obj2(
                h.shentsize,
                format!("e_shentsize is {shentsize}, expected {}", enc.shdr_size()),
            ));
        }
        if shoff.checked_add(shentsize).is_none_or(|e| e > len) {
            return Err(obj2(
                h.shoff,
                format!(
                    "the section header table at 0x{shoff:x} lies outside the file of {len} bytes"
                ),
            ));
        }
        let s = Shdr::of(enc);
        // Extended numbering: section 0 holds the real count and name-table index.
        let shnum = if e_shnum == 0 {
            enc.word(data, shoff + s.size).ok_or_else(trunc)?
        } else {
            e_shnum
        };
        let shstrndx = if e_shstrndx == u64::from(SHN_XINDEX) {
            u64::from(enc.u32(data, shoff + s.link).ok_or_else(trunc)?)
        } else {
            e_shstrndx
        };
        let table_end = shnum
            .checked_mul(shentsize)
            .and_then(|t| t.checked_add(shoff));
        if shnum == 0 || table_end.is_none_or(|e| e > len) {
            return Err(obj2(
                if e_shnum == 0 { shoff + s.size } else { h.shnum },
                format!(
                    "the section header table ({shnum} entries at 0x{shoff:x}) lies outside the file of {len} bytes"
                ),
            ));
        }
        if shstrndx >= shnum {
            return Err(obj2(
                if e_shstrndx == u64::from(SHN_XINDEX) {
                    shoff + s.link
                } else {
                    h.shstrndx
                },
                format!("the section name table index {shstrndx} is not below the section count {shnum}"),
            ));
        }
        // shnum * shentsize <= len, so this allocation is bounded by the file size.
        let mut sections = Vec::with_capacity(shnum as usize);
        for i in 0..shnum {
            let at = shoff + i * shentsize;
            sections.push(Section {
                index: i as usize,
                name: &[],
                name_pos: 0,
                header_pos: at,
                sh_name: enc.u32(data, at).ok_or_else(trunc)?,
                sh_type: enc.u32(data, at + 4).ok_or_else(trunc)?,
                flags: enc.word(data, at + s.flags).ok_or_else(trunc)?,
                addr: enc.word(data, at + s.addr).ok_or_else(trunc)?,
                offset: enc.word(data, at + s.offset).ok_or_else(trunc)?,
                size: enc.word(data, at + s.size).ok_or_else(trunc)?,
                link: enc.u32(data, at + s.link).ok_or_else(trunc)?,
                info: enc.u32(data, at + s.info).ok_or_else(trunc)?,
                align: enc.word(data, at + s.align).ok_or_else(trunc)?,
                entsize: enc.word(data, at + s.entsize).ok_or_else(trunc)?,
            });
        }
        name_sections(data, enc, &mut sections, shstrndx as usize)?;
        elf.shstrndx = shstrndx as usize;
        elf.sections = sections;
        Ok(elf)
    }

    /// [`Elf::parse`] plus [`Elf::check`]: every violation as an error.
    pub fn parse_strict(data: &'a [u8]) -> Result<Elf<'a>, Errors> {
        let elf = Elf::parse(data).map_err(|e| vec![e])?;
        let errs = elf.check();
        if errs.is_empty() {
            Ok(elf)
        } else {
            Err(errs.into())
        }
    }

    /// Every OBJ-3 violation: section contents outside the file, section
    /// indices (`sh_link`, relocation targets, symbol sections, group
    /// members) out of range, symbol tables whose size is not a multiple
    /// of the symbol size.
    pub fn check(&self) -> Vec<Error> {
        let mut errs = Vec::new();
        let n = self.sections.len() as u64;
        let s = Shdr::of(self.encoding);
        for sec in &self.sections {
            let Some(contents) = sec.data(self.data) else {
                errs.push(sec.data_or_err(self.data).err().unwrap_or_else(|| {
                    Error::at(rules::OBJ_3, sec.header_pos, "contents out of range")
                }));
                continue;
            };
            if u64::from(sec.link) >= n && sec.index != 0 {
                errs.push(Error::at(
                    rules::OBJ_3,
                    sec.header_pos + s.link,
                    format!(
                        "section {} '{}': sh_link {} is not a section index (there are {n})",
                        sec.index,
                        sec.name_str(),
                        sec.link
                    ),
                ));
            }
            if sec.info_is_section() && u64::from(sec.info) >= n {
                errs.push(Error::at(
                    rules::OBJ_3,
                    sec.header_pos + s.info,
                    format!(
                        "section {} '{}': sh_info {} is not a section index (there are {n})",
                        sec.index,
                        sec.name_str(),
                        sec.info
                    ),
                ));
            }
            if sec.sh_type == SHT_SYMTAB || sec.sh_type == SHT_DYNSYM {
                errs.extend(self.check_symbols(sec, contents));
            }
            if sec.sh_type == SHT_GROUP {
                for (k, m) in contents.chunks_exact(4).enumerate().skip(1) {
                    let v = self.encoding.u32(m, 0).unwrap_or(0);
                    if u64::from(v) >= n || v == 0 {
                        errs.push(Error::at(
                            rules::OBJ_3,
                            sec.offset + 4 * k as u64,
                            format!(
                                "group section {} '{}': member {v} is not a section index",
                                sec.index,
                                sec.name_str()
                            ),
                        ));
                    }
                }
            }
        }
        errs.sort_by_key(|e| e.offset());
        errs
    }

    fn check_symbols(&self, sec: &Section<'a>, contents: &[u8]) -> Vec<Error> {
        let enc = self.encoding;
        let mut errs = Vec::new();
        let n = self.sections.len() as u64;
        if contents.len() as u64 % enc.sym_size() != 0 {
            errs.push(Error::at(
                rules::OBJ_3,
                sec.header_pos,
                format!(
                    "symbol table {} '{}': size {} is not a multiple of {}",
                    sec.index,
                    sec.name_str(),
                    sec.size,
                    enc.sym_size()
                ),
            ));
        }
        let xindex = self.shndx_table(sec.index);
        for (k, sym) in contents.chunks_exact(enc.sym_size() as usize).enumerate() {
            let Some(shndx) = enc.u16(sym, enc.sym_shndx()).map(u32::from) else {
                continue;
            };
            let at = sec.offset + k as u64 * enc.sym_size() + enc.sym_shndx();
            let real = if shndx == SHN_XINDEX {
                match xindex.and_then(|t| enc.u32(t, 4 * k as u64)) {
                    Some(v) => v,
                    None => {
                        errs.push(Error::at(
                            rules::OBJ_3,
                            at,
                            format!(
                                "symbol {k} of '{}' uses SHN_XINDEX but no SHT_SYMTAB_SHNDX entry holds its index",
                                sec.name_str()
                            ),
                        ));
                        continue;
                    }
                }
            } else if shndx >= SHN_LORESERVE {
                continue;
            } else {
                shndx
            };
            if real != SHN_UNDEF && u64::from(real) >= n {
                errs.push(Error::at(
                    rules::OBJ_3,
                    at,
                    format!(
                        "symbol {k} of '{}': section index {real} is out of range (there are {n})",
                        sec.name_str()
                    ),
                ));
            }
        }
        errs
    }

    /// The contents of the `SHT_SYMTAB_SHNDX` section linked to symbol table `symtab`.
    fn shndx_table(&self, symtab: usize) -> Option<&'a [u8]> {
        self.sections
            .iter()
            .find(|s| s.sh_type == SHT_SYMTAB_SHNDX && s.link as usize == symtab)
            .and_then(|s| s.data(self.data))
    }

    /// The first section named `name`.
    pub fn section_by_name(&self, name: &str) -> Option<&Section<'a>> {
        self.sections.iter().find(|s| s.name == name.as_bytes())
    }

    /// Whether this is a relocatable object (`ET_REL`).
    pub fn is_relocatable(&self) -> bool {
        self.e_type == ET_REL
    }

    /// The `DT_SONAME` of a shared object: the first `SHT_DYNAMIC`
    /// section's entry, in the string table it links (as `llvm-readobj`
    /// prints it in `LoadName:`); `None` when there is none or it does not
    /// lie inside the file.
    pub fn soname(&self) -> Option<&'a [u8]> {
        const SHT_DYNAMIC: u32 = 6;
        const DT_SONAME: u64 = 14;
        let dynamic = self.sections.iter().find(|s| s.sh_type == SHT_DYNAMIC)?;
        let strtab = self.sections.get(dynamic.link as usize)?.data(self.data)?;
        let d = dynamic.data(self.data)?;
        let word = if self.encoding.is64 { 8 } else { 4 };
        for at in (0..d.len() as u64 / (2 * word)).map(|i| i * 2 * word) {
            match self.encoding.word(d, at)? {
                0 => break, // DT_NULL ends the table
                DT_SONAME => {
                    let s =
                        strtab.get(usize::try_from(self.encoding.word(d, at + word)?).ok()?..)?;
                    return Some(&s[..s.iter().position(|&b| b == 0)?]);
                }
                _ => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_non_elf_with_obj_1() {
        let e = Elf::parse(b"\xcf\xfa\xed\xfe\0\0\0\0").unwrap_err();
        assert_eq!(e.rule_id(), Some("OBJ-1"));
        assert!(e.message().contains("Mach-O"));
        let e = Elf::parse(b"\x7fELF\x02").unwrap_err();
        assert_eq!(e.rule_id(), Some("OBJ-2"));
    }
}
