//! ELF files: a small strict reader (header, sections, segments, symbols)
//! and two writers that do natively what `clang-offload-bundler` asks
//! `llvm-objcopy` to do.
//!
//! Data flows bytes → [`Elf`] → bytes. [`Elf::parse`] reads the file
//! header, the program and section header tables and the section names,
//! failing on the first structural error (OBJ-1, OBJ-2); [`Elf::check`]
//! then reports every section whose contents or section indices are out
//! of range (OBJ-3). Both classes (ELF32, ELF64) and both byte orders are
//! read and written. Other object formats are recognised by [`detect`] and
//! rejected with OBJ-1.
//!
//! The writers ([`add_sections`], [`remove_sections`]) rebuild the file:
//! bytes covered by the program headers stay where they are, every other
//! section is laid out again after them in file order, new sections go
//! last, and the section header table ends the file. Section indices are
//! renumbered everywhere the file stores them: `e_shstrndx` (with the
//! `SHN_XINDEX` escape), `sh_link`, `sh_info` of relocation sections,
//! symbol `st_shndx` (through `SHT_SYMTAB_SHNDX` when present) and group
//! member lists. When sections go, the section name table is rebuilt with
//! the names still in use (symbol names too when it is shared with a symbol
//! table). See `spec/object-bundle.md`.

use crate::error::{Error, Result};
use crate::rules;
use std::borrow::Cow;
use std::collections::HashMap;

/// Section type: unused header.
pub const SHT_NULL: u32 = 0;
/// Section type: program data.
pub const SHT_PROGBITS: u32 = 1;
/// Section type: symbol table.
pub const SHT_SYMTAB: u32 = 2;
/// Section type: string table.
pub const SHT_STRTAB: u32 = 3;
/// Section type: relocations with addends.
pub const SHT_RELA: u32 = 4;
/// Section type: no file data (`.bss`).
pub const SHT_NOBITS: u32 = 8;
/// Section type: relocations without addends.
pub const SHT_REL: u32 = 9;
/// Section type: dynamic symbol table.
pub const SHT_DYNSYM: u32 = 11;
/// Section type: section group.
pub const SHT_GROUP: u32 = 17;
/// Section type: extended section indices of a symbol table.
pub const SHT_SYMTAB_SHNDX: u32 = 18;

/// Section flag: writable.
pub const SHF_WRITE: u64 = 0x1;
/// Section flag: occupies memory at run time.
pub const SHF_ALLOC: u64 = 0x2;
/// Section flag: `sh_info` holds a section index.
pub const SHF_INFO_LINK: u64 = 0x40;
/// Section flag: excluded from links (`E` in `readelf`).
pub const SHF_EXCLUDE: u64 = 0x8000_0000;

/// Special section index: undefined.
pub const SHN_UNDEF: u32 = 0;
/// Special section index: start of the reserved range.
pub const SHN_LORESERVE: u32 = 0xff00;
/// Special section index: the real index is stored elsewhere.
pub const SHN_XINDEX: u32 = 0xffff;

/// File type: relocatable object.
pub const ET_REL: u16 = 1;
/// File type: executable.
pub const ET_EXEC: u16 = 2;
/// File type: shared object.
pub const ET_DYN: u16 = 3;

/// The ELF magic `\x7fELF`.
pub const MAGIC: &[u8; 4] = b"\x7fELF";

/// The object-file formats [`detect`] tells apart (what LLVM's
/// `identify_magic` would call them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectFormat {
    /// ELF (`\x7fELF`).
    Elf,
    /// COFF object (x86, x86-64, ARM, ARM64 machine types, or big-object COFF).
    Coff,
    /// PE image (`MZ`).
    Pe,
    /// Mach-O (32/64-bit, either byte order) or a universal binary.
    MachO,
    /// WebAssembly (`\0asm`).
    Wasm,
    /// XCOFF (AIX).
    Xcoff,
    /// A Unix archive (`!<arch>\n`): not an object file.
    Archive,
    /// LLVM bitcode: not an object file for `clang-offload-bundler`.
    Bitcode,
    /// Anything else.
    Unknown,
}

