//! Where offload binaries live and how to list them: a raw file of
//! concatenated binaries, ELF sections of type `SHT_LLVM_OFFLOADING` (in
//! objects and in linked executables, where the linker concatenated the
//! copies of every object), and the members of archives (OB-20, OB-21).

use super::kinds::{ImageKind, OffloadKind};
use super::llvm::{input_kind, InputKind};
use super::{parse_strict, Binary, ReadOptions};
use crate::error::{Error, Errors};
use crate::format::offload_binary::{SECTION_NAME, SHT_LLVM_OFFLOADING};
use crate::host::ar as archive;
use crate::host::elf::Elf;
use crate::profile::Release;
use crate::rules;
use serde::Serialize;

/// A byte range that holds a sequence of offload binaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found<'a> {
    /// The bytes (the whole file, a section, a member).
    pub bytes: &'a [u8],
    /// Absolute offset of `bytes[0]`.
    pub base: u64,
    /// The ELF section name, when the range is a section.
    pub section: Option<String>,
    /// The archive member name, when the range is (in) a member.
    pub member: Option<String>,
}

const MAX_DEPTH: u32 = 16;

/// Find every byte range of `data` that holds offload binaries, strictly:
/// malformed containers are errors, a `.llvm.offloading` section of another
/// type is an error (OB-20; LLVM skips it), an input that is neither a
/// binary, an ELF file nor an archive is an error (OB-1).
pub fn locate(data: &[u8]) -> Result<Vec<Found<'_>>, Errors> {
    let mut out = Vec::new();
    let mut errs = Vec::new();
    match input_kind(data) {
        InputKind::OffloadBinary | InputKind::Elf | InputKind::Archive => {
            locate_into(data, 0, None, 0, &mut out, &mut errs)
        }
        InputKind::Bitcode => errs.push(Error::at(
            rules::OB_21,
            0,
            "LLVM bitcode: offload binaries in bitcode globals (!llvm.embedded.objects) are not read by offload-kit",
        )),
        InputKind::Other => errs.push(Error::at(
            rules::OB_1,
            0,
            "neither an offload binary (magic 10 FF 10 AD), an ELF file nor an archive",
        )),
    }
    if errs.is_empty() {
        Ok(out)
    } else {
        errs.sort_by_key(|e| e.offset());
        Err(errs.into())
    }
}

fn locate_into<'a>(
    data: &'a [u8],
    base: u64,
    member: Option<&str>,
    depth: u32,
    out: &mut Vec<Found<'a>>,
    errs: &mut Vec<Error>,
) {
    match input_kind(data) {
        InputKind::OffloadBinary => out.push(Found {
            bytes: data,
            base,
            section: None,
            member: member.map(str::to_string),
        }),
        InputKind::Elf => {
            let elf = match Elf::parse(data) {
                Ok(e) => e,
                Err(e) => {
                    errs.push(e.rebase(base).with_rule_if_none(rules::OB_20));
                    return;
                }
            };
            for s in &elf.sections {
                let named = s.name == SECTION_NAME.as_bytes();
                if s.sh_type != SHT_LLVM_OFFLOADING {
                    if named {
                        errs.push(Error::at(
                            rules::OB_20,
                            base + s.header_pos,
                            format!(
                                "section {} '{SECTION_NAME}' has type 0x{:x}, not SHT_LLVM_OFFLOADING (0x6fff4c0b): LLVM 16, 19 and 22 do not read it",
                                s.index, s.sh_type
                            ),
                        ));
                    }
                    continue;
                }
                match s.data_or_err(data) {
                    Ok(bytes) => out.push(Found {
                        bytes,
                        base: base + s.offset,
                        section: Some(s.name_str().into_owned()),
                        member: member.map(str::to_string),
                    }),
                    Err(e) => errs.push(e.rebase(base)),
                }
            }
        }
        InputKind::Archive => {
            if depth >= MAX_DEPTH {
                errs.push(Error::at(rules::OB_21, base, "archives nested more than 16 deep"));
                return;
            }
            match archive::members(data, base) {
                Ok(ms) => {
                    for m in ms {
                        let body = &data[(m.data_offset - base) as usize..][..m.size as usize];
                        locate_into(body, m.data_offset, Some(&m.name), depth + 1, out, errs);
                    }
                }
                Err(e) => errs.push(e),
            }
        }
        InputKind::Bitcode => errs.push(Error::at(
            rules::OB_21,
            base,
            format!(
                "archive member '{}' is LLVM bitcode: offload binaries in bitcode are not read by offload-kit",
                member.unwrap_or("?")
            ),
        )),
        InputKind::Other => {}
    }
}

