//! The corpus cases computed from data rather than written by hand: one
//! `parse-id` case per "written" vector and one `compatible` case per
//! "match" vector of `tests/data/llvm-id-vectors.json` (what each LLVM
//! release's `clang-offload-bundler` wrote and matched, recorded by
//! `tools/gen-id-vectors.py`). The spec's expectation comes from the strict
//! layer ([`crate::spec`]); each release whose recorded behaviour differs
//! from it (after the release's own ID spelling) gets a `known_divergence`
//! note, and LLVM main, which has no binary to record, joins the note of
//! the behaviour its source-modelled profile shares.
//!
//! The cases are text in the corpus's own layout (one-space JSON
//! indentation, keys in authoring order), so that the committed files are
//! exactly [`id_vector_cases`]'s output: the test `generated_cases` holds
//! them equal, and `OFFLOAD_KIT_BLESS=1` rewrites them after a change of
//! the vectors or the release table.
//!
//! # Example
//!
//! ```
//! use offload_kit_conformance::vectors::{id_vector_cases, Messages};
//!
//! let vectors = r#"{"written": [{"target": "host-x86_64-unknown-linux-gnu",
//!   "targets": "host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906",
//!   "13": {"id": "host-x86_64-unknown-linux-gnu"}, "14": {"id": "host-x86_64-unknown-linux-gnu"},
//!   "15": {"id": "host-x86_64-unknown-linux-gnu"}, "16": {"id": "host-x86_64-unknown-linux-gnu"},
//!   "19": {"id": "host-x86_64-unknown-linux-gnu-"}, "22": {"id": "host-x86_64-unknown-linux-gnu-"}}],
//!   "match": []}"#;
//! let messages = Messages::from_json(r#"{"messages": []}"#).unwrap();
//! let cases = id_vector_cases(vectors, &messages).unwrap();
//! assert_eq!(cases[0].0, "parse-id/000-host-x86_64-unknown-linux-gnu");
//! // Every release writes the ID as its profile says: no divergence.
//! assert!(!cases[0].1.contains("known_divergence"));
//! ```

use crate::profile::Release;
use crate::spec;
use serde_json::Value;

/// LLVM's error messages and the rules they report
/// (`conformance/messages/clang-offload-bundler.json`).
#[derive(Debug, Clone, Default)]
pub struct Messages(Vec<(String, Vec<String>)>);

impl Messages {
    /// Read the messages file.
    pub fn from_json(text: &str) -> Result<Messages, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let list = v["messages"].as_array().ok_or("no \"messages\" list")?;
        let entry = |m: &Value| -> Option<(String, Vec<String>)> {
            let rules = m["rules"].as_array()?.iter();
            let rules: Option<Vec<String>> =
                rules.map(|r| r.as_str().map(str::to_string)).collect();
            Some((m["contains"].as_str()?.to_string(), rules?))
        };
        list.iter()
            .map(|m| entry(m).ok_or_else(|| format!("malformed message entry {m}")))
            .collect::<Result<_, _>>()
            .map(Messages)
    }

    /// The rules of every message `text` contains, sorted, once each.
    pub fn rules_of(&self, text: &str) -> Vec<String> {
        let mut rules: Vec<String> = (self.0.iter())
            .filter(|(contains, _)| text.contains(contains.as_str()))
            .flat_map(|(_, rules)| rules.iter().cloned())
            .collect();
        rules.sort();
        rules.dedup();
        rules
    }
}

