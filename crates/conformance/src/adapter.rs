//! Implementations as adapters: one JSON file says how to run an
//! implementation for each operation, how to read its listing and its
//! errors, and which LLVM release's spelling and order it follows.
//!
//! # Example
//!
//! An adapter read from JSON, and the command it runs for `list`.
//!
//! ```
//! use offload_kit_conformance::adapter::{cited_rules, Adapter, Invocation};
//! use offload_kit_conformance::case::Op;
//! use std::path::Path;
//!
//! let a: Adapter = serde_json::from_str(r#"{"name": "my-bundler", "role": "subject",
//!     "program": "/opt/bin/bundler",
//!     "commands": {"list": ["{program}", "-type={type}", "{inputs}", "-list"]}}"#).unwrap();
//! let inv = Invocation { file_type: "bc".into(), inputs: vec!["in.bc".into()], ..Default::default() };
//! let ok = Path::new("offload-kit");
//! assert_eq!(a.argv(Op::List, &inv, ok).unwrap(), ["/opt/bin/bundler", "-type=bc", "-input=in.bc", "-list"]);
//! assert!(a.argv(Op::Bundle, &inv, ok).is_err()); // no `bundle` command: n/a
//! assert_eq!(a.parse_listing(b"host-x86_64-unknown-linux-gnu-\n").unwrap(), ["host-x86_64-unknown-linux-gnu-"]);
//! assert_eq!(cited_rules("bad bundle (at offset 0x20, rule BIN-5)"), ["BIN-5"]);
//! ```

use super::case::Op;
use crate::profile::Release;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Whether an adapter's results gate the exit status as offload-kit's do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The implementation under test (offload-kit): only divergences its
    /// release profile reproduces on purpose are excused; crashes never.
    Subject,
    /// A reference implementation (LLVM): every documented divergence of its
    /// release is excused; its crashes are findings.
    Reference,
    /// A third-party implementation (llvm-readobj, ROCm's tools, comgr):
    /// measured against the spec; what it gets wrong is a finding, listed
    /// apart, and never fails the run.
    Measured,
}

/// How `-list` output is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ListOrder {
    /// As a set.
    Set,
    /// In header order (BIN-12).
    Header,
    /// In the release's `StringMap` order (`Release::stringmap_order`).
    Stringmap,
}

/// What the `decompress` command of an adapter produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DecompressResult {
    /// The decompressed bundle, written to `{output}` (the native `decompress`).
    Output,
    /// A listing of the decompressed bundle on stdout (`clang-offload-bundler
    /// -list` of the compressed input): compared with the IDs of the
    /// expected bundle.
    Listing,
}

fn default_decompress_result() -> DecompressResult {
    DecompressResult::Output
}

/// How file arguments are passed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FileArgs {
    /// One argument per file; `{}` is the path.
    Each {
        /// Template, e.g. `-input={}`.
        each: String,
    },
    /// One argument for all files, joined; `{}` is the joined list.
    Joined {
        /// Template, e.g. `-inputs={}`.
        joined: String,
        /// Separator (default `,`).
        #[serde(default = "comma")]
        separator: String,
    },
}

fn comma() -> String {
    ",".into()
}

/// How the listing of the `list` operation is read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Listing {
    /// `lines` (one ID per stdout line) or `json` (an array of objects).
    pub format: String,
    /// json: JSON pointer of the array (e.g. `/entries`).
    #[serde(default)]
    pub pointer: Option<String>,
    /// json: field of each element holding the ID.
    #[serde(default)]
    pub field: Option<String>,
}

impl Default for Listing {
    fn default() -> Self {
        Listing {
            format: "lines".into(),
            pointer: None,
            field: None,
        }
    }
}

/// How the output of `locate` is read: one regular expression per stdout
/// line with named groups `id` and, when the tool reports them, `offset`
/// and `size` (decimal); or a JSON array of objects with `id`, `offset`,
/// `size` at a pointer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocateFormat {
    /// The line pattern (lines that do not match are ignored).
    #[serde(default)]
    pub pattern: Option<String>,
    /// JSON pointer of the array (e.g. `/entries`).
    #[serde(default)]
    pub json: Option<String>,
}

