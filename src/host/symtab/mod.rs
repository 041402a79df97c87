//! The archive symbol table of `--archive` extraction (OB-24): what LLVM's
//! `writeArchive(…, SymtabWritingMode::NormalSymtab, K_GNU, Deterministic)`
//! lists for each member, and the GNU archive with its `/` (or `/SYM64/`)
//! member in front of the `//` name table.
//!
//! LLVM asks each member for its `SymbolicFile` symbols and keeps those that
//! are global, defined and not format-specific (`isArchiveSymbol`):
//!
//! * ELF files (`identify_magic`: `\x7fELF` and at least 18 bytes): the
//!   symbols of the first `SHT_SYMTAB` section from index 1, with
//!   `ELFObjectFile::getSymbolFlags` (binding not local; not `SHN_UNDEF`; not
//!   `STT_FILE`, `STT_SECTION`, the null symbol or a mapping symbol of
//!   AArch64, ARM, C-SKY and RISC-V), named from the linked string table.
//!   Structural errors are LLVM's messages ([`SymbolError::Llvm`]); a symbol
//!   table LLVM cannot index makes it abort ([`SymbolError::Fatal`]).
//! * LLVM bitcode (raw or wrapped): LLVM parses the modules; offload-kit
//!   reads the IR symbol table every producer since LLVM 5 writes
//!   (`SYMTAB_BLOCK`, decoded as `llvm/Object/IRSymtab.h` lays it out, names
//!   in the following `STRTAB_BLOCK`), which lists the same symbols with the
//!   same flags in the same order (`ModuleSymbolTable`). A bitcode file that
//!   LLVM cannot read is "a blob from the future": no symbols, but the
//!   archive still gets a (then empty) symbol table. Module-level inline
//!   asm makes the packagers of 19 and 22 die of SIGSEGV (no target is
//!   initialised), reported as [`SymbolError::Fatal`]; a bitcode file without
//!   an IR symbol table cannot be modelled ([`SymbolError::Unmodelled`]).
//! * anything else holds no symbols and, alone, no symbol table is written.
//!
//! Everything is bounded by the member's bytes: the bitstream reader skips
//! blocks by their length words, never allocates from a count, and every
//! field is checked against the bytes that hold it.

use crate::error::Error;
use crate::host::ar as archive;
use crate::host::elf::Encoding;
use crate::rules;

/// What one member contributes to the symbol table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Symbolic {
    /// Not a symbolic file (`SymbolicFile::isSymbolicFile` is false).
    No,
    /// A symbolic file (ELF or bitcode) and its archive symbols in order
    /// (possibly none: the archive then still gets a symbol table).
    Yes(Vec<Vec<u8>>),
}

/// Why the symbols of a member cannot be written as LLVM writes them.
/// Offsets are relative to the member's first byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SymbolError {
    /// LLVM fails with `message` (printed `'<member name>': <message>`).
    Llvm {
        /// LLVM's message.
        message: String,
        /// The rule and offset behind it.
        error: Error,
    },
    /// LLVM dies here (`report_fatal_error`, SIGSEGV); `error` says why.
    Fatal {
        /// The rule and offset, with what LLVM does.
        error: Error,
    },
    /// offload-kit cannot compute what LLVM computes here.
    Unmodelled {
        /// What is missing.
        error: Error,
    },
}

impl SymbolError {
    /// The rule error behind the failure.
    pub fn error(&self) -> &Error {
        match self {
            SymbolError::Llvm { error, .. }
            | SymbolError::Fatal { error }
            | SymbolError::Unmodelled { error } => error,
        }
    }

    /// The same failure with its offset moved by `base` (the member's
    /// absolute offset).
    pub fn rebase(self, base: u64) -> SymbolError {
        match self {
            SymbolError::Llvm { message, error } => SymbolError::Llvm {
                message,
                error: error.rebase(base),
            },
            SymbolError::Fatal { error } => SymbolError::Fatal {
                error: error.rebase(base),
            },
            SymbolError::Unmodelled { error } => SymbolError::Unmodelled {
                error: error.rebase(base),
            },
        }
    }
}

