//! Conformance runner: runs the JSON corpus (`conformance/corpus/**/*.json`)
//! against implementations described by adapter files
//! (`conformance/adapters/*.json`) and prints a case × implementation matrix.
//!
//! Expectations are per spec rule, not per tool. For an implementation that
//! follows an LLVM release, the expectation is adjusted by that release's
//! profile: IDs given as `{"written": T}` are spelled with
//! [`Release::written_id`](crate::profile::Release::written_id), and `-list`
//! output is compared in [`Release::stringmap_order`](crate::profile::Release::stringmap_order)
//! (or as a set). What a release does beyond that is either documented in
//! the case (`known_divergence`, citing a rule) or a new divergence.
//!
//! Exit status (`offload-kit conformance`): 0 when no implementation shows
//! a new divergence; 1 when offload-kit fails a case (any result that is
//! neither the spec's nor a divergence its release profile reproduces on
//! purpose; a crash or a hang never is) or when LLVM shows a divergence the
//! corpus does not document (`--allow-new-llvm` reports those without
//! failing); 2 on usage or corpus errors. See `conformance/README.md`.

pub mod adapter;
pub mod case;
pub mod exec;
pub mod judge;
pub mod random;
pub mod report;
pub mod spec;

pub use adapter::{Adapter, Role};
pub use case::{load_corpus, Case};
pub use judge::{run_case, RunContext, Status, Verdict};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where the corpus, adapters and message tables live.
#[derive(Debug, Clone)]
pub struct Layout {
    /// `conformance/`.
    pub root: PathBuf,
}

impl Layout {
    /// The layout rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Layout {
        Layout { root: root.into() }
    }

    /// Find `conformance/`: `$OFFLOAD_KIT_CONFORMANCE`, `./conformance`, the
    /// repository of the running binary (`target/*/offload-kit`), or the
    /// source tree this was built from.
    pub fn discover() -> Option<Layout> {
        if let Some(p) = std::env::var_os("OFFLOAD_KIT_CONFORMANCE") {
            return Some(Layout::new(p));
        }
        let mut candidates = vec![PathBuf::from("conformance")];
        if let Ok(exe) = std::env::current_exe() {
            for anc in exe.ancestors().skip(1).take(4) {
                candidates.push(anc.join("conformance"));
            }
        }
        candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance"));
        candidates
            .into_iter()
            .find(|c| c.join("corpus").is_dir())
            .map(Layout::new)
    }

    /// `conformance/corpus`.
    pub fn corpus(&self) -> PathBuf {
        self.root.join("corpus")
    }

    /// `conformance/adapters`.
    pub fn adapters(&self) -> PathBuf {
        self.root.join("adapters")
    }

    /// `conformance/messages`.
    pub fn messages(&self) -> PathBuf {
        self.root.join("messages")
    }
}

/// Shell-style glob match (`*`, `?`, `**` crosses `/`; `*` does not).
pub fn glob_match(pat: &str, s: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some((b'*', rest)) => {
                let (cross, rest) = match rest.split_first() {
                    Some((b'*', r)) => (true, r),
                    _ => (false, rest),
                };
                for i in 0..=s.len() {
                    if go(rest, &s[i..]) {
                        return true;
                    }
                    if i < s.len() && !cross && s[i] == b'/' {
                        return false;
                    }
                }
                false
            }
            Some((b'?', rest)) => !s.is_empty() && s[0] != b'/' && go(rest, &s[1..]),
            Some((c, rest)) => s.first() == Some(c) && go(rest, &s[1..]),
        }
    }
    go(pat.as_bytes(), s.as_bytes())
}

/// Whether case `id` is selected by `globs` (all when empty). A glob without
/// a wildcard also selects the cases under it as a directory.
pub fn case_selected(globs: &[String], id: &str) -> bool {
    globs.is_empty()
        || globs.iter().any(|g| {
            glob_match(g, id) || glob_match(&format!("{}/**", g.trim_end_matches('/')), id)
        })
}

/// Run every case against every adapter, `jobs` runs at a time. Verdicts
/// come back in (case, adapter) order.
pub fn run_matrix(
    cases: &[Case],
    adapters: &[Adapter],
    rc: &RunContext,
    jobs: usize,
) -> Vec<Verdict> {
    let work: Vec<(usize, usize)> = (0..cases.len())
        .flat_map(|c| (0..adapters.len()).map(move |a| (c, a)))
        .collect();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Verdict>>> = Mutex::new(vec![None; work.len()]);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(c, a)) = work.get(i) else {
                    break;
                };
                let v = run_case(&cases[c], &adapters[a], rc);
                results.lock().expect("no panics while holding the lock")[i] = Some(v);
            });
        }
    });
    results
        .into_inner()
        .expect("threads joined")
        .into_iter()
        .map(|v| v.expect("every job ran"))
        .collect()
}

