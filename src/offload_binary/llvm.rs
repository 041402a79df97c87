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
    if !buf.starts_with(&MAGIC) {
        let rule = if first { rules::OB_1 } else { rules::OB_15 };
        return Err(Failure::parse(
            rule,
            base,
            "the bytes here do not start with the magic 10 FF 10 AD",
        ));
    }
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
    if release >= Release::L19 && size < ENTRY_SIZE {
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
                let effect = if release == Release::L16 {
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
    if release == Release::Main {
        return main_offload_files(contents, base, identifier);
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

/// The `OFFLOADING IMAGE` blocks `llvm-objdump --offloading` of `release`
/// prints for `images`, numbered from 0.
pub fn objdump_images(images: &[LlvmImage<'_>], release: Release) -> String {
    let mut out = String::new();
    for (i, img) in images.iter().enumerate() {
        print_image(&mut out, img, i, release);
    }
    out
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

/// LLVM's words for an ELF file whose section header table does not hold
/// (`ELFFile::sections`, llvm/include/llvm/Object/ELF.h, LLVM 22), its
/// checks in its order; `None` when these checks pass.
pub fn llvm_elf_error(data: &[u8]) -> Option<String> {
    let e = elf_ident(data)?.encoding;
    let (shoff, shentsize, shnum) = match e.is64 {
        true => (e.u64(data, 0x28)?, e.u16(data, 0x3a)?, e.u16(data, 0x3c)?),
        false => (
            u64::from(e.u32(data, 0x20)?),
            e.u16(data, 0x2e)?,
            e.u16(data, 0x30)?,
        ),
    };
    let (shentsize, shnum) = (u64::from(shentsize), u64::from(shnum));
    let (shdr, align, size_at) = if e.is64 { (64u64, 8, 32) } else { (40, 4, 20) };
    if shoff == 0 {
        return None;
    }
    if shentsize != shdr {
        return Some(format!("invalid e_shentsize in ELF header: {shentsize}"));
    }
    if shoff
        .checked_add(shdr)
        .is_none_or(|e| e > data.len() as u64)
    {
        return Some(format!(
            "section header table goes past the end of the file: e_shoff = 0x{shoff:x}"
        ));
    }
    if shoff % align != 0 {
        return Some("invalid alignment of section headers".into());
    }
    // e_shnum 0: the count is the first header's sh_size.
    let count = if shnum == 0 {
        e.word(data, shoff + size_at)?
    } else {
        shnum
    };
    if count > u64::MAX / shdr {
        return Some(format!(
            "invalid number of sections specified in the NULL section's sh_size field ({count})"
        ));
    }
    match shoff.checked_add(count * shdr) {
        None => Some(format!(
            "invalid section header table offset (e_shoff = 0x{shoff:x}) or invalid number of sections specified in the first section header's sh_size field (0x{count:x})"
        )),
        Some(end) if end > data.len() as u64 => {
            Some("section table goes past the end of file".into())
        }
        Some(_) => None,
    }
}

/// `Triple::getArchTypeName` of an ELF file's architecture, as
/// `ELFObjectFile::getArch` derives it from `e_machine`, the class, the
/// byte order and, for AMDGPU, the processor in `e_flags`
/// (llvm/include/llvm/Object/ELFObjectFile.h, LLVM 22): `llvm-readobj`'s
/// `Arch:`.
pub fn elf_arch_name_of(machine: u16, is64: bool, big_endian: bool, e_flags: u32) -> &'static str {
    let le = !big_endian;
    match machine {
        4 => "m68k",
        3 | 6 => "i386",
        62 => "x86_64",
        183 if le => "aarch64",
        183 => "aarch64_be",
        40 => "arm",
        83 => "avr",
        164 => "hexagon",
        244 => "lanai",
        8 => match (is64, le) {
            (false, true) => "mipsel",
            (false, false) => "mips",
            (true, true) => "mips64el",
            (true, false) => "mips64",
        },
        105 => "msp430",
        20 if le => "powerpcle",
        20 => "powerpc",
        21 if le => "powerpc64le",
        21 => "powerpc64",
        243 => match (is64, le) {
            (false, true) => "riscv32",
            (false, false) => "riscv32be",
            (true, true) => "riscv64",
            (true, false) => "riscv64be",
        },
        22 => "s390x",
        2 | 18 if le => "sparcel",
        2 | 18 => "sparc",
        43 => "sparcv9",
        224 if le => match e_flags & 0xff {
            0x01..=0x10 => "r600",
            0x20..=0x5f => "amdgcn",
            _ => "unknown",
        },
        190 if !is64 => "nvptx",
        190 => "nvptx64",
        247 if le => "bpfel",
        247 => "bpfeb",
        251 => "ve",
        252 => "csky",
        258 if is64 => "loongarch64",
        258 => "loongarch32",
        94 => "xtensa",
        _ => "unknown",
    }
}

/// What LLVM 22's tools name an ELF file by, from its header alone (the
/// section table need not hold): `e_machine`, class and byte order, and
/// `e_flags` (0 when the header is cut before it). `None` before
/// `e_machine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElfIdent {
    /// `e_machine`.
    pub machine: u16,
    /// Class and byte order.
    pub encoding: crate::host::elf::Encoding,
    /// `e_flags`.
    pub flags: u32,
}

/// The [`ElfIdent`] of `data`, an ELF file or its first bytes.
pub fn elf_ident(data: &[u8]) -> Option<ElfIdent> {
    let encoding = crate::host::elf::Encoding {
        is64: *data.get(4)? == 2,
        big_endian: *data.get(5)? == 2,
    };
    Some(ElfIdent {
        machine: encoding.u16(data, 18)?,
        encoding,
        flags: encoding
            .u32(data, if encoding.is64 { 0x30 } else { 0x24 })
            .unwrap_or(0),
    })
}

/// The file format name `llvm-objdump` prints for an ELF file.
pub fn elf_format_name(elf: &Elf<'_>) -> String {
    elf_format_name_of(elf.machine, elf.encoding.is64, elf.encoding.big_endian).to_string()
}

/// [`elf_format_name`] from the ELF header's fields alone (`e_machine`,
/// the class and the byte order), for a file whose sections do not parse.
pub fn elf_format_name_of(m: u16, is64: bool, big_endian: bool) -> &'static str {
    let le = !big_endian;
    if is64 {
        match m {
            3 => "elf64-i386",
            62 => "elf64-x86-64",
            183 if le => "elf64-littleaarch64",
            183 => "elf64-bigaarch64",
            21 if le => "elf64-powerpcle",
            21 => "elf64-powerpc",
            243 => "elf64-littleriscv",
            22 => "elf64-s390",
            43 => "elf64-sparc",
            8 => "elf64-mips",
            224 => "elf64-amdgpu",
            247 => "elf64-bpf",
            251 => "elf64-ve",
            258 => "elf64-loongarch",
            _ => "elf64-unknown",
        }
    } else {
        match m {
            4 => "elf32-m68k",
            3 => "elf32-i386",
            6 => "elf32-iamcu",
            62 => "elf32-x86-64",
            40 if le => "elf32-littlearm",
            40 => "elf32-bigarm",
            83 => "elf32-avr",
            164 => "elf32-hexagon",
            244 => "elf32-lanai",
            8 => "elf32-mips",
            105 => "elf32-msp430",
            20 if le => "elf32-powerpcle",
            20 => "elf32-powerpc",
            243 => "elf32-littleriscv",
            252 => "elf32-csky",
            2 | 18 => "elf32-sparc",
            224 => "elf32-amdgpu",
            258 => "elf32-loongarch",
            94 => "elf32-xtensa",
            _ => "elf32-unknown",
        }
    }
}

/// What `llvm-objdump --offloading <file>` of a release does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjdumpRun {
    /// Standard output.
    pub stdout: String,
    /// The error line after `llvm-objdump: error: ` (the program prefix
    /// depends on argv\[0\]), if it fails; the exit status is then 1.
    pub error: Option<String>,
    /// Set when the release would read memory it does not own: the
    /// rule and offset; `stdout` and `error` are then what precedes it.
    pub unsafe_read: Option<Error>,
    /// The rule and absolute offset behind `error` (offload-kit's detail,
    /// printed after LLVM's message).
    pub detail: Option<Error>,
}

fn print_image(out: &mut String, img: &LlvmImage<'_>, i: usize, release: Release) {
    use std::fmt::Write as _;
    let _ = write!(
        out,
        "\nOFFLOADING IMAGE [{i}]:\n{:<16}{}\n{:<16}{}\n{:<16}{}\n{:<16}{}\n",
        "kind",
        image_kind_objdump_name(img.image_kind, release),
        "arch",
        img.arch(),
        "triple",
        img.triple(),
        "producer",
        offload_kind_name(img.offload_kind, release)
    );
}

/// `llvm-objdump --offloading` of `release` on `data` named `file` (as
/// given on the command line). `None` for LLVM 14, which has no
/// `--offloading`.
pub fn objdump_offloading(data: &[u8], file: &str, release: Release) -> Option<ObjdumpRun> {
    if release <= Release::L14 {
        return None;
    }
    let mut run = ObjdumpRun {
        stdout: String::new(),
        error: None,
        unsafe_read: None,
        detail: None,
    };
    let fail = |run: &mut ObjdumpRun, f: Failure, prefix: &str| match f {
        Failure::Error { message, error } => {
            run.error = Some(format!("{prefix}{message}"));
            run.detail = Some(error);
        }
        Failure::Unsafe { error } => run.unsafe_read = Some(error),
    };
    match input_kind(data) {
        InputKind::OffloadBinary => {
            // createBinary: OffloadBinary::create on the whole file.
            if let Err(f) = create_binary(data, 0, release) {
                fail(&mut run, f, &format!("'{file}': "));
                return Some(run);
            }
            match extract_offload_files(data, 0, file, release) {
                Ok(imgs) => {
                    for (i, img) in imgs.iter().enumerate() {
                        print_image(&mut run.stdout, img, i, release);
                    }
                }
                Err(f) => fail(
                    &mut run,
                    f,
                    &format!("'{file}': while extracting offloading files: "),
                ),
            }
        }
        InputKind::Elf => objdump_elf(data, 0, file, file, release, &mut run),
        InputKind::Archive => match archive::members(data, 0) {
            Ok(members) => {
                for m in members {
                    let body = &data[m.data_offset as usize..][..m.size as usize];
                    if input_kind(body) == InputKind::OffloadBinary {
                        // `getAsBinary` reads the member in place: a member
                        // that is not 8-aligned in the file fails, one that
                        // parses is "not an object file".
                        let r = if m.data_offset % 8 != 0 {
                            Err(Failure::parse(rules::OB_21, m.data_offset, "misaligned"))
                        } else {
                            create_binary(body, m.data_offset, release)
                        };
                        run.error = Some(match r {
                            Err(Failure::Error { message, error }) => {
                                run.detail = Some(if m.data_offset % 8 != 0 {
                                    Error::at(
                                        rules::OB_21,
                                        m.data_offset,
                                        format!(
                                            "member '{}' holds an offload binary at an offset that is not a multiple of 8: llvm-objdump reads members in place",
                                            m.name
                                        ),
                                    )
                                } else {
                                    error
                                });
                                format!("{file}({}): {message}", m.name)
                            }
                            Err(Failure::Unsafe { error }) => {
                                run.unsafe_read = Some(error);
                                break;
                            }
                            Ok(()) => {
                                run.detail = Some(Error::at(
                                    rules::OB_21,
                                    m.header_offset,
                                    format!(
                                        "member '{}' is a raw offload binary, which llvm-objdump does not read as an archive member (the packager does)",
                                        m.name
                                    ),
                                ));
                                format!("'{file}': {NOT_OBJECT}")
                            }
                        });
                        break;
                    }
                    if input_kind(body) != InputKind::Elf {
                        continue;
                    }
                    let shown = format!("{file}({})", m.name);
                    objdump_elf(body, m.data_offset, &shown, &m.name, release, &mut run);
                    if run.error.is_some() || run.unsafe_read.is_some() {
                        break;
                    }
                }
            }
            Err(e) => {
                run.error = Some(format!("'{file}': {}", llvm_archive_message(data, 0, &e)));
                run.detail = Some(e);
            }
        },
        // A COFF object (AMD64 or i386): its `.llvm.offloading` sections.
        InputKind::Other if coff_format(data).is_some() => {
            let format = coff_format(data).unwrap_or_default();
            run.stdout
                .push_str(&format!("\n{file}:\tfile format {format}\n"));
            match extract_offload_binaries(data, file, release) {
                Ok(imgs) => run.stdout.push_str(&objdump_images(&imgs, release)),
                Err(f) => fail(
                    &mut run,
                    f,
                    &format!("'{file}': while extracting offloading files: "),
                ),
            }
        }
        _ => {
            run.error = Some(format!("'{file}': {NOT_OBJECT}"));
            run.detail = Some(super::magic_near_miss(data).unwrap_or_else(|| {
                Error::at(
                    rules::OB_1,
                    0,
                    "neither an offload binary (magic 10 FF 10 AD), an ELF file nor an archive",
                )
            }));
        }
    }
    Some(run)
}

fn objdump_elf(
    data: &[u8],
    base: u64,
    shown: &str,
    identifier: &str,
    release: Release,
    run: &mut ObjdumpRun,
) {
    let elf = match Elf::parse(data) {
        Ok(e) => e,
        Err(e) => {
            let m = llvm_elf_error(data).unwrap_or_else(|| e.message().to_string());
            run.error = Some(format!("'{shown}': {m}"));
            run.detail = Some(e.rebase(base));
            return;
        }
    };
    run.stdout.push_str(&format!(
        "\n{shown}:\tfile format {}\n",
        elf_format_name(&elf)
    ));
    let mut imgs = Vec::new();
    if let Err(f) = extract_into(data, base, identifier, release, 1, &mut imgs) {
        match f {
            Failure::Error { message, error } => {
                run.error = Some(format!(
                    "'{shown}': while extracting offloading files: {message}"
                ));
                run.detail = Some(error);
            }
            Failure::Unsafe { error } => run.unsafe_read = Some(error),
        }
        return;
    }
    for (i, img) in imgs.iter().enumerate() {
        print_image(&mut run.stdout, img, i, release);
    }
}

/// `createBinary` of an offload binary in `release`: `OffloadBinary::create`
/// on the buffer. In main that reads every entry and takes the first,
/// which for a binary of none indexes an empty vector (undefined
/// behaviour, reported as OB-6).
fn create_binary(data: &[u8], base: u64, release: Release) -> Result<(), Failure> {
    if release != Release::Main {
        return create(data, base, release, true, false).map(|_| ());
    }
    let (h, _) = main_header(data, base, true)?;
    let images = main_binary(&data[..h.size as usize], base, true, "")?;
    if images.is_empty() {
        return Err(Failure::Unsafe {
            error: Error::at(
                rules::OB_6,
                base + 24,
                "a binary of no entries: LLVM main's createBinary takes the first of none (undefined behaviour)",
            ),
        });
    }
    Ok(())
}

/// `OffloadBinary::extractHeader` of LLVM main (`llvm/lib/Object/OffloadBinary.cpp`
/// at llvm-project `02dc39ba9835`; spec/offload-binary.md, *What each release
/// does*): versions 1 to 3, at least 40 bytes (the v3 header) for every
/// version, `size` between 40 and the data, and the entry table inside
/// `size`. Returns the header and the entry count (1 for v1).
fn main_header(buf: &[u8], base: u64, first: bool) -> Result<(RawHeader, u64), Failure> {
    let len = buf.len() as u64;
    if len < HEADER_SIZE_V3 {
        return Err(Failure::parse(
            rules::OB_3,
            base + len,
            format!("LLVM main wants {HEADER_SIZE_V3} bytes for the header of every version, {len} remain"),
        ));
    }
    if !buf.starts_with(&MAGIC) {
        let rule = if first { rules::OB_1 } else { rules::OB_15 };
        return Err(Failure::parse(
            rule,
            base,
            "the bytes here do not start with the magic 10 FF 10 AD",
        ));
    }
    let h = RawHeader::read(&mut Cursor::new(buf))
        .map_err(|_| Failure::parse(rules::OB_3, base, "the header is incomplete"))?;
    if h.version == 0 || h.version > 3 {
        return Err(Failure::parse(
            rules::OB_2,
            base + 4,
            format!("version {} (LLVM main reads 1 to 3)", h.version),
        ));
    }
    let size = h.size;
    if size > len || size < HEADER_SIZE_V3 {
        return Err(Failure::eof(
            rules::OB_4,
            base + 8,
            format!("size {size} is not between {HEADER_SIZE_V3} and the data's {len} bytes"),
        ));
    }
    let inflated = read_u64(buf, 32).unwrap_or(0);
    if h.version >= 3 && inflated != 0 {
        return Err(Failure::Error {
            message: "offload-kit does not model how LLVM main reads a compressed version 3 binary (llvm#222774, not established to be merged)".into(),
            error: Error::at(rules::OB_19, base + 32, format!("inflated size {inflated}: compressed")),
        });
    }
    let count = if h.version == 1 {
        1
    } else {
        h.entry_size_or_count
    };
    // LLVM's arithmetic, modulo 2^64.
    let entries_size = count.wrapping_mul(ENTRY_SIZE);
    if h.entry_offset > size.wrapping_sub(entries_size) || entries_size > size - HEADER_SIZE_V1 {
        return Err(Failure::eof(
            rules::OB_6,
            base + 16,
            format!(
                "{count} entries at {} do not fit in the size {size}",
                h.entry_offset
            ),
        ));
    }
    if count.checked_mul(ENTRY_SIZE).is_none() {
        return Err(Failure::Unsafe {
            error: Error::at(
                rules::OB_6,
                base + 24,
                format!("{count} entries of {ENTRY_SIZE} bytes: the product wraps past 2^64 to {entries_size}, LLVM main's check passes and it reads entries far past the binary"),
            ),
        });
    }
    Ok((h, count))
}

/// `OffloadBinary::create` of LLVM main on one binary (`buf` holds exactly
/// its `size` bytes): every entry checked by `validateEntry` (string
/// entries counted at 24 bytes **for v1 too**, so valid v1 binaries with
/// many strings fail), then read by the constructor (v1 string entries of
/// 16 bytes and C-string values; v2 and v3 values of their stored size; a
/// repeated key keeps its first place and takes the last value). Reads
/// that LLVM makes without a bound are [`Failure::Unsafe`] when they would
/// leave the binary.
fn main_binary<'a>(
    buf: &'a [u8],
    base: u64,
    first: bool,
    identifier: &str,
) -> Result<Vec<LlvmImage<'a>>, Failure> {
    let (h, count) = main_header(buf, base, first)?;
    let size = buf.len() as u64;
    let string_entry = if h.version == 1 {
        STRING_ENTRY_SIZE_V1
    } else {
        STRING_ENTRY_SIZE_V2
    };
    let mut nuls = super::NulIndex::new(buf);
    let mut out = Vec::new();
    for i in 0..count {
        let entry_pos = h.entry_offset + i * ENTRY_SIZE;
        let e = RawEntry::read(&mut Cursor::new(&buf[entry_pos as usize..]))
            .map_err(|_| Failure::eof(rules::OB_6, base + entry_pos, "entry cut"))?;
        let strings_end = e
            .num_strings
            .wrapping_mul(STRING_ENTRY_SIZE_V2)
            .wrapping_add(e.string_offset);
        let wraps = e
            .num_strings
            .checked_mul(STRING_ENTRY_SIZE_V2)
            .and_then(|n| n.checked_add(e.string_offset))
            .is_none();
        if e.image_offset > size {
            return Err(Failure::eof(
                rules::OB_9,
                base + entry_pos + 24,
                format!(
                    "entry {i}: image offset {} lies past the size {size}",
                    e.image_offset
                ),
            ));
        }
        if e.string_offset > size || strings_end > size {
            return Err(Failure::eof(
                rules::OB_7,
                base + entry_pos + 8,
                format!(
                    "entry {i}: {} string entries at {}, counted at 24 bytes each by LLVM main (also for version 1), run past the size {size}",
                    e.num_strings, e.string_offset
                ),
            ));
        }
        if wraps {
            return Err(Failure::Unsafe {
                error: Error::at(
                    rules::OB_7,
                    base + entry_pos + 16,
                    format!(
                        "entry {i}: {} string entries × 24 wraps past 2^64: LLVM main's check passes and it reads string entries far past the binary",
                        e.num_strings
                    ),
                ),
            });
        }
        let mut strings: Vec<(&[u8], &[u8])> = Vec::new();
        for j in 0..e.num_strings {
            let spos = e.string_offset + j * string_entry;
            let field = |k: u64| read_u64(buf, spos + 8 * k);
            let (Some(ko), Some(vo)) = (field(0), field(1)) else {
                return Err(Failure::Unsafe {
                    error: Error::at(rules::OB_7, base + spos, "string entry past the binary"),
                });
            };
            let outside = |what: &str, at: u64, off: u64| {
                Failure::Unsafe {
                error: Error::at(
                    rules::OB_8,
                    base + at,
                    format!("entry {i}, string entry {j}: {what} at {off} lies outside the binary ({size} bytes): LLVM main reads memory it does not own"),
                ),
            }
            };
            let mut c_string = |off: u64, at: u64, what: &str| -> Result<&'a [u8], Failure> {
                if off > size {
                    return Err(outside(what, at, off));
                }
                // The binary is read from a NUL-terminated copy of its bytes.
                let end = nuls.find(off as usize).unwrap_or(buf.len());
                Ok(&buf[off as usize..end])
            };
            let key = c_string(ko, spos, "key")?;
            let value = if h.version == 1 {
                c_string(vo, spos + 8, "value")?
            } else {
                let vs = field(2).ok_or_else(|| outside("value size", spos + 16, spos + 16))?;
                match vo.checked_add(vs).filter(|&end| end <= size) {
                    Some(end) => &buf[vo as usize..end as usize],
                    None => return Err(outside("value", spos + 8, vo)),
                }
            };
            // MapVector: a repeated key keeps its place, takes the last value.
            match strings.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => strings.push((key, value)),
            }
        }
        out.push(llvm_image(
            buf,
            base,
            &e,
            entry_pos,
            strings,
            identifier,
            Release::Main,
        ));
    }
    Ok(out)
}

/// `extractOffloadFiles` of LLVM main: the binaries that fill `contents`,
/// each read by [`main_binary`], the next starting at the first multiple
/// of 8 at or after the end of the previous one; anything after the last
/// binary that is not one fails the whole read.
fn main_offload_files<'a>(
    contents: &'a [u8],
    base: u64,
    identifier: &str,
) -> Result<Vec<LlvmImage<'a>>, Failure> {
    let mut out = Vec::new();
    let len = contents.len() as u64;
    let mut off = 0u64;
    while off < len {
        let rest = &contents[off as usize..];
        let (h, _) = main_header(rest, base + off, off == 0)?;
        out.extend(main_binary(
            &rest[..h.size as usize],
            base + off,
            off == 0,
            identifier,
        )?);
        off = (off + h.size).div_ceil(8) * 8;
    }
    Ok(out)
}
