//! The code's shape, checked: release differences live in the release
//! profile (`crates/llvm/src/profile/`) as data, and everything else asks
//! for a quirk (issue 43). A comparison of releases elsewhere fails here,
//! named by file and line.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Whether `line` compares release values (`r >= Release::L19`,
/// `release == Release::Main`, a `r if r <= Release::L16` guard).
fn compares_releases(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    ["==", "!=", ">=", "<=", "> ", "< "].iter().any(|op| {
        code.contains(&format!("{op}Release::")) || code.contains(&format!("{op} Release::"))
    }) || code.contains("Release::L") && code.contains(" if r ")
}

#[test]
fn release_differences_are_quirks_not_comparisons() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in ["src", "crates", "capi/src", "python/src"] {
        rust_files(&root.join(d), &mut files);
    }
    let profile = root.join("crates/llvm/src/profile");
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.starts_with(&profile)) {
        let rel = f.strip_prefix(root).unwrap_or(f);
        if rel.components().any(|c| c.as_os_str() == "tests") {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("read");
        // Unit tests sit at the end of a file, after `#[cfg(test)]`.
        let body = text.split("#[cfg(test)]").next().unwrap_or("");
        for (i, line) in body.lines().enumerate() {
            if compares_releases(line) {
                found.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "release comparisons outside crates/llvm/src/profile/ (add a field to profile::Quirks and ask for it):\n{}",
        found.join("\n")
    );
    assert!(compares_releases("if release >= Release::L22 {"));
    assert!(compares_releases("        r if r <= Release::L16 => None,"));
    assert!(!compares_releases(
        "if release.quirks().checks_input_archives {"
    ));
}

/// The CI workflow's conformance matrix runs every adapter in
/// `conformance/adapters` exactly once (a glob such as `offload-kit-1*`
/// counts for the names it matches), and names no adapter that is gone.
#[test]
fn the_conformance_workflow_runs_every_adapter() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut adapters: Vec<String> = std::fs::read_dir(root.join("conformance/adapters"))
        .expect("conformance/adapters")
        .filter_map(|e| {
            let p = e.ok()?.path();
            let stem = p.file_stem()?.to_string_lossy().into_owned();
            (p.extension()? == "json").then_some(stem)
        })
        .collect();
    adapters.sort();
    let workflow = std::fs::read_to_string(root.join(".github/workflows/conformance.yml"))
        .expect("the workflow");
    let mut in_list = false;
    let mut listed = Vec::new();
    for line in workflow.lines() {
        let t = line.trim();
        if t == "impl:" {
            in_list = true;
            continue;
        }
        if in_list {
            match t.strip_prefix("- ") {
                Some(v) => listed.push(v.trim_matches('"').to_string()),
                None if t.starts_with('#') => {}
                None => break,
            }
        }
    }
    let matches = |pattern: &str, name: &str| match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    };
    for a in &adapters {
        let n = listed.iter().filter(|p| matches(p, a)).count();
        assert_eq!(
            n, 1,
            "adapter {a} is run {n} times by the workflow's matrix {listed:?}"
        );
    }
    for p in &listed {
        assert!(
            adapters.iter().any(|a| matches(p, a)),
            "the workflow runs '{p}', which no adapter is"
        );
    }
}