/// A JSON value that keeps its keys in the order they were added, written
/// as the corpus is (`json.dumps(..., indent=1, ensure_ascii=False)`).
#[derive(Debug, Clone, PartialEq)]
enum J {
    Str(String),
    Int(u64),
    Bool(bool),
    Arr(Vec<J>),
    Obj(Vec<(&'static str, J)>),
}

fn s(text: &str) -> J {
    J::Str(text.to_string())
}

impl J {
    fn write(&self, out: &mut String, depth: usize) {
        let indent = |out: &mut String, d: usize| {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', d));
        };
        match self {
            J::Str(t) => out.push_str(&serde_json::to_string(t).expect("a string")),
            J::Int(n) => out.push_str(&n.to_string()),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Arr(items) if items.is_empty() => out.push_str("[]"),
            J::Obj(items) if items.is_empty() => out.push_str("{}"),
            J::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    out.push_str(if i == 0 { "" } else { "," });
                    indent(out, depth + 1);
                    item.write(out, depth + 1);
                }
                indent(out, depth);
                out.push(']');
            }
            J::Obj(items) => {
                out.push('{');
                for (i, (k, v)) in items.iter().enumerate() {
                    out.push_str(if i == 0 { "" } else { "," });
                    indent(out, depth + 1);
                    out.push_str(&format!("\"{k}\": "));
                    v.write(out, depth + 1);
                }
                indent(out, depth);
                out.push('}');
            }
        }
    }

    /// The value as the corpus writes it, for messages.
    fn to_json(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out
    }
}

/// A release in a note's list: its number, or "main".
fn release_json(r: Release) -> J {
    match r {
        Release::Main => s("main"),
        r => J::Int(u64::from(r.major())),
    }
}

/// One divergence note in the making: releases, rule, outcome, text.
struct Note {
    releases: Vec<Release>,
    rule: String,
    outcome: J,
    text: String,
    reference: &'static str,
    /// Whether offload-kit's profiles reproduce it (not for crashes).
    profile: bool,
    /// `profile` before `note`, as the notes written for main alone are.
    profile_first: bool,
}

impl Note {
    fn json(&self) -> J {
        let releases = self.releases.iter().map(|&r| release_json(r)).collect();
        let mut fields = vec![
            ("releases", J::Arr(releases)),
            ("rule", s(&self.rule)),
            ("outcome", self.outcome.clone()),
            ("note", J::Str(self.text.clone())),
        ];
        if self.profile {
            let at = if self.profile_first { 3 } else { 4 };
            fields.insert(at, ("profile", J::Bool(true)));
        }
        fields.push(("ref", s(self.reference)));
        J::Obj(fields)
    }
}

/// Notes keyed by (rule, outcome, text without the release), releases
/// gathered in the order met: one note per distinct behaviour.
#[derive(Default)]
struct Merged(Vec<(String, J, String, Vec<Release>)>);

impl Merged {
    fn add(&mut self, release: Release, rule: &str, outcome: J, text: String) {
        let same = |m: &&mut (String, J, String, Vec<Release>)| {
            m.0 == rule && m.1 == outcome && m.2 == text
        };
        match self.0.iter_mut().find(same) {
            Some(m) => m.3.push(release),
            None => self
                .0
                .push((rule.to_string(), outcome, text, vec![release])),
        }
    }

    /// The notes, each text spelt by `text(releases, generic text)`.
    fn notes(self, reference: &'static str, text: impl Fn(&str, &str) -> String) -> Vec<Note> {
        (self.0.into_iter())
            .map(|(rule, outcome, generic, mut releases)| {
                releases.sort();
                let names: Vec<String> = releases.iter().map(Release::to_string).collect();
                Note {
                    text: text(&names.join("/"), &generic),
                    releases,
                    rule,
                    outcome,
                    reference,
                    profile: true,
                    profile_first: false,
                }
            })
            .collect()
    }
}

/// Python's `repr` of a string, as the case titles quote IDs.
fn py_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..=0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// The file name of case `n`: its subject with every run of other
/// characters than `[A-Za-z0-9_.+-]` made one `_`, at most 70 of them.
fn slug(subject: &str, n: usize) -> String {
    let mut out = String::new();
    for c in subject.chars() {
        if c.is_ascii_alphanumeric() || "_.+-".contains(c) {
            out.push(c);
        } else if !out.ends_with('_') || out.is_empty() {
            out.push('_');
        }
    }
    let trimmed = out.trim_matches('_');
    let name = if trimmed.is_empty() { "empty" } else { trimmed };
    format!("{n:03}-{}", &name[..name.len().min(70)])
}

