//! What an input holds down to each device code object, and whether each
//! entry's ID tells the truth about its code object (CO-1): the library
//! side of `offload-kit inspect`, and the crate under `check` (which entry a
//! runtime would load on a GPU, [`check`]) and the image rules CO-2 … CO-5
//! ([`image`]). It stands on the spec core and the release models; the
//! `offload-kit` crate re-exports it as `offload_kit::inspect`.
//!
//! [`inspect`] lists the input strictly ([`detect::list`]), reads every
//! entry's bytes (a window of the input, a decompressed bundle, an offload
//! binary's image) and identifies them ([`code_object::identify`]). An
//! AMDGPU code object whose `e_flags` name another processor, or another
//! xnack/sramecc setting, than its entry ID is a finding: the HIP runtime
//! picks the entry by its ID and the loader then refuses the object
//! (`hipErrorNoBinaryForGpu`, "invalid device function").
//!
//! # Example
//!
//! A bundle whose `gfx90a` entry holds a `gfx906` code object.
//!
//! ```
//! use offload_kit_format::binary;
//! use offload_kit_inspect::{self as inspect, code_object::CodeObject};
//!
//! // The 64-byte header of an AMDGPU code object V5 for gfx906
//! // (e_flags 0x52f: mach 0x2f, xnack and sramecc "any").
//! let mut elf = vec![0u8; 64];
//! elf[..9].copy_from_slice(b"\x7fELF\x02\x01\x01\x40\x03");
//! elf[16] = 3; // ET_DYN
//! elf[18] = 224; // EM_AMDGPU
//! elf[20] = 1; // EV_CURRENT
//! elf[48..52].copy_from_slice(&0x52fu32.to_le_bytes());
//! elf[52] = 64; // e_ehsize
//! let bundle = binary::write_to_vec(
//!     &[
//!         (b"host-x86_64-unknown-linux-gnu-", b""),
//!         (b"hipv4-amdgcn-amd-amdhsa--gfx90a", &elf),
//!     ],
//!     8,
//! )
//! .unwrap();
//! let report = inspect::inspect(&bundle).unwrap();
//! assert!(matches!(&report.entries[1].object, CodeObject::Amdgpu(o) if o.target_id() == "gfx906"));
//! assert_eq!(report.findings[0].rule_id(), Some("CO-1"));
//! assert_eq!(report.summary.targets, ["gfx906"]);
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod check;
pub mod code_object;
pub mod hipk;
pub mod image;
pub mod kpack_archive;
pub mod kpack_split;
pub mod list_doc;
pub mod split_host;

// The layers below under the names this crate uses for them.
use offload_kit_format::{error, host, id, kpack, raw as format, rules, source};
use offload_kit_llvm::budget::{self, Budget};
use offload_kit_llvm::{bundle, detect, profile};

use crate::bundle::ccob;
use crate::detect::{Container, ListedEntry};
use crate::error::{Error, Errors};
use crate::id::{target_id::Feature, BundleEntryId};
use crate::source::Source;
use code_object::{CodeObject, FeatureSetting};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// What [`inspect`] found in one input.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The outer container.
    pub container: Container,
    /// The input's counts and targets.
    pub summary: Summary,
    /// Every bundle (or offload binary), in input order.
    pub bundles: Vec<BundleFacts>,
    /// Every entry with its code object, in input order.
    pub entries: Vec<InspectedEntry>,
    /// Entries whose ID disagrees with their code object (CO-1), and
    /// images a loader would map broken (CO-2 … CO-5).
    pub findings: Vec<Error>,
    /// Spec violations read past as LLVM 22 and the HIP runtime read past
    /// them ([`TOLERATED`]; none under [`Options::strict`]): what the
    /// report shows is what those readers see.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Error>,
}

