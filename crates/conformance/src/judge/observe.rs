//! What a run did, classified: success with the facts the case compares
//! (outputs, listing, written ID, compatibility), failure with the rules
//! the error names, crash (including memory disclosure), or time-out.

use super::{Ctx, COMPAT_PAYLOAD};
use crate::adapter::DecompressResult;
use crate::bundle::{binary, ccob};
use crate::case::Op;
use crate::exec::{self, Exit};
use std::path::PathBuf;

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
    /// `locate`: the code objects reported.
    pub located: Option<Vec<crate::adapter::Found>>,
    /// `lookup`: per request, the `(offset, size)` answered (size 0: none).
    pub answers: Option<Vec<(String, u64, u64)>>,
    /// `kpack-lookup`: per request, the answer line.
    pub kpack_answers: Option<Vec<(String, String)>>,
}

impl Observation {
    /// One-line summary.
    pub fn summary(&self) -> String {
        match self {
            Observation::Success(f) => {
                if let Some(a) = &f.answers {
                    let a: Vec<String> = a
                        .iter()
                        .map(|(r, o, s)| format!("{r} → @{o}+{s}"))
                        .collect();
                    format!("success, answers [{}]", a.join(", "))
                } else if let Some(l) = &f.located {
                    let l: Vec<String> = l.iter().map(ToString::to_string).collect();
                    format!("success, found [{}]", l.join(", "))
                } else if let Some(l) = &f.listing {
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

/// Classify the run `res` of `ctx`, whose outputs are `outputs`
/// (`program` is replaced by `<prog>` in messages); `Err` when the
/// program could not be started.
pub(super) fn observe(
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
    let mut outs: Vec<Option<Vec<u8>>> = outputs.iter().map(|p| std::fs::read(p).ok()).collect();
    // An extraction printed to stdout (`roc-obj-extract -o -`) is output 0.
    if ctx.op == Op::ExtractUri && code == 0 && ctx.adapter.prints_output(ctx.op) {
        outs = vec![Some(res.stdout.clone())];
    }
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
        Op::Locate => facts.located = Some(ctx.adapter.parse_located(&res.stdout)?),
        Op::Lookup => facts.answers = Some(ctx.adapter.parse_lookup(&res.stdout)?),
        Op::KpackLookup => facts.kpack_answers = Some(parse_kpack_answers(&res.stdout)?),
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
        | Op::ObjdumpOffloading
        | Op::ExtractUri => {}
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
            ccob::decode_into(&h, payload, h.header_size, &mut sink).ok()
        })
        .map_or(0, |n| n as usize)
}

/// The answers of a `kpack-lookup` run: one `REQUEST\tANSWER` line per
/// request.
fn parse_kpack_answers(stdout: &[u8]) -> Result<Vec<(String, String)>, String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| match l.split_once('\t') {
            Some((r, a)) => Ok((r.to_string(), a.to_string())),
            None => Err(format!("kpack-lookup line '{l}' is not REQUEST\tANSWER")),
        })
        .collect()
}