/// The case file's text.
fn case_text(path: &str, fields: Vec<(&'static str, J)>) -> (String, String) {
    let mut all = vec![("$schema", s("../../case.schema.json"))];
    all.extend(fields);
    let mut text = String::new();
    J::Obj(all).write(&mut text, 0);
    text.push('\n');
    (path.to_string(), text)
}

/// `releases` of `vector` (`"13": {...}`, ...): each release's record.
fn recorded(vector: &Value, r: Release) -> Result<&Value, String> {
    vector
        .get(r.to_string())
        .ok_or_else(|| format!("vector {vector} has no record for LLVM {r}"))
}

fn str_field<'v>(v: &'v Value, key: &str) -> Result<&'v str, String> {
    v[key]
        .as_str()
        .ok_or_else(|| format!("vector {v} has no string \"{key}\""))
}

const WRITTEN_REF: &str = "tests/data/llvm-id-vectors.json (written)";
const MATCH_REF: &str = "tests/data/llvm-id-vectors.json (match)";

/// The cases of the vectors (`parse-id/…` then `compatible/…`), each as
/// (path under `conformance/corpus/` without `.json`, file text).
pub fn id_vector_cases(
    vectors: &str,
    messages: &Messages,
) -> Result<Vec<(String, String)>, String> {
    let v: Value = serde_json::from_str(vectors).map_err(|e| e.to_string())?;
    let list = |key: &str| {
        v[key]
            .as_array()
            .ok_or_else(|| format!("no \"{key}\" list"))
    };
    let mut cases = Vec::new();
    for (n, w) in list("written")?.iter().enumerate() {
        cases.push(written_case(n, w, messages)?);
    }
    for (n, m) in list("match")?.iter().enumerate() {
        cases.push(match_case(n, m, messages)?);
    }
    Ok(cases)
}

/// The spec's expectation for the ID written for `target` within the
/// `-targets` list `targets`: its first violated rule, CLI-3 when the list
/// has not one host (a HIP-only list needs none), else the ID as written.
fn written_expectation(targets: &[&str], verdict: &spec::IdVerdict) -> Option<&'static str> {
    if let Err(rule) = verdict.canonical {
        return Some(rule);
    }
    let kinds: Vec<&str> = targets
        .iter()
        .map(|t| t.split('-').next().unwrap_or(""))
        .collect();
    let hosts = kinds.iter().filter(|k| **k == "host").count();
    let hip_only = kinds.iter().all(|k| matches!(*k, "hip" | "hipv4"));
    (hosts > 1 || (hosts == 0 && !hip_only)).then_some("CLI-3")
}

/// What a release did with the ID: wrote one, or refused (the first rule
/// its message reports, `*` when none). `None` when that is what the spec
/// expects of it.
fn written_divergence(
    expect_fail: Option<&str>,
    rule: &str,
    got: Result<&str, &str>,
    profile: Option<&str>,
    messages: &Messages,
) -> Option<(String, J, String)> {
    match got {
        Ok(id) => {
            if expect_fail.is_none() && profile == Some(id) {
                return None; // the release's spelling of the spec's answer
            }
            let nr = if expect_fail.is_some() { rule } else { "ID-4" };
            let outcome = J::Obj(vec![("id", s(id))]);
            Some((nr.to_string(), outcome, format!("LLVM writes '{id}'")))
        }
        Err(error) => {
            let rs = messages.rules_of(error);
            if expect_fail.is_some_and(|f| rs.iter().any(|r| r == f)) {
                return None;
            }
            let first = rs.first().map_or("*", String::as_str);
            let nr = if expect_fail.is_none() && !rs.is_empty() {
                first
            } else {
                rule
            };
            let outcome = J::Obj(vec![("fail", s(first))]);
            Some((nr.to_string(), outcome, format!("LLVM refuses: {error}")))
        }
    }
}

