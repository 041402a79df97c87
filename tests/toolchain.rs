//! clang's own builds through offload-kit (issue 40): every release in
//! `tools/llvm-releases` builds each mode below once with its own tools and
//! once with `clang -B DIR`, where DIR is what `offload-kit dropins
//! --llvm-version N DIR` writes; every file the build leaves must be byte
//! for byte the same. This is the guard for native hardening (input,
//! output, budget) breaking what clang runs: clang passes `-input=/dev/null`,
//! temporary files and `-type=a` archives.
//!
//! Each build runs in the same directory (so paths inside outputs agree),
//! LLVM's own build twice: a mode LLVM cannot build, or not reproducibly,
//! is reported as skipped with its reason, as is one that needs a tool
//! offload-kit does not model for that release (`dropins` says which).
//! [`EXPECTED_SKIPS`] pins every skip: a new one fails the test, so no
//! skip is ever counted as a pass. `-###` shows that clang ran the
//! drop-in of each tool it used.
//!
//! A missing release fails, as in `tests/llvm_diff.rs`, unless
//! `OFFLOAD_KIT_NO_LLVM=1`. The test prints the table of modes × releases
//! the README shows, and its time.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const OFFLOAD_KIT: &str = env!("CARGO_BIN_EXE_offload-kit");
const TIMEOUT: Duration = Duration::from_secs(120);

/// The HIP compile every HIP mode starts from: two GPUs, one with a
/// feature setting, `-cuid` fixed so that LLVM's output is reproducible.
const HIP: &[&str] = &[
    "-x",
    "hip",
    "--offload-arch=gfx906",
    "--offload-arch=gfx90a:xnack+",
    "-nogpulib",
    "-nogpuinc",
    "-cuid=abc",
];

/// The link of relocatable device code (`--hip-link`), to a shared library.
const HIP_LINK: &[&str] = &[
    "--hip-link",
    "-fgpu-rdc",
    "--offload-arch=gfx906",
    "--offload-arch=gfx90a:xnack+",
    "-nogpulib",
    "-shared",
    "-fuse-ld=lld",
];

/// OpenMP offloading to gfx906: `--offload-arch` from 15; 13 and 14 name
/// the target triple and the GPU separately.
fn openmp(n: u32) -> &'static [&'static str] {
    if n >= 15 {
        &["-fopenmp", "--offload-arch=gfx906", "-nogpulib"]
    } else {
        &[
            "-fopenmp",
            "-fopenmp-targets=amdgcn-amd-amdhsa",
            "-Xopenmp-target=amdgcn-amd-amdhsa",
            "-march=gfx906",
            "-nogpulib",
        ]
    }
}

/// One step of a build.
enum Step {
    /// clang of the release with these arguments.
    Clang(Vec<String>),
    /// The release's `llvm-ar` with these arguments.
    Ar(Vec<String>),
}

/// A way of building: its name in the table and its steps for release `n`.
struct Mode {
    name: &'static str,
    steps: fn(u32) -> Vec<Step>,
}

fn clang(parts: &[&[&str]]) -> Step {
    Step::Clang(
        parts
            .iter()
            .flat_map(|p| p.iter())
            .map(|s| s.to_string())
            .collect(),
    )
}

/// `-no-hip-rt` (from 15) keeps the HIP runtime out of the host link.
fn no_hip_rt(n: u32) -> &'static [&'static str] {
    if n >= 15 {
        &["-no-hip-rt"]
    } else {
        &[]
    }
}

