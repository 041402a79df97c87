//! Container detection and listing for the native CLI.
//!
//! `offload-kit list` and `extract` recognise the container by its magic
//! and list what is inside with absolute offsets.

use crate::bundle::binary::{self, Extent, LlvmView};
use crate::bundle::{ccob, fatbin, text};
use crate::error::Error;
use crate::offload_binary;
use crate::profile::Release;
use crate::rules;
use crate::source::Source;
use serde::Serialize;

/// The kind of container found at the start of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Container {
    /// `__CLANG_OFFLOAD_BUNDLE__` binary bundle.
    BinaryBundle,
    /// `CCOB` compressed bundle(s).
    CompressedBundle,
    /// An ELF file: object-file bundle sections and/or `.hip_fatbin`.
    Elf,
    /// A text bundle (`-type=i/ii/cui/hipi/d/ll/s`).
    TextBundle,
    /// Offload binaries (magic `10 FF 10 AD`, clang-offload-packager).
    OffloadBinary,
    /// A GNU/BSD `ar` archive (members holding offload binaries).
    Archive,
    /// An object file in a format other than ELF (COFF, Mach-O, …): not supported.
    OtherObject,
}

impl Container {
    /// Stable name used in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Container::BinaryBundle => "binary-bundle",
            Container::CompressedBundle => "compressed-bundle",
            Container::Elf => "elf",
            Container::TextBundle => "text-bundle",
            Container::OffloadBinary => "offload-binary",
            Container::Archive => "archive",
            Container::OtherObject => "object",
        }
    }
}

/// Identify the container at the start of `data`.
pub fn detect(data: &[u8]) -> Option<Container> {
    if binary::is_binary_bundle(data) {
        return Some(Container::BinaryBundle);
    }
    if ccob::is_ccob(data) {
        return Some(Container::CompressedBundle);
    }
    if data.starts_with(b"\x7fELF") {
        return Some(Container::Elf);
    }
    if text_comment(data).is_some() {
        return Some(Container::TextBundle);
    }
    if data.starts_with(&[0x10, 0xFF, 0x10, 0xAD]) {
        return Some(Container::OffloadBinary);
    }
    if data.starts_with(b"!<arch>\n") || data.starts_with(b"!<thin>\n") {
        return Some(Container::Archive);
    }
    if crate::elf::detect(data).is_object_file() {
        return Some(Container::OtherObject);
    }
    None
}

/// The comment string of the text bundle in `data`, if any: the first
/// START marker within the first 64 KiB decides, whether or not it sits
/// where the format wants it (the strict reader reports that, TXT-3).
pub fn text_comment(data: &[u8]) -> Option<&'static str> {
    let head = &data[..data.len().min(64 << 10)];
    let at = memchr::memmem::find(head, b" __CLANG_OFFLOAD_BUNDLE____START__ ")?;
    ["//", "#", ";"]
        .into_iter()
        .find(|c| head[..at].ends_with(c.as_bytes()))
}

/// One listed entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListedEntry {
    /// Bundle entry ID.
    pub id: String,
    /// Absolute offset of the payload in the input.
    pub offset: u64,
    /// Payload size.
    pub size: u64,
    /// Which bundle of the input holds it (0 for a single bundle).
    pub bundle: usize,
    /// The container holding the entry.
    pub container: &'static str,
    /// For an entry inside a compressed bundle: the absolute offset of the
    /// `CCOB` blob; `offset` is then relative to the decompressed bundle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ccob_offset: Option<u64>,
    /// For an entry found in an ELF file: the section that holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// For an offload-binary image: its kind, producer, strings and where
    /// its binary lies (`id` is then `<producer>-<triple>-<arch>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<offload_binary::ListedImage>,
}

/// A listing of an input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listing {
    /// The outer container.
    pub container: &'static str,
    /// How the input was read: `strict` or `llvm-N`.
    pub mode: String,
    /// Entries in the order the mode presents them.
    pub entries: Vec<ListedEntry>,
}

