//! Unix archives, as offload binaries and heterogeneous device archives
//! need them: a bounded reader (GNU and BSD member names; symbol and name
//! tables skipped as LLVM's `Archive::children` skips them) and the GNU
//! writer of LLVM's `writeArchive` (deterministic), without a symbol table
//! (the packager's `--archive`) or with one (`clang-offload-bundler
//! -unbundle -type=a`, spec/archive.md AR-5).
//!
//! ```text
//! "!<arch>\n", then per member a 60-byte header and the data padded to 2:
//! 0  16 name ("name/", "/123" into the "//" table, "#1/len" BSD)
//! 16 12 mtime   28 6 uid   34 6 gid   40 8 mode (octal)   48 10 size   58 2 "`\n"
//! ```
//!
//! # Example
//!
//! Write a GNU archive, read its members back, then cut it short.
//!
//! ```
//! use offload_kit_format::host::ar;
//!
//! let long = "a-member-name-longer-than-16.o"; // goes to the "//" name table
//! let archive = ar::write_gnu(&[("short.o", b"ABC"), (long, b"DATA")]);
//! assert!(archive.starts_with(ar::ARCHIVE_MAGIC));
//! let members = ar::members(&archive, 0).unwrap();
//! let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
//! assert_eq!(names, ["short.o", long]);
//! let m = &members[1];
//! assert_eq!(&archive[m.data_offset as usize..][..m.size as usize], b"DATA");
//!
//! // A member whose data runs past the end: the error points at its size field.
//! let err = ar::members(&archive[..archive.len() - 2], 0).unwrap_err();
//! assert_eq!((err.rule_id(), err.offset()), (Some("OB-21"), Some(m.header_offset + 48)));
//! ```

use crate::error::{Error, Result};
use crate::rules::{self, Rule};
use std::io::{self, Write};

/// The global header of a (non-thin) archive.
pub const ARCHIVE_MAGIC: &[u8; 8] = b"!<arch>\n";
/// The global header of a thin archive (members live in other files).
pub const THIN_MAGIC: &[u8; 8] = b"!<thin>\n";
/// Size of a member header.
pub const MEMBER_HEADER_SIZE: u64 = 60;
/// Longest member name read (bounds the work per member).
pub const MAX_NAME: u64 = 4096;

/// One member of an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The member name (resolved through the name table).
    pub name: String,
    /// Absolute offset of the member header.
    pub header_offset: u64,
    /// Absolute offset of the member data.
    pub data_offset: u64,
    /// Size of the member data.
    pub size: u64,
}

/// One member of an archive, its name as the bytes stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawMember<'a> {
    /// The member name (resolved through the name table; GNU `/` and BSD
    /// padding removed), a slice of the archive.
    pub name: &'a [u8],
    /// Absolute offset of the member header.
    pub header_offset: u64,
    /// Absolute offset of the member data.
    pub data_offset: u64,
    /// The member data, a slice of the archive.
    pub data: &'a [u8],
}

impl RawMember<'_> {
    /// The name as text (lossy for non-UTF-8 bytes).
    pub fn name_str(&self) -> String {
        String::from_utf8_lossy(self.name).into_owned()
    }
}

fn field(h: &[u8], at: usize, len: usize) -> &[u8] {
    let f = &h[at..at + len];
    let end = f.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1);
    &f[..end]
}

/// A decimal header field: ASCII digits only, at least one, within `u64`.
fn decimal(text: &[u8]) -> Option<u64> {
    std::str::from_utf8(text)
        .ok()
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|t| t.parse::<u64>().ok())
}

/// The members of the archive `data` (whose first byte is at absolute
/// offset `base`), in file order, without the symbol table and the name
/// table. The first malformed header is an error (OB-21).
pub fn members(data: &[u8], base: u64) -> Result<Vec<Member>> {
    Ok(members_raw(data, base, rules::OB_21)?
        .into_iter()
        .map(|m| Member {
            name: m.name_str(),
            header_offset: m.header_offset,
            data_offset: m.data_offset,
            size: m.data.len() as u64,
        })
        .collect())
}

