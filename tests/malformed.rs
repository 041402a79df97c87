//! Every file in `tests/data/malformed/` (inputs that crash, hang or leak
//! memory in LLVM 14–22; see spec/README.md, *Conventions*) through
//! every reader and every profile: a clean error with offset and rule, or a
//! clean result, never a panic. One trial per file.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_offload-kit")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(exe()).args(args).output().expect("runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn check(path: &Path) -> Result<(), Failed> {
    let data = std::fs::read(path).map_err(|e| e.to_string())?;
    let p = path.to_str().unwrap();
    let name = path.file_name().unwrap().to_str().unwrap();
    // Library readers on the raw bytes and on every prefix: no panic.
    for cut in 0..=data.len() {
        let d = &data[..cut];
        let _ = offload_kit::bundle::binary::parse_strict(
            d,
            0,
            offload_kit::bundle::binary::Extent::Standalone,
        );
        for r in offload_kit::Release::WITH_BINARY {
            let _ = offload_kit::bundle::binary::llvm_read(d, 0, r);
        }
    }
    // Strict listing: exit 0 (valid) or 1 with offset and rule.
    let (code, _, err) = run(&["list", p]);
    // Well-formed inputs: the good bundle and LLVM 19/22's compressed copies of it.
    let valid = matches!(name, "good.bin" | "ccob_v2_small.bin" | "ccob_v3_small.bin");
    if valid {
        if code != 0 {
            return Err(format!("{name} should list cleanly: {err}").into());
        }
    } else if code != 1 || !err.contains("rule ") || !err.contains("offset 0x") {
        return Err(format!(
            "strict list of {name}: exit {code}, want 1 with offset and rule; stderr: {err}"
        )
        .into());
    }
    let (code, out, _) = run(&["validate", "--json", p]);
    let v: serde_json::Value =
        serde_json::from_str(&out).map_err(|e| format!("validate --json: {e}: {out}"))?;
    if v["valid"].as_bool() != Some(valid) || code != i32::from(!valid) {
        return Err(format!("validate {name}: exit {code}, {v}").into());
    }
    if !valid {
        for viol in v["violations"].as_array().unwrap() {
            if viol["rule"].as_str().is_none()
                || offload_kit::rules::by_id(viol["rule"].as_str().unwrap()).is_none()
            {
                return Err(format!("violation without a known rule: {viol}").into());
            }
        }
    }
    // Every release profile, drop-in and native: exit 0 or 1, never a crash.
    for r in ["14", "16", "19", "22"] {
        for args in [
            vec![
                "bundler",
                "--llvm-version",
                r,
                "-list",
                "-type=bc",
                "-input",
                p,
            ],
            vec!["list", "--llvm-version", r, p],
        ] {
            let (code, _, err) = run(&args);
            if code != 0 && code != 1 {
                return Err(format!("{args:?}: exit {code}: {err}").into());
            }
            if code == 1 && !err.contains("rule ") {
                return Err(format!("{args:?}: error without rule: {err}").into());
            }
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = dir.path().join("out");
        let (code, _, err) = run(&[
            "bundler",
            "--llvm-version",
            r,
            "-unbundle",
            "-type=bc",
            "-input",
            p,
            "-targets=hip-amdgcn-amd-amdhsa--gfx906",
            "-output",
            out.to_str().unwrap(),
        ]);
        if code != 0 && code != 1 {
            return Err(format!("unbundle under {r}: exit {code}: {err}").into());
        }
        if code == 1 && out.exists() {
            return Err(format!("unbundle under {r} failed but left {out:?}").into());
        }
        let leftovers: Vec<PathBuf> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        if code == 1 && !leftovers.is_empty() {
            return Err(format!("temporary files left behind: {leftovers:?}").into());
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/malformed");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 20, "malformed corpus missing in {dir:?}");
    let trials = files
        .into_iter()
        .map(|f| {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            Trial::test(name, move || check(&f))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
