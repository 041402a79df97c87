//! `offload-kit inspect` on clang-built code objects (LLVM 22): the facts
//! read from each object's own header, compressed bundles, directories, and
//! CO-1 (an entry ID that disagrees with its code object), with the
//! mismatched bundles written by LLVM 22's own `clang-offload-bundler`,
//! which checks nothing.

mod common;

use common::{llvm_bin, run_ok};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const EXE: &str = env!("CARGO_BIN_EXE_offload-kit");
const HOST: &str = "host-x86_64-unknown-linux-gnu-";

/// Objects built once: `k.o` (gfx906, gfx90a:xnack+, gfx1100), `kc.o`
/// (the same but gfx1100, `--offload-compress`) and the code objects
/// extracted from `k.o`.
struct Built {
    dir: PathBuf,
    bin: PathBuf,
}

fn built() -> Option<&'static Built> {
    static B: OnceLock<Option<Built>> = OnceLock::new();
    B.get_or_init(|| {
        let bin = llvm_bin(22, &["clang", "clang-offload-bundler"])?;
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("inspect");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tree/sub")).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/k.hip");
        // A second kernel, so that two objects link into one library.
        let text = std::fs::read_to_string(&src).unwrap();
        let src2 = dir.join("k2.hip");
        std::fs::write(&src2, text.replace("void k(", "void k2(")).unwrap();
        let hip_of = |src: &Path, extra: &[&str], out: &str| {
            run_ok(
                Command::new(bin.join("clang"))
                    .current_dir(&dir)
                    .args(["-x", "hip", "-nogpulib", "-nogpuinc"])
                    .args(["--offload-arch=gfx906", "--offload-arch=gfx90a:xnack+"])
                    .args(extra)
                    .arg("-c")
                    .arg(src)
                    .args(["-o", out]),
            );
        };
        let hip = |extra: &[&str], out: &str| hip_of(&src, extra, out);
        hip(&["--offload-arch=gfx1100"], "k.o");
        hip(&["--offload-compress"], "kc.o");
        run_ok(
            Command::new(bin.join("clang"))
                .current_dir(&dir)
                .args([
                    "-x",
                    "hip",
                    "-nogpulib",
                    "-nogpuinc",
                    "--offload-arch=gfx9-generic",
                ])
                .arg("-c")
                .arg(&src)
                .args(["-o", "kg.o"]),
        );
        // A shared library of two HIP objects: a .hip_fatbin of 2 bundles.
        hip(&["-fPIC"], "kp.o");
        hip_of(&src2, &["-fPIC"], "k2p.o");
        run_ok(Command::new(bin.join("clang")).current_dir(&dir).args([
            "-shared",
            "-nostdlib",
            "-fuse-ld=lld",
            "kp.o",
            "k2p.o",
            "-o",
            "lib2.so",
        ]));
        for (id, out) in [
            ("hipv4-amdgcn-amd-amdhsa--gfx906", "gfx906.co"),
            (
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
                "gfx90a-xnack-on.co",
            ),
        ] {
            run_ok(
                Command::new(EXE)
                    .current_dir(&dir)
                    .args(["extract", "k.o", "--id", id, "-o", out]),
            );
        }
        Some(Built { dir, bin })
    })
    .as_ref()
}

/// `inspect --json` of `paths`: exit code and the document.
fn inspect(dir: &Path, paths: &[&str]) -> (i32, Value) {
    let out = Command::new(EXE)
        .current_dir(dir)
        .arg("inspect")
        .args(paths)
        .arg("--json")
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "inspect --json printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(doc["schema"], "offload-kit-inspect/1");
    (out.status.code().unwrap_or(-1), doc)
}

/// `clang-offload-bundler -type=bc` of LLVM 22: an empty host and `co` under `id`.
fn bundle_as(b: &Built, id: &str, co: &str, out: &str, compress: bool) {
    let mut cmd = Command::new(b.bin.join("clang-offload-bundler"));
    cmd.current_dir(&b.dir)
        .arg("-type=bc")
        .arg(format!("-targets={},{id}", HOST.trim_end_matches('-')))
        .args(["-input=/dev/null", &format!("-input={co}")])
        .arg(format!("-output={out}"));
    if compress {
        cmd.arg("-compress");
    }
    run_ok(&mut cmd);
}

