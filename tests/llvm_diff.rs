//! Differential tests: the drop-in bundler (`offload-kit bundler
//! --llvm-version=N`) against the real `clang-offload-bundler` of LLVM 14,
//! 16, 19 and 22 (`/usr/lib/llvm-N/bin`, installed by `tools/setup`).
//!
//! Each test runs the same command line through both programs, in two
//! sibling directories holding the same input files, and compares what its
//! doc comment says (output bytes, `-list` lines, exit status, the first
//! stderr line with the program names removed). Every test collects all
//! mismatches and asserts once at the end, so one run shows everything.
//!
//! A missing LLVM fails the tests ("LLVM N not installed: run tools/setup");
//! set `OFFLOAD_KIT_NO_LLVM=1` to skip the releases that are not installed.
//!
//! Where the reference crashes (killed by a signal), offload-kit must exit 1
//! with an error that names a rule (`rule BIN-2`) and must not panic.

mod common;

use common::{case_dirs, strings as s, write_both, Out};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const RELEASES: [u32; 6] = [13, 14, 15, 16, 19, 22];
const KIT: &str = env!("CARGO_BIN_EXE_offload-kit");
const MALFORMED_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/malformed");
/// In `MALFORMED_DIR` but not a `-list` input here: `-list` decodes only its
/// CCOB header, where LLVM 19/22 decompress it and fail (the documented
/// difference of spec/ccob.md, "Listing a compressed bundle", checked by
/// `tests/ccob.rs`).
const LIST_DIFFERS: &str = "ccob_v2_damaged_payload.bin";
/// Worker threads per test (the work is spawning processes).
const WORKERS: usize = 4;
/// No reference run takes more than a second; a hang is a failure.
const TIMEOUT: Duration = Duration::from_secs(60);

const HOST: &str = "host-x86_64-unknown-linux-gnu";
const GFX906: &str = "hip-amdgcn-amd-amdhsa--gfx906";
const GFX90A_XNACK: &str = "hip-amdgcn-amd-amdhsa--gfx90a:xnack+";
const V4_GFX90A_XNACK: &str = "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+";
const SM70: &str = "openmp-nvptx64-nvidia-cuda--sm_70";
const OMP_GFX908: &str = "openmp-amdgcn-amd-amdhsa--gfx908";

// ---------------------------------------------------------------------------
// Locating LLVM

/// The real `clang-offload-bundler` of release `n`; panics when it is
/// missing unless `OFFLOAD_KIT_NO_LLVM=1`.
fn llvm(n: u32) -> PathBuf {
    common::llvm_path(n, "clang-offload-bundler")
}

/// The releases to compare against: all four, except (only with
/// `OFFLOAD_KIT_NO_LLVM=1`) those not installed, which are named on stderr.
fn releases() -> Vec<u32> {
    RELEASES
        .into_iter()
        .filter(|&n| {
            if llvm(n).is_file() {
                true
            } else {
                eprintln!("llvm_diff: SKIPPING LLVM {n}: not installed (OFFLOAD_KIT_NO_LLVM=1)");
                false
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Running programs

fn exec(cmd: Command, dir: &Path) -> Out {
    common::exec(cmd, dir, TIMEOUT)
}

fn run_llvm(n: u32, dir: &Path, args: &[String]) -> Out {
    let mut c = Command::new(llvm(n));
    // Crashes are expected; symbolising their stack traces costs 0.1 s each.
    c.args(args).env("LLVM_DISABLE_SYMBOLIZATION", "1");
    exec(c, dir)
}

fn run_kit(n: u32, dir: &Path, args: &[String]) -> Out {
    let mut c = Command::new(KIT);
    c.arg("bundler")
        .arg(format!("--llvm-version={n}"))
        .args(args);
    exec(c, dir)
}

/// `-inputs=a,b -outputs=o` (14, or `legacy`) or `-input=a -input=b -output=o`.
fn io_args(n: u32, legacy: bool, inputs: &[&str], outputs: &[&str]) -> Vec<String> {
    let mut a = Vec::new();
    if n <= 14 || legacy {
        if !inputs.is_empty() {
            a.push(format!("-inputs={}", inputs.join(",")));
        }
        if !outputs.is_empty() {
            a.push(format!("-outputs={}", outputs.join(",")));
        }
    } else {
        a.extend(inputs.iter().map(|i| format!("-input={i}")));
        a.extend(outputs.iter().map(|o| format!("-output={o}")));
    }
    a
}

/// A bundler command line: `flags`, `-targets=` the `targets` (none when
/// empty), then the inputs and outputs as release `n` spells them.
fn cmd(n: u32, flags: &[&str], targets: &[&str], inputs: &[&str], outputs: &[&str]) -> Vec<String> {
    let mut a = s(flags);
    if !targets.is_empty() {
        a.push(format!("-targets={}", targets.join(",")));
    }
    a.extend(io_args(n, false, inputs, outputs));
    a
}

// ---------------------------------------------------------------------------
// Comparing

/// Stderr lines with the program names removed: LLVM's `<argv0>: ` (and the
/// argv0 path inside `Try: '<argv0> --help'`), offload-kit's
/// `offload-kit bundler: `, and offload-kit's trailing ` [detail (rule X)]`.
fn norm_stderr(n: u32, text: &str) -> Vec<String> {
    let path = llvm(n).display().to_string();
    text.lines()
        // offload-kit's own warnings (e.g. a 14/16 bundle whose empty last
        // entry lies past the end of the file) are extra lines LLVM lacks.
        .filter(|l| !l.starts_with("offload-kit: warning:"))
        .map(|l| {
            let l = l.replace(&path, "clang-offload-bundler");
            let mut l = l
                .strip_prefix("offload-kit bundler: ")
                .or_else(|| l.strip_prefix("clang-offload-bundler: "))
                .unwrap_or(&l)
                .to_string();
            if l.ends_with(']') {
                if let Some(i) = l.find(" [") {
                    l.truncate(i);
                }
            }
            l
        })
        .collect()
}

fn first_line(n: u32, text: &str) -> String {
    norm_stderr(n, text).into_iter().next().unwrap_or_default()
}

/// Whether `s` contains `rule [A-Z]+-[0-9]+`.
fn mentions_rule(s: &str) -> bool {
    s.match_indices("rule ").any(|(i, _)| {
        let rest = &s.as_bytes()[i + 5..];
        let letters = rest.iter().take_while(|b| b.is_ascii_uppercase()).count();
        letters > 0
            && rest.get(letters) == Some(&b'-')
            && rest.get(letters + 1).is_some_and(u8::is_ascii_digit)
    })
}

/// The reference crashed: offload-kit must report an error citing a rule,
/// exit 1, and not panic.
fn expect_reported_crash(label: &str, l: &Out, k: &Out, m: &mut Vec<String>) {
    if k.code != Some(1) || !mentions_rule(&k.stderr) || k.panicked() {
        m.push(format!(
            "{label}: LLVM crashed ({}); offload-kit must exit 1 with `rule X-N` in its error, got {} stderr {:?} stdout {:?}",
            l.status(),
            k.status(),
            k.stderr.trim_end(),
            k.stdout_text()
        ));
    }
}

fn check_no_panic(label: &str, k: &Out, m: &mut Vec<String>) -> bool {
    if k.panicked() {
        m.push(format!(
            "{label}: offload-kit PANICKED ({}): {}",
            k.status(),
            k.stderr
                .trim()
                .lines()
                .take(3)
                .collect::<Vec<_>>()
                .join(" | ")
        ));
        return false;
    }
    true
}

fn describe_bytes_diff(a: &[u8], b: &[u8]) -> String {
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let show = |v: &[u8]| -> String {
        v[at.min(v.len())..(at + 16).min(v.len())]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    format!(
        "LLVM {} bytes, offload-kit {} bytes, first difference at 0x{at:x} (LLVM {} / offload-kit {})",
        a.len(),
        b.len(),
        show(a),
        show(b)
    )
}

/// The entry IDs of a binary bundle, in header order (no validation).
fn bundle_ids(b: &[u8]) -> Option<Vec<String>> {
    let u64_at =
        |p: usize| -> Option<u64> { Some(u64::from_le_bytes(b.get(p..p + 8)?.try_into().ok()?)) };
    if !b.starts_with(b"__CLANG_OFFLOAD_BUNDLE__") {
        return None;
    }
    let n = u64_at(24)?;
    let mut pos = 32usize;
    let mut ids = Vec::new();
    for _ in 0..n.min(4096) {
        let len = usize::try_from(u64_at(pos + 16)?).ok()?;
        pos += 24;
        ids.push(String::from_utf8_lossy(b.get(pos..pos.checked_add(len)?)?).into_owned());
        pos += len;
    }
    Some(ids)
}

/// Compare output file `name` in the two directories (both programs succeeded).
fn compare_file(label: &str, ldir: &Path, kdir: &Path, name: &str, m: &mut Vec<String>) {
    let l = std::fs::read(ldir.join(name)).ok();
    let k = std::fs::read(kdir.join(name)).ok();
    match (l, k) {
        (Some(l), Some(k)) if l != k => {
            let ids = match (bundle_ids(&l), bundle_ids(&k)) {
                (Some(a), Some(b)) if a != b => {
                    let i = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(0);
                    format!(
                        "; entry {i} ID: LLVM writes {:?}, offload-kit {:?}",
                        a.get(i),
                        b.get(i)
                    )
                }
                _ => String::new(),
            };
            m.push(format!(
                "{label}: output {name} differs: {}{ids}",
                describe_bytes_diff(&l, &k)
            ))
        }
        (Some(_), None) => m.push(format!("{label}: offload-kit did not write {name}")),
        (None, Some(_)) => m.push(format!("{label}: offload-kit wrote {name}, LLVM did not")),
        _ => {}
    }
}

/// Run `f` over `items` on [`WORKERS`] threads; results in item order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    common::par_map(WORKERS, items, f)
}

/// What the reference did over a test's runs (so a report shows the test
/// was not vacuous).
#[derive(Default)]
struct Tally {
    ok: AtomicUsize,
    failed: AtomicUsize,
    crashed: AtomicUsize,
}

impl Tally {
    fn note(&self, l: &Out) {
        let c = if l.ok() {
            &self.ok
        } else if l.crashed() {
            &self.crashed
        } else {
            &self.failed
        };
        c.fetch_add(1, Ordering::Relaxed);
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LLVM succeeded {} times, failed {}, crashed {}",
            self.ok.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
            self.crashed.load(Ordering::Relaxed)
        )
    }
}

fn report(test: &str, checked: usize, tally: &Tally, mismatches: &[String]) {
    if mismatches.is_empty() {
        eprintln!("{test}: {checked} comparisons with LLVM ({tally}), no difference");
        return;
    }
    const SHOW: usize = 120;
    let mut text = String::new();
    for (i, m) in mismatches.iter().take(SHOW).enumerate() {
        text.push_str(&format!("{:>4}. {m}\n", i + 1));
    }
    if mismatches.len() > SHOW {
        text.push_str(&format!("... and {} more\n", mismatches.len() - SHOW));
    }
    panic!(
        "{test}: {} of {checked} comparisons differ from LLVM ({tally}):\n{text}",
        mismatches.len()
    );
}

/// Deterministic payload bytes (never starting with an object-file magic).
fn payload(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if i == 0 {
                b'P'
            } else {
                x as u8
            }
        })
        .collect()
}

/// A binary bundle laid out as every release writes it (alignment 1), for
/// inputs LLVM cannot be made to write (duplicate IDs).
fn make_bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut header = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    header.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    let mut off = header.len() as u64 + entries.iter().map(|e| 24 + e.0.len() as u64).sum::<u64>();
    for (id, data) in entries {
        header.extend_from_slice(&off.to_le_bytes());
        header.extend_from_slice(&(data.len() as u64).to_le_bytes());
        header.extend_from_slice(&(id.len() as u64).to_le_bytes());
        header.extend_from_slice(id.as_bytes());
        off += data.len() as u64;
    }
    for (_, data) in entries {
        header.extend_from_slice(data);
    }
    header
}

