//! `offload-kit inspect FILE|DIR... [--json]`: a summary line and a tree
//! (bundle → entry → code object) per file, directories walked, files read
//! in parallel; exit 0 when every file was read and no entry's ID
//! disagrees with its code object (CO-1).
//!
//! `offload-kit check FILE|DIR... --gpu G... [--json]`: per file and GPU,
//! the code object the HIP runtime would load in each bundle, or why none
//! fits; exit 0 when every file runs on every GPU.

use super::term::{Color, ColorChoice, Stream};
use super::Input;
use offload_kit_format::Error;
use offload_kit_inspect::check::{self, Gpu, Verdict};
use offload_kit_inspect::code_object::{CodeObject, FeatureSetting};
use offload_kit_inspect::kpack_archive::KpackReport;
use offload_kit_inspect::{self as inspect, Inspected, Options, Report};
use offload_kit_llvm::budget::Budget;
use offload_kit_llvm::detect;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// At most this many errors are printed per file that cannot be read.
const SHOWN_ERRORS: usize = 20;

/// The `--json` document's schema name and version.
const SCHEMA: &str = "offload-kit-inspect/1";

/// What came of one file.
enum Outcome {
    Read(Box<Report>),
    Failed(Vec<Error>),
    /// Found by walking a directory and not a container.
    NoOffloadCode,
    /// A kpack archive (spec/kpack.md).
    Archive(KpackView),
}

/// The files `paths` name, directories walked.
fn files_of(paths: &[PathBuf]) -> Result<Vec<(PathBuf, bool)>, Vec<Error>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut files).map_err(|e| vec![e])?;
        } else {
            files.push((p.clone(), false));
        }
    }
    Ok(files)
}

pub fn run(
    paths: &[PathBuf],
    json: bool,
    strict: bool,
    settings: super::Settings,
) -> Result<i32, Vec<Error>> {
    let opts = Options {
        strict,
        budget: settings.budget,
    };
    let files = files_of(paths)?;
    let outcomes = inspect_all(&files, opts);
    // A named file read whole may hold nothing (a plain program): it is
    // printed, but not counted as offload code.
    let read = outcomes
        .iter()
        .filter(|o| match o {
            Outcome::Read(r) => !r.entries.is_empty(),
            Outcome::Archive(_) => true,
            _ => false,
        })
        .count();
    let failed = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Failed(_)))
        .count();
    let findings: usize = outcomes
        .iter()
        .map(|o| match o {
            Outcome::Read(r) => r.findings.len(),
            _ => 0,
        })
        .sum();
    if json {
        print_json(&files, &outcomes, settings.budget);
    } else {
        for ((path, _), o) in files.iter().zip(&outcomes) {
            print_file(path, o, settings);
        }
        if files.len() > 1 {
            let skipped = files.len() - read - failed;
            outln!(
                "{} files: {read} with offload code, {skipped} without, {failed} unreadable; {findings} finding(s)",
                files.len()
            );
        }
    }
    Ok(i32::from(failed > 0 || findings > 0))
}

/// Regular files under `dir`, sorted, each marked as found by walking, each
/// file once however many names reach it. Symbolic links to directories
/// are not followed (no cycles).
fn walk(dir: &Path, out: &mut Vec<(PathBuf, bool)>) -> Result<(), Error> {
    let mut todo = vec![dir.to_path_buf()];
    let mut found = Vec::new();
    while let Some(d) = todo.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| {
            Error::other(format!(
                "'{}': {}",
                d.display(),
                offload_kit_io::output::io_text(&e)
            ))
        })?;
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                todo.push(e.path());
            } else if t.is_file() || (t.is_symlink() && e.path().is_file()) {
                found.push(e.path());
            }
        }
    }
    found.sort();
    // A file reached twice (through a symlink, or a hard link) is read
    // once, under its first name in sorted order.
    use std::os::unix::fs::MetadataExt;
    let mut seen = std::collections::HashSet::new();
    found.retain(|p| std::fs::metadata(p).map_or(true, |m| seen.insert((m.dev(), m.ino()))));
    out.extend(found.into_iter().map(|p| (p, true)));
    Ok(())
}

