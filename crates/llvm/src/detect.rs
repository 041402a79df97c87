//! Container detection and listing for the native CLI.
//!
//! `offload-kit list` and `extract` recognise the container by its magic
//! and list what is inside with absolute offsets.

use crate::budget::Budget;
use crate::bundle::binary::{self, Extent, LlvmView};
use crate::bundle::{ccob, fatbin, object, text};
use crate::error::{Error, Errors};
use crate::host::ar;
use crate::offload_binary;
use crate::profile::Release;
use crate::rules;
use crate::source::{Prefix, Source, Sub, Window};
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
    /// A COFF object (`.hip_fatbin`) or PE image (`.hip_fat`): Windows.
    Coff,
    /// A text bundle (`-type=i/ii/cui/hipi/d/ll/s`).
    TextBundle,
    /// Offload binaries (magic `10 FF 10 AD`, clang-offload-packager).
    OffloadBinary,
    /// A GNU/BSD `ar` archive (members holding bundles or offload binaries).
    Archive,
    /// An object file in a format other than ELF and COFF/PE (Mach-O, …): not supported.
    OtherObject,
}

impl std::fmt::Display for Container {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for EntryContainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Container {
    /// Stable name used in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Container::BinaryBundle => "binary-bundle",
            Container::CompressedBundle => "compressed-bundle",
            Container::Elf => "elf",
            Container::Coff => "coff",
            Container::TextBundle => "text-bundle",
            Container::OffloadBinary => "offload-binary",
            Container::Archive => "archive",
            Container::OtherObject => "object",
        }
    }
}

/// The container that holds one listed entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryContainer {
    /// A binary bundle (standalone, in `.hip_fatbin`, or decompressed).
    BinaryBundle,
    /// An `__CLANG_OFFLOAD_BUNDLE__<id>` section of an ELF object.
    ObjectBundle,
    /// A text bundle.
    TextBundle,
    /// An offload binary image.
    OffloadBinary,
}

impl EntryContainer {
    /// Stable name used in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            EntryContainer::BinaryBundle => "binary-bundle",
            EntryContainer::ObjectBundle => "object-bundle",
            EntryContainer::TextBundle => "text-bundle",
            EntryContainer::OffloadBinary => "offload-binary",
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
    use crate::host::elf::ObjectFormat;
    match crate::host::elf::detect(data) {
        // Big-object COFF and import libraries (`00 00 FF FF`) are not read.
        ObjectFormat::Pe => return Some(Container::Coff),
        ObjectFormat::Coff if !data.starts_with(&[0, 0, 0xff, 0xff]) => {
            return Some(Container::Coff)
        }
        f if f.is_object_file() => return Some(Container::OtherObject),
        _ => {}
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
    pub container: EntryContainer,
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
    /// For an entry found in a member of an archive: the member's name
    /// (lossy UTF-8, as stored; an untrusted name, never a path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// For an entry found in a member of an archive: the member's position
    /// among the archive's members (symbol and name tables not counted),
    /// from 0; names need not be unique.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member_index: Option<usize>,
}

/// A listing of an input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listing {
    /// The outer container.
    pub container: Container,
    /// How the input was read: `strict` or `llvm-N`.
    pub mode: String,
    /// Entries in the order the mode presents them.
    pub entries: Vec<ListedEntry>,
}

/// How [`list`] reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// `None`: the strict reader, every violation is returned. A release:
    /// entries as that release sees them (its `-list` order), and only
    /// what it cannot read is an error.
    pub release: Option<Release>,
    /// List a compressed bundle over 64 MiB from its header without
    /// verifying its whole stream first: for `extract`, which verifies the
    /// stream (sizes, hash) as it streams the entry out, so the stream is
    /// decoded once rather than twice. The errors are the same, reported
    /// by the extraction.
    pub defer_ccob_verification: bool,
    /// How much decoded data listing may hold (CLI-6): entries, and the
    /// bundles a release model decompresses whole.
    pub budget: Budget,
}

impl ListOptions {
    /// Read as `release` (`None`: strictly), holding at most `budget`.
    pub fn new(release: Option<Release>, budget: Budget) -> ListOptions {
        ListOptions {
            release,
            budget,
            ..ListOptions::default()
        }
    }
}

