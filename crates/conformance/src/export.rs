//! The portable corpus: every case as plain files, so that a project in any
//! language can run it without Rust (`offload-kit conformance export DIR`).
//!
//! For each case, `DIR/<case id>/case.json` holds the operation, its
//! arguments, the spec's expected outcome and, per LLVM release, the
//! expectation as that release spells IDs together with the divergences the
//! corpus documents for it; the inputs are built once per variant into
//! `DIR/<case id>/<variant>/<input name>` (`spec`, `llvm-14`, …: recipes
//! spell IDs as each release writes them). `DIR/index.json` lists the cases;
//! `DIR/README.md` describes the protocol.
//!
//! # Example
//!
//! ```
//! use offload_kit_conformance::{export, load_corpus, Layout};
//!
//! let layout = Layout::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance"));
//! let cases = load_corpus(&layout.corpus()).unwrap();
//! let one: Vec<_> = cases.into_iter().filter(|c| c.id == "locate/fatbin-0").collect();
//! let dir = tempfile::tempdir().unwrap();
//! assert_eq!(export::export(&one, dir.path()).unwrap(), 1);
//! let case: serde_json::Value = serde_json::from_slice(
//!     &std::fs::read(dir.path().join("locate/fatbin-0/case.json")).unwrap()).unwrap();
//! assert_eq!(case["op"], "locate");
//! assert!(dir.path().join("locate/fatbin-0/spec/host").is_file());
//! ```

use super::case::Case;
use super::recipe::written_id;
use crate::profile::Release;
use serde_json::{json, Value};
use std::path::Path;

/// The operation a case is exported as: its own, but `kpack-locate` for
/// the kpack chapter's `locate` cases (archives and split hosts are not
/// bundles: a bundle parser's `locate` score leaves them out).
fn export_op(c: &Case) -> &'static str {
    match (c.op.name(), c.id.starts_with("kpack/")) {
        ("locate", true) => "kpack-locate",
        (op, _) => op,
    }
}

/// The protocol, written as `DIR/README.md`.
const README: &str = "# offload-kit conformance corpus (exported)

Each directory `<case id>/` holds `case.json` and the inputs of the case,
built once per variant: `spec/` (IDs spelled canonically, ID-4) and
`llvm-13/`, `llvm-14/`, `llvm-15/`, `llvm-16/`, `llvm-19/`, `llvm-22/`,
`llvm-23/`, `llvm-main/` (IDs as that release writes them; byte-identical
to `spec/` for most cases).

case.json:
- `op`: bundle, unbundle, list, parse-id, compatible, compress, decompress,
  verify, package, unpackage, objdump-offloading, locate, kpack-locate,
  lookup, kpack-lookup, extract-uri (see offload-kit's conformance/README.md
  for what each asks; `kpack-locate` is `locate` of a ROCm kpack archive or
  a host split into them, the `kpack/` chapter's, apart so that a bundle
  parser's `locate` is about bundles; `corpus_op` names the corpus's
  operation where the two differ);
- `args`: the operation's arguments; `args.inputs` names inputs, found at
  `<variant>/<name>` (`inputs[name][variant]` is null for a missing file);
  for extract-uri, `args.uri` is the code object URI with `{path}` standing
  for the input's path percent-encoded (spec/uri.md URI-2) and `{raw_path}`
  for the path as it is, and `args.file_name` (when given) is the name to
  copy the input to before running, so the path holds the characters the
  case is about;
- `expect`: the spec's outcome, one of `fail` (a rule ID, or `*`),
  `outputs`, `bundle`, `list`, `id`, `compatible`, `compressed`, `locate`,
  `lookup`, `kpack_lookup`; IDs given as `{\"written\": T}` in the corpus are resolved to text;
  `bundle` is `{\"align\", \"entries\": [{\"id\", \"payload\"}]}` (a payload
  `{\"input\": name}`, `{\"utf8\"}` or `{\"hex\"}`): output 0 is exactly that
  binary bundle (spec/binary-bundle.md, payload i at the next multiple of
  `align`), or for a text `type` that text bundle; `compressed` is
  `{\"version\"?, \"method\"?, \"content\" | \"bundle\"}`: output 0 verifies
  (total size, uncompressed size, MD5 hash) and decompresses to it;
- `releases.llvm-N.expect` (N a release, or `main`: LLVM main modelled from
  its source): the same for LLVM N's spelling, and
  `releases.llvm-N.known_divergence`: what the corpus documents LLVM N does
  instead (an outcome word such as `crash`, or a full alternative expect).

Offsets (`locate`, `list`, and the offset of a `fail`'s error) are
absolute byte offsets in the input file, except inside a compressed bundle
(`CCOB`): an entry of a compressed bundle, and an error found after
decompressing it, is at its offset *within the decompressed bundle*, the
bundle's own `CCOB` header being at its absolute offset (spec/ccob.md,
spec/object-bundle.md FAT-3).