/// One code object a `locate` run reported.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Found {
    /// Its ID.
    pub id: String,
    /// Offset and size, when the tool reports them.
    pub at: Option<(u64, u64)>,
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at {
            Some((o, s)) => write!(f, "{} @{o}+{s}", self.id),
            None => f.write_str(&self.id),
        }
    }
}

/// A message pattern that identifies the spec rule an error reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageRule {
    /// Substring of stderr.
    pub contains: String,
    /// Rules it reports.
    pub rules: Vec<String>,
}

/// A message table file (`conformance/messages/*.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageTable {
    /// What the table is for.
    #[serde(default)]
    pub description: String,
    /// Patterns.
    pub messages: Vec<MessageRule>,
}

/// An implementation adapter (`conformance/adapters/*.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Adapter {
    /// Name used in reports and `--impl`.
    pub name: String,
    /// What it is.
    #[serde(default)]
    pub description: String,
    /// Subject or reference.
    pub role: Role,
    /// The LLVM release whose ID spelling and `-list` order it follows.
    #[serde(default, with = "release_opt")]
    pub release: Option<Release>,
    /// The program (`{offload_kit}` is the runner's offload-kit binary,
    /// `{adapter_dir}` the adapter file's directory).
    pub program: String,
    /// Run by default (without `--impl`).
    #[serde(default = "yes")]
    pub default: bool,
    /// Per-run time limit (default 10 s).
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    /// Command template per operation (`bundle`, `unbundle`, `list`,
    /// `compress`, `decompress`, `verify`; `parse-id` and `compatible` are
    /// run through `bundle` and `unbundle`); elements `{inputs}`,
    /// `{outputs}` and `{options}` expand to several arguments.
    pub commands: BTreeMap<String, Vec<String>>,
    /// What the `decompress` command produces.
    #[serde(default = "default_decompress_result")]
    pub decompress_result: DecompressResult,
    /// How inputs are passed.
    #[serde(default = "default_inputs")]
    pub inputs: FileArgs,
    /// How outputs are passed.
    #[serde(default = "default_outputs")]
    pub outputs: FileArgs,
    /// Option templates; an option a case sets that is missing here makes the case n/a.
    #[serde(default)]
    pub options: BTreeMap<String, Vec<String>>,
    /// Listing format.
    #[serde(default)]
    pub listing: Listing,
    /// How `-list` output is compared.
    #[serde(default = "default_order")]
    pub list_order: ListOrder,
    /// Message table file under `conformance/messages/` (without `.json`).
    #[serde(default)]
    pub messages: Option<String>,
    /// Extra message patterns.
    #[serde(default)]
    pub error_rules: Vec<MessageRule>,
    /// Whether stderr cites rule IDs (`rule BIN-5`) that count as the failure's rules.
    #[serde(default)]
    pub cites_rules: bool,
    /// The implementation's errors say nothing a rule can be read from (a
    /// third-party tool): any failure counts as the failure a case expects.
    #[serde(default)]
    pub failures_name_no_rule: bool,
    /// How the `locate` output is read.
    #[serde(default)]
    pub locate: Option<LocateFormat>,
    /// Environment variables set for each run.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// For a user's build (`--impl llvm=DIR`): DIR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_build: Option<String>,
    /// Operations whose tool the user's build lacks (operation → the
    /// missing program): their cases are "not built", never divergences.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_built: BTreeMap<String, String>,
    /// The file it was loaded from.
    #[serde(skip)]
    pub path: PathBuf,
    /// Message patterns resolved from `messages` and `error_rules`.
    #[serde(skip)]
    pub resolved_messages: Vec<MessageRule>,
}

fn yes() -> bool {
    true
}

fn default_inputs() -> FileArgs {
    FileArgs::Each {
        each: "-input={}".into(),
    }
}

