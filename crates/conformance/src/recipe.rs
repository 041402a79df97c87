//! Input recipes: how a case describes the bytes of an input file (inline
//! data, binary, text and compressed bundles, ELF objects) and builds them
//! for an implementation, entry IDs spelled as its release writes them.
//!
//! # Example
//!
//! A text-bundle recipe whose ID is spelled as each implementation writes it.
//!
//! ```
//! use offload_kit_llvm::bundle::text;
//! use offload_kit_conformance::recipe::InputSpec;
//! use offload_kit_llvm::Release;
//!
//! let spec: InputSpec = serde_json::from_str(r#"{"text": {"type": "s", "parts": [
//!     {"entry": {"written": "openmp-nvptx64-nvidia-cuda--sm_70"}, "payload": {"utf8": "ptx"}}]}}"#).unwrap();
//! let id_for = |release: Option<Release>| {
//!     let bytes = spec.build(release).unwrap().unwrap();
//!     text::parse_strict(&bytes, 0, "#").unwrap().entries[0].id_str().into_owned()
//! };
//! assert_eq!(id_for(Some(Release::L16)), "openmp-nvptx64-nvidia-cuda--sm_70"); // verbatim
//! assert_eq!(id_for(Some(Release::L22)), "openmp-nvptx64-nvidia-cuda-unknown-sm_70");
//! assert_eq!(id_for(None), "openmp-nvptx64-nvidia-cuda-unknown-sm_70"); // the spec's ID-4
//! ```

mod elf;

pub use elf::{ElfRecipe, ElfSectionRecipe};

use super::codec::is_false;
use super::codec::{decode_base64, decode_hex};
use crate::bundle::{binary, ccob, text};
use crate::format::bundle::{HEADER_SIZE, RECORD_FIXED_SIZE};
use crate::format::ccob::{Field, Layout as CcobLayout};
use crate::id::BundleEntryId;
use crate::profile::Release;
use serde::{Deserialize, Serialize};

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
            Data::Zeros(n) => Ok(vec![0; zeros_len(*n)? as usize]),
        }
    }
}

