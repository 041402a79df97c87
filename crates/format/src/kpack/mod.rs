//! kpack archives (`KPAK`, spec/kpack.md): ROCm's per-architecture device
//! code split out of fat binaries (ROCm/rocm-kpack; TheRock RFC0008), read
//! strictly: a 16-byte header, blobs, and a MessagePack table of contents
//! from the header's TOC offset to the end of the file, mapping each kernel
//! name (`<path>#<index>`) and architecture to a blob stored plain or as
//! one zstd frame.
//!
//! ```text
//! 0   "KPAK"
//! 4   u32 format version (1)
//! 8   u64 TOC offset
//! 16  zeros up to 0x40, then blob data
//! TOC MessagePack map: format_version, compression_scheme ("none" |
//!     "zstd-per-kernel"), group_name, gfx_arch_family, gfx_arches,
//!     blobs [{offset, size}] (none) or zstd_offset/zstd_size (zstd),
//!     toc {kernel name: {arch: {ordinal, original_size, type}}}
//! zstd-per-kernel: at zstd_offset, u32 count, then count × (u32 size, frame)
//! ```
//!
//! The TOC is decoded with `rmpv` (its preallocation is bounded, and the TOC
//! is at most [`MAX_TOC`] bytes); every offset, size and ordinal is checked
//! against the file before a byte is read, and a zstd frame is decoded only
//! up to the size the TOC records for it.
//!
//! # Example
//!
//! ```
//! use offload_kit_format::kpack;
//!
//! let archive = kpack::write_plain("test", "gfx906", &[("lib/libk.so#0", "gfx906", b"\x7fELF code")]);
//! let k = kpack::parse(&archive).unwrap();
//! assert_eq!(k.kernels[0].name, "lib/libk.so#0");
//! assert_eq!(&*k.code_object(&archive, &k.kernels[0], 1 << 20).unwrap(), b"\x7fELF code");
//! assert_eq!(kpack::parse(b"KPAK").unwrap_err().rule_id(), Some("KPAK-1"));
//! ```

use crate::error::Error;
use crate::rules;
use rmpv::Value;
use std::borrow::Cow;

mod write;
pub use write::{write, write_plain, Writer};

/// The archive magic.
pub const MAGIC: &[u8; 4] = b"KPAK";
/// The fixed header: magic, version, TOC offset.
pub const HEADER_SIZE: u64 = 16;
/// Where blob data starts in the archives ROCm writes.
pub const DATA_START: u64 = 0x40;
/// The largest TOC read (ROCm's newer `toc_parser.cpp` bounds it too):
/// decoded, each MessagePack element costs about 48 bytes, so 4 MiB of TOC
/// stays within the default memory budget.
pub const MAX_TOC: u64 = 4 << 20;
/// The most bytes of kernel names and architectures the kernel list holds.
pub const MAX_NAMES: u64 = 64 << 20;

/// How the blobs are stored (KPAK-3, KPAK-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scheme {
    /// `none`: each blob at its (offset, size).
    Plain(Vec<(u64, u64)>),
    /// `zstd-per-kernel`: each blob one zstd frame.
    ZstdPerKernel(Frames),
}

/// The frames of a `zstd-per-kernel` archive: every one is checked to lie
/// in the zstd region, but only those the TOC's kernels name are held, so
/// a region of millions of empty frames costs no memory (KPAK-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frames {
    /// How many frames the region holds.
    pub count: u64,
    /// (ordinal, offset, size) of each frame a kernel names, by ordinal.
    pub named: Vec<(u64, u64, u64)>,
}

/// One code object of the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    /// The kernel name, `<path>#<index>` as the runtime looks it up.
    pub name: String,
    /// The architecture (`gfx906`).
    pub arch: String,
    /// Its blob.
    pub ordinal: u64,
    /// The code object's size.
    pub original_size: u64,
    /// `hsaco`.
    pub kind: String,
    /// The entry ID it had in the fat binary, when the TOC records it.
    pub target: Option<String>,
}

/// A parsed archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archive {
    /// The header's format version (1).
    pub version: u32,
    /// Absolute offset of the TOC.
    pub toc_offset: u64,
    /// `group_name`.
    pub group_name: String,
    /// `gfx_arch_family`.
    pub gfx_arch_family: String,
    /// `gfx_arches`.
    pub gfx_arches: Vec<String>,
    /// The blobs.
    pub scheme: Scheme,
    /// Every (kernel name, arch) of the TOC, in TOC order.
    pub kernels: Vec<Kernel>,
}