fn default_outputs() -> FileArgs {
    FileArgs::Each {
        each: "-output={}".into(),
    }
}

fn default_order() -> ListOrder {
    ListOrder::Set
}

mod release_opt {
    use crate::profile::Release;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(r: &Option<Release>, s: S) -> Result<S::Ok, S::Error> {
        match r {
            Some(r) => s.serialize_str(&r.to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Release>, D::Error> {
        let v = Option::<serde_json::Value>::deserialize(d)?;
        match v {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => {
                s.parse().map(Some).map_err(serde::de::Error::custom)
            }
            Some(serde_json::Value::Number(n)) => n
                .to_string()
                .parse()
                .map(Some)
                .map_err(serde::de::Error::custom),
            Some(other) => Err(serde::de::Error::custom(format!(
                "release must be {}, not {other}",
                Release::listed(", ", " or ")
            ))),
        }
    }
}

/// Environment variables an invocation sets: `(name, value)`.
pub type EnvVars = Vec<(String, String)>;

/// Values substituted into command templates.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    /// `{type}`.
    pub file_type: String,
    /// `{targets}` (comma-joined).
    pub targets: Vec<String>,
    /// Input paths.
    pub inputs: Vec<PathBuf>,
    /// Output paths.
    pub outputs: Vec<PathBuf>,
    /// Options set: name → value (`None` for flags).
    pub options: Vec<(String, Option<String>)>,
    /// `{bundled}`: the uncompressed bundle of the targets and inputs (compress).
    pub bundled: Option<PathBuf>,
    /// `{images}`: the `--image` values (package, unpackage), each passed as
    /// `--image=VALUE`.
    pub images: Vec<String>,
    /// `{requests}`: the lookup requests, one argument each.
    pub requests: Vec<String>,
    /// `{uri}`: the code object URI (extract-uri).
    pub uri: String,
}

impl Adapter {
    /// Load one adapter file; `messages_dir` holds the message tables.
    pub fn load(path: &Path, messages_dir: &Path) -> Result<Adapter, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut a: Adapter =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        a.path = path.to_path_buf();
        if let Some(m) = &a.messages {
            let p = messages_dir.join(format!("{m}.json"));
            let t = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            let table: MessageTable =
                serde_json::from_str(&t).map_err(|e| format!("{}: {e}", p.display()))?;
            a.resolved_messages = table.messages;
        }
        a.resolved_messages.extend(a.error_rules.iter().cloned());
        for m in &a.resolved_messages {
            for r in &m.rules {
                if crate::rules::by_id(r).is_none() {
                    return Err(format!("{}: unknown rule '{r}'", path.display()));
                }
            }
        }
        for op in a.commands.keys() {
            if ![
                "bundle",
                "unbundle",
                "list",
                "compress",
                "decompress",
                "verify",
                "package",
                "unpackage",
                "objdump-offloading",
                "locate",
                "lookup",
                "extract-uri",
                "kpack-lookup",
            ]
            .contains(&op.as_str())
            {
                return Err(format!("{}: unknown operation '{op}'", path.display()));
            }
        }
        if let Some(l) = &a.locate {
            match (&l.pattern, &l.json) {
                (Some(p), None) => {
                    let re = regex::Regex::new(p)
                        .map_err(|e| format!("{}: locate pattern: {e}", path.display()))?;
                    if !re.capture_names().any(|n| n == Some("id")) {
                        return Err(format!(
                            "{}: locate pattern has no 'id' group",
                            path.display()
                        ));
                    }
                }
                (None, Some(_)) => {}
                _ => {
                    return Err(format!(
                        "{}: locate needs exactly one of pattern and json",
                        path.display()
                    ))
                }
            }
        }
        if !["lines", "json"].contains(&a.listing.format.as_str()) {
            return Err(format!(
                "{}: listing format must be lines or json",
                path.display()
            ));
        }
        Ok(a)
    }

    /// Load every `*.json` in `dir`, sorted by name.
    pub fn load_dir(dir: &Path, messages_dir: &Path) -> Result<Vec<Adapter>, String> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| Adapter::load(f, messages_dir))
            .collect()
    }

    fn dir(&self) -> String {
        // Absolute: commands run in a scratch directory of their own.
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::canonicalize(dir)
            .unwrap_or_else(|_| dir.to_path_buf())
            .display()
            .to_string()
    }

    /// Whether `op`'s command names no output file: the program prints its
    /// result (`roc-obj-extract -o -`), which is output 0.
    pub fn prints_output(&self, op: Op) -> bool {
        self.commands.get(op.name()).is_some_and(|tpl| {
            !tpl.iter().any(|el| {
                el.contains("{output}") || el.contains("{outputs}") || el == "{output_paths}"
            })
        })
    }

    /// The program path with `{offload_kit}` and `{adapter_dir}` resolved.
    pub fn program_path(&self, offload_kit: &Path) -> String {
        self.program
            .replace("{offload_kit}", &offload_kit.display().to_string())
            .replace("{adapter_dir}", &self.dir())
    }

    /// Whether the program exists. A bare name is looked up on `PATH`.
    pub fn available(&self, offload_kit: &Path) -> bool {
        let p = self.program_path(offload_kit);
        if p.contains('/') {
            Path::new(&p).is_file()
        } else {
            std::env::var_os("PATH")
                .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(&p).is_file()))
        }
    }

    /// The time limit per run.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.timeout_seconds.unwrap_or(10.0).max(0.1))
    }

    /// The argv for `op`, or why it cannot be run (n/a).
    pub fn argv(
        &self,
        op: Op,
        inv: &Invocation,
        offload_kit: &Path,
    ) -> Result<Vec<String>, String> {
        self.argv_env(op, inv, offload_kit).map(|(a, _)| a)
    }

    /// The argv for `op` and the environment variables its options set (an
    /// option template element `env:NAME=VALUE` sets a variable instead of
    /// adding an argument), or why it cannot be run (n/a).
    pub fn argv_env(
        &self,
        op: Op,
        inv: &Invocation,
        offload_kit: &Path,
    ) -> Result<(Vec<String>, EnvVars), String> {
        let tpl = self
            .commands
            .get(op.name())
            .ok_or_else(|| format!("{} has no '{}' command", self.name, op.name()))?;
        let program = self.program_path(offload_kit);
        let paths =
            |v: &[PathBuf]| -> Vec<String> { v.iter().map(|p| p.display().to_string()).collect() };
        let files = |style: &FileArgs, v: &[PathBuf]| -> Vec<String> {
            let v = paths(v);
            if v.is_empty() {
                return vec![];
            }
            match style {
                FileArgs::Each { each } => v.iter().map(|p| each.replace("{}", p)).collect(),
                FileArgs::Joined { joined, separator } => {
                    vec![joined.replace("{}", &v.join(separator))]
                }
            }
        };
        let mut opts = Vec::new();
        let mut env = Vec::new();
        for (name, value) in &inv.options {
            let t = self
                .options
                .get(name)
                .ok_or_else(|| format!("{} does not support the option '{name}'", self.name))?;
            for a in t {
                let s = match value {
                    Some(v) => a.replace("{}", v),
                    None => a.clone(),
                };
                if let Some(var) = s.strip_prefix("env:") {
                    let (k, v) = var.split_once('=').unwrap_or((var, ""));
                    env.push((k.to_string(), v.to_string()));
                } else if !s.is_empty() {
                    opts.push(s);
                }
            }
        }
        let single = |v: &[PathBuf]| {
            v.first()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        };
        let mut argv = Vec::new();
        for el in tpl {
            if el.contains("{targets}") && inv.targets.is_empty() {
                continue;
            }
            match el.as_str() {
                "{inputs}" => argv.extend(files(&self.inputs, &inv.inputs)),
                "{outputs}" => argv.extend(files(&self.outputs, &inv.outputs)),
                "{options}" => argv.extend(opts.iter().cloned()),
                "{input_paths}" => argv.extend(paths(&inv.inputs)),
                "{output_paths}" => argv.extend(paths(&inv.outputs)),
                "{images}" => argv.extend(inv.images.iter().map(|i| format!("--image={i}"))),
                "{requests}" => argv.extend(inv.requests.iter().cloned()),
                _ => argv.push(
                    el.replace("{program}", &program)
                        .replace("{offload_kit}", &offload_kit.display().to_string())
                        .replace("{adapter_dir}", &self.dir())
                        .replace("{type}", &inv.file_type)
                        .replace("{targets}", &inv.targets.join(","))
                        .replace("{input}", &single(&inv.inputs))
                        .replace("{output}", &single(&inv.outputs))
                        .replace("{uri}", &inv.uri)
                        .replace(
                            "{bundled}",
                            &inv.bundled
                                .as_ref()
                                .map(|p| p.display().to_string())
                                .unwrap_or_default(),
                        ),
                ),
            }
        }
        Ok((argv, env))
    }

    /// Rules an error reports: message patterns, plus rule IDs cited in
    /// stderr when the adapter `cites_rules`.
    pub fn rules_of(&self, stderr: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for m in &self.resolved_messages {
            if stderr.contains(&m.contains) {
                out.extend(m.rules.iter().cloned());
            }
        }
        if self.cites_rules {
            out.extend(cited_rules(stderr));
        }
        out.sort();
        out.dedup();
        out
    }

    /// Parse the listing printed on stdout.
    pub fn parse_listing(&self, stdout: &[u8]) -> Result<Vec<String>, String> {
        let text = String::from_utf8_lossy(stdout);
        if self.listing.format == "json" {
            let v: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("listing is not JSON: {e}"))?;
            let arr = v
                .pointer(self.listing.pointer.as_deref().unwrap_or(""))
                .and_then(|a| a.as_array())
                .ok_or("listing JSON has no array at the pointer")?;
            let field = self.listing.field.as_deref().unwrap_or("id");
            return arr
                .iter()
                .map(|e| {
                    e.get(field)
                        .and_then(|x| x.as_str())
                        .map(str::to_string)
                        .ok_or_else(|| format!("listing element without '{field}'"))
                })
                .collect();
        }
        let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        if lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        Ok(lines)
    }
}