/// As `release` reads, within the default budget.
impl From<Option<Release>> for ListOptions {
    fn from(release: Option<Release>) -> Self {
        ListOptions {
            release,
            ..ListOptions::default()
        }
    }
}

/// List the input `src` (a byte slice, or a mapped file read window by
/// window: the bundles of an ELF file's `.hip_fatbin`, and compressed
/// bundles in it, are read through windows of their own, so a mapped
/// multi-GB file is listed with the pages of one bundle resident at a time).
///
/// ```
/// use offload_kit_llvm::bundle::binary::write_to_vec;
/// use offload_kit_llvm::detect::{self, Container};
/// let fat = write_to_vec(&[(b"host-x86_64-unknown-linux-gnu-", b"H"), (b"hip-amdgcn-amd-amdhsa--gfx906", b"D")], 1).unwrap();
/// let l = detect::list(&fat, None).unwrap();
/// assert_eq!(l.container, Container::BinaryBundle);
/// assert_eq!(l.entries[1].id, "hip-amdgcn-amd-amdhsa--gfx906");
/// ```
pub fn list(src: &dyn Source, opts: impl Into<ListOptions>) -> Result<Listing, Errors> {
    let opts = opts.into();
    let release = opts.release;
    let data = src.bytes();
    let Some(c) = detect(data) else {
        return Err(unknown_container(data).into());
    };
    let mode = release.map_or("strict".into(), |r| format!("llvm-{r}"));
    let entries = match c {
        Container::Archive => archive_entries(src, release, opts)?,
        _ => list_in(src, 0, release, opts)?,
    };
    Ok(Listing {
        container: c,
        mode,
        entries,
    })
}

/// The entries of the container `src` holds, which starts at absolute
/// offset `base` of the input (an archive member, or the input itself with
/// `base` 0): offsets and errors are absolute. An archive is read for its
/// offload-binary images only (archives in archives are not walked for
/// bundles).
fn list_in(
    src: &dyn Source,
    base: u64,
    release: Option<Release>,
    opts: ListOptions,
) -> Result<Vec<ListedEntry>, Errors> {
    let data = src.bytes();
    let Some(c) = detect(data) else {
        return Err(vec![unknown_container(data).rebase(base)].into());
    };
    let rebase = |es: Errors| es.rebase(base);
    let entries = match c {
        Container::BinaryBundle => {
            let entries: Vec<binary::Entry> = match release {
                None => {
                    binary::parse_strict_within(data, base, Extent::Standalone, opts.budget)?
                        .entries
                }
                Some(r) => match binary::llvm_read(data, base, r) {
                    LlvmView::NoBundles => vec![],
                    LlvmView::Entries(e) => e,
                    LlvmView::Crash(e) => return Err(vec![e].into()),
                },
            };
            let ids = entries.iter().map(|e| (e.id_str(), e.offset, e.size));
            top_level(ids, base, EntryContainer::BinaryBundle)
        }
        Container::TextBundle => {
            let c = text_comment(data).expect("detected");
            // Scanned window by window: a multi-GB text bundle keeps about
            // one window resident.
            let entries = match release {
                None => text::parse_strict(src, 0, c).map_err(rebase)?.entries,
                Some(r) => text::llvm_entries(src, 0, c, r).map_err(|e| vec![e.rebase(base)])?,
            };
            let ids = entries.iter().map(|e| (e.id_str(), e.offset, e.size));
            top_level(ids, base, EntryContainer::TextBundle)
        }
        Container::OffloadBinary | Container::Archive => images(data, base, release, opts.budget)?,
        Container::OtherObject => {
            return Err(vec![Error::at(
                rules::OBJ_1,
                base,
                format!(
                    "unsupported object format {}: offload-kit reads ELF objects",
                    crate::host::elf::detect(data).name()
                ),
            )]
            .into())
        }
        Container::CompressedBundle => {
            let blobs = ccob::blobs(data, 0).map_err(|e| vec![e.rebase(base)])?;
            let mut entries = Vec::new();
            for (k, b) in blobs.iter().enumerate() {
                entries.extend(ccob_entries(src, b.offset, b.len, base, k, release, opts)?);
                opts.budget
                    .hold_entries(entries.len(), base + b.offset)
                    .map_err(|e| vec![e])?;
            }
            entries
        }
        Container::Coff => {
            let l = fatbin::inspect_coff(src, opts.budget).map_err(|e| vec![e.rebase(base)])?;
            if release.is_none() && !l.problems.is_empty() {
                return Err(rebase(l.problems.into()));
            }
            fat_entries(src, l, base, release, opts)?
        }
        Container::Elf => {
            let l = match release {
                None => fatbin::list_strict_within(src, opts.budget).map_err(rebase)?,
                Some(_) => {
                    fatbin::inspect_within(src, opts.budget).map_err(|e| vec![e.rebase(base)])?
                }
            };
            let mut entries = fat_entries(src, l, base, release, opts)?;
            entries.extend(images(data, base, release, opts.budget)?);
            entries
        }
    };
    Ok(entries)
}

