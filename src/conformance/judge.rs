//! Running one case against one adapter and judging the outcome: against
//! the spec expectation adjusted by the adapter's release (ID spelling,
//! `-list` order), then against the case's documented divergences.

use super::adapter::{Adapter, Invocation, ListOrder, Role};
use super::case::{
    encode_hex, Case, Data, Expect, Fact, IdSpec, InputSpec, KnownDivergence, NoteOutcome, Op,
    PayloadSpec,
};
use super::exec::{self, Exit};
use crate::bundle::binary;
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
    let n_out = match case.op {
        Op::ParseId => 1,
        Op::Compatible => 1,
        op => args.output_count(op),
    };
    let outputs: Vec<PathBuf> = (0..n_out).map(|i| dir.join(format!("out{i}"))).collect();
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
    let inv = Invocation {
        file_type: args.file_type.clone(),
        targets,
        inputs: input_paths,
        outputs: outputs.clone(),
        options,
    };
    let argv = match a.argv(exec_op, &inv, &rc.offload_kit) {
        Ok(v) => v,
        Err(e) => return na(case, a, e),
    };
    let env: Vec<(String, String)> = a.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let res = exec::run(&argv, dir, &env, rc.timeout.unwrap_or_else(|| a.timeout()));
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
    if let Some(l) = stderr.lines().find(|l| l.contains("LLVM ERROR")) {
        return Ok(Observation::Crash(format!(
            "fatal error, exit {code}: {}",
            l.replace(program, "<prog>").trim()
        )));
    }
    let outs: Vec<Option<Vec<u8>>> = outputs.iter().map(|p| std::fs::read(p).ok()).collect();
    if matches!(ctx.op, Op::Unbundle | Op::Compatible) {
        let biggest_input = ctx
            .inputs
            .values()
            .map(|b| b.as_ref().map_or(0, Vec::len))
            .max()
            .unwrap_or(0);
        for (i, o) in outs.iter().enumerate() {
            if let Some(o) = o {
                if o.len() > biggest_input {
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
        Op::Bundle | Op::Unbundle => {}
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
    if let Some(r) = ctx.release {
        let excusable = a.role == Role::Reference || underlying == Status::Differs;
        if excusable {
            for n in &case.known_divergence {
                if !n.releases.contains(&r.major()) {
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
    let (want, how) = match (ctx.adapter.list_order, ctx.release) {
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
    let want: Vec<u8> = match f {
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
        Fact::Absent(_) => unreachable!("handled above"),
    };
    if got == want.as_slice() {
        Ok(())
    } else {
        Err(format!("{}; expected {}", show(got), show(&want)))
    }
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
    let pairs: Vec<(&[u8], &[u8])> = ids
        .iter()
        .zip(&payloads)
        .map(|(i, p)| (i.as_slice(), p.as_slice()))
        .collect();
    binary::write_to_vec(&pairs, align).map_err(|e| format!("expected bundle: {e}"))
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