const MODES: &[Mode] = &[
    Mode {
        name: "hip -c",
        steps: |_| vec![clang(&[HIP, &["-c", "k.hip", "-o", "k.o"]])],
    },
    Mode {
        name: "hip -fgpu-rdc -c",
        steps: |_| vec![clang(&[HIP, &["-fgpu-rdc", "-c", "k.hip", "-o", "k.o"]])],
    },
    Mode {
        name: "hip --offload-compress -c",
        steps: |_| {
            vec![clang(&[
                HIP,
                &["--offload-compress", "-c", "k.hip", "-o", "k.o"],
            ])]
        },
    },
    Mode {
        name: "hip --offload-new-driver -c",
        steps: |_| {
            vec![clang(&[
                HIP,
                &["--offload-new-driver", "-c", "k.hip", "-o", "k.o"],
            ])]
        },
    },
    Mode {
        name: "hip -fgpu-rdc --hip-link -shared",
        steps: |n| {
            vec![
                clang(&[HIP, &["-fgpu-rdc", "-fPIC", "-c", "k.hip", "-o", "k.o"]]),
                clang(&[HIP_LINK, no_hip_rt(n), &["k.o", "-o", "libk.so"]]),
            ]
        },
    },
    Mode {
        name: "openmp -c",
        steps: |n| vec![clang(&[openmp(n), &["-c", "omp.c", "-o", "omp.o"]])],
    },
    Mode {
        name: "openmp --offload-new-driver -c",
        steps: |n| {
            vec![clang(&[
                openmp(n),
                &["--offload-new-driver", "-c", "omp.c", "-o", "omp.o"],
            ])]
        },
    },
    Mode {
        name: "hip -save-temps -c",
        steps: |_| vec![clang(&[HIP, &["-save-temps", "-c", "k.hip", "-o", "k.o"]])],
    },
    Mode {
        name: "hip -E",
        steps: |_| vec![clang(&[HIP, &["-E", "k.hip", "-o", "k.hipi"]])],
    },
    Mode {
        name: "hip -S -emit-llvm",
        steps: |_| vec![clang(&[HIP, &["-S", "-emit-llvm", "k.hip", "-o", "k.ll"]])],
    },
    Mode {
        name: "hip device archive (-lk2, --hip-link)",
        steps: |n| {
            vec![
                clang(&[
                    HIP,
                    &[
                        "-cuid=k2",
                        "-fgpu-rdc",
                        "-fPIC",
                        "-c",
                        "k2.hip",
                        "-o",
                        "k2.o",
                    ],
                ]),
                Step::Ar(common::strings(&["rcs", "libk2.a", "k2.o"])),
                clang(&[HIP, &["-fgpu-rdc", "-fPIC", "-c", "k.hip", "-o", "k.o"]]),
                clang(&[
                    HIP_LINK,
                    no_hip_rt(n),
                    &["k.o", "-L.", "-lk2", "-o", "libk.so"],
                ]),
            ]
        },
    },
    Mode {
        name: "hip feature settings -fgpu-rdc -c",
        steps: |_| {
            vec![clang(&[
                &[
                    "-x",
                    "hip",
                    "-nogpulib",
                    "-nogpuinc",
                    "-cuid=abc",
                    "-fgpu-rdc",
                ],
                &[
                    "--offload-arch=gfx90a:sramecc+:xnack-",
                    "--offload-arch=gfx908:xnack+",
                    "--offload-arch=gfx1030",
                ],
                &["-c", "k.hip", "-o", "k.o"],
            ])]
        },
    },
];

/// Every skip the table may hold: (release, mode, what the reason starts
/// with). Anything else skipped fails the test.
const EXPECTED_SKIPS: &[(u32, &str, &str)] = &[
    (13, "hip --offload-compress -c", LLVM_CANNOT),
    (14, "hip --offload-compress -c", LLVM_CANNOT),
    (15, "hip --offload-compress -c", LLVM_CANNOT),
    (16, "hip --offload-compress -c", LLVM_CANNOT),
    (13, "hip --offload-new-driver -c", LLVM_CANNOT),
    (14, "hip --offload-new-driver -c", LLVM_CANNOT),
    (13, "openmp --offload-new-driver -c", LLVM_CANNOT),
    (14, "openmp --offload-new-driver -c", LLVM_CANNOT),
    (15, "openmp -c", NOT_MODELLED),
    (15, "openmp --offload-new-driver -c", NOT_MODELLED),
];

const LLVM_CANNOT: &str = "LLVM cannot build it";
const NOT_MODELLED: &str = "not modelled";
const NOT_REPRODUCIBLE: &str = "LLVM's own build is not reproducible";

/// What one mode of one release came to.
#[derive(Debug)]
enum Outcome {
    /// Every file the same; the offload tools clang ran from DIR.
    Same(Vec<String>),
    Skipped(String),
    Failed(String),
}