/// The `parse-id` case of written vector `n`.
fn written_case(n: usize, w: &Value, messages: &Messages) -> Result<(String, String), String> {
    let target = str_field(w, "target")?;
    let targets: Vec<&str> = str_field(w, "targets")?.split(',').collect();
    let verdict = spec::id_verdict(target);
    let expect_fail = written_expectation(&targets, &verdict);
    let expect = match expect_fail {
        Some(rule) => J::Obj(vec![("fail", s(rule))]),
        None => J::Obj(vec![("id", J::Obj(vec![("written", s(target))]))]),
    };
    let rule = expect_fail.unwrap_or("ID-4");
    let mut merged = Merged::default();
    for (r, profile) in &verdict.written {
        let rec = recorded(w, *r)?;
        let got = match (rec["id"].as_str(), rec["error"].as_str()) {
            (Some(id), _) => Ok(id),
            (None, Some(e)) => Err(e),
            _ => return Err(format!("vector {w}: LLVM {r} has neither id nor error")),
        };
        let profile = profile.as_deref().ok();
        if let Some((nr, outcome, text)) =
            written_divergence(expect_fail, rule, got, profile, messages)
        {
            merged.add(*r, &nr, outcome, text);
        }
    }
    let mut notes = merged.notes(WRITTEN_REF, |rs, generic| {
        generic.replacen("LLVM ", &format!("LLVM {rs} "), 1)
    });
    let crash = conflict_check_crash(&targets, expect_fail.unwrap_or("TID-1"));
    for modelled in [Release::Main, Release::L23] {
        let got = modelled_writes(target, &targets, modelled);
        if crash.is_some() && got.as_ref().is_err_and(|m| crashes_in_conflict_check(m)) {
            continue; // 22's conflict check: the crash note names it
        }
        let got = got.as_deref().map_err(String::as_str);
        let div = written_divergence(expect_fail, rule, got, got.ok(), messages);
        join_modelled(&mut notes, modelled, div.map(|(_, o, _)| o), None)
            .map_err(|e| format!("written '{target}': {e} ({got:?})"))?;
    }
    notes.extend(crash);
    let mut rules = vec![rule.to_string()];
    if expect_fail.is_none() {
        rules.push("ID-4".to_string());
    }
    rules.sort();
    rules.dedup();
    let mut fields = vec![
        (
            "title",
            J::Str(format!(
                "The ID written for -targets entry {} (with {})",
                py_repr(target),
                targets.join(",")
            )),
        ),
        (
            "source",
            s("tests/data/llvm-id-vectors.json (written); spec/bundle-id.md Written IDs"),
        ),
        ("rules", J::Arr(rules.iter().map(|r| s(r)).collect())),
        ("op", s("parse-id")),
        (
            "args",
            J::Obj(vec![
                ("targets", J::Arr(targets.iter().map(|t| s(t)).collect())),
                ("id", s(target)),
            ]),
        ),
        ("expect", expect),
    ];
    if !notes.is_empty() {
        fields.push((
            "known_divergence",
            J::Arr(notes.iter().map(Note::json).collect()),
        ));
    }
    Ok(case_text(&format!("parse-id/{}", slug(target, n)), fields))
}

/// What a modelled release's bundler (the profile: 23 or main) writes
/// for `target` when bundling `-type=bc -targets=<targets>`, as the
/// vectors were recorded; or its error message.
fn modelled_writes(target: &str, targets: &[&str], release: Release) -> Result<String, String> {
    let job = offload_kit_llvm::bundler::Job {
        release,
        file_type: "bc".to_string(),
        targets: targets.iter().map(|t| t.to_string()).collect(),
        inputs: targets.iter().map(|t| format!("{t}.bc").into()).collect(),
        outputs: vec!["bundle.bc".into()],
        unbundle: false,
        list: false,
        allow_missing: false,
        align: 1,
        hip_openmp: false,
        check_input_archive: false,
        budget: Default::default(),
    };
    let validated = job.validate().map_err(|e| e.message)?;
    let at = targets.iter().position(|t| *t == target);
    at.and_then(|i| validated.targets.get(i).cloned())
        .ok_or_else(|| format!("'{target}' is not among its -targets"))
}

