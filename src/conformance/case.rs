//! The case format: inputs built from recipes, an operation with its
//! options, the expected outcome per spec rule, and documented divergences
//! of LLVM releases. `conformance/README.md` describes it for authors and
//! `conformance/case.schema.json` is its JSON Schema.

use crate::bundle::{binary, ccob, object, text};
use crate::format::bundle::{HEADER_SIZE, RECORD_FIXED_SIZE};
use crate::host::elf::{self, Elf};
use crate::id::BundleEntryId;
use crate::profile::Release;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Inline bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Data {
    /// UTF-8 text.
    Utf8(String),
    /// Hexadecimal digits (whitespace ignored).
    Hex(String),
    /// Standard base64.
    Base64(String),
    /// This many zero bytes.
    Zeros(u64),
}

impl Data {
    /// The bytes.
    pub fn bytes(&self) -> Result<Vec<u8>, String> {
        match self {
            Data::Utf8(s) => Ok(s.as_bytes().to_vec()),
            Data::Hex(h) => decode_hex(h),
            Data::Base64(b) => decode_base64(b),
            Data::Zeros(n) => {
                if *n > 1 << 30 {
                    return Err(format!("{{\"zeros\": {n}}} is larger than 1 GiB"));
                }
                Ok(vec![0; *n as usize])
            }
        }
    }
}

impl Default for Data {
    fn default() -> Self {
        Data::Utf8(String::new())
    }
}

/// An input file recipe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum InputSpec {
    /// UTF-8 text.
    Utf8(String),
    /// Hexadecimal digits.
    Hex(String),
    /// Standard base64.
    Base64(String),
    /// Zero bytes.
    Zeros(u64),
    /// A binary bundle built from entries, then tampered with.
    Bundle(BundleRecipe),
    /// Several recipes, concatenated.
    Concat(Vec<InputSpec>),
    /// A path that does not exist (the value must be `true`).
    Missing(bool),
    /// A text bundle built from START/END lines, entries and raw bytes.
    Text(TextRecipe),
    /// A compressed bundle (`CCOB`) of another recipe, then tampered with.
    Ccob(CcobRecipe),
    /// An ELF file: a host object plus appended sections (bundle sections,
    /// `.hip_fatbin`), then tampered with.
    Elf(ElfRecipe),
}

/// A text bundle recipe (text-bundle.md): the parts in order, each START
/// and END line framed with the comment string of `type`, then converted
/// to CR LF, cut and patched as asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextRecipe {
    /// The file type whose comment string frames the lines (`s`, `ll`, `i`, …).
    #[serde(rename = "type")]
    pub file_type: String,
    /// The parts, in file order.
    pub parts: Vec<TextPart>,
    /// Replace every `LF` by `CR LF` (a file converted to DOS line ends).
    #[serde(default, skip_serializing_if = "is_false")]
    pub crlf: bool,
    /// Drop this many bytes from the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<u64>,
    /// Cut the file to this many bytes (after `skip`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncate: Option<u64>,
}

/// One part of a [`TextRecipe`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TextPart {
    /// `{"entry": id, "payload": data}`: START line, payload, END line (TXT-2).
    Entry(TextEntryPart),
    /// `{"start": id}`: a START line, `LF C " __CLANG_OFFLOAD_BUNDLE____START__ " id LF`.
    Start(TextStartPart),
    /// `{"end": id}`: an END line.
    End(TextEndPart),
    /// Raw bytes.
    Raw(Data),
}

/// `{"entry": id, "payload": data}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextEntryPart {
    /// The ID of both lines.
    pub entry: IdSpec,
    /// The content (default empty).
    #[serde(default)]
    pub payload: Data,
}

/// `{"start": id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextStartPart {
    /// The ID.
    pub start: IdSpec,
}

/// `{"end": id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextEndPart {
    /// The ID.
    pub end: IdSpec,
}

impl TextRecipe {
    /// Build the bytes, IDs spelled for `release`.
    pub fn build(&self, release: Option<Release>) -> Result<Vec<u8>, String> {
        let c = text::comment(&self.file_type)
            .ok_or_else(|| format!("'{}' is not a text file type", self.file_type))?;
        let mut out = Vec::new();
        let line = |marker: Vec<u8>, id: &IdSpec, out: &mut Vec<u8>| -> Result<(), String> {
            out.extend(marker);
            out.extend(id.resolve(release)?);
            out.push(b'\n');
            Ok(())
        };
        for p in &self.parts {
            match p {
                TextPart::Entry(e) => {
                    line(text::start_marker(c), &e.entry, &mut out)?;
                    out.extend(e.payload.bytes()?);
                    line(text::end_marker(c), &e.entry, &mut out)?;
                }
                TextPart::Start(s) => line(text::start_marker(c), &s.start, &mut out)?,
                TextPart::End(e) => line(text::end_marker(c), &e.end, &mut out)?,
                TextPart::Raw(d) => out.extend(d.bytes()?),
            }
        }
        if self.crlf {
            let mut v = Vec::with_capacity(out.len() * 2);
            for b in out {
                if b == b'\n' {
                    v.push(b'\r');
                }
                v.push(b);
            }
            out = v;
        }
        if let Some(n) = self.skip {
            out.drain(..(n as usize).min(out.len()));
        }
        if let Some(t) = self.truncate {
            out.truncate(t as usize);
        }
        Ok(out)
    }
}

