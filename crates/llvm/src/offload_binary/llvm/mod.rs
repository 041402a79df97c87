//! What LLVM 16, 19 and 22 make of offload binaries: `OffloadBinary::create`
//! and `extractOffloadBinaries` as each release implements them (version 1
//! only), and the text `llvm-objdump --offloading` prints.
//!
//! The model reproduces every outcome that is well defined: the images a
//! release reads, the two messages it reports ("Invalid data was
//! encountered while parsing the file", "The end of the file was
//! unexpectedly encountered"), and where it reads. Where a release reads
//! memory it does not own (string entries or strings past the binary,
//! `nstr_huge.pk`, `keyoff_big.pk`; an image past the binary,
//! `imgsize_big.pk`) the model returns [`Failure::Unsafe`] with the violated
//! rule instead of guessing what the release would print or write.

use super::kinds::{image_kind_objdump_name, offload_kind_name};
use crate::error::Error;
use crate::format::offload_binary::{
    read_u64, RawEntry, RawHeader, ENTRY_SIZE, HEADER_SIZE_V1, HEADER_SIZE_V3, MAGIC,
    MIN_V1_BUFFER, SHT_LLVM_OFFLOADING, STRING_ENTRY_SIZE_V1, STRING_ENTRY_SIZE_V2,
};
use crate::host::ar as archive;
use crate::host::elf::Elf;
use crate::profile::Release;
use crate::rules;
use binrw::BinRead;
use std::io::Cursor;

mod main;
mod objdump;

pub use main::main_inflated;
use main::{create_binary, main_offload_files};
pub use objdump::*;

/// `object_error::parse_failed`.
pub const PARSE_FAILED: &str = "Invalid data was encountered while parsing the file";
/// `object_error::unexpected_eof`.
pub const UNEXPECTED_EOF: &str = "The end of the file was unexpectedly encountered";
/// `object_error::invalid_file_type`, as `llvm-objdump` prints it.
pub const NOT_OBJECT: &str = "The file was not recognized as a valid object file";

/// Why a release's read did not produce images.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The release reports `message` and exits 1; `error` is the strict
    /// counterpart (rule and absolute offset).
    Error {
        /// LLVM's message (one of [`PARSE_FAILED`], [`UNEXPECTED_EOF`], …).
        message: String,
        /// The rule and offset behind it.
        error: Error,
    },
    /// The release reads memory it does not own here (it dies of SIGSEGV or
    /// prints or writes whatever it finds). offload-kit reports `error`.
    Unsafe {
        /// The violated rule at its offset, with what LLVM does.
        error: Error,
    },
}

impl Failure {
    /// The strict error behind the failure.
    pub fn error(&self) -> &Error {
        match self {
            Failure::Error { error, .. } | Failure::Unsafe { error } => error,
        }
    }

    fn eof(rule: rules::Rule, at: u64, msg: impl Into<String>) -> Failure {
        Failure::Error {
            message: UNEXPECTED_EOF.into(),
            error: Error::at(rule, at, msg),
        }
    }

    fn parse(rule: rules::Rule, at: u64, msg: impl Into<String>) -> Failure {
        Failure::Error {
            message: PARSE_FAILED.into(),
            error: Error::at(rule, at, msg),
        }
    }
}

/// One image as a release reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlvmImage<'a> {
    /// Stored image kind value.
    pub image_kind: u16,
    /// Stored offload kind value.
    pub offload_kind: u16,
    /// Flags.
    pub flags: u32,
    /// Key/value pairs in string-entry order, read as C strings.
    pub strings: Vec<(&'a [u8], &'a [u8])>,
    /// The image, or the error for an image that lies past its binary
    /// (reading it reads memory the release does not own).
    pub image: Result<&'a [u8], Error>,
    /// Absolute offset of the image.
    pub image_offset: u64,
    /// The image size field.
    pub image_size: u64,
    /// Absolute offset of the binary.
    pub binary_offset: u64,
    /// The buffer identifier: the input path, or the archive member name.
    pub identifier: String,
}

impl LlvmImage<'_> {
    /// `getString(key)`: the last value stored for `key`, empty when absent.
    pub fn get(&self, key: &[u8]) -> &[u8] {
        self.strings
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map_or(&[][..], |(_, v)| *v)
    }

    /// `getTriple()`.
    pub fn triple(&self) -> String {
        String::from_utf8_lossy(self.get(b"triple")).into_owned()
    }

    /// `getArch()`.
    pub fn arch(&self) -> String {
        String::from_utf8_lossy(self.get(b"arch")).into_owned()
    }
}