/// Whether `data` starts like a kpack archive.
pub fn is_kpack(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}

fn u32_at(data: &[u8], at: u64) -> Option<u32> {
    let b = data.get(at as usize..at as usize + 4)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

/// Parse and check an archive (KPAK-1 … KPAK-5).
pub fn parse(data: &[u8]) -> Result<Archive, Error> {
    let len = data.len() as u64;
    if !is_kpack(data) || len < HEADER_SIZE {
        return Err(Error::at(
            rules::KPAK_1,
            0,
            "not a kpack archive: no 16-byte header starting with 'KPAK'",
        ));
    }
    let version = u32_at(data, 4).unwrap_or(0);
    if version != 1 {
        return Err(Error::at(
            rules::KPAK_1,
            4,
            format!("kpack format version {version}; only 1 is defined"),
        ));
    }
    let toc_offset = u64::from_le_bytes(data[8..16].try_into().expect("8 bytes"));
    if toc_offset < DATA_START || toc_offset >= len {
        return Err(Error::at(
            rules::KPAK_1,
            8,
            format!("TOC offset 0x{toc_offset:x} is not within the file after the 0x40-byte header area (size 0x{len:x})"),
        ));
    }
    if len - toc_offset > MAX_TOC {
        return Err(Error::at(
            rules::KPAK_2,
            toc_offset,
            format!(
                "TOC of {} bytes is over the {MAX_TOC}-byte limit",
                len - toc_offset
            ),
        ));
    }
    let mut rd = &data[toc_offset as usize..];
    let toc = rmpv::decode::read_value_with_max_depth(&mut rd, 16).map_err(|e| {
        Error::at(
            rules::KPAK_2,
            toc_offset,
            format!("TOC is not one MessagePack value: {e}"),
        )
    })?;
    if !rd.is_empty() {
        let at = len - rd.len() as u64;
        return Err(Error::at(
            rules::KPAK_2,
            at,
            "bytes after the TOC's MessagePack map",
        ));
    }
    let toc = Toc {
        map: &toc,
        at: toc_offset,
    };
    let format_version = toc.uint("format_version")?;
    if format_version != 1 {
        return Err(toc.err(
            rules::KPAK_2,
            format!("TOC format_version {format_version}; only 1 is defined"),
        ));
    }
    let (scheme, kernels) = match toc.str("compression_scheme")? {
        "none" => {
            let blobs = plain_blobs(&toc)?;
            let kernels = kernels(&toc, blobs.len() as u64)?;
            (Scheme::Plain(blobs), kernels)
        }
        "zstd-per-kernel" => {
            let region = zstd_region(&toc, data)?;
            let kernels = kernels(&toc, region.2)?;
            let mut wanted: Vec<u64> = kernels.iter().map(|k| k.ordinal).collect();
            wanted.sort_unstable();
            (
                Scheme::ZstdPerKernel(zstd_frames(data, region, &wanted)?),
                kernels,
            )
        }
        other => {
            return Err(toc.err(
                rules::KPAK_2,
                format!("unknown compression_scheme '{other}'"),
            ))
        }
    };
    let blobs: Box<dyn Iterator<Item = (u64, u64)> + '_> = match &scheme {
        Scheme::Plain(b) => Box::new(b.iter().copied()),
        Scheme::ZstdPerKernel(f) => Box::new(f.named.iter().map(|&(_, o, s)| (o, s))),
    };
    for (offset, size) in blobs {
        if offset < DATA_START || offset.checked_add(size).is_none_or(|end| end > toc_offset) {
            return Err(toc.err(
                rules::KPAK_3,
                format!("blob at 0x{offset:x} of {size} bytes is not between the header area and the TOC (0x{toc_offset:x})"),
            ));
        }
    }
    // No byte is two code objects: one archive byte read as many would
    // let a small file extract to gigabytes.
    if let Scheme::Plain(b) = &scheme {
        let mut by_offset: Vec<(usize, u64, u64)> = (b.iter().enumerate())
            .filter(|(_, &(_, size))| size > 0)
            .map(|(i, &(o, size))| (i, o, size))
            .collect();
        by_offset.sort_by_key(|&(_, o, _)| o);
        for w in by_offset.windows(2) {
            let ((i, o, size), (j, next, _)) = (w[0], w[1]);
            if next < o + size {
                return Err(toc.err(
                    rules::KPAK_3,
                    format!("blobs {i} (0x{o:x}, {size} bytes) and {j} (0x{next:x}) overlap"),
                ));
            }
        }
    }
    let arches = toc
        .get("gfx_arches")?
        .as_array()
        .ok_or_else(|| toc.err(rules::KPAK_2, "gfx_arches is not an array"))?;
    let gfx_arches = (arches.iter())
        .map(|a| {
            a.as_str()
                .map(str::to_string)
                .ok_or_else(|| toc.err(rules::KPAK_2, "gfx_arches holds a non-string"))
        })
        .collect::<Result<_, _>>()?;
    Ok(Archive {
        version,
        toc_offset,
        group_name: toc.str("group_name")?.to_string(),
        gfx_arch_family: toc.str("gfx_arch_family")?.to_string(),
        gfx_arches,
        scheme,
        kernels,
    })
}