fn releases() -> Vec<u32> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tools/llvm-releases"))
        .expect("tools/llvm-releases");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.trim().parse().expect("a release number"))
        .filter(|&n| {
            common::llvm_bin(n, &["clang", "clang-offload-bundler", "llvm-ar", "ld.lld"]).is_some()
        })
        .collect()
}

/// The files a build left, by name.
type Files = Vec<(String, Vec<u8>)>;

/// The files [`write_sources`] writes.
const SOURCES: &[&str] = &["k.hip", "k2.hip", "omp.c"];

/// The sources every build starts from.
fn write_sources(dir: &Path) {
    let k = include_str!("fixtures/k.hip");
    std::fs::write(dir.join("k.hip"), k).expect("k.hip");
    std::fs::write(
        dir.join("k2.hip"),
        k.replace("void k(int *p)", "void k2(int *p)"),
    )
    .expect("k2.hip");
    std::fs::write(
        dir.join("omp.c"),
        "int f(int *p, int n) {\n#pragma omp target teams distribute parallel for map(tofrom: p[0:n])\n  for (int i = 0; i < n; ++i) p[i] += 1;\n  return p[0];\n}\n",
    )
    .expect("omp.c");
}

/// Run `steps` of release `n` in a fresh `build` (with `-B dropins` when
/// given); the files left there, by name, or the first failing step's
/// error. With `dropins`, also the offload tools each step's `-###` named.
fn build(
    n: u32,
    work: &Path,
    steps: &[Step],
    dropins: Option<&Path>,
) -> Result<(Files, Vec<String>), String> {
    // The sources stay (OpenMP names its kernels after the source file's
    // inode); everything else goes.
    let dir = work.join("build");
    if dir.is_dir() {
        for e in std::fs::read_dir(&dir).expect("read build") {
            let p = e.expect("entry").path();
            if !SOURCES.iter().any(|s| p.ends_with(s)) {
                std::fs::remove_file(&p).expect("remove an earlier output");
            }
        }
    } else {
        std::fs::create_dir_all(&dir).expect("mkdir");
        write_sources(&dir);
    }
    let bin = PathBuf::from(format!("/usr/lib/llvm-{n}/bin"));
    let mut tools = Vec::new();
    for step in steps {
        let mut cmd = match step {
            Step::Clang(args) => {
                let mut c = Command::new(bin.join("clang"));
                if let Some(d) = dropins {
                    c.arg("-B").arg(d);
                }
                c.args(args);
                c
            }
            Step::Ar(args) => {
                let mut c = Command::new(bin.join("llvm-ar"));
                c.args(args);
                c
            }
        };
        if let (Step::Clang(args), Some(d)) = (step, dropins) {
            let mut c = Command::new(bin.join("clang"));
            c.arg("-B").arg(d).args(args).arg("-###");
            let o = common::exec(c, &dir, TIMEOUT);
            tools.extend(offload_tools_run(&o.stderr));
        }
        cmd.env("SOURCE_DATE_EPOCH", "0");
        let o = common::exec(cmd, &dir, TIMEOUT);
        if !o.ok() {
            let first = o
                .stderr
                .lines()
                .find(|l| l.contains("error"))
                .unwrap_or(o.stderr.lines().next().unwrap_or(""))
                .to_string();
            return Err(format!("{}: {first}", o.status()));
        }
    }
    let mut files = Vec::new();
    for e in std::fs::read_dir(&dir).expect("read build") {
        let e = e.expect("entry");
        let name = e.file_name().to_string_lossy().into_owned();
        if !SOURCES.contains(&name.as_str()) {
            files.push((name, std::fs::read(e.path()).expect("read output")));
        }
    }
    files.sort();
    Ok((files, tools))
}

/// The offload tools (by path) in clang's `-###` lines.
fn offload_tools_run(text: &str) -> Vec<String> {
    const NAMES: &[&str] = &[
        "clang-offload-bundler",
        "clang-offload-packager",
        "llvm-offload-binary",
    ];
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix('"'))
        .filter_map(|l| l.split('"').next())
        .filter(|p| NAMES.iter().any(|n| p.ends_with(&format!("/{n}"))))
        .map(str::to_string)
        .collect()
}