/// The entries of a host file's fat binary sections and bundle sections
/// (`l`), compressed bundles opened.
fn fat_entries(
    src: &dyn Source,
    l: fatbin::Listing,
    base: u64,
    release: Option<Release>,
    opts: ListOptions,
) -> Result<Vec<ListedEntry>, Errors> {
    let mut entries = Vec::new();
    for e in l.entries {
        match e.kind {
            fatbin::Kind::Compressed { .. } => {
                let mut inner = ccob_entries(src, e.offset, e.size, base, e.bundle, release, opts)?;
                for i in inner.iter_mut() {
                    i.section = Some(e.section.clone());
                }
                entries.extend(inner);
                opts.budget
                    .hold_entries(entries.len(), base + e.offset)
                    .map_err(|e| vec![e])?;
            }
            kind => entries.push(ListedEntry {
                id: e.id,
                offset: base + e.offset,
                size: e.size,
                bundle: e.bundle,
                container: if kind == fatbin::Kind::Section {
                    EntryContainer::ObjectBundle
                } else {
                    EntryContainer::BinaryBundle
                },
                ccob_offset: None,
                section: Some(e.section),
                image: None,
                member: None,
                member_index: None,
            }),
        }
    }
    Ok(entries)
}

/// Most members an archive listing walks (bounds the work on a crafted
/// archive of empty members; each member costs at least 60 bytes).
const MAX_MEMBERS: usize = 1 << 20;

/// An archive member as a [`Source`]: its bytes are one window of the
/// input; windows inside it are windows of the input, so a member of a
/// mapped multi-GB archive is read as the input itself would be.
struct MemberSource<'s> {
    parent: &'s dyn Source,
    base: u64,
    win: Window<'s>,
}

impl Source for MemberSource<'_> {
    fn bytes(&self) -> &[u8] {
        &self.win
    }

    fn window(&self, offset: u64, len: u64) -> Option<Window<'_>> {
        let end = offset.checked_add(len)?;
        if end > self.win.len() as u64 {
            return None;
        }
        self.parent.window(self.base + offset, len)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> bool {
        let in_range = offset
            .checked_add(buf.len() as u64)
            .is_some_and(|e| e <= self.win.len() as u64);
        in_range && self.parent.read_at(self.base + offset, buf)
    }
}