/// A compressed bundle recipe (ccob.md): `content` compressed as
/// `version`/`method`/`level` by offload-kit's writer (which is LLVM's,
/// byte for byte), then header fields overridden, cut, extended, patched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcobRecipe {
    /// What is compressed.
    pub content: Box<InputSpec>,
    /// Format version written (1, 2 or 3; default 3). Its layout decides
    /// where the overrides below go.
    #[serde(default = "three")]
    pub version: u16,
    /// `zstd` (default) or `zlib`.
    #[serde(default = "zstd_name")]
    pub method: String,
    /// Compression level (default: 3 for zstd, 6 for zlib).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<i32>,
    /// Override of the stored version field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_field: Option<u16>,
    /// Override of the stored method field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method_field: Option<u16>,
    /// Override of the total size field (v2, v3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_size: Option<u64>,
    /// Override of the uncompressed size field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncompressed_size: Option<u64>,
    /// Added to the uncompressed size field (a claim off by this much).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncompressed_size_delta: Option<i64>,
    /// Drop this many bytes (at most all of them) from the end of the
    /// compressed data, the total size field following (v2, v3): a stream
    /// cut short in a blob whose header is otherwise right.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_data: Option<u64>,
    /// Override of the 8-byte hash field (hex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// Cut the blob to this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncate: Option<u64>,
    /// Bytes appended after the blob (after truncation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<Box<InputSpec>>,
    /// Byte patches, applied last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patch: Vec<Patch>,
}

fn narrow_u32(x: u64, v: u16) -> Result<[u8; 4], String> {
    u32::try_from(x)
        .map(u32::to_le_bytes)
        .map_err(|_| format!("{x} does not fit the 32-bit field of version {v}"))
}

fn three() -> u16 {
    3
}

fn zstd_name() -> String {
    "zstd".into()
}

impl CcobRecipe {
    /// Build the blob, the content's IDs spelled for `release`.
    pub fn build(&self, release: Option<Release>) -> Result<Vec<u8>, String> {
        let content = self
            .content
            .build(release)?
            .ok_or("a missing file cannot be compressed")?;
        let method = match self.method.as_str() {
            "zstd" => ccob::Method::Zstd,
            "zlib" => ccob::Method::Zlib,
            m => return Err(format!("unknown compression method '{m}' (zstd or zlib)")),
        };
        let mut out = ccob::compress(
            &content,
            ccob::WriteOptions {
                version: self.version,
                method,
                level: self.level.unwrap_or(method.default_level()),
            },
        )
        .map_err(|e| e.to_string())?;
        let v = self.version;
        let hsize = match v {
            1 => 20,
            2 => 24,
            _ => 32,
        };
        if let Some(n) = self.trim_data {
            let keep = out.len().saturating_sub(n as usize).max(hsize);
            out.truncate(keep);
            let total = out.len() as u64;
            match v {
                2 => put(&mut out, 8, &(total as u32).to_le_bytes()),
                3 => put(&mut out, 8, &total.to_le_bytes()),
                _ => {}
            }
        }
        if let Some(d) = self.uncompressed_size_delta {
            let now = content.len() as i64 + d;
            let now = u64::try_from(now).map_err(|_| "the uncompressed size would be negative")?;
            match v {
                1 => put(&mut out, 8, &narrow_u32(now, v)?),
                2 => put(&mut out, 12, &narrow_u32(now, v)?),
                _ => put(&mut out, 16, &now.to_le_bytes()),
            }
        }
        if let Some(x) = self.version_field {
            put(&mut out, 4, &x.to_le_bytes());
        }
        if let Some(x) = self.method_field {
            put(&mut out, 6, &x.to_le_bytes());
        }
        let narrow = |x: u64| narrow_u32(x, v);
        if let Some(t) = self.total_size {
            match v {
                2 => put(&mut out, 8, &narrow(t)?),
                3 => put(&mut out, 8, &t.to_le_bytes()),
                _ => return Err("version 1 has no total size field".into()),
            }
        }
        if let Some(u) = self.uncompressed_size {
            match v {
                1 => put(&mut out, 8, &narrow(u)?),
                2 => put(&mut out, 12, &narrow(u)?),
                _ => put(&mut out, 16, &u.to_le_bytes()),
            }
        }
        if let Some(h) = &self.hash {
            let b = decode_hex(h)?;
            if b.len() != 8 {
                return Err("the hash override must be 8 bytes".into());
            }
            let at = match v {
                1 => 12,
                2 => 16,
                _ => 24,
            };
            put(&mut out, at, &b);
        }
        if let Some(t) = self.truncate {
            out.truncate(t as usize);
        }
        if let Some(a) = &self.append {
            out.extend(
                a.build(release)?
                    .ok_or("a missing file cannot be appended")?,
            );
        }
        apply_patches(&mut out, &self.patch)?;
        Ok(out)
    }
}

/// An ELF recipe (object-bundle.md): the host object with sections
/// appended in order (as `llvm-objcopy --add-section` does, through
/// offload-kit's ELF writer), then section fields overridden, cut, patched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElfRecipe {
    /// The host object (an ELF file).
    pub host: Box<InputSpec>,
    /// Sections appended after the host's, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<ElfSectionRecipe>,
    /// Cut the file to this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncate: Option<u64>,
    /// Byte patches at absolute positions, applied last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patch: Vec<Patch>,
}

/// One appended section of an [`ElfRecipe`]: named `name`, or
/// `__CLANG_OFFLOAD_BUNDLE__` + the `bundle` ID.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElfSectionRecipe {
    /// The section name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A bundle section for this entry ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<IdSpec>,
    /// The contents (default empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<InputSpec>>,
    /// `sh_flags` (default `SHF_EXCLUDE` for a bundle section, `SHF_ALLOC` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<u64>,
    /// `sh_type` (default `SHT_PROGBITS`).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub sh_type: Option<u32>,
    /// `sh_addralign` (default 1); the section is laid out at a multiple of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<u64>,
    /// Override of `sh_size`, after layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Override of `sh_name`, after layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sh_name: Option<u32>,
}

