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
//! A failure ([`report::failures`]) is a result of offload-kit that is
//! neither the spec's nor a divergence its release profile reproduces on
//! purpose (a crash or a hang never is), or a divergence of LLVM that the
//! corpus does not document. The library prints nothing: the command line
//! (`offload-kit conformance`, in the binary) parses options, prints the
//! reports and chooses the exit status. See `conformance/README.md`.
//!
//! # Example
//!
//! Select cases by glob, as `offload-kit conformance binary/**` does.
//!
//! ```
//! use offload_kit_conformance::{case_selected, glob_match, Layout};
//! use std::path::Path;
//!
//! assert!(glob_match("binary/*", "binary/bin-10-trailing"));
//! assert!(!glob_match("binary/*", "binary/unbundle/x")); // `*` stops at '/'
//! assert!(glob_match("binary/**", "binary/unbundle/x"));
//! assert!(case_selected(&["binary".to_string()], "binary/unbundle/x")); // a directory
//! assert!(!case_selected(&["bin".to_string()], "binary/x"));
//! assert_eq!(Layout::new("conformance").corpus(), Path::new("conformance/corpus"));
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod adapter;
pub mod case;
pub mod codec;
pub mod compare;
pub mod exec;
pub mod export;
pub mod html;
pub mod judge;
pub mod random;
pub mod recipe;
pub mod report;
pub mod spec;
pub mod vectors;

pub use adapter::{Adapter, Role};
pub use case::{load_corpus, Case};
pub use judge::{run_case, RunContext, Status, Verdict};

// The layers below under the names this crate uses for them.
use offload_kit_format::{error, host, id, raw as format, rules, uri};
use offload_kit_inspect as inspect;
use offload_kit_llvm::{bundle, profile, Release};
use offload_kit_smith::generate;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

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
        candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance"));
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
    run_matrix_with(cases, adapters, rc, jobs, &|_| {})
}

/// How far a matrix run is, for a front end's progress line.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// Runs finished.
    pub done: usize,
    /// Runs in all.
    pub total: usize,
    /// The implementation of the run that just finished.
    pub implementation: &'a str,
}

