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
//! use offload_kit_conformance::{html, load_corpus, Layout, Role, Status, Verdict};
//!
//! let layout = Layout::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance"));
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
nav a{margin-right:1em}.zero{color:#666;font-style:italic}
.show a{margin-right:.8em}.sel{display:none}.why{background:#fff8e1;padding:4px}.vs td{vertical-align:top}
#failing:target~table tbody tr:not(.failing),#documented:target~table tbody tr:not(.documented),
#bug:target~table tbody tr:not(.bug),#pass:target~table tbody tr:not(.pass),
#na:target~table tbody tr:not(.na){display:none}";

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

/// The state a verdict counts as on the dashboard: failing (a new
/// divergence, a crash, a hang, a runner error), documented (a divergence
/// the case records, crashes included: never counted as a pass), a
/// recorded offload-kit bug, passing, or not applicable; in that order.
fn state(v: &Verdict) -> (u8, &'static str) {
    match v.status {
        Status::Differs | Status::Crashed | Status::TimedOut | Status::Error => (0, "failing"),
        Status::Documented => (1, "documented"),
        Status::KnownBug => (2, "bug"),
        Status::Pass => (3, "pass"),
        Status::NotApplicable => (4, "na"),
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

/// Why a verdict is what it is, where the corpus says: the documented
/// divergence's rule and note (and its reference), or the recorded bug.
fn reason(v: &Verdict) -> Option<String> {
    if let Some(n) = &v.note {
        let mut r = format!("documented divergence [{}]: {}", n.rule, n.note);
        if let Some(link) = &n.reference {
            let _ = write!(r, " ({link})");
        }
        return Some(r);
    }
    v.bug.as_ref().map(|b| format!("known bug: {}", b.note))
}

/// A page name the site links to, kept to letters, digits, `.`, `-`, `_`.
fn slug_file(f: &str) -> String {
    f.chars()
        .filter(|c| c.is_ascii_alphanumeric() || ".-_".contains(*c))
        .collect()
}

/// The group of a case: its first path component (`binary`, `ccob`, …).
fn group(id: &str) -> &str {
    id.split('/').next().unwrap_or(id)
}

/// A case ID as a link's path: each `/`-separated part made a [`slug`], so
/// a name from a report (which anyone can write) cannot leave the
/// attribute or the site.
fn href_path(id: &str) -> String {
    id.split('/').map(slug).collect::<Vec<_>>().join("/")
}

/// A file name for `s` (IDs and rules hold only safe characters; anything
/// else becomes `_`).
pub fn slug(s: &str) -> String {
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
            esc(&href_path(&c.id)),
            esc(&c.id)
        );
        for i in impls {
            match by.get(&(c.id.as_str(), i.as_str())) {
                Some(v) => match reason(v) {
                    // The reason on hover, where the corpus gives one.
                    Some(r) => {
                        let _ = write!(
                            s,
                            "<td class=\"{}\" title=\"{}\">{}</td>",
                            class(v),
                            esc(&r),
                            esc(&v.cell())
                        );
                    }
                    None => {
                        let _ = write!(s, "<td class=\"{}\">{}</td>", class(v), esc(&v.cell()));
                    }
                },
                None => s.push_str("<td>-</td>"),
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table>\n");
    s
}

/// Rows of 16 bytes shown around each marked offset (before and after).
const CONTEXT_ROWS: usize = 4;

/// A hex dump of `b`: the first 64 bytes (the header that names the
/// format) and, with marks, the rows around each marked offset
/// (highlighted): bytes are shown only where they explain the case.
/// Runs of two or more all-zero rows are collapsed to one line, and
/// skipped bytes are said.
fn hexdump(b: &[u8], marks: &[u64]) -> String {
    let rows = b.len().div_ceil(16);
    let shown: Vec<bool> = {
        let mut v: Vec<bool> = (0..rows).map(|r| r < 4).collect();
        for &m in marks {
            let r = usize::try_from(m / 16)
                .unwrap_or(usize::MAX)
                .min(rows.saturating_sub(1));
            for x in v
                .iter_mut()
                .take(r + CONTEXT_ROWS + 1)
                .skip(r.saturating_sub(CONTEXT_ROWS))
            {
                *x = true;
            }
        }
        v
    };
    let zero_row = |r: usize| {
        b[r * 16..(r * 16 + 16).min(b.len())]
            .iter()
            .all(|&x| x == 0)
    };
    let mut s = String::new();
    let mut r = 0;
    while r < rows {
        if !shown[r] {
            let from = r;
            while r < rows && !shown[r] {
                r += 1;
            }
            let end = (r * 16).min(b.len());
            let _ = writeln!(
                s,
                "<span class=\"zero\">… {} bytes not shown (0x{:x}–0x{:x})</span>",
                end - from * 16,
                from * 16,
                end
            );
            continue;
        }
        let marked = |row: usize| marks.iter().any(|&m| m / 16 == row as u64);
        if zero_row(r) && !marked(r) {
            let from = r;
            while r < rows && shown[r] && zero_row(r) && !marked(r) {
                r += 1;
            }
            if r - from >= 2 {
                let end = (r * 16).min(b.len());
                let _ = writeln!(
                    s,
                    "<span class=\"zero\">{:08x}  … {} zero bytes (to 0x{end:x})</span>",
                    from * 16,
                    end - from * 16
                );
                continue;
            }
            r = from;
        }
        let at = r * 16;
        let _ = write!(s, "{at:08x}  ");
        for (k, x) in b[at..(at + 16).min(b.len())].iter().enumerate() {
            if marks.contains(&((at + k) as u64)) {
                let _ = write!(s, "<span class=\"hl\">{x:02x}</span> ");
            } else {
                let _ = write!(s, "{x:02x} ");
            }
        }
        s.push('\n');
        r += 1;
    }
    let _ = writeln!(s, "{} bytes in all", b.len());
    s
}

/// The offsets at stake in `bytes`: where offload-kit's strict reader
/// finds the case's expected rule broken (any rule when the case names
/// none), within the input (not inside a decompressed bundle).
fn offsets_at_stake(bytes: &[u8], rule: Option<&str>) -> Vec<u64> {
    let Err(errs) = crate::inspect::validate(&bytes, Default::default()) else {
        return Vec::new();
    };
    let all: Vec<&crate::error::Error> = errs.iter().collect();
    let named: Vec<&&crate::error::Error> = all
        .iter()
        .filter(|e| rule.is_none_or(|r| e.rule_id() == Some(r)))
        .collect();
    let pick: Vec<&crate::error::Error> = if named.is_empty() {
        all.into_iter().take(1).collect()
    } else {
        named.into_iter().copied().collect()
    };
    pick.iter()
        .filter_map(|e| e.offset())
        .filter(|&o| o < bytes.len() as u64)
        .take(8)
        .collect()
}

/// Write the site for `cases` and `impls` (column order) into `dir`.
pub fn write_site(
    cases: &[Case],
    impls: &[String],
    verdicts: &[Verdict],
    dir: &Path,
) -> Result<(), String> {
    write_site_linking(cases, impls, verdicts, dir, &[])
}

/// [`write_site`], with `index.html` linking `pages` (file, title): the
/// `compare.html` and `history.html` the caller writes beside it.
pub fn write_site_linking(
    cases: &[Case],
    impls: &[String],
    verdicts: &[Verdict],
    dir: &Path,
    pages: &[(&str, &str)],
) -> Result<(), String> {
    // Every page is staged and the site committed as a unit: a run that
    // fails half-way leaves no partial site (nor replaces a whole one).
    let staged = std::cell::RefCell::new(Vec::new());
    let write = |rel: &str, text: String| -> Result<(), String> {
        let shown = |e: offload_kit_format::Error| format!("{}: {e}", dir.join(rel).display());
        let mut o = offload_kit_io::output::create_in_dir(dir, rel).map_err(shown)?;
        std::io::Write::write_all(&mut o, text.as_bytes())
            .map_err(|e| shown(offload_kit_format::Error::from(e)))?;
        o.close().map_err(shown)?;
        staged.borrow_mut().push(o);
        Ok(())
    };
    let by: Cells<'_> = verdicts
        .iter()
        .map(|v| ((v.case.as_str(), v.implementation.as_str()), v))
        .collect();
    let all: Vec<&Case> = cases.iter().collect();
    let mut groups: BTreeMap<&str, Vec<&Case>> = BTreeMap::new();
    for c in cases {
        groups.entry(group(&c.id)).or_default().push(c);
    }
    let mut rules: BTreeMap<&str, Vec<&Case>> = BTreeMap::new();
    for c in cases {
        for r in &c.rules {
            rules.entry(r.as_str()).or_default().push(c);
        }
    }
    let mut body = String::new();
    if !pages.is_empty() {
        body.push_str("<p>Also: ");
        for (file, title) in pages {
            let _ = write!(
                body,
                "<a href=\"{}\">{}</a> ",
                esc(&slug_file(file)),
                esc(title)
            );
        }
        body.push_str("</p>\n");
    }
    body += &index_body(&all, impls, &by, &groups, &rules);
    write("index.html", page("offload-kit conformance", 0, &body))?;
    for (g, cs) in &groups {
        write(
            &format!("group-{}.html", slug(g)),
            page(&format!("group {g}"), 0, &matrix(cs, impls, &by, 0)),
        )?;
    }
    for i in impls {
        let b = implementation_body(cases, i, &by);
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
        let b = case_body(c, impls, &by, depth);
        write(
            &format!("case/{}.html", c.id),
            page(&format!("case {}", c.id), depth, &b),
        )?;
    }
    offload_kit_io::output::commit_all(staged.into_inner())
        .map_err(|e| format!("{}: {e}", dir.display()))
}

/// The verdicts by (case, implementation).
type Cells<'a> = BTreeMap<(&'a str, &'a str), &'a Verdict>;

/// The index page: outcomes per group and implementation, the rules, then
/// the matrix of every case.
fn index_body(
    all: &[&Case],
    impls: &[String],
    by: &Cells<'_>,
    groups: &BTreeMap<&str, Vec<&Case>>,
    rules: &BTreeMap<&str, Vec<&Case>>,
) -> String {
    let mut body = String::from(
        "<h2>Outcomes per group</h2><p>Per cell: passes of the cases run; then the \
         divergences the cases document (crashes and hangs included), which are not \
         passes, and the failures.</p><table><thead><tr><th scope=\"col\">group</th>",
    );
    for i in impls {
        let _ = write!(body, "<th scope=\"col\">{}</th>", esc(i));
    }
    body.push_str("</tr></thead><tbody>\n");
    for (g, cs) in groups {
        let _ = write!(
            body,
            "<tr><th scope=\"row\"><a href=\"group-{}.html\">{}</a> ({})</th>",
            slug(g),
            esc(g),
            cs.len()
        );
        for i in impls {
            let mut count = [0usize; 5];
            for c in cs {
                if let Some(v) = by.get(&(c.id.as_str(), i.as_str())) {
                    count[usize::from(state(v).0)] += 1;
                }
            }
            let [failing, documented, bug, pass, _] = count;
            let run = failing + documented + bug + pass;
            if run == 0 {
                body.push_str("<td class=\"na\">n/a</td>");
                continue;
            }
            let cls = match (failing + bug, documented) {
                (0, 0) => "pass",
                (0, _) => "doc",
                _ => "DIFF",
            };
            let mut text = format!("{pass} / {run}");
            for (n, what) in [
                (documented, "documented"),
                (bug, "known bug"),
                (failing, "failing"),
            ] {
                if n > 0 {
                    let _ = write!(text, ", {n} {what}");
                }
            }
            let _ = write!(body, "<td class=\"{cls}\">{text}</td>");
        }
        body.push_str("</tr>\n");
    }
    body.push_str("</tbody></table>\n<h2>Rules</h2><p>");
    for r in rules.keys() {
        let _ = write!(body, "<a href=\"rule-{}.html\">{}</a> ", slug(r), esc(r));
    }
    body.push_str("</p>\n<h2>All cases</h2>\n");
    body.push_str(&matrix(all, impls, by, 0));
    body
}

/// The page of implementation `i`: its outcome for every case, failures
/// first, with a filter by state.
fn implementation_body(cases: &[Case], i: &str, by: &Cells<'_>) -> String {
    let mut rows: Vec<(&Case, &Verdict)> = cases
        .iter()
        .filter_map(|c| Some((c, *by.get(&(c.id.as_str(), i))?)))
        .collect();
    // Failures first; the corpus order within each state.
    rows.sort_by_key(|(_, v)| state(v).0);
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, v) in &rows {
        *count.entry(state(v).1).or_default() += 1;
    }
    // The filter is CSS only (`:target`), so the page works from the
    // file system without JavaScript.
    let mut b = format!(
        "<p class=\"show\">show: <a href=\"#\">all ({})</a>",
        rows.len()
    );
    for (id, label) in [
        ("failing", "failing"),
        ("documented", "documented"),
        ("bug", "known bugs"),
        ("pass", "passing"),
        ("na", "not applicable"),
    ] {
        let _ = write!(
            b,
            "<a href=\"#{id}\">{label} ({})</a>",
            count.get(id).copied().unwrap_or(0)
        );
    }
    b.push_str("</p>");
    for id in ["failing", "documented", "bug", "pass", "na"] {
        let _ = write!(b, "<span id=\"{id}\" class=\"sel\"></span>");
    }
    b.push_str("<table><thead><tr><th scope=\"col\">case</th><th scope=\"col\">outcome</th><th scope=\"col\">detail</th></tr></thead><tbody>\n");
    for (c, v) in rows {
        let _ = writeln!(
            b,
            "<tr class=\"{}\"><th scope=\"row\"><a href=\"case/{}.html\">{}</a></th><td class=\"{}\">{}</td><td>{}</td></tr>",
            state(v).1,
            esc(&href_path(&c.id)),
            esc(&c.id),
            class(v),
            esc(&v.cell()),
            esc(&reason(v).map_or_else(|| v.detail.clone(), |r| format!("{r}. {}", v.detail)))
        );
    }
    b.push_str("</tbody></table>\n");
    b
}

/// The page of case `c` (`depth` folders below the site's root): what the
/// spec expects, its inputs dumped around the offsets at stake, and what
/// each implementation did.
fn case_body(c: &Case, impls: &[String], by: &Cells<'_>, depth: usize) -> String {
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
    let rule = c.expect.fail.as_deref().filter(|r| *r != "*");
    for (name, spec) in &c.inputs {
        let _ = write!(b, "<h2>Input {}</h2>", esc(name));
        match spec.build(None) {
            Ok(Some(bytes)) => {
                let mut marks = marks.clone();
                marks.extend(offsets_at_stake(&bytes, rule));
                marks.sort_unstable();
                marks.dedup();
                if marks.is_empty() {
                    b.push_str("<p>no offset at stake: the header only</p>");
                } else {
                    let at: Vec<String> = marks.iter().map(|m| format!("0x{m:x}")).collect();
                    let _ = write!(b, "<p>at stake: offset {}</p>", at.join(", "));
                }
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
                "<h3 class=\"{}\">{}: {}</h3>",
                class(v),
                esc(i),
                esc(&v.cell())
            );
            if let Some(r) = reason(v) {
                let _ = write!(b, "<p class=\"why\"><strong>why:</strong> {}</p>", esc(&r));
            }
            // Expected and observed side by side, where they differ.
            if v.status != Status::Pass && v.status != Status::NotApplicable {
                let _ = write!(
                    b,
                    "<table class=\"vs\"><thead><tr><th scope=\"col\">expected (spec)</th>\
                     <th scope=\"col\">observed</th></tr></thead><tbody><tr><td><pre>{}</pre></td>\
                     <td><pre>{}</pre></td></tr></tbody></table>",
                    esc(&expected_text(c)),
                    esc(&v.observed)
                );
            } else {
                let _ = write!(b, "<p>observed: {}</p>", esc(&v.observed));
            }
            let _ = write!(
                b,
                "<pre>{}</pre><p>{}</p>",
                esc(&v.commands.join("\n")),
                esc(&v.detail)
            );
        }
    }
    b
}

/// What the spec expects of `c`, in words: the rule a failure must name,
/// or the outcome.
fn expected_text(c: &Case) -> String {
    match c.expect.fail.as_deref() {
        Some("*") => "fails (any rule)".to_string(),
        Some(rule) => format!("fails with rule {rule}"),
        None => serde_json::to_string_pretty(&c.expect).expect("serialisable"),
    }
}

/// Write `compare.html` into `dir`: the pass score of each implementation
/// per spec chapter before and after, the rules whose outcomes moved, and
/// the cases whose outcome changed, linked to their case pages
/// ([`super::compare::Comparison`]).
pub fn write_compare(dir: &Path, c: &super::compare::Comparison) -> Result<(), String> {
    let mut b = format!(
        "<p>{} change(s)</p><h2>Pass score per implementation and chapter</h2><table id=\"scores\"><thead><tr><th scope=\"col\">implementation</th><th scope=\"col\">chapter</th><th scope=\"col\">before</th><th scope=\"col\">after</th><th scope=\"col\">change</th></tr></thead><tbody>\n",
        c.changes.len()
    );
    for ((imp, ch), before, after, d) in c.score_rows() {
        let class = if d < 0 { "differs" } else { "pass" };
        let _ = writeln!(
            b,
            "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}/{}</td><td>{}/{}</td><td class=\"{class}\">{d:+}</td></tr>",
            esc(imp),
            esc(ch),
            before.0,
            before.1,
            after.0,
            after.1
        );
    }
    b.push_str("</tbody></table><h2>Rules</h2><table id=\"rules\"><thead><tr><th scope=\"col\">rule</th><th scope=\"col\">became a pass</th><th scope=\"col\">stopped being one</th></tr></thead><tbody>\n");
    for (r, (fixed, broke)) in c.rules.iter().filter(|(_, (f, b))| f + b > 0) {
        let _ = writeln!(
            b,
            "<tr><th scope=\"row\">{}</th><td>{fixed}</td><td>{broke}</td></tr>",
            esc(r)
        );
    }
    b.push_str("</tbody></table><h2>Cases</h2><table id=\"changes\"><thead><tr><th scope=\"col\">case</th><th scope=\"col\">implementation</th><th scope=\"col\">before</th><th scope=\"col\">after</th></tr></thead><tbody>\n");
    for ch in &c.changes {
        let _ = writeln!(
            b,
            "<tr><th scope=\"row\"><a href=\"case/{}.html\">{}</a></th><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&href_path(&ch.case)),
            esc(&ch.case),
            esc(&ch.implementation),
            esc(&ch.before),
            esc(&ch.after)
        );
    }
    b.push_str("</tbody></table>\n");
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    offload_kit_io::output::write_in_dir(dir, "compare.html", page(&c.title, 0, &b).as_bytes())
        .map_err(|e| e.to_string())
}

/// `history.html` in `dir`: the pass score of each implementation per
/// chapter in each run, oldest first, each cell marked by whether it rose
/// or fell since the run before.
pub fn write_history(dir: &Path, h: &super::compare::History) -> Result<(), String> {
    let mut b = String::from("<table id=\"history\"><thead><tr><th scope=\"col\">implementation</th><th scope=\"col\">chapter</th>");
    for r in &h.runs {
        let _ = write!(b, "<th scope=\"col\">{}</th>", esc(r));
    }
    b.push_str("</tr></thead><tbody>\n");
    for ((imp, ch), cells) in h.rows() {
        let _ = write!(
            b,
            "<tr><th scope=\"row\">{}</th><td>{}</td>",
            esc(imp),
            esc(ch)
        );
        let mut last: Option<usize> = None;
        for c in &cells {
            match c {
                None => b.push_str("<td>-</td>"),
                Some((p, n)) => {
                    let class = match last {
                        Some(l) if *p > l => " class=\"pass\"",
                        Some(l) if *p < l => " class=\"differs\"",
                        _ => "",
                    };
                    let _ = write!(b, "<td{class}>{p}/{n}</td>");
                    last = Some(*p);
                }
            }
        }
        b.push_str("</tr>\n");
    }
    b.push_str("</tbody></table>\n");
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let title = format!("Pass scores over {} runs", h.runs.len());
    offload_kit_io::output::write_in_dir(dir, "history.html", page(&title, 0, &b).as_bytes())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {

    #[test]
    fn names_from_reports_cannot_leave_a_link() {
        // A case name from an old report is anyone's text.
        let evil = "x\"><script>alert(1)</script>";
        let href = esc(&href_path(evil));
        assert!(!href.contains('"') && !href.contains('<'), "{href}");
        assert_eq!(href_path("locate/fatbin-0"), "locate/fatbin-0");
    }
    use super::*;
    use crate::{load_corpus, Layout, Role};

    fn verdict(case: &str, implementation: &str, status: Status) -> Verdict {
        Verdict {
            underlying: (status == Status::Documented).then_some(Status::Crashed),
            ..Verdict::for_test(case, implementation, status, Role::Subject)
        }
    }

    #[test]
    fn hexdump_shows_the_offsets_at_stake_and_collapses_zeros() {
        let mut b = vec![0u8; 4096];
        b[..4].copy_from_slice(b"CCOB");
        b[3000] = 0xab;
        let d = hexdump(&b, &[3000]);
        assert!(d.contains("<span class=\"hl\">ab</span>"), "{d}");
        // The first 64 bytes, then a gap, then rows around 3000.
        assert!(d.contains("bytes not shown"), "{d}");
        assert!(d.contains("00000bb0"), "{d}");
        assert!(!d.contains("00000800"), "{d}");
        // Zero rows next to the mark are collapsed into one line.
        assert!(d.contains("zero bytes"), "{d}");
        assert!(d.ends_with("4096 bytes in all\n"));
        // Without marks: the header only (64 bytes), the rest said.
        let d = hexdump(&(0..=255u8).cycle().take(8192).collect::<Vec<u8>>(), &[]);
        assert!(d.contains("00000030") && !d.contains("00000040"), "{d}");
        assert!(d.contains("8128 bytes not shown"), "{d}");
    }

    #[test]
    fn documented_divergences_are_their_own_state_and_failures_come_first() {
        let layout = Layout::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance"));
        let cases: Vec<_> = load_corpus(&layout.corpus())
            .unwrap()
            .into_iter()
            .filter(|c| c.id.starts_with("archive/ar-"))
            .take(3)
            .collect();
        assert_eq!(cases.len(), 3);
        let impls = ["x".to_string(), "y".to_string()];
        let verdicts = vec![
            verdict(&cases[0].id, "x", Status::Pass),
            verdict(&cases[1].id, "x", Status::Documented),
            verdict(&cases[2].id, "x", Status::Differs),
            verdict(&cases[0].id, "y", Status::Pass),
            verdict(&cases[1].id, "y", Status::Documented),
            verdict(&cases[2].id, "y", Status::Pass),
        ];
        let dir = tempfile::tempdir().unwrap();
        write_site(&cases, &impls, &verdicts, dir.path()).unwrap();
        let index = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
        // y passes two of three, and the documented crash is not a pass.
        assert!(
            index.contains("<td class=\"doc\">2 / 3, 1 documented</td>"),
            "{index}"
        );
        assert!(
            index.contains("<td class=\"DIFF\">1 / 3, 1 documented, 1 failing</td>"),
            "{index}"
        );
        let x = std::fs::read_to_string(dir.path().join("impl-x.html")).unwrap();
        let at = |id: &str| x.find(&format!("case/{id}.html")).unwrap();
        assert!(at(&cases[2].id) < at(&cases[1].id) && at(&cases[1].id) < at(&cases[0].id));
        assert!(x.contains("<a href=\"#failing\">failing (1)</a>"), "{x}");
        assert!(x.contains("<tr class=\"documented\">"), "{x}");
        // archive/ar-1-truncated-member: the member's size field.
        let page =
            std::fs::read_to_string(dir.path().join(format!("case/{}.html", cases[1].id))).unwrap();
        assert!(page.contains("at stake: offset 0x38"), "{page}");
    }

    /// The dashboard says why (issue 44): a documented divergence's note on
    /// the case page, in the matrix cell's title and on the implementation
    /// page; expected and observed side by side for a failure; the index
    /// links the comparison pages written beside it.
    #[test]
    fn divergences_say_why_and_the_index_links_comparisons() {
        let layout = Layout::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance"));
        let cases: Vec<_> = load_corpus(&layout.corpus())
            .unwrap()
            .into_iter()
            .filter(|c| c.id.starts_with("archive/ar-"))
            .take(2)
            .collect();
        let impls = ["x".to_string()];
        let mut documented = verdict(&cases[0].id, "x", Status::Documented);
        documented.note = Some(crate::case::KnownDivergence {
            releases: vec![],
            adapters: vec!["x".into()],
            rule: "AR-1".into(),
            outcome: crate::case::NoteOutcome::Word("crash".into()),
            profile: false,
            note: "LLVM reads <past> the member".into(),
            reference: Some("llvm#1".into()),
        });
        let mut differs = verdict(&cases[1].id, "x", Status::Differs);
        differs.observed = "exit 0, 2 entries".into();
        let dir = tempfile::tempdir().unwrap();
        let pages = [
            ("compare.html", "what changed"),
            ("history.html", "history"),
        ];
        write_site_linking(&cases, &impls, &[documented, differs], dir.path(), &pages).unwrap();
        let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap();
        let why = "documented divergence [AR-1]: LLVM reads &lt;past&gt; the member (llvm#1)";
        let page = read(&format!("case/{}.html", cases[0].id));
        assert!(
            page.contains(&format!("<strong>why:</strong> {why}")),
            "{page}"
        );
        let index = read("index.html");
        assert!(index.contains(&format!("title=\"{why}\"")), "{index}");
        assert!(
            index.contains("<a href=\"compare.html\">what changed</a>"),
            "{index}"
        );
        assert!(
            index.contains("<a href=\"history.html\">history</a>"),
            "{index}"
        );
        assert!(read("impl-x.html").contains(why));
        let page = read(&format!("case/{}.html", cases[1].id));
        assert!(
            page.contains("expected (spec)</th>") && page.contains("<pre>exit 0, 2 entries</pre>"),
            "{page}"
        );
        assert!(!page.contains("why:"), "{page}");
    }
}
