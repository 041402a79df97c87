//! The archive symbols of an ELF member, read as `ELFObjectFile<ELFT>` of
//! LLVM 19 and 22 reads them: the first `SHT_SYMTAB` section, the flags of
//! `getSymbolFlags` and the names from the linked string table, failing
//! with LLVM's messages.
//!
//! Headers are read with the field offsets of `host::elf`, but not through
//! [`Elf::parse`](crate::host::elf::Elf::parse) or
//! [`Section`](crate::host::elf::Section): LLVM checks other things in
//! another order (no program headers, no section names; `sh_entsize`,
//! alignment and string-table checks of its own) and its messages are what
//! the packager prints, so the strict reader would fail where LLVM does
//! not, and with other words.

use super::{fatal, llvm_err, SymbolError};
use crate::host::elf::{Ehdr, Encoding, Shdr, SHT_DYNSYM, SHT_STRTAB, SHT_SYMTAB};

/// One section header, the fields the symbol reader needs.
#[derive(Clone, Copy)]
struct SectionHeader {
    index: u64,
    header: u64,
    sh_type: u32,
    offset: u64,
    size: u64,
    link: u32,
    entsize: u64,
}

/// The section header at `at` (index `index`), `None` past the end of `d`.
fn read_shdr(enc: Encoding, d: &[u8], at: u64, index: u64) -> Option<SectionHeader> {
    let s = Shdr::of(enc);
    Some(SectionHeader {
        index,
        header: at,
        sh_type: enc.u32(d, at + 4)?,
        offset: enc.word(d, at + s.offset)?,
        size: enc.word(d, at + s.size)?,
        link: enc.u32(d, at + s.link)?,
        entsize: enc.word(d, at + s.entsize)?,
    })
}

/// `object::getELFSectionTypeName` for the types a string table could
/// wrongly have.
fn section_type_name(machine: u16, t: u32) -> String {
    let s = match t {
        0 => "SHT_NULL",
        1 => "SHT_PROGBITS",
        2 => "SHT_SYMTAB",
        3 => "SHT_STRTAB",
        4 => "SHT_RELA",
        5 => "SHT_HASH",
        6 => "SHT_DYNAMIC",
        7 => "SHT_NOTE",
        8 => "SHT_NOBITS",
        9 => "SHT_REL",
        10 => "SHT_SHLIB",
        11 => "SHT_DYNSYM",
        14 => "SHT_INIT_ARRAY",
        15 => "SHT_FINI_ARRAY",
        16 => "SHT_PREINIT_ARRAY",
        17 => "SHT_GROUP",
        18 => "SHT_SYMTAB_SHNDX",
        19 => "SHT_RELR",
        0x6fff_4c0b => "SHT_LLVM_OFFLOADING",
        0x6fff_fff6 => "SHT_GNU_HASH",
        0x6fff_fffd => "SHT_GNU_verdef",
        0x6fff_fffe => "SHT_GNU_verneed",
        0x6fff_ffff => "SHT_GNU_versym",
        0x7000_0003 if machine == 40 => "SHT_ARM_ATTRIBUTES",
        0x7000_0003 if machine == 243 => "SHT_RISCV_ATTRIBUTES",
        _ => "Unknown",
    };
    s.to_string()
}

/// `getSectionContentsAsArray<T>` (entry size `t`, alignment `align`):
/// the section's bytes or LLVM's message. Not `Section::data_or_err`: LLVM
/// checks `sh_entsize`, the size, the range and the alignment in this
/// order, each with its own message, and the packager prints them.
fn contents<'a>(
    enc: Encoding,
    d: &'a [u8],
    s: &SectionHeader,
    t: u64,
    align: u64,
) -> Result<&'a [u8], String> {
    if t != 1 && s.entsize != t {
        return Err(format!(
            "section [index {}] has invalid sh_entsize: expected {t}, but got {}",
            s.index, s.entsize
        ));
    }
    if s.size % t != 0 {
        return Err(format!(
            "section [index {}] has an invalid sh_size ({}) which is not a multiple of its sh_entsize ({})",
            s.index, s.size, s.entsize
        ));
    }
    if enc.word_max() - s.offset < s.size {
        return Err(format!(
            "section [index {}] has a sh_offset (0x{:x}) + sh_size (0x{:x}) that cannot be represented",
            s.index, s.offset, s.size
        ));
    }
    if s.offset + s.size > d.len() as u64 {
        return Err(format!(
            "section [index {}] has a sh_offset (0x{:x}) + sh_size (0x{:x}) that is greater than the file size (0x{:x})",
            s.index,
            s.offset,
            s.size,
            d.len()
        ));
    }
    if s.offset % align != 0 {
        return Err("unaligned data".into());
    }
    Ok(&d[s.offset as usize..(s.offset + s.size) as usize])
}