#[test]
fn facts_of_clang_built_code_objects() {
    let Some(b) = built() else { return };
    let (code, doc) = inspect(&b.dir, &["k.o"]);
    assert_eq!(code, 0, "{doc:#}");
    let r = &doc["files"][0]["report"];
    assert_eq!(r["container"], "elf");
    assert_eq!(
        r["summary"]["targets"],
        serde_json::json!(["gfx1100", "gfx906", "gfx90a:xnack+"])
    );
    assert_eq!(r["summary"]["code_objects"], 3);
    assert_eq!(r["bundles"][0]["section"], ".hip_fatbin");
    for e in r["entries"].as_array().unwrap() {
        let id = e["id"].as_str().unwrap();
        if id.starts_with("host-") {
            continue;
        }
        let o = &e["object"];
        assert_eq!(o["kind"], "amdgpu", "{id}: {o}");
        // The ID's target ID is the object's own, read from e_flags.
        let tid = id.rsplit_once("--").unwrap().1;
        let (processor, xnack) = match tid {
            "gfx906" => ("gfx906", "any"),
            "gfx90a:xnack+" => ("gfx90a", "on"),
            "gfx1100" => ("gfx1100", "unsupported"),
            other => panic!("unexpected {other}"),
        };
        assert_eq!(o["processor"], processor, "{id}");
        assert_eq!(o["xnack"], xnack, "{id}");
        assert_eq!(o["elf_type"], 3, "{id}: a loadable (ET_DYN) object");
        assert_eq!(o["kernel_count"], 1, "{id}: the one kernel of k.hip");
        assert!(o["code_object_version"].as_u64().unwrap() >= 4, "{id}");
    }
    assert_eq!(r["findings"], serde_json::json!([]));
}

#[test]
fn compressed_bundle_facts() {
    let Some(b) = built() else { return };
    let (code, doc) = inspect(&b.dir, &["kc.o"]);
    assert_eq!(code, 0, "{doc:#}");
    let r = &doc["files"][0]["report"];
    let c = &r["bundles"][0]["compressed"];
    assert_eq!(c["version"], 3, "{c}");
    assert_eq!(c["method"], "zstd");
    assert!(c["compressed_size"].as_u64().unwrap() < c["uncompressed_size"].as_u64().unwrap());
    assert_eq!(r["summary"]["compressed_bundles"], 1);
    assert_eq!(
        r["summary"]["targets"],
        serde_json::json!(["gfx906", "gfx90a:xnack+"])
    );
}

#[test]
fn co_1_processor_and_features() {
    let Some(b) = built() else { return };
    // (ID, code object, whether CO-1 is broken, what the message names)
    let cases = [
        (
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
            "gfx906.co",
            true,
            "processor gfx90a",
        ),
        (
            "hipv4-amdgcn-amd-amdhsa--gfx908",
            "gfx906.co",
            true,
            "processor gfx908",
        ),
        (
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
            "gfx90a-xnack-on.co",
            true,
            "xnack-",
        ),
        (
            "hipv4-amdgcn-amd-amdhsa--gfx90a",
            "gfx90a-xnack-on.co",
            true,
            "no xnack setting",
        ),
        (
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
            "gfx90a-xnack-on.co",
            false,
            "",
        ),
        // An object for "any" loads on either setting.
        (
            "hipv4-amdgcn-amd-amdhsa--gfx906:xnack+",
            "gfx906.co",
            false,
            "",
        ),
        ("hipv4-amdgcn-amd-amdhsa--gfx906", "gfx906.co", false, ""),
    ];
    for (i, (id, co, broken, names)) in cases.into_iter().enumerate() {
        for compress in [false, true] {
            let out = format!("mis-{i}-{compress}.bundle");
            bundle_as(b, id, co, &out, compress);
            let (code, doc) = inspect(&b.dir, &[&out]);
            let r = &doc["files"][0]["report"];
            let findings = r["findings"].as_array().unwrap();
            let what = format!("{id} holding {co} (compressed: {compress}): {doc:#}");
            if !broken {
                assert_eq!((code, findings.len()), (0, 0), "{what}");
                continue;
            }
            assert_eq!((code, findings.len()), (1, 1), "{what}");
            let f = &findings[0];
            assert_eq!(f["rule"], "CO-1", "{what}");
            let msg = f["message"].as_str().unwrap();
            assert!(msg.contains(names) && msg.contains(id), "{what}");
            // At the e_flags field: byte 48 of the payload (in the
            // decompressed bundle for a compressed one).
            let entry = &r["entries"][1];
            assert_eq!(
                f["offset"].as_u64(),
                Some(entry["offset"].as_u64().unwrap() + 48),
                "{what}"
            );
            assert_eq!(entry["ccob_offset"].is_u64(), compress, "{what}");
        }
    }
}