/// Every file inspected, as many at a time as there are CPUs.
fn inspect_all(files: &[(PathBuf, bool)], opts: Options) -> Vec<Outcome> {
    let results: Vec<Mutex<Option<Outcome>>> = files.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let progress = super::term::Progress::new("files read", files.len());
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((path, walked)) = files.get(i) else {
                    break;
                };
                let o = inspect_file(path, *walked, opts);
                *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(o);
                progress.advance();
            });
        }
    });
    results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .unwrap_or(Outcome::NoOffloadCode)
        })
        .collect()
}

fn inspect_file(path: &Path, walked: bool, opts: Options) -> Outcome {
    let input = match Input::open(path) {
        Ok(i) => i,
        Err(e) => return Outcome::Failed(vec![e]),
    };
    let archive = super::kpack::is_kpack(&input);
    if walked && !archive && detect::detect(input.bytes()).is_none() {
        return Outcome::NoOffloadCode;
    }
    match inspect::inspect_any(input.bytes(), opts) {
        Ok(Inspected::KpackArchive(r)) => match archive_view(path, &r) {
            Ok(view) => Outcome::Archive(view),
            Err(es) => Outcome::Failed(es),
        },
        // A walked ELF file without bundles or images (a plain program or
        // library) holds no offload code.
        Ok(Inspected::Container(r)) if walked && r.entries.is_empty() => Outcome::NoOffloadCode,
        Ok(Inspected::Container(r)) => Outcome::Read(r),
        Err(es) => Outcome::Failed(es.into()),
    }
}

fn print_file(path: &Path, o: &Outcome, settings: super::Settings) {
    let color = settings.color;
    // A walked file's name is untrusted: it must not forge a line.
    let name = offload_kit_io::output::escape_controls(&path.to_string_lossy()).into_owned();
    let r = match o {
        Outcome::NoOffloadCode => return,
        Outcome::Failed(es) => {
            super::report_errors(&format!("{name}: "), es, SHOWN_ERRORS, color);
            return;
        }
        Outcome::Archive(view) => {
            for l in &view.lines {
                outln!("{l}");
            }
            return;
        }
        Outcome::Read(r) => r,
    };
    let s = &r.summary;
    let targets = if s.targets.is_empty() {
        String::new()
    } else {
        format!(" ({})", s.targets.join(", "))
    };
    outln!(
        "{name}: {}, {} bundle(s) ({} compressed), {} entries, {} code object(s){targets}",
        r.container,
        s.bundles,
        s.compressed_bundles,
        s.entries,
        s.code_objects
    );
    let mut entries = r.entries.iter().peekable();
    for b in &r.bundles {
        let mut head = format!("  bundle {}", b.index);
        if let Some(m) = &b.member {
            head.push_str(&format!(
                " in member #{} {}",
                b.member_index.unwrap_or(0),
                m.escape_debug()
            ));
        }
        if let Some(sec) = &b.section {
            head.push_str(&format!(" in {}", sec.escape_debug()));
        }
        if let Some(c) = &b.compressed {
            let ratio = c.uncompressed_size as f64 / c.compressed_size.max(1) as f64;
            head.push_str(&format!(
                " at 0x{:x}: CCOB v{} {}, {} -> {} bytes ({ratio:.1}x)",
                c.offset, c.version, c.method, c.compressed_size, c.uncompressed_size
            ));
        }
        outln!("{head}");
        for _ in 0..b.entries {
            let Some(e) = entries.next() else { break };
            outln!(
                "    {:<44} size {:<9} {}",
                e.entry.id.escape_debug().to_string(),
                e.entry.size,
                if e.entry.size == 0 {
                    "empty".to_string()
                } else {
                    describe(&e.object)
                }
            );
        }
    }
    for f in &r.findings {
        outln!(
            "  {}: {f}",
            color.paint(Stream::Stdout, Color::Yellow, "finding")
        );
    }
    print_warnings(r, color);
    if let Some(view) = split_host_view(path, settings.budget) {
        for l in &view.lines {
            outln!("{l}");
        }
    }
}

/// A kpack archive or split host as `inspect` shows it: text lines and
/// the `--json` view (docs/schema: `kpack_archive`, `kpack_host`).
struct KpackView {
    lines: Vec<String>,
    json: serde_json::Value,
    /// An archive's architectures as its TOC names them: matched raw, as
    /// the library's `check_kpack` matches them, and escaped when printed.
    archs: Vec<String>,
}