/// The rules whose violations [`inspect_with`] reads past unless strict:
/// what clang 14–16 wrote and every later LLVM and the HIP runtime still
/// read. ID-5: the processor where the environment goes
/// (`hip-amdgcn-amd-amdhsa-gfx906`, in text bundles, `-fgpu-rdc` objects and
/// device archives); BIN-10: bytes after a standalone bundle's last payload.
pub const TOLERATED: &[&str] = &["ID-5", "BIN-10"];

/// How [`inspect_with`] reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Refuse every spec violation, as [`inspect`] does; otherwise those
    /// in [`TOLERATED`] become [`Report::warnings`].
    pub strict: bool,
    /// How much decoded data reading may hold (CLI-6).
    pub budget: Budget,
}

/// Counts over one input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Bundles (and offload binaries).
    pub bundles: usize,
    /// Of them, compressed bundles (`CCOB`).
    pub compressed_bundles: usize,
    /// Entries (and images).
    pub entries: usize,
    /// Entries holding a device code object (AMDGPU ELF, cubin, PTX, SPIR-V).
    pub code_objects: usize,
    /// The targets the code objects are built for, as their own headers say
    /// (AMDGPU target IDs, `sm_XX`, PTX targets), sorted, each once.
    pub targets: Vec<String>,
}

/// One bundle of the input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BundleFacts {
    /// The bundle's number, as `list` shows it.
    pub index: usize,
    /// The ELF section holding it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// The archive member holding it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// Its position among the archive's members.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member_index: Option<usize>,
    /// For a compressed bundle: its header.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compressed: Option<Compressed>,
    /// How many entries it holds: the next that many of [`Report::entries`].
    pub entries: usize,
}

/// The header facts of a compressed bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Compressed {
    /// Absolute offset of the `CCOB` magic.
    pub offset: u64,
    /// Format version (1, 2 or 3).
    pub version: u16,
    /// `zlib`, `zstd`, or the stored value when unknown.
    pub method: String,
    /// Bytes of the blob (header and compressed data).
    pub compressed_size: u64,
    /// The uncompressed size the header records.
    pub uncompressed_size: u64,
}

/// One entry and what its bytes are.
#[derive(Debug, Clone, Serialize)]
pub struct InspectedEntry {
    /// The entry as `list` shows it.
    #[serde(flatten)]
    pub entry: ListedEntry,
    /// What the payload is.
    pub object: CodeObject,
    /// Whether the entry's ID disagrees with its code object (CO-1; the
    /// finding is in [`Report::findings`]).
    pub breaks_co_1: bool,
    /// The first of CO-2 … CO-5 the entry's image breaks (all of them are
    /// in [`Report::findings`]): a loader would map a broken image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broken_image: Option<Error>,
    /// Why the entry's bytes were not read (CLI-6: more than the memory
    /// budget lets a compressed bundle's entry be held); nothing is known
    /// of its code object. Also in [`Report::findings`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_read: Option<Error>,
}

/// List `src` strictly and identify every entry's code object; the
/// violations of the container itself are the error, as for `validate`.
pub fn inspect(src: &dyn Source) -> Result<Report, Errors> {
    inspect_with(
        src,
        Options {
            strict: true,
            ..Options::default()
        },
    )
}