/// List `data`. With `release = None` the strict reader is used and every
/// violation is returned; with a release, entries appear as that release
/// sees them (its `-list` order), and only what it cannot read is an error.
pub fn list(data: &[u8], release: Option<Release>) -> Result<Listing, Vec<Error>> {
    list_source(&data, release)
}

/// [`list`] over a [`Source`]: the bundles of an ELF file's `.hip_fatbin`
/// (and compressed bundles in it) are read through windows of their own,
/// so a mapped multi-GB file is listed with the pages of one bundle
/// resident at a time.
pub fn list_source(src: &dyn Source, release: Option<Release>) -> Result<Listing, Vec<Error>> {
    let data = src.bytes();
    let Some(c) = detect(data) else {
        return Err(vec![unknown_container(data)]);
    };
    let mode = release.map_or("strict".into(), |r| format!("llvm-{r}"));
    let entries = match c {
        Container::BinaryBundle => {
            let entries: Vec<binary::Entry> = match release {
                None => binary::parse_strict(data, 0, Extent::Standalone)?.entries,
                Some(r) => match binary::llvm_read(data, 0, r) {
                    LlvmView::NoBundles => vec![],
                    LlvmView::Entries(e) => e,
                    LlvmView::Crash(e) => return Err(vec![e]),
                },
            };
            entries
                .iter()
                .map(|e| ListedEntry {
                    id: e.id_str().into_owned(),
                    offset: e.offset,
                    size: e.size,
                    bundle: 0,
                    container: c.name(),
                    ccob_offset: None,
                    section: None,
                    image: None,
                })
                .collect()
        }
        Container::TextBundle => {
            let c = text_comment(data).expect("detected");
            let entries = match release {
                None => text::parse_strict(data, 0, c)?.entries,
                Some(r) => text::llvm_entries(data, 0, c, r).map_err(|e| vec![e])?,
            };
            entries
                .iter()
                .map(|e| ListedEntry {
                    id: e.id_str().into_owned(),
                    offset: e.offset,
                    size: e.size,
                    bundle: 0,
                    container: "text-bundle",
                    ccob_offset: None,
                    section: None,
                    image: None,
                })
                .collect()
        }
        Container::OffloadBinary | Container::Archive => images(data, release)?,
        Container::OtherObject => {
            return Err(vec![Error::at(
                rules::OBJ_1,
                0,
                format!(
                    "unsupported object format {}: offload-kit reads ELF objects",
                    crate::elf::detect(data).name()
                ),
            )])
        }
        Container::CompressedBundle => {
            let blobs = ccob::blobs(data, 0).map_err(|e| vec![e])?;
            let mut entries = Vec::new();
            for (k, b) in blobs.iter().enumerate() {
                entries.extend(ccob_entries(src, b.offset, b.len, k, release)?);
            }
            entries
        }
        Container::Elf => {
            let l = match release {
                None => fatbin::list_strict_source(src)?,
                Some(_) => fatbin::inspect_source(src).map_err(|e| vec![e])?,
            };
            let mut entries = Vec::new();
            for e in l.entries {
                match e.kind {
                    fatbin::Kind::Compressed { .. } => {
                        let mut inner = ccob_entries(src, e.offset, e.size, e.bundle, release)?;
                        for i in inner.iter_mut() {
                            i.section = Some(e.section.clone());
                        }
                        entries.extend(inner);
                    }
                    kind => entries.push(ListedEntry {
                        id: e.id,
                        offset: e.offset,
                        size: e.size,
                        bundle: e.bundle,
                        container: if kind == fatbin::Kind::Section {
                            "object-bundle"
                        } else {
                            "binary-bundle"
                        },
                        ccob_offset: None,
                        section: Some(e.section),
                        image: None,
                    }),
                }
            }
            entries.extend(images(data, release)?);
            entries
        }
    };
    Ok(Listing {
        container: c.name(),
        mode,
        entries,
    })
}