impl ElfRecipe {
    /// Build the file, bundle IDs spelled for `release`.
    pub fn build(&self, release: Option<Release>) -> Result<Vec<u8>, String> {
        let host = self
            .host
            .build(release)?
            .ok_or("the host object cannot be a missing file")?;
        let mut names = Vec::new();
        let mut datas = Vec::new();
        let mut flags = Vec::new();
        for s in &self.sections {
            let name = match (&s.name, &s.bundle) {
                (Some(n), None) => n.clone(),
                (None, Some(id)) => format!(
                    "{}{}",
                    object::SECTION_PREFIX,
                    String::from_utf8(id.resolve(release)?)
                        .map_err(|_| "a section name must be UTF-8")?
                ),
                _ => return Err("a section has exactly one of name and bundle".into()),
            };
            datas.push(match &s.data {
                Some(d) => d.build(release)?.ok_or("section data cannot be missing")?,
                None => Vec::new(),
            });
            flags.push(s.flags.unwrap_or(if s.bundle.is_some() {
                elf::SHF_EXCLUDE
            } else {
                elf::SHF_ALLOC
            }));
            names.push(name);
        }
        let new: Vec<(&str, &[u8], u64)> = names
            .iter()
            .zip(&datas)
            .zip(&flags)
            .map(|((n, d), f)| (n.as_str(), d.as_slice(), *f))
            .collect();
        let mut out = if new.is_empty() {
            host
        } else {
            elf::add_sections(&host, &new).map_err(|e| e.to_string())?
        };
        // Section-header fields: sh_type and sh_addralign first (the file
        // is laid out again when an alignment changes), then sh_size and
        // sh_name, which no layout may see.
        let n = self.sections.len();
        let patch_headers = |out: &mut Vec<u8>, what: &HeaderWrites<'_>| -> Result<bool, String> {
            let e = Elf::parse(out).map_err(|e| e.to_string())?;
            let first = e.sections.len() - n;
            let mut writes = Vec::new();
            for (i, s) in self.sections.iter().enumerate() {
                let hdr = e.sections[first + i].header_pos;
                for (field, v, width) in what(s) {
                    writes.push((hdr + field, v, width, e.encoding.big_endian));
                }
            }
            let changed = !writes.is_empty();
            for (at, v, width, be) in writes {
                let bytes = if be {
                    v.to_be_bytes()[8 - width..].to_vec()
                } else {
                    v.to_le_bytes()[..width].to_vec()
                };
                put(out, at, &bytes);
            }
            Ok(changed)
        };
        if n > 0 {
            let is64 = Elf::parse(&out).map_err(|e| e.to_string())?.encoding.is64;
            let (w, align_at, size_at) = if is64 { (8, 48, 32) } else { (4, 32, 20) };
            let relayout = patch_headers(&mut out, &|s| {
                let mut v = Vec::new();
                if let Some(t) = s.sh_type {
                    v.push((4, u64::from(t), 4));
                }
                if let Some(a) = s.align {
                    v.push((align_at, a, w));
                }
                v
            })?;
            if relayout && self.sections.iter().any(|s| s.align.is_some()) {
                out = elf::add_sections(&out, &[]).map_err(|e| e.to_string())?;
            }
            patch_headers(&mut out, &|s| {
                let mut v = Vec::new();
                if let Some(x) = s.size {
                    v.push((size_at, x, w));
                }
                if let Some(x) = s.sh_name {
                    v.push((0, u64::from(x), 4));
                }
                v
            })?;
        }
        if let Some(t) = self.truncate {
            out.truncate(t as usize);
        }
        apply_patches(&mut out, &self.patch)?;
        Ok(out)
    }
}

/// For each appended section, the header fields to write: `(offset in the
/// section header, value, width in bytes)`.
type HeaderWrites<'a> = dyn Fn(&ElfSectionRecipe) -> Vec<(u64, u64, usize)> + 'a;

/// Write `bytes` at `at`, growing `out` when needed.
fn put(out: &mut Vec<u8>, at: u64, bytes: &[u8]) {
    let at = at as usize;
    if at + bytes.len() > out.len() {
        out.resize(at + bytes.len(), 0);
    }
    out[at..at + bytes.len()].copy_from_slice(bytes);
}

fn apply_patches(out: &mut Vec<u8>, patches: &[Patch]) -> Result<(), String> {
    for p in patches {
        if let Some(h) = &p.hex {
            put(out, p.at, &decode_hex(h)?);
        }
        if let Some(v) = p.u64 {
            put(out, p.at, &v.to_le_bytes());
        }
    }
    Ok(())
}

/// How an entry ID is given: verbatim, as hex bytes, or as the ID the
/// implementation's release writes for a `-targets` value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum IdSpec {
    /// The ID text, stored verbatim.
    Literal(String),
    /// `{"written": T}`: what the release of the implementation writes for
    /// target `T` (`Release::written_id`), or the canonical spelling (ID-4)
    /// for implementations without a release.
    Written {
        /// The `-targets` value.
        written: String,
    },
    /// `{"hex": "…"}`: ID bytes that need not be UTF-8.
    Hex {
        /// Hex digits.
        hex: String,
    },
}