/// [`inspect`], reading past the violations in [`TOLERATED`] unless
/// `opts.strict`: a file whose only violations are those is listed as
/// LLVM 22 lists it, and they are the report's warnings.
///
/// ```
/// use offload_kit_format::binary;
/// use offload_kit_inspect::{self as inspect, Options};
///
/// // An entry ID as clang 14 wrote it in `-fgpu-rdc` objects.
/// let fat = binary::write_to_vec(&[(b"hip-amdgcn-amd-amdhsa-gfx906", b"BC")], 1).unwrap();
/// assert!(inspect::inspect(&fat).is_err());
/// let report = inspect::inspect_with(&fat, Options::default()).unwrap();
/// assert_eq!(report.warnings[0].rule_id(), Some("ID-5"));
/// assert_eq!(report.entries.len(), 1);
/// ```
pub fn inspect_with(src: &dyn Source, opts: Options) -> Result<Report, Errors> {
    // Each compressed bundle is verified as its entries are read below
    // (`ccob_looks`): decoded once, not once to list and again to read.
    let strict = detect::ListOptions {
        release: None,
        defer_ccob_verification: true,
        budget: opts.budget,
    };
    let (listing, warnings) = match detect::list(src, strict) {
        Ok(l) => (l, Vec::new()),
        Err(errs)
            if !opts.strict
                && errs
                    .iter()
                    .all(|e| e.rule_id().is_some_and(|r| TOLERATED.contains(&r))) =>
        {
            let as_llvm = detect::ListOptions {
                release: Some(crate::profile::Release::DEFAULT),
                defer_ccob_verification: true,
                budget: opts.budget,
            };
            // What LLVM 22 cannot read stays an error.
            let mut l = detect::list(src, as_llvm)?;
            // Bundles in input order; in each, the entries in LLVM 22's
            // `-list` order.
            l.entries.sort_by_key(|e| (e.member_index, e.bundle));
            (l, Vec::from(errs))
        }
        Err(errs) => return Err(errs),
    };
    let data = src.bytes();
    let mut entries = Vec::with_capacity(listing.entries.len());
    let mut bundles: Vec<BundleFacts> = Vec::new();
    let mut findings = Vec::new();
    // What the bytes are, and what a loader mapping them meets.
    let look = |bytes: &[u8], base: u64| (code_object::identify(bytes), image::check(bytes, base));
    // The entries of compressed bundles, looked at in one streamed pass
    // per bundle, in memory bounded by the budget.
    let mut in_ccob = ccob_looks(src, &listing.entries, &look, opts.budget)?;
    for (n, e) in listing.entries.into_iter().enumerate() {
        let key = (e.member_index, e.bundle);
        if bundles.last().map(|b| (b.member_index, b.index)) != Some(key) {
            bundles.push(BundleFacts {
                index: e.bundle,
                section: e.section.clone(),
                member: e.member.clone(),
                member_index: e.member_index,
                compressed: match e.ccob_offset {
                    Some(at) => Some(compressed_facts(src, at)?),
                    None => None,
                },
                entries: 0,
            });
        }
        if let Some(b) = bundles.last_mut() {
            b.entries += 1;
        }
        let mut not_read = None;
        let (object, broken) = match (&e.image, e.ccob_offset) {
            (Some(img), _) => look(&detect::image_bytes(data, img, opts.budget)?, img.offset),
            (None, Some(_)) => match in_ccob.remove(&n) {
                Some(Ok(l)) => l,
                // Not read (over the budget): said, and nothing known of it.
                Some(Err(why)) => {
                    findings.push(why.clone());
                    not_read = Some(why);
                    (CodeObject::Unknown, Vec::new())
                }
                None => (CodeObject::Unknown, Vec::new()),
            },
            (None, None) => match src.window(e.offset, e.size) {
                Some(w) => look(&w, e.offset),
                None => (CodeObject::Unknown, Vec::new()),
            },
        };
        let finding = id_disagreement(&e, &object);
        let breaks_co_1 = finding.is_some();
        findings.extend(finding);
        let broken_image = broken.first().cloned();
        findings.extend(broken);
        entries.push(InspectedEntry {
            entry: e,
            object,
            breaks_co_1,
            broken_image,
            not_read,
        });
    }
    let summary = summarise(&bundles, &entries);
    Ok(Report {
        container: listing.container,
        summary,
        bundles,
        entries,
        findings,
        warnings,
    })
}

