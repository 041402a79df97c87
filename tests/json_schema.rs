//! The `--json` documents of `list`, `validate`, `inspect` and `check`
//! against their published JSON Schemas (docs/schema/), checked by an
//! independent draft 2020-12 validator (python3-jsonschema, installed by
//! tools/setup), on clang-built objects (LLVM 22), generated containers of
//! every kind, malformed files and unreadable paths. One trial per
//! command and input; one more shows that the validator rejects what the
//! schemas forbid (an unknown key, a wrong type, a missing key).

mod common;

use common::{llvm_bin, run_ok};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

const EXE: &str = env!("CARGO_BIN_EXE_offload-kit");
const PYTHON: &str = "/usr/bin/python3";

/// Validates each document (argv: schema, then documents) and prints one
/// line per document: `ok` or the first error.
const VALIDATOR: &str = r#"
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
v = Draft202012Validator(schema)
for path in sys.argv[2:]:
    errs = sorted(v.iter_errors(json.load(open(path))), key=lambda e: list(e.path))
    print("ok" if not errs else "%s at %s" % (errs[0].message, list(errs[0].absolute_path)))
"#;

fn schema(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("docs/schema/offload-kit-{name}-1.schema.json"))
}

/// The verdict line of [`VALIDATOR`] for each document.
fn validate(schema: &Path, docs: &[PathBuf]) -> Result<Vec<String>, String> {
    let o = Command::new(PYTHON)
        .arg("-c")
        .arg(VALIDATOR)
        .arg(schema)
        .args(docs)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{PYTHON}: {e} (run tools/setup)"))?;
    if !o.status.success() {
        return Err(format!(
            "the validator failed (run tools/setup for python3-jsonschema): {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

/// The inputs, built once under the target's temporary directory.
struct Inputs {
    dir: PathBuf,
    files: Vec<PathBuf>,
}

fn inputs() -> &'static Inputs {
    static I: OnceLock<Inputs> = OnceLock::new();
    I.get_or_init(|| {
        let bin = llvm_bin(22, &["clang", "llvm-ar"]).expect("LLVM 22 (run tools/setup)");
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("json-schema");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/k.hip");
        let clang = |args: &[&str], out: &str| {
            run_ok(
                Command::new(bin.join("clang"))
                    .current_dir(&dir)
                    .args(["-x", "hip", "-nogpulib", "-nogpuinc"])
                    .args(["--offload-arch=gfx906", "--offload-arch=gfx90a:xnack+"])
                    .args(args)
                    .arg(&src)
                    .args(["-o", out]),
            );
        };
        clang(&["-c"], "k.o");
        clang(&["-c", "--offload-compress"], "kc.o");
        clang(&["-c", "-fgpu-rdc"], "krdc.o");
        clang(&["-E"], "k.hipi");
        run_ok(
            Command::new(bin.join("llvm-ar"))
                .current_dir(&dir)
                .args(["qc", "lib.a", "k.o", "krdc.o"]),
        );
        // What clang 14–16 wrote: inspect and check read it with warnings
        // (ID-5: the processor where the environment goes; BIN-10: a byte
        // after the last payload).
        std::fs::write(
            dir.join("legacy.ll"),
            "\n; __CLANG_OFFLOAD_BUNDLE____START__ hip-amdgcn-amd-amdhsa-gfx906\nsource\n\
             ; __CLANG_OFFLOAD_BUNDLE____END__ hip-amdgcn-amd-amdhsa-gfx906\n",
        )
        .unwrap();
        let mut trailing = offload_kit::bundle::binary::write_to_vec(
            &[(b"hipv4-amdgcn-amd-amdhsa--gfx906", b"code")],
            1,
        )
        .unwrap();
        trailing.push(0);
        std::fs::write(dir.join("trailing.fatbin"), trailing).unwrap();
        let mut files: Vec<PathBuf> = [
            "k.o",
            "kc.o",
            "krdc.o",
            "k.hipi",
            "lib.a",
            "legacy.ll",
            "trailing.fatbin",
        ]
        .iter()
        .map(|f| dir.join(f))
        .collect();
        // Every kind the generator makes, valid and breaking a rule.
        let kinds = run_ok(Command::new(EXE).args(["generate", "--list-kinds"]));
        let kinds = String::from_utf8_lossy(&kinds.stdout).into_owned();
        let kinds = kinds
            .lines()
            .filter(|l| !l.starts_with(char::is_whitespace));
        for kind in kinds.filter_map(|l| l.split_whitespace().next()) {
            for (sub, extra) in [("valid", &[][..]), ("bad", &["--malformed", "all"][..])] {
                let out = dir.join(sub).join(kind);
                run_ok(
                    Command::new(EXE)
                        .args(["generate", "--kind", kind, "--count", "3", "--seed", "5"])
                        .args(extra)
                        .arg("--out")
                        .arg(&out),
                );
                let mut made: Vec<PathBuf> = std::fs::read_dir(&out)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .filter(|p| p.extension().is_none_or(|e| e != "json"))
                    .collect();
                made.sort();
                files.extend(made);
            }
        }
        Inputs { dir, files }
    })
}

/// Runs one command per input (`{}` stands for the input), keeps each
/// stdout as a document, and validates them all against `name`'s schema.
fn check_documents(name: &str, args: &[&str], paths: &[PathBuf]) -> Result<(), Failed> {
    let i = inputs();
    let out = i.dir.join("docs").join(name.replace(' ', "-"));
    std::fs::create_dir_all(&out).unwrap();
    let mut docs = Vec::new();
    for (n, p) in paths.iter().enumerate() {
        let argv: Vec<String> = args
            .iter()
            .map(|a| a.replace("{}", &p.to_string_lossy()))
            .collect();
        let o = Command::new(EXE).args(&argv).output().unwrap();
        if o.status.code().is_none_or(|c| c > 1) {
            return Err(format!(
                "{argv:?}: {:?}: {}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            )
            .into());
        }
        // `list` prints no document when it fails (its errors go to
        // stderr); the other commands always print one.
        if o.stdout.is_empty() && o.status.code() == Some(1) && name.starts_with("list") {
            continue;
        }
        let doc = out.join(format!("{n}.json"));
        std::fs::write(&doc, &o.stdout).unwrap();
        docs.push((p, doc));
    }
    if docs.len() < paths.len().min(10) {
        return Err(format!("only {} documents from {} inputs", docs.len(), paths.len()).into());
    }
    let schema_name = name.split(' ').next().unwrap();
    let (inputs, docs): (Vec<&PathBuf>, Vec<PathBuf>) = docs.into_iter().unzip();
    let verdicts = validate(&schema(schema_name), &docs)?;
    let bad: Vec<String> = inputs
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| *v != "ok")
        .map(|(p, v)| format!("{}: {v}", p.display()))
        .collect();
    match (verdicts.len() == docs.len(), bad.is_empty()) {
        (true, true) => Ok(()),
        (false, _) => {
            Err(format!("{} verdicts for {} documents", verdicts.len(), docs.len()).into())
        }
        _ => Err(bad.join("\n").into()),
    }
}

/// The validator rejects documents the schemas forbid: a real `list`
/// document with an unknown key, with an offset as a string, and without
/// its entries.
fn rejects_what_the_schemas_forbid() -> Result<(), Failed> {
    let i = inputs();
    let o = Command::new(EXE)
        .args(["list", "--json"])
        .arg(i.dir.join("k.o"))
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).map_err(|e| e.to_string())?;
    let mut extra = doc.clone();
    extra["surprise"] = true.into();
    let mut wrong_type = doc.clone();
    wrong_type["entries"][0]["offset"] = "8192".into();
    let mut missing = doc.clone();
    missing.as_object_mut().unwrap().remove("entries");
    let dir = i.dir.join("docs/forbidden");
    std::fs::create_dir_all(&dir).unwrap();
    let mut paths = Vec::new();
    for (n, d) in [doc, extra, wrong_type, missing].iter().enumerate() {
        let p = dir.join(format!("{n}.json"));
        std::fs::write(&p, d.to_string()).unwrap();
        paths.push(p);
    }
    let v = validate(&schema("list"), &paths)?;
    if v.len() != 4 || v[0] != "ok" || v[1..].iter().any(|x| x == "ok") {
        return Err(format!("want ok then three rejections, got {v:?}").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let input_trial = |cmd: &'static str, args: &'static [&'static str]| {
        Trial::test(format!("{cmd}::every-input"), move || {
            check_documents(cmd, args, &inputs().files)
        })
    };
    let unreadable = || {
        let i = inputs();
        vec![
            i.dir.join("no-such-file"),
            i.dir.clone(),
            i.dir.join("valid"),
        ]
    };
    let trials = vec![
        input_trial("list", &["list", "--json", "{}"]),
        input_trial(
            "list llvm-16",
            &["list", "--json", "--llvm-version", "16", "{}"],
        ),
        input_trial("validate", &["validate", "--json", "{}"]),
        input_trial("inspect", &["inspect", "--json", "{}"]),
        input_trial(
            "check",
            &[
                "check",
                "--json",
                "--gpu",
                "gfx906",
                "--gpu",
                "gfx90a:xnack-",
                "--gpu",
                "gfx1100",
                "{}",
            ],
        ),
        Trial::test("inspect::unreadable-paths-and-directories", move || {
            check_documents("inspect", &["inspect", "--json", "{}"], &unreadable())
        }),
        Trial::test("check::unreadable-paths-and-directories", move || {
            check_documents(
                "check",
                &["check", "--json", "--gpu", "gfx9-4-generic", "{}"],
                &unreadable(),
            )
        }),
        Trial::test(
            "validator::rejects-what-the-schemas-forbid",
            rejects_what_the_schemas_forbid,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}