/// The files of `a` and `b` that differ or are only in one, by name.
fn differing(a: &[(String, Vec<u8>)], b: &[(String, Vec<u8>)]) -> Vec<String> {
    let mut names: Vec<&String> = a.iter().chain(b).map(|(n, _)| n).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| {
            let x = a.iter().find(|(m, _)| m == *n);
            let y = b.iter().find(|(m, _)| m == *n);
            x.map(|f| &f.1) != y.map(|f| &f.1)
        })
        .cloned()
        .collect()
}

/// One mode of release `n`: LLVM's build twice, then through `dropins`.
fn run_mode(n: u32, mode: &Mode, work: &Path, dropins: &Path, not_modelled: &[String]) -> Outcome {
    let steps = (mode.steps)(n);
    let first = match build(n, work, &steps, None) {
        Ok((f, _)) => f,
        Err(e) => return Outcome::Skipped(format!("{LLVM_CANNOT} ({e})")),
    };
    match build(n, work, &steps, None) {
        Ok((again, _)) if differing(&first, &again).is_empty() => {}
        Ok((again, _)) => {
            return Outcome::Skipped(format!(
                "{NOT_REPRODUCIBLE} ({})",
                differing(&first, &again).join(", ")
            ))
        }
        Err(e) => return Outcome::Skipped(format!("{NOT_REPRODUCIBLE} (second build: {e})")),
    }
    let (ours, tools) = match build(n, work, &steps, Some(dropins)) {
        Ok(r) => r,
        Err(e) => return Outcome::Failed(format!("through the drop-ins: {e}")),
    };
    let mut used = Vec::new();
    for t in &tools {
        let name = t.rsplit('/').next().unwrap_or(t).to_string();
        if Path::new(t).parent() != Some(dropins) {
            if not_modelled.contains(&name) {
                return Outcome::Skipped(format!("{NOT_MODELLED}: LLVM {n}'s {name}"));
            }
            return Outcome::Failed(format!("clang ran {t}, not the drop-in"));
        }
        if !used.contains(&name) {
            used.push(name);
        }
    }
    if used.is_empty() {
        return Outcome::Failed("clang ran no offload tool: the mode tests nothing".into());
    }
    match differing(&first, &ours) {
        d if d.is_empty() => Outcome::Same(used),
        d => Outcome::Failed(format!("differs from LLVM's: {}", d.join(", "))),
    }
}

#[test]
fn clang_builds_through_the_dropins_byte_for_byte() {
    let started = Instant::now();
    let releases = releases();
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("toolchain");
    let _ = std::fs::remove_dir_all(&root);
    // One drop-in directory per release, as a user makes it; the tools it
    // skips are those not modelled.
    let mut not_modelled = std::collections::HashMap::new();
    for &n in &releases {
        let dir = root.join(format!("dropins-{n}"));
        let out = common::run_ok(
            Command::new(OFFLOAD_KIT)
                .args(["dropins", "--llvm-version", &n.to_string()])
                .arg(&dir),
        );
        let skipped: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.strip_prefix("skipped "))
            .filter_map(|l| l.split(':').next())
            .map(str::to_string)
            .collect();
        not_modelled.insert(n, skipped);
    }
    let cells: Vec<(u32, usize)> = releases
        .iter()
        .flat_map(|&n| (0..MODES.len()).map(move |m| (n, m)))
        .collect();
    let outcomes = common::par_map(2, &cells, |&(n, m)| {
        let work = root.join(format!("{n}")).join(format!("mode{m}"));
        let dropins = root.join(format!("dropins-{n}"));
        run_mode(n, &MODES[m], &work, &dropins, &not_modelled[&n])
    });

    // The table the README shows.
    let mut table = format!(
        "| mode | {} |\n|---|",
        releases
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(" | ")
    );
    table.push_str(&"---|".repeat(releases.len()));
    for (m, mode) in MODES.iter().enumerate() {
        table.push_str(&format!("\n| `{}` |", mode.name));
        for (i, _) in releases.iter().enumerate() {
            let o = &outcomes[i * MODES.len() + m];
            table.push_str(match o {
                Outcome::Same(_) => " same |",
                Outcome::Skipped(r) if r.starts_with(LLVM_CANNOT) => " LLVM cannot |",
                Outcome::Skipped(r) if r.starts_with(NOT_MODELLED) => " not modelled |",
                Outcome::Skipped(_) => " not reproducible |",
                Outcome::Failed(_) => " **FAILS** |",
            });
        }
    }
    eprintln!("{table}");
    let mut problems = Vec::new();
    let (mut same, mut skipped) = (0, 0);
    for (&(n, m), o) in cells.iter().zip(&outcomes) {
        let name = MODES[m].name;
        match o {
            Outcome::Same(tools) => {
                same += 1;
                eprintln!("LLVM {n} `{name}`: same (through {})", tools.join(", "));
            }
            Outcome::Skipped(r) => {
                skipped += 1;
                eprintln!("LLVM {n} `{name}`: skipped: {r}");
                let pinned = EXPECTED_SKIPS
                    .iter()
                    .any(|&(en, em, er)| en == n && em == name && r.starts_with(er));
                if !pinned {
                    problems.push(format!(
                        "LLVM {n} `{name}`: skipped, and not expected to be: {r}"
                    ));
                }
            }
            Outcome::Failed(r) => problems.push(format!("LLVM {n} `{name}`: {r}")),
        }
    }
    eprintln!(
        "toolchain: {same} builds byte-identical through the drop-ins, {skipped} skipped, {} problems, in {:.0?}",
        problems.len(),
        started.elapsed()
    );
    common::assert_no_mismatches(&problems);
    assert!(same > 0 || releases.is_empty(), "no build was compared");
}