/// The entries of every member of the archive `src` (spec/archive.md,
/// "Native commands"): each member's bundle entries, then its
/// offload-binary images, in archive order, with absolute offsets and the
/// member's name. Strictly (`release` `None`): an object-file bundle, a
/// binary bundle, a compressed bundle or an ELF file (bundle sections,
/// `.hip_fatbin`, `.llvm.offloading`) is read by its strict reader; other
/// members (text, bitcode, plain data, archives for bundles) hold nothing
/// and are skipped. With a release: each member as that release's
/// `-unbundle -type=a` reads it (AR-2).
fn archive_entries(
    src: &dyn Source,
    release: Option<Release>,
    opts: ListOptions,
) -> Result<Vec<ListedEntry>, Errors> {
    let data = src.bytes();
    // AR-1 and OB-21 state the same `ar` requirements; the native commands
    // cite OB-21, as they did when they read only offload binaries.
    let members = ar::members_raw(data, 0, rules::OB_21).map_err(|e| vec![e])?;
    if members.len() > MAX_MEMBERS {
        return Err(vec![Error::at(
            rules::OB_21,
            members[MAX_MEMBERS].header_offset,
            format!("more than {MAX_MEMBERS} archive members"),
        )]
        .into());
    }
    let mut out = Vec::new();
    let mut errs = Vec::new();
    let mut images_seen = 0usize;
    for (index, m) in members.iter().enumerate() {
        let name = m.name_str();
        let ctx = format!("in member {name} of the archive");
        let len = m.data.len() as u64;
        let Some(win) = src.window(m.data_offset, len) else {
            errs.push(Error::at(
                rules::OB_21,
                m.header_offset + 48,
                format!(
                    "archive member of {len} bytes at 0x{:x} cannot be read",
                    m.data_offset
                ),
            ));
            continue;
        };
        let msrc = MemberSource {
            parent: src,
            base: m.data_offset,
            win,
        };
        let listed = match release {
            None => member_strict(&msrc, m.data_offset, opts),
            Some(r) => member_llvm(&msrc, m.data_offset, r, opts.budget),
        };
        if let Ok(entries) = &listed {
            opts.budget
                .hold_entries(out.len() + entries.len(), m.data_offset)
                .map_err(|e| vec![e])?;
        }
        match listed {
            Ok(entries) => {
                for mut e in entries {
                    if let Some(img) = e.image.as_mut() {
                        img.index = images_seen;
                        img.member.get_or_insert_with(|| name.clone());
                        e.bundle = images_seen;
                        images_seen += 1;
                    }
                    e.member = Some(name.clone());
                    e.member_index = Some(index);
                    out.push(e);
                }
            }
            Err(es) => {
                errs.extend(es.into_iter().map(|e| e.context(ctx.clone())));
                if release.is_some() {
                    break;
                }
            }
        }
    }
    if errs.is_empty() {
        Ok(out)
    } else {
        Err(errs.into())
    }
}

/// One member read strictly (see [`archive_entries`]).
fn member_strict(
    src: &MemberSource<'_>,
    base: u64,
    opts: ListOptions,
) -> Result<Vec<ListedEntry>, Errors> {
    match detect(src.bytes()) {
        Some(
            Container::BinaryBundle
            | Container::CompressedBundle
            | Container::Elf
            | Container::Coff
            | Container::OffloadBinary
            | Container::OtherObject,
        ) => list_in(src, base, None, opts),
        // Offload binaries only: bundles in nested archives are not read.
        Some(Container::Archive) => images(src.bytes(), base, None, opts.budget),
        Some(Container::TextBundle) | None => Ok(Vec::new()),
    }
}

/// One member as `release`'s `-unbundle -type=a` reads it (AR-2): a
/// compressed member decompressed first (19, 22; 14 and 16 skip it), an
/// object file as an object-file bundle (its bundle sections, in section
/// order), anything else as a binary bundle (the release's order); then
/// the offload-binary images of an ELF or offload-binary member.
fn member_llvm(
    src: &MemberSource<'_>,
    base: u64,
    r: Release,
    budget: Budget,
) -> Result<Vec<ListedEntry>, Errors> {
    let raw = src.bytes();
    let decompressed = match ccob::llvm_decompress_within(raw, r, budget) {
        ccob::LlvmDecompress::Plain => None,
        ccob::LlvmDecompress::Data(d) => Some(d),
        ccob::LlvmDecompress::Fails(m, e) => {
            return Err(vec![e
                .rebase(base)
                .context(format!("LLVM {r}: Failed to decompress code object: {m}"))]
            .into())
        }
    };
    let data: &[u8] = decompressed.as_deref().unwrap_or(raw);
    // Offsets inside a decompressed member stay relative to the
    // decompressed bytes (as `ccob_offset` says); others are absolute.
    let (shift, ccob_offset) = match decompressed {
        Some(_) => (0, Some(base)),
        None => (base, None),
    };
    let inner = |e: Error| match ccob_offset {
        Some(at) => e.context(format!(
            "inside the compressed bundle at 0x{at:x} (offsets are within the decompressed bundle)"
        )),
        None => e.rebase(base),
    };
    let mut out = Vec::new();
    let object = object::is_object_file(data);
    let entries: Vec<(binary::Entry, Option<String>)> = if object {
        object::llvm_list(data, r)
            .map_err(|e| vec![inner(e)])?
            .into_iter()
            .map(|e| {
                let section = format!(
                    "{}{}",
                    object::SECTION_PREFIX,
                    String::from_utf8_lossy(e.id)
                );
                (e.to_binary_entry(), Some(section))
            })
            .collect()
    } else {
        match binary::llvm_read(data, 0, r) {
            LlvmView::NoBundles => vec![],
            LlvmView::Entries(e) => e.into_iter().map(|e| (e, None)).collect(),
            LlvmView::Crash(e) => return Err(vec![inner(e)].into()),
        }
    };
    for (e, section) in &entries {
        let id = e.id_str();
        if r.quirks().refuses_malformed_ids && !Release::llvm22_well_formed(&id) {
            return Err(vec![inner(Error::at(
                rules::ID_1,
                e.id_pos,
                format!(
                    "LLVM {r}: Invalid bundle id read from code object: entry ID '{}' does not have 5 or 6 '-'-separated fields",
                    id.escape_debug()
                ),
            ))].into());
        }
        out.push(ListedEntry {
            id: id.into_owned(),
            offset: shift + e.offset,
            size: e.size,
            bundle: 0,
            container: if object {
                EntryContainer::ObjectBundle
            } else {
                EntryContainer::BinaryBundle
            },
            ccob_offset,
            section: section.clone(),
            image: None,
            member: None,
            member_index: None,
        });
    }
    if decompressed.is_none()
        && matches!(
            detect(raw),
            Some(Container::Elf | Container::OffloadBinary | Container::Archive)
        )
    {
        out.extend(images(raw, base, Some(r), budget)?);
    }
    Ok(out)
}