/// Parallel runs by default: twice the CPUs (runs are short processes that
/// also wait on the file system).
pub fn default_jobs() -> usize {
    2 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Whether missing LLVM releases are acceptable (`OFFLOAD_KIT_NO_LLVM=1`).
pub fn llvm_optional() -> bool {
    std::env::var("OFFLOAD_KIT_NO_LLVM").is_ok_and(|v| v == "1")
}

/// The message for a reference implementation that is not installed.
pub fn missing_message(a: &Adapter, offload_kit: &Path) -> String {
    match a.release {
        Some(r) if a.role == Role::Reference => format!(
            "LLVM {} not installed: run tools/setup ({} not found)",
            r.major(),
            a.program_path(offload_kit)
        ),
        _ => format!("{}: {} not found", a.name, a.program_path(offload_kit)),
    }
}

const USAGE: &str = "usage: offload-kit conformance [options]

Runs conformance/corpus/**/*.json against every available implementation
(conformance/adapters/*.json) and prints a case x implementation matrix.

options:
  --impl NAME        run only this implementation (glob; repeatable)
  --case GLOB        run only matching cases, e.g. 'malformed/**' (repeatable)
  --adapter FILE     add an adapter file (e.g. conformance/adapters-test/broken-align.json)
  --root DIR         the conformance directory (default: found automatically)
  --json FILE        write the JSON report
  --junit FILE       write a JUnit XML report
  --jobs N           parallel runs (default: twice the number of CPUs)
  --timeout SECONDS  time limit per run (default: the adapter's, 10 s)
  --summary-only     do not print the matrix
  --allow-new-llvm   new LLVM divergences are reported but do not fail the run
  --list-impls       list every adapter, whether it runs by default and is installed
  --random N --seed S [--repro-dir DIR]
                     differential mode: N random valid bundles, list + unbundle
                     on every implementation; disagreements are shrunk and written
                     as reproducers to DIR (default conformance-repro)
  spec parse-id ID...|spec compatible ENTRY REQUEST [--hip-openmp]
                     print the spec verdict (used by tools/gen-conformance-corpus.py)

exit status: 0 no new divergence; 1 offload-kit failed a case or LLVM diverged
in a way the corpus does not document; 2 usage or corpus error";

/// Parsed command line.
#[derive(Debug, Clone, Default)]
struct Cli {
    impls: Vec<String>,
    cases: Vec<String>,
    adapters: Vec<PathBuf>,
    root: Option<PathBuf>,
    json: Option<PathBuf>,
    junit: Option<PathBuf>,
    jobs: Option<usize>,
    timeout: Option<f64>,
    summary_only: bool,
    allow_new_llvm: bool,
    list_impls: bool,
    random: Option<usize>,
    seed: Option<u64>,
    repro_dir: Option<PathBuf>,
}

fn parse_cli(args: &[String]) -> Result<Cli, String> {
    let mut c = Cli::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut value = || -> Result<String, String> {
            if let Some(v) = inline.clone() {
                return Ok(v);
            }
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name.as_str() {
            "--impl" => c.impls.push(value()?),
            "--case" => c.cases.push(value()?),
            "--adapter" => c.adapters.push(value()?.into()),
            "--root" => c.root = Some(value()?.into()),
            "--json" => c.json = Some(value()?.into()),
            "--junit" => c.junit = Some(value()?.into()),
            "--repro-dir" => c.repro_dir = Some(value()?.into()),
            "--jobs" | "-j" => {
                c.jobs = Some(value()?.parse().map_err(|_| "--jobs needs a number")?)
            }
            "--timeout" => {
                c.timeout = Some(value()?.parse().map_err(|_| "--timeout needs seconds")?)
            }
            "--random" => c.random = Some(value()?.parse().map_err(|_| "--random needs a count")?),
            "--seed" => c.seed = Some(value()?.parse().map_err(|_| "--seed needs a number")?),
            "--summary-only" => c.summary_only = true,
            "--allow-new-llvm" => c.allow_new_llvm = true,
            "--list-impls" => c.list_impls = true,
            other => return Err(format!("unknown option '{other}'")),
        }
        i += 1;
    }
    Ok(c)
}

/// Load adapters: the directory's (default ones unless `--impl` selects),
/// plus explicit files.
fn select_adapters(layout: &Layout, cli: &Cli) -> Result<Vec<Adapter>, String> {
    let mut all = Adapter::load_dir(&layout.adapters(), &layout.messages())?;
    let mut extra = Vec::new();
    for f in &cli.adapters {
        extra.push(Adapter::load(f, &layout.messages())?);
    }
    let mut sel: Vec<Adapter> = if cli.impls.is_empty() {
        all.retain(|a| a.default);
        all
    } else {
        let mut s = Vec::new();
        for g in &cli.impls {
            let m: Vec<&Adapter> = all
                .iter()
                .chain(extra.iter())
                .filter(|a| glob_match(g, &a.name))
                .collect();
            if m.is_empty() {
                return Err(format!("no implementation matches '{g}'"));
            }
            for a in m {
                if !s.iter().any(|x: &Adapter| x.name == a.name) {
                    s.push(a.clone());
                }
            }
        }
        s
    };
    for a in extra {
        if !sel.iter().any(|x| x.name == a.name) {
            sel.push(a);
        }
    }
    Ok(sel)
}

/// Entry point of `offload-kit conformance ARGS…`; returns the exit status.
pub fn cli_main(args: Vec<String>) -> i32 {
    if args.first().map(String::as_str) == Some("spec") {
        return spec::cli(&args[1..]);
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return 0;
    }
    let cli = match parse_cli(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("offload-kit conformance: {e}\n\n{USAGE}");
            return 2;
        }
    };
    let layout = match &cli.root {
        Some(r) => Layout::new(r),
        None => {
            match Layout::discover() {
                Some(l) => l,
                None => {
                    eprintln!("offload-kit conformance: cannot find the conformance/ directory (use --root)");
                    return 2;
                }
            }
        }
    };
    let offload_kit = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("offload-kit"));
    let adapters = match select_adapters(&layout, &cli) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("offload-kit conformance: {e}");
            return 2;
        }
    };
    if cli.list_impls {
        let all = Adapter::load_dir(&layout.adapters(), &layout.messages()).unwrap_or_default();
        for a in &all {
            println!(
                "{:<22} {:<9} release {:<4} {:<10} {}  {}",
                a.name,
                format!("{:?}", a.role).to_lowercase(),
                a.release.map_or("-".into(), |r| r.to_string()),
                if a.default { "default" } else { "on request" },
                if a.available(&offload_kit) {
                    "available"
                } else {
                    "NOT INSTALLED"
                },
                a.description
            );
        }
        return 0;
    }
    let mut available = Vec::new();
    let mut missing = Vec::new();
    for a in adapters {
        if a.available(&offload_kit) {
            available.push(a);
        } else {
            missing.push(missing_message(&a, &offload_kit));
        }
    }
    for m in &missing {
        eprintln!("offload-kit conformance: {m}");
    }
    if !missing.is_empty() && !llvm_optional() && cli.impls.is_empty() {
        eprintln!("offload-kit conformance: implementations are missing (set OFFLOAD_KIT_NO_LLVM=1 to run without them)");
        return 1;
    }
    let rc = RunContext {
        offload_kit: offload_kit.clone(),
        timeout: cli.timeout.map(Duration::from_secs_f64),
    };
    let jobs = cli.jobs.unwrap_or_else(default_jobs);
    if let Some(n) = cli.random {
        let seed = cli.seed.unwrap_or(1);
        let dir = cli
            .repro_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("conformance-repro"));
        return random::run(n, seed, &available, &rc, jobs, &dir, cli.allow_new_llvm);
    }
    let cases = match load_corpus(&layout.corpus()) {
        Ok(c) => c,
        Err(errs) => {
            for e in errs {
                eprintln!("offload-kit conformance: {e}");
            }
            return 2;
        }
    };
    let cases: Vec<Case> = cases
        .into_iter()
        .filter(|c| case_selected(&cli.cases, &c.id))
        .collect();
    if cases.is_empty() {
        eprintln!("offload-kit conformance: no case matches");
        return 2;
    }
    let start = Instant::now();
    let verdicts = run_matrix(&cases, &available, &rc, jobs);
    let secs = start.elapsed().as_secs_f64();
    print!(
        "{}",
        report::text(&cases, &available, &verdicts, !cli.summary_only)
    );
    println!(
        "  {} runs of {} cases on {} implementations in {secs:.1} s ({jobs} parallel)",
        verdicts.len(),
        cases.len(),
        available.len()
    );
    if let Some(p) = &cli.json {
        let j = report::json(&cases, &available, &verdicts, secs);
        if let Err(e) = std::fs::write(p, serde_json::to_string_pretty(&j).expect("serialisable")) {
            eprintln!("offload-kit conformance: {}: {e}", p.display());
            return 2;
        }
    }
    if let Some(p) = &cli.junit {
        if let Err(e) = std::fs::write(p, report::junit(&available, &verdicts)) {
            eprintln!("offload-kit conformance: {}: {e}", p.display());
            return 2;
        }
    }
    let fails = report::failures(&verdicts, cli.allow_new_llvm);
    if fails.is_empty() {
        println!("conformance: OK (no new divergence)");
        0
    } else {
        let subject = fails.iter().filter(|v| v.role == Role::Subject).count();
        println!(
            "conformance: FAILED: {subject} offload-kit result(s) and {} LLVM result(s) are new divergences",
            fails.len() - subject
        );
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("binary/**", "binary/unbundle/x"));
        assert!(glob_match("binary/*", "binary/x"));
        assert!(!glob_match("binary/*", "binary/unbundle/x"));
        assert!(glob_match("llvm-*", "llvm-22"));
        assert!(glob_match("*align*", "bundle-align-3"));
        assert!(case_selected(&["binary".into()], "binary/x/y"));
        assert!(!case_selected(&["bin".into()], "binary/x"));
    }
}
