//! The command line pinned by cases, as wasm-tools' `tests/cli`: each
//! `tests/cli/*.txt` names a command and the exact standard output,
//! standard error and exit status it gives, so a change to what a user
//! sees shows up as a diff of these files. `OFFLOAD_KIT_BLESS=1` rewrites
//! them from what the commands print now (then read the diff).
//!
//! A case file:
//!
//! ```text
//! # What it pins (comment lines).
//! $ offload-kit validate tests/data/malformed/offsizewrap.bin
//! exit 1
//! --- stdout
//! --- stderr
//! offload-kit: error: ...
//! ```
//!
//! Arguments are split on spaces; paths are relative to the repository;
//! `{TMP}` is a directory of the case's own (and is written back as
//! `{TMP}` in the outputs). The commands run with `NO_COLOR`, `TERM=dumb`
//! and no `OFFLOAD_KIT_MAX_MEMORY`.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

const KIT: &str = env!("CARGO_BIN_EXE_offload-kit");

/// A parsed case: its comment, arguments and what it gives.
struct Case {
    comment: Vec<String>,
    args: Vec<String>,
    exit: i32,
    stdout: String,
    stderr: String,
}

fn parse(text: &str) -> Result<Case, String> {
    let mut comment = Vec::new();
    let (mut args, mut exit) = (None, None);
    let (mut stdout, mut stderr) = (String::new(), String::new());
    let mut section: Option<&mut String> = None;
    for line in text.lines() {
        if let Some(s) = section.as_deref_mut() {
            match line {
                "--- stderr" => section = Some(&mut stderr),
                _ => {
                    s.push_str(line);
                    s.push('\n');
                }
            }
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            comment.push(c.trim().to_string());
        } else if let Some(cmd) = line.strip_prefix("$ offload-kit ") {
            args = Some(cmd.split(' ').map(str::to_string).collect());
        } else if let Some(n) = line.strip_prefix("exit ") {
            exit = Some(n.parse().map_err(|e| format!("exit {n}: {e}"))?);
        } else if line == "--- stdout" {
            section = Some(&mut stdout);
        } else if !line.is_empty() {
            return Err(format!("unexpected line: {line}"));
        }
    }
    Ok(Case {
        comment,
        args: args.ok_or("no '$ offload-kit' line")?,
        exit: exit.ok_or("no 'exit' line")?,
        stdout,
        stderr,
    })
}

fn render(c: &Case) -> String {
    let mut s: String = c.comment.iter().map(|l| format!("# {l}\n")).collect();
    s += &format!("$ offload-kit {}\nexit {}\n", c.args.join(" "), c.exit);
    s += &format!("--- stdout\n{}--- stderr\n{}", c.stdout, c.stderr);
    s
}

fn run(path: &Path, root: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let want = parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let tmp_s = tmp.path().to_string_lossy().into_owned();
    let out = Command::new(KIT)
        .args(want.args.iter().map(|a| a.replace("{TMP}", &tmp_s)))
        .current_dir(root)
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env_remove("OFFLOAD_KIT_MAX_MEMORY")
        .output()
        .map_err(|e| e.to_string())?;
    let shown = |b: &[u8]| String::from_utf8_lossy(b).replace(&tmp_s, "{TMP}");
    let got = Case {
        comment: want.comment.clone(),
        args: want.args.clone(),
        exit: out.status.code().unwrap_or(-1),
        stdout: shown(&out.stdout),
        stderr: shown(&out.stderr),
    };
    let (want_text, got_text) = (render(&want), render(&got));
    if want_text == got_text {
        return Ok(());
    }
    if std::env::var_os("OFFLOAD_KIT_BLESS").is_some() {
        std::fs::write(path, got_text).map_err(|e| e.to_string())?;
        return Ok(());
    }
    Err(format!(
        "{} differs (OFFLOAD_KIT_BLESS=1 rewrites it):\n--- expected\n{want_text}--- got\n{got_text}",
        path.display()
    )
    .into())
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("tests/cli"))
        .expect("tests/cli")
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "tests/cli holds {} cases", files.len());
    let trials = files
        .into_iter()
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let root = root.clone();
            Trial::test(name, move || run(&p, &root))
        })
        .collect();
    libtest_mimic::run(&Arguments::from_args(), trials).exit();
}