impl IdSpec {
    /// Resolve to bytes for `release` (`None`: spec spelling).
    pub fn resolve(&self, release: Option<Release>) -> Result<Vec<u8>, String> {
        match self {
            IdSpec::Literal(s) => Ok(s.as_bytes().to_vec()),
            IdSpec::Hex { hex } => decode_hex(hex),
            IdSpec::Written { written } => written_id(release, written).map(String::into_bytes),
        }
    }

    /// Resolve to text (lossy for non-UTF-8 hex IDs).
    pub fn resolve_text(&self, release: Option<Release>) -> Result<String, String> {
        self.resolve(release)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }
}

/// The ID an implementation of `release` writes for target `t`; without a
/// release, the canonical spelling (ID-4) of a valid ID, else `t` verbatim.
pub fn written_id(release: Option<Release>, t: &str) -> Result<String, String> {
    match release {
        Some(r) => r
            .written_id(t)
            .map_err(|e| format!("LLVM {r} writes no ID for '{t}': {e}")),
        None => Ok(match BundleEntryId::parse_strict(t) {
            Ok(id) => id.canonical(),
            Err(_) => t.to_string(),
        }),
    }
}

/// A binary bundle recipe: entries laid out as a writer does (BIN-11), then
/// header fields overridden and bytes patched to make malformed inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleRecipe {
    /// Entries in header order.
    pub entries: Vec<EntryRecipe>,
    /// Alignment of payloads (default 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub align: u64,
    /// Override of the entry-count field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Fill byte (hex, e.g. `"ff"`) for the padding between payloads instead of zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub padding: Option<String>,
    /// Cut the file to this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncate: Option<u64>,
    /// Bytes appended after the bundle (after truncation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<Data>,
    /// Byte patches, applied last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patch: Vec<Patch>,
}

fn one() -> u64 {
    1
}

fn is_one(v: &u64) -> bool {
    *v == 1
}

/// One entry of a [`BundleRecipe`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryRecipe {
    /// The entry ID.
    pub id: IdSpec,
    /// The payload (default empty).
    #[serde(default)]
    pub payload: Data,
    /// Override of the record's offset field (the payload stays where the layout put it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Override of the record's size field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Override of the record's ID-length field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_len: Option<u64>,
}

/// A byte patch: `hex` bytes or a little-endian `u64` written at `at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Patch {
    /// Absolute position.
    pub at: u64,
    /// Bytes to write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hex: Option<String>,
    /// A little-endian u64 to write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub u64: Option<u64>,
}

impl BundleRecipe {
    /// Build the bytes, IDs spelled for `release`.
    pub fn build(&self, release: Option<Release>) -> Result<Vec<u8>, String> {
        let ids: Vec<Vec<u8>> = self
            .entries
            .iter()
            .map(|e| e.id.resolve(release))
            .collect::<Result<_, _>>()?;
        let payloads: Vec<Vec<u8>> = self
            .entries
            .iter()
            .map(|e| e.payload.bytes())
            .collect::<Result<_, _>>()?;
        let pairs: Vec<(&[u8], &[u8])> = ids
            .iter()
            .zip(&payloads)
            .map(|(i, p)| (i.as_slice(), p.as_slice()))
            .collect();
        let align = self.align.max(1);
        let mut out = binary::write_to_vec(&pairs, align).map_err(|e| e.to_string())?;
        if let Some(fill) = &self.padding {
            let b = decode_hex(fill)?;
            let fill = *b.first().ok_or("empty padding byte")?;
            let sized: Vec<(&[u8], u64)> =
                pairs.iter().map(|(i, p)| (*i, p.len() as u64)).collect();
            let l = binary::layout(&sized, align).map_err(|e| e.to_string())?;
            let mut cur = l.header.len() as u64;
            for (i, &off) in l.offsets.iter().enumerate() {
                for b in &mut out[cur as usize..off as usize] {
                    *b = fill;
                }
                cur = off + l.sizes[i];
            }
        }
        let put = |out: &mut Vec<u8>, at: u64, bytes: &[u8]| -> Result<(), String> {
            let at = at as usize;
            if at + bytes.len() > out.len() {
                out.resize(at + bytes.len(), 0);
            }
            out[at..at + bytes.len()].copy_from_slice(bytes);
            Ok(())
        };
        if let Some(n) = self.count {
            put(&mut out, 24, &n.to_le_bytes())?;
        }
        let mut rec = HEADER_SIZE;
        for (e, id) in self.entries.iter().zip(&ids) {
            if let Some(o) = e.offset {
                put(&mut out, rec, &o.to_le_bytes())?;
            }
            if let Some(s) = e.size {
                put(&mut out, rec + 8, &s.to_le_bytes())?;
            }
            if let Some(l) = e.id_len {
                put(&mut out, rec + 16, &l.to_le_bytes())?;
            }
            rec += RECORD_FIXED_SIZE + id.len() as u64;
        }
        if let Some(t) = self.truncate {
            out.truncate(t as usize);
        }
        if let Some(a) = &self.append {
            out.extend(a.bytes()?);
        }
        for p in &self.patch {
            if let Some(h) = &p.hex {
                put(&mut out, p.at, &decode_hex(h)?)?;
            }
            if let Some(v) = p.u64 {
                put(&mut out, p.at, &v.to_le_bytes())?;
            }
        }
        Ok(out)
    }
}