/// One code object of a kpack archive as `inspect` lists it: its key,
/// architecture, size and what it is.
fn filed_line(
    key: &str,
    arch: &str,
    size: usize,
    object: &offload_kit_inspect::code_object::CodeObject,
) -> String {
    format!(
        "    {:<44} size {:<9} {}",
        format!("{} {}", key.escape_debug(), arch.escape_debug()),
        size,
        describe(object)
    )
}

/// `inspect` of a kpack archive: a summary line, then one line per code
/// object (its key, architecture, size and what it is); the JSON view is
/// the library's report ([`offload_kit_inspect::kpack_archive`]), which
/// Python gives too.
fn archive_view(path: &Path, r: &KpackReport) -> Result<KpackView, Vec<Error>> {
    let name = offload_kit_io::output::escape_controls(&path.to_string_lossy()).into_owned();
    let mut lines = vec![format!(
        "{name}: kpack archive, group '{}', {} code object(s) ({})",
        r.group_name.escape_debug(),
        r.code_objects.len(),
        r.gfx_arches.join(", ").escape_debug()
    )];
    for c in &r.code_objects {
        lines.push(filed_line(&c.key, &c.arch, c.size as usize, &c.code_object));
    }
    let json = serde_json::to_value(r).map_err(|e| vec![Error::other(e.to_string())])?;
    Ok(KpackView {
        lines,
        json,
        archs: r.gfx_arches.clone(),
    })
}

/// `inspect` through a HIPK host: where its device code went, and each
/// code object its archives file under its keys (every architecture);
/// `None` for other files.
fn split_host_view(path: &Path, budget: Budget) -> Option<KpackView> {
    let input = Input::open(path).ok()?;
    let host = super::hipk::host_ref(input.bytes())?;
    let mut view = KpackView {
        lines: Vec::new(),
        json: serde_json::json!({}),
        archs: Vec::new(),
    };
    let (r, indices) = match host {
        Ok(h) => h,
        Err(es) => {
            view.lines
                .extend(es.iter().map(|e| format!("  error: {e}")));
            view.json = serde_json::json!({"errors": es});
            return Some(view);
        }
    };
    let given = super::hipk::override_paths(None);
    let report = super::hipk::host(path, &r, &indices, given.as_deref(), budget).report();
    view.lines.push(format!(
        "  split into kpack archives (HIPK host): kernel '{}', {} wrapper(s), {} archive(s) found for {}",
        r.kernel_name.escape_debug(),
        indices.len(),
        report.archives.len(),
        super::hipk::few(r.search_paths.iter().map(|p| p.escape_debug().to_string()))
    ));
    let mut last: Option<&str> = None;
    for c in &report.code_objects {
        if last != Some(c.archive.as_str()) {
            let shown = offload_kit_io::output::escape_controls(&c.archive).into_owned();
            view.lines.push(format!("  archive {shown}"));
            last = Some(&c.archive);
        }
        view.lines
            .push(filed_line(&c.key, &c.arch, c.size, &c.code_object));
    }
    view.lines
        .extend(report.errors.iter().map(|e| format!("  error: {e}")));
    view.json = serde_json::to_value(&report).unwrap_or_default();
    Some(view)
}

/// The spec violations read past (`--strict` refuses them), one line each.
fn print_warnings(r: &Report, color: ColorChoice) {
    for w in r.warnings.iter().take(SHOWN_ERRORS) {
        outln!(
            "  {}: {w} (read as LLVM 22 and the HIP runtime read it; --strict refuses it)",
            color.paint(Stream::Stdout, Color::Yellow, "warning")
        );
    }
    if r.warnings.len() > SHOWN_ERRORS {
        outln!(
            "  ... and {} more warning(s)",
            r.warnings.len() - SHOWN_ERRORS
        );
    }
}

