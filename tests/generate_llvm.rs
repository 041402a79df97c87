//! Generated valid files are read by every installed LLVM release that
//! reads their kind, with the same entries offload-kit lists: binary, text
//! and object-file bundles by `clang-offload-bundler -list` of 14, 16, 19
//! and 22; compressed bundles by 19 (v1, v2) and 22 (v1-v3). Device
//! archives are unbundled (`-unbundle -type=a`, one output per device ID
//! in the archive) by 14-22, and version 1 offload binaries extracted
//! (`--image=` per triple and arch) by the packagers of 16, 19 and 22
//! (`llvm-offload-binary`): the release succeeds and writes what the
//! drop-in writes at that release, byte for byte. Fat binaries are read by
//! LLVM 22's `llvm-readobj --offloading` (its bundler does not read
//! `.hip_fatbin`). One trial per (kind, release). A missing release fails
//! (see tests/common).

mod common;

use common::{exec, llvm_tool, par_map};
use libtest_mimic::{Arguments, Failed, Trial};
use offload_kit::detect::{self, text_comment};
use offload_kit::generate::{generate, Kind, Options};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The offload-kit binary under test.
const KIT: &str = env!("CARGO_BIN_EXE_offload-kit");

const SEEDS: u64 = 25;

/// The `-type=` LLVM reads a generated file of `kind` as.
fn file_type(kind: Kind, bytes: &[u8]) -> &'static str {
    match kind {
        Kind::Object => "o",
        Kind::Text => match text_comment(bytes) {
            Some("#") => "s",
            Some(";") => "ll",
            _ => "i",
        },
        _ => "bc",
    }
}

fn trial(kind: Kind, release: u32) -> Result<(), Failed> {
    let Some(bundler) = llvm_tool(release, "clang-offload-bundler") else {
        return Ok(());
    };
    let dir = tempfile::tempdir()?;
    over_seeds(kind, |seed, bytes| {
        // 19 knows no CCOB v3 (its version field is at offset 4).
        if kind == Kind::Ccob && release == 19 && bytes[4] == 3 {
            return None;
        }
        let path = dir.path().join(format!("{kind}-{seed}"));
        std::fs::write(&path, bytes).unwrap();
        let mut cmd = Command::new(&bundler);
        cmd.arg(format!("-type={}", file_type(kind, bytes)))
            .arg("-list")
            .arg(
                if release <= 14 { "-inputs=" } else { "-input=" }.to_string()
                    + path.to_str().unwrap(),
            );
        let out = exec(cmd, dir.path(), Duration::from_secs(60));
        // Compared as sets: binary bundles are listed in LLVM's hash order
        // (tests/llvm_diff.rs pins that order against the drop-in).
        let mut want: Vec<String> = detect::list(&bytes, None)
            .expect("valid")
            .entries
            .into_iter()
            .map(|e| e.id)
            .collect();
        let mut got: Vec<String> = out.stdout_text().lines().map(str::to_string).collect();
        want.sort();
        got.sort();
        (!out.ok() || got != want).then(|| {
            format!(
                "seed {seed}: LLVM {release} {}: listed {got:?}, offload-kit {want:?}; {}",
                out.status(),
                out.stderr.trim()
            )
        })
    })
}

/// Run `tool` with `args` in `dir`, and the drop-in (`offload-kit
/// <role> --llvm-version=<release>`) with the same arguments in `dir`/kit;
/// a problem when LLVM fails, the exit codes differ, or the files they
/// write (in `dir`/llvm and `dir`/kit) differ.
fn same_as_drop_in(
    tool: &Path,
    role: &str,
    release: u32,
    dir: &Path,
    args: &[String],
) -> Option<String> {
    let (ld, kd) = (dir.join("llvm"), dir.join("kit"));
    for d in [&ld, &kd] {
        std::fs::create_dir_all(d).unwrap();
    }
    let mut c = Command::new(tool);
    c.args(args);
    let l = exec(c, &ld, Duration::from_secs(60));
    let mut c = Command::new(KIT);
    c.arg(role)
        .arg(format!("--llvm-version={release}"))
        .args(args);
    let k = exec(c, &kd, Duration::from_secs(60));
    if !l.ok() || l.status() != k.status() {
        return Some(format!(
            "LLVM {release} {}: {}; drop-in {}: {}",
            l.status(),
            l.stderr.trim(),
            k.status(),
            k.stderr.trim()
        ));
    }
    let files = |d: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read(e.path()).unwrap())
            })
            .collect();
        v.sort();
        v
    };
    let (lf, kf) = (files(&ld), files(&kd));
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    if lf.is_empty() {
        return Some(format!("LLVM {release} wrote nothing"));
    }
    (lf != kf).then(|| {
        format!(
            "LLVM {release} wrote {:?}, the drop-in {:?} (or their bytes differ)",
            names(&lf),
            names(&kf)
        )
    })
}