/// The members of the archive `data` (whose first byte is at absolute
/// offset `base`), in file order, without the symbol tables (`/`,
/// `/SYM64/`, `__.SYMDEF`, `__.SYMDEF SORTED`) and the GNU name table
/// (`//`). Names and data are slices of `data`; the only allocation is the
/// list, bounded by one entry per 60-byte header. The first malformed
/// header is an error citing `rule` at its absolute offset; a thin archive
/// (`!<thin>\n`) is an error too (its members live in other files).
pub fn members_raw(data: &[u8], base: u64, rule: Rule) -> Result<Vec<RawMember<'_>>> {
    if data.starts_with(THIN_MAGIC) {
        return Err(Error::at(
            rule,
            base,
            "thin archives (members in other files) are not read",
        ));
    }
    if !data.starts_with(ARCHIVE_MAGIC) {
        return Err(Error::at(rule, base, "no archive magic \"!<arch>\\n\""));
    }
    let len = data.len() as u64;
    let mut pos = ARCHIVE_MAGIC.len() as u64;
    let mut out = Vec::new();
    let mut names: &[u8] = &[];
    // A header field at `at` (relative) whose `text` is not what it must be:
    // the text is quoted with escapes (it is untrusted).
    let bad_field = |at: u64, what: &str, text: &[u8], why: &str| {
        let text = String::from_utf8_lossy(text);
        Error::at(
            rule,
            base + at,
            format!("{what} '{}' {why}", text.escape_debug()),
        )
    };
    while pos < len {
        if len - pos < MEMBER_HEADER_SIZE {
            return Err(Error::at(
                rule,
                base + pos,
                format!(
                    "truncated archive member header: {} bytes remain, a header has 60",
                    len - pos
                ),
            ));
        }
        let h = &data[pos as usize..(pos + MEMBER_HEADER_SIZE) as usize];
        if &h[58..60] != b"`\n" {
            return Err(Error::at(
                rule,
                base + pos + 58,
                "archive member header does not end with \"`\\n\"",
            ));
        }
        let size_text = field(h, 48, 10);
        let Some(size) = decimal(size_text) else {
            let why = "is not a decimal number";
            return Err(bad_field(pos + 48, "archive member size", size_text, why));
        };
        let data_off = pos + MEMBER_HEADER_SIZE;
        if size > len - data_off {
            return Err(Error::at(
                rule,
                base + pos + 48,
                format!(
                    "archive member of {size} bytes at 0x{:x} runs past the end of the archive",
                    base + data_off
                ),
            ));
        }
        let body = &data[data_off as usize..(data_off + size) as usize];
        let raw_name = field(h, 0, 16);
        let mut skip = 0u64;
        let name: Option<&[u8]> = if raw_name == b"/"
            || raw_name == b"/SYM64/"
            || raw_name == b"__.SYMDEF"
            || raw_name == b"__.SYMDEF SORTED"
        {
            None
        } else if raw_name == b"//" {
            names = body;
            None
        } else if let Some(n) = raw_name.strip_prefix(b"#1/") {
            let Some(n) = decimal(n).filter(|&n| n <= size && n <= MAX_NAME) else {
                return Err(bad_field(pos, "BSD member name length", n, "is invalid"));
            };
            skip = n;
            let nm = &body[..n as usize];
            Some(nm.split(|&b| b == 0).next().unwrap_or(nm))
        } else if let Some(off) = raw_name.strip_prefix(b"/") {
            let o = decimal(off)
                .and_then(|o| usize::try_from(o).ok())
                .filter(|&o| o < names.len());
            let Some(o) = o else {
                let why = "lies outside the name table";
                return Err(bad_field(pos, "long member name offset", off, why));
            };
            let rest = &names[o..];
            let window = &rest[..rest.len().min(MAX_NAME as usize + 2)];
            let Some(end) = window.iter().position(|&b| b == b'\n') else {
                return Err(Error::at(
                    rule,
                    base + pos,
                    format!(
                        "long member name at offset {o} of the name table is not ended by '\\n' within {MAX_NAME} bytes"
                    ),
                ));
            };
            let nm = &rest[..end];
            Some(nm.strip_suffix(b"/").unwrap_or(nm))
        } else {
            Some(raw_name.strip_suffix(b"/").unwrap_or(raw_name))
        };
        if let Some(name) = name {
            out.push(RawMember {
                name,
                header_offset: base + pos,
                data_offset: base + data_off + skip,
                data: &body[skip as usize..],
            });
        }
        pos = data_off + size;
        pos += pos % 2;
    }
    Ok(out)
}

fn pad(out: &mut Vec<u8>, s: &[u8], width: usize) {
    out.extend_from_slice(s);
    for _ in s.len()..width {
        out.push(b' ');
    }
}