impl ObjectFormat {
    /// A human-readable name.
    pub fn name(self) -> &'static str {
        match self {
            ObjectFormat::Elf => "ELF",
            ObjectFormat::Coff => "COFF",
            ObjectFormat::Pe => "PE/COFF image",
            ObjectFormat::MachO => "Mach-O",
            ObjectFormat::Wasm => "WebAssembly",
            ObjectFormat::Xcoff => "XCOFF",
            ObjectFormat::Archive => "archive",
            ObjectFormat::Bitcode => "LLVM bitcode",
            ObjectFormat::Unknown => "unknown",
        }
    }

    /// Whether LLVM's `createBinary` yields an `ObjectFile` for this format,
    /// so that `clang-offload-bundler -type=o` picks its object-file handler
    /// rather than the binary-bundle one.
    pub fn is_object_file(self) -> bool {
        matches!(
            self,
            ObjectFormat::Elf
                | ObjectFormat::Coff
                | ObjectFormat::Pe
                | ObjectFormat::MachO
                | ObjectFormat::Wasm
                | ObjectFormat::Xcoff
        )
    }
}

/// Recognise an object-file format by its first bytes.
pub fn detect(data: &[u8]) -> ObjectFormat {
    let b = |i: usize| data.get(i).copied().unwrap_or(0);
    if data.starts_with(MAGIC) {
        return ObjectFormat::Elf;
    }
    if data.starts_with(b"!<arch>\n") || data.starts_with(b"!<thin>\n") {
        return ObjectFormat::Archive;
    }
    if data.starts_with(b"BC\xc0\xde") || data.starts_with(&[0xde, 0xc0, 0x17, 0x0b]) {
        return ObjectFormat::Bitcode;
    }
    if data.starts_with(b"\0asm") {
        return ObjectFormat::Wasm;
    }
    if data.len() >= 4 {
        let m = [b(0), b(1), b(2), b(3)];
        if matches!(
            m,
            [0xfe, 0xed, 0xfa, 0xce]
                | [0xfe, 0xed, 0xfa, 0xcf]
                | [0xce, 0xfa, 0xed, 0xfe]
                | [0xcf, 0xfa, 0xed, 0xfe]
                | [0xca, 0xfe, 0xba, 0xbe]
        ) {
            return ObjectFormat::MachO;
        }
    }
    if data.starts_with(b"MZ") {
        return ObjectFormat::Pe;
    }
    if data.len() >= 20 {
        if matches!([b(0), b(1)], [0x01, 0xdf] | [0x01, 0xf7]) {
            return ObjectFormat::Xcoff;
        }
        if matches!([b(0), b(1), b(2), b(3)], [0, 0, 0xff, 0xff]) {
            return ObjectFormat::Coff; // big-object COFF or an import library
        }
        let machine = u16::from_le_bytes([b(0), b(1)]);
        if matches!(machine, 0x14c | 0x8664 | 0xaa64 | 0x1c4 | 0xa641 | 0xa64e) {
            return ObjectFormat::Coff;
        }
    }
    ObjectFormat::Unknown
}

/// ELF class and byte order: how every field is read and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoding {
    /// ELF64 (else ELF32).
    pub is64: bool,
    /// Big-endian (else little-endian).
    pub big_endian: bool,
}