/// Run `check` over the files `kind` generates from seeds 0..SEEDS, two
/// at a time; every problem it reports fails the trial.
fn over_seeds(
    kind: Kind,
    check: impl Fn(u64, &[u8]) -> Option<String> + Sync,
) -> Result<(), Failed> {
    let seeds: Vec<u64> = (0..SEEDS).collect();
    let problems: Vec<String> = par_map(2, &seeds, |&seed| {
        let bytes = generate(kind, seed, &Options::default())
            .expect("generates")
            .bytes;
        check(seed, &bytes)
    })
    .into_iter()
    .flatten()
    .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// Whether a listed entry sits in a CCOB of `version`.
fn in_ccob(bytes: &[u8], e: &detect::ListedEntry, version: u8) -> bool {
    e.ccob_offset
        .is_some_and(|at| bytes.get(at as usize + 4) == Some(&version))
}

/// Generated device archives unbundled by `release` for every device ID
/// they hold.
fn archive_trial(release: u32) -> Result<(), Failed> {
    let Some(bundler) = llvm_tool(release, "clang-offload-bundler") else {
        return Ok(());
    };
    over_seeds(Kind::Archive, |seed, bytes| {
        let listed = detect::list(&bytes, None).expect("valid").entries;
        // 14 and 16 read no CCOB (their members are skipped); 19 reads v1
        // and v2 only (spec/ccob.md).
        if release == 19 && listed.iter().any(|e| in_ccob(bytes, e, 3)) {
            return None;
        }
        let mut ids: Vec<String> = listed
            .iter()
            .filter(|e| !e.id.starts_with("host-"))
            .filter(|e| release >= 19 || e.ccob_offset.is_none())
            // Requests the release takes (13 knows no spirv64 triple).
            .filter(|e| {
                let r: offload_kit::Release = release.to_string().parse().unwrap();
                r.validate_target(&e.id).is_ok()
            })
            .map(|e| e.id.clone())
            .collect();
        ids.sort();
        ids.dedup();
        if ids.is_empty() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("lib.a");
        std::fs::write(&input, bytes).unwrap();
        let mut args = vec![
            "-unbundle".to_string(),
            "-type=a".to_string(),
            format!("-targets={}", ids.join(",")),
        ];
        let outs: Vec<String> = (0..ids.len()).map(|i| format!("out{i}.a")).collect();
        if release <= 14 {
            args.push(format!("-inputs={}", input.display()));
            args.push(format!("-outputs={}", outs.join(",")));
        } else {
            args.push(format!("-input={}", input.display()));
            args.extend(outs.iter().map(|o| format!("-output={o}")));
        }
        same_as_drop_in(&bundler, "bundler", release, dir.path(), &args)
            .map(|p| format!("seed {seed} ({ids:?}): {p}"))
    })
}

/// Generated version 1 offload binaries extracted by `release`'s packager,
/// one `--image=` per (triple, arch) they hold.
fn offload_binary_trial(release: u32) -> Result<(), Failed> {
    let tool = if release >= 22 {
        "llvm-offload-binary"
    } else {
        "clang-offload-packager"
    };
    let Some(packager) = llvm_tool(release, tool) else {
        return Ok(());
    };
    over_seeds(Kind::OffloadBinary, |seed, bytes| {
        // Versions 2 and 3 are LLVM main's (spec/offload-binary.md).
        if bytes[4..8] != 1u32.to_le_bytes() {
            return None;
        }
        let listed = detect::list(&bytes, None).expect("valid").entries;
        let mut keys: Vec<(String, String)> = listed
            .iter()
            .filter_map(|e| e.image.as_ref())
            .map(|i| (i.triple.clone(), i.arch.clone()))
            .collect();
        keys.sort();
        keys.dedup();
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("images.bin");
        std::fs::write(&input, bytes).unwrap();
        let mut args = vec![input.display().to_string()];
        for (i, (triple, arch)) in keys.iter().enumerate() {
            let arch = if arch.is_empty() {
                String::new()
            } else {
                format!(",arch={arch}")
            };
            args.push(format!("--image=file=img{i},triple={triple}{arch}"));
        }
        same_as_drop_in(&packager, "packager", release, dir.path(), &args)
            .map(|p| format!("seed {seed} ({keys:?}): {p}"))
    })
}

/// Generated fat binaries read by LLVM 22's second bundle reader
/// (`llvm-readobj --offloading`, llvm/lib/Object/OffloadBundle.cpp): it
/// succeeds, prints only IDs the file holds, and, on files without
/// compressed bundles, exactly the entries offload-kit lists with their
/// offsets and sizes. (It skips what follows a CCOB, a documented finding:
/// conformance/third-party/.)
fn fatbin_trial() -> Result<(), Failed> {
    let Some(readobj) = llvm_tool(22, "llvm-readobj") else {
        return Ok(());
    };
    over_seeds(Kind::Fatbin, |seed, bytes| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.o");
        std::fs::write(&path, bytes).unwrap();
        let mut cmd = Command::new(&readobj);
        cmd.arg("--offloading").arg(&path);
        let out = exec(cmd, dir.path(), Duration::from_secs(60));
        let listed = detect::list(&bytes, None).expect("valid").entries;
        let mut want: Vec<String> = listed
            .iter()
            .map(|e| format!("{}#offset={}&size={}", e.id, e.offset, e.size))
            .collect();
        let mut got: Vec<String> = out
            .stdout_text()
            .lines()
            .filter_map(|l| l.split_once("\tfile://"))
            .map(|(id, uri)| {
                let frag = uri.rsplit_once('#').map_or("", |(_, f)| f);
                format!("{id}#{frag}")
            })
            .collect();
        want.sort();
        got.sort();
        let ids = |v: &[String]| -> Vec<String> {
            v.iter()
                .map(|x| x.split('#').next().unwrap().to_string())
                .collect()
        };
        let plain = listed.iter().all(|e| e.ccob_offset.is_none());
        let stray = ids(&got).into_iter().find(|id| !ids(&want).contains(id));
        let problem = if !out.ok() {
            Some(format!("exits {}: {}", out.status(), out.stderr.trim()))
        } else if let Some(id) = stray {
            Some(format!("prints '{id}', which the file does not hold"))
        } else if plain && got != want {
            Some(format!("lists {got:?}, offload-kit {want:?}"))
        } else {
            None
        };
        problem.map(|p| format!("seed {seed}: llvm-readobj-22 --offloading {p}"))
    })
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for kind in [Kind::Binary, Kind::Text, Kind::Object, Kind::Ccob] {
        let releases: &[u32] = if kind == Kind::Ccob {
            &[19, 22]
        } else {
            &[13, 14, 15, 16, 19, 22]
        };
        for &r in releases {
            trials.push(Trial::test(format!("{kind}/llvm-{r}"), move || {
                trial(kind, r)
            }));
        }
    }
    for r in [13, 14, 15, 16, 19, 22] {
        trials.push(Trial::test(format!("archive/llvm-{r}"), move || {
            archive_trial(r)
        }));
    }
    trials.push(Trial::test("fatbin/llvm-readobj-22", fatbin_trial));
    for r in [16, 19, 22] {
        trials.push(Trial::test(format!("offload-binary/llvm-{r}"), move || {
            offload_binary_trial(r)
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}