fn llvm_err(at: u64, message: impl Into<String>) -> SymbolError {
    let message = message.into();
    SymbolError::Llvm {
        error: Error::at(
            rules::OB_24,
            at,
            "ELF member: LLVM reads its symbols for the archive symbol table and fails here",
        ),
        message,
    }
}

fn fatal(at: u64, message: impl Into<String>) -> SymbolError {
    SymbolError::Fatal {
        error: Error::at(rules::OB_24, at, message),
    }
}

/// The symbols `writeArchive` lists for a member with contents `member`.
/// `odd_address`: the member lies at an odd address in LLVM's memory (an
/// image at an odd offset of its binary), which LLVM's ELF reader refuses
/// ("Insufficient alignment").
pub fn member_symbols(member: &[u8], odd_address: bool) -> Result<Symbolic, SymbolError> {
    if member.starts_with(b"\x7fELF") && member.len() >= 18 {
        return elf_symbols(member, odd_address).map(Symbolic::Yes);
    }
    if member.starts_with(b"BC\xc0\xde") || member.starts_with(&[0xde, 0xc0, 0x17, 0x0b]) {
        return bitcode_symbols(member).map(Symbolic::Yes);
    }
    Ok(Symbolic::No)
}

/// The archive symbols of one member, as text (lossy UTF-8), in the order
/// LLVM writes them; empty for a member that is not symbolic.
pub fn archive_symbols(member: &[u8]) -> crate::error::Result<Vec<String>> {
    match member_symbols(member, false) {
        Ok(Symbolic::No) => Ok(Vec::new()),
        Ok(Symbolic::Yes(s)) => Ok(s
            .iter()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect()),
        Err(e) => Err(e.error().clone()),
    }
}

/// `writeArchive`'s threshold for the 64-bit symbol table (`/SYM64/`): the
/// offset of the last member header (2^32 unless LLVM's test hook
/// `SYM64_THRESHOLD` says otherwise).
pub const SYM64_THRESHOLD: u64 = 1 << 32;

/// Write the GNU archive of `members` (name, data) with the symbol table
/// `symbols` (one per member, from [`member_symbols`]), as `writeArchive`
/// does: without any symbolic member exactly [`archive::write_gnu`];
/// otherwise `!<arch>\n`, the `/` member (big-endian count, member-header
/// offsets, NUL-terminated names, padded to 2; a symbolic member without
/// symbols makes the names "\0\0\0" when nothing else has symbols), then
/// the `//` name table and the members. When the last member header would
/// start at or past `sym64_threshold` the table is `/SYM64/` with 64-bit
/// fields.
pub fn write_gnu_with_symtab(
    members: &[(&str, &[u8])],
    symbols: &[Symbolic],
    sym64_threshold: u64,
) -> Vec<u8> {
    let news: Vec<archive::NewMember<'_>> = members
        .iter()
        .enumerate()
        .map(|(i, (n, d))| archive::NewMember {
            name: n.as_bytes(),
            data: d,
            symbols: match symbols.get(i) {
                Some(Symbolic::Yes(v)) => Some(v.iter().map(Vec::as_slice).collect()),
                _ => None,
            },
        })
        .collect();
    let mut out = Vec::new();
    let opts = archive::WriteOptions {
        symtab: true,
        sym64_threshold,
    };
    match archive::write_gnu_to(&mut out, &news, opts) {
        Ok(()) => out,
        // Only a member over LLVM's size limit fails; such data cannot be
        // in memory here, so fall back to the table-less layout.
        Err(_) => archive::write_gnu(members),
    }
}

/// Compute every member's symbols and write the archive (threshold 2^32).
/// The first member LLVM cannot write stops it; its index is returned
/// with the error (offset relative to that member).
pub fn write_archive(members: &[(&str, &[u8])]) -> Result<Vec<u8>, (usize, SymbolError)> {
    let mut symbols = Vec::with_capacity(members.len());
    for (i, (_, data)) in members.iter().enumerate() {
        symbols.push(member_symbols(data, false).map_err(|e| (i, e))?);
    }
    Ok(write_gnu_with_symtab(members, &symbols, SYM64_THRESHOLD))
}

