//! The case format: inputs built from recipes, an operation with its
//! options, the expected outcome per spec rule, and documented divergences
//! of LLVM releases. `conformance/README.md` describes it for authors and
//! `conformance/case.schema.json` is its JSON Schema.

use crate::bundle::binary;
use crate::format::bundle::{HEADER_SIZE, RECORD_FIXED_SIZE};
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
    /// parse-id: the target whose written ID is wanted (one of `targets`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// compatible: the code object's entry ID (stored verbatim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// compatible: the requested target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
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
            Op::Bundle | Op::ParseId => 1,
            Op::Unbundle | Op::Compatible => self.targets.len().max(1),
            Op::List => 0,
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
    pub releases: Vec<u32>,
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
    /// Documented divergences of LLVM releases.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_divergence: Vec<KnownDivergence>,
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
            Op::Bundle | Op::Unbundle => {}
        }
        Ok(())
    }
}

fn check_expect(e: &Expect, what: &str) -> Result<(), String> {
    if e.kinds() != 1 {
        return Err(format!(
            "{what}: exactly one of fail, outputs, bundle, list, id, compatible must be given"
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
