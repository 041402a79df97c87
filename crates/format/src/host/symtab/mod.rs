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
//!
//! This module holds the public API; the ELF reader lives in `elf`, the
//! bitcode reader in `bitcode`.
//!
//! # Example
//!
//! A plain member adds no symbol table; a symbolic one puts `/` first.
//!
//! ```
//! use offload_kit_format::host::symtab::{self, Symbolic};
//! use offload_kit_format::host::ar;
//!
//! assert_eq!(symtab::member_symbols(b"plain data", false).unwrap(), Symbolic::No);
//! let plain = symtab::write_archive(&[("a.bin", b"plain data")]).unwrap();
//! assert_eq!(plain, ar::write_gnu(&[("a.bin", b"plain data")]));
//!
//! let syms = [Symbolic::Yes(vec![b"kernel".to_vec()])];
//! let out = symtab::write_gnu_with_symtab(&[("k.o", b"OBJ")], &syms, symtab::SYM64_THRESHOLD);
//! assert!(out.starts_with(b"!<arch>\n/ "));
//! assert!(out.windows(7).any(|w| w == b"kernel\0"));
//! assert_eq!(ar::members(&out, 0).unwrap()[0].name, "k.o"); // readers skip the table
//! ```

use crate::error::Error;
use crate::host::ar as archive;
use crate::rules;

mod bitcode;
mod elf;

use bitcode::bitcode_symbols;
use elf::elf_symbols;

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

/// LLVM fails reading an ELF member with `message` (OB-24 at `at`).
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

/// LLVM dies on the member: `message` says how (OB-24 at `at`).
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