/// The offload-binary images of `data` (raw binaries, `.llvm.offloading`
/// sections of an ELF file, archive members).
fn images(data: &[u8], release: Option<Release>) -> Result<Vec<ListedEntry>, Vec<Error>> {
    Ok(offload_binary::list_with(data, release)?
        .into_iter()
        .map(|i| ListedEntry {
            id: format!("{}-{}-{}", i.producer, i.triple, i.arch),
            offset: i.offset,
            size: i.size,
            bundle: i.index,
            container: "offload-binary",
            ccob_offset: None,
            section: i.section.clone(),
            image: Some(i),
        })
        .collect())
}

/// The bytes of offload-binary image `img` (the `index`-th image of the
/// input, as [`list`] numbers them); inflated for compressed v3 binaries.
pub fn image_bytes(data: &[u8], img: &offload_binary::ListedImage) -> Result<Vec<u8>, Vec<Error>> {
    let all = offload_binary::container::read_all(data, Default::default())?;
    all.iter()
        .flat_map(|(_, bins)| bins.iter().flat_map(|b| b.entries.iter()))
        .nth(img.index)
        .map(|e| e.image.to_vec())
        .ok_or_else(|| vec![Error::other(format!("no image {}", img.index))])
}

/// Compressed bundles larger than this are listed from a verified prefix.
const LARGE_CCOB: u64 = 64 << 20;
/// How much of a large compressed bundle is kept for its header: a first
/// try, and the most kept when the header is longer.
const LARGE_CCOB_PREFIX: [u64; 2] = [1 << 20, 16 << 20];