/// Append a member header as LLVM's writer makes it: the name field
/// `name` (with its `/`), date, uid and gid 0, the octal `mode`, `size`.
fn member_header(out: &mut Vec<u8>, name: &[u8], mode: &[u8], size: u64) {
    pad(out, name, 16);
    pad(out, b"0", 12);
    pad(out, b"0", 6);
    pad(out, b"0", 6);
    pad(out, mode, 8);
    pad(out, size.to_string().as_bytes(), 10);
    out.extend_from_slice(b"`\n");
}

/// The largest member LLVM's writer accepts (`Archive::MaxMemberSize`: the
/// ten-digit size field).
pub const MAX_MEMBER_SIZE: u64 = 9_999_999_999;

/// One member for [`write_gnu_to`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMember<'a> {
    /// The member name, as bytes (a name, not a path: it is only written
    /// into the archive).
    pub name: &'a [u8],
    /// The member data.
    pub data: &'a [u8],
    /// `None` when the member is not a symbolic file (LLVM's
    /// `SymbolicFile::isSymbolicFile`); else the names of its global,
    /// defined, not format-specific symbols in the file's order.
    pub symbols: Option<Vec<&'a [u8]>>,
}

/// How [`write_gnu_to`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// Write a symbol table (`SymtabWritingMode::NormalSymtab`).
    pub symtab: bool,
    /// Offset from which the 64-bit symbol table (`/SYM64/`) is used:
    /// 2^32, or LLVM's `SYM64_THRESHOLD` test variable.
    pub sym64_threshold: u64,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            symtab: true,
            sym64_threshold: 1 << 32,
        }
    }
}

/// The number of bytes [`write_gnu_to`] writes for `members`, and the
/// header bytes: computed without touching member data.
struct GnuLayout {
    head: Vec<u8>,
    headers: Vec<Vec<u8>>,
}