/// Key/value pairs as read (borrowed from the data).
type Pairs<'a> = Vec<(&'a [u8], &'a [u8])>;

/// What `OffloadBinary::create` found.
struct Created {
    size: u64,
    entry: RawEntry,
    entry_pos: u64,
}

/// `OffloadBinary::create(buf)` of `release` (v1 era): header checks, the
/// entry, and the string reads of the constructor. `base` is the absolute
/// offset of `buf[0]`. `scan`: read the strings (else only check that the
/// constructor's reads stay inside `buf`).
fn create(
    buf: &[u8],
    base: u64,
    release: Release,
    first: bool,
    scan: bool,
) -> Result<(Created, Pairs<'_>), Failure> {
    let len = buf.len() as u64;
    check_magic(buf, base, first)?;
    if len < MIN_V1_BUFFER {
        return Err(Failure::parse(
            rules::OB_3,
            base + len,
            format!(
                "a binary needs at least {MIN_V1_BUFFER} bytes (header and entry), {len} remain"
            ),
        ));
    }
    let h = RawHeader::read(&mut Cursor::new(buf))
        .map_err(|_| Failure::parse(rules::OB_3, base, "the header is incomplete"))?;
    if h.version != 1 {
        return Err(Failure::parse(
            rules::OB_2,
            base + 4,
            format!(
                "version {} (LLVM {release} reads only version 1)",
                h.version
            ),
        ));
    }
    let size = h.size;
    if size > len {
        return Err(Failure::eof(
            rules::OB_4,
            base + 8,
            format!("size {size} runs past the end of the data ({len} bytes)"),
        ));
    }
    if release.quirks().checks_short_entries && size < ENTRY_SIZE {
        return Err(Failure::eof(
            rules::OB_4,
            base + 8,
            format!("size {size} is smaller than an entry"),
        ));
    }
    // 16 computes these differences without checking `size` first; they
    // wrap for sizes below 40 and 32.
    if h.entry_offset > size.wrapping_sub(ENTRY_SIZE) {
        return Err(Failure::eof(
            rules::OB_6,
            base + 16,
            format!("the entry at {} runs past the size {size}", h.entry_offset),
        ));
    }
    if h.entry_size_or_count > size.wrapping_sub(HEADER_SIZE_V1) {
        return Err(Failure::eof(
            rules::OB_6,
            base + 24,
            format!("entry size {} exceeds size - 32", h.entry_size_or_count),
        ));
    }
    let entry_pos = h.entry_offset;
    let entry = match entry_pos
        .checked_add(ENTRY_SIZE)
        .filter(|&e| e <= len)
        .and_then(|_| RawEntry::read(&mut Cursor::new(&buf[entry_pos as usize..])).ok())
    {
        Some(e) => e,
        None => {
            return Err(Failure::Unsafe {
                error: Error::at(
                    rules::OB_6,
                    base + 16,
                    format!(
                        "the entry at {entry_pos} lies outside the data ({len} bytes): LLVM {release} accepts the size {size} (the check wraps) and reads the entry from memory it does not own"
                    ),
                ),
            })
        }
    };
    if entry.image_offset > len || entry.string_offset > len {
        let (at, what, v) = if entry.image_offset > len {
            (entry_pos + 24, "image offset", entry.image_offset)
        } else {
            (entry_pos + 8, "string offset", entry.string_offset)
        };
        let rule = if entry.image_offset > len {
            rules::OB_9
        } else {
            rules::OB_7
        };
        return Err(Failure::eof(
            rule,
            base + at,
            format!("{what} {v} lies past the end of the data ({len} bytes)"),
        ));
    }
    let strings = read_strings(buf, base, &entry, entry_pos, release, scan)?;
    Ok((
        Created {
            size,
            entry,
            entry_pos,
        },
        strings,
    ))
}