/// The `CCOB` blob at absolute offset `at` of `src` (a listed entry's
/// `ccob_offset`) as a source of its own: it ends with its archive member
/// at the latest, else with the input. CCOB-4 when `at` lies outside.
pub fn ccob_blob(src: &dyn Source, at: u64) -> Result<Sub<'_>, Error> {
    let data = src.bytes();
    let avail = match archive_member_at(data, at) {
        Some((o, n)) => (o + n).saturating_sub(at),
        None => (data.len() as u64).saturating_sub(at),
    };
    Sub::new(src, at, avail)
        .ok_or_else(|| Error::at(rules::CCOB_4, at, "compressed bundle out of range"))
}

/// The absolute data offset and size of the archive member of `data`
/// that holds absolute offset `at`, when `data` is an archive.
pub fn archive_member_at(data: &[u8], at: u64) -> Option<(u64, u64)> {
    if detect(data) != Some(Container::Archive) {
        return None;
    }
    let members = ar::members_raw(data, 0, rules::AR_1).ok()?;
    members
        .iter()
        .map(|m| (m.data_offset, m.data.len() as u64))
        .find(|&(o, n)| at >= o && at - o < n.max(1))
}

/// The offload-binary images of `data` (raw binaries, `.llvm.offloading`
/// sections of an ELF file, archive members), which starts at absolute
/// offset `base`.
fn images(
    data: &[u8],
    base: u64,
    release: Option<Release>,
    budget: Budget,
) -> Result<Vec<ListedEntry>, Errors> {
    let listed = offload_binary::list_with(data, offload_binary::ReadOptions { release, budget })
        .map_err(|es| es.into_iter().map(|e| e.rebase(base)).collect::<Vec<_>>())?;
    Ok(listed
        .into_iter()
        .map(|mut i| {
            i.offset += base;
            i.binary_offset += base;
            ListedEntry {
                id: format!("{}-{}-{}", i.producer, i.triple, i.arch),
                offset: i.offset,
                size: i.size,
                bundle: i.index,
                container: EntryContainer::OffloadBinary,
                ccob_offset: None,
                section: i.section.clone(),
                image: Some(i),
                member: None,
                member_index: None,
            }
        })
        .collect())
}