// ---------------------------------------------------------------------------
// ELF: ELFObjectFile<ELFT> as 19 and 22 read it

/// One section header, the fields the symbol reader needs.
#[derive(Clone, Copy)]
struct Shdr {
    index: u64,
    header: u64,
    sh_type: u32,
    offset: u64,
    size: u64,
    link: u32,
    entsize: u64,
}

fn read_shdr(enc: Encoding, d: &[u8], at: u64, index: u64) -> Option<Shdr> {
    let (ty, off, size, link, ent) = if enc.is64 {
        (4, 24, 32, 40, 56)
    } else {
        (4, 16, 20, 24, 36)
    };
    Some(Shdr {
        index,
        header: at,
        sh_type: enc.u32(d, at + ty)?,
        offset: enc.word(d, at + off)?,
        size: enc.word(d, at + size)?,
        link: enc.u32(d, at + link)?,
        entsize: enc.word(d, at + ent)?,
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
/// the section's bytes or LLVM's message.
fn contents<'a>(
    enc: Encoding,
    d: &'a [u8],
    s: &Shdr,
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

/// The archive symbols of an ELF member (`createELFObjectFile`,
/// `ELFObjectFile::symbols`, `getSymbolFlags`, `printName`).
fn elf_symbols(d: &[u8], odd_address: bool) -> Result<Vec<Vec<u8>>, SymbolError> {
    if odd_address {
        return Err(llvm_err(0, "Insufficient alignment"));
    }
    let enc = match (d[4], d[5]) {
        (1, 1) => Encoding {
            is64: false,
            big_endian: false,
        },
        (1, 2) => Encoding {
            is64: false,
            big_endian: true,
        },
        (2, 1) => Encoding {
            is64: true,
            big_endian: false,
        },
        (2, 2) => Encoding {
            is64: true,
            big_endian: true,
        },
        (1 | 2, _) => return Err(llvm_err(5, "Invalid ELF data")),
        _ => return Err(llvm_err(4, "Invalid ELF class")),
    };
    let len = d.len() as u64;
    let ehsize = if enc.is64 { 64 } else { 52 };
    if len < ehsize {
        return Err(llvm_err(
            len,
            format!("invalid buffer: the size ({len}) is smaller than an ELF header ({ehsize})"),
        ));
    }
    let machine = enc.u16(d, 18).unwrap_or(0);
    let (shoff_at, shentsize_at, shnum_at) = if enc.is64 { (40, 58, 60) } else { (32, 46, 48) };
    let shoff = enc.word(d, shoff_at).unwrap_or(0);
    let shsz = enc.shdr_size();
    // ELFFile::sections()
    let mut sections: Vec<Shdr> = Vec::new();
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
            num = enc
                .word(d, shoff + if enc.is64 { 32 } else { 20 })
                .unwrap_or(0);
        }
        if num > u64::MAX / shsz {
            return Err(llvm_err(
                shoff + if enc.is64 { 32 } else { 20 },
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
    let Some(symtab) = sections.iter().find(|s| s.sh_type == 2).copied() else {
        return Ok(Vec::new());
    };
    let dynsym = sections.iter().find(|s| s.sh_type == 11).copied();
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
        let (name_off, info, shndx) = if enc.is64 {
            (
                enc.u32(sym, 0).map(u64::from).unwrap_or(0),
                sym[4],
                enc.u16(sym, 6).map(u64::from).unwrap_or(0),
            )
        } else {
            (
                enc.u32(sym, 0).map(u64::from).unwrap_or(0),
                sym[12],
                enc.u16(sym, 14).map(u64::from).unwrap_or(0),
            )
        };
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
    sections: &[Shdr],
    symtab: &Shdr,
    machine: u16,
) -> Result<&'a [u8], String> {
    let Some(s) = sections.get(symtab.link as usize) else {
        return Err(format!("invalid section index: {}", symtab.link));
    };
    if s.sh_type != 3 {
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

// ---------------------------------------------------------------------------
// Bitcode: a bounded bitstream reader and the IR symbol table

/// A bitstream position over `data` (bit offsets).
struct Bits<'a> {
    data: &'a [u8],
    pos: u64,
    end: u64,
}

/// An abbreviation operand.
#[derive(Clone, Copy, Debug)]
enum Op {
    Lit(u64),
    Fixed(u32),
    Vbr(u32),
    Array,
    Char6,
    Blob,
}

/// A malformed stream: LLVM cannot read the file either.
struct Bad;

type B<T> = Result<T, Bad>;

/// A record read: its code, its number of operands and its blob (a byte
/// range of the stream), if any.
type Rec = (u64, u64, Option<(usize, usize)>);

impl<'a> Bits<'a> {
    fn read(&mut self, w: u32) -> B<u64> {
        if w == 0 {
            return Ok(0);
        }
        if w > 64 || self.end - self.pos < u64::from(w) {
            return Err(Bad);
        }
        let mut v = 0u64;
        let mut got = 0u32;
        while got < w {
            let byte = self.data[(self.pos >> 3) as usize];
            let off = (self.pos & 7) as u32;
            let take = (8 - off).min(w - got);
            let bits = (u64::from(byte) >> off) & ((1u64 << take) - 1);
            v |= bits << got;
            got += take;
            self.pos += u64::from(take);
        }
        Ok(v)
    }

    fn vbr(&mut self, w: u32) -> B<u64> {
        if !(2..=32).contains(&w) {
            return Err(Bad);
        }
        let hi = 1u64 << (w - 1);
        let mut v = 0u64;
        let mut shift = 0u32;
        loop {
            let c = self.read(w)?;
            if shift < 64 {
                v |= (c & (hi - 1)) << shift;
            }
            if c & hi == 0 {
                return Ok(v);
            }
            shift += w - 1;
            if shift >= 70 {
                return Err(Bad);
            }
        }
    }

    fn align32(&mut self) -> B<()> {
        let p = self.pos.next_multiple_of(32);
        if p > self.end {
            return Err(Bad);
        }
        self.pos = p;
        Ok(())
    }

    /// After ENTER_SUBBLOCK's abbrev ID: (block id, abbrev width, body
    /// start, body end) with the body inside the stream.
    fn enter(&mut self) -> B<(u64, u32, u64, u64)> {
        let id = self.vbr(8)?;
        let width = self.vbr(4)?;
        self.align32()?;
        let words = self.read(32)?;
        if width == 0 || width > 32 {
            return Err(Bad);
        }
        let start = self.pos;
        let end = words
            .checked_mul(32)
            .and_then(|n| start.checked_add(n))
            .filter(|&e| e <= self.end)
            .ok_or(Bad)?;
        Ok((id, width as u32, start, end))
    }

    fn define_abbrev(&mut self) -> B<Vec<Op>> {
        let n = self.vbr(5)?;
        // Every operand takes at least one bit.
        if n > self.end - self.pos {
            return Err(Bad);
        }
        let mut ops = Vec::with_capacity(n as usize);
        let mut i = 0;
        while i < n {
            if self.read(1)? == 1 {
                ops.push(Op::Lit(self.vbr(8)?));
            } else {
                ops.push(match self.read(3)? {
                    1 => match self.vbr(5)? {
                        0 => Op::Lit(0),
                        w @ 1..=64 => Op::Fixed(w as u32),
                        _ => return Err(Bad),
                    },
                    2 => match self.vbr(5)? {
                        0 => Op::Lit(0),
                        w @ 2..=32 => Op::Vbr(w as u32),
                        _ => return Err(Bad),
                    },
                    3 => Op::Array,
                    4 => Op::Char6,
                    5 => Op::Blob,
                    _ => return Err(Bad),
                });
            }
            i += 1;
        }
        Ok(ops)
    }

    fn scalar(&mut self, op: Op) -> B<u64> {
        match op {
            Op::Lit(v) => Ok(v),
            Op::Fixed(w) => self.read(w),
            Op::Vbr(w) => self.vbr(w),
            Op::Char6 => self.read(6),
            Op::Array | Op::Blob => Err(Bad),
        }
    }

    /// Read one record; returns (code, number of operands, blob range in
    /// bytes).
    fn record(&mut self, id: u64, abbrevs: &[Vec<Op>]) -> B<Rec> {
        if id == 3 {
            let code = self.vbr(6)?;
            let n = self.vbr(6)?;
            if n > self.end - self.pos {
                return Err(Bad);
            }
            for _ in 0..n {
                self.vbr(6)?;
            }
            return Ok((code, n, None));
        }
        let ops = abbrevs.get((id - 4) as usize).ok_or(Bad)?;
        let Some((&first, rest)) = ops.split_first() else {
            return Err(Bad);
        };
        let code = self.scalar(first)?;
        let mut n = 0u64;
        let mut blob = None;
        let mut i = 0;
        while i < rest.len() {
            match rest[i] {
                Op::Array => {
                    let elt = *rest.get(i + 1).ok_or(Bad)?;
                    if matches!(elt, Op::Lit(_) | Op::Array | Op::Blob) {
                        return Err(Bad);
                    }
                    let count = self.vbr(6)?;
                    if count > self.end - self.pos {
                        return Err(Bad);
                    }
                    for _ in 0..count {
                        self.scalar(elt)?;
                    }
                    n += count;
                    i += 2;
                    continue;
                }
                Op::Blob => {
                    let bytes = self.vbr(6)?;
                    self.align32()?;
                    let start = self.pos / 8;
                    let end = bytes
                        .checked_mul(8)
                        .and_then(|b| self.pos.checked_add(b))
                        .filter(|&e| e <= self.end)
                        .ok_or(Bad)?;
                    self.pos = end;
                    self.align32()?;
                    blob = Some((start as usize, (start + bytes) as usize));
                    n += 1;
                }
                op => {
                    self.scalar(op)?;
                    n += 1;
                }
            }
            i += 1;
        }
        Ok((code, n, blob))
    }

    /// Walk the block whose body is `[start, end)` with abbrev width
    /// `width`: every record is given to `f`; nested blocks are skipped.
    fn walk(
        &mut self,
        width: u32,
        end: u64,
        f: &mut dyn FnMut(u64, u64, Option<(usize, usize)>),
    ) -> B<()> {
        let mut abbrevs: Vec<Vec<Op>> = Vec::new();
        let saved = self.end;
        self.end = end;
        let r = (|| loop {
            let id = self.read(width)?;
            match id {
                0 => {
                    self.align32()?;
                    return Ok(());
                }
                1 => {
                    let (_, _, _, e) = self.enter()?;
                    self.pos = e;
                }
                2 => abbrevs.push(self.define_abbrev()?),
                _ => {
                    let (code, n, blob) = self.record(id, &abbrevs)?;
                    f(code, n, blob);
                }
            }
        })();
        self.end = saved;
        self.pos = end;
        r
    }
}

/// LLVM bitcode block IDs and record codes.
const MODULE_BLOCK: u64 = 8;
const STRTAB_BLOCK: u64 = 23;
const SYMTAB_BLOCK: u64 = 25;
const MODULE_CODE_ASM: u64 = 4;
const BLOB: u64 = 1;

/// What the top level of a bitcode file holds.
struct BitcodeContents {
    modules: u64,
    asm: bool,
    symtab: Option<(usize, usize)>,
    strtab: Option<(usize, usize)>,
}

/// `getBitcodeFileContents`: the top-level blocks of `bc` (after any
/// wrapper); `None` when LLVM cannot read the stream.
fn bitcode_contents(bc: &[u8]) -> B<BitcodeContents> {
    if !bc.starts_with(b"BC\xc0\xde") {
        return Err(Bad);
    }
    let mut s = Bits {
        data: bc,
        pos: 32,
        end: bc.len() as u64 * 8,
    };
    let mut c = BitcodeContents {
        modules: 0,
        asm: false,
        symtab: None,
        strtab: None,
    };
    let mut top_abbrevs: Vec<Vec<Op>> = Vec::new();
    loop {
        // A client may leave garbage at the end: LLVM stops when another
        // module cannot fit.
        if s.pos / 8 + 8 >= bc.len() as u64 {
            return Ok(c);
        }
        let id = s.read(2)?;
        match id {
            0 => return Err(Bad),
            1 => {
                let (block, width, start, end) = s.enter()?;
                s.pos = start;
                match block {
                    MODULE_BLOCK => {
                        c.modules += 1;
                        let mut asm = false;
                        s.walk(width, end, &mut |code, n, _| {
                            asm |= code == MODULE_CODE_ASM && n > 0;
                        })?;
                        c.asm |= asm;
                    }
                    STRTAB_BLOCK | SYMTAB_BLOCK => {
                        let mut blob = None;
                        s.walk(width, end, &mut |code, _, b| {
                            if code == BLOB {
                                blob = Some(b.unwrap_or((0, 0)));
                            }
                        })?;
                        let blob = blob.unwrap_or((0, 0));
                        if block == SYMTAB_BLOCK {
                            if c.symtab.is_none_or(|(a, b)| a == b) {
                                c.symtab = Some(blob);
                            }
                        } else if c.symtab.is_some_and(|(a, b)| a != b)
                            && c.strtab.is_none_or(|(a, b)| a == b)
                        {
                            c.strtab = Some(blob);
                        }
                    }
                    _ => s.pos = end,
                }
            }
            2 => top_abbrevs.push(s.define_abbrev()?),
            _ => {
                s.record(id, &top_abbrevs)?;
            }
        }
    }
}

/// The bitcode inside a wrapper (`SkipBitcodeWrapperHeader`), or `bc`.
fn unwrap_bitcode(bc: &[u8]) -> B<&[u8]> {
    if bc.len() % 4 != 0 {
        return Err(Bad);
    }
    if !bc.starts_with(&[0xde, 0xc0, 0x17, 0x0b]) {
        return Ok(bc);
    }
    let u = |at: usize| -> B<u64> {
        Ok(u64::from(u32::from_le_bytes(
            bc.get(at..at + 4).ok_or(Bad)?.try_into().map_err(|_| Bad)?,
        )))
    };
    let (off, size) = (u(8)?, u(12)?);
    if bc.len() < 20 || off + size > bc.len() as u64 {
        return Err(Bad);
    }
    Ok(&bc[off as usize..(off + size) as usize])
}

/// `storage::Symbol` flag bits (IRSymtab.h).
const FB_UNDEFINED: u32 = 3;
const FB_GLOBAL: u32 = 10;
const FB_FORMAT_SPECIFIC: u32 = 11;

fn bitcode_symbols(member: &[u8]) -> Result<Vec<Vec<u8>>, SymbolError> {
    let unmodelled = |msg: String| SymbolError::Unmodelled {
        error: Error::at(rules::OB_24, 0, msg),
    };
    // LLVM treats a bitcode file it cannot read as a blob: no symbols.
    let Ok(bc) = unwrap_bitcode(member) else {
        return Ok(Vec::new());
    };
    let Ok(c) = bitcode_contents(bc) else {
        return Ok(Vec::new());
    };
    if c.modules == 0 {
        return Ok(Vec::new());
    }
    if c.asm {
        return Err(fatal(
            0,
            "LLVM bitcode member with module-level inline asm: the packagers of LLVM 19 and 22 die of SIGSEGV collecting its asm symbols (no target is initialised)",
        ));
    }
    let nonempty = |r: Option<(usize, usize)>| r.filter(|(a, b)| a != b);
    let (Some((sa, sb)), Some((ta, tb))) = (nonempty(c.symtab), nonempty(c.strtab)) else {
        return Err(unmodelled(
            "LLVM bitcode member without an IR symbol table (SYMTAB_BLOCK and STRTAB_BLOCK): LLVM lists the symbols of its modules, which offload-kit does not parse".into(),
        ));
    };
    let symtab = &bc[sa..sb];
    let strtab = &bc[ta..tb];
    let w = |at: usize| -> Option<u64> {
        Some(u64::from(u32::from_le_bytes(
            symtab.get(at..at.checked_add(4)?)?.try_into().ok()?,
        )))
    };
    let bad = |what: &str| unmodelled(format!("LLVM bitcode member: its IR symbol table {what}"));
    let version = w(0).ok_or_else(|| bad("is shorter than its header"))?;
    if !(1..=4).contains(&version) {
        return Err(bad(&format!("has the unknown version {version}")));
    }
    let modules = w(16).ok_or_else(|| bad("is shorter than its header"))?;
    if modules != c.modules {
        return Err(bad(&format!(
            "covers {modules} modules, the file holds {}",
            c.modules
        )));
    }
    let (off, n) = match (w(28), w(32)) {
        (Some(o), Some(n)) => (o, n),
        _ => return Err(bad("is shorter than its header")),
    };
    if n.checked_mul(24)
        .and_then(|b| b.checked_add(off))
        .is_none_or(|e| e > symtab.len() as u64)
    {
        return Err(bad("lists symbols past its end"));
    }
    let mut out = Vec::new();
    for i in 0..n {
        let at = (off + i * 24) as usize;
        let (Some(no), Some(ns), Some(flags)) = (w(at), w(at + 4), w(at + 20)) else {
            return Err(bad("lists symbols past its end"));
        };
        let flags = flags as u32;
        let global = flags >> FB_GLOBAL & 1 == 1;
        let undefined = flags >> FB_UNDEFINED & 1 == 1;
        let fs = flags >> FB_FORMAT_SPECIFIC & 1 == 1;
        if !global || undefined || fs {
            continue;
        }
        let name = no
            .checked_add(ns)
            .filter(|&e| e <= strtab.len() as u64)
            .map(|e| &strtab[no as usize..e as usize])
            .ok_or_else(|| bad("names a symbol outside the string table"))?;
        out.push(name.to_vec());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_symbolic_member_no_table() {
        let m: &[(&str, &[u8])] = &[("a", b"IMAGE")];
        assert_eq!(write_archive(m).unwrap(), archive::write_gnu(m));
    }

    #[test]
    fn symbolic_without_symbols_gets_empty_table() {
        // A "bitcode from the future": symbolic, no symbols.
        let bc: &[u8] = b"BC\xc0\xde\x35\x14\x00\x00\x05\x00\x00\x00";
        let a = write_archive(&[("t.bin", bc)]).unwrap();
        assert_eq!(&a[8..24], b"/               ");
        assert_eq!(&a[56..68], b"8         `\n");
        assert_eq!(&a[68..76], &[0u8; 8]);
        assert_eq!(&a[76..85], b"t.bin/   ");
    }

    #[test]
    fn sym64_when_offsets_need_it() {
        let mut elf = vec![0u8; 64];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let s = [Symbolic::Yes(vec![b"f".to_vec()])];
        let a = write_gnu_with_symtab(&[("m", &elf)], &s, 10);
        assert_eq!(&a[8..24], b"/SYM64/         ");
        // count 1, offset of the member header, "f\0", padded to even.
        assert_eq!(&a[68..76], &1u64.to_be_bytes());
        let off = u64::from_be_bytes(a[76..84].try_into().unwrap());
        assert_eq!(&a[off as usize..off as usize + 2], b"m/");
        let b = write_gnu_with_symtab(&[("m", &elf)], &s, SYM64_THRESHOLD);
        assert_eq!(&b[8..24], b"/               ");
    }
}