/// One line on what a payload is.
fn describe(o: &CodeObject) -> String {
    let setting = |s: FeatureSetting| match s {
        FeatureSetting::Unsupported => "unsupported",
        FeatureSetting::Any => "any",
        FeatureSetting::Off => "off",
        FeatureSetting::On => "on",
    };
    match o {
        CodeObject::Amdgpu(a) => {
            let version = a
                .code_object_version
                .map_or("AMDGPU code object".to_string(), |v| {
                    format!("AMDGPU code object v{v}")
                });
            let kind = match a.elf_type {
                1 => "relocatable",
                3 => "loadable",
                _ => "other type",
            };
            let mut s = format!(
                "{version} {} (xnack {}, sramecc {}), {kind}",
                a.target_id(),
                setting(a.xnack),
                setting(a.sramecc)
            );
            if let Some(g) = a.generic_version {
                s.push_str(&format!(", generic version {g}"));
            }
            if let Some(k) = a.kernel_count {
                s.push_str(&format!(", {k} kernel(s)"));
            }
            s
        }
        CodeObject::Cubin(c) => format!("cubin {}", c.arch()),
        CodeObject::Ptx(p) => format!(
            "PTX {}.{} {}",
            p.version.0,
            p.version.1,
            p.target.as_deref().unwrap_or("")
        ),
        CodeObject::SpirV(v) => format!("SPIR-V {}.{}", v.major, v.minor),
        CodeObject::Host(h) => format!("host ELF{} (machine {})", h.class.bits(), h.machine),
        CodeObject::Bitcode => "LLVM bitcode".to_string(),
        CodeObject::Unknown => "-".to_string(),
    }
}

fn print_json(files: &[(PathBuf, bool)], outcomes: &[Outcome], budget: Budget) {
    let docs: Vec<serde_json::Value> = files
        .iter()
        .zip(outcomes)
        .filter_map(|((path, _), o)| match o {
            Outcome::NoOffloadCode => None,
            Outcome::Archive(view) => Some(
                serde_json::json!({"file": path.to_string_lossy(), "kpack_archive": view.json}),
            ),
            Outcome::Read(r) => {
                let mut doc = serde_json::json!({"file": path.to_string_lossy(), "report": r});
                if let Some(view) = split_host_view(path, budget) {
                    doc["kpack_host"] = view.json;
                }
                Some(doc)
            }
            Outcome::Failed(es) => {
                Some(serde_json::json!({"file": path.to_string_lossy(), "errors": es}))
            }
        })
        .collect();
    let v = serde_json::json!({"schema": SCHEMA, "files": docs});
    outln!(
        "{}",
        serde_json::to_string_pretty(&v).expect("serialisable")
    );
}