/// LLVM main's `amdgpu<subarch>` IDs (spec/bundle-id.md ID-7) over clang
/// 22's code objects: the subarch names the processor CO-1 compares, and
/// `check --gpu` says the HIP runtime does not recognise such entries.
#[test]
fn amdgpu_subarch_ids_against_their_code_objects() {
    let Some(b) = built() else { return };
    let code = |name: &str| std::fs::read(b.dir.join(name)).unwrap();
    let (gfx906, gfx90a_on) = (code("gfx906.co"), code("gfx90a-xnack-on.co"));
    // (ID, code object, what CO-1 names, or "" when they agree)
    let cases: [(&str, &[u8], &str); 4] = [
        ("hipv4-amdgpu9.06-amd-amdhsa--", &gfx906, ""),
        ("hipv4-amdgpu9.0a-amd-amdhsa--", &gfx906, "processor gfx90a"),
        (
            "hipv4-amdgpu9.0a-amd-amdhsa--",
            &gfx90a_on,
            "no xnack setting",
        ),
        ("hip-amdgpu9.0a-amd-amdhsa--gfx90a:xnack+", &gfx90a_on, ""),
    ];
    for (i, (id, object, names)) in cases.into_iter().enumerate() {
        let name = format!("subarch-{i}.bundle");
        let host = "host-x86_64-unknown-linux-gnu-";
        std::fs::write(
            b.dir.join(&name),
            common::bundle(&[(host, b""), (id, object)]),
        )
        .unwrap();
        let (status, doc) = inspect(&b.dir, &[&name]);
        let findings = doc["files"][0]["report"]["findings"]
            .as_array()
            .unwrap()
            .clone();
        let what = format!("{id}: {doc:#}");
        if names.is_empty() {
            assert_eq!((status, findings.len()), (0, 0), "{what}");
        } else {
            assert_eq!((status, findings.len()), (1, 1), "{what}");
            assert_eq!(findings[0]["rule"], "CO-1", "{what}");
            assert!(
                findings[0]["message"].as_str().unwrap().contains(names),
                "{what}"
            );
        }
        let check = Command::new(EXE)
            .current_dir(&b.dir)
            .args(["check", "--gpu", "gfx906", &name])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&check.stdout);
        assert_eq!(check.status.code(), Some(1), "{id}: {text}");
        assert!(
            text.contains("does not recognise amdgpu<subarch>") && text.contains(id),
            "{id}: {text}"
        );
    }
}