/// The section headers of an ELF member as `ELFFile::sections()` reads
/// them, with its errors.
fn section_headers(enc: Encoding, d: &[u8]) -> Result<Vec<SectionHeader>, SymbolError> {
    let h = Ehdr::of(enc);
    let (shoff_at, shentsize_at, shnum_at) = (h.shoff, h.shentsize, h.shnum);
    // Section 0's sh_size holds the count when e_shnum is 0.
    let count_at = Shdr::of(enc).size;
    let shoff = enc.word(d, shoff_at).unwrap_or(0);
    let shsz = enc.shdr_size();
    let len = d.len() as u64;
    let mut sections: Vec<SectionHeader> = Vec::new();
    if shoff != 0 {
        let shentsize = enc.u16(d, shentsize_at).map(u64::from).unwrap_or(0);
        if shentsize != shsz {
            return Err(llvm_err(
                shentsize_at,
                format!("invalid e_shentsize in ELF header: {shentsize}"),
            ));
        }
        if shoff.checked_add(shsz).is_none_or(|e| e > len) {
            return Err(llvm_err(
                shoff_at,
                format!(
                    "section header table goes past the end of the file: e_shoff = 0x{shoff:x}"
                ),
            ));
        }
        if shoff % if enc.is64 { 8 } else { 4 } != 0 {
            return Err(llvm_err(shoff_at, "invalid alignment of section headers"));
        }
        let mut num = enc.u16(d, shnum_at).map(u64::from).unwrap_or(0);
        if num == 0 {
            num = enc.word(d, shoff + count_at).unwrap_or(0);
        }
        if num > u64::MAX / shsz {
            return Err(llvm_err(
                shoff + count_at,
                format!(
                    "invalid number of sections specified in the NULL section's sh_size field ({num})"
                ),
            ));
        }
        let table = num * shsz;
        let Some(end) = shoff.checked_add(table) else {
            return Err(llvm_err(
                shoff_at,
                format!(
                    "invalid section header table offset (e_shoff = 0x{shoff:x}) or invalid number of sections specified in the first section header's sh_size field (0x{num:x})"
                ),
            ));
        };
        if end > len {
            return Err(llvm_err(
                shoff_at,
                "section table goes past the end of file",
            ));
        }
        // `num` headers lie inside the member: bounded by its size.
        sections.reserve(num as usize);
        for i in 0..num {
            let at = shoff + i * shsz;
            match read_shdr(enc, d, at, i) {
                Some(s) => sections.push(s),
                None => return Err(llvm_err(at, "section header outside the file")),
            }
        }
    }
    Ok(sections)
}

