//! The ELF image a loader maps: rules CO-2 … CO-5 of spec/code-object.md,
//! checked on every entry payload that begins with the ELF magic (payloads
//! that do not, such as placeholders or bitcode, are not images and are not
//! checked). Loaders hand such images to an ELF parser or to `dlopen`
//! (LLVM 22's host plugin checks only `e_type` and `e_machine`; the HIP
//! runtime hands code objects to ROCr), where a table outside the image or
//! an unterminated string table is a crash, not an error.
//!
//! Both classes and byte orders are read; every offset is checked, counts
//! are bounded by the image's size, and the work is linear in the number
//! of headers.
//!
//! # Example
//!
//! ```
//! use offload_kit_inspect::image::check;
//!
//! // An x86-64 shared object's 64-byte ELF header, with no program or
//! // section headers.
//! let mut so = vec![0u8; 64];
//! so[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
//! so[16] = 3; // ET_DYN
//! so[18] = 62; // EM_X86_64
//! so[20] = 1; // EV_CURRENT
//! so[52] = 64; // e_ehsize
//! assert!(check(&so, 100).is_empty());
//! so[40..48].copy_from_slice(&u64::MAX.to_le_bytes()); // e_shoff
//! so[58] = 64; // e_shentsize
//! so[60] = 1; // e_shnum
//! let errs = check(&so, 100);
//! assert_eq!(errs[0].rule_id(), Some("CO-3"));
//! assert_eq!(errs[0].offset(), Some(140));
//! assert!(check(b"not an image", 0).is_empty());
//! ```

use crate::error::Error;
use crate::rules::{self, Rule};

use crate::host::elf::{SHT_DYNSYM, SHT_NOBITS, SHT_NULL, SHT_STRTAB, SHT_SYMTAB};

/// Field offsets of one ELF class.
struct Layout {
    ehsize: u64,
    word: u64,
    phoff: u64,
    shoff: u64,
    phentsize_at: u64,
    phent: u64,
    shent: u64,
    /// (p_offset, p_filesz) within a program header.
    p_range: (u64, u64),
    /// (sh_offset, sh_size, sh_link) within a section header.
    sh_range: (u64, u64, u64),
}

const ELF32: Layout = Layout {
    ehsize: 52,
    word: 4,
    phoff: 28,
    shoff: 32,
    phentsize_at: 42,
    phent: 32,
    shent: 40,
    p_range: (4, 16),
    sh_range: (16, 20, 24),
};

const ELF64: Layout = Layout {
    ehsize: 64,
    word: 8,
    phoff: 32,
    shoff: 40,
    phentsize_at: 54,
    phent: 56,
    shent: 64,
    p_range: (8, 32),
    sh_range: (24, 32, 40),
};

struct Image<'a> {
    data: &'a [u8],
    big: bool,
}

impl Image<'_> {
    fn uint(&self, at: u64, n: u64) -> Option<u64> {
        let s = self
            .data
            .get(usize::try_from(at).ok()?..usize::try_from(at.checked_add(n)?).ok()?)?;
        let push = |v: u64, &b: &u8| v << 8 | u64::from(b);
        Some(match self.big {
            true => s.iter().fold(0, push),
            false => s.iter().rev().fold(0, push),
        })
    }

    fn half(&self, at: u64) -> u64 {
        self.uint(at, 2).unwrap_or(0)
    }
}