#[test]
fn directories_are_walked() {
    let Some(b) = built() else { return };
    let tree = b.dir.join("tree");
    std::fs::copy(b.dir.join("k.o"), tree.join("k.o")).unwrap();
    std::fs::copy(b.dir.join("kc.o"), tree.join("sub/kc.o")).unwrap();
    std::fs::write(tree.join("sub/readme.txt"), "no offload code here\n").unwrap();
    // A plain ELF program: an object file, but no offload code in it.
    std::fs::copy("/bin/true", tree.join("sub/true")).unwrap();
    // A second name of k.o: read once.
    let _ = std::fs::remove_file(tree.join("sub/k-link.o"));
    std::os::unix::fs::symlink("../k.o", tree.join("sub/k-link.o")).unwrap();
    let (code, doc) = inspect(&tree, &["."]);
    assert_eq!(code, 0, "{doc:#}");
    let files: Vec<&str> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        ["./k.o", "./sub/kc.o"],
        "files without offload code are left out"
    );
    let human = Command::new(EXE)
        .current_dir(&tree)
        .args(["inspect", "."])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("4 files: 2 with offload code, 2 without, 0 unreadable; 0 finding(s)"),
        "{text}"
    );
    // A file named on the command line must be a container.
    let out = Command::new(EXE)
        .current_dir(&tree)
        .args(["inspect", "sub/readme.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("sub/readme.txt"));
}

/// `check --json` of `paths` on `gpus`: exit code and the document.
fn check(dir: &Path, paths: &[&str], gpus: &[&str]) -> (i32, Value) {
    let mut cmd = Command::new(EXE);
    cmd.current_dir(dir).arg("check").args(paths).arg("--json");
    for g in gpus {
        cmd.args(["--gpu", g]);
    }
    let out = cmd.output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check --json printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(doc["schema"], "offload-kit-check/1");
    (out.status.code().unwrap_or(-1), doc)
}

#[test]
fn check_picks_as_the_runtime() {
    let Some(b) = built() else { return };
    // (file, GPU, runs, pick or the reason's words)
    let cases = [
        ("k.o", "gfx90a:xnack+", true, "compatible"),
        ("k.o", "gfx90a:sramecc-:xnack+", true, "compatible"),
        ("k.o", "gfx90a:sramecc+:xnack+", true, "compatible"),
        (
            "k.o",
            "gfx90a:xnack-",
            false,
            "needs xnack+, the GPU has xnack-",
        ),
        // No settings given: each mode is checked; it runs with xnack+.
        ("k.o", "gfx90a", true, "compatible"),
        (
            "k.o",
            "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+",
            true,
            "compatible",
        ),
        ("k.o", "gfx906:sramecc-:xnack-", true, "compatible"),
        ("k.o", "gfx1100", true, "exact"),
        ("k.o", "gfx1101", false, "no entry for gfx1101"),
        ("kc.o", "gfx906", true, "compatible"),
        ("kg.o", "gfx906:xnack-", true, "generic"),
        ("kg.o", "gfx90c", true, "generic"),
        ("kg.o", "gfx90a:xnack-", false, "no entry for gfx90a"),
    ];
    for (file, gpu, runs, what) in cases {
        let (code, doc) = check(&b.dir, &[file], &[gpu]);
        let v = &doc["files"][0]["gpus"][0];
        let ctx = format!("{file} on {gpu}: {doc:#}");
        assert_eq!(v["runs"], runs, "{ctx}");
        assert_eq!(code, i32::from(!runs), "{ctx}");
        let bundle = &v["bundles"][0];
        if runs {
            assert_eq!(bundle["pick"], what, "{ctx}");
        } else {
            assert!(bundle["why_not"].as_str().unwrap().contains(what), "{ctx}");
        }
    }
}

#[test]
fn check_answers_per_mode_and_reads_the_machines_gpus() {
    let Some(b) = built() else { return };
    // gfx90a named without settings: k.o has only gfx90a:xnack+.
    let (code, doc) = check(&b.dir, &["k.o"], &["gfx90a"]);
    let v = &doc["files"][0]["gpus"][0];
    assert_eq!((code, &v["runs"]), (0, &Value::Bool(true)), "{doc:#}");
    let modes: Vec<(String, bool)> = v["modes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["settings"].as_str().unwrap().to_string(),
                m["runs"].as_bool().unwrap(),
            )
        })
        .collect();
    let want = [
        ("sramecc+:xnack+", true),
        ("sramecc+:xnack-", false),
        ("sramecc-:xnack+", true),
        ("sramecc-:xnack-", false),
    ];
    assert_eq!(modes, want.map(|(s, r)| (s.to_string(), r)), "{doc:#}");
    let text = kit(&b.dir, &["check", "k.o", "--gpu", "gfx90a"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("runs with xnack+"), "{text}");
    // A GPU whose processor has no such features has no modes.
    let (_, doc) = check(&b.dir, &["k.o"], &["gfx1100"]);
    assert!(doc["files"][0]["gpus"][0].get("modes").is_none(), "{doc:#}");

    // --gpu auto: a made-up KFD topology (a CPU node, a gfx90a with
    // SRAM ECC, a gfx1100), and HSA_XNACK=0.
    let topo = b.dir.join("kfd-nodes");
    for (node, props) in [
        ("0", "cpu_cores_count 16\ngfx_target_version 0\n"),
        ("1", "gfx_target_version 90010\ncapability 67117184\n"),
        ("2", "gfx_target_version 110000\ncapability 0\n"),
    ] {
        std::fs::create_dir_all(topo.join(node)).unwrap();
        std::fs::write(topo.join(node).join("properties"), props).unwrap();
    }
    let auto = |xnack: &str| {
        let out = Command::new(EXE)
            .current_dir(&b.dir)
            .args(["check", "k.o", "--gpu", "auto", "--json"])
            .env("OFFLOAD_KIT_KFD_TOPOLOGY", &topo)
            .env("HSA_XNACK", xnack)
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let gpus: Vec<(String, bool)> = doc["files"][0]["gpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["gpu"].as_str().unwrap().to_string(),
                    g["runs"].as_bool().unwrap(),
                )
            })
            .collect();
        (out.status.code(), gpus)
    };
    let s = |v: &[(&str, bool)]| {
        v.iter()
            .map(|(g, r)| (g.to_string(), *r))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        auto("0"),
        (
            Some(1),
            s(&[("gfx90a:sramecc+:xnack-", false), ("gfx1100", true)])
        )
    );
    assert_eq!(
        auto("1"),
        (
            Some(0),
            s(&[("gfx90a:sramecc+:xnack+", true), ("gfx1100", true)])
        )
    );
    // No topology: a clear message, exit 1.
    let out = Command::new(EXE)
        .current_dir(&b.dir)
        .args(["check", "k.o", "--gpu", "auto"])
        .env("OFFLOAD_KIT_KFD_TOPOLOGY", b.dir.join("no-such-dir"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no KFD topology") && err.contains("--gpu"),
        "{err}"
    );
}

