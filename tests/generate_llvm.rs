//! Generated valid files are read by every installed LLVM release that
//! reads their kind, with the same entries offload-kit lists: binary, text
//! and object-file bundles by `clang-offload-bundler -list` of 14, 16, 19
//! and 22; compressed bundles by 19 (v1, v2) and 22 (v1-v3). One trial per
//! (kind, release). A missing release fails (see tests/common).

mod common;

use common::{exec, llvm_tool, par_map};
use libtest_mimic::{Arguments, Failed, Trial};
use offload_kit::detect::{self, text_comment};
use offload_kit::generate::{generate, Kind, Options};
use std::process::Command;
use std::time::Duration;

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
    let files: Vec<(u64, Vec<u8>)> = (0..SEEDS)
        .map(|s| {
            (
                s,
                generate(kind, s, &Options::default())
                    .expect("generates")
                    .bytes,
            )
        })
        // 19 knows no CCOB v3 (its version field is at offset 4).
        .filter(|(_, b)| !(kind == Kind::Ccob && release == 19 && b[4] == 3))
        .collect();
    let problems: Vec<String> = par_map(2, &files, |(seed, bytes)| {
        let path = dir.path().join(format!("{kind}-{seed}"));
        std::fs::write(&path, bytes).unwrap();
        let mut cmd = Command::new(&bundler);
        cmd.arg(format!("-type={}", file_type(kind, bytes)))
            .arg("-list")
            .arg(
                if release == 14 { "-inputs=" } else { "-input=" }.to_string()
                    + path.to_str().unwrap(),
            );
        let out = exec(cmd, dir.path(), Duration::from_secs(60));
        // Compared as sets: binary bundles are listed in LLVM's hash order
        // (tests/llvm_diff.rs pins that order against the drop-in).
        let mut want: Vec<String> = detect::list(&bytes.as_slice(), None)
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
    .into_iter()
    .flatten()
    .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for kind in [Kind::Binary, Kind::Text, Kind::Object, Kind::Ccob] {
        let releases: &[u32] = if kind == Kind::Ccob {
            &[19, 22]
        } else {
            &[14, 16, 19, 22]
        };
        for &r in releases {
            trials.push(Trial::test(format!("{kind}/llvm-{r}"), move || {
                trial(kind, r)
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