pub fn run_check(
    paths: &[PathBuf],
    gpus: &[String],
    json: bool,
    (strict, kpack_path): (bool, Option<&str>),
    settings: super::Settings,
) -> Result<i32, Vec<Error>> {
    let (budget, color) = (settings.budget, settings.color);
    let opts = Options { strict, budget };
    let gpus = with_machine_gpus(gpus)?;
    let gpus: Vec<Gpu> = gpus
        .iter()
        .map(|g| Gpu::parse(g).map_err(|e| Error::other(format!("--gpu '{g}': {e}"))))
        .collect::<Result<_, _>>()
        .map_err(|e| vec![e])?;
    let files = files_of(paths)?;
    let outcomes = inspect_all(&files, opts);
    let mut all_run = true;
    let mut docs = Vec::new();
    // Files with no device code: not counted as running or not.
    let mut no_code = 0usize;
    // Per GPU: files checked, files on which it does not run.
    let mut tally = vec![(0usize, 0usize); gpus.len()];
    let given = super::hipk::override_paths(kpack_path);
    for ((path, _), o) in files.iter().zip(&outcomes) {
        let name = offload_kit_io::output::escape_controls(&path.to_string_lossy()).into_owned();
        // A HIPK host: its code object is in kpack archives (HIPK-2).
        if let Some(host) = Input::open(path)
            .ok()
            .and_then(|i| super::hipk::host_ref(i.bytes()))
        {
            let (r, indices) = host?;
            let host = super::hipk::host(path, &r, &indices, given.as_deref(), opts.budget);
            let mut verdicts = Vec::new();
            for (g, t) in gpus.iter().zip(tally.iter_mut()) {
                let v = host.check(g)?;
                t.0 += 1;
                // Runs in some modes only: say in which (as for bundles).
                let line = match (v.runs, v.only_in.is_empty()) {
                    (true, true) => color.paint(Stream::Stdout, Color::Green, "runs"),
                    (true, false) => format!(
                        "{} as {} (not in every mode of {})",
                        color.paint(Stream::Stdout, Color::Green, "runs"),
                        v.only_in.join(", "),
                        g.text
                    ),
                    (false, _) => color.paint(Stream::Stdout, Color::Red, "DOES NOT RUN"),
                };
                if !json {
                    let said = v.found.as_deref().or(v.why.as_deref()).unwrap_or("");
                    outln!("{name}: {}: {line}: {said}", g.text);
                }
                if !v.runs {
                    t.1 += 1;
                    all_run = false;
                }
                verdicts.push(v);
            }
            docs.push(serde_json::json!({"file": path.to_string_lossy(), "kpack": verdicts}));
            continue;
        }
        let r = match o {
            Outcome::NoOffloadCode => {
                no_code += 1;
                continue;
            }
            Outcome::Archive(view) => {
                let (doc, runs) =
                    check_archive(&name, path, view, &gpus, &mut tally, (json, color));
                all_run &= runs;
                docs.push(doc);
                continue;
            }
            Outcome::Read(r) if r.entries.is_empty() => {
                // Each GPU's verdict says so too (no bundles), as before.
                no_code += 1;
                if !json {
                    outln!("{name}: no device code (nothing for the HIP runtime to load)");
                }
                let verdicts: Vec<Verdict> = gpus.iter().map(|g| check::check(r, g)).collect();
                docs.push(serde_json::json!({"file": path.to_string_lossy(), "gpus": verdicts}));
                continue;
            }
            Outcome::Failed(es) => {
                all_run = false;
                super::report_errors(&format!("{name}: "), es, SHOWN_ERRORS, color);
                docs.push(serde_json::json!({"file": path.to_string_lossy(), "errors": es}));
                continue;
            }
            Outcome::Read(r) => r,
        };
        let verdicts: Vec<Verdict> = gpus.iter().map(|g| check::check(r, g)).collect();
        for (t, v) in tally.iter_mut().zip(&verdicts) {
            t.0 += 1;
            if !v.runs {
                t.1 += 1;
                all_run = false;
            }
        }
        if !json {
            for v in &verdicts {
                print_verdict(&name, v, color);
            }
            print_warnings(r, color);
        }
        let mut doc = serde_json::json!({"file": path.to_string_lossy(), "gpus": verdicts});
        if !r.warnings.is_empty() {
            doc["warnings"] = serde_json::json!(r.warnings);
        }
        docs.push(doc);
    }
    if json {
        let v = serde_json::json!({"schema": "offload-kit-check/1", "files": docs});
        outln!(
            "{}",
            serde_json::to_string_pretty(&v).expect("serialisable")
        );
    } else if tally.first().is_some_and(|t| t.0 > 1) || (no_code > 0 && files.len() > 1) {
        let without = match no_code {
            0 => String::new(),
            n => format!("; {n} without device code"),
        };
        for (g, (n, bad)) in gpus.iter().zip(&tally) {
            outln!(
                "{}: {} of {n} files run; {bad} lack a code object in some bundle{without}",
                g.text,
                n - bad
            );
        }
    }
    // Nothing checked is said, not left silent: nothing there needs a GPU
    // (exit 0, as a script deploying it wants).
    if !json && tally.first().is_some_and(|t| t.0 == 0) && all_run {
        outln!("no file holds device code ({no_code} without): nothing needs a GPU");
    }
    Ok(i32::from(!all_run))
}

/// `check` of a kpack archive named by itself: the runtime loads it only
/// through its host; per GPU, whether it holds a target that GPU takes
/// (HIPK-2). Its JSON document, and whether every GPU has one.
fn check_archive(
    name: &str,
    path: &Path,
    view: &KpackView,
    gpus: &[Gpu],
    tally: &mut [(usize, usize)],
    (json, color): (bool, ColorChoice),
) -> (serde_json::Value, bool) {
    let mut all_run = true;
    let mut verdicts = Vec::new();
    for (g, t) in gpus.iter().zip(tally.iter_mut()) {
        t.0 += 1;
        let verdict = offload_kit_inspect::kpack_archive::check_kpack(&view.archs, g);
        let held = &verdict.found;
        if held.is_none() {
            t.1 += 1;
            all_run = false;
        }
        if !json {
            let line = match held {
                Some(a) => format!(
                    "{}: holds a code object for {} (loaded through the HIPK host that names this archive)",
                    color.paint(Stream::Stdout, Color::Green, "runs"),
                    a.escape_debug()
                ),
                None => format!(
                    "{}: no code object for it in this kpack archive ({})",
                    color.paint(Stream::Stdout, Color::Red, "DOES NOT RUN"),
                    view.archs.join(", ").escape_debug()
                ),
            };
            outln!("{name}: {}: {line}", g.text);
        }
        verdicts.push(serde_json::json!(verdict));
    }
    let doc = serde_json::json!({"file": path.to_string_lossy(), "kpack_archive": view.archs, "gpus": verdicts});
    (doc, all_run)
}