/// The archive symbols of an ELF member (`createELFObjectFile`,
/// `ELFObjectFile::symbols`, `getSymbolFlags`, `printName`).
pub(super) fn elf_symbols(d: &[u8], odd_address: bool) -> Result<Vec<Vec<u8>>, SymbolError> {
    if odd_address {
        return Err(llvm_err(0, "Insufficient alignment"));
    }
    let enc = match (d[4], d[5]) {
        // ELFCLASS32 = 1, ELFCLASS64 = 2; ELFDATA2LSB = 1, ELFDATA2MSB = 2.
        (class @ (1 | 2), data @ (1 | 2)) => Encoding {
            is64: class == 2,
            big_endian: data == 2,
        },
        (1 | 2, _) => return Err(llvm_err(5, "Invalid ELF data")),
        _ => return Err(llvm_err(4, "Invalid ELF class")),
    };
    let len = d.len() as u64;
    let ehsize = enc.ehdr_size();
    if len < ehsize {
        return Err(llvm_err(
            len,
            format!("invalid buffer: the size ({len}) is smaller than an ELF header ({ehsize})"),
        ));
    }
    let machine = enc.u16(d, 18).unwrap_or(0);
    let sections = section_headers(enc, d)?;
    let Some(symtab) = sections.iter().find(|s| s.sh_type == SHT_SYMTAB).copied() else {
        return Ok(Vec::new());
    };
    let dynsym = sections.iter().find(|s| s.sh_type == SHT_DYNSYM).copied();
    let symsz = enc.sym_size();
    let count = symtab.size / symsz;
    let begin = u64::from(symtab.size > symsz);
    let align = if enc.is64 { 8 } else { 4 };
    let mut out = Vec::new();
    let mut strtab: Option<Result<&[u8], String>> = None;
    for i in begin..count {
        // getSymbol → getEntry: the whole table must be readable, else
        // isArchiveSymbol calls report_fatal_error.
        let tab = contents(enc, d, &symtab, symsz, align).map_err(|m| {
            fatal(
                symtab.header,
                format!(
                    "the symbol table (section {}) cannot be read: LLVM aborts with 'LLVM ERROR: {m}'",
                    symtab.index
                ),
            )
        })?;
        if let Some(ds) = &dynsym {
            contents(enc, d, ds, symsz, align).map_err(|m| {
                fatal(
                    ds.header,
                    format!(
                        "the dynamic symbol table (section {}) cannot be read: LLVM aborts with 'LLVM ERROR: {m}'",
                        ds.index
                    ),
                )
            })?;
        }
        let at = i * symsz;
        let sym = &tab[at as usize..(at + symsz) as usize];
        let name_off = enc.u32(sym, 0).map(u64::from).unwrap_or(0);
        let info = sym[if enc.is64 { 4 } else { 12 }];
        let shndx = enc.u16(sym, enc.sym_shndx()).map(u64::from).unwrap_or(0);
        let bind = info >> 4;
        let ty = info & 0xf;
        let global = bind != 0;
        let mut format_specific = ty == 4 || ty == 3 || i == 0;
        if dynsym.is_some_and(|ds| ds.offset == symtab.offset + at) {
            format_specific = true;
        }
        if matches!(machine, 183 | 40 | 252 | 243) {
            let st =
                strtab.get_or_insert_with(|| string_table(enc, d, &sections, &symtab, machine));
            if let Ok(n) = symbol_name(st, name_off) {
                let p = |s: &[u8]| n.starts_with(s);
                format_specific |= match machine {
                    183 => p(b"$d") || p(b"$x"),
                    40 => n.is_empty() || p(b"$d") || p(b"$t") || p(b"$a"),
                    252 => p(b"$d") || p(b"$t"),
                    _ => n == b".L0 " || p(b"$d") || p(b"$x"),
                };
            }
        }
        let undefined = shndx == 0;
        if format_specific || !global || undefined {
            continue;
        }
        let st = strtab.get_or_insert_with(|| string_table(enc, d, &sections, &symtab, machine));
        match symbol_name(st, name_off) {
            Ok(n) => out.push(n),
            Err(m) => return Err(llvm_err(symtab.offset + at, m)),
        }
    }
    Ok(out)
}

/// `Elf_Sym::getName`: the C string at `off` of the string table.
fn symbol_name(st: &Result<&[u8], String>, off: u64) -> Result<Vec<u8>, String> {
    let st = st.as_ref().map_err(Clone::clone)?;
    if off >= st.len() as u64 {
        return Err(format!(
            "st_name (0x{off:x}) is past the end of the string table of size 0x{:x}",
            st.len()
        ));
    }
    let rest = &st[off as usize..];
    let n = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    Ok(rest[..n].to_vec())
}

/// The string table linked to `symtab` (`getSection(sh_link)`,
/// `getStringTable`), or LLVM's message.
fn string_table<'a>(
    enc: Encoding,
    d: &'a [u8],
    sections: &[SectionHeader],
    symtab: &SectionHeader,
    machine: u16,
) -> Result<&'a [u8], String> {
    let Some(s) = sections.get(symtab.link as usize) else {
        return Err(format!("invalid section index: {}", symtab.link));
    };
    if s.sh_type != SHT_STRTAB {
        return Err(format!(
            "invalid sh_type for string table section [index {}]: expected SHT_STRTAB, but got {}",
            s.index,
            section_type_name(machine, s.sh_type)
        ));
    }
    let data = contents(enc, d, s, 1, 1)?;
    match data.last() {
        None => Err(format!(
            "SHT_STRTAB string table section [index {}] is empty",
            s.index
        )),
        Some(0) => Ok(data),
        Some(_) => Err(format!(
            "SHT_STRTAB string table section [index {}] is non-null terminated",
            s.index
        )),
    }
}