/// Whether a modelled release's bundler (the profile: 23 or main)
/// extracts the one entry of a bundle whose ID is `entry` for `-unbundle
/// -targets=<request>`, as the vectors were recorded (`Can't find
/// bundles` is "no"); or its error.
fn modelled_matches(
    entry: &str,
    request: &str,
    hip_openmp: bool,
    release: Release,
) -> Result<bool, String> {
    use offload_kit_llvm::bundler::{Job, Piece};
    let job = Job {
        release,
        file_type: "bc".to_string(),
        targets: vec![request.to_string()],
        inputs: vec!["b".into()],
        outputs: vec!["out".into()],
        unbundle: true,
        list: false,
        allow_missing: false,
        align: 1,
        hip_openmp,
        check_input_archive: false,
        budget: Default::default(),
    };
    let payload = b"PAYLOAD";
    let bundle = offload_kit_llvm::bundle::binary::write_to_vec(&[(entry.as_bytes(), payload)], 1)
        .map_err(|e| e.to_string())?;
    let validated = job.validate().map_err(|e| e.message)?;
    match job.plan_unbundle_main(&validated, &bundle, &mut |_, _, _| {}) {
        Ok(pieces) => match pieces.first() {
            Some(Piece::Range { offset, size }) => {
                Ok(bundle.get(*offset as usize..(offset + size) as usize) == Some(&payload[..]))
            }
            _ => Ok(false),
        },
        Err(e) if e.message.starts_with("Can't find bundles for ") => Ok(false),
        Err(e) => Err(e.message),
    }
}

/// A release modelled from source (main, then 23), which has no binary
/// to record, joins the note of the releases whose behaviour its profile
/// shares: 22's, else (23) main's (`divergence`: what it does where that
/// is not what the spec expects; `None`: it conforms); where none shares
/// it, `own` is its note (main's alone).
fn join_modelled(
    notes: &mut Vec<Note>,
    release: Release,
    divergence: Option<J>,
    own: Option<Note>,
) -> Result<(), String> {
    let Some(outcome) = divergence else {
        return Ok(());
    };
    let shares = |with: Release| {
        (notes.iter()).position(|n| n.outcome == outcome && n.releases.contains(&with))
    };
    let shared = match release {
        Release::Main => shares(Release::L22),
        _ => shares(Release::L22).or_else(|| shares(Release::Main)),
    };
    if let Some(i) = shared {
        let n = &mut notes[i];
        n.releases.push(release);
        n.releases.sort_unstable();
        return Ok(());
    }
    match own {
        Some(mut note) if note.outcome == outcome => {
            note.releases = vec![release];
            notes.push(note);
            Ok(())
        }
        _ => Err(format!(
            "LLVM {release}'s profile gives {} where no release's note does: write its note",
            outcome.to_json()
        )),
    }
}

/// The rule a `compatible` case exercises when both IDs are valid:
/// COMPAT-1 for different offload kinds, COMPAT-2 for different triples
/// (the environment `unknown` when empty), else COMPAT-3.
fn compat_rule(entry: &str, request: &str) -> &'static str {
    let kind = |id: &str| id.split('-').next().unwrap_or("").to_string();
    fn triple(id: &str) -> Vec<&str> {
        let parts: Vec<&str> = id.split('-').collect();
        let mut t: Vec<&str> = parts.iter().skip(1).take(3).copied().collect();
        let env = parts.get(4).copied().unwrap_or("");
        t.push(if env.is_empty() { "unknown" } else { env });
        t
    }
    if kind(entry) != kind(request) {
        "COMPAT-1"
    } else if triple(entry) != triple(request) {
        "COMPAT-2"
    } else {
        "COMPAT-3"
    }
}