/// The violations of CO-2 … CO-5 in `data`, an entry's payload that starts
/// at absolute offset `base`; none when `data` does not begin with the ELF
/// magic. Sorted by offset.
pub fn check(data: &[u8], base: u64) -> Vec<Error> {
    let mut errors = Vec::new();
    if !data.starts_with(b"\x7fELF") {
        return errors;
    }
    let len = data.len() as u64;
    let mut err = |rule: Rule, at: u64, what: String| {
        errors.push(Error::at(
            rule,
            base + at,
            format!("image of {len} bytes: {what}"),
        ))
    };
    let l = match data.get(4) {
        Some(1) => &ELF32,
        Some(2) => &ELF64,
        other => {
            err(
                rules::CO_2,
                4,
                format!("ELF class {other:?} is neither 1 nor 2"),
            );
            return errors;
        }
    };
    let big = match data.get(5) {
        Some(1) => false,
        Some(2) => true,
        other => {
            err(
                rules::CO_2,
                5,
                format!("ELF data encoding {other:?} is neither 1 nor 2"),
            );
            return errors;
        }
    };
    if len < l.ehsize {
        err(
            rules::CO_2,
            len,
            format!("cut short inside its {}-byte ELF header", l.ehsize),
        );
        return errors;
    }
    let img = Image { data, big };
    if data[6] != 1 {
        err(rules::CO_2, 6, format!("EI_VERSION {} is not 1", data[6]));
    }
    let version = img.uint(20, 4).unwrap_or(0);
    if version != 1 {
        err(rules::CO_2, 20, format!("e_version {version} is not 1"));
    }
    let at = l.phentsize_at;
    let ehsize = img.half(at - 2);
    if ehsize != l.ehsize {
        err(
            rules::CO_2,
            at - 2,
            format!("e_ehsize {ehsize} is not {}", l.ehsize),
        );
    }
    let (phentsize, phnum) = (img.half(at), img.half(at + 2));
    let (shentsize, mut shnum, shstrndx) = (img.half(at + 4), img.half(at + 6), img.half(at + 8));
    let phoff = img.uint(l.phoff, l.word).unwrap_or(0);
    let shoff = img.uint(l.shoff, l.word).unwrap_or(0);
    let ph_ok = phnum == 0 || phentsize == l.phent;
    if !ph_ok {
        err(
            rules::CO_2,
            at,
            format!("e_phentsize {phentsize} is not {}", l.phent),
        );
    }
    // e_shnum 0 with a table: the count is section 0's sh_size.
    let extended = shnum == 0 && shoff != 0;
    let sh_ok = (shnum == 0 && !extended) || shentsize == l.shent;
    if !sh_ok {
        err(
            rules::CO_2,
            at + 4,
            format!("e_shentsize {shentsize} is not {}", l.shent),
        );
    }
    // The tables (CO-3).
    let inside = |off: u64, size: Option<u64>| {
        size.and_then(|s| off.checked_add(s))
            .is_some_and(|e| e <= len)
    };
    // A table of `count` entries at `off` (its field at `field`) inside.
    let mut table = |count: u64, entsize: u64, off: u64, field: u64, what: &str| {
        let fits = inside(off, count.checked_mul(entsize));
        if !fits {
            err(
                rules::CO_3,
                field,
                format!(
                "the {what} header table ({count} × {entsize} bytes at {off}) runs past the end"
            ),
            );
        }
        fits
    };
    let ph_in = ph_ok && phnum > 0 && table(phnum, l.phent, phoff, l.phoff, "program");
    if sh_ok && extended {
        shnum = match inside(shoff, Some(l.shent)) {
            true => img.uint(shoff + l.sh_range.1, l.word).unwrap_or(0),
            false => 1,
        };
    }
    let sh_in = sh_ok && shnum > 0 && table(shnum, l.shent, shoff, l.shoff, "section");
    if sh_in && shstrndx != 0 && shstrndx != 0xffff && shstrndx >= shnum {
        err(
            rules::CO_3,
            at + 8,
            format!("e_shstrndx {shstrndx} names no section of {shnum}"),
        );
    }
    // Segments' and sections' contents (CO-4).
    if ph_in {
        for i in 0..phnum {
            let h = phoff + i * l.phent;
            let off = img.uint(h + l.p_range.0, l.word).unwrap_or(0);
            let size = img.uint(h + l.p_range.1, l.word).unwrap_or(0);
            if !inside(off, Some(size)) {
                let field = if off > len { l.p_range.0 } else { l.p_range.1 };
                err(
                    rules::CO_4,
                    h + field,
                    format!("program header {i}'s file range [{off}, +{size}) runs past the end"),
                );
            }
        }
    }
    if sh_in {
        section_violations(&img, l, shoff, shnum, &mut err);
    }
    errors.sort_by_key(Error::offset);
    errors
}

/// CO-4 and CO-5 over the section header table (`shnum` headers at `shoff`,
/// inside the image): each section's contents lie inside the image, string
/// tables begin and end with a NUL, symbol tables link a string table.
fn section_violations(
    img: &Image<'_>,
    l: &Layout,
    shoff: u64,
    shnum: u64,
    err: &mut impl FnMut(Rule, u64, String),
) {
    let data = img.data;
    let len = data.len() as u64;
    let inside = |off: u64, size: u64| off.checked_add(size).is_some_and(|e| e <= len);
    let section = |i: u64| {
        let h = shoff + i * l.shent;
        let ty = img.uint(h + 4, 4).unwrap_or(0);
        let off = img.uint(h + l.sh_range.0, l.word).unwrap_or(0);
        let size = img.uint(h + l.sh_range.1, l.word).unwrap_or(0);
        let link = img.uint(h + l.sh_range.2, 4).unwrap_or(0);
        (h, ty, off, size, link)
    };
    for i in 0..shnum {
        let (h, ty, off, size, link) = section(i);
        if ty == u64::from(SHT_NULL) || ty == u64::from(SHT_NOBITS) {
            continue;
        }
        if !inside(off, size) {
            let field = if off > len {
                l.sh_range.0
            } else {
                l.sh_range.1
            };
            err(
                rules::CO_4,
                h + field,
                format!("section {i}'s contents [{off}, +{size}) run past the end"),
            );
            continue;
        }
        // String tables (CO-5): a NUL first and last.
        if ty == u64::from(SHT_STRTAB) && size > 0 {
            for at in [off, off + size - 1] {
                if data[at as usize] != 0 {
                    err(
                        rules::CO_5,
                        at,
                        format!(
                            "string table (section {i}) does not {} with a NUL",
                            if at == off { "begin" } else { "end" }
                        ),
                    );
                }
            }
        }
        let symbols = ty == u64::from(SHT_SYMTAB) || ty == u64::from(SHT_DYNSYM);
        if symbols && (link >= shnum || section(link).1 != u64::from(SHT_STRTAB)) {
            err(
                rules::CO_5,
                h + l.sh_range.2,
                format!(
                    "symbol table (section {i}) links section {link}, which is no string table"
                ),
            );
        }
    }
}
