//! Running one case against one adapter and judging the outcome: against
//! the spec expectation adjusted by the adapter's release (ID spelling,
//! `-list` order), then against the case's documented divergences.
//!
//! Child modules: `observe` classifies what a run did ([`Observation`]);
//! `check` compares that with an expectation.
//!
//! # Example
//!
//! Judge a `list` case on two stand-in implementations that print an ID
//! with `echo` (Unix).
//!
//! ```
//! use offload_kit_conformance::{run_case, Adapter, Case, RunContext, Status};
//!
//! let case = Case::from_json(r#"{"title": "list one entry", "rules": ["BIN-12"], "op": "list",
//!     "inputs": {"in": {"bundle": {"entries": [{"id": "host-x86_64-unknown-linux-gnu-"}]}}},
//!     "args": {"inputs": ["in"]}, "expect": {"list": ["host-x86_64-unknown-linux-gnu-"]}}"#, "list/one").unwrap();
//! let printing = |id: &str| -> Adapter {
//!     let json = serde_json::json!({"name": "echo", "role": "subject", "program": "echo",
//!         "commands": {"list": ["echo", id]}});
//!     serde_json::from_value(json).unwrap()
//! };
//! let rc = RunContext { offload_kit: "offload-kit".into(), timeout: None };
//! let right = run_case(&case, &printing("host-x86_64-unknown-linux-gnu-"), &rc);
//! assert_eq!(right.status, Status::Pass);
//! let wrong = run_case(&case, &printing("hip-amdgcn-amd-amdhsa--gfx906"), &rc);
//! assert_eq!((wrong.status, wrong.cell()), (Status::Differs, "DIFF".to_string()));
//! ```

mod check;
mod observe;

pub use check::build_bundle;
pub use observe::{show, Facts, Observation};

use super::adapter::{Adapter, DecompressResult, Invocation, Role};
use super::case::{Args, Case, KnownBug, KnownDivergence, NoteOutcome, Op};
use super::exec;
use super::recipe::{BundleRecipe, Data, EntryRecipe, IdSpec, InputSpec};
use crate::profile::Release;
use check::check;
use observe::observe;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The verdict for one case on one implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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
/// One (case, implementation) result.
#[derive(Debug, Clone, Serialize, Deserialize)]
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

