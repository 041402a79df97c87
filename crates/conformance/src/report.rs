//! Reports: the case × implementation matrix, documented and new
//! divergences, per-implementation counts, JSON and JUnit.
//!
//! # Example
//!
//! Count two verdicts of a reference and decide what fails the run.
//!
//! ```
//! use offload_kit_conformance::report::{counts, failures, junit};
//! use offload_kit_conformance::{Adapter, Role, Status, Verdict};
//!
//! let a: Adapter = serde_json::from_str(
//!     r#"{"name": "llvm", "role": "reference", "program": "x", "commands": {}}"#).unwrap();
//! let verdict = |case: &str, status| Verdict { case: case.into(), implementation: "llvm".into(),
//!     status, underlying: None, detail: String::new(), observed: String::new(), note: None,
//!     bug: None, commands: vec![], seconds: 0.0, role: Role::Reference };
//! let vs = [verdict("a", Status::Pass), verdict("b", Status::Differs)];
//! let c = &counts(&[a.clone()], &vs)[0].1;
//! assert_eq!((c.pass, c.differs, c.new), (1, 1, 1));
//! // A new divergence of a reference fails the run unless that is allowed.
//! assert_eq!(failures(&vs, false).len(), 1);
//! assert!(failures(&vs, true).is_empty());
//! assert!(junit(&[a], &vs).contains("<failure message"));
//! ```

use super::adapter::{Adapter, Role};
use super::case::Case;
use super::judge::{Status, Verdict};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Counts for one implementation.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// As the spec says.
    pub pass: usize,
    /// Documented divergences.
    pub documented: usize,
    /// Undocumented differences.
    pub differs: usize,
    /// Crashes (including documented ones).
    pub crashed: usize,
    /// Time-outs (including documented ones).
    pub timed_out: usize,
    /// Not applicable.
    pub not_applicable: usize,
    /// Runner errors.
    pub error: usize,
    /// Failures caused by recorded offload-kit bugs (`known_bugs`).
    pub known_bug: usize,
    /// New (undocumented) divergences: differs + undocumented crashes and time-outs + errors.
    pub new: usize,
}

/// Per-implementation counts, in adapter order.
pub fn counts(adapters: &[Adapter], verdicts: &[Verdict]) -> Vec<(String, Counts)> {
    adapters
        .iter()
        .map(|a| {
            let mut c = Counts::default();
            for v in verdicts.iter().filter(|v| v.implementation == a.name) {
                match v.status {
                    Status::Pass => c.pass += 1,
                    Status::Documented => {
                        c.documented += 1;
                        match v.underlying {
                            Some(Status::Crashed) => c.crashed += 1,
                            Some(Status::TimedOut) => c.timed_out += 1,
                            _ => {}
                        }
                    }
                    Status::Differs => c.differs += 1,
                    Status::Crashed => c.crashed += 1,
                    Status::TimedOut => c.timed_out += 1,
                    Status::NotApplicable => c.not_applicable += 1,
                    Status::Error => c.error += 1,
                    Status::KnownBug => c.known_bug += 1,
                }
                if v.status.is_new() {
                    c.new += 1;
                }
            }
            (a.name.clone(), c)
        })
        .collect()
}

/// The verdicts that fail the run: every new divergence of a subject, and
/// of a reference unless `allow_new_reference`.
pub fn failures(verdicts: &[Verdict], allow_new_reference: bool) -> Vec<&Verdict> {
    verdicts
        .iter()
        .filter(|v| {
            v.status.is_new()
                && (v.role == Role::Subject || (v.role == Role::Reference && !allow_new_reference))
        })
        .collect()
}