#[test]
fn check_sees_what_the_loader_refuses_and_sums_up() {
    let Some(b) = built() else { return };
    // LLVM 22's bundler puts a gfx906 object under a gfx90a:xnack+ ID: the
    // runtime would pick it, the loader refuse it.
    bundle_as(
        b,
        "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
        "gfx906.co",
        "liar.bundle",
        false,
    );
    let (code, doc) = check(&b.dir, &["liar.bundle"], &["gfx90a:xnack+"]);
    let v = &doc["files"][0]["gpus"][0];
    assert_eq!((code, &v["runs"]), (1, &Value::Bool(false)), "{doc:#}");
    assert_eq!(v["bundles"][0]["refused_by_loader"], true, "{doc:#}");
    // Several files and GPUs: a line per GPU across the files.
    let out = Command::new(EXE)
        .current_dir(&b.dir)
        .args([
            "check", "k.o", "kc.o", "kg.o", "--gpu", "gfx906", "--gpu", "gfx1100",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("gfx906: 3 of 3 files run; 0 lack a code object in some bundle"),
        "{text}"
    );
    assert!(
        text.contains("gfx1100: 1 of 3 files run; 2 lack a code object in some bundle"),
        "{text}"
    );
    // A GPU that is no target ID is a usage error.
    let out = Command::new(EXE)
        .current_dir(&b.dir)
        .args(["check", "k.o", "--gpu", "gfx9999"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--gpu 'gfx9999'"));
}

#[test]
fn extract_by_gpu_and_numbered_names() {
    let Some(b) = built() else { return };
    let run = |args: &[&str]| kit(&b.dir, args);
    // What check picks, extracted: the gfx9-generic object for a gfx906.
    let out = run(&["extract", "kg.o", "--gpu", "gfx906:xnack-", "-o", "pick.co"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&[
        "extract",
        "kg.o",
        "--id",
        "hipv4-amdgcn-amd-amdhsa--gfx9-generic",
        "-o",
        "generic.co",
    ]);
    assert!(out.status.success());
    let pick = std::fs::read(b.dir.join("pick.co")).unwrap();
    assert_eq!(pick, std::fs::read(b.dir.join("generic.co")).unwrap());
    assert_eq!(&pick[..4], b"\x7fELF");
    // None fits: exit 1, the reason, nothing written.
    let out = run(&["extract", "k.o", "--gpu", "gfx90a:xnack-", "-o", "none.co"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs xnack+, the GPU has xnack-"), "{err}");
    assert!(!b.dir.join("none.co").exists());
    // Two bundles: --all names each file with its bundle's number first,
    // as llvm-objdump-22 --offloading does; --gpu takes one per bundle.
    let l = run(&["list", "lib2.so", "--json"]);
    let listing: Value = serde_json::from_slice(&l.stdout).unwrap();
    let bundles: std::collections::BTreeSet<u64> = listing["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["bundle"].as_u64().unwrap())
        .collect();
    assert_eq!(bundles.len(), 2, "{listing:#}");
    let _ = std::fs::remove_dir_all(b.dir.join("all"));
    assert!(run(&["extract", "lib2.so", "--all", "--dir", "all"])
        .status
        .success());
    let names = names_in(&b.dir.join("all"));
    assert!(
        names.contains(&"0.hipv4-amdgcn-amd-amdhsa--gfx906".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"1.hipv4-amdgcn-amd-amdhsa--gfx906".to_string()),
        "{names:?}"
    );
    let _ = std::fs::remove_dir_all(b.dir.join("gpu"));
    let out = run(&["extract", "lib2.so", "--gpu", "gfx906", "--dir", "gpu"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names = names_in(&b.dir.join("gpu"));
    assert_eq!(
        names,
        [
            "0.hipv4-amdgcn-amd-amdhsa--gfx906",
            "1.hipv4-amdgcn-amd-amdhsa--gfx906"
        ]
    );
    // -o with two bundles is refused: which one is meant?
    let out = run(&["extract", "lib2.so", "--gpu", "gfx906", "-o", "one.co"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give --dir"));
    // --id with --dir: that ID from every bundle, said how many; a target
    // ID alone names the entries whose target ID is exactly it.
    for (id, dir) in [
        ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", "by-id"),
        ("gfx90a:xnack+", "by-tid"),
    ] {
        let _ = std::fs::remove_dir_all(b.dir.join(dir));
        let out = run(&["extract", "lib2.so", "--id", id, "--dir", dir]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(
            err.contains(&format!("wrote 2 file(s) into '{dir}'")),
            "{err}"
        );
        assert_eq!(
            names_in(&b.dir.join(dir)),
            [
                "0.hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
                "1.hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
            ]
        );
    }
    // A target ID alone with -o: one entry (k.o has one bundle).
    let out = run(&["extract", "k.o", "--id", "gfx90a:xnack+", "-o", "tid.co"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(b.dir.join("tid.co")).unwrap(),
        std::fs::read(b.dir.join("gfx90a-xnack-on.co")).unwrap()
    );
    // gfx90a alone is not gfx90a:xnack+: the target ID must be exact.
    let out = run(&["extract", "k.o", "--id", "gfx90a", "--dir", "none"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no entry with ID or target ID 'gfx90a'"));
}

/// The file names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn uris_list_and_extract() {
    let Some(b) = built() else { return };
    // A directory whose name holds the URI's own delimiters.
    let odd = b.dir.join("a&b #1%");
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::copy(b.dir.join("k.o"), odd.join("k.o")).unwrap();
    let run = |args: &[&str]| kit(&b.dir, args);
    let out = run(&["list", "--uri", "a&b #1%/k.o"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("hipv4-amdgcn-amd-amdhsa--gfx906\t"))
        .unwrap_or_else(|| panic!("{text}"));
    let uri = line.split('\t').nth(1).unwrap();
    assert!(
        uri.starts_with("file://a%26b%20%231%25/k.o#offset="),
        "{uri}"
    );
    assert!(run(&["extract", uri, "-o", "by-uri.co"]).status.success());
    assert_eq!(
        std::fs::read(b.dir.join("by-uri.co")).unwrap(),
        std::fs::read(b.dir.join("gfx906.co")).unwrap()
    );
    // Hex and octal numbers, `?` for `#`, as ROCm's grammar allows.
    let (offset, size): (u64, u64) = {
        let q = &uri[uri.find('#').unwrap() + 1..];
        let o = q["offset=".len()..q.find('&').unwrap()].parse().unwrap();
        let s = q[q.find("size=").unwrap() + 5..].parse().unwrap();
        (o, s)
    };
    let alt = format!("file://a%26b%20%231%25/k.o?offset={offset:#x}&size=0{size:o}");
    assert!(run(&["extract", &alt, "-o", "by-alt.co"]).status.success());
    assert_eq!(
        std::fs::read(b.dir.join("by-alt.co")).unwrap(),
        std::fs::read(b.dir.join("gfx906.co")).unwrap()
    );
    // Entries inside a compressed bundle have no range of the file.
    let out = run(&["list", "--uri", "kc.o"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("hipv4-amdgcn-amd-amdhsa--gfx906\t-"),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("inside compressed bundles"));
    // Refused, nothing written: memory, past the end, a bad escape.
    for (u, says) in [
        ("memory://1234#offset=0x20000&size=3000", "process 1234"),
        ("file://k.o#offset=0&size=99999999", "past the end"),
        ("file://k%ZZ.o", "bad %-escape"),
    ] {
        let out = run(&["extract", u, "-o", "refused.co"]);
        assert_eq!(out.status.code(), Some(1), "{u}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(says), "{u}");
        assert!(!b.dir.join("refused.co").exists(), "{u}");
    }
}

/// offload-kit with `args` in `dir`.
fn kit(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(EXE)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// Issue 14, PE/COFF hosts: clang-22's HIP object for Windows (COFF,
/// `.hip_fatbin`) and a DLL linked from it by lld-link (PE, `.hip_fat`):
/// listed, inspected, checked and extracted like ELF hosts, the code
/// objects of both byte-identical (the linker copies the section).
#[test]
fn coff_objects_and_pe_images() {
    let Some(b) = built() else { return };
    let Some(bin) = llvm_bin(22, &["lld-link"]) else {
        return;
    };
    let d = &b.dir;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/k.hip");
    run_ok(
        Command::new(b.bin.join("clang"))
            .current_dir(d)
            .args([
                "-x",
                "hip",
                "--target=x86_64-pc-windows-msvc",
                "-nogpulib",
                "-nogpuinc",
            ])
            .args([
                "--offload-arch=gfx906",
                "--offload-arch=gfx90a:xnack+",
                "-c",
            ])
            .arg(&src)
            .args(["-o", "kw.obj"]),
    );
    // The HIP runtime's entry points stay unresolved: a DLL to read, not to run.
    run_ok(Command::new(bin.join("lld-link")).current_dir(d).args([
        "/dll",
        "/noentry",
        "/force:unresolved",
        "/out:kw.dll",
        "kw.obj",
    ]));
    let mut payloads = Vec::new();
    for (file, section) in [("kw.obj", ".hip_fatbin"), ("kw.dll", ".hip_fat")] {
        let out = kit(d, &["list", file, "--json"]);
        assert!(
            out.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["container"], "coff", "{file}");
        let entries = doc["entries"].as_array().unwrap();
        let ids: Vec<&str> = entries.iter().map(|e| e["id"].as_str().unwrap()).collect();
        // (clang-22 names the host entry of a Windows build with its
        // default Linux triple.)
        assert_eq!(ids.len(), 3, "{file}: {ids:?}");
        assert!(ids[0].starts_with("host-"), "{file}: {ids:?}");
        assert_eq!(
            ids[1..],
            [
                "hipv4-amdgcn-amd-amdhsa--gfx906",
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
            ],
            "{file}"
        );
        assert!(
            entries.iter().all(|e| e["section"] == section),
            "{file}: {entries:?}"
        );
        let (code, doc) = inspect(d, &[file]);
        assert_eq!(code, 0, "{file}: {doc}");
        let text = doc.to_string();
        assert!(
            text.contains("gfx906") && text.contains("gfx90a"),
            "{file}: {text}"
        );
        let ok = kit(
            d,
            &["check", file, "--gpu", "gfx90a:xnack+", "--gpu", "gfx906"],
        );
        assert!(
            ok.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&ok.stdout)
        );
        let none = kit(d, &["check", file, "--gpu", "gfx1100"]);
        assert_eq!(
            none.status.code(),
            Some(1),
            "{file}: no code object for gfx1100"
        );
        let co = format!("{file}.gfx906.co");
        let x = kit(d, &["extract", file, "--gpu", "gfx906", "-o", &co]);
        assert!(
            x.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&x.stderr)
        );
        payloads.push(std::fs::read(d.join(&co)).unwrap());
    }
    assert!(payloads[0].starts_with(b"\x7fELF"), "an AMDGPU code object");
    assert_eq!(
        payloads[0], payloads[1],
        "the DLL holds the object's code object"
    );
}

#[test]
fn ir_bitcode_and_archives_never_run() {
    let dir = std::env::temp_dir().join(format!("okit-never-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let id = "hip-amdgcn-amd-amdhsa--gfx906";
    // A text bundle (as clang -S -emit-llvm writes for HIP) and a binary
    // bundle of bitcode: the gfx906 entry fits, but nothing loads it.
    let run = |args: &[&str]| {
        let out = Command::new(EXE)
            .current_dir(&dir)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "generate",
        "--kind",
        "text",
        "--count",
        "1",
        "--out",
        "t",
        "--target-ids",
        id,
    ]);
    // The generated file, not its .json sidecar.
    let ir = std::fs::read_dir(dir.join("t"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_none_or(|e| e != "json"))
        .unwrap();
    std::fs::rename(ir, dir.join("k.ll")).unwrap();
    let bc = offload_kit::bundle::binary::write_to_vec(
        &[(id.as_bytes(), b"BC\xc0\xde\x35\x14\x00\x00\x05\x00\x00\x00")],
        8,
    )
    .unwrap();
    std::fs::write(dir.join("k.bc"), bc).unwrap();
    for (file, words) in [("k.ll", "text bundle"), ("k.bc", "LLVM bitcode")] {
        let (code, doc) = check(&dir, &[file], &["gfx906"]);
        assert_eq!(code, 1, "{file}: {doc:#}");
        let v = &doc["files"][0]["gpus"][0];
        assert_eq!(v["runs"], false, "{file}: {doc:#}");
        let why = v["bundles"][0]["not_loadable"].as_str().unwrap_or_default();
        assert!(
            why.contains(words) && why.contains("no runtime loads"),
            "{file}: {why}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 28 item 5: what clang 14 and 16 wrote (`-S -emit-llvm`, `-S`,
/// `-fgpu-rdc -c`, a device archive of that object; entry IDs with the
/// processor where the environment goes, ID-5) and a fat binary with a
/// byte after its last payload (BIN-10) are read as LLVM 22 and the HIP
/// runtime read them, with the violation as a warning naming rule and
/// offset; `--strict` refuses them as before.
#[test]
fn older_clang_output_is_read_with_warnings() {
    for n in [14, 16] {
        let Some(bin) = llvm_bin(n, &["clang", "llvm-ar"]) else {
            continue;
        };
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("older-clang-{n}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/k.hip");
        let clang = |args: &[&str]| {
            run_ok(
                Command::new(bin.join("clang"))
                    .current_dir(&dir)
                    .args([
                        "-x",
                        "hip",
                        "-nogpulib",
                        "-nogpuinc",
                        "--offload-arch=gfx906",
                    ])
                    .args(args)
                    .arg(&src),
            );
        };
        clang(&["-S", "-emit-llvm", "-o", "ir.ll"]);
        clang(&["-S", "-o", "asm.s"]);
        clang(&["-fgpu-rdc", "-c", "-o", "rdc.o"]);
        clang(&["--cuda-device-only", "-o", "hip.fatbin"]);
        run_ok(
            Command::new(bin.join("llvm-ar"))
                .current_dir(&dir)
                .args(["rcs", "hda.a", "rdc.o"]),
        );
        let mut fat = std::fs::read(dir.join("hip.fatbin")).unwrap();
        let end = fat.len() as u64;
        fat.push(0);
        std::fs::write(dir.join("trailing.fatbin"), fat).unwrap();
        for (file, rule, code_objects) in [
            ("ir.ll", "ID-5", 0),
            ("asm.s", "ID-5", 0),
            ("rdc.o", "ID-5", 0),
            ("hda.a", "ID-5", 0),
            ("trailing.fatbin", "BIN-10", 1),
        ] {
            let what = format!("clang {n} {file}");
            let (code, doc) = inspect(&dir, &[file]);
            assert_eq!(code, 0, "{what}: {doc:#}");
            let report = &doc["files"][0]["report"];
            assert_eq!(report["summary"]["code_objects"], code_objects, "{what}");
            let w = &report["warnings"][0];
            assert_eq!(w["rule"], rule, "{what}: {doc:#}");
            assert!(w["offset"].as_u64().is_some(), "{what}: {w}");
            if rule == "BIN-10" {
                assert_eq!(w["offset"], end, "{what}");
                // The same entries (in LLVM 22's `-list` order).
                let mut ids: Vec<&str> = report["entries"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e["id"].as_str().unwrap())
                    .collect();
                let direct = inspect(&dir, &["hip.fatbin"]).1;
                let mut want: Vec<&str> = direct["files"][0]["report"]["entries"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e["id"].as_str().unwrap())
                    .collect();
                ids.sort();
                want.sort();
                assert_eq!(ids, want, "{what}");
            } else {
                // The entry's target ID is read as the runtime reads it.
                let ids = report["entries"].to_string();
                assert!(
                    ids.contains("hip-amdgcn-amd-amdhsa-gfx906"),
                    "{what}: {ids}"
                );
            }
            let (code, doc) = check(&dir, &[file], &["gfx906"]);
            let v = &doc["files"][0];
            assert_eq!(v["warnings"][0]["rule"], rule, "{what}: {doc:#}");
            let b = &v["gpus"][0]["bundles"][0];
            if rule == "BIN-10" {
                assert_eq!(
                    (code, b["pick"].as_str()),
                    (0, Some("compatible")),
                    "{what}: {doc:#}"
                );
            } else {
                // Found for gfx906, and said why nothing loads it.
                assert_eq!(code, 1, "{what}: {doc:#}");
                assert!(b["entry"].is_string(), "{what}: {doc:#}");
                assert!(
                    b["not_loadable"]
                        .as_str()
                        .is_some_and(|w| w.contains("not") || w.contains("no runtime")),
                    "{what}: {doc:#}"
                );
            }
            for args in [&["inspect", file][..], &["check", file, "--gpu", "gfx906"]] {
                let out = Command::new(EXE)
                    .current_dir(&dir)
                    .args(args)
                    .arg("--strict")
                    .output()
                    .unwrap();
                let err = String::from_utf8_lossy(&out.stderr);
                assert_eq!(
                    out.status.code(),
                    Some(1),
                    "{what} {args:?} --strict: {err}"
                );
                assert!(err.contains(&format!("rule {rule}")), "{what}: {err}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