fn id_vectors() -> Value {
    serde_json::from_str(include_str!("data/llvm-id-vectors.json")).expect("valid JSON")
}

/// Target lists used for bundling and listing.
fn core_lists() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("host+hip", vec![HOST, GFX906, GFX90A_XNACK]),
        ("host+openmp", vec![HOST, SM70]),
        ("hip-only", vec![GFX906, GFX90A_XNACK]),
        (
            "hipv4-only",
            vec![
                "hipv4-amdgcn-amd-amdhsa--gfx906",
                V4_GFX90A_XNACK,
                "hipv4-amdgcn-amd-amdhsa--gfx1030",
            ],
        ),
        ("single-hip", vec![GFX906]),
        ("host-last", vec![GFX906, SM70, HOST]),
        ("list-order", vec![SM70, V4_GFX90A_XNACK, HOST, GFX906]),
        (
            "many",
            vec![
                HOST,
                "hip-amdgcn-amd-amdhsa--gfx900",
                GFX906,
                "hip-amdgcn-amd-amdhsa--gfx908",
                GFX90A_XNACK,
                "hip-amdgcn-amd-amdhsa--gfx940",
                "hip-amdgcn-amd-amdhsa--gfx1010",
                "hip-amdgcn-amd-amdhsa--gfx1030",
                "hip-amdgcn-amd-amdhsa--gfx1100",
                SM70,
                "openmp-nvptx64-nvidia-cuda--sm_80",
                "openmp-nvptx64-nvidia-cuda--sm_90",
                OMP_GFX908,
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-:sramecc+",
            ],
        ),
    ]
}

/// Payload size patterns, cycled over the targets.
const SIZE_PATTERNS: [&[usize]; 3] = [&[0], &[5, 0, 17, 1], &[4097, 3, 0, 1000, 64]];

// ---------------------------------------------------------------------------
// 1. Bundling: byte identity

struct BundleCase {
    label: String,
    targets: Vec<String>,
    sizes: Vec<usize>,
    align: Option<u32>,
    file_type: &'static str,
    /// 16+: spell the files `-inputs=`/`-outputs=` (deprecated) instead.
    legacy: bool,
}

fn bundle_cases() -> Vec<BundleCase> {
    let mut cases = Vec::new();
    let aligns = [None, Some(1), Some(3), Some(7), Some(16), Some(4096)];
    for (li, (name, list)) in core_lists().into_iter().enumerate() {
        for (ai, align) in aligns.iter().enumerate() {
            let pat = SIZE_PATTERNS[(li + ai) % SIZE_PATTERNS.len()];
            let file_type = match ai {
                2 => "gch",
                3 => "ast",
                4 => "o",
                _ => "bc",
            };
            cases.push(BundleCase {
                label: format!("{name} align={align:?} sizes={pat:?} type={file_type}"),
                targets: list.iter().map(|t| t.to_string()).collect(),
                sizes: (0..list.len()).map(|i| pat[i % pat.len()]).collect(),
                align: *align,
                file_type,
                legacy: (li + ai) % 2 == 1,
            });
        }
    }
    // Processors some but not all releases know (llc -mcpu=help of 14, 16,
    // 19, 22, and the removed gfx940/gfx941): each release writes unknown
    // ones differently (19 appends '-', 22 drops them).
    let amd = [
        "gfx10-1-generic",
        "gfx10-3-generic",
        "gfx1036",
        "gfx11-generic",
        "gfx1100",
        "gfx1101",
        "gfx1102",
        "gfx1103",
        "gfx1150",
        "gfx1151",
        "gfx1152",
        "gfx1153",
        "gfx12-generic",
        "gfx1200",
        "gfx1201",
        "gfx1250",
        "gfx1251",
        "gfx9-4-generic",
        "gfx9-generic",
        "gfx940",
        "gfx941",
        "gfx942",
        "gfx950",
        "gfx90c",
        "gfx909",
        "gfx1013",
    ];
    let sm = [
        "sm_100", "sm_100a", "sm_100f", "sm_101", "sm_101a", "sm_101f", "sm_103", "sm_103a",
        "sm_103f", "sm_110", "sm_110a", "sm_110f", "sm_120", "sm_120a", "sm_120f", "sm_121",
        "sm_121a", "sm_121f", "sm_88", "sm_90a", "sm_87", "sm_89", "sm_90", "sm_86", "sm_72",
        "sm_20",
    ];
    for (a, c) in amd.iter().zip(sm.iter()) {
        cases.push(BundleCase {
            label: format!("processors {a} and {c}"),
            targets: vec![
                HOST.to_string(),
                format!("hip-amdgcn-amd-amdhsa--{a}"),
                format!("openmp-nvptx64-nvidia-cuda--{c}"),
            ],
            sizes: vec![1, 2, 3],
            align: None,
            file_type: "bc",
            legacy: false,
        });
    }
    // Architectures some but not all releases know (13-22), the versioned
    // ones included: unknown ones are refused with ID-3.
    let arches = [
        "spirv32",
        "spirv64",
        "spirv",
        "dxil",
        "loongarch32",
        "loongarch64",
        "xtensa",
        "le32",
        "le64",
        "csky",
        "m68k",
        "dxilv1.0",
        "dxilv1.8",
        "dxilv1.9",
        "dxilv1.10",
        "dxilv1",
        "spirv1.4",
        "spirv1.5",
        "spirv1.6",
        "spirv1.7",
    ];
    for a in arches {
        cases.push(BundleCase {
            label: format!("architecture {a}"),
            targets: vec![HOST.to_string(), format!("hip-{a}-amd-amdhsa--gfx906")],
            sizes: vec![1, 2],
            align: None,
            file_type: "bc",
            legacy: false,
        });
    }
    // Every spelling recorded in the ID vectors that some release accepts.
    for w in id_vectors()["written"].as_array().expect("written") {
        let accepted = RELEASES
            .iter()
            .any(|r| w[r.to_string().as_str()].get("id").is_some());
        if !accepted {
            continue;
        }
        let targets: Vec<String> = w["targets"]
            .as_str()
            .expect("targets")
            .split(',')
            .map(String::from)
            .collect();
        cases.push(BundleCase {
            label: format!("vector {}", w["targets"]),
            sizes: (0..targets.len()).map(|i| 3 + i).collect(),
            targets,
            align: None,
            file_type: "bc",
            legacy: false,
        });
    }
    cases
}

