//! Differential random mode: valid bundles with random IDs (from a pool of
//! valid targets), payloads and alignment; every implementation lists and
//! unbundles them, and bundles the same inputs when the targets allow it. A disagreement with the spec expectation is shrunk and
//! written as a corpus-format reproducer with its inputs and command.
//!
//! # Example
//!
//! Random samples are reproducible, valid cases over valid bundles.
//!
//! ```
//! use offload_kit_llvm::bundle::binary::{parse_strict, Extent};
//! use offload_kit_conformance::case::Op;
//! use offload_kit_conformance::random::{sample, Rng};
//!
//! assert_eq!(Rng::new(42).next_u64(), Rng::new(42).next_u64());
//! let cases = sample(42, 0);
//! assert_eq!(cases, sample(42, 0)); // same seed, same cases
//! let ops: Vec<Op> = cases.iter().map(|c| c.op).collect();
//! assert_eq!(ops[..2], [Op::List, Op::Unbundle]); // then a bundle case when the targets allow one
//! assert!(cases.iter().all(|c| c.check().is_ok()));
//! let bytes = cases[0].inputs["bundle"].build(None).unwrap().unwrap();
//! assert!(parse_strict(&bytes, 0, Extent::Standalone).is_ok());
//! ```

use super::adapter::{Adapter, Role};
use super::case::{Args, BundleExpect, Case, Expect, Fact, KnownDivergence, NoteOutcome, Op};
use super::codec::encode_hex;
use super::judge::{run_case_in, RunContext, Status, Verdict};
use super::recipe::{BundleRecipe, Data, EntryRecipe, IdSpec, InputSpec};
use super::run_matrix;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::generate::Rng;

/// Valid device targets, each with the processor it uses: a bundle holds at
/// most one target per processor, so no request can match two entries and
/// no composition conflict (COMPOSE-1) arises.
pub const DEVICE_POOL: &[(&str, &str)] = &[
    ("hip-amdgcn-amd-amdhsa--gfx906", "gfx906"),
    ("hip-amdgcn-amd-amdhsa--gfx908:xnack+", "gfx908"),
    ("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+", "gfx90a"),
    ("hip-amdgcn-amd-amdhsa--gfx1030", "gfx1030"),
    ("hip-amdgcn-amd-amdhsa--gfx1100", "gfx1100"),
    ("openmp-amdgcn-amd-amdhsa--gfx942", "gfx942"),
    ("openmp-amdgcn-amd-amdhsa--gfx906", "gfx906"),
    ("openmp-nvptx64-nvidia-cuda--sm_70", "sm_70"),
    ("openmp-nvptx64-nvidia-cuda--sm_80", "sm_80"),
    ("hip-spirv64-amd-amdhsa--amdgcnspirv", "amdgcnspirv"),
    ("openmp-x86_64-pc-linux-gnu", "x86_64"),
];

/// Host targets.
pub const HOST_POOL: &[&str] = &[
    "host-x86_64-unknown-linux-gnu",
    "host-aarch64-unknown-linux-gnu",
    "host-powerpc64le-unknown-linux-gnu",
];

const ALIGNS: &[u64] = &[1, 1, 1, 2, 3, 4, 7, 8, 16, 64, 4096];