impl Adapter {
    /// The answers of a `lookup` run: one `REQUEST\tOFFSET\tSIZE` line per
    /// request (size 0: nothing found).
    pub fn parse_lookup(&self, stdout: &[u8]) -> Result<Vec<(String, u64, u64)>, String> {
        String::from_utf8_lossy(stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                match f.as_slice() {
                    [r, o, s] => Ok((
                        r.to_string(),
                        o.parse().map_err(|_| format!("bad offset in '{l}'"))?,
                        s.parse().map_err(|_| format!("bad size in '{l}'"))?,
                    )),
                    _ => Err(format!("lookup line '{l}' is not REQUEST\tOFFSET\tSIZE")),
                }
            })
            .collect()
    }

    /// The code objects a `locate` run printed on `stdout`.
    pub fn parse_located(&self, stdout: &[u8]) -> Result<Vec<Found>, String> {
        let text = String::from_utf8_lossy(stdout);
        let fmt = self
            .locate
            .as_ref()
            .ok_or("the adapter has no locate format")?;
        let num = |v: Option<&str>| v.and_then(|v| v.parse::<u64>().ok());
        if let Some(pointer) = &fmt.json {
            let v: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| format!("locate output is not JSON: {e}"))?;
            let arr = v
                .pointer(pointer)
                .and_then(|a| a.as_array())
                .ok_or("locate JSON has no array at the pointer")?;
            return arr
                .iter()
                .map(|e| {
                    let id = e
                        .get("id")
                        .and_then(|x| x.as_str())
                        .ok_or("entry without 'id'")?;
                    let offset = e.get("offset").and_then(|x| x.as_u64());
                    let size = e.get("size").and_then(|x| x.as_u64());
                    Ok(Found {
                        id: id.to_string(),
                        at: offset.zip(size),
                    })
                })
                .collect();
        }
        let re = regex::Regex::new(fmt.pattern.as_deref().unwrap_or("^(?P<id>.*)$"))
            .map_err(|e| e.to_string())?;
        Ok(text
            .lines()
            .filter_map(|l| re.captures(l))
            .map(|c| Found {
                id: c.name("id").map_or("", |m| m.as_str()).to_string(),
                at: num(c.name("offset").map(|m| m.as_str()))
                    .zip(num(c.name("size").map(|m| m.as_str()))),
            })
            .collect())
    }

    /// Whether `locate` reports offsets and sizes.
    pub fn locates_bytes(&self) -> bool {
        self.locate.as_ref().is_some_and(|l| {
            l.json.is_some()
                || l.pattern
                    .as_deref()
                    .is_some_and(|p| p.contains("?P<offset>") && p.contains("?P<size>"))
        })
    }
}