/// The TOC map and where it starts, for errors.
struct Toc<'v> {
    map: &'v Value,
    at: u64,
}

impl<'v> Toc<'v> {
    fn err(&self, rule: rules::Rule, message: impl Into<String>) -> Error {
        Error::at(rule, self.at, message.into())
    }

    fn get(&self, key: &str) -> Result<&'v Value, Error> {
        field(self.map, key).ok_or_else(|| self.err(rules::KPAK_2, format!("TOC has no '{key}'")))
    }

    fn str(&self, key: &str) -> Result<&'v str, Error> {
        self.get(key)?
            .as_str()
            .ok_or_else(|| self.err(rules::KPAK_2, format!("TOC '{key}' is not a string")))
    }

    fn uint(&self, key: &str) -> Result<u64, Error> {
        self.get(key)?.as_u64().ok_or_else(|| {
            self.err(
                rules::KPAK_2,
                format!("TOC '{key}' is not an unsigned integer"),
            )
        })
    }
}

/// `map[key]` of a MessagePack map with string keys.
fn field<'v>(map: &'v Value, key: &str) -> Option<&'v Value> {
    map.as_map()?
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

/// `blobs` of a `none` archive (KPAK-3).
fn plain_blobs(toc: &Toc<'_>) -> Result<Vec<(u64, u64)>, Error> {
    let list = toc
        .get("blobs")?
        .as_array()
        .ok_or_else(|| toc.err(rules::KPAK_3, "blobs is not an array"))?;
    (list.iter())
        .map(|b| {
            let n = |k: &str| field(b, k).and_then(Value::as_u64);
            n("offset")
                .zip(n("size"))
                .ok_or_else(|| toc.err(rules::KPAK_3, format!("blob {b} has no offset and size")))
        })
        .collect()
}

/// The zstd region of a `zstd-per-kernel` archive (KPAK-4): its start,
/// end, and the u32 frame count at its start.
fn zstd_region(toc: &Toc<'_>, data: &[u8]) -> Result<(u64, u64, u64), Error> {
    let (start, size) = (toc.uint("zstd_offset")?, toc.uint("zstd_size")?);
    let end = start
        .checked_add(size)
        .filter(|&e| e <= toc.at && start >= DATA_START);
    let end = end.ok_or_else(|| {
        toc.err(
            rules::KPAK_4,
            format!("zstd region at 0x{start:x} of {size} bytes is not before the TOC"),
        )
    })?;
    let count = u32_at(data, start).filter(|_| start + 4 <= end);
    let count =
        count.ok_or_else(|| Error::at(rules::KPAK_4, start, "zstd region has no frame count"))?;
    Ok((start, end, u64::from(count)))
}