/// Main's own note where its `isCodeObjectCompatible` refuses what the
/// spec and every release accept: no target ID parses off amdgcn.
fn main_not_amdgcn() -> Note {
    Note {
        releases: vec![Release::Main],
        rule: "COMPAT-3".to_string(),
        outcome: J::Obj(vec![("compatible", J::Bool(false))]),
        text: "main's isCodeObjectCompatible parses both target IDs with \
               llvm::AMDGPU::TargetID::parse, which returns nothing for a triple that is not \
               amdgcn: beyond an exact match, no NVPTX (or SPIR-V) entry is compatible, \
               -hip-openmp-compatible or not"
            .to_string(),
        reference: "spec/bundle-id.md COMPAT-3 (LLVM main: isCodeObjectCompatible, \
                    clang/lib/Driver/OffloadBundler.cpp at 0629daa018e3; TargetID::parse, \
                    llvm/lib/TargetParser/AMDGPUTargetParser.cpp)",
        profile: true,
        profile_first: true,
    }
}

/// The target ID part of a `-targets` value as LLVM 16 and later's
/// `OffloadTargetInfo` takes it: after the last `-` before the first `:`.
fn target_id_of(target: &str) -> &str {
    let head = target.split(':').next().unwrap_or("");
    &target[head.rfind('-').map_or(0, |i| i + 1)..]
}

/// Whether `parseTargetIDWithFormatCheckingOnly` returns nothing for
/// `tid`: an empty processor, a feature without `+`/`-`, a repeated one.
fn fails_format_check(tid: &str) -> bool {
    let Some((processor, features)) = tid.split_once(':') else {
        return false;
    };
    if processor.is_empty() {
        return true;
    }
    let mut names = Vec::new();
    for f in features.split(':') {
        let Some(name) = f.strip_suffix(['+', '-']) else {
            return true;
        };
        if names.contains(&name) {
            return true;
        }
        names.push(name);
    }
    false
}

/// Whether a profile's refusal is the conflict check's crash, which
/// [`conflict_check_crash`]'s note documents.
fn crashes_in_conflict_check(message: &str) -> bool {
    message.contains("getConflictTargetIDCombination")
}

/// The crash of 16, 19, 22 (and 23, which keeps 22's check) where a
/// requested target ID fails LLVM's format check: `getConflictTargetIDCombination` runs over every bundling
/// and unbundling and dereferences the empty result (Debian's builds die
/// of SIGSEGV; other builds went on, as the vectors recorded).
fn conflict_check_crash(targets: &[&str], rule: &str) -> Option<Note> {
    let bad = targets
        .iter()
        .find(|t| fails_format_check(target_id_of(t)))?;
    Some(Note {
        releases: vec![Release::L16, Release::L19, Release::L22, Release::L23],
        rule: rule.to_string(),
        outcome: s("crash"),
        text: format!(
            "undefined behaviour: getConflictTargetIDCombination dereferences the empty result of \
             parseTargetIDWithFormatCheckingOnly for '{}' (SIGSEGV on Debian's 16.0.6, 19.1.7 and \
             22.1.8 builds; 23 keeps 22's check; the offload-kit profiles report the violation \
             instead)",
            target_id_of(bad)
        ),
        reference: "clang/lib/Basic/TargetID.cpp, \
                    clang/tools/clang-offload-bundler/ClangOffloadBundler.cpp (16, 19, 22)",
        profile: false,
        profile_first: false,
    })
}