/// The matrix, documented divergences, new divergences and the summary, as text.
pub fn text(cases: &[Case], adapters: &[Adapter], verdicts: &[Verdict], matrix: bool) -> String {
    let mut s = if matrix {
        matrix_text(cases, adapters, verdicts)
    } else {
        String::new()
    };
    s.push_str(&documented_text(verdicts));
    let bugs: Vec<&Verdict> = verdicts
        .iter()
        .filter(|v| v.status == Status::KnownBug)
        .collect();
    let _ = writeln!(
        s,
        "== offload-kit bugs the corpus records (known_bugs; not fixed yet) ({}) ==",
        bugs.len()
    );
    for v in &bugs {
        let _ = writeln!(
            s,
            "  {} on {}: {}\n      bug: {}\n      observed: {}",
            v.case,
            v.implementation,
            v.detail,
            v.bug.as_ref().map_or("", |b| b.note.as_str()),
            v.observed
        );
    }
    s.push('\n');
    let (found, news): (Vec<&Verdict>, Vec<&Verdict>) = verdicts
        .iter()
        .filter(|v| v.status.is_new())
        .partition(|v| v.role == Role::Measured);
    let _ = writeln!(
        s,
        "== Findings in third-party implementations ({}; measured, never patched) ==",
        found.len()
    );
    for v in &found {
        let _ = writeln!(
            s,
            "  {} on {}: {} — {}\n      command: {}",
            v.status.label(),
            v.implementation,
            v.case,
            v.detail,
            v.commands.join(" ; ")
        );
    }
    let _ = writeln!(s, "\n== NEW divergences from the spec ({}) ==", news.len());
    for v in &news {
        let _ = writeln!(
            s,
            "  {} on {}: {} — {}\n      observed: {}\n      command: {}",
            v.status.label(),
            v.implementation,
            v.case,
            v.detail,
            v.observed,
            v.commands.join(" ; ")
        );
    }
    let _ = writeln!(s, "\n== Summary ({} cases) ==", cases.len());
    let _ = writeln!(
        s,
        "  {:<22} {:>5} {:>10} {:>7} {:>7} {:>7} {:>5} {:>5} {:>5} {:>5}",
        "implementation",
        "pass",
        "documented",
        "differs",
        "crashed",
        "timeout",
        "n/a",
        "error",
        "bug",
        "NEW"
    );
    for (name, c) in counts(adapters, verdicts) {
        let _ = writeln!(
            s,
            "  {:<22} {:>5} {:>10} {:>7} {:>7} {:>7} {:>5} {:>5} {:>5} {:>5}",
            name,
            c.pass,
            c.documented,
            c.differs,
            c.crashed,
            c.timed_out,
            c.not_applicable,
            c.error,
            c.known_bug,
            c.new
        );
    }
    let _ = writeln!(
        s,
        "  (crashed and timeout include documented ones; bug = failures of recorded offload-kit bugs;\n   NEW = undocumented divergences and runner errors)"
    );
    s
}

/// The case × implementation matrix, one cell per verdict.
fn matrix_text(cases: &[Case], adapters: &[Adapter], verdicts: &[Verdict]) -> String {
    let mut s = String::new();
    let by: BTreeMap<(&str, &str), &Verdict> = verdicts
        .iter()
        .map(|v| ((v.case.as_str(), v.implementation.as_str()), v))
        .collect();
    let w = cases.iter().map(|c| c.id.len()).max().unwrap_or(4).max(4);
    let cols: Vec<usize> = adapters.iter().map(|a| a.name.len().max(9)).collect();
    let _ = write!(s, "{:<w$}", "case");
    for (a, cw) in adapters.iter().zip(&cols) {
        let _ = write!(s, "  {:<cw$}", a.name);
    }
    s.truncate(s.trim_end().len());
    s.push('\n');
    for c in cases {
        let _ = write!(s, "{:<w$}", c.id);
        for (a, cw) in adapters.iter().zip(&cols) {
            let cell = by
                .get(&(c.id.as_str(), a.name.as_str()))
                .map_or("-".to_string(), |v| v.cell());
            let _ = write!(s, "  {cell:<cw$}");
        }
        s.truncate(s.trim_end().len());
        s.push('\n');
    }
    s.push('\n');
    s
}

/// The documented divergences, grouped by (case, note): LLVM's, then the
/// ones offload-kit's release profiles reproduce on purpose.
fn documented_text(verdicts: &[Verdict]) -> String {
    let mut s = String::new();
    for (role, heading) in [
        (Role::Reference, "LLVM deviates from the spec as documented"),
        (
            Role::Subject,
            "offload-kit reproduces documented release behaviour (profile notes)",
        ),
    ] {
        let mut doc: BTreeMap<(String, String), Vec<&Verdict>> = BTreeMap::new();
        for v in verdicts
            .iter()
            .filter(|v| v.status == Status::Documented && v.role == role)
        {
            let n = v
                .note
                .as_ref()
                .expect("documented verdicts carry their note");
            doc.entry((v.case.clone(), format!("[{}] {}", n.rule, n.note)))
                .or_default()
                .push(v);
        }
        let _ = writeln!(
            s,
            "== {heading} ({} results) ==",
            doc.values().map(Vec::len).sum::<usize>()
        );
        for ((case, note), vs) in &doc {
            let impls: Vec<String> = vs
                .iter()
                .map(|v| {
                    if v.underlying == Some(Status::Crashed) {
                        format!("{} (crash)", v.implementation)
                    } else {
                        v.implementation.clone()
                    }
                })
                .collect();
            let _ = writeln!(s, "  {case}: {} — {note}", impls.join(", "));
        }
        s.push('\n');
    }
    s
}

/// The machine-readable report.
pub fn json(
    cases: &[Case],
    adapters: &[Adapter],
    verdicts: &[Verdict],
    seconds: f64,
) -> serde_json::Value {
    let impls: Vec<serde_json::Value> = adapters
        .iter()
        .map(|a| {
            serde_json::json!({
                "name": a.name,
                "role": a.role,
                "release": a.release.map(|r| r.major()),
                "description": a.description,
            })
        })
        .collect();
    let summary: BTreeMap<String, Counts> = counts(adapters, verdicts).into_iter().collect();
    serde_json::json!({
        "cases": cases.len(),
        "implementations": impls,
        "seconds": seconds,
        "summary": summary,
        "results": verdicts,
    })
}

