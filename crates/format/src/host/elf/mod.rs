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
//!
//! This module holds the constants, [`detect`] and [`Encoding`]; the reader
//! lives in `read`, the writers in `write`.
//!
//! # Example
//!
//! Build the smallest ELF64 object by hand, add a section, remove it again.
//!
//! ```
//! use offload_kit_format::host::elf::{self, Elf};
//!
//! let mut obj = vec![0u8; 208]; // file header, ".shstrtab" contents, 2 section headers
//! obj[..7].copy_from_slice(b"\x7fELF\x02\x01\x01"); // ELF64, little-endian
//! obj[16] = 1; // ET_REL
//! obj[40] = 80; // e_shoff
//! (obj[52], obj[58], obj[60], obj[62]) = (64, 64, 2, 1); // e_ehsize, e_shentsize, e_shnum, e_shstrndx
//! obj[64..75].copy_from_slice(b"\0.shstrtab\0");
//! (obj[144], obj[148], obj[168], obj[176]) = (1, 3, 64, 11); // section 1: name, SHT_STRTAB, offset, size
//! assert_eq!(elf::detect(&obj), elf::ObjectFormat::Elf);
//!
//! let out = elf::add_sections(&obj, &[(".hip_fatbin", b"DEVICE", elf::SHF_ALLOC)]).unwrap();
//! let parsed = Elf::parse_strict(&out).unwrap();
//! let s = parsed.section_by_name(".hip_fatbin").unwrap();
//! assert_eq!((s.index, s.data(&out)), (2, Some(&b"DEVICE"[..])));
//! let back = elf::remove_sections(&out, |s| s.name == b".hip_fatbin").unwrap();
//! assert!(Elf::parse(&back).unwrap().section_by_name(".hip_fatbin").is_none());
//! ```

use crate::error::{Error, Result};
use crate::rules;

pub mod hipk;
mod read;
mod write;

pub use read::{Elf, Section, Segment};
pub use write::{add_sections, add_sections_as, remove_sections, Objcopy, SectionOrder};
// Field offsets, also for the archive symbol reader (`host::symtab`).
pub(crate) use read::{Ehdr, Shdr};

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
    /// The `N` bytes of a field at `at`, least significant first.
    fn le_bytes<const N: usize>(self, d: &[u8], at: u64) -> Option<[u8; N]> {
        let at = usize::try_from(at).ok()?;
        let mut b: [u8; N] = d.get(at..at.checked_add(N)?)?.try_into().ok()?;
        if self.big_endian {
            b.reverse();
        }
        Some(b)
    }
    /// The `u16` at `at` of `d` in this byte order; `None` past the end.
    pub fn u16(self, d: &[u8], at: u64) -> Option<u16> {
        self.le_bytes(d, at).map(u16::from_le_bytes)
    }
    /// The `u32` at `at` of `d` in this byte order; `None` past the end.
    pub fn u32(self, d: &[u8], at: u64) -> Option<u32> {
        self.le_bytes(d, at).map(u32::from_le_bytes)
    }
    /// The `u64` at `at` of `d` in this byte order; `None` past the end.
    pub fn u64(self, d: &[u8], at: u64) -> Option<u64> {
        self.le_bytes(d, at).map(u64::from_le_bytes)
    }
    /// A class-sized word (`Elf32_Word`/`Elf64_Xword` for addresses, offsets, sizes).
    pub fn word(self, d: &[u8], at: u64) -> Option<u64> {
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

    /// `elf32` for ELF32, `elf64` for ELF64.
    fn by_class(self, elf32: u64, elf64: u64) -> u64 {
        if self.is64 {
            elf64
        } else {
            elf32
        }
    }
    /// Size of the file header.
    pub fn ehdr_size(self) -> u64 {
        self.by_class(52, 64)
    }
    /// Size of one section header.
    pub fn shdr_size(self) -> u64 {
        self.by_class(40, 64)
    }
    /// Size of one program header.
    pub fn phdr_size(self) -> u64 {
        self.by_class(32, 56)
    }
    /// Size of one symbol.
    pub fn sym_size(self) -> u64 {
        self.by_class(16, 24)
    }
    /// Offset of `st_shndx` inside a symbol.
    pub(crate) fn sym_shndx(self) -> u64 {
        self.by_class(14, 6)
    }
    /// The largest value a class-sized word holds.
    pub(crate) fn word_max(self) -> u64 {
        self.by_class(u64::from(u32::MAX), u64::MAX)
    }
    fn word_size(self) -> u64 {
        self.by_class(4, 8)
    }
}

/// An OBJ-2 error (a structural problem of the file) at `at`.
fn obj2(at: u64, msg: impl Into<String>) -> Error {
    Error::at(rules::OBJ_2, at, msg)
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
}