impl InputSpec {
    /// Build the bytes for an implementation of `release`; `None` for [`InputSpec::Missing`].
    pub fn build(&self, release: Option<Release>) -> Result<Option<Vec<u8>>, String> {
        Ok(Some(match self {
            InputSpec::Utf8(s) => s.as_bytes().to_vec(),
            InputSpec::Hex(h) => decode_hex(h)?,
            InputSpec::Base64(b) => decode_base64(b)?,
            InputSpec::Zeros(n) => Data::Zeros(*n).bytes()?,
            InputSpec::Bundle(b) => b.build(release)?,
            InputSpec::Concat(parts) => {
                let mut v = Vec::new();
                for p in parts {
                    v.extend(
                        p.build(release)?
                            .ok_or("a missing file cannot be concatenated")?,
                    );
                }
                v
            }
            InputSpec::Missing(_) => return Ok(None),
            InputSpec::Text(t) => t.build(release)?,
            InputSpec::Ccob(c) => c.build(release)?,
            InputSpec::Elf(e) => e.build(release)?,
        }))
    }
}

/// The operation a case runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// Bundle inputs into one output.
    Bundle,
    /// Unbundle one input into one output per target.
    Unbundle,
    /// List the IDs of a bundle.
    List,
    /// The ID written for a target (realised by bundling).
    ParseId,
    /// Whether a code object satisfies a requested target (realised by unbundling).
    Compatible,
    /// Bundle `targets`/`inputs` into a compressed bundle (`-compress`; the
    /// native `compress` gets the uncompressed bundle, `{bundled}`).
    Compress,
    /// Decompress one compressed bundle: the native `decompress` writes the
    /// bundle; a `clang-offload-bundler` lists it (adapter `decompress_result`).
    Decompress,
    /// Verify every compressed bundle of a file (the native `verify`).
    Verify,
    /// Package `args.images` into one offload binary file
    /// (`clang-offload-packager -o out --image=…`).
    Package,
    /// Extract images from one input with the `args.images` filters; the
    /// outputs are `args.output_files`, relative to the run directory.
    Unpackage,
    /// Read every offload binary of one input (`llvm-objdump --offloading`;
    /// the strict native reader lists it): success or failure, stdout is
    /// not compared.
    ObjdumpOffloading,
}

impl Op {
    /// The name used in case files and adapter `commands`.
    pub fn name(self) -> &'static str {
        match self {
            Op::Bundle => "bundle",
            Op::Unbundle => "unbundle",
            Op::List => "list",
            Op::ParseId => "parse-id",
            Op::Compatible => "compatible",
            Op::Compress => "compress",
            Op::Decompress => "decompress",
            Op::Verify => "verify",
            Op::Package => "package",
            Op::Unpackage => "unpackage",
            Op::ObjdumpOffloading => "objdump-offloading",
        }
    }
}

/// Options of the operation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// `-type` (default `bc`).
    #[serde(rename = "type", default = "default_type")]
    pub file_type: String,
    /// `-targets`, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// Names of the inputs passed, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    /// Number of outputs (default: 1 for bundle, one per target for unbundle, 0 for list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<usize>,
    /// `-allow-missing-bundles`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub allow_missing_bundles: bool,
    /// `-bundle-align`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle_align: Option<u64>,
    /// `-hip-openmp-compatible`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub hip_openmp_compatible: bool,
    /// `-check-input-archive` (19 and 22, `-type=a`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub check_input_archive: bool,
    /// parse-id: the target whose written ID is wanted (one of `targets`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// compatible: the code object's entry ID (stored verbatim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// compatible: the requested target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// compress: `-compression-level` (native: `--level`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression_level: Option<i32>,
    /// compress: the CCOB version (native `--format-version`; LLVM 22
    /// `COMPRESSED_BUNDLE_FORMAT_VERSION`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format_version: Option<u16>,
    /// compress: `zstd` or `zlib` (native `--method`; no release has an option for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// package / unpackage: the `--image` values, in order; `{input:NAME}`
    /// is replaced by the path of input NAME.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// unpackage: the files the extraction writes, relative to the run
    /// directory (the case's outputs, in order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_files: Vec<String>,
}

fn default_type() -> String {
    "bc".into()
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Args {
    /// Number of outputs for `op`.
    pub fn output_count(&self, op: Op) -> usize {
        self.outputs.unwrap_or(match op {
            Op::Bundle | Op::ParseId | Op::Compress | Op::Decompress | Op::Package => 1,
            Op::Unbundle | Op::Compatible => self.targets.len().max(1),
            Op::Unpackage => self.output_files.len(),
            Op::List | Op::Verify | Op::ObjdumpOffloading => 0,
        })
    }
}

/// A fact about one output file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Fact {
    /// Exactly this UTF-8 text.
    Utf8(String),
    /// Exactly these bytes (hex).
    Hex(String),
    /// Exactly these bytes (base64).
    Base64(String),
    /// This many zero bytes.
    Zeros(u64),
    /// The same bytes as the named input.
    Input(String),
    /// SHA-256 of the content (hex).
    Sha256(String),
    /// The size only.
    Size(u64),
    /// The file must not exist (the value must be `true`).
    Absent(bool),
    /// An ELF file with exactly these sections (after the null section), in order.
    Elf(ElfFact),
}

/// The sections of an ELF output, compared by name (object files written
/// by different tools differ in offsets and string tables, not in names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElfFact {
    /// Every section after the null one, in section header order.
    pub sections: Vec<SectionFact>,
}

/// One section of an [`ElfFact`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SectionFact {
    /// A section with this name.
    Name(String),
    /// A bundle section (OBJ-8, OBJ-10): named `__CLANG_OFFLOAD_BUNDLE__` +
    /// the ID, `SHT_PROGBITS`, flags exactly `SHF_EXCLUDE`, alignment 1,
    /// holding `payload` when given.
    Bundle(BundleSectionFact),
}

/// `{"bundle": id, "payload"?: …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleSectionFact {
    /// The entry ID.
    pub bundle: IdSpec,
    /// The contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<PayloadSpec>,
}

