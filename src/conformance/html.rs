//! The dashboard: a static site written from a run's verdicts that opens
//! from the file system, without a server and without JavaScript
//! (`offload-kit conformance --html DIR`).
//!
//! - `index.html`: pass counts per implementation and corpus group (like
//!   wpt.fyi's per-directory view), then the case × implementation matrix,
//!   one colour per outcome, with the outcome also written in each cell;
//! - `group-<name>.html`: the matrix of one group (the filter by format);
//! - `impl-<name>.html`: one implementation's results (the filter by
//!   implementation);
//! - `case/<id>.html`: the inputs as hex dumps, the expectation, and per
//!   implementation the command, what it did and the difference;
//! - `rule-<ID>.html`: the rule, its cases and which implementations follow it.
//!
//! # Example
//!
//! ```
//! use offload_kit::conformance::{html, load_corpus, Layout, Role, Status, Verdict};
//!
//! let layout = Layout::new(concat!(env!("CARGO_MANIFEST_DIR"), "/conformance"));
//! let cases: Vec<_> = load_corpus(&layout.corpus()).unwrap().into_iter()
//!     .filter(|c| c.id == "locate/fatbin-0").collect();
//! let v = Verdict { case: "locate/fatbin-0".into(), implementation: "x".into(), status: Status::Pass,
//!     underlying: None, detail: String::new(), observed: String::new(), note: None, bug: None,
//!     commands: vec![], seconds: 0.0, role: Role::Subject };
//! let dir = tempfile::tempdir().unwrap();
//! html::write_site(&cases, &["x".to_string()], &[v], dir.path()).unwrap();
//! let index = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
//! assert!(index.contains("case/locate/fatbin-0.html"));
//! assert!(dir.path().join("case/locate/fatbin-0.html").is_file());
//! ```

use super::case::Case;
use super::judge::{Status, Verdict};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::report::xml_escape as esc;