/// `--gpu auto`: the GPUs of this machine (`check::machine_gpus`, the KFD
/// topology or the one `OFFLOAD_KIT_KFD_TOPOLOGY` names) in its place.
pub fn with_machine_gpus(gpus: &[String]) -> Result<Vec<String>, Vec<Error>> {
    let mut out = Vec::new();
    for g in gpus {
        if g != "auto" {
            out.push(g.clone());
            continue;
        }
        let nodes = std::env::var_os("OFFLOAD_KIT_KFD_TOPOLOGY")
            .map_or_else(|| PathBuf::from(check::KFD_TOPOLOGY), PathBuf::from);
        let xnack = std::env::var("HSA_XNACK").ok();
        let found = check::machine_gpus(&nodes, xnack.as_deref())
            .map_err(|e| vec![Error::other(format!("--gpu auto: {e}"))])?;
        out.extend(found);
    }
    Ok(out)
}

/// At most this many reasons for bundles without a code object per file.
const SHOWN_BUNDLES: usize = 10;

fn print_verdict(name: &str, v: &Verdict, color: ColorChoice) {
    let n = v.bundles.len();
    let mut by_pick = std::collections::BTreeMap::new();
    for b in &v.bundles {
        if let Some(p) = b.pick {
            *by_pick.entry(p).or_insert(0usize) += 1;
        }
    }
    let picks: Vec<String> = by_pick
        .iter()
        .map(|(p, k)| format!("{k} {}", format!("{p:?}").to_lowercase()))
        .collect();
    let fits: usize = by_pick.values().sum();
    if n == 0 {
        outln!("{name}: {}: no device code object at all", v.gpu);
        return;
    }
    let verdict = match (v.runs, v.needs()) {
        (true, None) => color.paint(Stream::Stdout, Color::Green, "runs"),
        (true, Some(needs)) => format!(
            "{} with {needs} (not in every mode of {})",
            color.paint(Stream::Stdout, Color::Green, "runs"),
            v.gpu
        ),
        (false, _) => color.paint(Stream::Stdout, Color::Red, "DOES NOT RUN"),
    };
    outln!(
        "{name}: {}: {verdict}: {fits} of {n} bundle(s) have a code object ({})",
        v.gpu,
        if picks.is_empty() {
            "none".to_string()
        } else {
            picks.join(", ")
        }
    );
    if n == 1 && v.runs {
        if let Some(e) = &v.bundles[0].entry {
            outln!("  bundle {}: {}", v.bundles[0].bundle, e.escape_debug());
        }
    }
    // One line per reason, naming its bundles: a library's bundles
    // usually fail alike.
    let mut reasons: Vec<(String, Vec<String>)> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for b in &v.bundles {
        let Some(why) = b.trouble() else { continue };
        let place = match &b.member {
            Some(m) => format!("{} (member {})", b.bundle, m.escape_debug()),
            None => b.bundle.to_string(),
        };
        match seen.get(&why) {
            Some(&k) => reasons[k].1.push(place),
            None => {
                seen.insert(why.clone(), reasons.len());
                reasons.push((why, vec![place]));
            }
        }
    }
    for (why, places) in reasons.iter().take(SHOWN_BUNDLES) {
        let list = if places.len() > 6 {
            format!(
                "{}, ... {} ({} bundles)",
                places[..3].join(", "),
                places[places.len() - 1],
                places.len()
            )
        } else {
            places.join(", ")
        };
        let noun = if places.len() == 1 {
            "bundle"
        } else {
            "bundles"
        };
        outln!("  {noun} {list}: {why}");
    }
    if reasons.len() > SHOWN_BUNDLES {
        outln!("  ... and {} more reason(s)", reasons.len() - SHOWN_BUNDLES);
    }
}