/// Escape text for XML and HTML (control characters as character references).
pub(crate) fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {
                let _ = write!(o, "&#x{:x};", c as u32);
            }
            c => o.push(c),
        }
    }
    o
}

/// JUnit XML: one test suite per implementation, one test case per corpus case.
/// New divergences are failures, n/a is skipped, documented divergences pass
/// with the note in `system-out`.
pub fn junit(adapters: &[Adapter], verdicts: &[Verdict]) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"offload-kit conformance\">\n");
    for a in adapters {
        let vs: Vec<&Verdict> = verdicts
            .iter()
            .filter(|v| v.implementation == a.name)
            .collect();
        let failures = vs.iter().filter(|v| v.status.is_new()).count();
        let skipped = vs
            .iter()
            .filter(|v| matches!(v.status, Status::NotApplicable | Status::KnownBug))
            .count();
        let time: f64 = vs.iter().map(|v| v.seconds).sum();
        let _ = writeln!(
            s,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{time:.3}\">",
            xml_escape(&a.name),
            vs.len()
        );
        for v in vs {
            let _ = write!(
                s,
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
                xml_escape(&a.name),
                xml_escape(&v.case),
                v.seconds
            );
            match v.status {
                Status::Pass => s.push_str("/>\n"),
                Status::NotApplicable => {
                    let _ = writeln!(
                        s,
                        ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                        xml_escape(&v.detail)
                    );
                }
                Status::KnownBug => {
                    let b = v.bug.as_ref().map_or("", |b| b.note.as_str());
                    let _ = writeln!(
                        s,
                        ">\n      <skipped message=\"known offload-kit bug: {}\"/>\n      <system-out>{}\n{}</system-out>\n    </testcase>",
                        xml_escape(b),
                        xml_escape(&v.detail),
                        xml_escape(&v.observed)
                    );
                }
                Status::Documented => {
                    let n = v.note.as_ref().map_or(String::new(), |n| {
                        format!("documented divergence [{}]: {}", n.rule, n.note)
                    });
                    let _ = writeln!(
                        s,
                        ">\n      <system-out>{}\n{}</system-out>\n    </testcase>",
                        xml_escape(&n),
                        xml_escape(&v.observed)
                    );
                }
                _ => {
                    let _ = writeln!(
                        s,
                        ">\n      <failure message=\"{}\" type=\"{}\">{}\ncommand: {}</failure>\n    </testcase>",
                        xml_escape(&v.detail),
                        v.status.label(),
                        xml_escape(&v.observed),
                        xml_escape(&v.commands.join(" ; "))
                    );
                }
            }
        }
        s.push_str("  </testsuite>\n");
    }
    s.push_str("</testsuites>\n");
    s
}

/// The results of a JSON report ([`json`]): for `conformance merge` of
/// runs split by implementation, and `--compare`. A report larger than
/// `budget` is refused.
pub fn load_results(
    path: &std::path::Path,
    budget: offload_kit_llvm::budget::Budget,
) -> Result<Vec<Verdict>, String> {
    // A report names whatever file it is given: never waited on (a FIFO),
    // never read past the memory budget.
    let text = offload_kit_io::input::read_regular_text(path, budget.bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_value(v.get("results").cloned().unwrap_or_default())
        .map_err(|e| format!("{}: results: {e}", path.display()))
}

/// One case whose outcome changed between two sets of results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The case.
    pub case: String,
    /// The implementation (for a comparison of two implementations: `A → B`).
    pub implementation: String,
    /// The earlier cell (`-`: not run).
    pub before: String,
    /// The later cell.
    pub after: String,
}

/// The (case, implementation) pairs whose matrix cell differs between
/// `old` and `new` (a pair missing on one side shows as `-`).
pub fn changes(old: &[Verdict], new: &[Verdict]) -> Vec<Change> {
    let key = |v: &Verdict| (v.case.clone(), v.implementation.clone());
    let o: BTreeMap<(String, String), String> = old.iter().map(|v| (key(v), v.cell())).collect();
    let n: BTreeMap<(String, String), String> = new.iter().map(|v| (key(v), v.cell())).collect();
    let mut keys: Vec<&(String, String)> = o.keys().chain(n.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let before = o.get(k).cloned().unwrap_or_else(|| "-".into());
            let after = n.get(k).cloned().unwrap_or_else(|| "-".into());
            (before != after).then(|| Change {
                case: k.0.clone(),
                implementation: k.1.clone(),
                before,
                after,
            })
        })
        .collect()
}

/// The changes as text, one line each.
pub fn changes_text(title: &str, cs: &[Change]) -> String {
    let mut s = format!("== {title}: {} change(s) ==\n", cs.len());
    for c in cs {
        let _ = writeln!(
            s,
            "  {} on {}: {} → {}",
            c.case, c.implementation, c.before, c.after
        );
    }
    s
}