/// List `src` strictly, as [`detect::list`], and check every image a
/// loader would map (CO-2 … CO-5, [`image::check`]): the payloads of
/// uncompressed entries and offload-binary images that begin with the ELF
/// magic. Images inside compressed bundles are checked by [`inspect`],
/// which decompresses them; this stays a streaming read.
///
/// ```
/// use offload_kit_format::binary::write_to_vec;
/// use offload_kit_inspect as inspect;
///
/// let broken = b"\x7fELF\x02\x01\x01 cut short";
/// let fat = write_to_vec(&[(b"hipv4-amdgcn-amd-amdhsa--gfx906", broken)], 1).unwrap();
/// let errs = inspect::validate(&fat, Default::default()).unwrap_err();
/// assert_eq!(errs.iter().next().unwrap().rule_id(), Some("CO-2"));
/// ```
pub fn validate(src: &dyn Source, budget: Budget) -> Result<detect::Listing, Errors> {
    let listing = detect::list(
        src,
        detect::ListOptions {
            budget,
            ..Default::default()
        },
    )?;
    let data = src.bytes();
    let mut errors = Vec::new();
    for e in &listing.entries {
        let (offset, size) = match (&e.image, e.ccob_offset) {
            (Some(img), _) if !img.compressed => (img.offset, img.size),
            (None, None) => (e.offset, e.size),
            _ => continue,
        };
        // Only images are checked, and only their headers, tables and
        // string tables' ends are read (of a mapped input, a few pages).
        let payload = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(o, n)| data.get(o..o.checked_add(n)?));
        if let Some(p) = payload.filter(|p| p.starts_with(b"\x7fELF")) {
            errors.extend(image::check(p, offset));
        }
    }
    if errors.is_empty() {
        return Ok(listing);
    }
    errors.sort_by_key(Error::offset);
    Err(errors.into())
}

/// Check a ROCm kpack archive strictly (spec/kpack.md KPAK-1 … 5): its
/// header, TOC and blobs, every code object decoded within `budget`, and the images stored plain checked as [`validate`] checks a
/// bundle's (CO-2 …).
///
/// ```
/// use offload_kit_format::kpack;
/// use offload_kit_inspect as inspect;
///
/// let good = kpack::write_plain("g", "gfx906", &[("k.so#0", "gfx906", b"not an ELF image")]);
/// assert_eq!(inspect::validate_kpack(&good, Default::default()).unwrap().kernels.len(), 1);
/// let broken = kpack::write_plain("g", "gfx906", &[("k.so#0", "gfx906", b"\x7fELF\x02\x01\x01 cut short")]);
/// let errs = inspect::validate_kpack(&broken, Default::default()).unwrap_err();
/// assert_eq!(errs.iter().next().unwrap().rule_id(), Some("CO-2"));
/// ```
pub fn validate_kpack(data: &[u8], budget: Budget) -> Result<kpack::Archive, Errors> {
    let a = kpack::parse(data).map_err(|e| Errors::from(vec![e]))?;
    let limit = budget.bytes();
    let mut errors = Vec::new();
    for k in &a.kernels {
        match a.code_object(data, k, limit) {
            Err(e) => errors.push(e),
            Ok(Cow::Borrowed(co)) if co.starts_with(b"\x7fELF") => {
                errors.extend(image::check(co, a.blob(k).0));
            }
            Ok(_) => {}
        }
    }
    if errors.is_empty() {
        return Ok(a);
    }
    errors.sort_by_key(Error::offset);
    Err(errors.into())
}

/// Check any file offload-kit reads, strictly: a ROCm kpack archive as
/// [`validate_kpack`] checks it, anything else as [`validate`] does. The
/// one answer the CLI's `validate`, Python's `validate` and the C ABI's
/// `offloadkit_validate` give for the same bytes, each within the budget
/// its user chose.
///
/// ```
/// use offload_kit_format::kpack;
/// use offload_kit_inspect as inspect;
///
/// let archive = kpack::write_plain("g", "gfx906", &[("k.so#0", "gfx906", b"code")]);
/// assert!(inspect::validate_any(&archive, Default::default()).is_ok());
/// let errs = inspect::validate_any(b"KPAK", Default::default()).unwrap_err();
/// assert_eq!(errs.iter().next().unwrap().rule_id(), Some("KPAK-1"));
/// ```
pub fn validate_any(data: &[u8], budget: Budget) -> Result<(), Errors> {
    if kpack::is_kpack(data) {
        validate_kpack(data, budget).map(|_| ())
    } else {
        validate(&data, budget).map(|_| ())
    }
}

