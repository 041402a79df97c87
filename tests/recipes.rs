//! CONTRIBUTING.md's change recipes, checked (issue 43). A new conformance
//! subject is followed here for real: one adapter file in a copy of
//! `conformance/adapters` makes a column the matrix runs, with no code
//! changed. The recipes for a new fuzz target and a new LLVM release are
//! checked against every target and release there is: each has exactly
//! the files its recipe names, so a recipe that forgot a file fails here
//! on the rows already added. (A new container version is followed in
//! `crates/llvm/tests/fake_layout.rs`.)

use offload_kit::Release;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_offload-kit");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The adapters of `conformance/adapters`, by file stem.
fn adapters() -> Vec<(String, Value)> {
    let dir = root().join("conformance/adapters");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "json").then_some(p)
        })
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            let v = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (stem, v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The recipe for a new conformance subject, followed: a lister whose
/// output fits an existing shape (here `offload-kit list --uri`, lines
/// `<id> file://PATH#offset=N&size=M`, as a third-party tool would print
/// them) gets one adapter file, and the matrix runs it as a column of its
/// own; the only other file is the workflow's line
/// (`tests/layers.rs::the_conformance_workflow_runs_every_adapter`), which
/// the real one lacks for this name, as it must.
#[test]
fn a_new_conformance_subject_is_an_adapter_file() {
    let tmp = tempfile::tempdir().unwrap();
    let conf = tmp.path().join("conformance");
    std::fs::create_dir(&conf).unwrap();
    // Everything but the adapters, as it is; the adapters copied.
    for e in std::fs::read_dir(root().join("conformance")).unwrap() {
        let e = e.unwrap();
        let to = conf.join(e.file_name());
        if e.file_name() == "adapters" {
            std::fs::create_dir(&to).unwrap();
            for a in std::fs::read_dir(e.path()).unwrap() {
                let a = a.unwrap();
                std::fs::copy(a.path(), to.join(a.file_name())).unwrap();
            }
        } else {
            std::os::unix::fs::symlink(e.path(), &to).unwrap();
        }
    }
    let adapter = serde_json::json!({
        "name": "lister-under-test",
        "description": "a third-party lister (the recipe's trial: offload-kit list --uri standing in)",
        "role": "measured",
        "program": EXE,
        "default": false,
        "commands": {"locate": ["{program}", "list", "--uri", "{input}"]},
        "locate": {"pattern": "^(?P<id>\\S+)\\s+file://\\S*#offset=(?P<offset>[0-9]+)&size=(?P<size>[0-9]+)$"},
        "failures_name_no_rule": true
    });
    let file = conf.join("adapters/lister-under-test.json");
    std::fs::write(&file, serde_json::to_string_pretty(&adapter).unwrap()).unwrap();
    let run = |args: &[&str]| {
        let o = Command::new(EXE)
            .arg("conformance")
            .args(["--root", conf.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (o.status.code(), text(&o.stdout), text(&o.stderr))
    };
    let (_, listed, _) = run(&["--list-impls"]);
    assert!(listed.contains("lister-under-test"), "{listed}");
    let report = tmp.path().join("report.json");
    let (code, out, err) = run(&[
        "--impl",
        "lister-under-test",
        "--case",
        "locate/**",
        "--summary-only",
        "--json",
        report.to_str().unwrap(),
    ]);
    assert!(code == Some(0) || code == Some(1), "{out}{err}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let ours = |r: &&Value| r["implementation"] == "lister-under-test";
    let results: Vec<&Value> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(ours)
        .collect();
    let passes = results.iter().filter(|r| r["status"] == "pass").count();
    // The locate cases a bundle lister can pass (kpack ones aside).
    assert!(
        results.len() >= 20,
        "{} runs in the new column:\n{out}{err}",
        results.len()
    );
    assert!(
        passes * 2 >= results.len(),
        "{passes} of {} pass:\n{out}{err}",
        results.len()
    );
    // The repository's own adapters and workflow know nothing of it: a
    // real addition adds the workflow's line (the third file).
    assert!(!read(".github/workflows/conformance.yml").contains("lister-under-test"));
    assert!(adapters().iter().all(|(n, _)| n != "lister-under-test"));
}

/// Every fuzz target is the four code files the recipe names: its body in
/// `crates/smith/src/fuzzing.rs`, `fuzz/fuzz_targets/<name>.rs` handing
/// the input to it, its `[[bin]]` in `fuzz/Cargo.toml`, and a smoke test
/// in `tests/fuzz_smoke.rs`; the OSS-Fuzz build and `tools/fuzz-ci` name
/// no target (they take every file of `fuzz/fuzz_targets/`; `fuzz-ci`'s
/// own chained run of `mutate_chain` aside).
#[test]
fn every_fuzz_target_is_the_files_its_recipe_names() {
    let bodies: Vec<String> = read("crates/smith/src/fuzzing.rs")
        .lines()
        .filter_map(|l| l.strip_prefix("pub fn "))
        .filter_map(|l| l.split_once("(data: &[u8])").map(|(n, _)| n.to_string()))
        .collect();
    let mut files: Vec<String> = std::fs::read_dir(root().join("fuzz/fuzz_targets"))
        .unwrap()
        .map(|e| {
            e.unwrap()
                .path()
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    files.sort();
    let mut sorted = bodies.clone();
    sorted.sort();
    assert_eq!(
        files, sorted,
        "fuzz/fuzz_targets/ against fuzzing.rs's bodies"
    );
    let cargo = read("fuzz/Cargo.toml");
    let smoke = read("tests/fuzz_smoke.rs");
    // tools/fuzz-ci names one target of its own: the 30-second chained
    // run of mutate_chain (issue 41), besides the few seconds of each.
    let fuzz_ci = read("tools/fuzz-ci").replace("mutate_chain", "");
    let shared = [read("fuzz/oss-fuzz/build.sh"), fuzz_ci];
    for name in &bodies {
        let target = read(&format!("fuzz/fuzz_targets/{name}.rs"));
        assert!(
            target.contains(&format!("fuzzing::{name}(")),
            "{name}: the target calls another body"
        );
        assert!(
            cargo.contains(&format!("name = \"{name}\"")),
            "{name}: no [[bin]] in fuzz/Cargo.toml"
        );
        assert!(
            smoke.contains(&format!("fuzzing::{name}(")),
            "{name}: no smoke test"
        );
        for s in &shared {
            assert!(
                !s.contains(&format!("{name} ")),
                "{name} is named where every target is taken"
            );
        }
    }
}

/// Every modelled release has what the release recipe lists: its quirks
/// row (the match in `Release::quirks` is exhaustive; the row says which
/// release it is), a version that parses back, a subject column
/// (`conformance/adapters/offload-kit*.json` with its release) and a line
/// in the workflow; a release with a binary its reference column
/// (`llvm-<N>.json`) and its line in `tools/llvm-releases`; a numbered
/// release modelled from source only, its source list (`docs/llvm-<N>.md`).
#[test]
fn every_release_has_what_the_release_recipe_lists() {
    let adapters = adapters();
    let column = |role: &str, r: Release| {
        adapters.iter().find(|(_, v)| {
            let release = match &v["release"] {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return false,
            };
            v["role"] == role && release == r.to_string()
        })
    };
    let workflow = read(".github/workflows/conformance.yml");
    let binaries: Vec<String> = read("tools/llvm-releases")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .collect();
    for r in Release::MODELLED {
        assert_eq!(r.quirks().release, r, "{r}: its arm returns another row");
        assert_eq!(
            r.to_string().parse::<Release>().ok(),
            Some(r),
            "{r}: does not parse back"
        );
        let Some((name, _)) = column("subject", r) else {
            panic!("{r}: no conformance/adapters/offload-kit*.json with its release")
        };
        let runs = |line: &str| {
            let p = line
                .trim()
                .strip_prefix("- ")
                .unwrap_or("")
                .trim_matches('"');
            match p.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => p == name,
            }
        };
        assert!(
            workflow.lines().any(runs),
            "{r}: the workflow does not run {name}"
        );
        let with_binary = Release::WITH_BINARY.contains(&r);
        assert_eq!(
            binaries.contains(&r.to_string()),
            with_binary,
            "{r}: tools/llvm-releases"
        );
        if with_binary {
            assert!(
                column("reference", r).is_some(),
                "{r}: no conformance/adapters/llvm-{r}.json"
            );
        } else if r != Release::Main {
            assert!(
                root().join(format!("docs/llvm-{r}.md")).exists(),
                "{r}: no docs/llvm-{r}.md"
            );
        }
    }
}