/// The frames of the zstd region `(start, end, count)`: after the count,
/// (u32 size, frame) each, all within the region (KPAK-4); those of the
/// `wanted` ordinals (sorted) are kept.
fn zstd_frames(data: &[u8], region: (u64, u64, u64), wanted: &[u64]) -> Result<Frames, Error> {
    let (start, end, count) = region;
    let mut named = Vec::with_capacity(wanted.len());
    let mut next = wanted.iter().peekable();
    let mut at = start + 4;
    for i in 0..count {
        let n = u32_at(data, at).filter(|_| at + 4 <= end);
        let n = u64::from(n.ok_or_else(|| {
            Error::at(
                rules::KPAK_4,
                at,
                format!("frame {i} of {count}: no size within the zstd region"),
            )
        })?);
        if at + 4 + n > end {
            return Err(Error::at(
                rules::KPAK_4,
                at,
                format!("frame {i} of {n} bytes runs past the zstd region's end (0x{end:x})"),
            ));
        }
        if next.peek() == Some(&&i) {
            next.next();
            named.push((i, at + 4, n));
        }
        at += 4 + n;
    }
    Ok(Frames { count, named })
}

/// The kernels of `toc` (KPAK-5): each (name, arch) with an ordinal below
/// `blobs`.
fn kernels(toc: &Toc<'_>, blobs: u64) -> Result<Vec<Kernel>, Error> {
    let map = toc
        .get("toc")?
        .as_map()
        .ok_or_else(|| toc.err(rules::KPAK_5, "toc is not a map"))?;
    let mut out = Vec::new();
    let mut held = 0u64;
    let mut pairs: std::collections::HashSet<(&str, &str)> = Default::default();
    let mut ordinals: std::collections::HashSet<u64> = Default::default();
    for (name, arches) in map {
        let name = name
            .as_str()
            .ok_or_else(|| toc.err(rules::KPAK_5, "a kernel name is not a string"))?;
        let arches = arches.as_map().ok_or_else(|| {
            toc.err(
                rules::KPAK_5,
                format!("'{name}' does not map architectures"),
            )
        })?;
        for (arch, e) in arches {
            let arch = arch.as_str().ok_or_else(|| {
                toc.err(
                    rules::KPAK_5,
                    format!("'{name}': an architecture is not a string"),
                )
            })?;
            let n = |k: &str| field(e, k).and_then(Value::as_u64);
            let (Some(ordinal), Some(original_size)) = (n("ordinal"), n("original_size")) else {
                return Err(toc.err(
                    rules::KPAK_5,
                    format!("'{name}' {arch}: no ordinal and original_size"),
                ));
            };
            if ordinal >= blobs {
                return Err(toc.err(
                    rules::KPAK_5,
                    format!("'{name}' {arch}: ordinal {ordinal} names no blob ({blobs} stored)"),
                ));
            }
            // Each copy of a name is held: bounded, and no pair or blob twice.
            held += (name.len() + arch.len()) as u64 + 64;
            if held > MAX_NAMES {
                let m = format!("the TOC names over {MAX_NAMES} bytes of kernels");
                return Err(toc.err(rules::KPAK_5, m));
            }
            if !pairs.insert((name, arch)) {
                let m = format!("'{name}' {arch} is listed twice");
                return Err(toc.err(rules::KPAK_5, m));
            }
            if !ordinals.insert(ordinal) {
                let m = format!("'{name}' {arch}: blob {ordinal} is another kernel's");
                return Err(toc.err(rules::KPAK_5, m));
            }
            let Some(kind) = field(e, "type").and_then(Value::as_str) else {
                let m = format!("'{name}' {arch}: no type");
                return Err(toc.err(rules::KPAK_5, m));
            };
            let target = field(e, "metadata")
                .and_then(|m| field(m, "target"))
                .and_then(Value::as_str);
            out.push(Kernel {
                name: name.to_string(),
                arch: arch.to_string(),
                ordinal,
                original_size,
                kind: kind.to_string(),
                target: target.map(str::to_string),
            });
        }
    }
    Ok(out)
}

impl Archive {
    /// The (offset, size) of kernel `k`'s blob; (0, 0) for a kernel of
    /// another archive whose ordinal names none here.
    pub fn blob(&self, k: &Kernel) -> (u64, u64) {
        match &self.scheme {
            Scheme::Plain(b) => usize::try_from(k.ordinal)
                .ok()
                .and_then(|i| b.get(i).copied())
                .unwrap_or((0, 0)),
            Scheme::ZstdPerKernel(f) => f
                .named
                .binary_search_by_key(&k.ordinal, |&(o, _, _)| o)
                .map_or((0, 0), |i| (f.named[i].1, f.named[i].2)),
        }
    }