/// Colours chosen for contrast (text stays readable; the outcome is also
/// written in the cell, so colour is never the only signal).
const STYLE: &str = "body{font:15px/1.4 system-ui,sans-serif;margin:1.5em;color:#111;background:#fff}
table{border-collapse:collapse}th,td{border:1px solid #999;padding:2px 6px;text-align:left}
th{background:#eee;position:sticky;top:0}a{color:#0645ad}a:focus{outline:3px solid #f90}
.pass{background:#c8f0c8}.doc{background:#e6e6fa}.DIFF{background:#ffc7c7}.CRASH{background:#ff8c8c}
.TIMEOUT{background:#ffd59a}.na{background:#f4f4f4;color:#555}.bug{background:#ffe9a8}.ERROR{background:#ff8c8c}
pre{background:#f7f7f7;padding:6px;overflow-x:auto}.hl{background:#ffd54f}
nav a{margin-right:1em}";

/// The CSS class of a cell.
fn class(v: &Verdict) -> &'static str {
    match v.status {
        Status::Pass => "pass",
        Status::Documented => "doc",
        Status::Differs => "DIFF",
        Status::Crashed => "CRASH",
        Status::TimedOut => "TIMEOUT",
        Status::NotApplicable => "na",
        Status::KnownBug => "bug",
        Status::Error => "ERROR",
    }
}

fn page(title: &str, depth: usize, body: &str) -> String {
    let up = "../".repeat(depth);
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\
         <style>{STYLE}</style></head><body><nav><a href=\"{up}index.html\">matrix</a></nav>\
         <h1>{t}</h1>\n{body}</body></html>\n",
        t = esc(title)
    )
}

/// The group of a case: its first path component (`binary`, `ccob`, …).
fn group(id: &str) -> &str {
    id.split('/').next().unwrap_or(id)
}

/// A file name for `s` (IDs and rules hold only safe characters; anything
/// else becomes `_`).
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn matrix(
    cases: &[&Case],
    impls: &[String],
    by: &BTreeMap<(&str, &str), &Verdict>,
    depth: usize,
) -> String {
    let up = "../".repeat(depth);
    let mut s = String::from("<table><thead><tr><th scope=\"col\">case</th>");
    for i in impls {
        let _ = write!(
            s,
            "<th scope=\"col\"><a href=\"{up}impl-{}.html\">{}</a></th>",
            slug(i),
            esc(i)
        );
    }
    s.push_str("</tr></thead><tbody>\n");
    for c in cases {
        let _ = write!(
            s,
            "<tr><th scope=\"row\"><a href=\"{up}case/{}.html\">{}</a></th>",
            c.id,
            esc(&c.id)
        );
        for i in impls {
            match by.get(&(c.id.as_str(), i.as_str())) {
                Some(v) => {
                    let _ = write!(s, "<td class=\"{}\">{}</td>", class(v), esc(&v.cell()));
                }
                None => s.push_str("<td>-</td>"),
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table>\n");
    s
}

/// A hex dump of `b` (at most 4 KiB shown); offsets in `marks` highlighted.
fn hexdump(b: &[u8], marks: &[u64]) -> String {
    let mut s = String::new();
    for (row, chunk) in b.chunks(16).take(256).enumerate() {
        let at = row * 16;
        let _ = write!(s, "{at:08x}  ");
        for (k, x) in chunk.iter().enumerate() {
            let off = (at + k) as u64;
            if marks.contains(&off) {
                let _ = write!(s, "<span class=\"hl\">{x:02x}</span> ");
            } else {
                let _ = write!(s, "{x:02x} ");
            }
        }
        s.push('\n');
    }
    if b.len() > 4096 {
        let _ = writeln!(s, "… {} bytes in all", b.len());
    }
    s
}

/// Write the site for `cases` and `impls` (column order) into `dir`.
pub fn write_site(
    cases: &[Case],
    impls: &[String],
    verdicts: &[Verdict],
    dir: &Path,
) -> Result<(), String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let write = |rel: &str, text: String| -> Result<(), String> {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("has a parent")).map_err(|e| io(&p, e))?;
        std::fs::write(&p, text).map_err(|e| io(&p, e))
    };
    let by: BTreeMap<(&str, &str), &Verdict> = verdicts
        .iter()
        .map(|v| ((v.case.as_str(), v.implementation.as_str()), v))
        .collect();
    let all: Vec<&Case> = cases.iter().collect();
    let mut groups: BTreeMap<&str, Vec<&Case>> = BTreeMap::new();
    for c in cases {
        groups.entry(group(&c.id)).or_default().push(c);
    }
    // index: pass counts per group and implementation, then the matrix.
    let mut body =
        String::from("<h2>Passes per group</h2><table><thead><tr><th scope=\"col\">group</th>");
    for i in impls {
        let _ = write!(body, "<th scope=\"col\">{}</th>", esc(i));
    }
    body.push_str("</tr></thead><tbody>\n");
    for (g, cs) in &groups {
        let _ = write!(
            body,
            "<tr><th scope=\"row\"><a href=\"group-{}.html\">{}</a> ({})</th>",
            slug(g),
            esc(g),
            cs.len()
        );
        for i in impls {
            let run: Vec<&&Verdict> = cs
                .iter()
                .filter_map(|c| by.get(&(c.id.as_str(), i.as_str())))
                .filter(|v| v.status != Status::NotApplicable)
                .collect();
            let ok = run
                .iter()
                .filter(|v| matches!(v.status, Status::Pass | Status::Documented))
                .count();
            if run.is_empty() {
                body.push_str("<td class=\"na\">n/a</td>");
            } else {
                let cls = if ok == run.len() { "pass" } else { "DIFF" };
                let _ = write!(body, "<td class=\"{cls}\">{ok} / {}</td>", run.len());
            }
        }
        body.push_str("</tr>\n");
    }
    body.push_str("</tbody></table>\n<h2>Rules</h2><p>");
    let mut rules: BTreeMap<&str, Vec<&Case>> = BTreeMap::new();
    for c in cases {
        for r in &c.rules {
            rules.entry(r.as_str()).or_default().push(c);
        }
    }
    for r in rules.keys() {
        let _ = write!(body, "<a href=\"rule-{}.html\">{}</a> ", slug(r), esc(r));
    }
    body.push_str("</p>\n<h2>All cases</h2>\n");
    body.push_str(&matrix(&all, impls, &by, 0));
    write("index.html", page("offload-kit conformance", 0, &body))?;
    for (g, cs) in &groups {
        write(
            &format!("group-{}.html", slug(g)),
            page(&format!("group {g}"), 0, &matrix(cs, impls, &by, 0)),
        )?;
    }
    for i in impls {
        let mut b = String::from("<table><thead><tr><th scope=\"col\">case</th><th scope=\"col\">outcome</th><th scope=\"col\">detail</th></tr></thead><tbody>\n");
        for c in cases {
            if let Some(v) = by.get(&(c.id.as_str(), i.as_str())) {
                let _ = writeln!(
                    b,
                    "<tr><th scope=\"row\"><a href=\"case/{}.html\">{}</a></th><td class=\"{}\">{}</td><td>{}</td></tr>",
                    c.id,
                    esc(&c.id),
                    class(v),
                    esc(&v.cell()),
                    esc(&v.detail)
                );
            }
        }
        b.push_str("</tbody></table>\n");
        write(
            &format!("impl-{}.html", slug(i)),
            page(&format!("implementation {i}"), 0, &b),
        )?;
    }
    for (r, cs) in &rules {
        let mut b = String::new();
        if let Some(rule) = crate::rules::by_id(r) {
            let _ = write!(b, "<p>{} (spec/{})</p>", esc(rule.title), esc(rule.chapter));
        }
        b.push_str(&matrix(cs, impls, &by, 0));
        write(
            &format!("rule-{}.html", slug(r)),
            page(&format!("rule {r}"), 0, &b),
        )?;
    }
    for c in cases {
        let depth = c.id.matches('/').count() + 1;
        let mut b = String::new();
        let _ = write!(
            b,
            "<p>{}</p><p>operation <code>{}</code>; rules {}</p>",
            esc(&c.title),
            c.op.name(),
            c.rules
                .iter()
                .map(|r| format!(
                    "<a href=\"{}rule-{}.html\">{}</a>",
                    "../".repeat(depth),
                    slug(r),
                    esc(r)
                ))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let expect = serde_json::to_string_pretty(&c.expect).expect("serialisable");
        let _ = write!(b, "<h2>Expected (spec)</h2><pre>{}</pre>", esc(&expect));
        // Offsets the expectation or the case title names are marked.
        let marks: Vec<u64> = c
            .title
            .split("offset ")
            .skip(1)
            .filter_map(|t| {
                t.split(|ch: char| !ch.is_ascii_digit())
                    .next()?
                    .parse()
                    .ok()
            })
            .collect();
        for (name, spec) in &c.inputs {
            let _ = write!(b, "<h2>Input {}</h2>", esc(name));
            match spec.build(None) {
                Ok(Some(bytes)) => {
                    let _ = write!(b, "<pre>{}</pre>", hexdump(&bytes, &marks));
                }
                Ok(None) => b.push_str("<p>(a missing file)</p>"),
                Err(e) => {
                    let _ = write!(b, "<p>cannot build: {}</p>", esc(&e));
                }
            }
        }
        b.push_str("<h2>Implementations</h2>");
        for i in impls {
            if let Some(v) = by.get(&(c.id.as_str(), i.as_str())) {
                let _ = write!(
                    b,
                    "<h3 class=\"{}\">{}: {}</h3><pre>{}</pre><p>observed: {}</p><p>{}</p>",
                    class(v),
                    esc(i),
                    esc(&v.cell()),
                    esc(&v.commands.join("\n")),
                    esc(&v.observed),
                    esc(&v.detail)
                );
            }
        }
        write(
            &format!("case/{}.html", c.id),
            page(&format!("case {}", c.id), depth, &b),
        )?;
    }
    Ok(())
}

/// Write `compare.html` into `dir`: the cases whose outcome changed (see
/// [`super::report::changes`]), linked to their case pages.
pub fn write_compare(
    dir: &Path,
    title: &str,
    changes: &[super::report::Change],
) -> Result<(), String> {
    let mut b = format!("<p>{} change(s)</p><table><thead><tr><th scope=\"col\">case</th><th scope=\"col\">implementation</th><th scope=\"col\">before</th><th scope=\"col\">after</th></tr></thead><tbody>\n", changes.len());
    for c in changes {
        let _ = writeln!(
            b,
            "<tr><th scope=\"row\"><a href=\"case/{}.html\">{}</a></th><td>{}</td><td>{}</td><td>{}</td></tr>",
            c.case,
            esc(&c.case),
            esc(&c.implementation),
            esc(&c.before),
            esc(&c.after)
        );
    }
    b.push_str("</tbody></table>\n");
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let p = dir.join("compare.html");
    std::fs::write(&p, page(title, 0, &b)).map_err(|e| format!("{}: {e}", p.display()))
}
