//! The case format: inputs built from recipes ([`super::recipe`]), an
//! operation with its options, the expected outcome per spec rule, and
//! documented divergences of LLVM releases. `conformance/README.md`
//! describes it for authors and `conformance/case.schema.json` is its JSON
//! Schema.
//!
//! # Example
//!
//! A case parsed from JSON, and one rejected by the checks.
//!
//! ```
//! use offload_kit_conformance::case::{Case, Op};
//!
//! let json = r#"{
//!   "title": "hip and hipv4 are the same kind",
//!   "rules": ["COMPAT-1"],
//!   "op": "compatible",
//!   "args": {"entry": "hip-amdgcn-amd-amdhsa--gfx906", "request": "hipv4-amdgcn-amd-amdhsa--gfx906"},
//!   "expect": {"compatible": true}
//! }"#;
//! let case = Case::from_json(json, "compatible/hip-hipv4").unwrap();
//! assert_eq!((case.id.as_str(), case.op), ("compatible/hip-hipv4", Op::Compatible));
//! assert_eq!(case.expect.compatible, Some(true));
//! // Beyond its JSON shape, a case must cite rules that exist.
//! let bad = json.replace("COMPAT-1", "COMPAT-9");
//! assert!(Case::from_json(&bad, "x").unwrap_err().contains("unknown rule 'COMPAT-9'"));
//! ```

use super::codec::is_false;
use super::recipe::{Data, IdSpec, InputSpec};
use crate::profile::Release;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    /// Find the code objects of one input (a host file with `.hip_fatbin`
    /// or bundle sections, a bundle): each entry's ID and, when the
    /// implementation reports them, its offset and size. How runtimes and
    /// ROCm's tools locate code objects (`llvm-readobj --offloading`,
    /// `roc-obj-ls`); compared as a multiset.
    Locate,
    /// Ask for the code object a GPU runtime would load for each of
    /// `args.requests` (full target IDs without the offload kind, as the
    /// HIP runtime asks comgr): each answer must be an entry the spec finds
    /// compatible (COMPAT-1..3, asked as a `hip` target), or none when no
    /// entry is.
    Lookup,
    /// Extract the bytes a code object URI names (`args.uri`, `{path}`
    /// being the input's path percent-encoded as spec/uri.md URI-2 writes
    /// it, `{raw_path}` the path as it is): one output, the bytes. How
    /// `roc-obj-extract` and `offload-kit extract URI` are measured.
    ExtractUri,
    /// Ask for the code object ROCm's runtime loads for a HIPK host's
    /// wrapper (spec/kpack.md HIPK-2) for each of `args.requests` (agent
    /// ISAs): every input is written under its own name (the host first,
    /// its archives beside it, as its search paths name them) and the host
    /// is passed; each answer is `FOUND <archive> <key> <arch> <size>` or
    /// the runtime's error (`ARCHIVE_NOT_FOUND`, `ARCH_NOT_FOUND`,
    /// `KERNEL_NOT_FOUND`).
    KpackLookup,
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
            Op::Locate => "locate",
            Op::Lookup => "lookup",
            Op::KpackLookup => "kpack-lookup",
            Op::ExtractUri => "extract-uri",
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
    /// lookup: the GPUs asked for, as full target IDs without offload kind
    /// (`amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<String>,
    /// extract-uri: the URI template (`{path}`, `{raw_path}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// extract-uri: the input's file name in the run directory (a plain
    /// name, to put `&`, `#`, `,`, `'` or spaces in the path); default
    /// `in0-<input name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
}

fn default_type() -> String {
    "bc".into()
}

impl Args {
    /// Number of outputs for `op`.
    pub fn output_count(&self, op: Op) -> usize {
        self.outputs.unwrap_or(match op {
            Op::Bundle
            | Op::ParseId
            | Op::Compress
            | Op::Decompress
            | Op::Package
            | Op::ExtractUri => 1,
            Op::Unbundle | Op::Compatible => self.targets.len().max(1),
            Op::Unpackage => self.output_files.len(),
            Op::List
            | Op::Verify
            | Op::ObjdumpOffloading
            | Op::Locate
            | Op::Lookup
            | Op::KpackLookup => 0,
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
    /// locate: success, and these entries are found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locate: Option<Vec<Located>>,
    /// lookup: success, and per request (in order) the entries that may be
    /// answered; an empty list means the answer must be "none".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookup: Option<Vec<LookupExpect>>,
    /// kpack-lookup: success, and per request (in order) the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kpack_lookup: Option<Vec<KpackAnswer>>,
}

/// The answer to one `kpack-lookup` request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KpackAnswer {
    /// The request (an agent ISA).
    pub request: String,
    /// `FOUND <archive input> <key> <arch> <size>`, or the runtime's error.
    pub answer: String,
}

/// The acceptable answers to one `lookup` request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookupExpect {
    /// The request.
    pub request: String,
    /// `(offset, size)` of each compatible entry (offsets inside the input).
    pub candidates: Vec<(u64, u64)>,
}

/// One code object found by `locate`: its ID, and where it is (for an entry
/// of a compressed bundle, the offset inside the decompressed bundle, as
/// `offload-kit list` and `llvm-readobj --offloading` report it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Located {
    /// The entry ID.
    pub id: String,
    /// Offset of the code object.
    pub offset: u64,
    /// Its size.
    pub size: u64,
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
            self.locate.is_some(),
            self.lookup.is_some(),
            self.kpack_lookup.is_some(),
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
    pub releases: Vec<Release>,
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
            Op::Decompress
            | Op::Verify
            | Op::Unpackage
            | Op::ObjdumpOffloading
            | Op::Locate
            | Op::Lookup => {
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
            Op::ExtractUri => {
                if self.args.inputs.len() != 1 || self.args.uri.is_none() {
                    return Err("extract-uri needs exactly one input and args.uri".into());
                }
            }
            Op::KpackLookup => {
                if self.args.inputs.is_empty() || self.args.requests.is_empty() {
                    return Err(
                        "kpack-lookup needs the host (then its archives) and requests".into(),
                    );
                }
                if let Some(n) = (self.args.inputs.iter())
                    .find(|n| n.is_empty() || n.contains('/') || n.starts_with('.'))
                {
                    return Err(format!(
                        "kpack-lookup input '{n}' must be a plain file name"
                    ));
                }
            }
            Op::Bundle | Op::Unbundle => {}
        }
        if let Some(f) = &self.args.file_name {
            if self.op != Op::ExtractUri {
                return Err("args.file_name is for extract-uri only".into());
            }
            if f.is_empty() || f.contains('/') || f.starts_with('.') || f.contains('\0') {
                return Err(format!(
                    "file_name: '{f}' must be a plain name in the run directory"
                ));
            }
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