/// One image of a listing: the fields `offload-kit list` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListedImage {
    /// Running index over the input (`OFFLOADING IMAGE [i]`).
    pub index: usize,
    /// The `triple` string (empty when absent).
    pub triple: String,
    /// The `arch` string (empty when absent).
    pub arch: String,
    /// The image kind (`none`, `object`, `bitcode`, `cubin`, `fatbinary`, `ptx`, `spirv`).
    pub kind: &'static str,
    /// The stored image kind value.
    pub image_kind: u16,
    /// The producer (`none`, `openmp`, `cuda`, `hip`, `sycl`) in the release's table.
    pub producer: &'static str,
    /// The stored offload kind value.
    pub offload_kind: u16,
    /// Absolute offset of the image (of the binary, when compressed).
    pub offset: u64,
    /// Image size.
    pub size: u64,
    /// Absolute offset of the binary holding the image.
    pub binary_offset: u64,
    /// Format version of that binary.
    pub version: u32,
    /// Whether that binary's body is compressed (v3).
    pub compressed: bool,
    /// The ELF section holding the binary, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// The archive member holding the binary, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// Every key/value pair, in string-entry order (lossy UTF-8).
    pub strings: Vec<(String, String)>,
}

fn kind_name(v: u16, r: Release) -> &'static str {
    match ImageKind::from_value(v, r) {
        Some(ImageKind::None) | None => "none",
        Some(ImageKind::Object) => "object",
        Some(ImageKind::Bitcode) => "bitcode",
        Some(ImageKind::Cubin) => "cubin",
        Some(ImageKind::Fatbinary) => "fatbinary",
        Some(ImageKind::Ptx) => "ptx",
        Some(ImageKind::Spirv) => "spirv",
    }
}

/// Every binary of `data`, strictly (see [`locate`] and [`parse_strict`]),
/// with where it was found.
pub fn read_all(
    data: &[u8],
    opts: ReadOptions,
) -> Result<Vec<(Found<'_>, Vec<Binary<'_>>)>, Errors> {
    let found = locate(data)?;
    let mut out = Vec::with_capacity(found.len());
    let mut errs = Vec::new();
    for f in found {
        match parse_strict(f.bytes, f.base, opts) {
            Ok(b) => out.push((f, b)),
            Err(es) => {
                let ctx = match (&f.section, &f.member) {
                    (Some(s), Some(m)) => Some(format!("in section {s} of member {m}")),
                    (Some(s), None) => Some(format!("in section {s}")),
                    (None, Some(m)) => Some(format!("in member {m}")),
                    (None, None) => None,
                };
                errs.extend(es.into_iter().map(|e| match &ctx {
                    Some(c) => e.context(c.clone()),
                    None => e,
                }));
            }
        }
    }
    if errs.is_empty() {
        Ok(out)
    } else {
        Err(errs.into())
    }
}

/// List the images of `data` strictly with LLVM 22's kind tables. See
/// [`list_with`].
pub fn list(data: &[u8]) -> Result<Vec<ListedImage>, Errors> {
    list_with(data, ReadOptions::default())
}

/// List the images of `data` (a raw file, an ELF file, an archive)
/// strictly: every violation of any binary is returned. `opts.release`
/// picks the kind tables (OB-12, OB-13; `None`: LLVM 22's).
pub fn list_with(data: &[u8], opts: ReadOptions) -> Result<Vec<ListedImage>, Errors> {
    let table = opts.release.unwrap_or(Release::L22);
    let mut out = Vec::new();
    for (f, bins) in read_all(data, opts)? {
        for b in bins {
            for e in &b.entries {
                out.push(ListedImage {
                    index: out.len(),
                    triple: e.triple(),
                    arch: e.arch(),
                    kind: kind_name(e.image_kind, table),
                    image_kind: e.image_kind,
                    producer: OffloadKind::from_value(e.offload_kind, table)
                        .map_or("none", OffloadKind::name),
                    offload_kind: e.offload_kind,
                    offset: e.image_offset,
                    size: e.image.len() as u64,
                    binary_offset: b.offset,
                    version: b.version,
                    compressed: b.is_compressed(),
                    section: f.section.clone(),
                    member: f.member.clone(),
                    strings: e
                        .strings
                        .iter()
                        .map(|p| {
                            (
                                String::from_utf8_lossy(&p.key).into_owned(),
                                String::from_utf8_lossy(&p.value).into_owned(),
                            )
                        })
                        .collect(),
                });
            }
        }
    }
    Ok(out)
}

/// The listing in `llvm-objdump --offloading` form (image blocks only,
/// without the file-format lines), from a strict read.
pub fn objdump_text(images: &[ListedImage], release: Release) -> String {
    let mut s = String::new();
    for i in images {
        s.push_str(&format!(
            "\nOFFLOADING IMAGE [{}]:\n{:<16}{}\n{:<16}{}\n{:<16}{}\n{:<16}{}\n",
            i.index,
            "kind",
            super::kinds::image_kind_objdump_name(i.image_kind, release),
            "arch",
            i.arch,
            "triple",
            i.triple,
            "producer",
            super::kinds::offload_kind_name(i.offload_kind, release)
        ));
    }
    s
}