/// The constructor's string reads over `buf` (NUL-terminated by LLVM's
/// memory buffers): unsafe when a string entry or a string starts past it.
fn read_strings<'b>(
    buf: &'b [u8],
    base: u64,
    e: &RawEntry,
    entry_pos: u64,
    release: Release,
    scan: bool,
) -> Result<Pairs<'b>, Failure> {
    let len = buf.len() as u64;
    let end = e
        .num_strings
        .checked_mul(STRING_ENTRY_SIZE_V1)
        .and_then(|n| e.string_offset.checked_add(n));
    if end.is_none_or(|end| end > len) {
        return Err(Failure::Unsafe {
            error: Error::at(
                rules::OB_7,
                base + entry_pos + 16,
                format!(
                    "{} string entries at {} run past the binary ({len} bytes): LLVM {release} reads them from memory it does not own (SIGSEGV for large counts, nstr_huge.pk)",
                    e.num_strings, e.string_offset
                ),
            ),
        });
    }
    let mut out = Vec::with_capacity(if scan { e.num_strings as usize } else { 0 });
    let mut nuls = super::NulIndex::new(if scan { buf } else { &[] });
    for j in 0..e.num_strings {
        let spos = e.string_offset + j * STRING_ENTRY_SIZE_V1;
        let (Some(ko), Some(vo)) = (read_u64(buf, spos), read_u64(buf, spos + 8)) else {
            return Err(Failure::Unsafe {
                error: Error::at(rules::OB_7, base + spos, "string entry past the binary"),
            });
        };
        let mut pair: [&'b [u8]; 2] = [&[], &[]];
        for (off, field, what) in [(ko, spos, "key"), (vo, spos + 8, "value")] {
            if off > len {
                let effect = if release.quirks().key_offset_past_end_segfaults {
                    "LLVM 16 dies of SIGSEGV (keyoff_big.pk)"
                } else {
                    "LLVM reads heap memory there (19 and 22 were seen to print an empty string)"
                };
                return Err(Failure::Unsafe {
                    error: Error::at(
                        rules::OB_8,
                        base + field,
                        format!(
                            "string entry {j}: {what} offset {off} lies outside the binary ({len} bytes): {effect}"
                        ),
                    ),
                });
            }
            let n = nuls.find(off as usize).unwrap_or(buf.len());
            if scan {
                pair[usize::from(what == "value")] = &buf[off as usize..n];
            }
        }
        let [k, v] = pair;
        if scan {
            out.push((k, v));
        }
    }
    Ok(out)
}

/// `extractOffloadFiles(contents)` of `release`: the binaries that fill
/// `contents` (a raw file, a section, an archive member), each read twice
/// as LLVM does (once in place, once from a copy of exactly its size).
pub fn extract_offload_files<'a>(
    contents: &'a [u8],
    base: u64,
    identifier: &str,
    release: Release,
) -> Result<Vec<LlvmImage<'a>>, Failure> {
    if release.quirks().offload_binary_v2_reader {
        return main_offload_files(contents, base, identifier, release);
    }
    let mut out = Vec::new();
    let len = contents.len() as u64;
    let mut off = 0u64;
    while off < len {
        let rest = &contents[off as usize..];
        let (pass1, _) = create(rest, base + off, release, off == 0, false)?;
        let size = pass1.size;
        let copy = &rest[..size as usize];
        let (c, strings) = create(copy, base + off, release, off == 0, true)?;
        out.push(llvm_image(
            copy,
            base + off,
            &c.entry,
            c.entry_pos,
            strings,
            identifier,
            release,
        ));
        off += size;
    }
    Ok(out)
}

/// The image entry `e` (at `entry_pos` in the binary `buf`, which starts
/// at absolute offset `base`) describes, with its strings. An image that
/// lies past the binary is an error in place of its bytes: `release`
/// would read memory it does not own to extract it (`imgsize_big.pk`).
fn llvm_image<'a>(
    buf: &'a [u8],
    base: u64,
    e: &RawEntry,
    entry_pos: u64,
    strings: Pairs<'a>,
    identifier: &str,
    release: Release,
) -> LlvmImage<'a> {
    let size = buf.len() as u64;
    let image = match e.image_offset.checked_add(e.image_size) {
        Some(end) if end <= size => Ok(&buf[e.image_offset as usize..end as usize]),
        _ => Err(Error::at(
            rules::OB_9,
            base + entry_pos + 32,
            format!(
                "image [{}, +{}) runs past the binary ({size} bytes): LLVM {release} reads memory it does not own to extract it",
                e.image_offset, e.image_size
            ),
        )),
    };
    LlvmImage {
        image_kind: e.image_kind,
        offload_kind: e.offload_kind,
        flags: e.flags,
        strings,
        image,
        image_offset: base.saturating_add(e.image_offset),
        image_size: e.image_size,
        binary_offset: base,
        identifier: identifier.to_string(),
    }
}

/// What kind of file `extractOffloadBinaries` sees (`identify_magic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// Starts with the offload-binary magic.
    OffloadBinary,
    /// An ELF object, executable or shared object.
    Elf,
    /// A Unix archive.
    Archive,
    /// LLVM bitcode (LLVM reads `!llvm.embedded.objects`; not modelled).
    Bitcode,
    /// Anything else: no offloading data, not an error.
    Other,
}

