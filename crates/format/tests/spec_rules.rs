//! The rule headings of `spec/*.md` and the rule catalogue of `crates/format/src/rules.rs`
//! agree (spec/README.md, *Rules*):
//!
//! * every rule is defined exactly once, by a heading `### <ID> — <title>`,
//!   in the chapter the catalogue names, with the catalogue's title word for
//!   word;
//! * every catalogue rule has its heading and every rule heading is in the
//!   catalogue;
//! * each chapter's headings come in the catalogue's order ("all rules, in
//!   spec order");
//! * every string in `spec/` shaped like an ID of a catalogue prefix names a
//!   catalogue rule;
//! * the *Chapters* table of spec/README.md gives each chapter exactly its
//!   catalogue rules.
//!
//! Every disagreement is reported with the rule ID, the file and the line;
//! `check_reports_each_disagreement` feeds the checker broken copies to show
//! that each check can fail.

use offload_kit_format::rules::{Rule, ALL};
use std::collections::{BTreeMap, BTreeSet};

const SPEC_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../spec");

/// `(file name, text)` of every `spec/*.md`, sorted by name.
fn spec_files() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(SPEC_DIR)
        .unwrap_or_else(|e| panic!("{SPEC_DIR}: {e}"))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, text)
        })
        .collect();
    v.sort();
    v
}

/// The ID-shaped token (`[A-Z]+-[0-9]+`) at the start of `s`, if any, with
/// its length.
fn id_at(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    let letters = b.iter().take_while(|c| c.is_ascii_uppercase()).count();
    if letters == 0 || b.get(letters) != Some(&b'-') {
        return None;
    }
    let digits = b[letters + 1..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let end = letters + 1 + digits;
    if digits == 0 || b.get(end).is_some_and(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    Some(&s[..end])
}

fn prefix(id: &str) -> &str {
    id.split('-').next().unwrap_or(id)
}

/// Every ID-shaped token of `text` not glued to a preceding word, with its
/// 1-based line number.
fn mentions(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (i, _) in line.char_indices() {
            let glued = line[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !glued {
                if let Some(id) = id_at(&line[i..]) {
                    out.push((n + 1, id));
                }
            }
        }
    }
    out
}

/// A rule heading: `### <ID> — <title>`.
struct Heading<'a> {
    file: &'a str,
    line: usize,
    id: &'a str,
    title: &'a str,
}

/// The rule headings of one chapter; a heading that starts with an ID but is
/// not of the form `### <ID> — <title>` is a problem.
fn headings<'a>(file: &'a str, text: &'a str, problems: &mut Vec<String>) -> Vec<Heading<'a>> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let hashes = line.bytes().take_while(|&c| c == b'#').count();
        if hashes == 0 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let rest = line[hashes..].trim_start();
        let Some(id) = id_at(rest) else { continue };
        match rest[id.len()..].strip_prefix(" — ") {
            Some(title) if hashes == 3 && !title.trim().is_empty() => out.push(Heading {
                file,
                line: n + 1,
                id,
                title: title.trim_end(),
            }),
            _ => problems.push(format!(
                "{id}: {file}:{}: a rule heading must read `### {id} — <title>`, found {line:?}",
                n + 1
            )),
        }
    }
    out
}

/// The rules the *Chapters* table of README.md gives each chapter, from its
/// last column (`BIN-1 … BIN-13, ID-1 … ID-6`).
fn chapter_table(readme: &str, problems: &mut Vec<String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for (n, line) in readme.lines().enumerate() {
        let Some(link) = line.strip_prefix("| [") else {
            continue;
        };
        let file = link.split(']').next().unwrap_or_default().to_string();
        let cols: Vec<&str> = line.trim_end_matches('|').split('|').collect();
        let mut rules = BTreeSet::new();
        for range in cols.last().unwrap_or(&"").split(',') {
            let range = range.trim();
            let (a, b) = range.split_once(" … ").unwrap_or((range, range));
            let num =
                |id: &str| id_at(id).and_then(|id| id[prefix(id).len() + 1..].parse::<u32>().ok());
            match (num(a), num(b)) {
                (Some(x), Some(y)) if prefix(a) == prefix(b) && x <= y => {
                    rules.extend((x..=y).map(|i| format!("{}-{i}", prefix(a))));
                }
                _ => problems.push(format!(
                    "README.md:{}: chapter {file}: cannot read the rule range {range:?}",
                    n + 1
                )),
            }
        }
        out.insert(file, rules);
    }
    out
}

