//! The native commands (`list`, `extract`, `validate`) on heterogeneous
//! device archives (spec/archive.md, "Native commands").
//!
//! * rule tests on archives built here byte by byte (no LLVM needed):
//!   absolute offsets and member context of errors, a truncated archive,
//!   each release's reading of compressed members, hostile member names
//!   and planted links, name collisions;
//! * differential tests against LLVM 19 and 22: archives made with
//!   `llvm-ar rcs` of `clang -fgpu-rdc` fat objects, a binary bundle and a
//!   compressed bundle made by `offload-kit bundler`, a plain member and an
//!   offload binary; every member's listing must be what
//!   `clang-offload-bundler -list` reports for that member alone, and every
//!   extracted entry the bytes `clang-offload-bundler -unbundle` writes. A
//!   missing LLVM fails them ("LLVM N not installed: run tools/setup")
//!   unless `OFFLOAD_KIT_NO_LLVM=1`.

mod common;

use common::bundle;
use common::HIP_KERNEL as KERNEL;
use common::{run, run_ok};
use offload_kit::host::ar;
use offload_kit::rules;
use offload_kit::Release;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const KIT: &str = env!("CARGO_BIN_EXE_offload-kit");
const GFX906: &str = "hip-amdgcn-amd-amdhsa--gfx906";
const GFX908: &str = "hip-amdgcn-amd-amdhsa--gfx908";
const HOST: &str = "host-x86_64-unknown-linux-gnu";

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// A fresh directory under the test target directory.
fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("native_archive")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run offload-kit in `dir`: (exit code, stdout, stderr).
fn kit(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let o = run(Command::new(KIT).current_dir(dir).args(args));
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn list_json(dir: &Path, args: &[&str]) -> Value {
    let mut a = vec!["list", "--json"];
    a.extend_from_slice(args);
    let (code, out, err) = kit(dir, &a);
    assert_eq!(code, 0, "list {args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

fn entries(v: &Value) -> &Vec<Value> {
    v["entries"].as_array().unwrap()
}

/// `(member, id)` of every entry of a listing.
fn member_ids(v: &Value) -> Vec<(String, String)> {
    entries(v)
        .iter()
        .map(|e| {
            (
                e["member"].as_str().unwrap_or("").to_string(),
                e["id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Without LLVM
// ---------------------------------------------------------------------------

#[test]
fn list_members_with_absolute_offsets() {
    let d = tmp("abs");
    let b1 = bundle(&[(GFX906, b"ONE"), (HOST, b"H")]);
    let b2 = bundle(&[(GFX908, b"TWO!")]);
    let a = ar::write_gnu(&[
        ("a.o", &b1[..]),
        ("plain.txt", b"just text"),
        ("b.o", &b2[..]),
    ]);
    std::fs::write(d.join("lib.a"), &a).unwrap();
    let members = ar::members_raw(&a, 0, rules::AR_1).unwrap();
    let v = list_json(&d, &["lib.a"]);
    assert_eq!(v["container"], "archive");
    assert_eq!(
        member_ids(&v),
        vec![
            ("a.o".into(), GFX906.into()),
            ("a.o".into(), HOST.into()),
            ("b.o".into(), GFX908.into()),
        ]
    );
    // Each offset is absolute: the payload bytes sit there in the archive.
    for (e, want) in entries(&v).iter().zip([&b"ONE"[..], b"H", b"TWO!"]) {
        let o = e["offset"].as_u64().unwrap() as usize;
        let n = e["size"].as_u64().unwrap() as usize;
        assert_eq!(&a[o..o + n], want, "{e}");
    }
    assert_eq!(
        entries(&v)[2]["offset"].as_u64().unwrap(),
        members[2].data_offset + 0x55,
        "b.o's payload follows its 0x55-byte header"
    );
    // The text output names the member.
    let (code, out, _) = kit(&d, &["list", "lib.a"]);
    assert_eq!(code, 0);
    assert!(out.lines().all(|l| l.contains(" member ")), "{out}");
    // Non-archive inputs keep their JSON: no member field.
    std::fs::write(d.join("b.bc"), &b1).unwrap();
    let v = list_json(&d, &["b.bc"]);
    assert!(entries(&v).iter().all(|e| e.get("member").is_none()));
    // validate accepts the archive.
    let (code, out, err) = kit(&d, &["validate", "lib.a"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("valid archive with 3 entries"), "{out}");
}

#[test]
fn errors_carry_absolute_offsets_rule_and_member() {
    let d = tmp("errors");
    let good = bundle(&[(GFX906, b"ONE")]);
    let mut bad = bundle(&[(GFX908, b"TWO")]);
    // Entry 0's size field (record at 0x20: offset, size, id length).
    bad[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
    let a = ar::write_gnu(&[("good.o", &good[..]), ("bad.o", &bad[..])]);
    std::fs::write(d.join("lib.a"), &a).unwrap();
    let members = ar::members_raw(&a, 0, rules::AR_1).unwrap();
    let (code, _, err) = kit(&d, &["list", "lib.a"]);
    assert_eq!(code, 1);
    assert!(err.contains("in member bad.o of the archive"), "{err}");
    assert!(err.contains("rule BIN-5"), "{err}");
    let rec = members[1].data_offset + 0x20;
    assert!(
        err.contains(&format!("at offset 0x{rec:x}, rule BIN-5")),
        "want the record's absolute offset 0x{rec:x}: {err}"
    );
    let (code, out, _) = kit(&d, &["validate", "--json", "lib.a"]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["violations"][0]["rule"], "BIN-5");
    assert_eq!(v["violations"][0]["offset"].as_u64(), Some(rec));

    // A truncated archive: OB-21 (the `ar` rule AR-1 restates) at the
    // size field of the cut member.
    std::fs::write(d.join("cut.a"), &a[..a.len() - 5]).unwrap();
    let (code, _, err) = kit(&d, &["list", "cut.a"]);
    assert_eq!(code, 1);
    let size_field = members[1].header_offset + 48;
    assert!(
        err.contains(&format!("at offset 0x{size_field:x}, rule OB-21")),
        "{err}"
    );
    for r in ["14", "22"] {
        let (code, _, err) = kit(&d, &["list", "--llvm-version", r, "cut.a"]);
        assert_eq!(code, 1);
        assert!(err.contains("rule OB-21"), "{err}");
    }
    let o = d.join("x");
    let (code, _, _) = kit(&d, &["extract", "cut.a", "--id", GFX906, "-o", "x"]);
    assert_eq!(code, 1);
    assert!(!o.exists());
}

#[test]
fn releases_read_compressed_members_as_they_unbundle_archives() {
    let d = tmp("ccob");
    let plain = bundle(&[(GFX906, b"ONE"), (HOST, b"H")]);
    std::fs::write(d.join("p.bc"), &plain).unwrap();
    for (v, name) in [("3", "c3.o"), ("2", "c2.o")] {
        let (code, _, err) = kit(&d, &["compress", "p.bc", "-o", name, "--format-version", v]);
        assert_eq!(code, 0, "{err}");
    }
    let c3 = std::fs::read(d.join("c3.o")).unwrap();
    let c2 = std::fs::read(d.join("c2.o")).unwrap();
    let a = ar::write_gnu(&[("c2.o", &c2[..]), ("p.o", &plain[..])]);
    std::fs::write(d.join("lib.a"), &a).unwrap();
    let a3 = ar::write_gnu(&[("c3.o", &c3[..])]);
    std::fs::write(d.join("v3.a"), &a3).unwrap();
    let members = ar::members_raw(&a, 0, rules::AR_1).unwrap();
    // Strict: the compressed member's entries, offsets inside it.
    let v = list_json(&d, &["lib.a"]);
    let es = entries(&v);
    assert_eq!(es.len(), 4);
    assert_eq!(es[0]["member"], "c2.o");
    assert_eq!(es[0]["ccob_offset"].as_u64(), Some(members[0].data_offset));
    // 14 and 16 skip compressed members; 19 reads v2, not v3; 22 both.
    for r in ["14", "16"] {
        let v = list_json(&d, &["--llvm-version", r, "lib.a"]);
        assert!(
            entries(&v).iter().all(|e| e["member"] == "p.o"),
            "LLVM {r}: {v}"
        );
        assert!(entries(&list_json(&d, &["--llvm-version", r, "v3.a"])).is_empty());
    }
    for r in ["19", "22"] {
        let v = list_json(&d, &["--llvm-version", r, "lib.a"]);
        assert_eq!(entries(&v).len(), 4, "LLVM {r}: {v}");
    }
    assert_eq!(
        entries(&list_json(&d, &["--llvm-version", "22", "v3.a"])).len(),
        2
    );
    let (code, _, err) = kit(&d, &["list", "--llvm-version", "19", "v3.a"]);
    assert_eq!(code, 1);
    assert!(err.contains("in member c3.o of the archive"), "{err}");
    assert!(err.contains("Unknown frame descriptor"), "{err}");
    // Extraction from the compressed member gives the payload.
    let (code, _, err) = kit(
        &d,
        &[
            "extract", "lib.a", "--member", "c2.o", "--id", GFX906, "-o", "x",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(d.join("x")).unwrap(), b"ONE");
}

#[test]
fn extract_chooses_by_member_and_contains_names() {
    let d = tmp("names");
    let b1 = bundle(&[(GFX906, b"EVIL"), (HOST, b"H")]);
    let b2 = bundle(&[(GFX906, b"GOOD")]);
    let a = ar::write_gnu(&[("../../evil.o", &b1[..]), ("ok.o", &b2[..])]);
    std::fs::write(d.join("lib.a"), &a).unwrap();
    let v = list_json(&d, &["lib.a"]);
    assert_eq!(entries(&v)[0]["member"], "../../evil.o");
    // --id alone is ambiguous: two members hold it.
    let (code, _, err) = kit(&d, &["extract", "lib.a", "--id", GFX906, "-o", "x"]);
    assert_eq!(code, 1);
    assert!(err.contains("--member"), "{err}");
    assert!(!d.join("x").exists());
    let (code, _, err) = kit(
        &d,
        &[
            "extract", "lib.a", "--id", GFX906, "--member", "ok.o", "-o", "x",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(d.join("x")).unwrap(), b"GOOD");
    // --all: names from the member and the ID stay inside the directory;
    // a link planted under such a name is replaced, never followed.
    let out = d.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let victim = d.join("victim");
    std::fs::write(&victim, b"keep").unwrap();
    let planted = out.join(format!(".._.._evil.o-{GFX906}"));
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let (code, _, err) = kit(&d, &["extract", "lib.a", "--all", "--dir", "out"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    assert!(!std::fs::symlink_metadata(&planted).unwrap().is_symlink());
    assert_eq!(std::fs::read(&planted).unwrap(), b"EVIL");
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            format!(".._.._evil.o-{GFX906}"),
            format!(".._.._evil.o-{HOST}"),
            format!("ok.o-{GFX906}"),
        ]
    );
    assert!(!d.join("evil.o").exists() && !d.parent().unwrap().join("evil.o").exists());
    // Two members of one name: both extracted, the second member's entries
    // under names with their entry number appended (CLI-5: names stay unique).
    let dup = ar::write_gnu(&[("m.o", &b1[..]), ("m.o", &b2[..])]);
    std::fs::write(d.join("dup.a"), &dup).unwrap();
    let (code, _, err) = kit(&d, &["extract", "dup.a", "--all", "--dir", "dup"]);
    assert_eq!(code, 0, "{err}");
    let mut names: Vec<String> = std::fs::read_dir(d.join("dup"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let n1 = offload_kit::detect::list(&b1, None).unwrap().entries.len();
    let n2 = offload_kit::detect::list(&b2, None).unwrap().entries.len();
    assert_eq!(names.len(), n1 + n2, "{names:?}");
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("m.o-") && n.ends_with(&format!("-{n1}"))),
        "{names:?}"
    );
}

// ---------------------------------------------------------------------------
// Against LLVM 19 and 22
// ---------------------------------------------------------------------------

fn llvm_bin(r: Release) -> Option<PathBuf> {
    common::llvm_bin(r.major(), &["clang", "clang-offload-bundler", "llvm-ar"])
}

/// The archive built with release `r`'s tools, and its directory.
struct Built {
    bin: PathBuf,
    dir: PathBuf,
}

/// Members of `lib.a` and the `-type` LLVM lists each with alone.
const MEMBERS: [(&str, Option<&str>); 6] = [
    ("k.o", Some("o")),
    ("k2.o", Some("o")),
    ("bb.o", Some("bc")),
    ("cc.o", Some("bc")),
    ("plain.txt", None),
    ("pk.bin", None),
];

fn build(r: Release, bin: PathBuf) -> Built {
    let dir = tmp(&format!("llvm-{}", r.major()));
    let w = |name: &str, data: &[u8]| std::fs::write(dir.join(name), data).unwrap();
    let clang = bin.join("clang");
    for (src, tag) in [("k.hip", "a"), ("k2.hip", "b")] {
        w(src, KERNEL.replace("NAME", tag).as_bytes());
        let obj = format!("{}.o", &src[..src.len() - 4]);
        run_ok(
            Command::new(&clang)
                .current_dir(&dir)
                .args(["-x", "hip", "-nogpulib", "-nogpuinc", "-fgpu-rdc"])
                .args(["--offload-arch=gfx906", "--offload-arch=gfx908"])
                .args(["-c", src, "-o", &obj]),
        );
    }
    w("a.bin", b"device payload A");
    w("h.bin", b"HOSTDATA");
    let version = format!("--llvm-version={}", r.major());
    let targets = format!("-targets={GFX906},{GFX908},{HOST}");
    let kit_bundle = |out: &str, extra: &[&str]| {
        run_ok(
            Command::new(KIT)
                .current_dir(&dir)
                .args(["bundler", &version, "-type=bc", &targets])
                .args(["-input=a.bin", "-input=k.hip", "-input=h.bin"])
                .arg(format!("-output={out}"))
                .args(extra),
        );
    };
    kit_bundle("bb.o", &[]);
    kit_bundle("cc.o", &["-compress"]);
    w("plain.txt", b"not a bundle at all\n");
    run_ok(Command::new(KIT).current_dir(&dir).args([
        "packager",
        "-o",
        "pk.bin",
        "--image=file=a.bin,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=openmp",
    ]));
    let names: Vec<&str> = MEMBERS.iter().map(|m| m.0).collect();
    run_ok(
        Command::new(bin.join("llvm-ar"))
            .current_dir(&dir)
            .arg("rcs")
            .arg("lib.a")
            .args(&names),
    );
    // Each member alone, as llvm-ar extracts it.
    let x = dir.join("x");
    std::fs::create_dir_all(&x).unwrap();
    run_ok(
        Command::new(bin.join("llvm-ar"))
            .current_dir(&x)
            .args(["x", "../lib.a"]),
    );
    Built { bin, dir }
}

fn built(r: Release) -> Option<&'static Built> {
    static CELLS: [OnceLock<Option<Built>>; 2] = [OnceLock::new(), OnceLock::new()];
    let i = usize::from(r == Release::L22);
    CELLS[i]
        .get_or_init(|| llvm_bin(r).map(|bin| build(r, bin)))
        .as_ref()
}

/// What `clang-offload-bundler -list` prints for member `m` alone.
fn llvm_list(b: &Built, m: &str, ty: &str) -> Vec<String> {
    let o = run_ok(
        Command::new(b.bin.join("clang-offload-bundler"))
            .current_dir(b.dir.join("x"))
            .args(["-list", &format!("-type={ty}"), &format!("-input={m}")]),
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn list_matches_llvm(r: Release) {
    let Some(b) = built(r) else { return };
    let strict = list_json(&b.dir, &["lib.a"]);
    let rel = list_json(&b.dir, &["--llvm-version", &r.major().to_string(), "lib.a"]);
    for (m, ty) in MEMBERS {
        let ids = |v: &Value| -> Vec<String> {
            member_ids(v)
                .into_iter()
                .filter(|(mm, _)| mm == m)
                .map(|(_, id)| id)
                .collect()
        };
        match ty {
            Some(ty) => {
                let want = llvm_list(b, m, ty);
                assert!(!want.is_empty(), "LLVM {r} lists nothing in {m}");
                // As the release reads it: its -list order exactly.
                assert_eq!(ids(&rel), want, "LLVM {r}, member {m}");
                // Strictly: the same entries (header or section order).
                let (mut got, mut want) = (ids(&strict), want);
                got.sort();
                want.sort();
                assert_eq!(got, want, "strict, member {m}");
            }
            None if m == "pk.bin" => {
                assert_eq!(ids(&strict), vec!["openmp-nvptx64-nvidia-cuda-sm_70"]);
            }
            None => assert!(ids(&strict).is_empty() && ids(&rel).is_empty(), "{m}"),
        }
    }
    let (code, _, err) = kit(&b.dir, &["validate", "lib.a"]);
    assert_eq!(code, 0, "{err}");
}

fn extract_matches_llvm(r: Release) {
    let Some(b) = built(r) else { return };
    let v = list_json(&b.dir, &["lib.a"]);
    let out = b.dir.join("cmp");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let mut compared = 0;
    for (i, e) in entries(&v).iter().enumerate() {
        let m = e["member"].as_str().unwrap();
        let id = e["id"].as_str().unwrap();
        let mine = out.join(format!("kit{i}"));
        run_ok(Command::new(KIT).current_dir(&b.dir).args([
            "extract",
            "lib.a",
            "--member",
            m,
            "--id",
            id,
            "-o",
            mine.to_str().unwrap(),
        ]));
        let got = std::fs::read(&mine).unwrap();
        if m == "pk.bin" {
            assert_eq!(got, b"device payload A");
            continue;
        }
        let ty = MEMBERS.iter().find(|x| x.0 == m).unwrap().1.unwrap();
        if ty == "o" && id.starts_with("host-") {
            // The object without its bundle sections (OBJ-11), written by
            // offload-kit's own section removal; LLVM's llvm-objcopy output
            // is the same object but not byte-identical (see
            // tests/object_bundle.rs for the semantic comparison).
            let member = std::fs::read(b.dir.join("x").join(m)).unwrap();
            assert_eq!(got, offload_kit::bundle::object::strip(&member).unwrap());
            assert!(!got.windows(24).any(|w| w == b"__CLANG_OFFLOAD_BUNDLE__"));
            continue;
        }
        let theirs = out.join(format!("llvm{i}"));
        run_ok(
            Command::new(b.bin.join("clang-offload-bundler"))
                .current_dir(b.dir.join("x"))
                .args(["-unbundle", &format!("-type={ty}"), &format!("-input={m}")])
                // The host as requested: 19 writes it with an empty
                // environment field, and matches the request it was given.
                .arg(format!("-targets={}", id.trim_end_matches('-')))
                .arg(format!("-output={}", theirs.display())),
        );
        assert_eq!(
            got,
            std::fs::read(&theirs).unwrap(),
            "LLVM {r}: {id} of member {m}"
        );
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} entries compared");
    // --all: one file per member and entry, named after both.
    let all = b.dir.join("all");
    let _ = std::fs::remove_dir_all(&all);
    run_ok(
        Command::new(KIT)
            .current_dir(&b.dir)
            .args(["extract", "lib.a", "--all", "--dir", "all"]),
    );
    assert_eq!(std::fs::read_dir(&all).unwrap().count(), entries(&v).len());
    assert_eq!(
        std::fs::read(all.join(format!("cc.o-{GFX908}"))).unwrap(),
        std::fs::read(b.dir.join("k.hip")).unwrap()
    );
}

#[test]
fn llvm_19_member_listings_match() {
    list_matches_llvm(Release::L19);
}

#[test]
fn llvm_22_member_listings_match() {
    list_matches_llvm(Release::L22);
}

#[test]
fn llvm_19_member_extraction_matches() {
    extract_matches_llvm(Release::L19);
}

#[test]
fn llvm_22_member_extraction_matches() {
    extract_matches_llvm(Release::L22);
}