/// `/dev/null`, process substitution's `/dev/fd/N` and a named FIFO with
/// a writer are read by every drop-in as LLVM reads them; the native
/// commands take `/dev/null` as empty and still refuse the rest.
#[test]
fn dropins_read_what_llvm_reads() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("toolchain-streams");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let dropins = dir.join("bin");
    common::run_ok(
        Command::new(OFFLOAD_KIT)
            .args(["dropins", "--llvm-version", "22"])
            .arg(&dropins),
    );
    let bundler = dropins.join("clang-offload-bundler");
    std::fs::write(dir.join("dev.bin"), b"device code").expect("dev");
    // clang's own fat-binary command: the host input is /dev/null.
    let sh = |script: &str| {
        let mut c = Command::new("bash");
        c.arg("-c").arg(script).current_dir(&dir);
        common::exec(c, &dir, Duration::from_secs(30))
    };
    let b = bundler.display();
    let o = sh(&format!(
        "{b} -type=o -bundle-align=4096 -targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx906 -input=/dev/null -input=dev.bin -output=fat.hipfb"
    ));
    assert!(o.ok(), "/dev/null as the host input: {}", o.stderr);
    // Process substitution and a FIFO fed by a writer read as the file.
    let o = sh(&format!(
        "{b} -list -type=o -input=<(cat fat.hipfb) && mkfifo p && (cat fat.hipfb > p &) && {b} -list -type=o -input=p"
    ));
    assert!(o.ok(), "process substitution and a FIFO: {}", o.stderr);
    // As LLVM 22 lists the file by name, once for each.
    if let Some(llvm) = common::llvm_tool(22, "clang-offload-bundler") {
        let l = sh(&format!(
            "{} -list -type=o -input=fat.hipfb",
            llvm.display()
        ));
        assert!(l.ok() && !l.stdout.is_empty(), "{}", l.stderr);
        assert_eq!(o.stdout_text(), l.stdout_text().repeat(2));
    }
    // /dev/zero stops at the budget with CLI-6, not at the memory's end.
    let o = sh(&format!(
        "OFFLOAD_KIT_MAX_MEMORY=2M {b} -list -type=o -input=/dev/zero"
    ));
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("memory budget"), "{}", o.stderr);
    // The native commands: /dev/null is empty, a FIFO is still refused
    // (never waited on).
    let o = sh(&format!("{OFFLOAD_KIT} list /dev/null"));
    assert!(!o.stderr.contains("device"), "{}", o.stderr);
    let o = sh(&format!("{OFFLOAD_KIT} list p"));
    assert_eq!(o.code, Some(1));
    assert!(o.stderr.contains("a FIFO"), "{}", o.stderr);
}