fn bundle_args(n: u32, c: &BundleCase) -> Vec<String> {
    let inputs: Vec<String> = (0..c.targets.len()).map(|i| format!("in{i}")).collect();
    let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let mut a = vec![
        format!("-type={}", c.file_type),
        format!("-targets={}", c.targets.join(",")),
    ];
    a.extend(io_args(n, c.legacy, &inputs, &["out"]));
    if let Some(al) = c.align {
        a.push(format!("-bundle-align={al}"));
    }
    a
}

/// Bundling `-type=bc` (and gch, ast, o with a non-object host): the same
/// exit status and, on success, the same output bytes and stderr lines; on
/// failure, the same first stderr line. Target lists in and out of order,
/// HIP-only, 14 entries, the spellings of `llvm-id-vectors.json`,
/// processors only some releases know; empty to 4 KiB payloads;
/// `-bundle-align` 1, 3, 7, 16, 4096.
#[test]
fn bundling_is_byte_identical() {
    let rels = releases();
    let tally = Tally::default();
    let cases = bundle_cases();
    let root = tempfile::tempdir().expect("tempdir");
    let work: Vec<(usize, u32)> = (0..cases.len())
        .flat_map(|i| rels.iter().map(move |&n| (i, n)))
        .collect();
    let results = par_map(&work, |&(i, n)| {
        let c = &cases[i];
        let label = format!("LLVM {n} bundle [{}]", c.label);
        let (ld, kd) = case_dirs(root.path(), &format!("c{i}-{n}"));
        for (j, &size) in c.sizes.iter().enumerate() {
            write_both(
                &ld,
                &kd,
                &format!("in{j}"),
                &payload((i * 31 + j) as u64, size),
            );
        }
        let args = bundle_args(n, c);
        let l = run_llvm(n, &ld, &args);
        tally.note(&l);
        let k = run_kit(n, &kd, &args);
        let mut m = Vec::new();
        if l.crashed() {
            expect_reported_crash(&label, &l, &k, &mut m);
            return m;
        }
        if !check_no_panic(&label, &k, &mut m) {
            return m;
        }
        let (ls, ks) = (norm_stderr(n, &l.stderr), norm_stderr(n, &k.stderr));
        // Undefined behaviour in the release (an empty optional dereferenced
        // in getConflictTargetIDCombination): whether it crashes depends on
        // the build and the machine (Debian's crashed on one machine and
        // ran on to exit 0 on another); offload-kit refuses with the rule
        // either way.
        let ub = ks
            .first()
            .is_some_and(|s| s.contains("undefined behaviour"));
        if ub && l.ok() && k.code == Some(1) {
            return m;
        }
        if l.code != k.code {
            m.push(format!(
                "{label}: LLVM {} {:?}, offload-kit {} {:?}",
                l.status(),
                ls,
                k.status(),
                ks
            ));
        } else if l.ok() {
            compare_file(&label, &ld, &kd, "out", &mut m);
            if ls != ks {
                m.push(format!(
                    "{label}: stderr differs: LLVM {ls:?}, offload-kit {ks:?}"
                ));
            }
        } else if ls.first() != ks.first() {
            m.push(format!(
                "{label}: both fail, first stderr line differs: LLVM {:?}, offload-kit {:?}",
                ls.first(),
                ks.first()
            ));
        }
        m
    });
    let m: Vec<String> = results.into_iter().flatten().collect();
    report("bundling_is_byte_identical", work.len(), &tally, &m);
}

// ---------------------------------------------------------------------------
// 2. -list

/// Variants of `good.bin` built here: cuts, patched counts, offsets and
/// sizes, duplicates, trailing data (the malformed bundles of
/// spec/binary-bundle.md, BIN-2 … BIN-10).
fn synthetic_malformed(good: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = Vec::new();
    for cut in [0usize, 8, 24, 28, 32, 40, 56, 80, 109, 139, 144, 153] {
        v.push((format!("good.bin[..{cut}]"), good[..cut].to_vec()));
    }
    let patch = |at: usize, bytes: [u8; 8]| {
        let mut g = good.to_vec();
        g[at..at + 8].copy_from_slice(&bytes);
        g
    };
    v.push(("N=0".into(), patch(0x18, 0u64.to_le_bytes())));
    v.push(("N=2^64-1".into(), patch(0x18, u64::MAX.to_le_bytes())));
    v.push(("first offset 0".into(), patch(0x20, 0u64.to_le_bytes())));
    v.push((
        "2nd offset past EOF".into(),
        patch(0x56, 1000u64.to_le_bytes()),
    ));
    v.push((
        "2nd size past EOF".into(),
        patch(0x5e, 1000u64.to_le_bytes()),
    ));
    v.push((
        "offsets into the header".into(),
        patch(0x56, 8u64.to_le_bytes()),
    ));
    let mut trailing = good.to_vec();
    trailing.extend_from_slice(b"trailing garbage");
    v.push(("trailing garbage".into(), trailing));
    let mut twice = good.to_vec();
    twice.extend_from_slice(good);
    v.push(("two bundles concatenated".into(), twice));
    v.push(("magic only".into(), good[..24].to_vec()));
    v.push((
        "duplicate IDs".into(),
        make_bundle(&[(GFX906, b"FIRST"), (HOST, b"H"), (GFX906, b"SECOND")]),
    ));
    v.push((
        "zero entries declared, data follows".into(),
        patch(0x18, 0u64.to_le_bytes()),
    ));
    v
}

fn malformed_inputs() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(MALFORMED_DIR)
        .unwrap_or_else(|e| panic!("{MALFORMED_DIR}: {e}"))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .filter(|p| p.file_name().is_some_and(|n| n != LIST_DIFFERS))
        .collect();
    files.sort();
    assert!(
        files.len() >= 10,
        "expected the malformed corpus in {MALFORMED_DIR}"
    );
    let mut v: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|p| {
            (
                p.file_name().expect("name").to_string_lossy().into_owned(),
                std::fs::read(p).expect("read"),
            )
        })
        .collect();
    let good = std::fs::read(Path::new(MALFORMED_DIR).join("good.bin")).expect("good.bin");
    v.extend(synthetic_malformed(&good));
    v
}

fn list_args(n: u32, file_type: &str, input: &str) -> Vec<String> {
    let mut a = vec![format!("-type={file_type}"), "-list".to_string()];
    a.extend(io_args(n, false, &[input], &[]));
    a
}

/// Compare one `-list` run pair; `m` collects differences.
fn compare_list(label: &str, n: u32, l: &Out, k: &Out, m: &mut Vec<String>) {
    if l.crashed() {
        expect_reported_crash(label, l, k, m);
        return;
    }
    if !check_no_panic(label, k, m) {
        return;
    }
    if l.code != k.code || l.stdout != k.stdout {
        m.push(format!(
            "{label}: LLVM {} lists {:?} (stderr {:?}); offload-kit {} lists {:?} (stderr {:?})",
            l.status(),
            l.stdout_text(),
            first_line(n, &l.stderr),
            k.status(),
            k.stdout_text(),
            first_line(n, &k.stderr)
        ));
    } else if !l.ok() && first_line(n, &l.stderr) != first_line(n, &k.stderr) {
        m.push(format!(
            "{label}: both fail, LLVM says {:?}, offload-kit {:?}",
            first_line(n, &l.stderr),
            first_line(n, &k.stderr)
        ));
    }
}

const EMPTY_LAST: &str = ", -bundle-align=16, empty last payload";