/// The bytes of offload-binary image `img` (the `index`-th image of the
/// input, as [`list`] numbers them); inflated for compressed v3 binaries.
/// In an archive, the image is read from the member that holds it.
pub fn image_bytes(
    data: &[u8],
    img: &offload_binary::ListedImage,
    budget: Budget,
) -> Result<Vec<u8>, Errors> {
    let opts = offload_binary::ReadOptions {
        release: None,
        budget,
    };
    if let Some((o, n)) = archive_member_at(data, img.binary_offset) {
        let member = &data[o as usize..(o + n) as usize];
        let local = offload_binary::list_with(member, opts)?;
        let Some(l) = local.iter().find(|l| {
            l.binary_offset + o == img.binary_offset
                && l.offset + o == img.offset
                && l.size == img.size
                && l.strings == img.strings
        }) else {
            return Err(vec![Error::other(format!("no image {}", img.index))].into());
        };
        return image_bytes(member, l, budget);
    }
    let all = offload_binary::container::read_all(data, opts)?;
    all.iter()
        .flat_map(|(_, bins)| bins.iter().flat_map(|b| b.entries.iter()))
        .nth(img.index)
        .map(|e| e.image.to_vec())
        .ok_or_else(|| Error::other(format!("no image {}", img.index)).into())
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
    prefix: &Prefix,
    at: u64,
    bundle: usize,
) -> Result<Vec<ListedEntry>, Errors> {
    let ctx = |e: Error| {
        e.context(format!(
            "inside the compressed bundle at 0x{at:x} (offsets are within the decompressed bundle)"
        ))
    };
    let scan = binary::scan(prefix, 0)
        .ok_or_else(|| vec![ctx(Error::at(rules::BIN_2, 24, "bundle header cut short"))])?;
    if scan.stop.is_some() || scan.entries.len() as u64 != scan.num_entries {
        return Err(vec![ctx(Error::at(
            rules::BIN_2,
            scan.header_end,
            format!(
                "the bundle header is malformed or longer than the {} bytes read ahead",
                prefix.bytes().len()
            ),
        ))]
        .into());
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
        return Err(errs.into());
    }
    Ok(scan
        .entries
        .iter()
        .map(|e| listed_in_ccob(e, bundle, at))
        .collect())
}