/// What any file offload-kit reads holds ([`inspect_any`]); serialised as
/// the file's member of `offload-kit inspect --json` without its name:
/// `{"report": …}` or `{"kpack_archive": …}`.
#[derive(Debug, Clone, Serialize)]
pub enum Inspected {
    /// A container and the code objects in it.
    #[serde(rename = "report")]
    Container(Box<Report>),
    /// A ROCm kpack archive and the code objects it files.
    #[serde(rename = "kpack_archive")]
    KpackArchive(kpack_archive::KpackReport),
}

/// What `data` holds down to each code object, whatever it is: a kpack
/// archive's report, else [`inspect_with`]'s. The CLI's `inspect`,
/// Python's `inspect_file` and the C ABI's `offloadkit_inspect` ask this.
pub fn inspect_any(data: &[u8], opts: Options) -> Result<Inspected, Errors> {
    if kpack::is_kpack(data) {
        kpack_archive::inspect_kpack(data, opts.budget).map(Inspected::KpackArchive)
    } else {
        inspect_with(&data, opts).map(|r| Inspected::Container(Box::new(r)))
    }
}

/// Per GPU, which code object the HIP runtime would load ([`check_any`]);
/// serialised as `check --json`'s list of verdicts.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Verdicts {
    /// A container's: the bundle entry each GPU picks, or why none.
    Container(Vec<check::Verdict>),
    /// A kpack archive's: whether it holds a target each GPU takes.
    KpackArchive(Vec<kpack_archive::KpackVerdict>),
}

/// Per GPU of `gpus`, what the HIP runtime would load from `data`: a
/// kpack archive's verdicts, else a container's ([`check::check`] of
/// [`inspect_with`]'s report). A split host's code objects are in its
/// archives, found from its path: [`hipk::Host::check`] answers for it.
pub fn check_any(data: &[u8], gpus: &[check::Gpu], opts: Options) -> Result<Verdicts, Errors> {
    Ok(match inspect_any(data, opts)? {
        Inspected::KpackArchive(r) => Verdicts::KpackArchive(
            (gpus.iter())
                .map(|g| kpack_archive::check_kpack(&r.gfx_arches, g))
                .collect(),
        ),
        Inspected::Container(r) => {
            Verdicts::Container(gpus.iter().map(|g| check::check(&r, g)).collect())
        }
    })
}

/// What [`inspect`] learns of one entry: its code object and the image
/// rules it breaks.
type Look = (CodeObject, Vec<Error>);

/// Look at the entries of compressed bundles (by their index in `entries`):
/// each bundle is decoded once, streamed (and verified, CCOB-5 … 7), and
/// only the bytes of the entries being read are held. An entry larger than
/// the memory budget allows is not read: a CLI-6 finding says so.
fn ccob_looks(
    src: &dyn Source,
    entries: &[ListedEntry],
    look: &dyn Fn(&[u8], u64) -> Look,
    budget: Budget,
) -> Result<std::collections::HashMap<usize, Result<Look, Error>>, Error> {
    let mut looks = std::collections::HashMap::new();
    let mut blobs: Vec<(u64, Vec<usize>)> = Vec::new();
    for (n, e) in entries.iter().enumerate() {
        if let (None, Some(at)) = (&e.image, e.ccob_offset) {
            match blobs.last_mut() {
                Some((last, members)) if *last == at => members.push(n),
                _ => blobs.push((at, vec![n])),
            }
        }
    }
    for (at, members) in blobs {
        let blob = detect::ccob_blob(src, at)?;
        let h = ccob::read_header(&blob, at)?;
        // The live bytes of an entry, the dead ones before it (at most as
        // many) and, for zstd, the decoder's window (never larger than the
        // bundle).
        let window = match h.method() {
            Some(ccob::Method::Zstd) => Budget::ZSTD_WINDOW.min(h.uncompressed_size),
            _ => 0,
        };
        let room = budget.bytes().saturating_sub(window) / 2;
        let mut wanted = Vec::new();
        for &n in &members {
            let e = &entries[n];
            if e.size > room {
                let finding = Error::at(
                    rules::CLI_6,
                    at,
                    format!(
                        "entry '{}' of {} bytes inside the compressed bundle at 0x{at:x} is not inspected: reading it takes more than the memory budget allows (--max-memory)",
                        e.id, e.size
                    ),
                );
                looks.insert(n, Err(finding));
            } else {
                wanted.push((e.offset, e.size, n));
            }
        }
        let mut windows = EntryWindows::new(wanted, |n, bytes| {
            looks.insert(n, Ok(look(bytes, entries[n].offset)));
        });
        ccob::extract_range(&blob, at, 0, h.uncompressed_size, &mut windows)?;
    }
    Ok(looks)
}

