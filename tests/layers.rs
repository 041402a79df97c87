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

/// The Rust files of the crates, the root package, the C ABI and the
/// Python module.
fn code_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for d in ["src", "crates", "capi/src", "python/src"] {
        rust_files(&root.join(d), &mut files);
    }
    files
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
    let files = code_files(root);
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

/// Every `static` in the crates, the C ABI and the Python module, each
/// with why it may be one. Process-wide configuration is not among the
/// reasons a static may exist (configuration is passed as a value: the
/// memory budget and the colour choice are each front end's values), so a
/// new static fails here, named by file and name, until it says why.
const STATICS: &[(&str, &str, &str)] = &[
    (
        "crates/cli/src/lib.rs",
        "SPOOL",
        "standard input, read once per process",
    ),
    (
        "crates/cli/src/term.rs",
        "AFTER",
        "a constant read from the environment once",
    ),
    (
        "crates/conformance/src/exec.rs",
        "ONCE",
        "the runner lowers its own core-file limit once",
    ),
    (
        "crates/format/src/id/mod.rs",
        "SEEN",
        "a per-thread cache of parsed IDs",
    ),
    (
        "crates/format/src/ccob/write.rs",
        "ZSTD",
        "a per-thread compressor, reused",
    ),
    (
        "crates/io/src/output.rs",
        "HELD",
        "a count of open output files in this process",
    ),
    (
        "crates/io/src/output.rs",
        "NEXT",
        "a counter for temporary names",
    ),
    (
        "crates/smith/src/generate/pick.rs",
        "IDS",
        "built-in ID pools, parsed once",
    ),
    (
        "crates/smith/src/generate/ccob.rs",
        "ZSTD",
        "a per-thread compressor, reused",
    ),
    (
        "crates/smith/src/generate/ccob.rs",
        "ZLIB",
        "a per-thread compressor, reused",
    ),
    (
        "crates/io/src/guarded.rs",
        "START",
        "the SIGBUS handler's table of guarded mappings",
    ),
    (
        "crates/io/src/guarded.rs",
        "END",
        "the SIGBUS handler's table of guarded mappings",
    ),
    (
        "crates/io/src/guarded.rs",
        "FAULTED",
        "the SIGBUS handler's table of guarded mappings",
    ),
    (
        "crates/io/src/guarded.rs",
        "PREVIOUS",
        "the signal action the SIGBUS handler replaced",
    ),
    (
        "crates/io/src/guarded.rs",
        "PAGE",
        "the page size, read once before the handler is installed",
    ),
];

#[test]
fn statics_are_listed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = code_files(root);
    let mut found = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        // Tests' own fixtures are not the library's state.
        if rel.contains("/tests/") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            // `static`, after any visibility (`pub`, `pub(crate)`,
            // `pub(in path)`) or a `thread_local!(` on the same line.
            let Some(at) = code.find("static ") else {
                continue;
            };
            let before = code[..at].trim();
            let visibility = before.is_empty()
                || before == "pub"
                || (before.starts_with("pub(") && before.ends_with(')'))
                || before.ends_with("thread_local!(")
                || before.ends_with("thread_local! {");
            if !visibility {
                continue;
            }
            let rest = &code[at + "static ".len()..];
            let name: String = (rest.chars())
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.push((rel.clone(), name));
            }
        }
    }
    found.sort();
    let mut listed: Vec<(String, String)> = (STATICS.iter())
        .map(|(f, n, _)| (f.to_string(), n.to_string()))
        .collect();
    listed.sort();
    let new: Vec<_> = found.iter().filter(|s| !listed.contains(s)).collect();
    let gone: Vec<_> = listed.iter().filter(|s| !found.contains(s)).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "statics not listed in tests/layers.rs (say why each may be one; configuration is passed as a value): {new:?}; listed but gone (take them off): {gone:?}"
    );
    // Configuration (the memory budget, the colour choice) is a value each
    // front end makes and passes down: no static may hold it.
    let configuration = STATICS.iter().filter(|s| s.2.starts_with("configuration"));
    assert_eq!(
        configuration.count(),
        0,
        "configuration is passed as a value"
    );
}