/// The entries of the compressed bundle at `src[rel..rel + len]`, decoded
/// strictly (verified) or as `release` decodes it; `src` starts at
/// absolute offset `base`.
fn ccob_entries(
    src: &dyn Source,
    rel: u64,
    len: u64,
    base: u64,
    bundle: usize,
    release: Option<Release>,
    opts: ListOptions,
) -> Result<Vec<ListedEntry>, Errors> {
    let at = base + rel;
    let blob = Sub::new(src, rel, len);
    if let (None, Some(blob)) = (release, &blob) {
        // Large bundles: verify while streaming, keep only the header part.
        let h = ccob::read_header(blob, at).map_err(|e| vec![e])?;
        if h.uncompressed_size > LARGE_CCOB {
            for keep in LARGE_CCOB_PREFIX {
                let (_, prefix) = if opts.defer_ccob_verification {
                    ccob::decompress_prefix(blob, at, keep)
                } else {
                    ccob::verify_prefix(blob, at, keep)
                }
                .map_err(|e| vec![e])?;
                if !binary::is_binary_bundle(prefix.bytes()) {
                    break;
                }
                let listed = large_binary_entries(&prefix, at, bundle);
                let cut = binary::scan(&prefix, 0)
                    .is_none_or(|s| matches!(s.stop, Some(binary::Stop::Truncated { .. })));
                if listed.is_ok() || !cut || keep == LARGE_CCOB_PREFIX[1] {
                    return listed;
                }
            }
        }
    }
    if let (Some(r), Some(sub)) = (release, &blob) {
        // As the release reads it, decoding only the bundle header where
        // the outcome of its full decompression is known without it (see
        // `ccob::llvm_list_prefix`): a large bundle is not inflated.
        if let Some(prefix) = ccob::llvm_list_prefix(sub, r) {
            let inside = |e: Error| {
                e.context(format!(
                    "inside the compressed bundle at 0x{at:x} (offsets are within the decompressed bundle)"
                ))
            };
            let entries = match binary::llvm_read(&prefix, 0, r) {
                LlvmView::NoBundles => vec![],
                LlvmView::Entries(e) => e,
                LlvmView::Crash(e) => return Err(vec![inside(e)].into()),
            };
            return Ok(entries
                .iter()
                .map(|e| listed_in_ccob(e, bundle, at))
                .collect());
        }
    }
    let window = src.window(rel, len);
    let blob: &[u8] = window.as_deref().ok_or_else(|| {
        vec![Error::at(
            rules::CCOB_4,
            at,
            "compressed bundle out of range",
        )]
    })?;
    let inner = match release {
        None => ccob::decompress_strict(blob, at).map_err(|e| vec![e])?.data,
        Some(r) => match ccob::llvm_decompress_within(blob, r, opts.budget) {
            ccob::LlvmDecompress::Data(d) => d,
            ccob::LlvmDecompress::Plain => {
                return Err(vec![Error::at(
                    rules::CCOB_1,
                    at,
                    format!("LLVM {r} does not read compressed bundles"),
                )]
                .into())
            }
            ccob::LlvmDecompress::Fails(m, e) => {
                return Err(vec![e.rebase(at).context(format!("LLVM {r}: {m}"))].into())
            }
        },
    };
    // Strictly, only a bundle (CCOB-9); a release lists what it finds.
    let holds = match release {
        None => is_bundle(&inner),
        Some(_) => detect(&inner).is_some(),
    };
    if !holds {
        let head: String = inner.iter().take(8).map(|b| format!("{b:02x}")).collect();
        return Err(vec![Error::at(
            rules::CCOB_9,
            at,
            format!(
                "the compressed bundle at 0x{at:x} holds {} bytes that are not a bundle (first bytes: {head}{})",
                inner.len(),
                if inner.starts_with(b"\x7fELF") { ", an ELF file" } else { "" }
            ),
        )].into());
    }
    let inner_opts = ListOptions {
        release,
        budget: opts.budget,
        ..ListOptions::default()
    };
    let inner_list = list(&inner, inner_opts).map_err(|es| {
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
/// decompressed bundle, which must fit `budget`.
pub fn payload<'a>(
    data: &'a [u8],
    e: &ListedEntry,
    budget: Budget,
) -> Result<std::borrow::Cow<'a, [u8]>, Error> {
    match e.ccob_offset {
        None => {
            let s = usize::try_from(e.offset).map_err(|_| Error::other("offset too large"))?;
            let n = usize::try_from(e.size).map_err(|_| Error::other("size too large"))?;
            data.get(s..s + n)
                .map(std::borrow::Cow::Borrowed)
                .ok_or_else(|| Error::other("entry out of range"))
        }
        // Streamed out of the decoder (the whole stream verified), holding
        // only the entry: within the memory budget (CLI-6).
        Some(at) => {
            if budget.exceeded(e.size) {
                return Err(Error::at(
                    rules::CLI_6,
                    at,
                    format!(
                        "entry '{}' of {} bytes inside the compressed bundle at 0x{at:x} is more than the memory budget lets be held",
                        e.id, e.size
                    ),
                ));
            }
            let blob = ccob_blob(&data, at)?;
            let mut out = Vec::new();
            ccob::extract_range(&blob, at, e.offset, e.size, &mut out)?;
            Ok(std::borrow::Cow::Owned(out))
        }
    }
}

/// Whether `data` is a bundle, binary or text: what a compressed bundle
/// may hold (CCOB-9). An ELF or COFF host, an offload binary or an archive
/// is a container but not a bundle.
pub fn is_bundle(data: &[u8]) -> bool {
    matches!(
        detect(data),
        Some(Container::BinaryBundle | Container::TextBundle)
    )
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

/// The entry `e` as [`list`] lists it inside a compressed bundle: `ccob`
/// is the absolute offset of the `CCOB` blob, `bundle` which bundle of the
/// input it is; `offset` stays relative to the decompressed bundle.
fn listed_in_ccob(e: &binary::Entry<'_>, bundle: usize, ccob: u64) -> ListedEntry {
    ListedEntry {
        bundle,
        ccob_offset: Some(ccob),
        ..ListedEntry::top_level(
            e.id_str().into_owned(),
            e.offset,
            e.size,
            EntryContainer::BinaryBundle,
        )
    }
}

impl ListedEntry {
    /// An entry of the input's one bundle, at the top level: in no
    /// compressed bundle, section, image or archive member.
    fn top_level(id: String, offset: u64, size: u64, container: EntryContainer) -> ListedEntry {
        ListedEntry {
            id,
            offset,
            size,
            bundle: 0,
            container,
            ccob_offset: None,
            section: None,
            image: None,
            member: None,
            member_index: None,
        }
    }
}

/// The entries `(id, offset relative to base, size)` of a bundle at `base`,
/// listed at the top level.
fn top_level<'i>(
    entries: impl Iterator<Item = (std::borrow::Cow<'i, str>, u64, u64)>,
    base: u64,
    container: EntryContainer,
) -> Vec<ListedEntry> {
    entries
        .map(|(id, offset, size)| {
            ListedEntry::top_level(id.into_owned(), base + offset, size, container)
        })
        .collect()
}