    /// The code object of `k` from the archive's bytes `data`: its blob, or
    /// the blob's frame decoded, which must give `original_size` bytes
    /// (KPAK-4), at most `limit`.
    pub fn code_object<'d>(
        &self,
        data: &'d [u8],
        k: &Kernel,
        limit: u64,
    ) -> Result<Cow<'d, [u8]>, Error> {
        let (offset, size) = self.blob(k);
        // `data` is the archive parsed; another slice is refused, not indexed.
        let blob = (data.get(offset as usize..offset.saturating_add(size) as usize))
            .ok_or_else(|| Error::at(rules::KPAK_3, offset, "blob outside the data given"))?;
        if let Scheme::Plain(_) = self.scheme {
            if size != k.original_size {
                return Err(Error::at(
                    rules::KPAK_3,
                    offset,
                    format!(
                        "blob of {size} bytes for '{}' {}, whose original_size is {}",
                        k.name, k.arch, k.original_size
                    ),
                ));
            }
            return Ok(Cow::Borrowed(blob));
        }
        // The decoder's window is held besides the output (as for CCOB).
        if k.original_size > limit.saturating_sub(ZSTD_WINDOW) {
            return Err(Error::at(
                rules::CLI_6,
                offset,
                format!(
                    "'{}' {} decompresses to {} bytes, over the budget of {limit}",
                    k.name, k.arch, k.original_size
                ),
            ));
        }
        // One frame filling the blob, not one followed by other bytes.
        if zstd::zstd_safe::find_frame_compressed_size(blob) != Ok(blob.len()) {
            let m = format!(
                "blob of '{}' {} is not exactly one zstd frame",
                k.name, k.arch
            );
            return Err(Error::at(rules::KPAK_4, offset, m));
        }
        let zstd_err =
            |e: std::io::Error| Error::at(rules::KPAK_4, offset, format!("zstd frame: {e}"));
        let mut dec = zstd::stream::read::Decoder::with_buffer(blob).map_err(zstd_err)?;
        dec.window_log_max(27).map_err(zstd_err)?;
        let mut dec = dec.single_frame();
        let mut out = Vec::new();
        let mut want = std::io::Read::take(&mut dec, k.original_size.saturating_add(1));
        std::io::Read::read_to_end(&mut want, &mut out).map_err(|e| {
            Error::at(
                rules::KPAK_4,
                offset,
                format!("zstd frame for '{}' {}: {e}", k.name, k.arch),
            )
        })?;
        if out.len() as u64 != k.original_size {
            return Err(Error::at(
                rules::KPAK_4,
                offset,
                format!(
                    "zstd frame for '{}' {} decodes to {} bytes, not its original_size {}",
                    k.name,
                    k.arch,
                    out.len(),
                    k.original_size
                ),
            ));
        }
        Ok(Cow::Owned(out))
    }
}

/// The wrapper magic of a host whose device code was split into kpack
/// archives (HIPK-1): ROCm's splitter turns `HIPF` into `HIPK`.
pub const HOST_MAGIC: &[u8; 4] = b"HIPK";
/// The fat-binary wrapper section whose magic says so.
pub const WRAPPER_SECTION: &str = ".hipFatBinSegment";
/// The section naming the archives (HIPK-1).
pub const REF_SECTION: &str = ".rocm_kpack_ref";

/// What a HIPK host's `.rocm_kpack_ref` says: where its archives are and
/// the kernel name its code objects are filed under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRef {
    /// `kpack_search_paths`, relative to the host; `@GFXARCH@` stands for
    /// the GPU's architecture.
    pub search_paths: Vec<String>,
    /// `kernel_name`; the runtime looks up `<kernel_name>#<index>`.
    pub kernel_name: String,
}