/// Rule IDs of the catalogue cited as whole tokens in `text`.
pub fn cited_rules(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for r in crate::rules::ALL {
        let mut from = 0;
        while let Some(p) = text[from..].find(r.id) {
            let s = from + p;
            let e = s + r.id.len();
            let before_ok = s == 0 || !(b[s - 1].is_ascii_alphanumeric() || b[s - 1] == b'-');
            let after_ok = e == b.len() || !b[e].is_ascii_digit();
            if before_ok && after_ok {
                out.push(r.id.to_string());
                break;
            }
            from = e;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_options_and_bundled() {
        let a: Adapter = serde_json::from_str(
            r#"{"name": "x", "role": "reference", "program": "/bin/x",
                "commands": {"compress": ["{program}", "{bundled}", "{options}", "{output}"]},
                "options": {"format_version": ["env:COMPRESSED_BUNDLE_FORMAT_VERSION={}"],
                            "compression_level": ["-l={}"], "bundle_align": []}}"#,
        )
        .unwrap();
        let inv = Invocation {
            outputs: vec!["o".into()],
            bundled: Some("b".into()),
            options: vec![
                ("format_version".into(), Some("2".into())),
                ("compression_level".into(), Some("9".into())),
                ("bundle_align".into(), Some("16".into())),
            ],
            ..Invocation::default()
        };
        let (argv, env) = a.argv_env(Op::Compress, &inv, Path::new("ok")).unwrap();
        assert_eq!(argv, ["/bin/x", "b", "-l=9", "o"]);
        assert_eq!(
            env,
            [(
                "COMPRESSED_BUNDLE_FORMAT_VERSION".to_string(),
                "2".to_string()
            )]
        );
        assert!(a.argv(Op::Decompress, &inv, Path::new("ok")).is_err());
    }

    #[test]
    fn images_expand_one_argument_each() {
        let a: Adapter = serde_json::from_str(
            r#"{"name": "p", "description": "", "role": "reference", "program": "pk",
                "commands": {"package": ["{program}", "-o", "{output}", "{images}"]}}"#,
        )
        .unwrap();
        let inv = Invocation {
            outputs: vec!["o".into()],
            images: vec!["file=a,triple=t".into(), "file=b".into()],
            ..Invocation::default()
        };
        let argv = a.argv(Op::Package, &inv, Path::new("ok")).unwrap();
        assert_eq!(
            argv,
            ["pk", "-o", "o", "--image=file=a,triple=t", "--image=file=b"]
        );
    }

    #[test]
    fn cited_rule_tokens() {
        assert_eq!(cited_rules("x (at offset 0x5e, rule BIN-5)"), ["BIN-5"]);
        assert_eq!(cited_rules("rule BIN-10"), ["BIN-10"]);
        assert_eq!(cited_rules("rule TID-1"), ["TID-1"]);
        assert!(cited_rules("BIN-50").is_empty());
    }
}