fn payload(rng: &mut Rng) -> Vec<u8> {
    let len = match rng.below(4) {
        0 => 0,
        1 => rng.below(8),
        _ => rng.below(300),
    };
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// The two cases (list, unbundle) of random sample `n`.
pub fn sample(seed: u64, n: usize) -> Vec<Case> {
    let mut rng = Rng::new(seed ^ (n as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let mut targets: Vec<String> = Vec::new();
    if rng.chance(80) {
        targets.push(HOST_POOL[rng.below(HOST_POOL.len())].to_string());
    }
    let want = 1 + rng.below(5);
    let mut used = Vec::new();
    for _ in 0..want * 3 {
        if targets.len()
            >= want + usize::from(targets.first().is_some_and(|t| t.starts_with("host-")))
        {
            break;
        }
        let (t, p) = DEVICE_POOL[rng.below(DEVICE_POOL.len())];
        if !used.contains(&p) {
            used.push(p);
            targets.push(t.to_string());
        }
    }
    // Shuffle (entries keep no particular order; the host need not be first).
    for i in (1..targets.len()).rev() {
        let j = rng.below(i + 1);
        targets.swap(i, j);
    }
    let payloads: Vec<Vec<u8>> = targets.iter().map(|_| payload(&mut rng)).collect();
    let align = ALIGNS[rng.below(ALIGNS.len())];
    let entries = targets
        .iter()
        .zip(&payloads)
        .map(|(t, p)| {
            let id = IdSpec::Written { written: t.clone() };
            EntryRecipe::new(id, Data::Hex(encode_hex(p)))
        })
        .collect();
    let recipe = BundleRecipe::plain(entries, align);
    let mut inputs = BTreeMap::new();
    inputs.insert("bundle".to_string(), InputSpec::Bundle(recipe));
    let list = Case {
        id: format!("random/{seed}/{n}/list"),
        path: Default::default(),
        schema: None,
        title: format!("random sample {n} of seed {seed}: list"),
        source: Some(format!("offload-kit conformance --random --seed {seed}")),
        rules: vec!["BIN-11".into(), "BIN-12".into()],
        inputs: inputs.clone(),
        op: Op::List,
        args: Args {
            file_type: "bc".into(),
            inputs: vec!["bundle".into()],
            ..Args::default()
        },
        expect: Expect {
            list: Some(
                targets
                    .iter()
                    .map(|t| IdSpec::Written { written: t.clone() })
                    .collect(),
            ),
            ..Expect::default()
        },
        known_divergence: vec![],
        known_bugs: vec![],
        timeout_seconds: None,
    };
    // Request a random non-empty subset in random order, sometimes plus a
    // device target that is absent (then with -allow-missing-bundles).
    let mut idx: Vec<usize> = (0..targets.len()).filter(|_| rng.chance(70)).collect();
    if idx.is_empty() {
        idx.push(rng.below(targets.len()));
    }
    for i in (1..idx.len()).rev() {
        let j = rng.below(i + 1);
        idx.swap(i, j);
    }
    let mut req: Vec<String> = idx.iter().map(|&i| targets[i].clone()).collect();
    let mut facts: Vec<Fact> = idx
        .iter()
        .map(|&i| Fact::Hex(encode_hex(&payloads[i])))
        .collect();
    let mut allow_missing = false;
    if rng.chance(25) {
        if let Some((t, _)) = DEVICE_POOL.iter().find(|(_, p)| !used.contains(p)) {
            let at = rng.below(req.len() + 1);
            req.insert(at, t.to_string());
            facts.insert(at, Fact::Utf8(String::new()));
            allow_missing = true;
        }
    }
    let unbundle = Case {
        id: format!("random/{seed}/{n}/unbundle"),
        title: format!("random sample {n} of seed {seed}: unbundle"),
        rules: vec!["CLI-2".into(), "CLI-4".into(), "BIN-11".into()],
        op: Op::Unbundle,
        args: Args {
            file_type: "bc".into(),
            targets: req,
            inputs: vec!["bundle".into()],
            allow_missing_bundles: allow_missing,
            ..Args::default()
        },
        expect: Expect {
            outputs: Some(facts),
            ..Expect::default()
        },
        ..list.clone()
    };
    let mut out = vec![list, unbundle];
    // Bundling the same inputs, when the targets form a valid -targets list
    // (one host, or HIP only).
    let hosts = targets.iter().filter(|t| t.starts_with("host-")).count();
    let hip_only = targets
        .iter()
        .all(|t| t.starts_with("hip-") || t.starts_with("hipv4-"));
    if hosts == 1 || (hosts == 0 && hip_only) {
        let mut inputs = BTreeMap::new();
        let names: Vec<String> = (0..targets.len()).map(|i| format!("p{i}")).collect();
        for (n, p) in names.iter().zip(&payloads) {
            inputs.insert(n.clone(), InputSpec::Hex(encode_hex(p)));
        }
        out.push(Case {
            id: format!("random/{seed}/{n}/bundle"),
            title: format!("random sample {n} of seed {seed}: bundle"),
            rules: vec!["BIN-11".into(), "CLI-1".into()],
            inputs,
            op: Op::Bundle,
            args: Args {
                file_type: "bc".into(),
                targets: targets.clone(),
                inputs: names,
                bundle_align: (align != 1).then_some(align),
                ..Args::default()
            },
            expect: Expect {
                bundle: Some(BundleExpect::default()),
                ..Expect::default()
            },
            known_divergence: empty_last_padding(&payloads, align),
            ..out[0].clone()
        });
    }
    out
}

/// LLVM 13 to 16 do not write the padding before an empty last payload
/// (corpus case `bundle/align-empty-last-entry`; their profiles reproduce
/// the bytes): documented, so random bundles that hit it are not reported as new.
fn empty_last_padding(payloads: &[Vec<u8>], align: u64) -> Vec<KnownDivergence> {
    if align > 1 && payloads.last().is_some_and(Vec::is_empty) {
        vec![KnownDivergence {
            releases: vec![
                crate::Release::L13,
                crate::Release::L14,
                crate::Release::L15,
                crate::Release::L16,
            ],
            adapters: vec![],
            rule: "BIN-5".into(),
            outcome: NoteOutcome::Word("success".into()),
            profile: true,
            note: "13 to 16 do not write the padding before an empty last payload (bundle/align-empty-last-entry)".into(),
            reference: None,
        }]
    } else {
        vec![]
    }
}

fn fails_same(case: &Case, a: &Adapter, rc: &RunContext, status: Status) -> Option<Verdict> {
    let dir = tempfile::tempdir().ok()?;
    let v = run_case_in(case, a, rc, dir.path());
    (v.status == status).then_some(v)
}

/// Smaller variants of a random case: one entry fewer, shorter payloads, alignment 1.
fn shrink_steps(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    if c.op == Op::Bundle {
        for i in 0..c.args.targets.len() {
            if c.args.targets.len() > 1 {
                let mut n = c.clone();
                n.args.targets.remove(i);
                let name = n.args.inputs.remove(i);
                n.inputs.remove(&name);
                out.push(n);
            }
        }
        if c.args.bundle_align.is_some() {
            let mut n = c.clone();
            n.args.bundle_align = None;
            out.push(n);
        }
        for (name, spec) in &c.inputs {
            if let InputSpec::Hex(h) = spec {
                if h.len() > 2 {
                    let mut n = c.clone();
                    n.inputs
                        .insert(name.clone(), InputSpec::Hex(h[..2].to_string()));
                    out.push(n);
                }
            }
        }
        return out;
    }
    let Some(InputSpec::Bundle(r)) = c.inputs.get("bundle") else {
        return out;
    };
    let with = |r: BundleRecipe, args: Args, expect: Expect| {
        let mut n = c.clone();
        n.inputs.insert("bundle".into(), InputSpec::Bundle(r));
        n.args = args;
        n.expect = expect;
        n
    };
    for i in 0..r.entries.len() {
        if r.entries.len() == 1 {
            break;
        }
        let mut r2 = r.clone();
        let removed = r2.entries.remove(i);
        let IdSpec::Written { written } = &removed.id else {
            continue;
        };
        let mut args = c.args.clone();
        let mut expect = c.expect.clone();
        if let Some(l) = &mut expect.list {
            l.retain(|x| x != &removed.id);
        }
        if let Some(pos) = args.targets.iter().position(|t| t == written) {
            if args.targets.len() == 1 {
                continue;
            }
            args.targets.remove(pos);
            if let Some(f) = &mut expect.outputs {
                f.remove(pos);
            }
        }
        out.push(with(r2, args, expect));
    }
    if r.align != 1 {
        let mut r2 = r.clone();
        r2.align = 1;
        out.push(with(r2, c.args.clone(), c.expect.clone()));
    }
    for i in 0..r.entries.len() {
        let Data::Hex(h) = &r.entries[i].payload else {
            continue;
        };
        if h.len() > 2 {
            let short = h[..2].to_string();
            let mut r2 = r.clone();
            r2.entries[i].payload = Data::Hex(short.clone());
            let mut expect = c.expect.clone();
            if let (Some(f), IdSpec::Written { written }) = (&mut expect.outputs, &r.entries[i].id)
            {
                if let Some(pos) = c.args.targets.iter().position(|t| t == written) {
                    f[pos] = Fact::Hex(short);
                }
            }
            out.push(with(r2, c.args.clone(), expect));
        }
    }
    out
}

/// Shrink `case` while `a` still gives `status` and `good` (an
/// implementation that passed the original case, if any) still passes, so
/// that the smaller case shows the same disagreement.
pub fn shrink(
    case: &Case,
    a: &Adapter,
    good: Option<&Adapter>,
    rc: &RunContext,
    status: Status,
) -> (Case, Option<Verdict>) {
    let mut cur = case.clone();
    let mut last = None;
    for _ in 0..64 {
        let mut progressed = false;
        for cand in shrink_steps(&cur) {
            if let Some(g) = good {
                if fails_same(&cand, g, rc, Status::Pass).is_none() {
                    continue;
                }
            }
            if let Some(v) = fails_same(&cand, a, rc, status) {
                cur = cand;
                last = Some(v);
                progressed = true;
                break;
            }
        }
        if !progressed {
            break;
        }
    }
    (cur, last)
}

fn write_repro(
    dir: &Path,
    case: &Case,
    a: &Adapter,
    v: &Verdict,
) -> std::io::Result<std::path::PathBuf> {
    let name = format!("{}-{}", case.id.replace('/', "-"), a.name);
    let d = dir.join(&name);
    // Never through a link planted in the directory (CLI-5).
    let put = |file: &str, bytes: &[u8]| {
        offload_kit_io::output::write_in_dir(dir, &format!("{name}/{file}"), bytes)
            .map_err(|e| std::io::Error::other(e.to_string()))
    };
    let json = serde_json::to_string_pretty(case).expect("serialisable");
    put("case.json", (json + "\n").as_bytes())?;
    for (input, spec) in &case.inputs {
        if let Ok(Some(b)) = spec.build(a.release) {
            put(&format!("{input}.bin"), &b)?;
        }
    }
    let mut readme = format!(
        "# {} on {}\n\nstatus: {}\ndetail: {}\nobserved: {}\n\ncommand (inputs were in a scratch directory; they are the *.bin files here):\n",
        case.id,
        a.name,
        v.status.label(),
        v.detail,
        v.observed,
    );
    for c in &v.commands {
        readme.push_str(&format!("  {c}\n"));
    }
    readme.push_str(
        "\nTo keep it as a corpus case: copy case.json under conformance/corpus/ and document or fix the divergence.\n",
    );
    put("README.txt", readme.as_bytes())?;
    Ok(d)
}

/// Options of a differential random run.
#[derive(Debug, Clone)]
pub struct RandomOptions {
    /// How many random bundles to draw.
    pub samples: usize,
    /// The seed of the draw.
    pub seed: u64,
    /// Parallel runs.
    pub jobs: usize,
    /// Where minimal reproducers are written.
    pub repro_dir: PathBuf,
    /// Whether disagreements of reference implementations (LLVM) are
    /// reported without failing the run.
    pub allow_new_reference: bool,
}

/// A minimal reproducer of a disagreement, for one implementation.
#[derive(Debug, Clone)]
pub struct Reproducer {
    /// The implementation (adapter) name.
    pub implementation: String,
    /// The shrunk case's verdict detail.
    pub detail: String,
    /// The directory it was written to, or why it could not be written.
    pub written: Result<PathBuf, String>,
}

/// A sample on which some implementation shows a new divergence.
#[derive(Debug, Clone)]
pub struct Disagreement {
    /// The sample's case ID.
    pub case: String,
    /// The verdict of every implementation, in adapter order.
    pub row: Vec<Verdict>,
    /// A reproducer per diverging implementation.
    pub reproducers: Vec<Reproducer>,
}

impl fmt::Display for Disagreement {
    /// The lines printed for a disagreement (each ends with a newline).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "DISAGREEMENT {}:", self.case)?;
        for v in &self.row {
            writeln!(
                f,
                "  {:<22} {:<8} {}",
                v.implementation,
                v.cell(),
                v.observed
            )?;
        }
        for r in &self.reproducers {
            match &r.written {
                Ok(d) => writeln!(
                    f,
                    "  {}: {} — minimal reproducer in {}",
                    r.implementation,
                    r.detail,
                    d.display()
                )?,
                Err(e) => writeln!(
                    f,
                    "  {}: {} (cannot write reproducer: {e})",
                    r.implementation, r.detail
                )?,
            }
        }
        Ok(())
    }
}

/// The result of a differential random run.
#[derive(Debug, Clone)]
pub struct RandomReport {
    /// The options' sample count.
    pub samples: usize,
    /// The options' seed.
    pub seed: u64,
    /// The cases the samples made (list, unbundle, bundle).
    pub cases: usize,
    /// The implementations run, in order.
    pub implementations: Vec<String>,
    /// The disagreements, in sample order.
    pub disagreements: Vec<Disagreement>,
    /// How many results are documented divergences.
    pub documented: usize,
    /// How many results fail the run.
    pub failing: usize,
    /// Wall time, seconds (shrinking included).
    pub seconds: f64,
}

impl RandomReport {
    /// The exit status: 1 when a result fails the run, else 0.
    pub fn exit_status(&self) -> i32 {
        i32::from(self.failing > 0)
    }

    /// The closing lines (each ends with a newline).
    pub fn summary(&self) -> String {
        let mut s = String::new();
        if self.documented > 0 {
            s.push_str(&format!(
                "{} result(s) are documented divergences (bundle/align-empty-last-entry)\n",
                self.documented
            ));
        }
        s.push_str(&format!(
            "random: {} bundles (seed {}), {} list/unbundle/bundle cases on [{}]: {} disagreement(s) in {:.1} s\n",
            self.samples,
            self.seed,
            self.cases,
            self.implementations.join(", "),
            self.disagreements.len(),
            self.seconds
        ));
        s
    }
}

/// Run `opts.samples` random samples on `adapters`; each disagreement is
/// shrunk, its reproducers written, and then handed to `on_disagreement`
/// as it is found.
pub fn run(
    opts: &RandomOptions,
    adapters: &[Adapter],
    rc: &RunContext,
    on_disagreement: &mut dyn FnMut(&Disagreement),
) -> RandomReport {
    let cases: Vec<Case> = (0..opts.samples)
        .flat_map(|i| sample(opts.seed, i))
        .collect();
    let start = std::time::Instant::now();
    let verdicts = run_matrix(&cases, adapters, rc, opts.jobs);
    let mut disagreements = Vec::new();
    let mut failing = 0;
    for (ci, c) in cases.iter().enumerate() {
        let row = &verdicts[ci * adapters.len()..(ci + 1) * adapters.len()];
        let bad: Vec<(usize, &Verdict)> = row
            .iter()
            .enumerate()
            .filter(|(_, v)| v.status.is_new())
            .collect();
        if bad.is_empty() {
            continue;
        }
        let good = row
            .iter()
            .enumerate()
            .filter(|(_, v)| v.status == Status::Pass)
            .map(|(i, _)| &adapters[i])
            .min_by_key(|a| a.role != Role::Subject);
        let mut reproducers = Vec::new();
        for (ai, v) in bad {
            let a = &adapters[ai];
            if a.role == Role::Subject || !opts.allow_new_reference {
                failing += 1;
            }
            let (small, sv) = shrink(c, a, good, rc, v.status);
            let sv = sv.unwrap_or_else(|| v.clone());
            reproducers.push(Reproducer {
                implementation: a.name.clone(),
                written: write_repro(&opts.repro_dir, &small, a, &sv).map_err(|e| e.to_string()),
                detail: sv.detail,
            });
        }
        let d = Disagreement {
            case: c.id.clone(),
            row: row.to_vec(),
            reproducers,
        };
        on_disagreement(&d);
        disagreements.push(d);
    }
    let documented = verdicts
        .iter()
        .filter(|v| v.status == Status::Documented)
        .count();
    RandomReport {
        samples: opts.samples,
        seed: opts.seed,
        cases: cases.len(),
        implementations: adapters.iter().map(|a| a.name.clone()).collect(),
        disagreements,
        documented,
        failing,
        seconds: start.elapsed().as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_deterministic_and_valid() {
        for i in 0..50 {
            let a = sample(7, i);
            assert_eq!(a, sample(7, i));
            for c in &a {
                c.check().unwrap();
                if c.op == Op::Bundle {
                    assert_eq!(c.args.inputs.len(), c.args.targets.len());
                    continue;
                }
                let Some(InputSpec::Bundle(r)) = c.inputs.get("bundle") else {
                    panic!("{} has no bundle input", c.id)
                };
                let b = r.build(None).unwrap();
                crate::bundle::binary::parse_strict(
                    &b,
                    0,
                    crate::bundle::binary::Extent::Standalone,
                )
                .unwrap();
            }
        }
    }
}