/// A compressed bundle expected as output 0: header fields, and the bundle
/// it decompresses to (verified strictly: sizes and hash, CCOB-4 … CCOB-7).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompressedExpect {
    /// The version field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u16>,
    /// `zstd` or `zlib`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The decompressed bytes exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Data>,
    /// The decompressed bundle, as `expect.bundle` describes one (the default
    /// when `content` is not given: every target with its input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<BundleExpect>,
}

/// The expected bundle of a bundling: entries in order, laid out with `align`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleExpect {
    /// Alignment (default: the case's `bundle_align`, else 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<u64>,
    /// Entries (default: `{"written": target}` with the input of the same index, for every target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<ExpectedEntry>>,
}

/// One entry of an expected bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedEntry {
    /// Its ID.
    pub id: IdSpec,
    /// Its payload: inline data, or `{"input": name}`.
    pub payload: PayloadSpec,
}

/// A payload in an expected bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum PayloadSpec {
    /// UTF-8 text.
    Utf8(String),
    /// Hex bytes.
    Hex(String),
    /// The bytes of the named input.
    Input(String),
}

/// An expected rule failure: a rule ID, or `"*"` for any failure.
pub type RuleRef = String;

/// An expected outcome. Exactly one of `fail`, `outputs`, `bundle`, `list`,
/// `id`, `compatible` is set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The operation fails; an implementation that names rules must name this one (`"*"`: any failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail: Option<RuleRef>,
    /// With `fail`: none of the outputs may exist afterwards (CLI-5).
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_outputs: bool,
    /// Success; output `i` satisfies fact `i`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Vec<Fact>>,
    /// Success; output 0 is exactly this bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<BundleExpect>,
    /// Success; the listing holds exactly these IDs, given in header order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<Vec<IdSpec>>,
    /// parse-id: success, and the target is written as this ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<IdSpec>,
    /// compatible: whether the entry satisfies the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compatible: Option<bool>,
    /// Success; output 0 is a compressed bundle with these properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compressed: Option<CompressedExpect>,
}

impl Expect {
    fn kinds(&self) -> usize {
        [
            self.fail.is_some(),
            self.outputs.is_some(),
            self.bundle.is_some(),
            self.list.is_some(),
            self.id.is_some(),
            self.compatible.is_some(),
            self.compressed.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count()
    }
}

/// What a documented divergence looks like when it happens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum NoteOutcome {
    /// `"crash"` (signal, fatal error or memory disclosure), `"timeout"`,
    /// `"success"` (any success), `"failure"` (any non-crash failure) or `"any"`.
    Word(String),
    /// A complete alternative expectation.
    Expect(Box<Expect>),
}

/// A documented divergence of LLVM releases from the spec expectation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownDivergence {
    /// The releases that behave so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub releases: Vec<u32>,
    /// Implementations (adapter names, globs) that behave so, whatever their
    /// release: for behaviour of an implementation rather than of a release
    /// (e.g. the native reader, which has no `-type`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adapters: Vec<String>,
    /// The spec rule they deviate from.
    pub rule: String,
    /// What they do instead.
    pub outcome: NoteOutcome,
    /// Whether offload-kit's release profile reproduces this on purpose, so
    /// that it also excuses offload-kit adapters of these releases. Crashes,
    /// hangs and memory disclosures are never reproduced.
    #[serde(default, skip_serializing_if = "is_false")]
    pub profile: bool,
    /// Explanation.
    pub note: String,
    /// Where it is documented (research file and section, LLVM test).
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// A bug of offload-kit that a case exposes and that is reported but not
/// fixed yet. The implementations named fail the case as before (the result
/// is shown as `bug`, not as a pass, and is not a new divergence); when one
/// of them passes, the run fails until the entry is removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownBug {
    /// The offload-kit adapters (names, globs) that have the bug.
    pub adapters: Vec<String>,
    /// What is wrong: where, what it does, what the spec requires.
    pub note: String,
    /// Where it is reported.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// One conformance case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Path-derived ID (`group/name`), filled on loading.
    #[serde(skip)]
    pub id: String,
    /// The file it was loaded from.
    #[serde(skip)]
    pub path: PathBuf,
    /// JSON Schema reference (ignored).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// One-line description.
    pub title: String,
    /// Where the case comes from (LLVM test, research section).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Spec rules exercised.
    pub rules: Vec<String>,
    /// Named input recipes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, InputSpec>,
    /// The operation.
    pub op: Op,
    /// Its options.
    #[serde(default)]
    pub args: Args,
    /// The spec's expected outcome.
    pub expect: Expect,
    /// Time limit per run for this case (default: the adapter's); for
    /// cases where a release is known to hang.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u32>,
    /// Documented divergences of LLVM releases.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_divergence: Vec<KnownDivergence>,
    /// Reported offload-kit bugs this case exposes (expected failures).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_bugs: Vec<KnownBug>,
}

impl Case {
    /// Parse a case from JSON text.
    pub fn from_json(text: &str, id: &str) -> Result<Case, String> {
        let mut c: Case = serde_json::from_str(text).map_err(|e| format!("{id}: {e}"))?;
        c.id = id.to_string();
        c.check().map_err(|e| format!("{id}: {e}"))?;
        Ok(c)
    }