/// A writer that is handed a decompressed bundle front to back and hands
/// each wanted range `(offset, size, key)` to `done` once it is whole,
/// holding only the bytes from the first range not yet done.
struct EntryWindows<F: FnMut(usize, &[u8])> {
    /// Ranges not yet done, the one starting first last.
    pending: Vec<(u64, u64, usize)>,
    /// Bytes `[start, pos)` of the bundle; those before the first pending
    /// range are dropped once they are at least half of it.
    buf: Vec<u8>,
    start: u64,
    pos: u64,
    done: F,
}

impl<F: FnMut(usize, &[u8])> EntryWindows<F> {
    fn new(mut ranges: Vec<(u64, u64, usize)>, done: F) -> Self {
        ranges.sort_unstable_by(|a, b| b.cmp(a));
        EntryWindows {
            pending: ranges,
            buf: Vec::new(),
            start: 0,
            pos: 0,
            done,
        }
    }
}

impl<F: FnMut(usize, &[u8])> std::io::Write for EntryWindows<F> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let from = self.pos;
        self.pos += data.len() as u64;
        let Some(&(first, _, _)) = self.pending.last() else {
            return Ok(data.len());
        };
        let keep = first.max(from);
        if self.buf.is_empty() {
            self.start = keep;
        }
        if keep < self.pos {
            self.buf.extend_from_slice(&data[(keep - from) as usize..]);
        }
        while let Some(&(offset, size, key)) = self.pending.last() {
            if offset.saturating_add(size) > self.pos {
                break;
            }
            let at = (offset - self.start) as usize;
            (self.done)(key, &self.buf[at..at + size as usize]);
            self.pending.pop();
        }
        let dead = match self.pending.last() {
            Some(&(next, _, _)) => next.saturating_sub(self.start).min(self.buf.len() as u64),
            None => self.buf.len() as u64,
        } as usize;
        if dead == self.buf.len() {
            self.buf.clear();
        } else if dead * 2 >= self.buf.len() {
            self.buf.drain(..dead);
            self.start += dead as u64;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn compressed_facts(src: &dyn Source, at: u64) -> Result<Compressed, Error> {
    let blob = detect::ccob_blob(src, at)?;
    let blob = blob.bytes();
    let h = ccob::parse_header(blob, at)?;
    let len = ccob::blob_len(&h, blob, at)?;
    Ok(Compressed {
        offset: at,
        version: h.version,
        method: match h.method() {
            Some(ccob::Method::Zlib) => "zlib".to_string(),
            Some(ccob::Method::Zstd) => "zstd".to_string(),
            None => h.method_value.to_string(),
        },
        compressed_size: len,
        uncompressed_size: h.uncompressed_size,
    })
}

fn summarise(bundles: &[BundleFacts], entries: &[InspectedEntry]) -> Summary {
    let mut targets = BTreeSet::new();
    let mut code_objects = 0;
    for e in entries {
        let target = match &e.object {
            CodeObject::Amdgpu(o) => Some(o.target_id()),
            CodeObject::Cubin(o) => Some(o.arch()),
            CodeObject::Ptx(p) => Some(p.target.clone().unwrap_or_else(|| "ptx".into())),
            CodeObject::SpirV(_) => Some("spirv".to_string()),
            _ => None,
        };
        if let Some(t) = target {
            code_objects += 1;
            targets.insert(t);
        }
    }
    Summary {
        bundles: bundles.len(),
        compressed_bundles: bundles.iter().filter(|b| b.compressed.is_some()).count(),
        entries: entries.len(),
        code_objects,
        targets: targets.into_iter().collect(),
    }
}

/// CO-1: an AMDGPU code object's processor and feature settings agree with
/// its entry ID's target ID (or, for LLVM main's `amdgpu<subarch>`
/// triples, its subarch). `None` when they agree or when either side says
/// too little to compare (no target ID, code object V2, an unknown
/// `mach`).
fn id_disagreement(e: &ListedEntry, object: &CodeObject) -> Option<Error> {
    let CodeObject::Amdgpu(o) = object else {
        return None;
    };
    let (id, _) = BundleEntryId::parse_tolerant(&e.id).ok()?;
    if !id.triple.is_amdgpu() {
        return None;
    }
    // Its target ID's processor, or its amdgpu subarch's (ID-7).
    let named = id.amdgpu_processor()?;
    let no_features = crate::id::target_id::TargetId::default();
    let tid = id.parsed_target_id.as_ref().unwrap_or(&no_features);
    let processor = o.processor?;
    // The e_flags field: byte 36 of an ELF32 header, 48 of an ELF64 one.
    let at = e.offset + if o.class.bits() == 32 { 36 } else { 48 };
    let disagree = |what: String| {
        let err = Error::at(
            rules::CO_1,
            at,
            format!(
                "entry '{}' names {what}, but its code object's e_flags (0x{:x}) say {}: \
                 a runtime picking the entry by its ID cannot load it",
                e.id,
                o.flags,
                o.target_id()
            ),
        );
        // As every error found inside a decompressed bundle (spec/ccob.md).
        Some(match e.ccob_offset {
            Some(blob) => err.context(format!(
                "inside the compressed bundle at 0x{blob:x} (offsets are within the decompressed bundle)"
            )),
            None => err,
        })
    };
    if named != processor {
        return disagree(format!("processor {named}"));
    }
    let features = tid.feature_map();
    // Code object V3 records only on or off; "any" exists from V4.
    let v3 = o.code_object_version == Some(3);
    for (name, setting) in [("xnack", o.xnack), ("sramecc", o.sramecc)] {
        let bad = match (features.get(name), setting) {
            (Some(Feature::On), FeatureSetting::Off) | (Some(Feature::Off), FeatureSetting::On) => {
                true
            }
            (None, FeatureSetting::On | FeatureSetting::Off) => !v3,
            _ => false,
        };
        if bad {
            let said = match features.get(name) {
                Some(Feature::On) => format!("{name}+"),
                Some(Feature::Off) => format!("{name}-"),
                None => format!("no {name} setting (any)"),
            };
            return disagree(said);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::EntryWindows;
    use std::io::Write;

    #[test]
    fn entry_windows_hand_over_overlapping_unordered_and_empty_ranges() {
        let bundle: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        let ranges = vec![
            (9_000, 1_000, 0), // the end
            (10, 5_000, 1),
            (100, 50, 2), // inside range 1
            (4_000, 0, 3),
            (0, 10_000, 4), // all of it
            (9_999, 2, 5),  // past the end: never whole
        ];
        let mut got = Vec::new();
        let mut w = EntryWindows::new(ranges.clone(), |k, b: &[u8]| got.push((k, b.to_vec())));
        for chunk in bundle.chunks(7) {
            w.write_all(chunk).unwrap();
        }
        drop(w);
        got.sort();
        let want: Vec<(usize, Vec<u8>)> = ranges[..5]
            .iter()
            .map(|&(o, n, k)| (k, bundle[o as usize..(o + n) as usize].to_vec()))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(got, want);
    }
}