/// `{"zeros": n}`'s length, at most 1 GiB.
fn zeros_len(n: u64) -> Result<u64, String> {
    if n > 1 << 30 {
        return Err(format!("{{\"zeros\": {n}}} is larger than 1 GiB"));
    }
    Ok(n)
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

/// `x` in field `f` of a version `v` header; an error when it does not fit.
fn field_bytes(f: Field, x: u64, v: u16) -> Result<Vec<u8>, String> {
    f.encode(x).ok_or_else(|| {
        format!(
            "{x} does not fit the {}-bit field of version {v}",
            8 * f.width
        )
    })
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
        let layout = CcobLayout::of(v).ok_or_else(|| format!("unknown CCOB version {v}"))?;
        let hsize = layout.size as usize;
        if let Some(n) = self.trim_data {
            let keep = out.len().saturating_sub(n as usize).max(hsize);
            out.truncate(keep);
            if let Some(f) = layout.total_size {
                let total = out.len() as u64;
                put(&mut out, f.at, &total.to_le_bytes()[..f.width as usize]);
            }
        }
        if let Some(d) = self.uncompressed_size_delta {
            let now = content.len() as i64 + d;
            let now = u64::try_from(now).map_err(|_| "the uncompressed size would be negative")?;
            let f = layout.uncompressed_size;
            put(&mut out, f.at, &field_bytes(f, now, v)?);
        }
        if let Some(x) = self.version_field {
            put(&mut out, 4, &x.to_le_bytes());
        }
        if let Some(x) = self.method_field {
            put(&mut out, 6, &x.to_le_bytes());
        }
        if let Some(t) = self.total_size {
            let f = layout
                .total_size
                .ok_or(format!("version {v} has no total size field"))?;
            put(&mut out, f.at, &field_bytes(f, t, v)?);
        }
        if let Some(u) = self.uncompressed_size {
            let f = layout.uncompressed_size;
            put(&mut out, f.at, &field_bytes(f, u, v)?);
        }
        if let Some(h) = &self.hash {
            let b = decode_hex(h)?;
            if b.len() != 8 {
                return Err("the hash override must be 8 bytes".into());
            }
            put(&mut out, layout.hash, &b);
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
            .map_err(|e| format!("LLVM {r} writes no ID for '{t}': {}", e.message)),
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

impl EntryRecipe {
    /// An entry whose record is as the layout makes it (nothing overridden).
    pub fn new(id: IdSpec, payload: Data) -> EntryRecipe {
        EntryRecipe {
            id,
            payload,
            offset: None,
            size: None,
            id_len: None,
        }
    }
}

impl BundleRecipe {
    /// The bundle a writer lays out for `entries` with payloads aligned to
    /// `align`: no header field overridden, nothing cut, appended or patched.
    pub fn plain(entries: Vec<EntryRecipe>, align: u64) -> BundleRecipe {
        BundleRecipe {
            entries,
            align,
            count: None,
            padding: None,
            truncate: None,
            append: None,
            patch: vec![],
        }
    }

    /// Build the bytes, IDs spelled for `release`.
    pub fn build(&self, release: Option<Release>) -> Result<Vec<u8>, String> {
        let ids: Vec<Vec<u8>> = self
            .entries
            .iter()
            .map(|e| e.id.resolve(release))
            .collect::<Result<_, _>>()?;
        // Zero payloads are not made: the bundle is allocated zeroed and
        // they are left as its untouched pages, which cost no memory when
        // read (a 270 MiB case is compressed in a few MiB).
        let payloads: Vec<Vec<u8>> = self
            .entries
            .iter()
            .map(|e| match e.payload {
                Data::Zeros(_) => Ok(Vec::new()),
                _ => e.payload.bytes(),
            })
            .collect::<Result<_, _>>()?;
        let sized: Vec<(&[u8], u64)> = ids
            .iter()
            .zip(self.entries.iter().zip(&payloads))
            .map(|(i, (e, p))| match e.payload {
                Data::Zeros(n) => zeros_len(n).map(|n| (i.as_slice(), n)),
                _ => Ok((i.as_slice(), p.len() as u64)),
            })
            .collect::<Result<_, _>>()?;
        let align = self.align.max(1);
        let l = binary::layout(&sized, align).map_err(|e| e.to_string())?;
        let total = usize::try_from(l.total).map_err(|_| "the bundle is too large".to_string())?;
        let mut out = vec![0u8; total];
        out[..l.header.len()].copy_from_slice(&l.header);
        for (p, &at) in payloads.iter().zip(&l.offsets) {
            out[at as usize..at as usize + p.len()].copy_from_slice(p);
        }
        if let Some(fill) = &self.padding {
            let b = decode_hex(fill)?;
            let fill = *b.first().ok_or("empty padding byte")?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::encode_hex;

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
    fn recipe_matches_research_good_bin() {
        let host = IdSpec::Written {
            written: "host-x86_64-unknown-linux-gnu".into(),
        };
        let device = IdSpec::Literal("hip-amdgcn-amd-amdhsa--gfx906".into());
        let r = BundleRecipe::plain(
            vec![
                EntryRecipe::new(host, Data::Utf8("HOSTDATA".into())),
                EntryRecipe::new(device, Data::Utf8("DEVDATA".into())),
            ],
            1,
        );
        let good = "5f5f434c414e475f4f46464c4f41445f42554e444c455f5f02000000000000008b0000000000000008000000000000001e00000000000000686f73742d7838365f36342d756e6b6e6f776e2d6c696e75782d676e752d930000000000000007000000000000001d000000000000006869702d616d6467636e2d616d642d616d646873612d2d676678393036484f53544441544144455644415441";
        assert_eq!(encode_hex(&r.build(Some(Release::L22)).unwrap()), good);
        assert_eq!(encode_hex(&r.build(None).unwrap()), good);
        assert_eq!(r.build(Some(Release::L14)).unwrap().len(), 153);
    }

    #[test]
    fn zero_payloads_lay_out_as_the_writer_does() {
        let id = |t: &str| IdSpec::Literal(t.into());
        for align in [1, 8, 4096] {
            let r = BundleRecipe::plain(
                vec![
                    EntryRecipe::new(id("host-x86_64-unknown-linux-gnu-"), Data::Utf8("H".into())),
                    EntryRecipe::new(id("hip-amdgcn-amd-amdhsa--gfx906"), Data::Zeros(3 << 20)),
                    EntryRecipe::new(
                        id("hip-amdgcn-amd-amdhsa--gfx908"),
                        Data::Hex("0102".into()),
                    ),
                    EntryRecipe::new(id("hip-amdgcn-amd-amdhsa--gfx90a"), Data::Zeros(0)),
                ],
                align,
            );
            let zeros = vec![0u8; 3 << 20];
            let want = binary::write_to_vec(
                &[
                    (b"host-x86_64-unknown-linux-gnu-", b"H"),
                    (b"hip-amdgcn-amd-amdhsa--gfx906", &zeros),
                    (b"hip-amdgcn-amd-amdhsa--gfx908", &[1, 2]),
                    (b"hip-amdgcn-amd-amdhsa--gfx90a", b""),
                ],
                align,
            )
            .unwrap();
            assert!(r.build(None).unwrap() == want, "align {align}");
        }
    }
}