/// Every disagreement between `catalogue` and the chapters `files`.
fn check(catalogue: &[Rule], files: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();

    // The catalogue itself: well-formed, unique IDs, chapters that exist.
    let mut by_id: BTreeMap<&str, &Rule> = BTreeMap::new();
    for r in catalogue {
        if id_at(r.id) != Some(r.id) {
            problems.push(format!(
                "{}: catalogue ID is not of the form PREFIX-N",
                r.id
            ));
        }
        if by_id.insert(r.id, r).is_some() {
            problems.push(format!("{}: listed twice in the catalogue", r.id));
        }
        if !files.iter().any(|(f, _)| f == r.chapter) {
            problems.push(format!(
                "{}: catalogue chapter {} is not a file of spec/",
                r.id, r.chapter
            ));
        }
    }
    let prefixes: BTreeSet<&str> = catalogue.iter().map(|r| prefix(r.id)).collect();

    // The headings: each once, in its catalogue chapter, with its title.
    let mut defined: BTreeMap<&str, &Heading> = BTreeMap::new();
    let all: Vec<Heading> = files
        .iter()
        .flat_map(|(f, t)| headings(f, t, &mut problems))
        .collect();
    for h in &all {
        if let Some(first) = defined.insert(h.id, h) {
            problems.push(format!(
                "{}: defined twice, {}:{} and {}:{}",
                h.id, first.file, first.line, h.file, h.line
            ));
        }
        match by_id.get(h.id) {
            None => problems.push(format!(
                "{}: heading at {}:{} is not in the catalogue (crates/format/src/rules.rs)",
                h.id, h.file, h.line
            )),
            Some(r) => {
                if r.chapter != h.file {
                    problems.push(format!(
                        "{}: the catalogue puts it in {}, its heading is in {}:{}",
                        h.id, r.chapter, h.file, h.line
                    ));
                }
                if r.title != h.title {
                    problems.push(format!(
                        "{}: title differs: catalogue {:?}, heading {}:{} {:?}",
                        h.id, r.title, h.file, h.line, h.title
                    ));
                }
            }
        }
    }
    for r in catalogue {
        if !defined.contains_key(r.id) {
            problems.push(format!(
                "{}: in the catalogue (chapter {}) but no spec heading defines it",
                r.id, r.chapter
            ));
        }
    }

    // Order within each chapter.
    for (file, _) in files {
        let want: Vec<&str> = catalogue
            .iter()
            .filter(|r| r.chapter == file)
            .map(|r| r.id)
            .collect();
        let got: Vec<&str> = all
            .iter()
            .filter(|h| h.file == file && by_id.get(h.id).is_some_and(|r| r.chapter == file))
            .map(|h| h.id)
            .collect();
        let common: Vec<&str> = want.iter().copied().filter(|id| got.contains(id)).collect();
        if let Some((w, g)) = common.iter().zip(&got).find(|(w, g)| w != g) {
            problems.push(format!(
                "{g}: {file} defines it where the catalogue has {w}: headings and catalogue are in different orders"
            ));
        }
    }

    // Every ID-shaped string of a catalogue prefix names a rule.
    for (file, text) in files {
        for (line, id) in mentions(text) {
            if prefixes.contains(prefix(id)) && !by_id.contains_key(id) {
                problems.push(format!(
                    "{id}: {file}:{line} names a rule the catalogue does not have"
                ));
            }
        }
    }

    // The chapter table of README.md.
    if let Some((_, readme)) = files.iter().find(|(f, _)| f == "README.md") {
        let table = chapter_table(readme, &mut problems);
        let chapters: BTreeSet<&str> = catalogue.iter().map(|r| r.chapter).collect();
        for chapter in &chapters {
            let want: BTreeSet<String> = catalogue
                .iter()
                .filter(|r| r.chapter == *chapter)
                .map(|r| r.id.to_string())
                .collect();
            match table.get(*chapter) {
                None => problems.push(format!(
                    "{}: chapter {chapter} is missing from the README.md chapter table",
                    want.iter().next().map(String::as_str).unwrap_or("?")
                )),
                Some(got) => {
                    for id in want.difference(got) {
                        problems.push(format!("{id}: not in README.md's rule range for {chapter}"));
                    }
                    for id in got.difference(&want) {
                        problems.push(format!(
                            "{id}: README.md's rule range for {chapter} has it, the catalogue does not"
                        ));
                    }
                }
            }
        }
    }
    problems
}