/// Entries of a large compressed binary bundle from the first bytes of its
/// (verified) uncompressed form: the header and IDs are checked strictly;
/// payload ranges against the full size.
fn large_binary_entries(
    prefix: &[u8],
    total: u64,
    at: u64,
    bundle: usize,
) -> Result<Vec<ListedEntry>, Vec<Error>> {
    let ctx = |e: Error| {
        e.context(format!(
            "inside the compressed bundle at 0x{at:x} (offsets are within the decompressed bundle)"
        ))
    };
    let scan = binary::scan_prefix(prefix, total, 0)
        .ok_or_else(|| vec![ctx(Error::at(rules::BIN_2, 24, "bundle header cut short"))])?;
    if scan.stop.is_some() || scan.entries.len() as u64 != scan.num_entries {
        return Err(vec![ctx(Error::at(
            rules::BIN_2,
            scan.header_end,
            format!(
                "the bundle header is malformed or longer than the {} bytes read ahead",
                prefix.len()
            ),
        ))]);
    }
    let mut errs = Vec::new();
    for e in &scan.entries {
        if let Err(es) = crate::id::BundleEntryId::parse_strict(&e.id_str()) {
            errs.extend(
                es.into_iter()
                    .map(|ie| ctx(Error::at(ie.rule, e.id_pos + ie.pos as u64, ie.message))),
            );
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(scan
        .entries
        .iter()
        .map(|e| ListedEntry {
            id: e.id_str().into_owned(),
            offset: e.offset,
            size: e.size,
            bundle,
            container: "binary-bundle",
            ccob_offset: Some(at),
            section: None,
            image: None,
        })
        .collect())
}

/// The entries of the compressed bundle at `data[at..at + len]`, decoded
/// strictly (verified) or as `release` decodes it.
fn ccob_entries(
    src: &dyn Source,
    at: u64,
    len: u64,
    bundle: usize,
    release: Option<Release>,
) -> Result<Vec<ListedEntry>, Vec<Error>> {
    if release.is_none() {
        // Large bundles: verify while streaming, keep only the header part.
        let h = ccob::header_in(src, at, len, at).map_err(|e| vec![e])?;
        if h.uncompressed_size > LARGE_CCOB {
            for keep in LARGE_CCOB_PREFIX {
                let (_, prefix) =
                    ccob::verify_prefix_in(src, at, len, at, keep).map_err(|e| vec![e])?;
                if !binary::is_binary_bundle(&prefix) {
                    break;
                }
                let listed = large_binary_entries(&prefix, h.uncompressed_size, at, bundle);
                let cut = binary::scan_prefix(&prefix, h.uncompressed_size, 0)
                    .is_none_or(|s| matches!(s.stop, Some(binary::Stop::Truncated { .. })));
                if listed.is_ok() || !cut || keep == LARGE_CCOB_PREFIX[1] {
                    return listed;
                }
            }
        }
    }
    let window = src.window(at, len);
    let blob: &[u8] = window.as_deref().ok_or_else(|| {
        vec![Error::at(
            rules::CCOB_4,
            at,
            "compressed bundle out of range",
        )]
    })?;
    let inner = match release {
        None => ccob::decompress_strict(blob, at).map_err(|e| vec![e])?.data,
        Some(r) => match ccob::llvm_decompress(blob, r) {
            ccob::LlvmDecompress::Data(d) => d,
            ccob::LlvmDecompress::Plain => {
                return Err(vec![Error::at(
                    rules::CCOB_1,
                    at,
                    format!("LLVM {r} does not read compressed bundles"),
                )])
            }
            ccob::LlvmDecompress::Fails(m, e) => {
                return Err(vec![e.rebase(at).context(format!("LLVM {r}: {m}"))])
            }
        },
    };
    if detect(&inner).is_none() {
        let head: String = inner.iter().take(8).map(|b| format!("{b:02x}")).collect();
        return Err(vec![Error::at(
            rules::CCOB_9,
            at,
            format!(
                "the compressed bundle at 0x{at:x} holds {} bytes that are not a bundle (first bytes: {head}{})",
                inner.len(),
                if inner.starts_with(b"\x7fELF") { ", an ELF file" } else { "" }
            ),
        )]);
    }
    let inner_list = list(&inner, release).map_err(|es| {
        es.into_iter()
            .map(|e| {
                e.context(format!(
                    "inside the compressed bundle at 0x{at:x} (offsets are within the decompressed bundle)"
                ))
            })
            .collect::<Vec<_>>()
    })?;
    Ok(inner_list
        .entries
        .into_iter()
        .map(|mut e| {
            e.bundle = bundle;
            e.ccob_offset = Some(at);
            e
        })
        .collect())
}

/// The payload of a listed entry: a slice of `data`, or for an entry
/// inside a compressed bundle, the bytes of the (strictly verified)
/// decompressed bundle.
pub fn payload<'a>(data: &'a [u8], e: &ListedEntry) -> Result<std::borrow::Cow<'a, [u8]>, Error> {
    let range = |d: &[u8]| -> Option<Vec<u8>> {
        let s = usize::try_from(e.offset).ok()?;
        let n = usize::try_from(e.size).ok()?;
        d.get(s..s.checked_add(n)?).map(<[u8]>::to_vec)
    };
    match e.ccob_offset {
        None => {
            let s = usize::try_from(e.offset).map_err(|_| Error::other("offset too large"))?;
            let n = usize::try_from(e.size).map_err(|_| Error::other("size too large"))?;
            data.get(s..s + n)
                .map(std::borrow::Cow::Borrowed)
                .ok_or_else(|| Error::other("entry out of range"))
        }
        Some(at) => {
            let blob = &data[at as usize..];
            let h = ccob::parse_header(blob, at)?;
            let len = ccob::blob_len(&h, blob, at)?;
            let d = ccob::decompress_strict(&blob[..len as usize], at)?;
            range(&d.data)
                .map(std::borrow::Cow::Owned)
                .ok_or_else(|| Error::other("entry out of range"))
        }
    }
}

/// The error for an input no reader recognises.
pub fn unknown_container(data: &[u8]) -> Error {
    if let Some(e) = crate::offload_binary::magic_near_miss(data) {
        return e;
    }
    let head: String = data.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Error::at(
        rules::BIN_1,
        0,
        format!("no offload container recognised (first bytes: {head})"),
    )
}