impl Encoding {
    fn bytes<const N: usize>(d: &[u8], at: u64) -> Option<[u8; N]> {
        let at = usize::try_from(at).ok()?;
        d.get(at..at.checked_add(N)?)?.try_into().ok()
    }
    pub(crate) fn u16(self, d: &[u8], at: u64) -> Option<u16> {
        let b = Self::bytes::<2>(d, at)?;
        Some(if self.big_endian {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        })
    }
    pub(crate) fn u32(self, d: &[u8], at: u64) -> Option<u32> {
        let b = Self::bytes::<4>(d, at)?;
        Some(if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }
    pub(crate) fn u64(self, d: &[u8], at: u64) -> Option<u64> {
        let b = Self::bytes::<8>(d, at)?;
        Some(if self.big_endian {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        })
    }
    /// A class-sized word (`Elf32_Word`/`Elf64_Xword` for addresses, offsets, sizes).
    pub(crate) fn word(self, d: &[u8], at: u64) -> Option<u64> {
        if self.is64 {
            self.u64(d, at)
        } else {
            self.u32(d, at).map(u64::from)
        }
    }
    fn put(self, d: &mut [u8], at: u64, v: u64, width: usize) -> Result<()> {
        let bad = || Error::other(format!("internal: field at 0x{at:x} outside the output"));
        let at = usize::try_from(at).map_err(|_| bad())?;
        let end = at.checked_add(width).ok_or_else(bad)?;
        let dst = d.get_mut(at..end).ok_or_else(bad)?;
        let le = v.to_le_bytes();
        for (i, slot) in dst.iter_mut().enumerate() {
            *slot = if self.big_endian {
                le[width - 1 - i]
            } else {
                le[i]
            };
        }
        Ok(())
    }
    fn put_u16(self, d: &mut [u8], at: u64, v: u64) -> Result<()> {
        if v > u64::from(u16::MAX) {
            return Err(Error::other(format!(
                "value {v} does not fit the 16-bit field at 0x{at:x}"
            )));
        }
        self.put(d, at, v, 2)
    }
    fn put_u32(self, d: &mut [u8], at: u64, v: u64) -> Result<()> {
        if v > u64::from(u32::MAX) {
            return Err(Error::other(format!(
                "value {v} does not fit the 32-bit field at 0x{at:x}"
            )));
        }
        self.put(d, at, v, 4)
    }
    fn put_word(self, d: &mut [u8], at: u64, v: u64) -> Result<()> {
        if self.is64 {
            self.put(d, at, v, 8)
        } else {
            self.put_u32(d, at, v)
        }
    }

    /// Size of the file header.
    pub fn ehdr_size(self) -> u64 {
        if self.is64 {
            64
        } else {
            52
        }
    }
    /// Size of one section header.
    pub fn shdr_size(self) -> u64 {
        if self.is64 {
            64
        } else {
            40
        }
    }
    /// Size of one program header.
    pub fn phdr_size(self) -> u64 {
        if self.is64 {
            56
        } else {
            32
        }
    }
    /// Size of one symbol.
    pub fn sym_size(self) -> u64 {
        if self.is64 {
            24
        } else {
            16
        }
    }
    /// Offset of `st_shndx` inside a symbol.
    fn sym_shndx(self) -> u64 {
        if self.is64 {
            6
        } else {
            14
        }
    }
    /// The largest value a class-sized word holds.
    pub(crate) fn word_max(self) -> u64 {
        if self.is64 {
            u64::MAX
        } else {
            u64::from(u32::MAX)
        }
    }
    fn word_size(self) -> u64 {
        if self.is64 {
            8
        } else {
            4
        }
    }
}

/// File-header field offsets for a class.
struct Ehdr {
    phoff: u64,
    shoff: u64,
    ehsize: u64,
    phentsize: u64,
    phnum: u64,
    shentsize: u64,
    shnum: u64,
    shstrndx: u64,
}

impl Ehdr {
    fn of(enc: Encoding) -> Ehdr {
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

/// Section-header field offsets for a class.
struct Shdr {
    flags: u64,
    addr: u64,
    offset: u64,
    size: u64,
    link: u64,
    info: u64,
    align: u64,
    entsize: u64,
}

impl Shdr {
    fn of(enc: Encoding) -> Shdr {
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

fn obj2(at: u64, msg: impl Into<String>) -> Error {
    Error::at(rules::OBJ_2, at, msg)
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
        let enc = Encoding { is64, big_endian };
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

        // Program headers.
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
                let (o_off, o_filesz) = if is64 { (8, 32) } else { (4, 16) };
                segments.push(Segment {
                    p_type: enc.u32(data, at).ok_or_else(trunc)?,
                    offset: enc.word(data, at + o_off).ok_or_else(trunc)?,
                    filesz: enc.word(data, at + o_filesz).ok_or_else(trunc)?,
                });
            }
        }

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
        let strtab = sections[shstrndx as usize];
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
        elf.shstrndx = shstrndx as usize;
        elf.sections = sections;
        Ok(elf)
    }

    /// [`Elf::parse`] plus [`Elf::check`]: every violation as an error.
    pub fn parse_strict(data: &'a [u8]) -> Result<Elf<'a>, Vec<Error>> {
        let elf = Elf::parse(data).map_err(|e| vec![e])?;
        let errs = elf.check();
        if errs.is_empty() {
            Ok(elf)
        } else {
            Err(errs)
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
}

/// Where an output section's contents come from.
enum Src<'a> {
    /// Bytes of the input (copied to the new offset).
    Input(&'a [u8]),
    /// Rebuilt bytes (name table, group members, new sections).
    Owned(Cow<'a, [u8]>),
    /// No file bytes (NOBITS, NULL).
    None,
}

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
    rebuild(&parsed, keep, new)
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
    rebuild(&parsed, keep, &[])
}

fn align_up(v: u64, a: u64) -> Option<u64> {
    v.checked_next_multiple_of(a.max(1))
}

/// The common writer: keep the sections marked in `keep`, append `new`.
fn rebuild<'a>(elf: &Elf<'a>, keep: Vec<bool>, new: &[(&str, &'a [u8], u64)]) -> Result<Vec<u8>> {
    let enc = elf.encoding;
    let data = elf.data;
    let s = Shdr::of(enc);
    let h = Ehdr::of(enc);
    let n = elf.sections.len();
    // Old index → new index.
    let mut map = vec![u32::MAX; n];
    let mut next = 0u32;
    for (i, k) in keep.iter().enumerate() {
        if *k {
            map[i] = next;
            next += 1;
        }
    }
    let kept = next as usize;
    let total = kept + new.len();
    let renumber =
        |old: u32| -> Option<u32> { map.get(old as usize).copied().filter(|&v| v != u32::MAX) };

    // References from kept sections to removed ones.
    for sec in elf.sections.iter().filter(|x| keep[x.index]) {
        if sec.index != 0 && sec.link != 0 && renumber(sec.link).is_none() {
            if sec.link as usize >= n {
                return Err(Error::at(
                    rules::OBJ_3,
                    sec.header_pos + s.link,
                    format!(
                        "section {} '{}': sh_link {} is not a section index",
                        sec.index,
                        sec.name_str(),
                        sec.link
                    ),
                ));
            }
            let target = elf.sections.get(sec.link as usize);
            return Err(Error::other(format!(
                "section '{}' cannot be removed: section {} '{}' links to it",
                target.map_or(Cow::Borrowed("?"), |t| t.name_str()),
                sec.index,
                sec.name_str()
            )));
        }
    }

    // Section names: when sections go, the name table is rebuilt with the
    // names still in use: section names, and symbol names when the table is
    // shared with symbol tables (`.strtab` in LLVM objects). A table shared
    // with anything else (dynamic sections, version tables) keeps its bytes.
    // New names are appended.
    let strtab = *elf
        .sections
        .get(elf.shstrndx)
        .ok_or_else(|| Error::other("internal: no section name table"))?;
    let names = strtab.data_or_err(data)?;
    let sharers: Vec<&Section<'a>> = elf
        .sections
        .iter()
        .filter(|x| keep[x.index] && x.link as usize == elf.shstrndx && x.index != 0)
        .collect();
    let removed_any = kept < n;
    let mut new_names: Vec<u32> = elf.sections.iter().map(|x| x.sh_name).collect();
    // Per symbol table (old index): the new st_name of each symbol.
    let mut sym_names: Vec<(usize, Vec<u32>)> = Vec::new();
    let mut table: Vec<u8> = Vec::new();
    let mut rebuilt = removed_any && sharers.iter().all(|x| x.sh_type == SHT_SYMTAB);
    if rebuilt {
        table.push(0);
        let mut seen: HashMap<&[u8], u32> = HashMap::new();
        let mut intern = |name: &'a [u8], table: &mut Vec<u8>| -> Result<u32> {
            if name.is_empty() {
                return Ok(0);
            }
            if let Some(&off) = seen.get(name) {
                return Ok(off);
            }
            let off = u32::try_from(table.len())
                .map_err(|_| Error::other("section name table exceeds 4 GiB"))?;
            table.extend_from_slice(name);
            table.push(0);
            seen.insert(name, off);
            Ok(off)
        };
        for sec in elf.sections.iter().filter(|x| keep[x.index]) {
            new_names[sec.index] = intern(sec.name, &mut table)?;
        }
        'tables: for st in &sharers {
            let contents = st.data_or_err(data)?;
            let mut v = Vec::with_capacity(contents.len() / enc.sym_size() as usize);
            for sym in contents.chunks_exact(enc.sym_size() as usize) {
                let st_name = enc.u32(sym, 0).unwrap_or(0) as usize;
                let Some(tail) = names.get(st_name..) else {
                    // A name outside the table: keep the table as it is.
                    rebuilt = false;
                    break 'tables;
                };
                let len = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
                v.push(intern(&tail[..len], &mut table)?);
            }
            sym_names.push((st.index, v));
        }
    }
    if !rebuilt {
        sym_names.clear();
        new_names = elf.sections.iter().map(|x| x.sh_name).collect();
        table = names.to_vec();
        if table.is_empty() {
            table.push(0);
        }
    }
    let mut added_names = Vec::with_capacity(new.len());
    for (name, _, _) in new {
        let off = u32::try_from(table.len())
            .map_err(|_| Error::other("section name table exceeds 4 GiB"))?;
        table.extend_from_slice(name.as_bytes());
        table.push(0);
        added_names.push(off);
    }
    let table_changed = rebuilt || !new.is_empty();

    // Regions that stay in place: the file header, the program headers and
    // every segment's file bytes.
    let mut fixed: Vec<(u64, u64)> = vec![(0, enc.ehdr_size())];
    if !elf.segments.is_empty() {
        fixed.push((
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
            fixed.push((seg.offset, end));
        }
    }
    // A section stays when its file bytes lie inside a preserved segment; a
    // section without file bytes stays when its offset points into one.
    let in_fixed = |off: u64, size: u64, bytes: bool| {
        fixed.iter().skip(1).any(|&(a, b)| {
            if bytes && size > 0 {
                off >= a && off.saturating_add(size) <= b
            } else {
                off >= a && off <= b
            }
        })
    };
    let fixed_end = fixed.iter().map(|r| r.1).max().unwrap_or(0);

    // Group member lists lose removed members.
    let mut outs: Vec<Out<'a>> = Vec::with_capacity(total);
    for sec in elf.sections.iter().filter(|x| keep[x.index]) {
        let contents = sec.data_or_err(data)?;
        let src = if sec.index == elf.shstrndx && table_changed {
            Src::Owned(Cow::Owned(std::mem::take(&mut table)))
        } else if sec.sh_type == SHT_GROUP && removed_any {
            let mut g = Vec::with_capacity(contents.len());
            for (k, m) in contents.chunks_exact(4).enumerate() {
                let v = enc.u32(m, 0).unwrap_or(0);
                if k == 0 {
                    g.extend_from_slice(m);
                    continue;
                }
                match renumber(v) {
                    Some(nv) => {
                        let mut b = [0u8; 4];
                        enc.put_u32(&mut b, 0, u64::from(nv))?;
                        g.extend_from_slice(&b);
                    }
                    None if keep.get(v as usize).is_some() => {} // removed member
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
            Src::Owned(Cow::Owned(g))
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
            Src::Input(_) if in_fixed(sec.offset, sec.size, true) => Some(sec.offset),
            Src::None if in_fixed(sec.offset, sec.size, false) => Some(sec.offset),
            _ => None,
        };
        outs.push(Out {
            old: Some(*sec),
            src,
            fixed: fixed_at,
            new_name: new_names[sec.index],
            offset: 0,
            size,
            sh_type: sec.sh_type,
            flags: sec.flags,
            align: sec.align,
        });
    }
    for ((_, contents, flags), name) in new.iter().zip(&added_names) {
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

    // Lay out the moving sections after everything that stays, in file order.
    let budget = (data.len() as u64).max(1 << 20);
    let mut padding = 0u64;
    let mut cursor = fixed_end;
    let mut order: Vec<usize> = (0..outs.len())
        .filter(|&i| outs[i].fixed.is_none())
        .collect();
    order.sort_by_key(|&i| match outs[i].old {
        Some(o) => (0, o.offset, o.index),
        None => (1, 0, i),
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
                    o.old.map_or(0, |x| x.header_pos + s.align),
                    format!(
                        "section alignments need more than {budget} bytes of padding (alignment {})",
                        o.align
                    ),
                ));
            }
            o.offset = at;
            cursor = at.checked_add(o.size).ok_or_else(overflow)?;
        } else {
            o.offset = if at - cursor > budget { cursor } else { at };
        }
    }
    for o in outs.iter_mut() {
        if let Some(f) = o.fixed {
            o.offset = f;
        }
    }
    let shdr_size = enc.shdr_size();
    let shoff = align_up(cursor, enc.word_size()).ok_or_else(overflow)?;
    let file_len = (total as u64)
        .checked_mul(shdr_size)
        .and_then(|t| t.checked_add(shoff))
        .ok_or_else(overflow)?;
    let file_len = usize::try_from(file_len).map_err(|_| overflow())?;

    // Emit. The size is bounded by the input, the new contents and the
    // padding budget, never by a raw field.
    let mut out = vec![0u8; file_len];
    for &(a, b) in &fixed {
        let (a, b) = (a as usize, b as usize);
        if let (Some(dst), Some(src)) = (out.get_mut(a..b), data.get(a..b)) {
            dst.copy_from_slice(src);
        }
    }
    for o in &outs {
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

    // Section headers.
    let new_shstrndx = u64::from(renumber(elf.shstrndx as u32).unwrap_or(0));
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
                    let link = if old.link == 0 {
                        0
                    } else {
                        renumber(old.link).unwrap_or(0)
                    };
                    enc.put_u32(&mut out, at + s.link, u64::from(link))?;
                    if old.info_is_section() && old.info != 0 {
                        let info = renumber(old.info).ok_or_else(|| {
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
                        enc.put_u32(&mut out, at + s.info, u64::from(info))?;
                    }
                }
            }
            None => {
                enc.put_u32(&mut out, at + 4, u64::from(o.sh_type))?;
                enc.put_word(&mut out, at + s.flags, o.flags)?;
                enc.put_word(&mut out, at + s.align, o.align)?;
            }
        }
        if o.old.is_some_and(|x| x.index == 0) {
            continue; // section 0 stays as it is, but for the fields below
        }
        enc.put_u32(&mut out, at, u64::from(o.new_name))?;
        enc.put_word(&mut out, at + s.offset, o.offset)?;
        enc.put_word(&mut out, at + s.size, o.size)?;
    }
    // Section 0 carries the count and the name-table index when they do not fit.
    let big_count = total as u64 >= u64::from(SHN_LORESERVE);
    let big_strndx = new_shstrndx >= u64::from(SHN_LORESERVE);
    enc.put_word(
        &mut out,
        shoff + s.size,
        if big_count { total as u64 } else { 0 },
    )?;
    enc.put_u32(
        &mut out,
        shoff + s.link,
        if big_strndx { new_shstrndx } else { 0 },
    )?;
    // File header.
    enc.put_word(&mut out, h.shoff, shoff)?;
    enc.put_u16(&mut out, h.shentsize, shdr_size)?;
    enc.put_u16(&mut out, h.ehsize, enc.ehdr_size())?;
    enc.put_u16(&mut out, h.shnum, if big_count { 0 } else { total as u64 })?;
    enc.put_u16(
        &mut out,
        h.shstrndx,
        if big_strndx {
            u64::from(SHN_XINDEX)
        } else {
            new_shstrndx
        },
    )?;

    // Symbols: renumber st_shndx (and SHT_SYMTAB_SHNDX entries).
    if removed_any {
        let positions: Vec<(u64, usize)> = outs
            .iter()
            .filter_map(|o| o.old.map(|x| (o.offset, x.index)))
            .collect();
        let new_offset_of = |old: usize| positions.iter().find(|p| p.1 == old).map(|p| p.0);
        for o in &outs {
            let Some(old) = o.old else { continue };
            if old.sh_type != SHT_SYMTAB && old.sh_type != SHT_DYNSYM {
                continue;
            }
            let count = o.size / enc.sym_size();
            if let Some((_, v)) = sym_names.iter().find(|(i, _)| *i == old.index) {
                for (k, &nm) in v.iter().enumerate() {
                    enc.put_u32(
                        &mut out,
                        o.offset + k as u64 * enc.sym_size(),
                        u64::from(nm),
                    )?;
                }
            }
            let xtab = elf
                .sections
                .iter()
                .find(|x| {
                    keep[x.index] && x.sh_type == SHT_SYMTAB_SHNDX && x.link as usize == old.index
                })
                .and_then(|x| new_offset_of(x.index).map(|off| (off, x.size)));
            for k in 0..count {
                let at = o.offset + k * enc.sym_size() + enc.sym_shndx();
                let v = u32::from(enc.u16(&out, at).unwrap_or(0));
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
                    renumber(idx)
                        .ok_or_else(|| sym_err(format!("is defined in removed section {idx}")))
                };
                if v == SHN_XINDEX {
                    let Some((xoff, _)) = xtab.filter(|t| 4 * k + 4 <= t.1) else {
                        return Err(sym_err(
                            "uses SHN_XINDEX without an index table entry".into(),
                        ));
                    };
                    let xat = xoff + 4 * k;
                    let real = enc.u32(&out, xat).unwrap_or(0);
                    let nv = map_sym(real)?;
                    enc.put_u32(&mut out, xat, u64::from(nv))?;
                } else if v != SHN_UNDEF && v < SHN_LORESERVE {
                    let nv = map_sym(v)?;
                    if nv >= SHN_LORESERVE {
                        return Err(sym_err("would need an extended section index".to_string()));
                    }
                    enc.put_u16(&mut out, at, u64::from(nv))?;
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detect_formats() {
        assert_eq!(detect(b"\x7fELF\x02\x01"), ObjectFormat::Elf);
        assert_eq!(detect(b"\xcf\xfa\xed\xfe...."), ObjectFormat::MachO);
        assert_eq!(detect(b"!<arch>\nxx"), ObjectFormat::Archive);
        assert_eq!(detect(b"BC\xc0\xde"), ObjectFormat::Bitcode);
        assert_eq!(detect(b"__CLANG_OFFLOAD_BUNDLE__"), ObjectFormat::Unknown);
        let mut coff = vec![0u8; 20];
        coff[0] = 0x64;
        coff[1] = 0x86;
        assert_eq!(detect(&coff), ObjectFormat::Coff);
    }

    #[test]
    fn rejects_non_elf_with_obj_1() {
        let e = Elf::parse(b"\xcf\xfa\xed\xfe\0\0\0\0").unwrap_err();
        assert_eq!(e.rule_id(), Some("OBJ-1"));
        assert!(e.message().contains("Mach-O"));
        let e = Elf::parse(b"\x7fELF\x02").unwrap_err();
        assert_eq!(e.rule_id(), Some("OBJ-2"));
    }
}