#[test]
fn spec_and_catalogue_agree() {
    let files = spec_files();
    assert!(
        files.iter().any(|(f, _)| f == "README.md") && files.len() > 2,
        "spec chapters in {SPEC_DIR}"
    );
    let problems = check(ALL, &files);
    assert!(
        problems.is_empty(),
        "spec/*.md and crates/format/src/rules.rs disagree:\n  {}",
        problems.join("\n  ")
    );
    let defined: usize = files
        .iter()
        .map(|(f, t)| headings(f, t, &mut Vec::new()).len())
        .sum();
    assert_eq!(defined, ALL.len(), "one heading per catalogue rule");
}

/// The checker finds each kind of disagreement and names the rule.
#[test]
fn check_reports_each_disagreement() {
    let files = spec_files();
    let edit = |file: &str, from: &str, to: &str| -> Vec<(String, String)> {
        files
            .iter()
            .map(|(f, t)| {
                if f == file {
                    assert_eq!(t.matches(from).count(), 1, "{from:?} once in {f}");
                    (f.clone(), t.replacen(from, to, 1))
                } else {
                    (f.clone(), t.clone())
                }
            })
            .collect()
    };
    let reported = |problems: &[String], id: &str, what: &str| {
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with(&format!("{id}: ")) && p.contains(what)),
            "expected a problem for {id} containing {what:?}, got {problems:#?}"
        );
    };
    let bin5 = ALL.iter().find(|r| r.id == "BIN-5").expect("BIN-5");
    let bin5_heading = format!("### BIN-5 — {}", bin5.title);

    // A heading renumbered: its rule loses its heading, the new ID is unknown.
    let p = check(
        ALL,
        &edit(
            "binary-bundle.md",
            &bin5_heading,
            &bin5_heading.replace("BIN-5", "BIN-55"),
        ),
    );
    reported(&p, "BIN-5", "no spec heading");
    reported(&p, "BIN-55", "not in the catalogue");

    // A catalogue rule in another chapter.
    let moved: Vec<Rule> = ALL
        .iter()
        .map(|r| {
            if r.id == "BIN-5" {
                Rule {
                    chapter: "cli.md",
                    ..*r
                }
            } else {
                *r
            }
        })
        .collect();
    reported(
        &check(&moved, &files),
        "BIN-5",
        "the catalogue puts it in cli.md",
    );

    // A catalogue rule dropped: its heading and the mentions are unknown.
    let dropped: Vec<Rule> = ALL.iter().filter(|r| r.id != "BIN-5").copied().collect();
    let p = check(&dropped, &files);
    reported(&p, "BIN-5", "not in the catalogue");
    reported(&p, "BIN-5", "names a rule the catalogue does not have");

    // A title changed, a heading written badly, a rule defined twice.
    reported(
        &check(
            ALL,
            &edit(
                "binary-bundle.md",
                &bin5_heading,
                &format!("{bin5_heading}!"),
            ),
        ),
        "BIN-5",
        "title differs",
    );
    reported(
        &check(
            ALL,
            &edit(
                "binary-bundle.md",
                &bin5_heading,
                &bin5_heading.replace(" — ", " - "),
            ),
        ),
        "BIN-5",
        "must read",
    );
    reported(
        &check(
            ALL,
            &edit(
                "cli.md",
                "## Rules\n",
                &format!("## Rules\n\n{bin5_heading}\n"),
            ),
        ),
        "BIN-5",
        "defined twice",
    );

    // Two rules swapped in the catalogue.
    let mut swapped = ALL.to_vec();
    let (i, j) = (
        swapped.iter().position(|r| r.id == "BIN-5").expect("BIN-5"),
        swapped.iter().position(|r| r.id == "BIN-6").expect("BIN-6"),
    );
    swapped.swap(i, j);
    reported(&check(&swapped, &files), "BIN-5", "different orders");

    // A mention of a rule that does not exist, and a README range too short.
    reported(
        &check(
            ALL,
            &edit(
                "cli.md",
                "`invalid bundle alignment` | BIN-11 |",
                "`invalid bundle alignment` | BIN-99 |",
            ),
        ),
        "BIN-99",
        "names a rule",
    );
    reported(
        &check(
            ALL,
            &edit("README.md", "| BIN-1 … BIN-13 |", "| BIN-1 … BIN-12 |"),
        ),
        "BIN-13",
        "not in README.md's rule range",
    );
}