#[cfg(test)]
impl Verdict {
    /// A verdict with nothing but its case, implementation, status and role.
    pub(crate) fn for_test(case: &str, implementation: &str, status: Status, role: Role) -> Self {
        Verdict {
            case: case.into(),
            implementation: implementation.into(),
            status,
            underlying: None,
            detail: String::new(),
            observed: String::new(),
            note: None,
            bug: None,
            commands: vec![],
            seconds: 0.0,
            role,
        }
    }
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

/// `args.uri` with `{path}` (percent-encoded, URI-2) and `{raw_path}`
/// replaced by the first input's path.
fn code_object_uri(template: Option<&str>, inputs: &[PathBuf]) -> String {
    let (Some(t), Some(p)) = (template, inputs.first()) else {
        return String::new();
    };
    t.replace(
        "{path}",
        &crate::uri::encode_path(p.as_os_str().as_encoded_bytes()),
    )
    .replace("{raw_path}", &p.display().to_string())
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
    if let Some(tool) = a.not_built.get(exec_op.name()) {
        return na(case, a, format!("not built: {tool} is not in this build"));
    }
    if !a.commands.contains_key(exec_op.name()) {
        return na(
            case,
            a,
            format!("{} has no '{}' command", a.name, exec_op.name()),
        );
    }
    let specs = input_specs(case);
    // An input the implementation cannot take: the case does not apply.
    let build = |name: &str, spec: &InputSpec| {
        spec.build(release)
            .map_err(|e| format!("input '{name}' cannot be built for this implementation: {e}"))
    };
    let mut inputs = BTreeMap::new();
    let mut input_paths = Vec::new();
    for (i, (name, spec)) in specs.iter().enumerate() {
        let path = match (&args.file_name, case.op) {
            (Some(f), Op::ExtractUri) => dir.join(f),
            // A split host and its archives, each under its own name.
            (_, Op::KpackLookup) => dir.join(safe_name(name)),
            _ => dir.join(format!("in{i}-{}", safe_name(name))),
        };
        let built = match build(name, spec) {
            Ok(b) => b,
            Err(why) => return na(case, a, why),
        };
        if let Some(bytes) = &built {
            if let Err(e) = std::fs::write(&path, bytes) {
                let mut v = na(case, a, format!("cannot write {}: {e}", path.display()));
                v.status = Status::Error;
                return v;
            }
        }
        inputs.insert(name.clone(), built);
        input_paths.push(path);
    }
    // Inputs the case names without passing them (reference bytes for
    // `{"input": name}` facts, e.g. the bundle a compressed input holds).
    if !matches!(case.op, Op::ParseId | Op::Compatible) {
        for (name, spec) in &case.inputs {
            if inputs.contains_key(name) {
                continue;
            }
            let built = match build(name, spec) {
                Ok(b) => b,
                Err(why) => return na(case, a, why),
            };
            inputs.insert(name.clone(), built);
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
    let bundled = match bundled_input(case, a, exec_op, &inputs, dir) {
        Ok(b) => b,
        Err(v) => return *v,
    };
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
    let options = adapter_options(args);
    let uri = code_object_uri(args.uri.as_deref(), &input_paths);
    let inv = Invocation {
        uri,
        file_type: args.file_type.clone(),
        targets,
        inputs: input_paths,
        outputs: outputs.clone(),
        options,
        bundled,
        images,
        requests: args.requests.clone(),
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

/// The inputs `case` passes, by name: its own, or those its operation
/// implies (`parse-id`: one payload per target; `compatible`: a bundle of
/// its one entry).
fn input_specs(case: &Case) -> Vec<(String, InputSpec)> {
    let mut specs: Vec<(String, InputSpec)> = Vec::new();
    match case.op {
        Op::ParseId => {
            for (i, _) in case.args.targets.iter().enumerate() {
                specs.push((
                    format!("payload{i}"),
                    InputSpec::Utf8(format!("PAYLOAD-{i}\n")),
                ));
            }
        }
        Op::Compatible => {
            let entry = case.args.entry.clone().unwrap_or_default();
            specs.push((
                "bundle".into(),
                InputSpec::Bundle(BundleRecipe::plain(
                    vec![EntryRecipe::new(
                        IdSpec::Literal(entry),
                        Data::Utf8(COMPAT_PAYLOAD.into()),
                    )],
                    1,
                )),
            ));
        }
        _ => {
            for n in &case.args.inputs {
                specs.push((n.clone(), case.inputs[n].clone()));
            }
        }
    }
    specs
}

/// The options of a case's arguments, as adapters name them.
fn adapter_options(args: &Args) -> Vec<(String, Option<String>)> {
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
    options
}

/// For `compress` with an implementation that compresses an existing bundle
/// (`{bundled}` in its command): the uncompressed bundle of the case's
/// targets and inputs, written to `dir`; the verdict when it cannot be.
fn bundled_input(
    case: &Case,
    a: &Adapter,
    exec_op: Op,
    inputs: &BTreeMap<String, Option<Vec<u8>>>,
    dir: &Path,
) -> Result<Option<PathBuf>, Box<Verdict>> {
    let (args, release) = (&case.args, a.release);
    let needs_bundled = a.commands[exec_op.name()]
        .iter()
        .any(|x| x.contains("{bundled}"));
    if case.op != Op::Compress || !needs_bundled {
        return Ok(None);
    }
    if matches!(args.file_type.as_str(), "o" | "a") {
        let why = format!(
            "{} compresses an existing bundle; -type={} writes none",
            a.name, args.file_type
        );
        return Err(Box::new(na(case, a, why)));
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
    let b = built.map_err(|e| {
        Box::new(na(
            case,
            a,
            format!("the bundle to compress cannot be built: {e}"),
        ))
    })?;
    let path = dir.join("bundled");
    if let Err(e) = std::fs::write(&path, b) {
        let mut v = na(case, a, format!("cannot write {}: {e}", path.display()));
        v.status = Status::Error;
        return Err(Box::new(v));
    }
    Ok(Some(path))
}

/// The payload of the one-entry bundle a `compatible` case unbundles.
pub const COMPAT_PAYLOAD: &str = "PAYLOAD\n";

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
            let by_release = ctx.release.is_some_and(|r| n.releases.contains(&r));
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
