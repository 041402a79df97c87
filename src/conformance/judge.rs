//! Running one case against one adapter and judging the outcome: against
//! the spec expectation adjusted by the adapter's release (ID spelling,
//! `-list` order), then against the case's documented divergences.

use super::adapter::{Adapter, DecompressResult, Invocation, ListOrder, Role};
use super::case::{
    encode_hex, Case, CompressedExpect, Data, ElfFact, Expect, Fact, IdSpec, InputSpec, KnownBug,
    KnownDivergence, NoteOutcome, Op, PayloadSpec, SectionFact,
};
use super::exec::{self, Exit};
use crate::bundle::{binary, ccob, object, text};
use crate::host::elf::{self, Elf};
use crate::profile::Release;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The verdict for one case on one implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The outcome is the spec's (adjusted by release).
    Pass,
    /// The outcome is a divergence the case documents for this release.
    Documented,
    /// The outcome differs from the spec and from every documented divergence.
    Differs,
    /// The implementation crashed (signal, fatal error) or disclosed memory.
    Crashed,
    /// The implementation did not finish in time.
    TimedOut,
    /// The implementation does not support the operation or an option.
    NotApplicable,
    /// offload-kit fails the case because of a bug the case records
    /// (`known_bugs`): reported, not a new divergence.
    KnownBug,
    /// The runner could not run the case (spawn failure, bad recipe).
    Error,
}

impl Status {
    /// Short label for the matrix.
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Documented => "doc",
            Status::Differs => "DIFF",
            Status::Crashed => "CRASH",
            Status::TimedOut => "TIMEOUT",
            Status::NotApplicable => "n/a",
            Status::KnownBug => "bug",
            Status::Error => "ERROR",
        }
    }

    /// Whether this status is a new (undocumented) divergence or a runner error.
    pub fn is_new(self) -> bool {
        matches!(
            self,
            Status::Differs | Status::Crashed | Status::TimedOut | Status::Error
        )
    }
}

/// What was observed, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// Exit status 0.
    Success(Facts),
    /// A non-zero exit status with an error.
    Failure {
        /// Rules the error reports (message table, cited IDs).
        rules: Vec<String>,
        /// The first error line (program path replaced by `<prog>`).
        message: String,
        /// Indices of the outputs that exist afterwards.
        outputs_left: Vec<usize>,
    },
    /// Signal, LLVM fatal error, or an output that holds more bytes than the input.
    Crash(String),
    /// Killed after the time limit.
    TimedOut,
}

/// Facts of a successful run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Output contents (`None`: the file does not exist).
    pub outputs: Vec<Option<Vec<u8>>>,
    /// `list`: the IDs printed, in order.
    pub listing: Option<Vec<String>>,
    /// `parse-id`: the ID written for the target (or why none was found).
    pub id: Option<Result<String, String>>,
    /// `compatible`: whether the payload came out.
    pub compatible: Option<Result<bool, String>>,
}

impl Observation {
    /// One-line summary.
    pub fn summary(&self) -> String {
        match self {
            Observation::Success(f) => {
                if let Some(l) = &f.listing {
                    format!("success, listing [{}]", l.join(", "))
                } else if let Some(id) = &f.id {
                    match id {
                        Ok(id) => format!("success, written ID '{id}'"),
                        Err(e) => format!("success, but {e}"),
                    }
                } else if let Some(c) = &f.compatible {
                    match c {
                        Ok(c) => format!("compatible: {c}"),
                        Err(e) => format!("success, but {e}"),
                    }
                } else {
                    let sizes: Vec<String> = f
                        .outputs
                        .iter()
                        .map(|o| {
                            o.as_ref()
                                .map_or("absent".into(), |b| format!("{} B", b.len()))
                        })
                        .collect();
                    format!("success, outputs [{}]", sizes.join(", "))
                }
            }
            Observation::Failure { rules, message, .. } => {
                if rules.is_empty() {
                    format!("failure: {message}")
                } else {
                    format!("failure [{}]: {message}", rules.join(", "))
                }
            }
            Observation::Crash(c) => format!("crash: {c}"),
            Observation::TimedOut => "timed out".into(),
        }
    }
}

/// One (case, implementation) result.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// Case ID.
    pub case: String,
    /// Implementation (adapter) name.
    pub implementation: String,
    /// The verdict.
    pub status: Status,
    /// For `Documented`: what happened (`differs`, `crashed`, `timed-out`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub underlying: Option<Status>,
    /// Short explanation or diff.
    pub detail: String,
    /// What was observed.
    pub observed: String,
    /// The documented divergence that applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<KnownDivergence>,
    /// For `KnownBug`: the recorded bug.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bug: Option<KnownBug>,
    /// The commands run (shell-quoted).
    pub commands: Vec<String>,
    /// Wall time of the runs, seconds.
    pub seconds: f64,
    /// Whether the adapter is the subject (offload-kit) or a reference.
    pub role: Role,
}