/// Classify `data` as `identify_magic` does for `extractOffloadBinaries`.
pub fn input_kind(data: &[u8]) -> InputKind {
    if data.starts_with(&MAGIC) {
        return InputKind::OffloadBinary;
    }
    match crate::host::elf::detect(data) {
        crate::host::elf::ObjectFormat::Elf => {
            // identify_magic needs the class and the file type.
            // e_type is a u16 in the file's byte order (EI_DATA at 5).
            let msb = data.get(5) == Some(&2);
            let (hi, lo) = if msb { (16, 17) } else { (17, 16) };
            let t = data.get(lo).copied().unwrap_or(0);
            let high = data.get(hi).copied().unwrap_or(0);
            if data.len() >= 18 && high == 0 && matches!(t, 1..=3) {
                InputKind::Elf
            } else {
                InputKind::Other
            }
        }
        crate::host::elf::ObjectFormat::Archive if data.starts_with(b"!<arch>\n") => {
            InputKind::Archive
        }
        crate::host::elf::ObjectFormat::Bitcode => InputKind::Bitcode,
        _ => InputKind::Other,
    }
}

/// Maximum archive nesting followed (LLVM recurses without a bound).
const MAX_DEPTH: u32 = 16;

/// `extractOffloadBinaries(buffer)` of `release`: raw binaries, ELF
/// sections of type `SHT_LLVM_OFFLOADING`, archive members (recursively).
/// `identifier` is the buffer's name (the input path).
pub fn extract_offload_binaries<'a>(
    data: &'a [u8],
    identifier: &str,
    release: Release,
) -> Result<Vec<LlvmImage<'a>>, Failure> {
    let mut out = Vec::new();
    extract_into(data, 0, identifier, release, 0, &mut out)?;
    Ok(out)
}

fn extract_into<'a>(
    data: &'a [u8],
    base: u64,
    identifier: &str,
    release: Release,
    depth: u32,
    out: &mut Vec<LlvmImage<'a>>,
) -> Result<(), Failure> {
    match input_kind(data) {
        InputKind::OffloadBinary => {
            out.extend(extract_offload_files(data, base, identifier, release)?);
        }
        InputKind::Elf => {
            let elf = Elf::parse(data).map_err(|e| Failure::Error {
                message: e.message().to_string(),
                error: e.rebase(base),
            })?;
            for s in &elf.sections {
                if s.sh_type != SHT_LLVM_OFFLOADING {
                    continue;
                }
                let message = format!(
                    "section [index {}] has a sh_offset (0x{:x}) + sh_size (0x{:x}) that is greater than the file size (0x{:x})",
                    s.index,
                    s.offset,
                    s.size,
                    data.len()
                );
                let at = (base + s.offset, base + s.header_pos, s.index);
                out.extend(section_files(
                    s.data(data),
                    at,
                    message,
                    identifier,
                    release,
                )?);
            }
        }
        InputKind::Archive => {
            if depth >= MAX_DEPTH {
                return Err(Failure::Error {
                    message: "archives nested too deeply".into(),
                    error: Error::at(rules::OB_21, base, "archives nested more than 16 deep"),
                });
            }
            let members = archive::members(data, base).map_err(|e| Failure::Error {
                message: llvm_archive_message(data, base, &e),
                error: e,
            })?;
            for m in members {
                let body = &data[(m.data_offset - base) as usize..][..m.size as usize];
                extract_into(body, m.data_offset, &m.name, release, depth + 1, out)?;
            }
        }
        InputKind::Bitcode => {
            return Err(Failure::Error {
                message:
                    "LLVM bitcode inputs (!llvm.embedded.objects) are not supported by offload-kit"
                        .into(),
                error: Error::at(
                    rules::OB_21,
                    base,
                    "LLVM bitcode: offload binaries in bitcode globals are not read by offload-kit",
                ),
            });
        }
        // `coff_object`: every section whose name starts with
        // `.llvm.offloading` (PE images are not read).
        InputKind::Other => {
            let Ok(coff) = crate::host::coff::parse(data) else {
                return Ok(());
            };
            if coff.image {
                return Ok(());
            }
            let offloading = coff
                .sections
                .iter()
                .filter(|s| s.name.starts_with(b".llvm.offloading"));
            for s in offloading {
                let contents = usize::try_from(s.offset)
                    .ok()
                    .zip(usize::try_from(s.size).ok())
                    .and_then(|(o, n)| data.get(o..o.checked_add(n)?));
                let at = (base + s.offset, base + s.header_pos, s.index);
                out.extend(section_files(
                    contents,
                    at,
                    UNEXPECTED_EOF.into(),
                    identifier,
                    release,
                )?);
            }
        }
    }
    Ok(())
}