/// Read a `.rocm_kpack_ref` section's bytes, at absolute offset `at`
/// (HIPK-1): one MessagePack map with `kpack_search_paths` (strings) and
/// `kernel_name`.
pub fn parse_host_ref(bytes: &[u8], at: u64) -> Result<HostRef, Error> {
    let bad = |m: String| Error::at(rules::HIPK_1, at, m);
    if bytes.len() as u64 > MAX_TOC {
        return Err(bad(format!(
            "{REF_SECTION} of {} bytes is over the limit",
            bytes.len()
        )));
    }
    let mut rd = bytes;
    let v = rmpv::decode::read_value_with_max_depth(&mut rd, 8)
        .map_err(|e| bad(format!("{REF_SECTION} is not one MessagePack value: {e}")))?;
    if !rd.is_empty() {
        return Err(bad(format!(
            "bytes after the MessagePack map of {REF_SECTION}"
        )));
    }
    let paths = field(&v, "kpack_search_paths").and_then(Value::as_array);
    let paths: Option<Vec<String>> =
        paths.and_then(|p| p.iter().map(|s| s.as_str().map(str::to_string)).collect());
    let name = field(&v, "kernel_name").and_then(Value::as_str);
    match (paths, name) {
        (Some(search_paths), Some(kernel_name)) => Ok(HostRef {
            search_paths,
            kernel_name: kernel_name.to_string(),
        }),
        _ => Err(bad(format!(
            "{REF_SECTION} has no kpack_search_paths list of strings and kernel_name string"
        ))),
    }
}

/// The code-object index a HIPK wrapper (`.hipFatBinSegment`: magic,
/// version, pointer, `reserved1`) gives the runtime: `reserved1`, which
/// ROCm's runtime reads as the index of the host's code object
/// (HIPK-2); `None` for a wrapper too short to hold it.
pub fn wrapper_index(wrapper: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(wrapper.get(16..24)?.try_into().ok()?))
}

/// The key ROCm's runtime looks a host's code object up by:
/// `<kernel_name>#<index>` (HIPK-2).
pub fn lookup_key(kernel_name: &str, index: u64) -> String {
    format!("{kernel_name}#{index}")
}

/// The architectures an agent ISA accepts an archive for, most specific
/// first, as ROCm's runtime tries them (HIPK-2; `for_each_compatible_target`
/// in `runtime/src/isa_target_match.h`): the `amdgcn-amd-amdhsa--` prefix
/// dropped, then the processor with every subset of the ISA's features,
/// larger subsets first, features dropped from the right first.
/// `gfx942:sramecc+:xnack-` gives `gfx942:sramecc+:xnack-`,
/// `gfx942:sramecc+`, `gfx942:xnack-`, `gfx942`. At most 8 features are
/// taken (an ISA names two).
///
/// ```
/// use offload_kit_format::kpack::compatible_targets;
///
/// assert_eq!(compatible_targets("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"),
///            ["gfx942:sramecc+:xnack-", "gfx942:sramecc+", "gfx942:xnack-", "gfx942"]);
/// assert_eq!(compatible_targets("gfx1201"), ["gfx1201"]);
/// ```
pub fn compatible_targets(isa: &str) -> Vec<String> {
    let s = match isa.strip_prefix("amdgcn-amd-amdhsa--") {
        Some(rest) if !rest.is_empty() => rest,
        _ => isa,
    };
    let mut parts = s.split(':');
    let processor = parts.next().unwrap_or_default();
    if processor.is_empty() {
        return Vec::new();
    }
    let features: Vec<&str> = parts.filter(|f| !f.is_empty()).take(8).collect();
    let n = features.len();
    let mut out = Vec::with_capacity(1 << n);
    for mask in (0..1u32 << n).rev() {
        let mut c = processor.to_string();
        for (i, f) in features.iter().enumerate() {
            if mask & (1 << (n - 1 - i)) != 0 {
                c.push(':');
                c.push_str(f);
            }
        }
        out.push(c);
    }
    out
}

/// The `@GFXARCH@` placeholder of a search path.
pub const GFXARCH: &str = "@GFXARCH@";

impl HostRef {
    /// The archive paths ROCm's runtime tries for a GPU of ISA `isa`, in
    /// order, as written (relative to the host's directory unless
    /// absolute): each search path, its first `@GFXARCH@` replaced by each
    /// of [`compatible_targets`], or as it is without one (HIPK-2).
    pub fn archive_paths(&self, isa: &str) -> Vec<String> {
        let targets = compatible_targets(isa);
        let mut out = Vec::new();
        for p in &self.search_paths {
            match p.find(GFXARCH) {
                Some(at) => out.extend(targets.iter().map(|t| {
                    let mut e = p.clone();
                    e.replace_range(at..at + GFXARCH.len(), t);
                    e
                })),
                None => out.push(p.clone()),
            }
        }
        out
    }
}

/// What a zstd decoder holds besides its output: LLVM's and ROCm's frames
/// use windows of at most 2^27 bytes, and no larger one is accepted.
pub const ZSTD_WINDOW: u64 = 1 << 27;