/// A drop-in's release comes from the directory it was started from;
/// `--llvm-version` still wins; a bad configuration is an error naming it.
#[test]
fn dropin_directory_names_the_release() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("toolchain-release");
    let _ = std::fs::remove_dir_all(&dir);
    let version = |bin: &Path, extra: &[&str]| {
        let o = common::exec(
            {
                let mut c = Command::new(bin);
                c.args(extra).arg("--version");
                c
            },
            &dir,
            TIMEOUT,
        );
        o.stdout_text() + &o.stderr
    };
    let d19 = dir.join("19");
    let o = common::run_ok(
        Command::new(OFFLOAD_KIT)
            .args(["dropins", "--llvm-version", "19"])
            .arg(&d19),
    );
    let listed = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        !listed.contains("llvm-offload-binary"),
        "19 has no llvm-offload-binary: {listed}"
    );
    assert!(version(&d19.join("clang-offload-bundler"), &[]).contains("reproducing LLVM 19"));
    assert!(version(&d19.join("clang-offload-packager"), &[]).contains("reproducing LLVM 19"));
    assert!(
        version(&d19.join("clang-offload-bundler"), &["--llvm-version=16"])
            .contains("reproducing LLVM 16")
    );
    // Rewritten for 22 in place: llvm-offload-binary appears.
    common::run_ok(
        Command::new(OFFLOAD_KIT)
            .args(["dropins", "--llvm-version", "22"])
            .arg(&d19),
    );
    assert!(version(&d19.join("llvm-offload-binary"), &[]).contains("reproducing LLVM 22"));
    // 15: the bundler only; its packager is not modelled and said so.
    let d15 = dir.join("15");
    let o = common::run_ok(
        Command::new(OFFLOAD_KIT)
            .args(["dropins", "--llvm-version", "15"])
            .arg(&d15),
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("skipped clang-offload-packager"));
    assert!(!d15.join("clang-offload-packager").exists());
    // A file that is not offload-kit is not replaced without --force.
    let d = dir.join("theirs");
    std::fs::create_dir_all(&d).expect("mkdir");
    std::fs::write(d.join("clang-offload-bundler"), "#!/bin/sh\n").expect("write");
    let o = common::run(
        Command::new(OFFLOAD_KIT)
            .args(["dropins", "--llvm-version", "22"])
            .arg(&d),
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        std::fs::read(d.join("clang-offload-bundler")).expect("kept"),
        b"#!/bin/sh\n"
    );
    // A malformed configuration stops the drop-in with its name.
    std::fs::write(d19.join("offload-kit-dropins.conf"), "llvm-version = 18\n").expect("write");
    let v = version(&d19.join("clang-offload-bundler"), &[]);
    assert!(
        v.contains("offload-kit-dropins.conf") && v.contains("18"),
        "{v}"
    );
}

/// A wrapper script named `llvm-objdump` that runs offload-kit, first on
/// PATH: the drop-in hands an unmodelled option on once, and stops when it
/// is reached again, naming the variable to set.
#[test]
fn no_dropin_hands_a_command_to_itself() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("toolchain-self");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let script = dir.join("llvm-objdump");
    std::fs::write(
        &script,
        format!("#!/bin/bash\nexec -a llvm-objdump {OFFLOAD_KIT} \"$@\"\n"),
    )
    .expect("script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let hard = dir.join("hard");
    std::fs::create_dir_all(&hard).expect("mkdir");
    let mut c = Command::new(&script);
    c.args(["-d", "/bin/true"]).env("PATH", &dir);
    let o = common::exec(c, &dir, Duration::from_secs(20));
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stderr.contains("OFFLOAD_KIT_REAL_LLVM_OBJDUMP"),
        "{}",
        o.stderr
    );
    // A hard link to offload-kit under the tool's name is offload-kit too.
    if std::fs::hard_link(OFFLOAD_KIT, hard.join("llvm-objdump")).is_ok() {
        let mut c = Command::new(hard.join("llvm-objdump"));
        c.args(["-d", "/bin/true"]).env("PATH", &hard);
        let o = common::exec(c, &dir, Duration::from_secs(20));
        assert_eq!(o.code, Some(1), "{}", o.stderr);
        assert!(
            o.stderr.contains("OFFLOAD_KIT_REAL_LLVM_OBJDUMP"),
            "{}",
            o.stderr
        );
    }
}