/// [`run_matrix`], calling `progress` after each run (from the worker
/// threads; the library prints nothing).
pub fn run_matrix_with(
    cases: &[Case],
    adapters: &[Adapter],
    rc: &RunContext,
    jobs: usize,
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Vec<Verdict> {
    let work: Vec<(usize, usize)> = (0..cases.len())
        .flat_map(|c| (0..adapters.len()).map(move |a| (c, a)))
        .collect();
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
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
                progress(Progress {
                    done: finished.fetch_add(1, Ordering::Relaxed) + 1,
                    total: work.len(),
                    implementation: &adapters[a].name,
                });
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

/// Load adapters: those of the layout's directory that run by default, or,
/// when `impls` is not empty, those whose names match one of its globs; plus
/// the adapter files `files` (always run). A user's LLVM build
/// (`llvm=DIR`) is probed for its version within `probe`.
pub fn select_adapters(
    layout: &Layout,
    impls: &[String],
    files: &[PathBuf],
    probe: std::time::Duration,
) -> Result<Vec<Adapter>, String> {
    let mut all = Adapter::load_dir(&layout.adapters(), &layout.messages())?;
    let mut extra = Vec::new();
    for f in files {
        extra.push(Adapter::load(f, &layout.messages())?);
    }
    let mut sel: Vec<Adapter> = if impls.is_empty() {
        all.retain(|a| a.default);
        all
    } else {
        let mut s = Vec::new();
        for g in impls {
            if let Some(bin) = g.strip_prefix("llvm=") {
                s.push(user_llvm(&all, Path::new(bin), probe)?);
                continue;
            }
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

/// The major version a `clang-offload-bundler --version` text names
/// (`… version 23.0.0rc1 …` → 23).
pub fn llvm_major(version_text: &str) -> Option<u32> {
    let after = version_text.split("version ").nth(1)?;
    after
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// What a user's build of LLVM `major` at `to` is judged by, said before
/// the run and in the report: its own profile, or which other one and why.
fn user_build_description(major: u32, release: Release, to: &str) -> String {
    let profile = match release {
        Release::Main => format!(
            "LLVM main's profile (24.0.0git, modelled from source at {})",
            offload_kit_llvm::profile::MAIN_COMMIT
        ),
        r if !Release::WITH_BINARY.contains(&r) => {
            format!("LLVM {r}'s profile (modelled from source: docs/llvm-23.md)")
        }
        r => format!("LLVM {r}'s reference"),
    };
    if major == release.major() {
        format!("LLVM {major} at {to} (a user's build), judged by {profile}")
    } else if Release::newer_than_modelled(major) {
        format!(
            "LLVM {major} at {to} (a user's build, newer than every modelled release: judged by {profile}, LLVM {major}'s own changes are not modelled)"
        )
    } else {
        format!(
            "LLVM {major} at {to} (a user's build of a release offload-kit does not model: judged by {profile}, the newest modelled release before it)"
        )
    }
}

/// An adapter for a user's own LLVM build (`--impl llvm=/path/to/llvm/bin`):
/// its release is read from `clang-offload-bundler --version`, and it runs
/// as the reference of the newest modelled release not newer than that
/// (the adapter `llvm-N` with every `/usr/lib/llvm-N/bin` replaced by the
/// given directory). The probe is a run like any other: killed after
/// `probe`, its output kept up to [`exec::CAPTURE_LIMIT`], and what of it
/// is echoed in an error cut short and escaped.
pub fn user_llvm(
    all: &[Adapter],
    bin: &Path,
    probe: std::time::Duration,
) -> Result<Adapter, String> {
    let bundler = bin.join("clang-offload-bundler");
    let argv = [bundler.display().to_string(), "--version".to_string()];
    let run = exec::run(&argv, Path::new("."), &[], probe);
    let shown = |t: &str| {
        let t = t.trim();
        let cut: String = t.chars().take(200).collect();
        let more = if cut.len() < t.len() { "…" } else { "" };
        format!(
            "{}{more}",
            offload_kit_format::escape::escape_controls(&cut)
        )
    };
    match &run.exit {
        exec::Exit::Code(0) => {}
        exec::Exit::SpawnFailed(m) => {
            return Err(format!("--impl llvm={}: {}", bin.display(), shown(m)))
        }
        exec::Exit::TimedOut => {
            return Err(format!(
                "--impl llvm={}: {} --version did not finish within {:.1} s",
                bin.display(),
                bundler.display(),
                probe.as_secs_f64()
            ))
        }
        other => {
            return Err(format!(
                "--impl llvm={}: {} --version failed ({other:?}): {}",
                bin.display(),
                bundler.display(),
                shown(&String::from_utf8_lossy(&run.stderr))
            ))
        }
    }
    let text = String::from_utf8_lossy(&run.stdout);
    let major = llvm_major(&text).ok_or_else(|| {
        format!(
            "--impl llvm={}: no version in '{}'",
            bin.display(),
            shown(&text)
        )
    })?;
    // The build's version decides the profile it is judged by (23.x and
    // 23.0.0git by 23, 24.0.0git by main); the commands are those of the
    // newest release with a binary not newer than it.
    let release = Release::for_major(major).ok_or_else(|| {
        format!(
            "LLVM {major} is older than every modelled release ({})",
            Release::listed(", ", ", ")
        )
    })?;
    let syntax = (Release::WITH_BINARY.into_iter())
        .filter(|r| *r <= release)
        .max()
        .expect("the oldest modelled release has a binary");
    let template = all
        .iter()
        .find(|a| a.role == Role::Reference && a.release == Some(syntax))
        .ok_or_else(|| format!("no adapter for LLVM {syntax}"))?;
    let from = format!("/usr/lib/llvm-{}/bin", syntax.major());
    let to = bin.display().to_string();
    let mut a = template.clone();
    a.name = format!("llvm-{major}-user");
    a.release = Some(release);
    a.description = user_build_description(major, release, &to);
    a.program = a.program.replace(&from, &to);
    for argv in a.commands.values_mut() {
        for el in argv.iter_mut() {
            *el = el.replace(&from, &to);
        }
    }
    // A tool the build lacks (a build of clang without llvm-offload-binary):
    // its operations are "not built", not divergences.
    let program = a.program.clone();
    let mut not_built = std::collections::BTreeMap::new();
    a.commands.retain(|op, argv| {
        let tool = match argv.first().map(String::as_str) {
            Some("{program}") => program.as_str(),
            Some(p) => p,
            None => return true,
        };
        let lacking = tool.starts_with(&to) && !Path::new(tool).exists();
        if lacking {
            not_built.insert(op.clone(), tool.to_string());
        }
        !lacking
    });
    if !not_built.is_empty() {
        let mut tools: Vec<&str> = not_built.values().map(String::as_str).collect();
        tools.sort_unstable();
        tools.dedup();
        a.description += &format!("; not built here: {}", tools.join(", "));
    }
    a.not_built = not_built;
    a.user_build = Some(to);
    Ok(a)
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

    #[test]
    fn llvm_versions() {
        assert_eq!(
            llvm_major("LLVM (http://llvm.org/):\n  LLVM version 23.0.0rc1\n"),
            Some(23)
        );
        assert_eq!(
            llvm_major("Debian clang-offload-bundler version 19.1.7 (3~deb12u1)"),
            Some(19)
        );
        assert_eq!(llvm_major("no version here"), None);
    }
}