Run your implementation on the inputs of the variant it follows, compare
its outcome with `expect` (or the release's), and report per case: pass,
differs, crashed, timed out, or not applicable. A `fail` passes only when
the implementation names that rule (`*`: any); one that reports no rules
scores such cases \"rejected, rule unchecked\". offload-kit's
`conformance/examples/run_exported.py` is a worked runner for every
operation (each operation's arguments and answer in its help; `--variant
llvm-N` follows a release and counts its documented divergences apart),
`conformance/examples/template_impl.py` a template implementation
(standard library only) that passes every case it claims, and
`conformance/examples/by_offload_kit.py` answers every operation by
wrapping existing tools; a case an implementation does not handle it
declines (`{\"unsupported\": why}`, exit 3): \"not claimed\", never a pass.
";

/// Replace every `{\"written\": T}` in `v` by the ID `release` writes for `T`.
fn resolve(v: &mut Value, release: Option<Release>) {
    match v {
        Value::Object(m) => {
            if let (1, Some(Value::String(t))) = (m.len(), m.get("written")) {
                let text = written_id(release, t).unwrap_or_else(|e| format!("<{e}>"));
                *v = Value::String(text);
                return;
            }
            m.values_mut().for_each(|x| resolve(x, release));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| resolve(x, release)),
        _ => {}
    }
}

/// Spell out what an expected bundle leaves to its default (every target
/// `{"written": target}` holding the input of the same index, aligned as
/// the case's `bundle_align`), in `bundle` and in `compressed` without
/// `content`, so that a runner builds the bundle from the case alone.
fn explicit_bundles(expect: &mut Value, args: &crate::case::Args) {
    let Value::Object(m) = expect else {
        return;
    };
    let bundle = match m.get_mut("compressed") {
        Some(Value::Object(c)) if !c.contains_key("content") => {
            Some(c.entry("bundle").or_insert_with(|| json!({})))
        }
        Some(_) => None,
        None => m.get_mut("bundle"),
    };
    let Some(Value::Object(b)) = bundle else {
        return;
    };
    b.entry("align")
        .or_insert_with(|| json!(args.bundle_align.unwrap_or(1)));
    b.entry("entries").or_insert_with(|| {
        let pairs = args.targets.iter().zip(&args.inputs);
        pairs
            .map(|(t, i)| json!({"id": {"written": t}, "payload": {"input": i}}))
            .collect()
    });
}

/// `bytes` as `rel` inside `dir`, never through a link planted there (CLI-5).
fn put(dir: &Path, rel: &str, bytes: &[u8]) -> Result<(), String> {
    offload_kit_io::output::write_in_dir(dir, rel, bytes).map_err(|e| e.to_string())
}

/// Write `cases` under `dir`; the number written.
pub fn export(cases: &[Case], dir: &Path) -> Result<usize, String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let variants: Vec<(String, Option<Release>)> = std::iter::once(("spec".to_string(), None))
        .chain(
            Release::MODELLED
                .into_iter()
                .map(|r| (format!("llvm-{r}"), Some(r))),
        )
        .collect();
    let mut index = Vec::new();
    for c in cases {
        // Case IDs are corpus paths (`group/name`): never absolute, no `..`.
        if c.id.split('/').any(|p| p.is_empty() || p == "..") {
            return Err(format!("case id '{}' is not a relative path", c.id));
        }
        let mut inputs = serde_json::Map::new();
        for (name, spec) in &c.inputs {
            let mut per = serde_json::Map::new();
            for (v, r) in &variants {
                let built = spec
                    .build(*r)
                    .map_err(|e| format!("{}: input {name}: {e}", c.id))?;
                let entry = match built {
                    Some(bytes) => {
                        put(dir, &format!("{}/{v}/{name}", c.id), &bytes)?;
                        Value::String(format!("{v}/{name}"))
                    }
                    None => Value::Null,
                };
                per.insert(v.clone(), entry);
            }
            inputs.insert(name.clone(), Value::Object(per));
        }
        let expect_for = |r: Option<Release>| {
            let mut e = serde_json::to_value(&c.expect).expect("serialisable");
            explicit_bundles(&mut e, &c.args);
            resolve(&mut e, r);
            e
        };
        let mut releases = serde_json::Map::new();
        for (v, r) in variants.iter().skip(1) {
            let release = r.expect("a release");
            let notes: Vec<Value> = c
                .known_divergence
                .iter()
                .filter(|k| k.releases.is_empty() || k.releases.contains(&release))
                .map(|k| {
                    let mut k = serde_json::to_value(k).expect("serialisable");
                    explicit_bundles(&mut k["outcome"], &c.args);
                    resolve(&mut k, *r);
                    k
                })
                .collect();
            releases.insert(
                v.clone(),
                json!({"expect": expect_for(*r), "known_divergence": notes}),
            );
        }
        let op = export_op(c);
        let mut doc = json!({
            "id": c.id,
            "title": c.title,
            "source": c.source,
            "rules": c.rules,
            "op": op,
            "args": c.args,
            "inputs": inputs,
            "expect": expect_for(None),
            "releases": releases,
        });
        if op != c.op.name() {
            doc["corpus_op"] = json!(c.op.name());
        }
        let text = serde_json::to_string_pretty(&doc).expect("serialisable") + "\n";
        put(dir, &format!("{}/case.json", c.id), text.as_bytes())?;
        index.push(Value::String(c.id.clone()));
    }
    let text = serde_json::to_string_pretty(&index).expect("serialisable") + "\n";
    put(dir, "index.json", text.as_bytes())?;
    put(dir, "README.md", README.as_bytes())?;
    Ok(cases.len())
}