    /// Consistency checks beyond the JSON shape.
    pub fn check(&self) -> Result<(), String> {
        if self.rules.is_empty() {
            return Err("a case must name the spec rules it exercises".into());
        }
        for r in &self.rules {
            if crate::rules::by_id(r).is_none() {
                return Err(format!("unknown rule '{r}'"));
            }
        }
        check_expect(&self.expect, "expect")?;
        for (i, n) in self.known_divergence.iter().enumerate() {
            if crate::rules::by_id(&n.rule).is_none() {
                return Err(format!("known_divergence[{i}]: unknown rule '{}'", n.rule));
            }
            if n.releases.is_empty() && n.adapters.is_empty() {
                return Err(format!(
                    "known_divergence[{i}]: give the releases or the adapters it applies to"
                ));
            }
            for r in &n.releases {
                if r.to_string().parse::<Release>().is_err() {
                    return Err(format!("known_divergence[{i}]: unknown release {r}"));
                }
            }
            match &n.outcome {
                NoteOutcome::Word(w) => {
                    if !["crash", "timeout", "success", "failure", "any"].contains(&w.as_str()) {
                        return Err(format!("known_divergence[{i}]: unknown outcome '{w}'"));
                    }
                }
                NoteOutcome::Expect(e) => check_expect(e, "known_divergence outcome")?,
            }
        }
        for (i, b) in self.known_bugs.iter().enumerate() {
            if b.adapters.is_empty() {
                return Err(format!(
                    "known_bugs[{i}]: name the adapters that have the bug"
                ));
            }
        }
        for name in &self.args.inputs {
            if !self.inputs.contains_key(name) {
                return Err(format!(
                    "args.inputs names '{name}', which is not in inputs"
                ));
            }
        }
        match self.op {
            Op::ParseId => {
                let id = self.args.id.as_ref().ok_or("parse-id needs args.id")?;
                if !self.args.targets.contains(id) {
                    return Err("parse-id: args.targets must contain args.id".into());
                }
            }
            Op::Compatible => {
                if self.args.entry.is_none() || self.args.request.is_none() {
                    return Err("compatible needs args.entry and args.request".into());
                }
            }
            Op::List => {
                if self.args.inputs.is_empty() {
                    return Err("list needs an input".into());
                }
            }
            Op::Decompress | Op::Verify | Op::Unpackage | Op::ObjdumpOffloading => {
                if self.args.inputs.len() != 1 {
                    return Err(format!("{} needs exactly one input", self.op.name()));
                }
            }
            Op::Compress => {
                if let Some(m) = &self.args.method {
                    if m != "zstd" && m != "zlib" {
                        return Err(format!("args.method '{m}': zstd or zlib"));
                    }
                }
            }
            Op::Package => {
                if !self.args.output_files.is_empty() {
                    return Err("package writes one output; output_files is for unpackage".into());
                }
            }
            Op::Bundle | Op::Unbundle => {}
        }
        for f in &self.args.output_files {
            if f.is_empty() || f.contains('/') || f.starts_with('.') {
                return Err(format!(
                    "output_files: '{f}' must be a plain name in the run directory"
                ));
            }
        }
        Ok(())
    }
}

fn check_expect(e: &Expect, what: &str) -> Result<(), String> {
    if e.kinds() != 1 {
        return Err(format!(
            "{what}: exactly one of fail, outputs, bundle, list, id, compatible, compressed must be given"
        ));
    }
    if let Some(r) = &e.fail {
        if r != "*" && crate::rules::by_id(r).is_none() {
            return Err(format!("{what}: unknown rule '{r}'"));
        }
    }
    if e.no_outputs && e.fail.is_none() {
        return Err(format!("{what}: no_outputs goes with fail"));
    }
    Ok(())
}