/// How [`write()`] stores the blobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// `none`: each code object as it is (ROCm's `split_artifacts`).
    Plain,
    /// `zstd-per-kernel`: each code object one zstd frame of this level
    /// (ROCm's `pack_tree`).
    Zstd(i32),
}

impl HostRef {
    /// The `.rocm_kpack_ref` section's bytes: the MessagePack map ROCm's
    /// splitter writes (HIPK-1).
    ///
    /// ```
    /// use offload_kit_format::kpack::{parse_host_ref, HostRef};
    ///
    /// let r = HostRef { search_paths: vec!["k-@GFXARCH@.kpack".into()], kernel_name: "lib/libk.so".into() };
    /// assert_eq!(parse_host_ref(&r.to_bytes(), 0).unwrap(), r);
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let paths = self.search_paths.iter().map(|p| p.as_str().into());
        let map = Value::Map(vec![
            ("kpack_search_paths".into(), Value::Array(paths.collect())),
            ("kernel_name".into(), self.kernel_name.as_str().into()),
        ]);
        let mut out = Vec::new();
        rmpv::encode::write_value(&mut out, &map).expect("writing to a Vec");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(data: &[u8]) -> Option<&'static str> {
        parse(data).err().and_then(|e| e.rule_id())
    }

    #[test]
    fn header_and_toc_rules() {
        let good = write_plain("g", "gfx906", &[("a.so#0", "gfx906", b"CODE")]);
        assert!(parse(&good).is_ok());
        assert_eq!(rule(b"KPAK\x01\0\0\0"), Some("KPAK-1"));
        let mut v2 = good.clone();
        v2[4] = 2;
        assert_eq!(rule(&v2), Some("KPAK-1"));
        for toc in [0u64, 0x3f, good.len() as u64, u64::MAX] {
            let mut b = good.clone();
            b[8..16].copy_from_slice(&toc.to_le_bytes());
            assert_eq!(
                rule(&b),
                Some(if toc < 0x40 || toc >= good.len() as u64 {
                    "KPAK-1"
                } else {
                    "KPAK-2"
                }),
                "{toc}"
            );
        }
        let mut trailing = good.clone();
        trailing.push(0xc0);
        assert_eq!(rule(&trailing), Some("KPAK-2"));
        let mut cut = good.clone();
        cut.pop();
        assert_eq!(rule(&cut), Some("KPAK-2"));
    }

    #[test]
    fn blobs_and_ordinals() {
        let good = write_plain("g", "gfx906", &[("a.so#0", "gfx906", b"CODE")]);
        let a = parse(&good).unwrap();
        // A blob size that is not the kernel's (KPAK-3) is found when read.
        let mut k = a.kernels[0].clone();
        k.original_size = 5;
        assert_eq!(
            a.code_object(&good, &k, 1 << 20).unwrap_err().rule_id(),
            Some("KPAK-3")
        );
        // An ordinal past the blobs (KPAK-5): rewrite the TOC's 0 ordinal.
        let at = good.len() - good.iter().rev().position(|&b| b == 0xa7).unwrap() - 1;
        let mut bad = good.clone();
        assert_eq!(&bad[at..at + 8], b"\xa7ordinal");
        bad[at + 8] = 0x07;
        assert_eq!(rule(&bad), Some("KPAK-5"));
    }

    #[test]
    fn overlapping_blobs_break_kpak_3() {
        let good = write_plain(
            "g",
            "gfx906",
            &[("a#0", "gfx906", b"ABCD"), ("b#0", "gfx906", b"EFGH")],
        );
        assert!(parse(&good).is_ok());
        // The second blob's offset (0x44, a fixint) moved into the first.
        let at = good
            .windows(8)
            .position(|w| w == b"\xa6offset\x44")
            .expect("the second blob's offset");
        let mut bad = good.clone();
        bad[at + 7] = 0x42;
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.rule_id(), Some("KPAK-3"), "{e}");
        assert!(e.to_string().contains("overlap"), "{e}");
    }

    /// Two kernels on one blob, a kernel without a type, a frame followed
    /// by other bytes: each refused by its rule.
    #[test]
    fn shared_blobs_and_frame_tails() {
        let two = write_plain(
            "g",
            "gfx9",
            &[("a#0", "gfx906", b"ONE"), ("a#0", "gfx90a", b"TWO")],
        );
        let at = two
            .windows(9)
            .position(|w| w == b"\xa7ordinal\x01")
            .unwrap();
        let mut shared = two.clone();
        shared[at + 8] = 0;
        assert_eq!(rule(&shared), Some("KPAK-5"));
        let at = two.windows(5).position(|w| w == b"\xa4type").unwrap();
        let mut untyped = two.clone();
        untyped[at + 1] = b'T';
        assert_eq!(rule(&untyped), Some("KPAK-5"));
        let frame = zstd::bulk::compress(b"CODE", 3).unwrap();
        let mut blob = frame.clone();
        blob.push(0);
        let a = Archive {
            version: 1,
            toc_offset: 0,
            group_name: String::new(),
            gfx_arch_family: String::new(),
            gfx_arches: Vec::new(),
            scheme: Scheme::ZstdPerKernel(Frames {
                count: 1,
                named: vec![(0, 0, blob.len() as u64)],
            }),
            kernels: Vec::new(),
        };
        let k = Kernel {
            name: "a#0".into(),
            arch: "gfx906".into(),
            ordinal: 0,
            original_size: 4,
            kind: "hsaco".into(),
            target: None,
        };
        assert_eq!(
            a.code_object(&blob, &k, 1 << 28).unwrap_err().rule_id(),
            Some("KPAK-4")
        );
        let exact = Archive {
            scheme: Scheme::ZstdPerKernel(Frames {
                count: 1,
                named: vec![(0, 0, frame.len() as u64)],
            }),
            ..a.clone()
        };
        assert_eq!(&*exact.code_object(&frame, &k, 1 << 28).unwrap(), b"CODE");
    }

    /// Every truncation and every single-byte change of an archive of each
    /// scheme is read or refused, never a panic.
    #[test]
    fn hostile_bytes_never_panic() {
        let plain = write_plain(
            "g",
            "gfx9",
            &[("a#0", "gfx906", b"ONE"), ("a#0", "gfx90a", b"TWO!")],
        );
        let mut zstd = plain[..0x40].to_vec();
        let frame = zstd::bulk::compress(b"ZSTD-CODE", 3).unwrap();
        let mut region = 1u32.to_le_bytes().to_vec();
        region.extend((frame.len() as u32).to_le_bytes());
        region.extend(&frame);
        zstd.extend(&region);
        let toc = Value::Map(vec![
            ("compression_scheme".into(), "zstd-per-kernel".into()),
            ("format_version".into(), 1u64.into()),
            ("gfx_arch_family".into(), "gfx9".into()),
            ("gfx_arches".into(), Value::Array(vec!["gfx906".into()])),
            ("group_name".into(), "g".into()),
            ("zstd_offset".into(), 0x40u64.into()),
            ("zstd_size".into(), (region.len() as u64).into()),
            (
                "toc".into(),
                Value::Map(vec![(
                    "a".into(),
                    Value::Map(vec![(
                        "gfx906".into(),
                        Value::Map(vec![
                            ("ordinal".into(), 0u64.into()),
                            ("original_size".into(), 9u64.into()),
                            ("type".into(), "hsaco".into()),
                        ]),
                    )]),
                )]),
            ),
        ]);
        let toc_at = zstd.len() as u64;
        zstd[8..16].copy_from_slice(&toc_at.to_le_bytes());
        rmpv::encode::write_value(&mut zstd, &toc).unwrap();
        let z = parse(&zstd).unwrap();
        assert_eq!(
            &*z.code_object(&zstd, &z.kernels[0], 1 << 28).unwrap(),
            b"ZSTD-CODE"
        );
        assert_eq!(
            z.code_object(&zstd, &z.kernels[0], 4)
                .unwrap_err()
                .rule_id(),
            Some("CLI-6")
        );
        for archive in [plain, zstd] {
            for n in 0..archive.len() {
                let _ = parse(&archive[..n]);
            }
            for at in 0..archive.len() {
                for v in [0u8, 0xff, 0x7f, 0x80, 1] {
                    let mut b = archive.clone();
                    b[at] = v;
                    if let Ok(a) = parse(&b) {
                        for k in &a.kernels {
                            let _ = a.code_object(&b, k, 1 << 28);
                        }
                    }
                }
            }
        }
    }
}