/// `llvm-objdump`'s file format name of a COFF object it reads
/// (AMD64, i386), `None` for anything else (PE images included).
pub fn coff_format(data: &[u8]) -> Option<&'static str> {
    let machine = u16::from_le_bytes([*data.first()?, *data.get(1)?]);
    let name = match machine {
        0x8664 => "coff-x86-64",
        0x14c => "coff-i386",
        _ => return None,
    };
    crate::host::coff::parse(data)
        .ok()
        .filter(|c| !c.image)
        .map(|_| name)
}
/// The offload binaries of a section's `contents` (`None`: they lie
/// outside the file, which fails with `message`); `at` is the contents'
/// absolute offset, the section header's and the section's index.
fn section_files<'a>(
    contents: Option<&'a [u8]>,
    at: (u64, u64, usize),
    message: String,
    identifier: &str,
    release: Release,
) -> Result<Vec<LlvmImage<'a>>, Failure> {
    let (offset, header_pos, index) = at;
    let contents = contents.ok_or_else(|| Failure::Error {
        message,
        error: Error::at(
            rules::OB_20,
            header_pos,
            format!("section {index} lies outside the file"),
        ),
    })?;
    extract_offload_files(contents, offset, identifier, release)
}

/// LLVM's message for an archive offload-kit's reader refuses, where it is
/// modelled: a member whose data runs past the end of the archive is
/// `Archive::Child::getNext`'s "truncated or malformed archive (offset to
/// next archive member past the end of the archive after member <name>)",
/// the name as `Child::getName` resolves it. Otherwise offload-kit's own
/// message.
fn llvm_archive_message(data: &[u8], base: u64, e: &Error) -> String {
    const PAST: &str = "truncated or malformed archive (offset to next archive member past the end of the archive after member ";
    let own = e.message().to_string();
    if !own.contains("runs past the end of the archive") {
        return own;
    }
    let Some(h) = e
        .offset()
        .and_then(|o| o.checked_sub(base + 48))
        .and_then(|h| usize::try_from(h).ok())
    else {
        return own;
    };
    let Some(field) = data.get(h..h + 16) else {
        return own;
    };
    let raw = String::from_utf8_lossy(field);
    let raw = raw.trim_end_matches(' ');
    let name = if matches!(raw, "/" | "//" | "/SYM64/") {
        Some(raw.to_string())
    } else if let Some(n) = raw.strip_prefix("#1/") {
        n.parse::<usize>().ok().and_then(|n| {
            let d = data.get(h + 60..(h + 60).checked_add(n.min(archive::MAX_NAME as usize))?)?;
            let d = d.split(|&b| b == 0).next().unwrap_or(d);
            Some(String::from_utf8_lossy(d).into_owned())
        })
    } else if let Some(off) = raw.strip_prefix('/') {
        // A long name: look it up in the `//` member before this header.
        let off = off.parse::<usize>().ok();
        let mut pos = 8usize;
        let mut table: Option<&[u8]> = None;
        while pos + 60 <= h {
            let f = &data[pos..pos + 60];
            let size: usize = String::from_utf8_lossy(&f[48..58])
                .trim_end()
                .parse()
                .unwrap_or(usize::MAX);
            if f.starts_with(b"// ") {
                table = data.get(pos + 60..(pos + 60).saturating_add(size));
            }
            pos = pos.saturating_add(60).saturating_add(size);
            pos += pos % 2;
        }
        match (off, table) {
            (Some(o), Some(t)) if o < t.len() => {
                let rest = &t[o..];
                let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                let n = &rest[..end];
                Some(String::from_utf8_lossy(n.strip_suffix(b"/").unwrap_or(n)).into_owned())
            }
            _ => None,
        }
    } else {
        Some(raw.split('/').next().unwrap_or(raw).to_string())
    };
    match name {
        Some(n) => format!("{PAST}{n})"),
        None => format!("{PAST}at offset {h})"),
    }
}

/// The magic every release checks first: OB-1 for the input's first
/// binary, OB-15 for bytes after a binary that start no other.
fn check_magic(buf: &[u8], base: u64, first: bool) -> Result<(), Failure> {
    if buf.starts_with(&MAGIC) {
        return Ok(());
    }
    let rule = if first { rules::OB_1 } else { rules::OB_15 };
    Err(Failure::parse(
        rule,
        base,
        "the bytes here do not start with the magic 10 FF 10 AD",
    ))
}