/// Load every `*.json` under `dir` (recursively), sorted by ID.
pub fn load_corpus(dir: &Path) -> Result<Vec<Case>, Vec<String>> {
    let mut files = Vec::new();
    walk(dir, &mut files).map_err(|e| vec![format!("{}: {e}", dir.display())])?;
    files.sort();
    let mut cases = Vec::new();
    let mut errs = Vec::new();
    for f in files {
        let rel = f.strip_prefix(dir).unwrap_or(&f);
        let id = rel
            .with_extension("")
            .to_string_lossy()
            .replace(std::path::MAIN_SEPARATOR, "/");
        match std::fs::read_to_string(&f) {
            Ok(text) => match Case::from_json(&text, &id) {
                Ok(mut c) => {
                    c.path = f.clone();
                    cases.push(c);
                }
                Err(e) => errs.push(e),
            },
            Err(e) => errs.push(format!("{}: {e}", f.display())),
        }
    }
    if errs.is_empty() {
        Ok(cases)
    } else {
        Err(errs)
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    Ok(())
}

/// Decode hex digits, ignoring whitespace.
pub fn decode_hex(h: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = h.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if digits.len() % 2 != 0 {
        return Err(format!("odd number of hex digits in '{h}'"));
    }
    digits
        .chunks(2)
        .map(|p| {
            let s = std::str::from_utf8(p).map_err(|e| e.to_string())?;
            u8::from_str_radix(s, 16).map_err(|_| format!("bad hex '{s}'"))
        })
        .collect()
}

/// Encode bytes as lowercase hex.
pub fn encode_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Decode standard base64 (padding optional, whitespace ignored).
pub fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes() {
        if c.is_ascii_whitespace() || c == b'=' {
            continue;
        }
        let v = B64
            .iter()
            .position(|&x| x == c)
            .ok_or_else(|| format!("bad base64 character '{}'", c as char))? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// Encode standard base64 with padding.
pub fn encode_base64(b: &[u8]) -> String {
    let mut s = String::new();
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                s.push(B64[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip() {
        for s in [&b""[..], b"a", b"ab", b"abc", b"abcd", b"\x00\xff\x10"] {
            assert_eq!(decode_base64(&encode_base64(s)).unwrap(), s);
        }
        assert_eq!(encode_base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn text_recipe_frames_parts() {
        let r: InputSpec = serde_json::from_str(
            r#"{"text": {"type": "ll", "parts": [
                {"entry": {"written": "host-x86_64-unknown-linux-gnu"}, "payload": {"utf8": "h\n"}},
                {"start": "hip-amdgcn-amd-amdhsa--gfx906"}, {"utf8": "d"}], "crlf": true, "skip": 2}}"#,
        )
        .unwrap();
        let want = "; __CLANG_OFFLOAD_BUNDLE____START__ host-x86_64-unknown-linux-gnu\r\nh\r\n\r\n; __CLANG_OFFLOAD_BUNDLE____END__ host-x86_64-unknown-linux-gnu\r\n\r\n; __CLANG_OFFLOAD_BUNDLE____START__ hip-amdgcn-amd-amdhsa--gfx906\r\nd";
        assert_eq!(
            r.build(Some(Release::L14)).unwrap().unwrap(),
            want.as_bytes()
        );
        let l22 = r.build(Some(Release::L22)).unwrap().unwrap();
        assert!(String::from_utf8(l22).unwrap().contains("linux-gnu-\r\n"));
    }

    #[test]
    fn ccob_recipe_overrides_fields() {
        let r: InputSpec = serde_json::from_str(
            r#"{"ccob": {"content": {"utf8": "not a bundle, but bytes to compress"}, "version": 2,
                "trim_data": 3, "uncompressed_size_delta": -1, "hash": "0102030405060708"}}"#,
        )
        .unwrap();
        let b = r.build(None).unwrap().unwrap();
        let h = ccob::parse_header(&b, 0).unwrap();
        assert_eq!((h.version, h.total_size), (2, Some(b.len() as u64)));
        assert_eq!(h.uncompressed_size, 34);
        assert_eq!(h.hash, [1, 2, 3, 4, 5, 6, 7, 8]);
        let full: InputSpec = serde_json::from_str(
            r#"{"ccob": {"content": {"utf8": "not a bundle, but bytes to compress"}, "version": 2}}"#,
        )
        .unwrap();
        assert_eq!(full.build(None).unwrap().unwrap().len(), b.len() + 3);
    }

    #[test]
    fn elf_recipe_appends_sections() {
        let host = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/conformance/fixtures/host-x86_64.o"
        ))
        .unwrap();
        let r = ElfRecipe {
            host: Box::new(InputSpec::Base64(encode_base64(&host))),
            sections: vec![
                ElfSectionRecipe {
                    name: None,
                    bundle: Some(IdSpec::Written {
                        written: "host-x86_64-unknown-linux-gnu".into(),
                    }),
                    data: Some(Box::new(InputSpec::Hex("00".into()))),
                    flags: None,
                    sh_type: None,
                    align: None,
                    size: None,
                    sh_name: None,
                },
                ElfSectionRecipe {
                    name: Some(".hip_fatbin".into()),
                    bundle: None,
                    data: Some(Box::new(InputSpec::Utf8("FATBIN".into()))),
                    flags: None,
                    sh_type: Some(elf::SHT_NOBITS),
                    align: Some(4096),
                    size: Some(99),
                    sh_name: None,
                },
            ],
            truncate: None,
            patch: vec![],
        };
        let b = r.build(Some(Release::L19)).unwrap();
        let e = Elf::parse(&b).unwrap();
        let n = e.sections.len();
        let (bun, fat) = (&e.sections[n - 2], &e.sections[n - 1]);
        assert_eq!(
            bun.name,
            b"__CLANG_OFFLOAD_BUNDLE__host-x86_64-unknown-linux-gnu-"
        );
        assert_eq!(
            (bun.sh_type, bun.flags, bun.align),
            (elf::SHT_PROGBITS, elf::SHF_EXCLUDE, 1)
        );
        assert_eq!(bun.data(&b), Some(&[0u8][..]));
        assert_eq!(fat.name, b".hip_fatbin");
        assert_eq!(
            (fat.sh_type, fat.flags, fat.align, fat.size),
            (elf::SHT_NOBITS, elf::SHF_ALLOC, 4096, 99)
        );
        assert_eq!(fat.offset % 4096, 0);
    }

    #[test]
    fn recipe_matches_research_good_bin() {
        let r = BundleRecipe {
            entries: vec![
                EntryRecipe {
                    id: IdSpec::Written {
                        written: "host-x86_64-unknown-linux-gnu".into(),
                    },
                    payload: Data::Utf8("HOSTDATA".into()),
                    offset: None,
                    size: None,
                    id_len: None,
                },
                EntryRecipe {
                    id: IdSpec::Literal("hip-amdgcn-amd-amdhsa--gfx906".into()),
                    payload: Data::Utf8("DEVDATA".into()),
                    offset: None,
                    size: None,
                    id_len: None,
                },
            ],
            align: 1,
            count: None,
            padding: None,
            truncate: None,
            append: None,
            patch: vec![],
        };
        let good = "5f5f434c414e475f4f46464c4f41445f42554e444c455f5f02000000000000008b0000000000000008000000000000001e00000000000000686f73742d7838365f36342d756e6b6e6f776e2d6c696e75782d676e752d930000000000000007000000000000001d000000000000006869702d616d6467636e2d616d642d616d646873612d2d676678393036484f53544441544144455644415441";
        assert_eq!(encode_hex(&r.build(Some(Release::L22)).unwrap()), good);
        assert_eq!(encode_hex(&r.build(None).unwrap()), good);
        assert_eq!(r.build(Some(Release::L14)).unwrap().len(), 153);
    }
}