impl Verdict {
    /// The matrix cell.
    pub fn cell(&self) -> String {
        match (self.status, self.underlying) {
            (Status::Documented, Some(Status::Crashed)) => "doc:crash".into(),
            (Status::Documented, Some(Status::TimedOut)) => "doc:hang".into(),
            (s, _) => s.label().into(),
        }
    }
}

/// Settings shared by all runs.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// The offload-kit binary (for `{offload_kit}`).
    pub offload_kit: PathBuf,
    /// Override of every adapter's time limit.
    pub timeout: Option<Duration>,
}

struct Ctx<'a> {
    case: &'a Case,
    adapter: &'a Adapter,
    release: Option<Release>,
    inputs: BTreeMap<String, Option<Vec<u8>>>,
    op: Op,
}

fn na(case: &Case, a: &Adapter, why: String) -> Verdict {
    Verdict {
        case: case.id.clone(),
        implementation: a.name.clone(),
        status: Status::NotApplicable,
        underlying: None,
        detail: why,
        observed: String::new(),
        note: None,
        bug: None,
        commands: vec![],
        seconds: 0.0,
        role: a.role,
    }
}

fn safe_name(n: &str) -> String {
    n.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Run `case` against adapter `a` and judge the outcome.
pub fn run_case(case: &Case, a: &Adapter, rc: &RunContext) -> Verdict {
    let dir = match tempfile::Builder::new().prefix("okconf-").tempdir() {
        Ok(d) => d,
        Err(e) => {
            let mut v = na(case, a, format!("cannot create a temporary directory: {e}"));
            v.status = Status::Error;
            return v;
        }
    };
    run_case_in(case, a, rc, dir.path())
}

/// [`run_case`] in a given scratch directory (kept by the caller, for reproducers).
pub fn run_case_in(case: &Case, a: &Adapter, rc: &RunContext, dir: &Path) -> Verdict {
    let release = a.release;
    let (exec_op, args) = match case.op {
        Op::ParseId => (Op::Bundle, &case.args),
        Op::Compatible => (Op::Unbundle, &case.args),
        op => (op, &case.args),
    };
    if !a.commands.contains_key(exec_op.name()) {
        return na(
            case,
            a,
            format!("{} has no '{}' command", a.name, exec_op.name()),
        );
    }
    // Inputs.
    let mut specs: Vec<(String, InputSpec)> = Vec::new();
    match case.op {
        Op::ParseId => {
            for (i, _) in args.targets.iter().enumerate() {
                specs.push((
                    format!("payload{i}"),
                    InputSpec::Utf8(format!("PAYLOAD-{i}\n")),
                ));
            }
        }
        Op::Compatible => {
            let entry = args.entry.clone().unwrap_or_default();
            specs.push((
                "bundle".into(),
                InputSpec::Bundle(super::case::BundleRecipe {
                    entries: vec![super::case::EntryRecipe {
                        id: IdSpec::Literal(entry),
                        payload: Data::Utf8(COMPAT_PAYLOAD.into()),
                        offset: None,
                        size: None,
                        id_len: None,
                    }],
                    align: 1,
                    count: None,
                    padding: None,
                    truncate: None,
                    append: None,
                    patch: vec![],
                }),
            ));
        }
        _ => {
            for n in &args.inputs {
                specs.push((n.clone(), case.inputs[n].clone()));
            }
        }
    }
    let mut inputs = BTreeMap::new();
    let mut input_paths = Vec::new();
    for (i, (name, spec)) in specs.iter().enumerate() {
        let path = dir.join(format!("in{i}-{}", safe_name(name)));
        match spec.build(release) {
            Ok(Some(bytes)) => {
                if let Err(e) = std::fs::write(&path, &bytes) {
                    let mut v = na(case, a, format!("cannot write {}: {e}", path.display()));
                    v.status = Status::Error;
                    return v;
                }
                inputs.insert(name.clone(), Some(bytes));
            }
            Ok(None) => {
                inputs.insert(name.clone(), None);
            }
            Err(e) => {
                return na(
                    case,
                    a,
                    format!("input '{name}' cannot be built for this implementation: {e}"),
                )
            }
        }
        input_paths.push(path);
    }
    // Inputs the case names without passing them (reference bytes for
    // `{"input": name}` facts, e.g. the bundle a compressed input holds).
    if !matches!(case.op, Op::ParseId | Op::Compatible) {
        for (name, spec) in &case.inputs {
            if inputs.contains_key(name) {
                continue;
            }
            match spec.build(release) {
                Ok(b) => {
                    inputs.insert(name.clone(), b);
                }
                Err(e) => {
                    return na(
                        case,
                        a,
                        format!("input '{name}' cannot be built for this implementation: {e}"),
                    )
                }
            }
        }
    }
    let n_out = match case.op {
        Op::ParseId => 1,
        Op::Compatible => 1,
        Op::Decompress if a.decompress_result == DecompressResult::Listing => 0,
        op => args.output_count(op),
    };
    // compress: the uncompressed bundle of the targets and inputs, for
    // implementations that compress an existing bundle (`{bundled}`).
    let mut bundled = None;
    let needs_bundled = a.commands[exec_op.name()]
        .iter()
        .any(|x| x.contains("{bundled}"));
    if case.op == Op::Compress && needs_bundled {
        if matches!(args.file_type.as_str(), "o" | "a") {
            return na(
                case,
                a,
                format!(
                    "{} compresses an existing bundle; -type={} writes none",
                    a.name, args.file_type
                ),
            );
        }
        let payloads: Vec<Vec<u8>> = args
            .inputs
            .iter()
            .map(|n| inputs.get(n).cloned().flatten().unwrap_or_default())
            .collect();
        let built = args
            .targets
            .iter()
            .map(|t| IdSpec::Written { written: t.clone() }.resolve(release))
            .collect::<Result<Vec<_>, _>>()
            .and_then(|ids| {
                build_bundle(
                    &args.file_type,
                    &ids,
                    &payloads,
                    args.bundle_align.unwrap_or(1),
                )
            });
        let b = match built {
            Ok(b) => b,
            Err(e) => {
                return na(
                    case,
                    a,
                    format!("the bundle to compress cannot be built: {e}"),
                )
            }
        };
        let path = dir.join("bundled");
        if let Err(e) = std::fs::write(&path, b) {
            let mut v = na(case, a, format!("cannot write {}: {e}", path.display()));
            v.status = Status::Error;
            return v;
        }
        bundled = Some(path);
    }
    let outputs: Vec<PathBuf> = if case.op == Op::Unpackage {
        args.output_files.iter().map(|f| dir.join(f)).collect()
    } else {
        (0..n_out).map(|i| dir.join(format!("out{i}"))).collect()
    };
    // `{input:NAME}` in an image names the file input NAME was written to.
    let mut images = Vec::new();
    for im in &args.images {
        let mut v = im.clone();
        for (i, (name, _)) in specs.iter().enumerate() {
            let path = dir.join(format!("in{i}-{}", safe_name(name)));
            v = v.replace(&format!("{{input:{name}}}"), &path.display().to_string());
        }
        if v.contains("{input:") {
            return na(
                case,
                a,
                format!("image '{im}' names an input the case does not pass"),
            );
        }
        images.push(v);
    }
    let targets = match case.op {
        Op::Compatible => vec![args.request.clone().unwrap_or_default()],
        _ => args.targets.clone(),
    };
    let mut options = Vec::new();
    if args.allow_missing_bundles {
        options.push(("allow_missing_bundles".to_string(), None));
    }
    if let Some(al) = args.bundle_align {
        options.push(("bundle_align".to_string(), Some(al.to_string())));
    }
    if args.hip_openmp_compatible {
        options.push(("hip_openmp_compatible".to_string(), None));
    }
    if args.check_input_archive {
        options.push(("check_input_archive".to_string(), None));
    }
    if let Some(l) = args.compression_level {
        options.push(("compression_level".to_string(), Some(l.to_string())));
    }
    if let Some(v) = args.format_version {
        options.push(("format_version".to_string(), Some(v.to_string())));
    }
    if let Some(m) = &args.method {
        options.push(("method".to_string(), Some(m.clone())));
    }
    let inv = Invocation {
        file_type: args.file_type.clone(),
        targets,
        inputs: input_paths,
        outputs: outputs.clone(),
        options,
        bundled,
        images,
    };
    let (argv, option_env) = match a.argv_env(exec_op, &inv, &rc.offload_kit) {
        Ok(v) => v,
        Err(e) => return na(case, a, e),
    };
    let mut env: Vec<(String, String)> =
        a.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    env.extend(option_env);
    let limit = rc
        .timeout
        .or_else(|| {
            case.timeout_seconds
                .map(|s| Duration::from_secs(u64::from(s.max(1))))
        })
        .unwrap_or_else(|| a.timeout());
    let res = exec::run(&argv, dir, &env, limit);
    let program = a.program_path(&rc.offload_kit);
    let ctx = Ctx {
        case,
        adapter: a,
        release,
        inputs,
        op: case.op,
    };
    let obs = match observe(&ctx, &res, &outputs, &program) {
        Ok(o) => o,
        Err(e) => {
            let mut v = na(case, a, e);
            v.status = Status::Error;
            v.commands = vec![exec::shell_quote(&res.argv)];
            return v;
        }
    };
    let mut v = judge(&ctx, &obs);
    v.commands = vec![exec::shell_quote(&res.argv)];
    v.seconds = res.elapsed.as_secs_f64();
    v
}

/// The payload of the one-entry bundle a `compatible` case unbundles.
pub const COMPAT_PAYLOAD: &str = "PAYLOAD\n";

fn first_error_line(stderr: &str, program: &str) -> String {
    let text = stderr.replace(program, "<prog>");
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let line = lines
        .iter()
        .find(|l| l.contains("error"))
        .or_else(|| lines.iter().find(|l| !l.contains("warning:")))
        .or(lines.first())
        .copied()
        .unwrap_or("(no message)");
    let mut s = line.trim().to_string();
    if s.len() > 240 {
        let mut cut = 240;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

fn observe(
    ctx: &Ctx<'_>,
    res: &exec::RunResult,
    outputs: &[PathBuf],
    program: &str,
) -> Result<Observation, String> {
    let stderr = String::from_utf8_lossy(&res.stderr);
    let code = match &res.exit {
        Exit::SpawnFailed(m) => return Err(m.clone()),
        Exit::TimedOut => return Ok(Observation::TimedOut),
        Exit::Signal(s) => {
            return Ok(Observation::Crash(format!(
                "{} ({})",
                exec::signal_name(*s),
                first_error_line(&stderr, program)
            )))
        }
        Exit::Code(c) => *c,
    };
    // LLVM's fatal errors start their line; an implementation that quotes
    // one inside its own error message has not crashed.
    if let Some(l) = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("LLVM ERROR"))
    {
        return Ok(Observation::Crash(format!(
            "fatal error, exit {code}: {}",
            l.replace(program, "<prog>").trim()
        )));
    }
    let outs: Vec<Option<Vec<u8>>> = outputs.iter().map(|p| std::fs::read(p).ok()).collect();
    if matches!(ctx.op, Op::Unbundle | Op::Compatible | Op::Unpackage) {
        // A compressed input legitimately unbundles to more bytes than it
        // has: what its stream decodes to is the bound.
        let biggest_input = ctx
            .inputs
            .values()
            .map(|b| b.as_ref().map_or(0, |b| b.len().max(decoded_len(b))))
            .max()
            .unwrap_or(0);
        // An archive unbundled with -type=a adds headers, a name table and
        // a symbol table (spec/archive.md AR-5): there each member of the
        // output archive is bounded by the input instead.
        let archive_op = ctx.case.args.file_type == "a";
        for (i, o) in outs.iter().enumerate() {
            if let Some(o) = o {
                let size = if archive_op {
                    crate::host::ar::members(o, 0)
                        .map(|ms| ms.iter().map(|m| m.size as usize).max().unwrap_or(0))
                        .unwrap_or(o.len())
                } else {
                    o.len()
                };
                if size > biggest_input {
                    return Ok(Observation::Crash(format!(
                        "memory disclosure: output {i} holds {} bytes, the input only {biggest_input} (exit {code})",
                        o.len()
                    )));
                }
            }
        }
    }
    if code != 0 {
        let rules = ctx.adapter.rules_of(&stderr);
        let outputs_left: Vec<usize> = outs
            .iter()
            .enumerate()
            .filter(|(_, o)| o.is_some())
            .map(|(i, _)| i)
            .collect();
        if ctx.op == Op::Compatible && rules.iter().any(|r| r == "CLI-4") {
            return Ok(Observation::Success(Facts {
                compatible: Some(Ok(false)),
                ..Facts::default()
            }));
        }
        return Ok(Observation::Failure {
            rules,
            message: first_error_line(&stderr, program),
            outputs_left,
        });
    }
    let mut facts = Facts::default();
    match ctx.op {
        Op::List => facts.listing = Some(ctx.adapter.parse_listing(&res.stdout)?),
        Op::Decompress if ctx.adapter.decompress_result == DecompressResult::Listing => {
            facts.listing = Some(ctx.adapter.parse_listing(&res.stdout)?)
        }
        Op::ParseId => {
            let args = &ctx.case.args;
            let idx = args
                .targets
                .iter()
                .position(|t| Some(t) == args.id.as_ref())
                .unwrap_or(0);
            let want = format!("PAYLOAD-{idx}\n");
            facts.id = Some(match &outs[0] {
                None => Err("no output bundle was written".into()),
                Some(b) => match binary::scan(b, 0) {
                    None => Err("the output is not a binary bundle".into()),
                    Some(scan) => scan
                        .entries
                        .iter()
                        .find(|e| e.payload(b) == Some(want.as_bytes()))
                        .map(|e| e.id_str().into_owned())
                        .ok_or_else(|| {
                            let ids: Vec<String> =
                                scan.entries.iter().map(|e| e.id_str().into_owned()).collect();
                            format!(
                                "the bundle written has no entry holding the target's payload (IDs: [{}])",
                                ids.join(", ")
                            )
                        }),
                },
            });
        }
        Op::Compatible => {
            facts.compatible = Some(match &outs[0] {
                Some(b) if b == COMPAT_PAYLOAD.as_bytes() => Ok(true),
                Some(b) => Err(format!(
                    "exit 0 but the output holds {} instead of the entry's payload",
                    show(b)
                )),
                None => Err("exit 0 but no output was written".into()),
            });
        }
        Op::Bundle
        | Op::Unbundle
        | Op::Compress
        | Op::Decompress
        | Op::Verify
        | Op::Package
        | Op::Unpackage
        | Op::ObjdumpOffloading => {}
    }
    facts.outputs = outs;
    Ok(Observation::Success(facts))
}

/// Short printable form of bytes.
pub fn show(b: &[u8]) -> String {
    const MAX: usize = 40;
    let s: String = b
        .iter()
        .take(MAX)
        .flat_map(|&c| std::ascii::escape_default(c))
        .map(char::from)
        .collect();
    let more = if b.len() > MAX { "…" } else { "" };
    format!("'{s}{more}' ({} B)", b.len())
}

fn judge(ctx: &Ctx<'_>, obs: &Observation) -> Verdict {
    let mut v = judge_spec(ctx, obs);
    let a = ctx.adapter;
    if a.role != Role::Subject {
        return v;
    }
    let Some(bug) = ctx
        .case
        .known_bugs
        .iter()
        .find(|b| b.adapters.iter().any(|g| super::glob_match(g, &a.name)))
    else {
        return v;
    };
    match v.status {
        Status::Pass | Status::Documented => {
            v.status = Status::Differs;
            v.underlying = None;
            v.note = None;
            v.detail = format!(
                "the case records a bug of {} that no longer shows: remove its known_bugs entry ({})",
                a.name, bug.note
            );
        }
        Status::Differs | Status::Crashed | Status::TimedOut => {
            v.underlying = Some(v.status);
            v.status = Status::KnownBug;
            v.bug = Some(bug.clone());
        }
        Status::NotApplicable | Status::Error | Status::KnownBug => {}
    }
    v
}

fn judge_spec(ctx: &Ctx<'_>, obs: &Observation) -> Verdict {
    let case = ctx.case;
    let a = ctx.adapter;
    let mut v = Verdict {
        case: case.id.clone(),
        implementation: a.name.clone(),
        status: Status::Pass,
        underlying: None,
        detail: String::new(),
        observed: obs.summary(),
        note: None,
        bug: None,
        commands: vec![],
        seconds: 0.0,
        role: a.role,
    };
    let spec = check(ctx, &case.expect, obs);
    let Err(diff) = spec else {
        return v;
    };
    let underlying = match obs {
        Observation::Crash(_) => Status::Crashed,
        Observation::TimedOut => Status::TimedOut,
        _ => Status::Differs,
    };
    v.detail = diff;
    let excusable = a.role == Role::Reference || underlying == Status::Differs;
    if excusable {
        for n in &case.known_divergence {
            let by_release = ctx.release.is_some_and(|r| n.releases.contains(&r.major()));
            let by_adapter = n.adapters.iter().any(|g| super::glob_match(g, &a.name));
            if !(by_release || by_adapter) {
                continue;
            }
            if a.role == Role::Subject && !n.profile {
                continue;
            }
            if outcome_matches(ctx, &n.outcome, obs) {
                v.status = Status::Documented;
                v.underlying = Some(underlying);
                v.note = Some(n.clone());
                return v;
            }
        }
    }
    v.status = underlying;
    v
}

fn outcome_matches(ctx: &Ctx<'_>, o: &NoteOutcome, obs: &Observation) -> bool {
    match o {
        NoteOutcome::Word(w) => match w.as_str() {
            "any" => true,
            "crash" => matches!(obs, Observation::Crash(_)),
            "timeout" => matches!(obs, Observation::TimedOut),
            "success" => matches!(obs, Observation::Success(_)),
            "failure" => matches!(obs, Observation::Failure { .. }),
            _ => false,
        },
        NoteOutcome::Expect(e) => check(ctx, e, obs).is_ok(),
    }
}

/// Compare an observation with an expectation adjusted for the adapter's
/// release; `Err` holds a short diff.
fn check(ctx: &Ctx<'_>, e: &Expect, obs: &Observation) -> Result<(), String> {
    if let Some(rule) = &e.fail {
        return match obs {
            Observation::Failure {
                rules,
                message,
                outputs_left,
            } => {
                if rule != "*" && !rules.iter().any(|r| r == rule) {
                    if rules.is_empty() {
                        return Err(format!(
                            "failed without naming a rule ('{message}'); expected a {rule} failure"
                        ));
                    }
                    return Err(format!(
                        "failed under [{}] ('{message}'); expected {rule}",
                        rules.join(", ")
                    ));
                }
                if e.no_outputs && !outputs_left.is_empty() {
                    return Err(format!(
                        "failed as expected but left output(s) {outputs_left:?} behind (CLI-5)"
                    ));
                }
                Ok(())
            }
            other => Err(format!(
                "{}; expected a {} failure",
                other.summary(),
                if rule == "*" { "" } else { rule }
            )),
        };
    }
    let facts = match obs {
        Observation::Success(f) => f,
        other => return Err(format!("{}; expected success", other.summary())),
    };
    if let Some(c) = e.compatible {
        return match &facts.compatible {
            Some(Ok(got)) if *got == c => Ok(()),
            Some(Ok(got)) => Err(format!("compatible: {got}; expected {c}")),
            Some(Err(m)) => Err(m.clone()),
            None => Err("no compatibility result".into()),
        };
    }
    if let Some(id) = &e.id {
        let want = id.resolve_text(ctx.release)?;
        return match &facts.id {
            Some(Ok(got)) if *got == want => Ok(()),
            Some(Ok(got)) => Err(format!("written ID '{got}'; expected '{want}'")),
            Some(Err(m)) => Err(m.clone()),
            None => Err("no written ID".into()),
        };
    }
    if let Some(list) = &e.list {
        let want: Vec<String> = list
            .iter()
            .map(|i| i.resolve_text(ctx.release))
            .collect::<Result<_, _>>()?;
        let got = facts.listing.clone().unwrap_or_default();
        return compare_listing(ctx, want, got);
    }
    if let Some(facts_want) = &e.outputs {
        if let (Some(got), true) = (&facts.listing, ctx.op == Op::Decompress) {
            // The implementation lists the decompressed bundle: compare
            // with the IDs of the bundle the expectation names.
            let want = match facts_want.first() {
                Some(f) => fact_bytes(ctx, f)?.ok_or(
                    "the expected output is not given as bytes; a listing cannot be compared",
                )?,
                None => return Err("decompress expects one output".into()),
            };
            let ids = bundle_ids_in(&ctx.case.args.file_type, &want)?;
            return compare_listing(ctx, ids, got.clone());
        }
        if facts_want.len() != facts.outputs.len() {
            return Err(format!(
                "{} outputs expected, the case declares {}",
                facts_want.len(),
                facts.outputs.len()
            ));
        }
        for (i, (f, got)) in facts_want.iter().zip(&facts.outputs).enumerate() {
            check_fact(ctx, f, got.as_deref()).map_err(|m| format!("output {i}: {m}"))?;
        }
        return Ok(());
    }
    if let Some(c) = &e.compressed {
        let got = facts
            .outputs
            .first()
            .cloned()
            .flatten()
            .ok_or("no compressed bundle was written")?;
        return check_compressed(ctx, c, &got);
    }
    if let Some(b) = &e.bundle {
        let want = expected_bundle(ctx, b)?;
        let got = facts
            .outputs
            .first()
            .cloned()
            .flatten()
            .ok_or("no output bundle was written")?;
        return if got == want {
            Ok(())
        } else if text::comment(&ctx.case.args.file_type).is_some() {
            let at = want
                .iter()
                .zip(&got)
                .position(|(a, b)| a != b)
                .unwrap_or(want.len().min(got.len()));
            Err(format!(
                "text bundle differs from byte 0x{at:x} ({} B, expected {} B): {} expected {}",
                got.len(),
                want.len(),
                show(&got[at..]),
                show(&want[at..])
            ))
        } else {
            Err(bundle_diff(&want, &got))
        };
    }
    Err("the expectation is empty".into())
}

fn compare_listing(
    ctx: &Ctx<'_>,
    want_header: Vec<String>,
    got: Vec<String>,
) -> Result<(), String> {
    let mut ws = want_header.clone();
    let mut gs = got.clone();
    ws.sort();
    gs.sort();
    if ws != gs {
        return Err(format!(
            "listing [{}]; expected [{}]",
            got.join(", "),
            want_header.join(", ")
        ));
    }
    // Text bundles and object files have one natural order, which every
    // release uses (TXT-13, OBJ-9): only binary bundles are listed in
    // StringMap order.
    let order = match ctx.adapter.list_order {
        ListOrder::Stringmap if file_ordered(ctx) => ListOrder::Header,
        o => o,
    };
    let (want, how) = match (order, ctx.release) {
        (ListOrder::Set, _) | (ListOrder::Stringmap, None) => return Ok(()),
        (ListOrder::Header, _) => (want_header.clone(), "header order".to_string()),
        (ListOrder::Stringmap, Some(r)) => {
            let keys: Vec<&str> = want_header.iter().map(String::as_str).collect();
            (
                r.stringmap_order(&keys)
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
                format!("LLVM {r} StringMap order"),
            )
        }
    };
    if want == got {
        Ok(())
    } else {
        Err(format!(
            "listing order [{}]; expected [{}] ({how})",
            got.join(", "),
            want.join(", ")
        ))
    }
}

fn check_fact(ctx: &Ctx<'_>, f: &Fact, got: Option<&[u8]>) -> Result<(), String> {
    if let Fact::Absent(_) = f {
        return match got {
            None => Ok(()),
            Some(b) => Err(format!("exists with {}; expected no file", show(b))),
        };
    }
    let Some(got) = got else {
        return Err("not written".into());
    };
    let want: Vec<u8> = match fact_bytes(ctx, f)? {
        Some(w) => w,
        None => match f {
            Fact::Sha256(h) => {
                let d = encode_hex(&Sha256::digest(got));
                return if d.eq_ignore_ascii_case(h) {
                    Ok(())
                } else {
                    Err(format!("sha256 {d}; expected {h} ({})", show(got)))
                };
            }
            Fact::Size(n) => {
                return if got.len() as u64 == *n {
                    Ok(())
                } else {
                    Err(format!("{} bytes; expected {n}", got.len()))
                }
            }
            Fact::Elf(e) => return check_elf(ctx, e, got),
            _ => unreachable!("fact_bytes names every other fact; Absent is handled above"),
        },
    };
    if got == want.as_slice() {
        Ok(())
    } else {
        Err(format!("{}; expected {}", show(got), show(&want)))
    }
}

/// The bytes a fact names exactly, if it does.
fn fact_bytes(ctx: &Ctx<'_>, f: &Fact) -> Result<Option<Vec<u8>>, String> {
    Ok(Some(match f {
        Fact::Utf8(s) => s.as_bytes().to_vec(),
        Fact::Hex(h) => super::case::decode_hex(h)?,
        Fact::Base64(b) => super::case::decode_base64(b)?,
        Fact::Zeros(n) => Data::Zeros(*n).bytes()?,
        Fact::Input(name) => ctx
            .inputs
            .get(name)
            .cloned()
            .flatten()
            .ok_or_else(|| format!("the case has no input '{name}'"))?,
        _ => return Ok(None),
    }))
}

/// The entry IDs of a bundle of `file_type` (text or binary), in file order.
fn bundle_ids_in(file_type: &str, data: &[u8]) -> Result<Vec<String>, String> {
    if let Some(c) = text::comment(file_type) {
        let t = text::parse_strict(data, 0, c).map_err(|es| {
            format!(
                "the expected output is not a text bundle: {}",
                es.first().map(ToString::to_string).unwrap_or_default()
            )
        })?;
        return Ok(t.entries.iter().map(|e| e.id_str().into_owned()).collect());
    }
    match binary::scan(data, 0) {
        Some(s) => Ok(s.entries.iter().map(|e| e.id_str().into_owned()).collect()),
        None => Err("the expected output is not a binary bundle".into()),
    }
}

/// Whether a listing of this case's input comes in file order for every
/// release: a text type, or an object file read with `-type=o`/`a`.
fn file_ordered(ctx: &Ctx<'_>) -> bool {
    let t = ctx.case.args.file_type.as_str();
    if text::comment(t).is_some() {
        return true;
    }
    if t == "o" || t == "a" {
        return ctx.case.args.inputs.first().is_some_and(|n| {
            ctx.inputs
                .get(n)
                .and_then(Option::as_ref)
                .is_some_and(|b| object::is_object_file(b))
        });
    }
    false
}

/// What a compressed input decodes to (0 when it is not one or does not decode).
fn decoded_len(b: &[u8]) -> usize {
    if !ccob::is_ccob(b) {
        return 0;
    }
    ccob::parse_header(b, 0)
        .ok()
        .and_then(|h| {
            let payload = b.get(h.header_size as usize..)?;
            let mut sink = std::io::sink();
            ccob::decode_into(&h, payload, 0, &mut sink).ok()
        })
        .map_or(0, |n| n as usize)
}

/// A bundle of `file_type` (text or binary) holding `ids` with `payloads`.
pub fn build_bundle(
    file_type: &str,
    ids: &[Vec<u8>],
    payloads: &[Vec<u8>],
    align: u64,
) -> Result<Vec<u8>, String> {
    let pairs: Vec<(&[u8], &[u8])> = ids
        .iter()
        .zip(payloads)
        .map(|(i, p)| (i.as_slice(), p.as_slice()))
        .collect();
    match text::comment(file_type) {
        Some(c) => Ok(text::write_to_vec(&pairs, c)),
        None => binary::write_to_vec(&pairs, align).map_err(|e| format!("expected bundle: {e}")),
    }
}

fn check_compressed(ctx: &Ctx<'_>, c: &CompressedExpect, got: &[u8]) -> Result<(), String> {
    if !ccob::is_ccob(got) {
        return Err(format!("not a compressed bundle: {}", show(got)));
    }
    let h = ccob::parse_header(got, 0).map_err(|e| format!("compressed bundle: {e}"))?;
    if let Some(v) = c.version {
        if h.version != v {
            return Err(format!(
                "compressed bundle version {}; expected {v}",
                h.version
            ));
        }
    }
    if let Some(m) = &c.method {
        let have = match h.method() {
            Some(ccob::Method::Zlib) => "zlib",
            Some(ccob::Method::Zstd) => "zstd",
            None => "unknown",
        };
        if have != m {
            return Err(format!("compression method {have}; expected {m}"));
        }
    }
    let d = ccob::decompress_strict(got, 0)
        .map_err(|e| format!("the compressed bundle does not verify: {e}"))?;
    let want = match (&c.content, &c.bundle) {
        (Some(data), _) => data.bytes()?,
        (None, Some(b)) => expected_bundle(ctx, b)?,
        (None, None) => expected_bundle(ctx, &super::case::BundleExpect::default())?,
    };
    if d.data == want {
        Ok(())
    } else {
        Err(format!(
            "decompresses to {}; expected {}",
            show(&d.data),
            show(&want)
        ))
    }
}

fn check_elf(ctx: &Ctx<'_>, f: &ElfFact, got: &[u8]) -> Result<(), String> {
    let e = Elf::parse(got).map_err(|e| format!("not an ELF file ({e}): {}", show(got)))?;
    let names: Vec<String> = e
        .sections
        .iter()
        .skip(1)
        .map(|s| s.name_str().into_owned())
        .collect();
    let mut want = Vec::new();
    for s in &f.sections {
        want.push(match s {
            SectionFact::Name(n) => n.clone(),
            SectionFact::Bundle(b) => format!(
                "{}{}",
                object::SECTION_PREFIX,
                b.bundle.resolve_text(ctx.release)?
            ),
        });
    }
    if names != want {
        return Err(format!(
            "ELF sections [{}]; expected [{}]",
            names.join(", "),
            want.join(", ")
        ));
    }
    for (s, sec) in f.sections.iter().zip(e.sections.iter().skip(1)) {
        let SectionFact::Bundle(b) = s else {
            continue;
        };
        let name = sec.name_str();
        if sec.sh_type != elf::SHT_PROGBITS || sec.flags != elf::SHF_EXCLUDE || sec.align != 1 {
            return Err(format!(
                "section {name}: type {}, flags 0x{:x}, alignment {}; expected SHT_PROGBITS, SHF_EXCLUDE, 1",
                sec.sh_type, sec.flags, sec.align
            ));
        }
        if let Some(p) = &b.payload {
            let want = match p {
                PayloadSpec::Utf8(s) => s.as_bytes().to_vec(),
                PayloadSpec::Hex(h) => super::case::decode_hex(h)?,
                PayloadSpec::Input(n) => ctx
                    .inputs
                    .get(n)
                    .cloned()
                    .flatten()
                    .ok_or_else(|| format!("the case has no input '{n}'"))?,
            };
            let have = sec
                .data(got)
                .ok_or_else(|| format!("section {name}: contents outside the file"))?;
            if have != want.as_slice() {
                return Err(format!(
                    "section {name} holds {}; expected {}",
                    show(have),
                    show(&want)
                ));
            }
        }
    }
    Ok(())
}

fn expected_bundle(ctx: &Ctx<'_>, b: &super::case::BundleExpect) -> Result<Vec<u8>, String> {
    let args = &ctx.case.args;
    let align = b.align.or(args.bundle_align).unwrap_or(1);
    let entries: Vec<(IdSpec, PayloadSpec)> = match &b.entries {
        Some(e) => e
            .iter()
            .map(|e| (e.id.clone(), e.payload.clone()))
            .collect(),
        None => args
            .targets
            .iter()
            .zip(&args.inputs)
            .map(|(t, i)| {
                (
                    IdSpec::Written { written: t.clone() },
                    PayloadSpec::Input(i.clone()),
                )
            })
            .collect(),
    };
    let mut ids = Vec::new();
    let mut payloads = Vec::new();
    for (id, p) in entries {
        ids.push(id.resolve(ctx.release)?);
        payloads.push(match p {
            PayloadSpec::Utf8(s) => s.into_bytes(),
            PayloadSpec::Hex(h) => super::case::decode_hex(&h)?,
            PayloadSpec::Input(n) => ctx
                .inputs
                .get(&n)
                .cloned()
                .flatten()
                .ok_or_else(|| format!("the case has no input '{n}'"))?,
        });
    }
    build_bundle(&args.file_type, &ids, &payloads, align)
}

fn bundle_ids(b: &[u8]) -> String {
    match binary::scan(b, 0) {
        Some(s) => {
            let ids: Vec<String> = s
                .entries
                .iter()
                .map(|e| format!("{}@0x{:x}+{}", e.id_str(), e.offset, e.size))
                .collect();
            format!("[{}]", ids.join(", "))
        }
        None => "not a bundle".into(),
    }
}

fn bundle_diff(want: &[u8], got: &[u8]) -> String {
    let first = want
        .iter()
        .zip(got)
        .position(|(a, b)| a != b)
        .unwrap_or(want.len().min(got.len()));
    format!(
        "bundle differs from byte 0x{first:x} ({} B, expected {} B): entries {} expected {}",
        got.len(),
        want.len(),
        bundle_ids(got),
        bundle_ids(want)
    )
}
