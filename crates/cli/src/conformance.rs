//! `offload-kit conformance`: option parsing and printing for the
//! conformance runner ([`offload_kit_conformance`]), and `conformance spec …`,
//! the strict verdicts the corpus generator asks for.

use offload_kit_conformance::random::{self, RandomOptions};
use offload_kit_conformance::spec::{self, IdVerdict};
use offload_kit_conformance::{
    case_selected, default_jobs, load_corpus, missing_message, report, run_matrix, select_adapters,
    Adapter, Case, Layout, Role, RunContext, Verdict,
};
use offload_kit_llvm::budget::Budget;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const USAGE: &str = "usage: offload-kit conformance [options]

Runs conformance/corpus/**/*.json against every available implementation
(conformance/adapters/*.json) and prints a case x implementation matrix.

options:
  --impl NAME        run only this implementation (glob; repeatable); llvm=/path/to/llvm/bin
                     adds a user's LLVM build, judged as the release its --version names
                     (column llvm-<major>-user; a tool the build lacks: its cases are
                     'not built', never divergences)
  --label NAME       after --impl llvm=DIR: that build's column name (compare a build
                     with another run's build of the same label)
  --case GLOB        run only matching cases, e.g. 'malformed/**' (repeatable)
  --adapter FILE     add an adapter file (e.g. conformance/adapters-test/broken-align.json)
  --root DIR         the conformance directory (default: found automatically)
  --json FILE        write the JSON report
  --junit FILE       write a JUnit XML report
  --compare OLD.json list (and with --html, show in compare.html) the cases whose
                     outcome changed since the run that wrote OLD.json (--json); columns
                     pair by name, and one user's build on each side pairs with the other
  --compare-impls A,B  the cases whose outcome differs between implementations A and B
  --history A.json,B.json,...  the pass score per implementation and chapter in each of
                     those runs (oldest first) and this one (with --html, history.html)
  --html DIR         write the dashboard: a static site (matrix, per-group, per-implementation,
                     per-case and per-rule pages) that opens from the file system
  --jobs N           parallel runs (default: twice the number of CPUs)
  --timeout SECONDS  time limit per run (default: the adapter's, 10 s)
  --summary-only     do not print the matrix
  --allow-new-llvm   new LLVM divergences are reported but do not fail the run
  --list-impls       list every adapter, whether it runs by default and is installed
  --repro-dir DIR     keep the inputs of every failing run in DIR/<case>@<implementation>/
                     (the printed commands name them); default for --random: conformance-repro
  --random N --seed S [--repro-dir DIR]
                     differential mode: N random valid bundles, list + unbundle
                     on every implementation; disagreements are shrunk and written
                     as reproducers to DIR (default conformance-repro)
  merge PART.json... [--html DIR] [--json FILE] [--compare OLD.json]
                     join runs split by implementation (--impl X --json part-X.json)
  export DIR [--case GLOB]...
                     write the corpus as plain files (inputs per release, case.json
                     with the spec's and each release's expectation) for other languages
  spec parse-id ID...|spec compatible ENTRY REQUEST [--hip-openmp]
                     print the spec verdict (for tools that write cases)

exit status: 0 no new divergence; 1 offload-kit failed a case or LLVM diverged
in a way the corpus does not document; 2 usage or corpus error";

/// Parsed command line.
#[derive(Debug, Clone, Default)]
struct Options {
    /// The run's memory budget (reports read back are held within it).
    budget: Budget,
    impls: Vec<String>,
    /// `--label NAME` after `--impl llvm=DIR`: (index into `impls`, NAME).
    labels: Vec<(usize, String)>,
    cases: Vec<String>,
    adapters: Vec<PathBuf>,
    root: Option<PathBuf>,
    json: Option<PathBuf>,
    junit: Option<PathBuf>,
    html: Option<PathBuf>,
    compare: Option<PathBuf>,
    compare_impls: Option<String>,
    history: Vec<PathBuf>,
    jobs: Option<usize>,
    timeout: Option<f64>,
    summary_only: bool,
    allow_new_llvm: bool,
    list_impls: bool,
    random: Option<usize>,
    seed: Option<u64>,
    repro_dir: Option<PathBuf>,
}

fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut c = Options::default();
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
            "--label" => {
                let label = value()?;
                let last = c.impls.len().checked_sub(1);
                match last.filter(|&k| c.impls[k].starts_with("llvm=")) {
                    Some(k) if !c.labels.iter().any(|(j, _)| *j == k) => {
                        if !label
                            .chars()
                            .all(|ch| ch.is_ascii_alphanumeric() || "._-".contains(ch))
                            || label.is_empty()
                        {
                            return Err(format!(
                                "--label '{}': letters, digits, '.', '_' and '-' only",
                                offload_kit_io::output::escape_controls(&label)
                            ));
                        }
                        c.labels.push((k, label));
                    }
                    _ => return Err("--label NAME follows the --impl llvm=DIR it names".into()),
                }
            }
            "--case" => c.cases.push(value()?),
            "--adapter" => c.adapters.push(value()?.into()),
            "--root" => c.root = Some(value()?.into()),
            "--json" => c.json = Some(value()?.into()),
            "--junit" => c.junit = Some(value()?.into()),
            "--html" => c.html = Some(value()?.into()),
            "--compare" => c.compare = Some(value()?.into()),
            "--compare-impls" => c.compare_impls = Some(value()?),
            "--history" => c.history.extend(value()?.split(',').map(PathBuf::from)),
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

/// Entry point of `offload-kit conformance ARGS…`; returns the exit status.
pub(crate) fn main(args: Vec<String>, settings: super::Settings) -> i32 {
    let budget = settings.budget;
    if args.first().map(String::as_str) == Some("spec") {
        return spec_main(&args[1..], settings);
    }
    if args.first().map(String::as_str) == Some("export") {
        return export_main(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("merge") {
        return merge_main(&args[1..], budget);
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return 0;
    }
    let cli = match parse_options(&args) {
        Ok(c) => Options { budget, ..c },
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
    // A user's LLVM is probed within --timeout, else the per-run default.
    let probe = Duration::from_secs_f64(cli.timeout.unwrap_or(10.0));
    let adapters = match labelled_adapters(&cli, &layout, probe) {
        Ok(a) => a,
        Err(code) => return code,
    };
    if cli.list_impls {
        print_implementations(&layout, &offload_kit);
        return 0;
    }
    // A user's build is judged as a modelled release: say which, before
    // the run (a 23.0.0git build is not silently taken for 22).
    for a in adapters.iter().filter(|a| a.user_build.is_some()) {
        eprintln!("offload-kit conformance: {}: {}", a.name, a.description);
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
    // What is not installed is skipped and said so, never a failure: the
    // rest runs (tools/setup installs them all).
    for m in &missing {
        eprintln!("offload-kit conformance: skipped: {m}");
    }
    let rc = RunContext {
        offload_kit: offload_kit.clone(),
        timeout: cli.timeout.map(Duration::from_secs_f64),
    };
    let jobs = cli.jobs.unwrap_or_else(default_jobs);
    if let Some(n) = cli.random {
        let opts = RandomOptions {
            samples: n,
            seed: cli.seed.unwrap_or(1),
            jobs,
            repro_dir: cli
                .repro_dir
                .clone()
                .unwrap_or_else(|| PathBuf::from("conformance-repro")),
            allow_new_reference: cli.allow_new_llvm,
        };
        let r = random::run(&opts, &available, &rc, &mut |d| print!("{d}"));
        print!("{}", r.summary());
        return r.exit_status();
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
    let mut verdicts = run_with_progress(&cases, &available, &rc, jobs, start);
    let secs = start.elapsed().as_secs_f64();
    if let Some(dir) = &cli.repro_dir {
        match keep_reproducers(&cases, &available, &rc, &mut verdicts, dir) {
            Ok(0) => {}
            Ok(n) => eprintln!(
                "offload-kit conformance: {n} failing run(s) rerun in {}: the commands printed use the inputs kept there",
                dir.display()
            ),
            // The run's results are still reported and written.
            Err(e) => eprintln!("offload-kit conformance: --repro-dir: {e}"),
        }
    }
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
    for m in &missing {
        println!("  skipped (not installed): {m}");
    }
    if let Some(p) = &cli.json {
        let j = report::json(&cases, &available, &verdicts, secs);
        if let Err(e) = std::fs::write(p, serde_json::to_string_pretty(&j).expect("serialisable")) {
            eprintln!("offload-kit conformance: {}: {e}", p.display());
            return 2;
        }
    }
    let names: Vec<String> = available.iter().map(|a| a.name.clone()).collect();
    if let Err(e) = compare_and_site(&cli, &cases, &names, &verdicts) {
        eprintln!("offload-kit conformance: {e}");
        return 2;
    }
    if let Some(p) = &cli.junit {
        if let Err(e) = std::fs::write(p, report::junit(&available, &verdicts)) {
            eprintln!("offload-kit conformance: {}: {e}", p.display());
            return 2;
        }
    }
    let fails = report::failures(&verdicts, cli.allow_new_llvm);
    outcome(&verdicts, &fails, missing.len())
}

/// `--list-impls`: every adapter, its role and release, whether it runs by
/// default and whether it is installed.
fn print_implementations(layout: &Layout, offload_kit: &std::path::Path) {
    let all = Adapter::load_dir(&layout.adapters(), &layout.messages()).unwrap_or_default();
    for a in &all {
        println!(
            "{:<22} {:<9} release {:<4} {:<10} {}  {}",
            a.name,
            format!("{:?}", a.role).to_lowercase(),
            a.release.map_or("-".into(), |r| r.to_string()),
            if a.default { "default" } else { "on request" },
            if a.available(offload_kit) {
                "available"
            } else {
                "NOT INSTALLED"
            },
            a.description
        );
    }
}

/// The last line and the exit status: 1 when `fails` holds new divergences
/// of offload-kit or LLVM; third parties' findings are counted, and
/// implementations not installed (`missing`) said.
fn outcome(verdicts: &[Verdict], fails: &[&Verdict], missing: usize) -> i32 {
    // Third parties are measured: their new divergences are findings,
    // counted in the last line, never a failure.
    let mut findings: std::collections::BTreeMap<&str, usize> = Default::default();
    for v in verdicts
        .iter()
        .filter(|v| v.role == Role::Measured && v.status.is_new())
    {
        *findings.entry(v.implementation.as_str()).or_default() += 1;
    }
    let findings = match findings.is_empty() {
        true => String::new(),
        false => format!(
            "; findings in third-party implementations: {}",
            findings
                .iter()
                .map(|(n, k)| format!("{n} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let skipped = match missing {
        0 => String::new(),
        n => format!("; {n} implementation(s) skipped, not installed"),
    };
    if fails.is_empty() {
        println!("conformance: OK (no new divergence of offload-kit or LLVM{findings}{skipped})");
        0
    } else {
        let subject = fails.iter().filter(|v| v.role == Role::Subject).count();
        println!(
            "conformance: FAILED: {subject} offload-kit result(s) and {} LLVM result(s) are new divergences{findings}{skipped}",
            fails.len() - subject
        );
        1
    }
}

/// The JSON line `spec parse-id` prints for one ID.
fn id_json(v: &IdVerdict) -> serde_json::Value {
    let mut written = serde_json::Map::new();
    for (r, w) in &v.written {
        written.insert(
            r.to_string(),
            match w {
                Ok(w) => serde_json::json!({ "id": w }),
                Err(e) => serde_json::json!({ "error": e }),
            },
        );
    }
    match &v.canonical {
        Ok(c) => serde_json::json!({"id": v.id, "canonical": c, "written": written}),
        Err(r) => serde_json::json!({"id": v.id, "fail": r, "written": written}),
    }
}

/// `spec lookup FILE REQUEST…`: for each request (`amdgcn-amd-amdhsa--gfx90a:xnack+`,
/// as the HIP runtime asks comgr), the code object `offload-kit check` says the
/// runtime loads on that GPU, as `REQUEST\tOFFSET\tSIZE` (`0\t0`: none; a pick
/// whose code object breaks CO-1 is none, the loader refuses it; a pick whose
/// image breaks CO-2 … CO-5 is none, the loader would map it broken). The first
/// bundle with a loadable pick answers. The operation's contract is comgr's
/// lookup, compatibility by COMPAT-1..3: `check`'s generic fallback (the HIP
/// runtime's own policy on top) is not an answer. A malformed file fails
/// with its rule.
fn lookup(file: &str, requests: &[String], settings: super::Settings) -> i32 {
    use offload_kit_inspect::{self as inspect, check};
    let input = match super::Input::open(std::path::Path::new(file)) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("offload-kit: error: {e}");
            return 1;
        }
    };
    let opts = inspect::Options {
        strict: true,
        budget: settings.budget,
    };
    let report = match inspect::inspect_with(&input, opts) {
        Ok(r) => r,
        Err(es) => {
            super::report_errors("", &es, 10, settings.color);
            return 1;
        }
    };
    for r in requests {
        let tid = r.rsplit_once("--").map_or(r.as_str(), |(_, t)| t);
        let gpu = match check::Gpu::parse(tid) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("offload-kit: error: request '{r}': {e}");
                return 1;
            }
        };
        let verdict = check::check_as_named(&report, &gpu);
        let answer = verdict
            .bundles
            .iter()
            .filter(|b| {
                !b.refused_by_loader
                    && b.broken_image.is_none()
                    && b.pick != Some(check::Pick::Generic)
            })
            .find_map(|b| {
                let id = b.entry.as_deref()?;
                report.entries.iter().find(|e| {
                    e.entry.bundle == b.bundle
                        && e.entry.member_index == b.member_index
                        && e.entry.id == id
                })
            })
            .map_or((0, 0), |e| (e.entry.offset, e.entry.size));
        outln!("{r}\t{}\t{}", answer.0, answer.1);
    }
    0
}

/// `offload-kit conformance spec parse-id ID…` / `spec compatible ENTRY REQUEST [--hip-openmp]`:
/// print the spec verdicts as JSON lines (for tools that write cases);
/// `parse-id` adds the ID each release profile writes.
fn spec_main(args: &[String], settings: super::Settings) -> i32 {
    let out = |v: serde_json::Value| println!("{v}");
    match args.first().map(String::as_str) {
        Some("parse-id") => {
            for id in &args[1..] {
                out(id_json(&spec::id_verdict(id)));
            }
            0
        }
        Some("compatible") => {
            let hip_openmp = args.iter().any(|a| a == "--hip-openmp");
            let pos: Vec<&String> = args[1..].iter().filter(|a| *a != "--hip-openmp").collect();
            if pos.len() != 2 {
                eprintln!(
                    "usage: offload-kit conformance spec compatible ENTRY REQUEST [--hip-openmp]"
                );
                return 2;
            }
            out(match spec::compatible(pos[0], pos[1], hip_openmp) {
                Ok(c) => serde_json::json!({"compatible": c}),
                Err(r) => serde_json::json!({"fail": r}),
            });
            0
        }
        Some("lookup") if args.len() >= 2 => lookup(&args[1], &args[2..], settings),
        Some("kpack-lookup") if args.len() >= 2 => kpack_lookup(&args[1], &args[2..], settings),
        _ => {
            eprintln!("usage: offload-kit conformance spec parse-id ID… | spec compatible ENTRY REQUEST [--hip-openmp] | spec lookup FILE REQUEST… | spec kpack-lookup HOST ISA…");
            2
        }
    }
}

/// `spec kpack-lookup HOST ISA…`: for each agent ISA, what ROCm's runtime
/// answers for the HIPK host's wrappers (spec/kpack.md HIPK-2), one
/// `ISA\tANSWER` line each: `FOUND <archive file name> <key> <arch>
/// <size>` (one per wrapper, `;`-separated) or the runtime's error.
fn kpack_lookup(host: &str, isas: &[String], settings: super::Settings) -> i32 {
    let budget = settings.budget;
    let path = std::path::Path::new(host);
    let input = match super::Input::open(path) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("offload-kit: {e}");
            return 1;
        }
    };
    let Some(Ok((r, indices))) = super::hipk::host_ref(input.bytes()) else {
        eprintln!("offload-kit: error: {host}: not a HIPK host (rule HIPK-1)");
        return 1;
    };
    for isa in isas {
        let mut found = Vec::new();
        let finder = super::hipk::Finder::new(path, &r, isa, None, (&super::hipk::open, budget));
        for &i in &indices {
            match finder.find(&r, i) {
                Ok(super::hipk::Outcome::Found {
                    archive,
                    key,
                    arch,
                    code,
                }) => {
                    let name = archive
                        .file_name()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .into_owned();
                    found.push(format!("FOUND {name} {key} {arch} {}", code.len()));
                }
                Ok(o) => {
                    found = vec![o.error().unwrap_or("NOT_FOUND").to_string()];
                    break;
                }
                Err(es) => {
                    super::report_errors("", &es, 5, settings.color);
                    return 1;
                }
            }
        }
        println!("{isa}\t{}", found.join("; "));
    }
    0
}

/// `conformance export DIR [--case GLOB]...`.
fn export_main(args: &[String]) -> i32 {
    let mut dir = None;
    let mut globs = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--case" => match it.next() {
                Some(g) => globs.push(g.clone()),
                None => {
                    eprintln!("offload-kit conformance export: --case needs a glob");
                    return 2;
                }
            },
            d if dir.is_none() && !d.starts_with('-') => dir = Some(PathBuf::from(d)),
            other => {
                eprintln!("offload-kit conformance export: unexpected argument '{other}'");
                return 2;
            }
        }
    }
    let Some(dir) = dir else {
        eprintln!("offload-kit conformance export: usage: export DIR [--case GLOB]...");
        return 2;
    };
    let Some(cases) = found_corpus() else {
        return 2;
    };
    let cases: Vec<_> = cases
        .into_iter()
        .filter(|c| globs.is_empty() || offload_kit_conformance::case_selected(&globs, &c.id))
        .collect();
    match offload_kit_conformance::export::export(&cases, &dir) {
        Ok(n) => {
            println!("exported {n} cases to {}", dir.display());
            0
        }
        Err(e) => {
            eprintln!("offload-kit conformance export: {e}");
            1
        }
    }
}

/// The implementations to run: `--impl` and `--adapter`, users' builds
/// named by their `--label`; a label that is taken or reserved is refused
/// (exit status 2).
fn labelled_adapters(cli: &Options, layout: &Layout, probe: Duration) -> Result<Vec<Adapter>, i32> {
    let mut adapters = match select_adapters(layout, &cli.impls, &cli.adapters, probe) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("offload-kit conformance: {e}");
            return Err(2);
        }
    };
    // A label names one build in every report: never an adapter's name or
    // a default user-build name, which --compare would pair it with.
    let known = offload_kit_conformance::Adapter::load_dir(&layout.adapters(), &layout.messages())
        .unwrap_or_default();
    for (_, label) in &cli.labels {
        if offload_kit_conformance::compare::default_user_name(label)
            || known.iter().any(|a| &a.name == label)
        {
            eprintln!(
                "offload-kit conformance: --label '{label}' is an implementation's own name: choose another"
            );
            return Err(2);
        }
    }
    // Users' builds come in the order of their --impl llvm=DIR: the k-th
    // takes the label given after the k-th such --impl.
    let user_impls: Vec<usize> = (0..cli.impls.len())
        .filter(|&k| cli.impls[k].starts_with("llvm="))
        .collect();
    for (a, k) in adapters
        .iter_mut()
        .filter(|a| a.user_build.is_some())
        .zip(&user_impls)
    {
        if let Some((_, label)) = cli.labels.iter().find(|(j, _)| j == k) {
            a.name = label.clone();
        }
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(a) = adapters.iter().find(|a| !seen.insert(a.name.clone())) {
        eprintln!(
            "offload-kit conformance: two implementations are named '{}': give each --impl llvm=DIR its own --label",
            a.name
        );
        return Err(2);
    }
    Ok(adapters)
}

/// The matrix, with a progress line (runs done, the implementation that
/// just ran, time elapsed) on stderr when it is a terminal; nothing in a
/// pipe or a log.
fn run_with_progress(
    cases: &[Case],
    adapters: &[offload_kit_conformance::Adapter],
    rc: &offload_kit_conformance::RunContext,
    jobs: usize,
    start: Instant,
) -> Vec<Verdict> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return run_matrix(cases, adapters, rc, jobs);
    }
    let last = std::sync::Mutex::new(Instant::now());
    let verdicts = offload_kit_conformance::run_matrix_with(cases, adapters, rc, jobs, &|p| {
        let Ok(mut last) = last.lock() else { return };
        if last.elapsed() < Duration::from_millis(200) && p.done < p.total {
            return;
        }
        *last = Instant::now();
        eprint!(
            "\r\x1b[Koffload-kit conformance: {}/{} runs, {}, {:.0} s",
            p.done,
            p.total,
            offload_kit_io::output::escape_controls(p.implementation),
            start.elapsed().as_secs_f64()
        );
    });
    eprint!("\r\x1b[K");
    verdicts
}

/// `--repro-dir DIR` for a corpus run: each new divergence (and recorded
/// bug) is run again in a directory of its own under DIR,
/// `<case>@<implementation>` (numbered when that name is taken: nothing
/// there is removed), which is kept. The verdict stays the one counted;
/// when the rerun ends the same way, its command (naming the kept
/// inputs) replaces the first run's, else the detail says what the rerun
/// did. Returns how many were rerun.
fn keep_reproducers(
    cases: &[Case],
    adapters: &[offload_kit_conformance::Adapter],
    rc: &offload_kit_conformance::RunContext,
    verdicts: &mut [Verdict],
    dir: &std::path::Path,
) -> Result<usize, String> {
    use offload_kit_conformance::html::slug;
    let mut n = 0;
    for v in verdicts.iter_mut() {
        if !(v.status.is_new() || v.status == offload_kit_conformance::Status::KnownBug) {
            continue;
        }
        let (Some(case), Some(a)) = (
            cases.iter().find(|c| c.id == v.case),
            adapters.iter().find(|a| a.name == v.implementation),
        ) else {
            continue;
        };
        let name = format!("{}@{}", slug(&case.id), slug(&a.name));
        let at = (0..1000)
            .map(|k| match k {
                0 => dir.join(&name),
                k => dir.join(format!("{name}.{k}")),
            })
            .find(|p| std::fs::symlink_metadata(p).is_err())
            .ok_or_else(|| format!("{}: no free name", dir.join(&name).display()))?;
        std::fs::create_dir_all(&at).map_err(|e| format!("{}: {e}", at.display()))?;
        let again = offload_kit_conformance::judge::run_case_in(case, a, rc, &at);
        if again.status == v.status {
            v.commands = again.commands;
        } else {
            v.detail += &format!(
                " (rerun in {} for --repro-dir: {}; its inputs are kept there)",
                at.display(),
                again.status.label()
            );
        }
        n += 1;
    }
    Ok(n)
}

/// `--compare`, `--compare-impls` and `--html` for a finished run.
fn compare_and_site(
    cli: &Options,
    cases: &[offload_kit_conformance::Case],
    names: &[String],
    verdicts: &[Verdict],
) -> Result<(), String> {
    use offload_kit_conformance::compare::Comparison;
    use offload_kit_conformance::html;
    let mut shown = None;
    if let Some(old) = &cli.compare {
        let title = format!("Changes since {}", old.display());
        let c = Comparison::of_runs(
            &title,
            cases,
            &report::load_results(old, cli.budget)?,
            verdicts,
        );
        print!("{}", terminal_text(&c.text()));
        shown = Some(c);
    }
    if let Some(pair) = &cli.compare_impls {
        let (a, b) = pair.split_once(',').ok_or("--compare-impls takes A,B")?;
        let c = Comparison::of_impls(cases, verdicts, a, b);
        print!("{}", terminal_text(&c.text()));
        shown = Some(c);
    }
    let mut history = None;
    if !cli.history.is_empty() {
        let mut runs = Vec::new();
        for p in &cli.history {
            runs.push((
                p.display().to_string(),
                report::load_results(p, cli.budget)?,
            ));
        }
        runs.push(("this run".to_string(), verdicts.to_vec()));
        let h = offload_kit_conformance::compare::History::of_runs(cases, &runs);
        print!("{}", terminal_text(&h.text()));
        history = Some(h);
    }
    if let Some(d) = &cli.html {
        let mut pages = Vec::new();
        if shown.is_some() {
            pages.push(("compare.html", "what changed (compare.html)"));
        }
        if history.is_some() {
            pages.push(("history.html", "pass scores over runs (history.html)"));
        }
        html::write_site_linking(cases, names, verdicts, d, &pages)?;
        if let Some(c) = shown {
            html::write_compare(d, &c)?;
        }
        if let Some(h) = history {
            html::write_history(d, &h)?;
        }
    }
    Ok(())
}

/// `text`, whose names come from reports anyone can write, for a terminal:
/// control characters escaped on each line.
fn terminal_text(text: &str) -> String {
    text.lines()
        .map(|l| offload_kit_io::output::escape_controls(l).into_owned() + "\n")
        .collect()
}

/// `conformance merge PART.json... [--html DIR] [--json FILE] [--compare OLD.json]`.
fn merge_main(args: &[String], budget: Budget) -> i32 {
    let mut parts = Vec::new();
    let mut cli = Options {
        budget,
        ..Options::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{a} needs a value"));
        let r = match a.as_str() {
            "--html" => value().map(|v| cli.html = Some(v.into())),
            "--json" => value().map(|v| cli.json = Some(v.into())),
            "--compare" => value().map(|v| cli.compare = Some(v.into())),
            "--compare-impls" => value().map(|v| cli.compare_impls = Some(v)),
            "--history" => value().map(|v| cli.history.extend(v.split(',').map(PathBuf::from))),
            p if !p.starts_with('-') => {
                parts.push(PathBuf::from(p));
                Ok(())
            }
            other => Err(format!("unexpected argument '{other}'")),
        };
        if let Err(e) = r {
            eprintln!("offload-kit conformance merge: {e}");
            return 2;
        }
    }
    if parts.is_empty() {
        eprintln!("offload-kit conformance merge: no parts given");
        return 2;
    }
    // Later parts win for a (case, implementation) run twice.
    let mut by: std::collections::BTreeMap<(String, String), offload_kit_conformance::Verdict> =
        std::collections::BTreeMap::new();
    for p in &parts {
        match report::load_results(p, budget) {
            Ok(vs) => {
                for v in vs {
                    by.insert((v.case.clone(), v.implementation.clone()), v);
                }
            }
            Err(e) => {
                eprintln!("offload-kit conformance merge: {e}");
                return 2;
            }
        }
    }
    let verdicts: Vec<_> = by.into_values().collect();
    let mut names: Vec<String> = verdicts.iter().map(|v| v.implementation.clone()).collect();
    names.sort();
    names.dedup();
    let Some(cases) = found_corpus() else {
        return 2;
    };
    for n in &names {
        let mut per: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        for v in verdicts.iter().filter(|v| &v.implementation == n) {
            *per.entry(v.status.label()).or_default() += 1;
        }
        let counts: Vec<String> = per.iter().map(|(k, c)| format!("{k} {c}")).collect();
        let n = offload_kit_io::output::escape_controls(n);
        println!("  {n:<22} {}", counts.join(", "));
    }
    println!(
        "merged {} results of {} implementations from {} parts",
        verdicts.len(),
        names.len(),
        parts.len()
    );
    if let Some(p) = &cli.json {
        let j = serde_json::json!({"cases": cases.len(), "results": verdicts});
        if let Err(e) = std::fs::write(p, serde_json::to_string_pretty(&j).expect("serialisable")) {
            eprintln!("offload-kit conformance: {}: {e}", p.display());
            return 2;
        }
    }
    if let Err(e) = compare_and_site(&cli, &cases, &names, &verdicts) {
        eprintln!("offload-kit conformance: {e}");
        return 2;
    }
    i32::from(!report::failures(&verdicts, false).is_empty())
}

/// The corpus of the conformance/ directory found from here, or `None`
/// after saying why not.
fn found_corpus() -> Option<Vec<offload_kit_conformance::Case>> {
    let Some(layout) = Layout::discover() else {
        eprintln!("offload-kit conformance: cannot find the conformance/ directory");
        return None;
    };
    load_corpus(&layout.corpus())
        .map_err(|errs| eprintln!("offload-kit conformance: {}", errs.join("\n")))
        .ok()
}