fn gnu_layout(members: &[NewMember<'_>], opts: WriteOptions) -> GnuLayout {
    let mut table: Vec<u8> = Vec::new();
    let mut placed: Vec<(&[u8], usize)> = Vec::new();
    let mut headers: Vec<Vec<u8>> = Vec::with_capacity(members.len());
    let mut sym_names: Vec<u8> = Vec::new();
    let mut sym_offsets: Vec<Vec<u64>> = Vec::with_capacity(members.len());
    let mut has_object = false;
    for m in members {
        let size = m.data.len() as u64;
        let name = if m.name.len() >= 16 || m.name.contains(&b'/') {
            let at = match placed.iter().find(|(n, _)| *n == m.name) {
                Some(&(_, at)) => at,
                None => {
                    let at = table.len();
                    table.extend_from_slice(m.name);
                    table.extend_from_slice(b"/\n");
                    placed.push((m.name, at));
                    at
                }
            };
            format!("/{at}").into_bytes()
        } else {
            [m.name, b"/"].concat()
        };
        let mut h = Vec::with_capacity(60);
        member_header(&mut h, &name, b"644", size);
        headers.push(h);
        let mut offs = Vec::new();
        if opts.symtab {
            if let Some(syms) = &m.symbols {
                has_object = true;
                for s in syms {
                    offs.push(sym_names.len() as u64);
                    sym_names.extend_from_slice(s);
                    sym_names.push(0);
                }
            }
        }
        sym_offsets.push(offs);
    }
    // LLVM: "If there are no symbols, emit an empty symbol table, to satisfy
    // Solaris tools".
    if has_object && sym_names.is_empty() {
        sym_names.extend_from_slice(&[0, 0, 0]);
    }
    let mut string_member = Vec::new();
    if !table.is_empty() {
        let tpad = table.len() % 2;
        pad(&mut string_member, b"//", 48);
        pad(
            &mut string_member,
            (table.len() + tpad).to_string().as_bytes(),
            10,
        );
        string_member.extend_from_slice(b"`\n");
        string_member.extend_from_slice(&table);
        if tpad == 1 {
            string_member.push(b'\n');
        }
    }
    let sizes: Vec<u64> = members
        .iter()
        .zip(&headers)
        .map(|(m, h)| h.len() as u64 + m.data.len() as u64 + m.data.len() as u64 % 2)
        .collect();
    let num_syms: u64 = sym_offsets.iter().map(|v| v.len() as u64).sum();
    let mut head = Vec::new();
    head.extend_from_slice(ARCHIVE_MAGIC);
    if opts.symtab && !sym_names.is_empty() {
        let symtab_size = |w: u64| {
            let s = w + num_syms * w + sym_names.len() as u64;
            s + s % 2
        };
        let last_header: u64 = sizes.iter().rev().skip(1).sum();
        let headers_size = |w: u64| 8 + 60 + symtab_size(w) + string_member.len() as u64;
        let w: u64 = if headers_size(4) + last_header >= opts.sym64_threshold {
            8
        } else {
            4
        };
        let size = symtab_size(w);
        let name: &[u8] = if w == 8 { b"/SYM64/" } else { b"/" };
        member_header(&mut head, name, b"0", size);
        let put = |head: &mut Vec<u8>, v: u64| {
            if w == 8 {
                head.extend_from_slice(&v.to_be_bytes());
            } else {
                head.extend_from_slice(&(v as u32).to_be_bytes());
            }
        };
        put(&mut head, num_syms);
        let mut at = headers_size(w);
        for (offs, sz) in sym_offsets.iter().zip(&sizes) {
            for _ in offs {
                put(&mut head, at);
            }
            at += sz;
        }
        head.extend_from_slice(&sym_names);
        let written = w + num_syms * w + sym_names.len() as u64;
        if written % 2 == 1 {
            head.push(0);
        }
    }
    head.extend_from_slice(&string_member);
    GnuLayout { head, headers }
}

/// Write a GNU archive of `members` as LLVM's `writeArchive` does with
/// `K_GNU` and `Deterministic` set: mtime, uid and gid 0, mode 644; names
/// of 16 or more bytes or containing '/' go to the `//` table (each
/// distinct name once, `name/\n`); data padded to even sizes with '\n'.
/// With `opts.symtab`, a symbol table `/` comes first when a member is a
/// symbolic file: big-endian 32-bit count and member header offsets, then
/// the NUL-terminated names, padded to 2 (three NULs when no symbolic
/// member defines a symbol); `/SYM64/` with 64-bit fields when the last
/// member header would start at or past `opts.sym64_threshold`.
/// Member data are written from the slices given, never copied. A member
/// larger than [`MAX_MEMBER_SIZE`] fails as LLVM fails, before anything is
/// written.
pub fn write_gnu_to<W: Write>(
    out: &mut W,
    members: &[NewMember<'_>],
    opts: WriteOptions,
) -> io::Result<()> {
    if let Some(m) = members
        .iter()
        .find(|m| m.data.len() as u64 > MAX_MEMBER_SIZE)
    {
        return Err(io::Error::other(format!(
            "File {} exceeds size limit",
            String::from_utf8_lossy(m.name)
        )));
    }
    let layout = gnu_layout(members, opts);
    out.write_all(&layout.head)?;
    for (m, h) in members.iter().zip(&layout.headers) {
        out.write_all(h)?;
        out.write_all(m.data)?;
        if m.data.len() % 2 == 1 {
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// Write a GNU archive of `members` (name, data) as LLVM's `writeArchive`
/// does with `Deterministic` set and no symbol table (see [`write_gnu_to`]).
pub fn write_gnu(members: &[(&str, &[u8])]) -> Vec<u8> {
    let news: Vec<NewMember<'_>> = members
        .iter()
        .map(|(n, d)| NewMember {
            name: n.as_bytes(),
            data: d,
            symbols: None,
        })
        .collect();
    let opts = WriteOptions {
        symtab: false,
        ..WriteOptions::default()
    };
    let layout = gnu_layout(&news, opts);
    let mut out = layout.head;
    for (m, h) in news.iter().zip(&layout.headers) {
        out.extend_from_slice(h);
        out.extend_from_slice(m.data);
        if m.data.len() % 2 == 1 {
            out.push(b'\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llvm19_archive_bytes() {
        // `clang-offload-packager ../../pk.19 --archive --image=file=y.a,kind=openmp`
        let want = b"!<arch>\n//                                              14        `\n../../pk.19/\n\n/0              0           0     0     644     10        `\nIMAGEDATA1";
        let got = write_gnu(&[("../../pk.19", b"IMAGEDATA1")]);
        assert_eq!(got, want.to_vec());
        let m = members(&got, 0).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].name, "../../pk.19");
        assert_eq!(
            &got[m[0].data_offset as usize..][..m[0].size as usize],
            b"IMAGEDATA1"
        );
        let short = write_gnu(&[("in.bin", b"IMAGEDATA1"), ("in.bin", b"IMAGEDATA1")]);
        assert_eq!(&short[8..24], b"in.bin/         ");
        assert_eq!(short.len(), 148);
    }
}
