//! Unix archives, as far as offload binaries need them: a bounded reader
//! (GNU and BSD member names; symbol and name tables skipped as LLVM's
//! `Archive::children` skips them) and the GNU writer the packager's
//! `--archive` uses (LLVM `writeArchive`, deterministic, no symbol table).
//!
//! ```text
//! "!<arch>\n", then per member a 60-byte header and the data padded to 2:
//! 0  16 name ("name/", "/123" into the "//" table, "#1/len" BSD)
//! 16 12 mtime   28 6 uid   34 6 gid   40 8 mode (octal)   48 10 size   58 2 "`\n"
//! ```

use crate::error::{Error, Result};
use crate::rules;

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

fn field(h: &[u8], at: usize, len: usize) -> &str {
    std::str::from_utf8(&h[at..at + len])
        .unwrap_or("")
        .trim_end_matches(' ')
}

/// The members of the archive `data` (whose first byte is at absolute
/// offset `base`), in file order, without the symbol table and the name
/// table. The first malformed header is an error (OB-21).
pub fn members(data: &[u8], base: u64) -> Result<Vec<Member>> {
    if data.starts_with(THIN_MAGIC) {
        return Err(Error::at(
            rules::OB_21,
            base,
            "thin archives (members in other files) are not read",
        ));
    }
    if !data.starts_with(ARCHIVE_MAGIC) {
        return Err(Error::at(
            rules::OB_21,
            base,
            "no archive magic \"!<arch>\\n\"",
        ));
    }
    let len = data.len() as u64;
    let mut pos = ARCHIVE_MAGIC.len() as u64;
    let mut out = Vec::new();
    let mut names: &[u8] = &[];
    while pos < len {
        if len - pos < MEMBER_HEADER_SIZE {
            return Err(Error::at(
                rules::OB_21,
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
                rules::OB_21,
                base + pos + 58,
                "archive member header does not end with \"`\\n\"",
            ));
        }
        let size_text = field(h, 48, 10);
        let Some(size) = size_text
            .parse::<u64>()
            .ok()
            .filter(|_| size_text.bytes().all(|b| b.is_ascii_digit()))
        else {
            return Err(Error::at(
                rules::OB_21,
                base + pos + 48,
                format!(
                    "archive member size '{}' is not a decimal number",
                    size_text.escape_debug()
                ),
            ));
        };
        let data_off = pos + MEMBER_HEADER_SIZE;
        if size > len - data_off {
            return Err(Error::at(
                rules::OB_21,
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
        let name = if raw_name == "/"
            || raw_name == "/SYM64/"
            || raw_name == "__.SYMDEF"
            || raw_name == "__.SYMDEF SORTED"
        {
            None
        } else if raw_name == "//" {
            names = body;
            None
        } else if let Some(n) = raw_name.strip_prefix("#1/") {
            let Some(n) = n
                .parse::<u64>()
                .ok()
                .filter(|&n| n <= size && n <= MAX_NAME)
            else {
                return Err(Error::at(
                    rules::OB_21,
                    base + pos,
                    format!("BSD member name length '{n}' is invalid"),
                ));
            };
            skip = n;
            let nm = &body[..n as usize];
            let nm = nm.split(|&b| b == 0).next().unwrap_or(nm);
            Some(String::from_utf8_lossy(nm).into_owned())
        } else if let Some(off) = raw_name.strip_prefix('/') {
            let Some(o) = off.parse::<usize>().ok().filter(|&o| o < names.len()) else {
                return Err(Error::at(
                    rules::OB_21,
                    base + pos,
                    format!("long member name offset '{off}' lies outside the name table"),
                ));
            };
            let rest = &names[o..];
            let window = &rest[..rest.len().min(MAX_NAME as usize + 2)];
            let Some(end) = window.iter().position(|&b| b == b'\n') else {
                return Err(Error::at(
                    rules::OB_21,
                    base + pos,
                    format!(
                        "long member name at offset {o} of the name table is not ended by '\\n' within {MAX_NAME} bytes"
                    ),
                ));
            };
            let mut nm = &rest[..end];
            if nm.ends_with(b"/") {
                nm = &nm[..nm.len() - 1];
            }
            Some(String::from_utf8_lossy(nm).into_owned())
        } else {
            Some(raw_name.strip_suffix('/').unwrap_or(raw_name).to_string())
        };
        if let Some(name) = name {
            out.push(Member {
                name,
                header_offset: base + pos,
                data_offset: base + data_off + skip,
                size: size - skip,
            });
        }
        pos = data_off + size;
        pos += pos % 2;
    }
    Ok(out)
}

fn pad(out: &mut Vec<u8>, s: &str, width: usize) {
    out.extend_from_slice(s.as_bytes());
    for _ in s.len()..width {
        out.push(b' ');
    }
}

/// Write a GNU archive of `members` (name, data) as LLVM's `writeArchive`
/// does with `Deterministic` set and no symbols: mtime, uid and gid 0, mode
/// 644; names of 16 or more bytes or containing '/' go to the `//` table
/// (each distinct name once); data padded to even sizes with '\n'.
pub fn write_gnu(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut table: Vec<u8> = Vec::new();
    let mut placed: Vec<(&str, usize)> = Vec::new();
    let mut headers: Vec<Vec<u8>> = Vec::with_capacity(members.len());
    for (name, data) in members {
        let mut h = Vec::with_capacity(60);
        if name.len() >= 16 || name.contains('/') {
            let at = match placed.iter().find(|(n, _)| n == name) {
                Some(&(_, at)) => at,
                None => {
                    let at = table.len();
                    table.extend_from_slice(name.as_bytes());
                    table.extend_from_slice(b"/\n");
                    placed.push((name, at));
                    at
                }
            };
            h.push(b'/');
            pad(&mut h, &at.to_string(), 15);
        } else {
            pad(&mut h, &format!("{name}/"), 16);
        }
        pad(&mut h, "0", 12);
        pad(&mut h, "0", 6);
        pad(&mut h, "0", 6);
        pad(&mut h, "644", 8);
        pad(&mut h, &data.len().to_string(), 10);
        h.extend_from_slice(b"`\n");
        headers.push(h);
    }
    let mut out = Vec::new();
    out.extend_from_slice(ARCHIVE_MAGIC);
    if !table.is_empty() {
        let tpad = table.len() % 2;
        pad(&mut out, "//", 48);
        pad(&mut out, &(table.len() + tpad).to_string(), 10);
        out.extend_from_slice(b"`\n");
        out.extend_from_slice(&table);
        if tpad == 1 {
            out.push(b'\n');
        }
    }
    for ((_, data), h) in members.iter().zip(headers) {
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        if data.len() % 2 == 1 {
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