/// `-list`: identical stdout (line order included) and exit status, for
/// bundles written by each release read by each release, and for malformed
/// inputs; where LLVM crashes, offload-kit reports an error citing a rule.
#[test]
fn list_matches_llvm() {
    let rels = releases();
    let tally = Tally::default();
    let root = tempfile::tempdir().expect("tempdir");

    // Bundles written by each release (core lists and the spellings the
    // releases write differently), then listed by every release.
    let mut lists: Vec<(String, Vec<String>)> = core_lists()
        .into_iter()
        .map(|(n, l)| (n.to_string(), l.iter().map(|t| t.to_string()).collect()))
        .collect();
    for w in id_vectors()["written"].as_array().expect("written") {
        let ids: Vec<Option<&str>> = RELEASES
            .iter()
            .map(|r| w[r.to_string().as_str()]["id"].as_str())
            .collect();
        if ids.iter().flatten().count() >= 2 && ids.windows(2).any(|p| p[0] != p[1]) {
            lists.push((
                format!("vector {}", w["targets"]),
                w["targets"]
                    .as_str()
                    .expect("targets")
                    .split(',')
                    .map(String::from)
                    .collect(),
            ));
        }
        if lists.len() >= core_lists().len() + 8 {
            break;
        }
    }
    // 14 and 16 do not pad before an empty last payload, so the header
    // points past the end of their own file.
    lists.push((
        format!("host+hip{EMPTY_LAST}"),
        vec![HOST.into(), GFX906.into(), GFX90A_XNACK.into()],
    ));
    let writes: Vec<(usize, u32)> = (0..lists.len())
        .flat_map(|i| rels.iter().map(move |&w| (i, w)))
        .collect();
    let written: Vec<Option<PathBuf>> = par_map(&writes, |&(i, w)| {
        let dir = root.path().join(format!("w{i}-{w}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let targets = &lists[i].1;
        let empty_last = lists[i].0.ends_with(EMPTY_LAST);
        let mut inputs = Vec::new();
        for j in 0..targets.len() {
            let name = format!("in{j}");
            let size = if empty_last && j + 1 == targets.len() {
                0
            } else {
                2 + j
            };
            std::fs::write(dir.join(&name), payload((i * 7 + j) as u64, size)).expect("write");
            inputs.push(name);
        }
        let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let mut args = vec![
            "-type=bc".to_string(),
            format!("-targets={}", targets.join(",")),
        ];
        args.extend(io_args(w, false, &inputs, &["bundle.bc"]));
        if empty_last {
            args.push("-bundle-align=16".into());
        }
        // Bundling differences are test 1's business; unwritable lists are skipped here.
        run_llvm(w, &dir, &args).ok().then(|| dir.join("bundle.bc"))
    });

    // (label, file, type) × reader
    let mut inputs: Vec<(String, PathBuf, &'static str)> = Vec::new();
    for (&(i, w), f) in writes.iter().zip(&written) {
        if let Some(f) = f {
            inputs.push((format!("{} written by {w}", lists[i].0), f.clone(), "bc"));
            if i == 0 || i == 6 {
                inputs.push((format!("{} written by {w}", lists[i].0), f.clone(), "o"));
            }
        }
    }
    let mal_dir = root.path().join("malformed");
    std::fs::create_dir_all(&mal_dir).expect("mkdir");
    for (k, (name, bytes)) in malformed_inputs().into_iter().enumerate() {
        let p = mal_dir.join(format!("m{k}.bin"));
        std::fs::write(&p, bytes).expect("write");
        inputs.push((format!("malformed {name}"), p, "bc"));
    }
    let work: Vec<(usize, u32)> = (0..inputs.len())
        .flat_map(|i| rels.iter().map(move |&r| (i, r)))
        .collect();
    let results = par_map(&work, |&(i, r)| {
        let (name, file, ty) = &inputs[i];
        let label = format!("LLVM {r} -list -type={ty} [{name}]");
        let args = list_args(r, ty, &file.display().to_string());
        let l = run_llvm(r, root.path(), &args);
        tally.note(&l);
        let k = run_kit(r, root.path(), &args);
        let mut m = Vec::new();
        compare_list(&label, r, &l, &k, &mut m);
        m
    });
    let m: Vec<String> = results.into_iter().flatten().collect();
    report("list_matches_llvm", work.len(), &tally, &m);
}

// ---------------------------------------------------------------------------
// 3. Unbundling

struct UnbundleCase {
    label: String,
    reader: u32,
    input: PathBuf,
    targets: Vec<String>,
    allow_missing: bool,
    hip_openmp: bool,
}

/// Requests against the 5-entry bundle of `unbundling_matches_llvm` (host,
/// hip gfx906, hipv4 gfx90a:xnack+, openmp sm_70, openmp gfx908). `true`
/// marks the subset also run across releases.
fn requests() -> Vec<(bool, bool, Vec<&'static str>)> {
    // (cross-release, needs -hip-openmp-compatible, targets)
    vec![
        (true, false, vec![HOST]),
        (false, false, vec![GFX906]),
        (
            true,
            false,
            vec![HOST, GFX906, V4_GFX90A_XNACK, SM70, OMP_GFX908],
        ),
        (false, false, vec![GFX906, HOST]),
        (false, false, vec![OMP_GFX908]),
        (false, false, vec!["hipv4-amdgcn-amd-amdhsa--gfx906"]),
        (false, false, vec![GFX90A_XNACK]),
        (false, false, vec!["openmp-amdgcn-amd-amdhsa--gfx906"]),
        (false, true, vec!["openmp-amdgcn-amd-amdhsa--gfx906"]),
        (false, true, vec!["hip-nvptx64-nvidia-cuda--sm_70"]),
        (false, false, vec!["hip-amdgcn-amd-amdhsa--gfx90a"]),
        (false, false, vec!["hip-amdgcn-amd-amdhsa--gfx90a:xnack-"]),
        (
            false,
            false,
            vec!["hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc+"],
        ),
        (
            false,
            false,
            vec!["hip-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+"],
        ),
        (true, false, vec!["hip-amdgcn-amd-amdhsa-gfx906"]),
        (false, false, vec!["hip-amdgcn-amd-amdhsa-unknown-gfx906"]),
        (
            true,
            false,
            vec!["openmp-nvptx64-nvidia-cuda-unknown-sm_70"],
        ),
        (false, false, vec!["openmp-nvptx64-nvidia-cuda"]),
        (
            false,
            false,
            vec![
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc+",
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-",
            ],
        ),
        (
            false,
            false,
            vec![
                V4_GFX90A_XNACK,
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc+",
            ],
        ),
        (true, false, vec![HOST, "hip-amdgcn-amd-amdhsa--gfx1030"]),
        (
            false,
            false,
            vec![
                HOST,
                "hip-amdgcn-amd-amdhsa--gfx1030",
                "hip-amdgcn-amd-amdhsa--gfx1100",
            ],
        ),
        (
            false,
            false,
            vec![
                HOST,
                "hip-amdgcn-amd-amdhsa--gfx1030",
                "hip-amdgcn-amd-amdhsa--gfx1100",
                "openmp-nvptx64-nvidia-cuda--sm_80",
            ],
        ),
        (true, false, vec!["host-x86_64-unknown-linux-gnu-"]),
        (false, false, vec!["hip-amdgcn-amd-amdhsa--gfx1030"]),
    ]
}

fn unbundle_args(n: u32, c: &UnbundleCase) -> Vec<String> {
    let outputs: Vec<String> = (0..c.targets.len()).map(|i| format!("out{i}")).collect();
    let outputs: Vec<&str> = outputs.iter().map(String::as_str).collect();
    let mut a = vec![
        "-type=bc".to_string(),
        "-unbundle".to_string(),
        format!("-targets={}", c.targets.join(",")),
    ];
    a.extend(io_args(
        n,
        false,
        &[&c.input.display().to_string()],
        &outputs,
    ));
    if c.allow_missing {
        a.push("-allow-missing-bundles".into());
    }
    if c.hip_openmp {
        a.push("-hip-openmp-compatible".into());
    }
    a
}

/// Unbundling: the same status class (0 or not), identical outputs on
/// success, the same first stderr line on failure. Exact, compatible and
/// missing targets, with and without `-allow-missing-bundles`, across
/// writer/reader releases; non-bundle inputs (the host gets a copy);
/// malformed bundles (LLVM crashes: offload-kit reports a rule).
#[test]
fn unbundling_matches_llvm() {
    let rels = releases();
    let tally = Tally::default();
    let root = tempfile::tempdir().expect("tempdir");
    let full = [HOST, GFX906, V4_GFX90A_XNACK, SM70, OMP_GFX908];
    let hip_only = [GFX906, GFX90A_XNACK];
    // Write the bundles with each real release.
    let mut bundles: Vec<(String, u32, PathBuf)> = Vec::new(); // (kind, writer, path)
    for &w in &rels {
        for (kind, list) in [("full", &full[..]), ("hip-only", &hip_only[..])] {
            // Every release writes HIP-only bundles byte-identically:
            // one writer is enough.
            if kind == "hip-only" && w != *rels.last().expect("a release") {
                continue;
            }
            let dir = root.path().join(format!("{kind}-{w}"));
            std::fs::create_dir_all(&dir).expect("mkdir");
            let mut names = Vec::new();
            for (j, t) in list.iter().enumerate() {
                let name = format!("in{j}");
                // The last entry of the full bundle is empty.
                let data = if kind == "full" && j == 4 {
                    Vec::new()
                } else {
                    format!("payload of {t}\n").into_bytes()
                };
                std::fs::write(dir.join(&name), data).expect("write");
                names.push(name);
            }
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let mut args = vec![
                "-type=bc".to_string(),
                format!("-targets={}", list.join(",")),
            ];
            args.extend(io_args(w, false, &names, &["bundle.bc"]));
            let o = run_llvm(w, &dir, &args);
            assert!(
                o.ok(),
                "LLVM {w} cannot write the {kind} test bundle: {}",
                o.stderr
            );
            bundles.push((kind.to_string(), w, dir.join("bundle.bc")));
        }
    }
    let plain = root.path().join("plain.txt");
    std::fs::write(&plain, b"not a bundle at all\n").expect("write");
    let empty = root.path().join("empty");
    std::fs::write(&empty, b"").expect("write");
    let good = std::fs::read(Path::new(MALFORMED_DIR).join("good.bin")).expect("good.bin");
    let mut odd_inputs: Vec<(String, PathBuf)> = vec![
        ("non-bundle text".into(), plain),
        ("empty file".into(), empty),
    ];
    // The `synthetic_malformed` variants that exercise distinct reader paths.
    let keep = [
        "good.bin[..0]",
        "good.bin[..109]",
        "good.bin[..139]",
        "good.bin[..153]",
        "N=0",
        "N=2^64-1",
        "first offset 0",
        "2nd offset past EOF",
        "offsets into the header",
        "trailing garbage",
        "two bundles concatenated",
        "magic only",
        "duplicate IDs",
    ];
    for (k, (name, bytes)) in synthetic_malformed(&good)
        .into_iter()
        .filter(|(name, _)| keep.contains(&name.as_str()))
        .chain(
            [
                "trunc153.bin",
                "offsizewrap.bin",
                "idlen0.bin",
                "off0dev.bin",
            ]
            .iter()
            .map(|f| {
                (
                    f.to_string(),
                    std::fs::read(Path::new(MALFORMED_DIR).join(f)).expect("read"),
                )
            }),
        )
        .enumerate()
    {
        let p = root.path().join(format!("odd{k}.bin"));
        std::fs::write(&p, bytes).expect("write");
        odd_inputs.push((name, p));
    }

    let mut cases = Vec::new();
    for (kind, w, path) in &bundles {
        for &r in &rels {
            let reqs: Vec<(bool, Vec<&str>)> = if kind == "full" {
                requests()
                    .into_iter()
                    .filter(|(cross, _, _)| *cross || r == *w)
                    .map(|(_, h, t)| (h, t))
                    .collect()
            } else {
                vec![
                    (false, vec![HOST, GFX906]),
                    (false, vec![GFX906]),
                    (false, vec![GFX90A_XNACK, GFX906]),
                ]
            };
            for (hip_openmp, targets) in reqs {
                if hip_openmp && r <= 14 {
                    continue; // 14 has no such option (test 4 checks it).
                }
                for allow_missing in [false, true] {
                    cases.push(UnbundleCase {
                        label: format!(
                            "{kind} bundle written by {w}, read by {r}{}{}, targets {targets:?}",
                            if allow_missing {
                                ", -allow-missing-bundles"
                            } else {
                                ""
                            },
                            if hip_openmp {
                                ", -hip-openmp-compatible"
                            } else {
                                ""
                            },
                        ),
                        reader: r,
                        input: path.clone(),
                        targets: targets.iter().map(|t| t.to_string()).collect(),
                        allow_missing,
                        hip_openmp,
                    });
                }
            }
        }
    }
    for (oi, (name, path)) in odd_inputs.iter().enumerate() {
        let non_bundle = oi < 2;
        for &r in &rels {
            let host = if r >= 19 {
                "host-x86_64-unknown-linux-gnu-"
            } else {
                HOST
            };
            for (ti, targets) in [vec![host, GFX906], vec![GFX906]].into_iter().enumerate() {
                for allow_missing in [false, true] {
                    // Malformed bundles: host+device without the flag, the
                    // device alone with it.
                    if !non_bundle && allow_missing != (ti == 1) {
                        continue;
                    }
                    cases.push(UnbundleCase {
                        label: format!(
                            "{name}, read by {r}{}, targets {targets:?}",
                            if allow_missing {
                                ", -allow-missing-bundles"
                            } else {
                                ""
                            }
                        ),
                        reader: r,
                        input: path.clone(),
                        targets: targets.iter().map(|t| t.to_string()).collect(),
                        allow_missing,
                        hip_openmp: false,
                    });
                }
            }
        }
    }

    let idx: Vec<usize> = (0..cases.len()).collect();
    let results = par_map(&idx, |&i| {
        let c = &cases[i];
        let n = c.reader;
        let label = format!("unbundle [{}]", c.label);
        let (ld, kd) = case_dirs(root.path(), &format!("u{i}"));
        let args = unbundle_args(n, c);
        let l = run_llvm(n, &ld, &args);
        tally.note(&l);
        let k = run_kit(n, &kd, &args);
        let mut m = Vec::new();
        // offsizewrap: LLVM copies memory it does not own (C4): it counts as a crash.
        let reference_broken = l.crashed() || c.label.starts_with("offsizewrap.bin");
        if reference_broken {
            if !(l.ok() && k.ok()) {
                expect_reported_crash(&label, &l, &k, &mut m);
            }
            return m;
        }
        if !check_no_panic(&label, &k, &mut m) {
            return m;
        }
        let (lf, kf) = (first_line(n, &l.stderr), first_line(n, &k.stderr));
        if l.ok() != k.ok() {
            m.push(format!(
                "{label}: LLVM {} {lf:?}, offload-kit {} {kf:?}",
                l.status(),
                k.status()
            ));
        } else if l.ok() {
            for j in 0..c.targets.len() {
                compare_file(&label, &ld, &kd, &format!("out{j}"), &mut m);
            }
        } else if lf != kf {
            m.push(format!(
                "{label}: both fail, LLVM says {lf:?}, offload-kit {kf:?}"
            ));
        }
        m
    });
    let m: Vec<String> = results.into_iter().flatten().collect();
    report("unbundling_matches_llvm", cases.len(), &tally, &m);
}

// ---------------------------------------------------------------------------
// 4. Command-line errors

struct CliCase {
    name: &'static str,
    /// Releases the row applies to.
    releases: &'static [u32],
    args: fn(u32) -> Vec<String>,
    /// When both succeed: compare only the first 4 bytes of `o` (a magic).
    magic_only: bool,
}

fn cli_cases() -> Vec<CliCase> {
    const ALL: &[u32] = &[13, 14, 15, 16, 19, 22];
    const NEW: &[u32] = &[15, 16, 19, 22];
    const OLD: &[u32] = &[13, 14, 15, 16];
    const ONLY14: &[u32] = &[13, 14];
    let row = |name, releases, args: fn(u32) -> Vec<String>| CliCase {
        name,
        releases,
        args,
        magic_only: false,
    };
    vec![
        row("no -type", ALL, |n| {
            cmd(n, &[], &[HOST, GFX906], &["h", "d"], &["o"])
        }),
        row("-type=xyz", ALL, |n| {
            cmd(n, &["-type=xyz"], &[HOST, GFX906], &["h", "d"], &["o"])
        }),
        row("-type=hipi (not in 14)", ONLY14, |n| {
            cmd(n, &["-type=hipi"], &[HOST, GFX906], &["h", "d"], &["o"])
        }),
        row("no -targets", ALL, |n| {
            cmd(n, &["-type=bc"], &[], &["h", "d"], &["o"])
        }),
        row("no outputs", ALL, |n| {
            cmd(n, &["-type=bc"], &[HOST, GFX906], &["h", "d"], &[])
        }),
        row("inputs != targets", ALL, |n| {
            cmd(n, &["-type=bc"], &[HOST, GFX906], &["h"], &["o"])
        }),
        row("2 outputs when bundling", ALL, |n| {
            cmd(n, &["-type=bc"], &[HOST, GFX906], &["h", "d"], &["o", "o2"])
        }),
        row("duplicate targets", ALL, |n| {
            cmd(
                n,
                &["-type=bc"],
                &[HOST, GFX906, GFX906],
                &["h", "d", "d2"],
                &["o"],
            )
        }),
        row("no host (openmp only)", ALL, |n| {
            cmd(n, &["-type=bc"], &[SM70], &["d"], &["o"])
        }),
        row("missing input file", ALL, |n| {
            cmd(
                n,
                &["-type=bc"],
                &[HOST, GFX906],
                &["h", "nonexistent"],
                &["o"],
            )
        }),
        row("-unbundle -list", ALL, |n| {
            cmd(
                n,
                &["-type=bc", "-unbundle", "-list"],
                &[HOST],
                &["b.bc"],
                &["o"],
            )
        }),
        row("-list with -targets", ALL, |n| {
            cmd(n, &["-type=bc", "-list"], &[HOST], &["b.bc"], &[])
        }),
        row("-list with 2 inputs", ALL, |n| {
            cmd(n, &["-type=bc", "-list"], &[], &["b.bc", "b.bc"], &[])
        }),
        row("-list with an output", ALL, |n| {
            cmd(n, &["-type=bc", "-list"], &[], &["b.bc"], &["o"])
        }),
        row("-list with an empty -outputs=", ALL, |n| {
            cmd(n, &["-type=bc", "-list", "-outputs="], &[], &["b.bc"], &[])
        }),
        row("-list without input", ALL, |_| s(&["-type=bc", "-list"])),
        row("-unbundle without input", ALL, |n| {
            cmd(n, &["-type=bc", "-unbundle"], &[HOST], &[], &["o"])
        }),
        row("unbundle with 2 inputs", ALL, |n| {
            cmd(
                n,
                &["-type=bc", "-unbundle"],
                &[HOST],
                &["b.bc", "b.bc"],
                &["o"],
            )
        }),
        row("unbundle outputs != targets", ALL, |n| {
            cmd(
                n,
                &["-type=bc", "-unbundle"],
                &[HOST, GFX906],
                &["b.bc"],
                &["o"],
            )
        }),
        row("unbundle with 2 host targets", ALL, |n| {
            cmd(
                n,
                &["-type=bc", "-unbundle"],
                &[HOST, "host-x86_64-pc-linux-gnu"],
                &["b.bc"],
                &["o", "o2"],
            )
        }),
        row("bundling -type=a", ALL, |n| {
            cmd(n, &["-type=a"], &[HOST, GFX906], &["h", "d"], &["o"])
        }),
        row("conflicting target IDs", ALL, |n| {
            let mut a = s(&["-type=bc"]);
            a.push(format!(
                "-targets={HOST},{GFX90A_XNACK},hip-amdgcn-amd-amdhsa--gfx90a"
            ));
            a.extend(io_args(n, false, &["h", "d", "d2"], &["o"]));
            a
        }),
        // 19 and 22 write both five-field targets as `hip-amdgcn-amd-amdhsa--`:
        // one worklist entry, whose output is the last (o2); o is never opened.
        row("two targets written alike", ALL, |n| {
            cmd(
                n,
                &["-type=bc", "-unbundle"],
                &[
                    "hip-amdgcn-amd-amdhsa-gfx906",
                    "hip-amdgcn-amd-amdhsa-gfx908",
                ],
                &["b5.bc"],
                &["o", "o2"],
            )
        }),
        row(
            "two targets written alike, -allow-missing-bundles",
            ALL,
            |n| {
                cmd(
                    n,
                    &["-type=bc", "-unbundle", "-allow-missing-bundles"],
                    &[
                        "hip-amdgcn-amd-amdhsa-gfx906",
                        "hip-amdgcn-amd-amdhsa-gfx908",
                    ],
                    &["b5.bc"],
                    &["o", "o2"],
                )
            },
        ),
        row("-hip-openmp-compatible", ALL, |n| {
            cmd(
                n,
                &["-type=bc", "-unbundle", "-hip-openmp-compatible"],
                &["openmp-amdgcn-amd-amdhsa--gfx906"],
                &["b.bc"],
                &["o"],
            )
        }),
        row("-input/-output spelling", ALL, |_| {
            let mut a = s(&["-type=bc", "-input=h", "-input=d", "-output=o"]);
            a.push(format!("-targets={HOST},{GFX906}"));
            a
        }),
        row("-inputs together with -input", NEW, |_| {
            let mut a = s(&["-type=bc", "-inputs=h", "-input=d", "-output=o"]);
            a.push(format!("-targets={HOST},{GFX906}"));
            a
        }),
        row("-bundle-align=-1", ALL, |n| {
            cmd(
                n,
                &["-type=bc", "-bundle-align=-1"],
                &[HOST, GFX906],
                &["h", "d"],
                &["o"],
            )
        }),
        row("-bundle-align=0 (LLVM: SIGFPE)", ALL, |n| {
            cmd(
                n,
                &["-type=bc", "-bundle-align=0"],
                &[HOST, GFX906],
                &["h", "d"],
                &["o"],
            )
        }),
        row("unknown option", ALL, |n| {
            cmd(
                n,
                &["-type=bc", "-frobnicate"],
                &[HOST, GFX906],
                &["h", "d"],
                &["o"],
            )
        }),
        row("positional argument", ALL, |n| {
            cmd(n, &["-type=bc", "-list", "stray"], &[], &["b.bc"], &[])
        }),
        row("-type without a value", ALL, |_| s(&["-type"])),
        row("-list=maybe", ALL, |n| {
            cmd(n, &["-type=bc", "-list=maybe"], &[], &["b.bc"], &[])
        }),
        row("-check-input-archive when bundling", ALL, |n| {
            cmd(
                n,
                &["-type=bc", "-check-input-archive"],
                &[HOST, GFX906],
                &["h", "d"],
                &["o"],
            )
        }),
        row("-check-input-archive unbundling -type=bc", ALL, |n| {
            cmd(
                n,
                &["-type=bc", "-unbundle", "-check-input-archive"],
                &[GFX906],
                &["b.bc"],
                &["o"],
            )
        }),
        row("-compress (unknown before 19)", OLD, |n| {
            cmd(
                n,
                &["-type=bc", "-compress"],
                &[HOST, GFX906],
                &["h", "d"],
                &["o"],
            )
        }),
        CliCase {
            name: "-compress writes a CCOB",
            releases: &[19, 22],
            args: |n| {
                cmd(
                    n,
                    &["-type=bc", "-compress"],
                    &[HOST, GFX906],
                    &["h", "d"],
                    &["o"],
                )
            },
            magic_only: true,
        },
        row("-verbose (unknown before 19)", OLD, |n| {
            cmd(
                n,
                &["-type=bc", "-verbose"],
                &[HOST, GFX906],
                &["h", "d"],
                &["o"],
            )
        }),
    ]
}

/// The command-line errors of spec/cli.md (*Check order*, and option
/// parsing): the same exit status and first stderr line, for the releases
/// each row applies to.
#[test]
fn command_line_errors_match_llvm() {
    let rels = releases();
    let tally = Tally::default();
    let cases = cli_cases();
    let root = tempfile::tempdir().expect("tempdir");
    let good = std::fs::read(Path::new(MALFORMED_DIR).join("good.bin")).expect("good.bin");
    let mut work: Vec<(usize, u32)> = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        work.extend(
            rels.iter()
                .filter(|n| c.releases.contains(n))
                .map(|&n| (i, n)),
        );
    }
    let results = par_map(&work, |&(i, n)| {
        let c = &cases[i];
        let label = format!("LLVM {n} [{}]", c.name);
        let (ld, kd) = case_dirs(root.path(), &format!("e{i}-{n}"));
        write_both(&ld, &kd, "h", b"HOSTDATA");
        write_both(&ld, &kd, "d", b"DEVDATA");
        write_both(&ld, &kd, "d2", b"DEVDATA2");
        write_both(&ld, &kd, "b.bc", &good);
        let five = common::bundle(&[
            (HOST, b"HOSTDATA"),
            ("hip-amdgcn-amd-amdhsa-gfx906", b"DEV"),
        ]);
        write_both(&ld, &kd, "b5.bc", &five);
        let args = (c.args)(n);
        let l = run_llvm(n, &ld, &args);
        tally.note(&l);
        let k = run_kit(n, &kd, &args);
        let mut m = Vec::new();
        if l.crashed() {
            expect_reported_crash(&label, &l, &k, &mut m);
            return m;
        }
        if !check_no_panic(&label, &k, &mut m) {
            return m;
        }
        let (lf, kf) = (first_line(n, &l.stderr), first_line(n, &k.stderr));
        // Documented divergence (spec/cli.md, "Options"): the drop-in accepts
        // the options of every release, so an option a newer release added is
        // not an unknown argument under an older one.
        let later_option = [
            "-input",
            "-output",
            "-hip-openmp-compatible",
            "-check-input-archive",
            "-compress",
            "-compression-level",
            "-verbose",
        ]
        .iter()
        .any(|o| lf.contains(&format!("Unknown command line argument '{o}")));
        if later_option {
            if kf.contains("Unknown command line argument") {
                m.push(format!(
                    "{label} {args:?}: offload-kit rejects an option of a later release: {kf:?}"
                ));
            }
            return m;
        }
        if l.code != k.code || lf != kf {
            m.push(format!(
                "{label} {args:?}: LLVM {} {lf:?}, offload-kit {} {kf:?}",
                l.status(),
                k.status()
            ));
        } else if l.ok() {
            if c.magic_only {
                let head = |d: &Path| {
                    let mut b = std::fs::read(d.join("o")).unwrap_or_default();
                    b.truncate(4);
                    String::from_utf8_lossy(&b).into_owned()
                };
                if head(&ld) != head(&kd) {
                    m.push(format!(
                        "{label} {args:?}: LLVM's output starts {:?}, offload-kit's {:?}",
                        head(&ld),
                        head(&kd)
                    ));
                }
            } else {
                compare_file(&label, &ld, &kd, "o", &mut m);
                compare_file(&label, &ld, &kd, "o2", &mut m);
            }
        }
        m
    });
    let m: Vec<String> = results.into_iter().flatten().collect();
    report("command_line_errors_match_llvm", work.len(), &tally, &m);
}

// ---------------------------------------------------------------------------
// 5. Real fat binaries built by clang

const KERNEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/k.hip");

fn run_tool(n: u32, tool: &str, dir: &Path, args: &[&str]) -> Out {
    let mut c = Command::new(common::llvm_path(n, tool));
    c.args(args);
    exec(c, dir)
}

/// IDs in the order `offload-kit list` prints them (first column).
fn native_list_ids(out: &str) -> String {
    out.lines()
        .map(|l| {
            let id = l.split(" offset 0x").next().unwrap_or(l).trim_end();
            format!("{id}\n")
        })
        .collect()
}

/// `(fb.bin, rdc.o)` built by one clang, or why not (empty: skipped).
type BuildResult = Result<(PathBuf, PathBuf), String>;

/// Fat binaries from each release's clang (`tests/fixtures/k.hip`): the
/// `.hip_fatbin` section lists identically (drop-in `-list` exactly, native
/// `offload-kit list` by ID) and unbundles to identical bytes under every
/// release; `-fgpu-rdc` ELF objects get a clear "not implemented" error.
/// A release whose clang cannot build the kernel fails the test.
#[test]
fn real_fat_binaries_match_llvm() {
    let rels = releases();
    let tally = Tally::default();
    let root = tempfile::tempdir().expect("tempdir");
    let mut m: Vec<String> = Vec::new();
    let mut checked = 0usize;

    // Build with every release that has clang installed.
    let built: Vec<(u32, BuildResult)> = par_map(&rels, |&n| {
        if !common::llvm_path(n, "clang").is_file()
            || !common::llvm_path(n, "llvm-objcopy").is_file()
        {
            eprintln!("llvm_diff: SKIPPING clang {n}: not installed (OFFLOAD_KIT_NO_LLVM=1)");
            return (n, Err(String::new()));
        }
        let dir = root.path().join(format!("clang{n}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let fat_args = [
            "-x",
            "hip",
            "-nogpulib",
            "-nogpuinc",
            "--offload-arch=gfx906",
            "--offload-arch=gfx90a:xnack+",
            "-c",
            KERNEL,
            "-o",
            "k.o",
        ];
        let o = run_tool(n, "clang", &dir, &fat_args);
        if !o.ok() {
            return (
                n,
                Err(format!(
                    "clang-{n} {} cannot build the fat object ({}): {}",
                    fat_args.join(" "),
                    o.status(),
                    o.stderr.trim_end()
                )),
            );
        }
        let o = run_tool(
            n,
            "llvm-objcopy",
            &dir,
            &["--dump-section=.hip_fatbin=fb.bin", "k.o"],
        );
        if !o.ok() {
            return (
                n,
                Err(format!(
                    "llvm-objcopy-{n} cannot dump .hip_fatbin of clang-{n}'s k.o: {}",
                    o.stderr.trim_end()
                )),
            );
        }
        let rdc_args = [
            "-x",
            "hip",
            "--offload-arch=gfx906",
            "-nogpulib",
            "-nogpuinc",
            "-fgpu-rdc",
            "-c",
            KERNEL,
            "-o",
            "rdc.o",
        ];
        let o = run_tool(n, "clang", &dir, &rdc_args);
        if !o.ok() {
            return (
                n,
                Err(format!(
                    "clang-{n} {} cannot build the -fgpu-rdc object: {}",
                    rdc_args.join(" "),
                    o.stderr.trim_end()
                )),
            );
        }
        (n, Ok((dir.join("fb.bin"), dir.join("rdc.o"))))
    });
    let mut fatbins = Vec::new();
    for (n, b) in built {
        match b {
            Ok(p) => fatbins.push((n, p)),
            Err(e) if e.is_empty() => {}
            Err(e) => m.push(format!("BUILD FAILED: {e}")),
        }
    }

    // (builder, reader) pairs.
    let work: Vec<(usize, u32)> = (0..fatbins.len())
        .flat_map(|i| rels.iter().map(move |&r| (i, r)))
        .collect();
    let results = par_map(&work, |&(i, r)| {
        let (b, (fb, rdc)) = &fatbins[i];
        let mut m = Vec::new();
        let mut checked = 0;
        let fbs = fb.display().to_string();
        let label = format!("clang-{b} .hip_fatbin read by {r}");
        let dir = root.path().join(format!("fat{b}-{r}"));
        std::fs::create_dir_all(&dir).expect("mkdir");

        // -list, drop-in and native.
        let args = list_args(r, "o", &fbs);
        let l = run_llvm(r, &dir, &args);
        tally.note(&l);
        let k = run_kit(r, &dir, &args);
        checked += 1;
        compare_list(
            &format!("{label}: bundler -list -type=o"),
            r,
            &l,
            &k,
            &mut m,
        );
        let mut native = Command::new(KIT);
        native.args(["list", &fbs, &format!("--llvm-version={r}")]);
        let nk = exec(native, &dir);
        checked += 1;
        if !l.ok() || !nk.ok() || native_list_ids(&nk.stdout_text()) != l.stdout_text() {
            m.push(format!(
                "{label}: `offload-kit list --llvm-version={r}` IDs {:?} ({}, {:?}), LLVM -list {:?} ({})",
                native_list_ids(&nk.stdout_text()),
                nk.status(),
                nk.stderr.trim_end(),
                l.stdout_text(),
                l.status()
            ));
        }

        // Unbundle every listed ID, one at a time and all together.
        let ids: Vec<String> = l.stdout_text().lines().map(String::from).collect();
        let mut requests: Vec<Vec<String>> = ids.iter().map(|id| vec![id.clone()]).collect();
        if ids.len() > 1 {
            requests.push(ids.clone());
        }
        for (q, targets) in requests.iter().enumerate() {
            let (ld, kd) = case_dirs(&dir, &format!("q{q}"));
            let outs: Vec<String> = (0..targets.len()).map(|j| format!("out{j}")).collect();
            let outs: Vec<&str> = outs.iter().map(String::as_str).collect();
            let mut args = vec![
                "-type=o".to_string(),
                "-unbundle".to_string(),
                format!("-targets={}", targets.join(",")),
            ];
            args.extend(io_args(r, false, &[&fbs], &outs));
            let l = run_llvm(r, &ld, &args);
            tally.note(&l);
            let k = run_kit(r, &kd, &args);
            checked += 1;
            let ulabel = format!("{label}: unbundle {targets:?}");
            if l.crashed() {
                expect_reported_crash(&ulabel, &l, &k, &mut m);
                continue;
            }
            if !check_no_panic(&ulabel, &k, &mut m) {
                continue;
            }
            let (lf, kf) = (first_line(r, &l.stderr), first_line(r, &k.stderr));
            if l.ok() != k.ok() {
                m.push(format!(
                    "{ulabel}: LLVM {} {lf:?}, offload-kit {} {kf:?}",
                    l.status(),
                    k.status()
                ));
            } else if l.ok() {
                for o in &outs {
                    compare_file(&ulabel, &ld, &kd, o, &mut m);
                }
            } else if lf != kf {
                m.push(format!(
                    "{ulabel}: both fail, LLVM says {lf:?}, offload-kit {kf:?}"
                ));
            }
        }

        // -fgpu-rdc: an ELF host object with __CLANG_OFFLOAD_BUNDLE__ sections.
        // offload-kit does not implement -type=o on ELF hosts yet: it must
        // say so (exit 1, "not implement"), or else answer exactly as LLVM.
        let rdcs = rdc.display().to_string();
        let rlabel = format!("clang-{b} -fgpu-rdc object read by {r}");
        let list = list_args(r, "o", &rdcs);
        let l = run_llvm(r, &dir, &list);
        tally.note(&l);
        if !l.ok() || l.stdout.is_empty() {
            m.push(format!(
                "{rlabel}: reference sanity: LLVM -list should list the sections, got {} {:?} {:?}",
                l.status(),
                l.stdout_text(),
                l.stderr.trim_end()
            ));
        }
        let says_not_implemented =
            |k: &Out| k.code == Some(1) && k.stderr.contains("not implement") && !k.panicked();
        let k = run_kit(r, &dir, &list);
        checked += 1;
        let listed_alike = k.ok() && l.ok() && k.stdout == l.stdout;
        if !(says_not_implemented(&k) || listed_alike) {
            m.push(format!(
                "{rlabel}: offload-kit -list must exit 1 saying it does \"not implement\" ELF hosts, or list as LLVM does ({} {:?}); got {} stdout {:?} stderr {:?}",
                l.status(),
                l.stdout_text(),
                k.status(),
                k.stdout_text(),
                k.stderr.trim_end()
            ));
        }
        // The device entry (its payload is the section's bytes in every release).
        let device = l
            .stdout_text()
            .lines()
            .find(|id| !id.starts_with("host"))
            .unwrap_or(GFX906)
            .to_string();
        let (ld, kd) = case_dirs(&dir, "rdc");
        let mut unb = vec![
            "-type=o".to_string(),
            "-unbundle".to_string(),
            format!("-targets={device}"),
        ];
        unb.extend(io_args(r, false, &[&rdcs], &["rdc.out"]));
        let lu = run_llvm(r, &ld, &unb);
        tally.note(&lu);
        let ku = run_kit(r, &kd, &unb);
        checked += 1;
        let same = ku.ok()
            && lu.ok()
            && std::fs::read(ld.join("rdc.out")).ok() == std::fs::read(kd.join("rdc.out")).ok();
        if !says_not_implemented(&ku) && !same {
            m.push(format!(
                "{rlabel}: offload-kit -unbundle {device} must exit 1 saying it does \"not implement\" ELF hosts, or give LLVM's bytes (LLVM {}); got {} stderr {:?}",
                lu.status(),
                ku.status(),
                ku.stderr.trim_end()
            ));
        }
        (m, checked)
    });
    for (mm, c) in results {
        m.extend(mm);
        checked += c;
    }
    report("real_fat_binaries_match_llvm", checked, &tally, &m);
}

/// TID-4 (spec audit point 5): the clang driver of every release writes the
/// target ID of `--offload-arch` canonically (features sorted) into the
/// bundler's `-targets=`; the bundler itself writes target IDs as given,
/// and so do the profiles.
#[test]
fn driver_canonicalises_target_ids_the_bundler_does_not() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("k.hip"),
        "__global__ void k(int *p) { *p = 1; }\n",
    )
    .unwrap();
    for n in [13, 14, 15, 16, 19, 22] {
        let Some(bin) = common::llvm_bin(n, &["clang"]) else {
            continue;
        };
        let out = Command::new(bin.join("clang"))
            .args(["-###", "-x", "hip", "-nogpulib", "-nogpuinc"])
            .arg("--offload-arch=gfx90a:xnack+:sramecc-")
            .args(["-c", "k.hip"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        let targets = text
            .split(['"', ' '])
            .find(|a| a.starts_with("-targets="))
            .unwrap_or_else(|| panic!("clang {n} -### shows no -targets=: {text}"));
        assert!(
            targets.ends_with(",hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+"),
            "clang {n} writes {targets}"
        );
        let r: offload_kit::Release = n.to_string().parse().unwrap();
        assert_eq!(
            r.written_id("hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-")
                .unwrap(),
            "hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-",
            "the {n} profile writes the bundler's spelling"
        );
    }
}

/// `/tmp/clang-offload-bundler-XXXXXX.tmp` (any six characters) as `TMP`.
fn mask_temp_names(s: &str) -> String {
    let tmp = std::env::temp_dir().join("clang-offload-bundler-");
    let key = tmp.display().to_string();
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find(&key) {
        out.push_str(&rest[..at]);
        out.push_str("TMP");
        rest = &rest[at + key.len()..];
        rest = rest
            .get(6..)
            .unwrap_or("")
            .strip_prefix(".tmp")
            .unwrap_or(rest);
    }
    out.push_str(rest);
    out
}

/// Issue 13: `--help`, `-h` and `-###` as each release has them. The
/// drop-in runs as `clang-offload-bundler` from a directory that also
/// holds that release's `llvm-objcopy`, as LLVM's own bin directory does.
#[test]
fn help_and_dry_run_as_each_release() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/fixtures");
    for n in [13, 14, 15, 16, 19, 22] {
        let Some(bin) = common::llvm_bin(n, &["clang-offload-bundler", "llvm-objcopy"]) else {
            continue;
        };
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::os::unix::fs::symlink(KIT, d.join("clang-offload-bundler")).unwrap();
        std::os::unix::fs::symlink(bin.join("llvm-objcopy"), d.join("llvm-objcopy")).unwrap();
        std::fs::copy(fixtures.join("host-x86_64.o"), d.join("h.o")).unwrap();
        std::fs::write(d.join("dev.bin"), b"DEVICE").unwrap();
        let version = format!("--llvm-version={n}");
        // Both run in `d`, with paths relative to it.
        let llvm = |args: &[&str]| {
            Command::new(bin.join("clang-offload-bundler"))
                .args(args)
                .current_dir(d)
                .output()
                .unwrap()
        };
        let kit = |args: &[&str]| {
            Command::new(d.join("clang-offload-bundler"))
                .arg(&version)
                .args(args)
                .current_dir(d)
                .output()
                .unwrap()
        };
        let same = |what: &str, args: &[&str], outputs: &[&str]| {
            let mut results = Vec::new();
            for who in ["llvm", "kit"] {
                for o in outputs {
                    let _ = std::fs::remove_file(d.join(o));
                }
                let r = if who == "llvm" { llvm(args) } else { kit(args) };
                let err = String::from_utf8_lossy(&r.stderr)
                    .replace(&bin.join("llvm-objcopy").display().to_string(), "OBJCOPY")
                    .replace(&d.join("llvm-objcopy").display().to_string(), "OBJCOPY")
                    .replace(
                        &bin.join("clang-offload-bundler").display().to_string(),
                        "PROG",
                    )
                    .replace(
                        &d.join("clang-offload-bundler").display().to_string(),
                        "PROG",
                    );
                let files: Vec<Option<Vec<u8>>> = outputs
                    .iter()
                    .map(|o| std::fs::read(d.join(o)).ok())
                    .collect();
                results.push((r.status.code(), r.stdout, mask_temp_names(&err), files));
            }
            assert_eq!(
                results[0], results[1],
                "LLVM {n}, {what}: LLVM (left) vs offload-kit"
            );
        };
        same("--help", &["--help"], &[]);
        same("-h", &["-h"], &[]);
        let inputs = |files: &[&str]| -> Vec<String> {
            if n <= 14 {
                vec![format!("-inputs={}", files.join(","))]
            } else {
                files.iter().map(|f| format!("-input={f}")).collect()
            }
        };
        let output = |f: &str| {
            if n <= 14 {
                format!("-outputs={f}")
            } else {
                format!("-output={f}")
            }
        };
        let mut args = vec!["-###".to_string(), "-type=o".into()];
        args.push("-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906".into());
        args.extend(inputs(&["h.o", "dev.bin"]));
        args.push(output("fat.o"));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        same("-### -type=o bundling", &args, &["fat.o"]);
        if n >= 19 {
            let rdc = format!("k-rdc-{n}.o");
            std::fs::copy(fixtures.join(&rdc), d.join(&rdc)).unwrap();
            let mut args = vec!["-###".to_string(), "-type=o".into(), "-unbundle".into()];
            args.push("-targets=host-x86_64-pc-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906".into());
            args.extend(inputs(&[&rdc]));
            args.push(output("host.o"));
            args.push(output("dev.o"));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            same("-### -type=o host unbundling", &args, &["host.o", "dev.o"]);
        }
    }
}

/// `tools/lit-llvm` (issue 13) on an LLVM-style test file of this
/// repository: every RUN line passes with LLVM 19 and 22 and with the
/// drop-in at each, `--help` and `-###` lines included.
#[test]
fn lit_llvm_runs_llvm_style_test_files() {
    if common::llvm_bin(22, &["clang", "FileCheck", "not", "clang-offload-bundler"]).is_none()
        || common::llvm_bin(19, &["clang", "clang-offload-bundler"]).is_none()
    {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let json = tempfile::NamedTempFile::new().unwrap();
    let out = Command::new(root.join("tools/lit-llvm"))
        .arg("/nonexistent-llvm-project")
        .arg("--test")
        .arg(root.join("tests/data/lit/drop-in.c"))
        .arg("--offload-kit")
        .arg(KIT)
        .arg("--json")
        .arg(json.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs: Value = serde_json::from_slice(&std::fs::read(json.path()).unwrap()).unwrap();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 4, "releases 19 and 22 × llvm and offload-kit");
    for r in runs {
        let lines = r["lines"].as_array().unwrap();
        assert_eq!(lines.len(), 7, "{r}");
        assert!(
            lines.iter().all(|l| l["pass"] == true),
            "{} at {}: {lines:?}",
            r["impl"],
            r["release"]
        );
    }
}

/// `-verbose` on inputs that are not compressed: 19 and 22 print
/// `Uncompressed bundle.` for every buffer `decompress` keeps (20 or more
/// bytes for 19, 8 for 22): the input of `-list` and `-unbundle`, each
/// archive member of `-unbundle -type=a`; the drop-in prints the same
/// stderr lines (program names and offload-kit's details aside).
#[test]
fn verbose_notes_match_llvm() {
    let bundle = make_bundle(&[(HOST, b"HOSTDATA"), (GFX906, b"DEV")]);
    let mut member = b"!<arch>\n".to_vec();
    let header = format!(
        "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
        "b.bc/",
        0,
        0,
        0,
        644,
        bundle.len()
    );
    member.extend_from_slice(header.as_bytes());
    member.extend_from_slice(&bundle);
    if bundle.len() % 2 == 1 {
        member.push(b'\n');
    }
    let inputs: [(&str, Vec<u8>); 4] = [
        ("b.bc", bundle.clone()),
        ("short7", b"abcdefg".to_vec()),
        ("short19", vec![b'a'; 19]),
        ("lib.a", member),
    ];
    let mut m = Vec::new();
    let mut checked = 0;
    let root = tempfile::tempdir().expect("tempdir");
    for n in releases().into_iter().filter(|&n| n >= 19) {
        let (ldir, kdir) = case_dirs(root.path(), &format!("verbose-{n}"));
        for (name, bytes) in &inputs {
            write_both(&ldir, &kdir, name, bytes);
        }
        let runs: Vec<Vec<String>> = vec![
            s(&["-type=bc", "-input=b.bc", "-list", "-verbose"]),
            s(&["-type=bc", "-input=short7", "-list", "-verbose"]),
            s(&["-type=bc", "-input=short19", "-list", "-verbose"]),
            s(&[
                "-type=bc",
                &format!("-targets={HOST},{GFX906}"),
                "-input=b.bc",
                "-output=h",
                "-output=d",
                "-unbundle",
                "-verbose",
            ]),
            s(&[
                "-type=a",
                &format!("-targets={GFX906}"),
                "-input=lib.a",
                "-output=d.a",
                "-unbundle",
                "-verbose",
            ]),
        ];
        for args in runs {
            let l = run_llvm(n, &ldir, &args);
            let k = run_kit(n, &kdir, &args);
            let label = format!("{n} {}", args.join(" "));
            checked += 1;
            if (l.code, norm_stderr(n, &l.stderr)) != (k.code, norm_stderr(n, &k.stderr)) {
                m.push(format!(
                    "{label}: LLVM {:?} {:?}, offload-kit {:?} {:?}",
                    l.code, l.stderr, k.code, k.stderr
                ));
            }
        }
    }
    assert!(checked > 0, "no release with compressed bundles installed");
    common::assert_no_mismatches(&m);
}