/// The `compatible` case of match vector `n`.
fn match_case(n: usize, m: &Value, messages: &Messages) -> Result<(String, String), String> {
    let entry = str_field(m, "entry")?;
    let request = str_field(m, "request")?;
    let hip_openmp = m["hip_openmp_compatible"].as_bool().unwrap_or(false);
    let verdict = spec::compatible(entry, request, hip_openmp);
    let (expect, rule) = match verdict {
        Err(rule) => (J::Obj(vec![("fail", s(rule))]), rule),
        Ok(c) => (
            J::Obj(vec![("compatible", J::Bool(c))]),
            compat_rule(entry, request),
        ),
    };
    let mut merged = Merged::default();
    for r in Release::WITH_BINARY {
        let got = recorded(m, r)?;
        let (outcome, text) = if let Some(c) = got.as_bool() {
            let outcome = J::Obj(vec![("compatible", J::Bool(c))]);
            if outcome == expect {
                continue;
            }
            let what = if c { "matches" } else { "does not match" };
            (outcome, format!("LLVM {{}} {what}"))
        } else {
            if !r.quirks().hip_openmp_compatible_option && hip_openmp {
                continue; // no -hip-openmp-compatible before 15: n/a there
            }
            let error = str_field(got, "error")?;
            let rs = messages.rules_of(error);
            if verdict.is_err_and(|f| rs.iter().any(|r| r == f)) {
                continue;
            }
            let first = rs.first().map_or("*", String::as_str);
            let outcome = J::Obj(vec![("fail", s(first))]);
            (outcome, format!("LLVM {{}} refuses: {error}"))
        };
        merged.add(r, rule, outcome, text);
    }
    let mut notes = merged.notes(MATCH_REF, |rs, generic| generic.replacen("{}", rs, 1));
    let crash = conflict_check_crash(&[request], verdict.err().unwrap_or("TID-1"));
    for modelled in [Release::Main, Release::L23] {
        let got = modelled_matches(entry, request, hip_openmp, modelled);
        if crash.is_some() && got.as_ref().is_err_and(|m| crashes_in_conflict_check(m)) {
            continue; // 22's conflict check: the crash note names it
        }
        let div = match got {
            Ok(c) => Some(J::Obj(vec![("compatible", J::Bool(c))])).filter(|m| *m != expect),
            Err(error) => {
                let rs = messages.rules_of(&error);
                let conforms = verdict.is_err_and(|f| rs.iter().any(|r| r == f));
                let first = rs.first().map_or("*", String::as_str);
                (!conforms).then(|| J::Obj(vec![("fail", s(first))]))
            }
        };
        // main's own note is about llvm#209845's TargetID::parse.
        let own = modelled
            .quirks()
            .main_target_conflicts
            .then(main_not_amdgcn);
        join_modelled(&mut notes, modelled, div, own)
            .map_err(|e| format!("match '{entry}' for '{request}': {e}"))?;
    }
    notes.extend(crash);
    let mut args = vec![("entry", s(entry)), ("request", s(request))];
    if hip_openmp {
        args.push(("hip_openmp_compatible", J::Bool(true)));
    }
    let suffix = if hip_openmp {
        " (-hip-openmp-compatible)"
    } else {
        ""
    };
    let mut fields = vec![
        (
            "title",
            J::Str(format!(
                "Does entry {} satisfy request {}{suffix}?",
                py_repr(entry),
                py_repr(request)
            )),
        ),
        (
            "source",
            s("tests/data/llvm-id-vectors.json (match); spec/bundle-id.md Matching"),
        ),
        ("rules", J::Arr(vec![s(rule)])),
        ("op", s("compatible")),
        ("args", J::Obj(args)),
        ("expect", expect),
    ];
    if !notes.is_empty() {
        fields.push((
            "known_divergence",
            J::Arr(notes.iter().map(Note::json).collect()),
        ));
    }
    let hipomp = if hip_openmp { "__hipomp" } else { "" };
    let subject = format!("{entry}__{request}{hipomp}");
    Ok(case_text(
        &format!("compatible/{}", slug(&subject, n)),
        fields,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed parse-id and compatible cases are exactly what the
    /// vectors give; `OFFLOAD_KIT_BLESS=1` rewrites them.
    #[test]
    fn generated_cases() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let read = |p: &str| std::fs::read_to_string(format!("{root}/{p}")).expect(p);
        let messages =
            Messages::from_json(&read("conformance/messages/clang-offload-bundler.json")).unwrap();
        let cases = id_vector_cases(&read("tests/data/llvm-id-vectors.json"), &messages).unwrap();
        let corpus = format!("{root}/conformance/corpus");
        let bless = std::env::var_os("OFFLOAD_KIT_BLESS").is_some();
        let mut wrong = Vec::new();
        for group in ["parse-id", "compatible"] {
            let dir = format!("{corpus}/{group}");
            let committed: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            for name in committed {
                let path = format!("{group}/{}", name.trim_end_matches(".json"));
                if !cases.iter().any(|(p, _)| *p == path) {
                    if bless {
                        std::fs::remove_file(format!("{dir}/{name}")).unwrap();
                    } else {
                        wrong.push(format!("{path}: committed, not generated"));
                    }
                }
            }
        }
        for (path, text) in &cases {
            let file = format!("{corpus}/{path}.json");
            if std::fs::read_to_string(&file).ok().as_deref() != Some(text.as_str()) {
                if bless {
                    std::fs::write(&file, text).unwrap();
                } else {
                    wrong.push(format!("{path}: differs from the generated text"));
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "{} of {} cases (OFFLOAD_KIT_BLESS=1 rewrites them):\n{}",
            wrong.len(),
            cases.len(),
            wrong.join("\n")
        );
    }

    /// Every `parse-id` and `compatible` case of the corpus, generated or
    /// written by hand, expects what the strict layer says.
    #[test]
    fn id_cases_expect_the_spec_verdict() {
        let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance/corpus");
        let mut checked = 0;
        for group in std::fs::read_dir(corpus).unwrap() {
            for file in std::fs::read_dir(group.unwrap().path()).unwrap() {
                let path = file.unwrap().path();
                let c: Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                let (args, expect) = (&c["args"], &c["expect"]);
                let spec_fail = |rule: Option<&str>| rule.map(|r| serde_json::json!({ "fail": r }));
                let want = match c["op"].as_str() {
                    Some("parse-id") => match spec::parse_id(args["id"].as_str().unwrap()) {
                        Err(rule) => spec_fail(Some(rule)),
                        // CLI-3 is the list's, not the ID's.
                        Ok(_) if expect["fail"] == "CLI-3" => continue,
                        Ok(_) => Some(serde_json::json!({ "id": { "written": args["id"] } })),
                    },
                    Some("compatible") => {
                        let hip_openmp = args["hip_openmp_compatible"].as_bool().unwrap_or(false);
                        let (e, r) = (
                            args["entry"].as_str().unwrap(),
                            args["request"].as_str().unwrap(),
                        );
                        match spec::compatible(e, r, hip_openmp) {
                            Ok(b) => Some(serde_json::json!({ "compatible": b })),
                            Err(rule) => spec_fail(Some(rule)),
                        }
                    }
                    _ => None,
                };
                let Some(want) = want else { continue };
                assert_eq!(expect, &want, "{}", path.display());
                checked += 1;
            }
        }
        assert!(checked > 257, "only {checked} ID cases checked");
    }

    #[test]
    fn names_and_quotes() {
        assert_eq!(
            slug("hip-amdgcn-amd-amdhsa--gfx90a:xnack+", 7),
            "007-hip-amdgcn-amd-amdhsa--gfx90a_xnack+"
        );
        assert_eq!(slug("::", 1), "001-empty");
        assert_eq!(py_repr("it's"), "\"it's\"");
        assert_eq!(py_repr("a\rb"), "'a\\rb'");
    }
}
