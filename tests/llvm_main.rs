//! The LLVM main profile (`--llvm-version=main`), modelled from
//! `clang/lib/Driver/OffloadBundler.cpp` at llvm-project `0629daa018e3`
//! (no binary to run it against): what it does differently from 22, each
//! behaviour next to 22's on the same input. spec/binary-bundle.md BIN-10
//! and spec/ccob.md CCOB-4 (*LLVM main*) describe them.

mod common;

use common::Out;
use offload_kit::bundle::{binary, ccob};
use offload_kit::Release;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const KIT: &str = env!("CARGO_BIN_EXE_offload-kit");
const HOST: &str = "host-x86_64-unknown-linux-gnu-";
const GFX906: &str = "hip-amdgcn-amd-amdhsa--gfx906";
const GFX908: &str = "hip-amdgcn-amd-amdhsa--gfx908";

/// The drop-in at `--llvm-version=release` in `dir`.
fn bundler(release: &str, dir: &Path, args: &[&str]) -> Out {
    let mut c = Command::new(KIT);
    c.arg("bundler").arg(format!("--llvm-version={release}"));
    c.args(args);
    for v in [
        "OFFLOAD_BUNDLER_COMPRESS",
        "OFFLOAD_BUNDLER_VERBOSE",
        "COMPRESSED_BUNDLE_FORMAT_VERSION",
    ] {
        c.env_remove(v);
    }
    common::exec(c, dir, Duration::from_secs(60))
}

fn lines(out: &Out) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let e: Vec<(&[u8], &[u8])> = entries.iter().map(|(i, p)| (i.as_bytes(), *p)).collect();
    binary::write_to_vec(&e, 1).expect("bundle")
}

fn zstd_v2(b: &[u8]) -> Vec<u8> {
    ccob::compress(
        b,
        ccob::WriteOptions {
            version: 2,
            method: ccob::Method::Zstd,
            level: 3,
        },
    )
    .expect("compress")
}

fn list(release: &str, dir: &Path, input: &str, ty: &str) -> Out {
    bundler(
        release,
        dir,
        &[&format!("-type={ty}"), &format!("-input={input}"), "-list"],
    )
}

#[test]
fn list_reads_every_bundle_into_one_map() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = bundle(&[(HOST, b"H1"), (GFX906, b"D1")]);
    let second = bundle(&[(GFX908, b"D2"), (HOST, b"H2")]);
    std::fs::write(dir.path().join("two"), [&first[..], &second[..]].concat()).unwrap();
    // Each bundle found prints the whole map: the first's IDs, then both.
    let once = Release::Main.stringmap_order(&[HOST, GFX906]);
    let both = Release::Main.stringmap_order(&[HOST, GFX906, GFX908, HOST]);
    let want: Vec<String> = once.iter().chain(&both).map(|s| s.to_string()).collect();
    let out = list("main", dir.path(), "two", "bc");
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(lines(&out), want);
    assert_eq!(
        binary::llvm_main_list(&[first.clone(), second].concat(), 0, Default::default()).unwrap(),
        want
    );
    // 22 reads the first bundle only.
    let out = list("22", dir.path(), "two", "bc");
    assert_eq!(lines(&out).len(), 2, "{out:?}");

    // A bundle after 25 bytes of anything is found by main, not by 22.
    let mut junk = vec![b'#'; 100];
    junk.extend_from_slice(&first);
    std::fs::write(dir.path().join("junk"), &junk).unwrap();
    assert_eq!(lines(&list("main", dir.path(), "junk", "bc")).len(), 2);
    assert!(lines(&list("22", dir.path(), "junk", "bc")).is_empty());
}

#[test]
fn list_of_text_bundles_is_22s() {
    // The text handler's read position ends at "not found" after the first
    // pass, so main's loop prints nothing more.
    let dir = tempfile::tempdir().expect("tempdir");
    let one = format!(
        "\n// __CLANG_OFFLOAD_BUNDLE____START__ {HOST}\nint a;\n// __CLANG_OFFLOAD_BUNDLE____END__ {HOST}\n\n// __CLANG_OFFLOAD_BUNDLE____START__ {GFX906}\nint b;\n// __CLANG_OFFLOAD_BUNDLE____END__ {GFX906}\n"
    );
    std::fs::write(dir.path().join("t.i"), format!("{one}{one}")).unwrap();
    let main = list("main", dir.path(), "t.i", "i");
    let l22 = list("22", dir.path(), "t.i", "i");
    assert_eq!(main.code, Some(0), "{main:?}");
    assert_eq!(lines(&main), lines(&l22));
    assert_eq!(lines(&main).len(), 4);
}

#[test]
fn unbundle_walks_every_blob() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = bundle(&[(HOST, b"H1"), (GFX906, b"D1")]);
    let second = bundle(&[(GFX908, b"D2"), (HOST, b"H2")]);
    let targets = format!("-targets={HOST},{GFX906},{GFX908}");
    let run = |release: &str, input: &str| {
        for o in ["h", "a", "b"] {
            let _ = std::fs::remove_file(dir.path().join(o));
        }
        let out = bundler(
            release,
            dir.path(),
            &[
                "-type=bc",
                &targets,
                &format!("-input={input}"),
                "-output=h",
                "-output=a",
                "-output=b",
                "-unbundle",
            ],
        );
        let read = |n: &str| std::fs::read(dir.path().join(n)).ok();
        (out, read("h"), read("a"), read("b"))
    };
    for (name, bytes) in [
        ("plain", [&first[..], &second[..]].concat()),
        ("compressed", [zstd_v2(&first), zstd_v2(&second)].concat()),
    ] {
        std::fs::write(dir.path().join(name), &bytes).unwrap();
        // main: the first blob serves host and gfx906, the second gfx908.
        let (out, h, a, b) = run("main", name);
        assert_eq!(out.code, Some(0), "{name}: {out:?}");
        assert_eq!(
            (h.as_deref(), a.as_deref(), b.as_deref()),
            (Some(&b"H1"[..]), Some(&b"D1"[..]), Some(&b"D2"[..])),
            "{name}"
        );
        // 22: one bundle (plain), or one zstd frame that is not (compressed).
        let (out, ..) = run("22", name);
        assert_eq!(out.code, Some(1), "{name}: {out:?}");
        let why = if name == "plain" {
            format!("Can't find bundles for {GFX908}")
        } else {
            "Src size is incorrect".to_string()
        };
        assert!(out.stderr.contains(&why), "{name}: {out:?}");
    }

    // A payload holding the bundle magic ends main's first blob there: its
    // header stops at the first record whose payload lies past the cut,
    // after a valid one, which leaves the handler's iterator unset (the
    // SIGSEGV of the releases' BIN-5 case); offload-kit reports it.
    let mut payload = b"before ".to_vec();
    payload.extend_from_slice(b"__CLANG_OFFLOAD_BUNDLE__ and after");
    let cut = bundle(&[(HOST, b"H1"), (GFX906, &payload), (GFX908, b"D2")]);
    std::fs::write(dir.path().join("cut"), &cut).unwrap();
    let (out, ..) = run("main", "cut");
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("SIGSEGV") && out.stderr.contains("rule BIN-5"),
        "{out:?}"
    );
    let (out, _, a, _) = run("22", "cut");
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(a.as_deref(), Some(&payload[..]));
}

#[test]
fn nothing_found_gives_the_host_the_raw_input() {
    // With -allow-missing-bundles and no target served, 22 writes the
    // host output from the decompressed input; main from the file as it is.
    let dir = tempfile::tempdir().expect("tempdir");
    let inner = bundle(&[(GFX906, b"D1")]);
    let blob = zstd_v2(&inner);
    std::fs::write(dir.path().join("c"), &blob).unwrap();
    for (release, want) in [("main", &blob), ("22", &inner)] {
        let out = bundler(
            release,
            dir.path(),
            &[
                "-type=bc",
                &format!("-targets={HOST},{GFX908}"),
                "-input=c",
                "-output=h",
                "-output=d",
                "-unbundle",
                "-allow-missing-bundles",
            ],
        );
        assert_eq!(out.code, Some(0), "{release}: {out:?}");
        assert_eq!(
            &std::fs::read(dir.path().join("h")).unwrap(),
            want,
            "{release}"
        );
    }
}

#[test]
fn listing_is_bounded_by_the_memory_budget() {
    // n bundles of distinct IDs make main print n(n+1)/2 lines.
    let bundles: Vec<u8> = (0..300)
        .flat_map(|i| bundle(&[(&format!("hip-amdgcn-amd-amdhsa--gfx{i}"), b"x")]))
        .collect();
    let all =
        binary::llvm_main_list(&bundles, 0, Default::default()).expect("within the default budget");
    assert_eq!(all.len(), 300 * 301 / 2);
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("many"), &bundles).unwrap();
    let mut c = Command::new(KIT);
    c.args([
        "bundler",
        "--llvm-version=main",
        "-type=bc",
        "-input=many",
        "-list",
    ]);
    c.env("OFFLOAD_KIT_MAX_MEMORY", "100000");
    let out = common::exec(c, dir.path(), Duration::from_secs(60));
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("rule CLI-6"), "{out:?}");
}

#[test]
fn spirv_entries_match_exactly_only() {
    // `hip-spirv64-amd-amdhsa--amdgcnspirv`, as the HIP driver bundles a
    // SPIR-V image: LLVM 22 and its profile bundle, list and unbundle it,
    // and serve a `hipv4-…` request with it (hip and hipv4 match, and 22
    // parses `amdgcnspirv` as a processor); main's AMDGPU-only parser
    // refuses the triple, so only the exact ID matches.
    let llvm = common::llvm_tool(22, "clang-offload-bundler")
        .expect("LLVM 22's clang-offload-bundler (run tools/setup)");
    let dir = tempfile::tempdir().expect("tempdir");
    let spirv = "hip-spirv64-amd-amdhsa--amdgcnspirv";
    std::fs::write(dir.path().join("host"), b"HOST").unwrap();
    std::fs::write(dir.path().join("dev"), b"SPIRV").unwrap();
    let targets = format!("-targets=host-x86_64-unknown-linux-gnu,{spirv}");
    let bundle_args = ["-type=bc", &targets, "-input=host", "-input=dev"];
    let mut c = Command::new(&llvm);
    c.args(bundle_args).arg("-output=llvm.bc");
    let out = common::exec(c, dir.path(), Duration::from_secs(60));
    assert_eq!(out.code, Some(0), "{out:?}");
    let mut c = Command::new(&llvm);
    c.args(["-type=bc", "-input=llvm.bc", "-list"]);
    let llvm_list = lines(&common::exec(c, dir.path(), Duration::from_secs(60)));
    assert_eq!(llvm_list.len(), 2, "{llvm_list:?}");
    for r in ["22", "main"] {
        let out = bundler(
            r,
            dir.path(),
            &[&bundle_args[..], &[&format!("-output={r}.bc")]].concat(),
        );
        assert_eq!(out.code, Some(0), "{r}: {out:?}");
        assert_eq!(
            std::fs::read(dir.path().join(format!("{r}.bc"))).unwrap(),
            std::fs::read(dir.path().join("llvm.bc")).unwrap(),
            "{r}: byte-identical to LLVM 22"
        );
        let out = list(r, dir.path(), "llvm.bc", "bc");
        assert_eq!(lines(&out), llvm_list, "{r}");
    }
    let request = |prog: Option<&str>, target: &str| {
        let _ = std::fs::remove_file(dir.path().join("o"));
        let args = [
            "-type=bc",
            &format!("-targets={target}"),
            "-input=llvm.bc",
            "-output=o",
            "-unbundle",
        ];
        let out = match prog {
            None => {
                let mut c = Command::new(&llvm);
                c.args(args);
                common::exec(c, dir.path(), Duration::from_secs(60))
            }
            Some(r) => bundler(r, dir.path(), &args),
        };
        (out, std::fs::read(dir.path().join("o")).ok())
    };
    for target in [spirv, "hipv4-spirv64-amd-amdhsa--amdgcnspirv"] {
        let (l22, lbytes) = request(None, target);
        let (k22, kbytes) = request(Some("22"), target);
        assert_eq!(
            (l22.code, lbytes.as_deref()),
            (Some(0), Some(&b"SPIRV"[..])),
            "{target}: {l22:?}"
        );
        assert_eq!(
            (k22.code, kbytes.as_deref()),
            (l22.code, lbytes.as_deref()),
            "{target}"
        );
        let (main, mbytes) = request(Some("main"), target);
        if target == spirv {
            assert_eq!(
                (main.code, mbytes.as_deref()),
                (Some(0), Some(&b"SPIRV"[..])),
                "{main:?}"
            );
        } else {
            assert_eq!(main.code, Some(1), "{main:?}");
            assert!(main.stderr.contains("Can't find bundles for"), "{main:?}");
        }
    }
}

#[test]
fn a_later_bundle_cut_short_prints_nothing_unless_the_map_grows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = bundle(&[(HOST, b"H1"), (GFX906, b"D1")]);
    // A header that promises two records and holds one.
    let cut = |ids: &[&str]| {
        let mut b = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
        b.extend_from_slice(&(ids.len() as u64 + 1).to_le_bytes());
        for id in ids {
            b.extend_from_slice(&1u64.to_le_bytes());
            b.extend_from_slice(&1u64.to_le_bytes());
            b.extend_from_slice(&(id.len() as u64).to_le_bytes());
            b.extend_from_slice(id.as_bytes());
        }
        b.extend_from_slice(&1u64.to_le_bytes());
        b
    };
    // One more key (3 of 16 buckets): the iterator stays at the map's end.
    std::fs::write(
        dir.path().join("small"),
        [&first[..], &cut(&[GFX908])].concat(),
    )
    .unwrap();
    let out = list("main", dir.path(), "small", "bc");
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(lines(&out), Release::Main.stringmap_order(&[HOST, GFX906]));
    let targets = format!("-targets={HOST},{GFX906}");
    let out = bundler(
        "main",
        dir.path(),
        &[
            "-type=bc",
            &targets,
            "-input=small",
            "-output=h",
            "-output=d",
            "-unbundle",
        ],
    );
    assert_eq!(
        out.code,
        Some(0),
        "every target served by the first blob: {out:?}"
    );
    // Eleven more keys (13 > 12): the map grows, the iterator dangles.
    let more: Vec<String> = (0..11)
        .map(|i| format!("hip-amdgcn-amd-amdhsa--x{i}"))
        .collect();
    let refs: Vec<&str> = more.iter().map(String::as_str).collect();
    std::fs::write(dir.path().join("grows"), [&first[..], &cut(&refs)].concat()).unwrap();
    let out = list("main", dir.path(), "grows", "bc");
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("dangling") && out.stderr.contains("rule BIN-2"),
        "{out:?}"
    );
}

#[test]
fn conflicts_and_unnamed_processors_as_amdgpu_parses_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    for f in ["h", "a", "b"] {
        std::fs::write(dir.path().join(f), f).unwrap();
    }
    let bundle_with = |release: &str, a: &str, b: &str| {
        bundler(
            release,
            dir.path(),
            &[
                "-type=bc",
                &format!("-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--{a},hip-amdgcn-amd-amdhsa--{b}"),
                "-input=h",
                "-input=a",
                "-input=b",
                "-output=out.bc",
            ],
        )
        .code
    };
    // Symmetric in main; 22 checks one direction only.
    assert_eq!(
        bundle_with("main", "gfx906:sramecc+:xnack+", "gfx906:xnack+"),
        Some(1)
    );
    assert_eq!(
        bundle_with("22", "gfx906:sramecc+:xnack+", "gfx906:xnack+"),
        Some(0)
    );
    // gfx1030 has no xnack: main's parser refuses the ID and skips it.
    assert_eq!(bundle_with("main", "gfx1030", "gfx1030:xnack+"), Some(0));
    assert_eq!(bundle_with("22", "gfx1030", "gfx1030:xnack+"), Some(1));
    // An entry without a processor serves a request without one.
    std::fs::write(
        dir.path().join("unnamed.bc"),
        bundle(&[("hip-amdgcn-amd-amdhsa--", b"DEV"), (HOST, b"HOST")]),
    )
    .unwrap();
    let out = bundler(
        "main",
        dir.path(),
        &[
            "-type=bc",
            "-targets=hipv4-amdgcn-amd-amdhsa--",
            "-input=unnamed.bc",
            "-output=o",
            "-unbundle",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(std::fs::read(dir.path().join("o")).unwrap(), b"DEV");
}

/// `offload-kit packager` (the drop-in `llvm-offload-binary`) at `release`.
fn packager(release: &str, dir: &Path, args: &[&str]) -> Out {
    let mut c = Command::new(KIT);
    c.arg("packager").arg(format!("--llvm-version={release}"));
    c.args(args);
    common::exec(c, dir, Duration::from_secs(60))
}

#[test]
fn extraction_takes_every_image_and_nested_binaries() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.img"), b"AAAA").unwrap();
    std::fs::write(dir.path().join("b.img"), b"BBBB").unwrap();
    // 22 writes one binary per image: a HIP image with an arch, and an
    // OpenMP one without.
    let out = packager(
        "22",
        dir.path(),
        &[
            "-o",
            "pk.bin",
            "--image=file=a.img,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip",
            "--image=file=b.img,triple=x86_64-unknown-linux-gnu,kind=openmp",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    // A binary whose image is that file: main extracts what it nests.
    let out = packager(
        "22",
        dir.path(),
        &[
            "-o",
            "outer.bin",
            "--image=file=pk.bin,triple=t,arch=x,kind=hip",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");

    // No --image: 22 extracts nothing; main every image, `-<arch>` only
    // when there is one, the image kind's name (none: empty) last.
    let names = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("pk-") || n.starts_with("outer-"))
            .collect();
        v.sort();
        v
    };
    let out = packager("22", dir.path(), &["pk.bin"]);
    assert_eq!((out.code, names(dir.path()).len()), (Some(0), 0), "{out:?}");
    let out = packager("main", dir.path(), &["pk.bin"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let want = [
        "pk-amdgcn-amd-amdhsa-gfx906.0.",
        "pk-x86_64-unknown-linux-gnu.1.",
    ];
    assert_eq!(names(dir.path()), want);
    assert_eq!(
        lines(&out),
        want.iter()
            .map(|n| format!("Extracted: {n}"))
            .collect::<Vec<_>>()
    );
    assert_eq!(std::fs::read(dir.path().join(want[0])).unwrap(), b"AAAA");
    assert_eq!(std::fs::read(dir.path().join(want[1])).unwrap(), b"BBBB");

    // The nested binary is not written; its images are, counted on.
    let out = packager("main", dir.path(), &["outer.bin", "--image=kind=hip"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        lines(&out),
        [
            "Extracted: outer-amdgcn-amd-amdhsa-gfx906.0.",
            "Extracted: outer-x86_64-unknown-linux-gnu.1.",
        ]
    );
    // 22 writes the matched image as it is, under its own name.
    let out = packager("22", dir.path(), &["outer.bin", "--image=kind=hip"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        std::fs::read(dir.path().join("outer-t-x.0.")).unwrap(),
        std::fs::read(dir.path().join("pk.bin")).unwrap()
    );
}

#[test]
fn multi_entry_binaries_are_read_and_extracted() {
    use offload_kit::offload_binary::{write_multi, OwnedImage};
    // One binary of two entries, as main's OffloadBinary::write lays it
    // out (v2 and v3), with 24-byte string entries and sized values.
    let img = |arch: &str, data: &[u8]| OwnedImage {
        image_kind: 2,   // IMG_Bitcode
        offload_kind: 4, // OFK_HIP
        flags: 0,
        strings: vec![
            (b"triple".to_vec(), b"amdgcn-amd-amdhsa".to_vec()),
            (b"arch".to_vec(), arch.as_bytes().to_vec()),
        ],
        image: data.to_vec(),
    };
    let dir = tempfile::tempdir().expect("tempdir");
    for version in [2u32, 3] {
        let bin = write_multi(
            &[img("gfx906", b"BC906"), img("gfx90a", b"BC90A")],
            version,
            None,
        )
        .expect("write");
        let name = format!("multi{version}.bin");
        std::fs::write(dir.path().join(&name), &bin).unwrap();
        let out = packager("main", dir.path(), &["--objdump-offloading", &name]);
        assert_eq!(out.code, Some(0), "v{version}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("OFFLOADING IMAGE [1]:")
                && text.contains("gfx90a")
                && text.contains("llvm ir"),
            "v{version}: {text}"
        );
        let out = packager("main", dir.path(), &[&name]);
        assert_eq!(out.code, Some(0), "v{version}: {out:?}");
        let stem = format!("multi{version}");
        assert_eq!(
            lines(&out),
            [
                format!("Extracted: {stem}-amdgcn-amd-amdhsa-gfx906.0.bc"),
                format!("Extracted: {stem}-amdgcn-amd-amdhsa-gfx90a.1.bc"),
            ]
        );
        assert_eq!(
            std::fs::read(
                dir.path()
                    .join(format!("{stem}-amdgcn-amd-amdhsa-gfx90a.1.bc"))
            )
            .unwrap(),
            b"BC90A"
        );
        // 16, 19 and 22 read version 1 only.
        let out = packager("22", dir.path(), &["--objdump-offloading", &name]);
        assert_eq!(out.code, Some(1), "v{version}: {out:?}");
    }
}

/// Hostile offload binaries at main (`tests/data/llvm-main/`, made by hand):
/// a v3 binary whose three entries all point at one nested binary, 15
/// levels deep (3^16 files for 2,696 bytes), is refused before anything
/// is written; counts whose products wrap are what LLVM's modular checks
/// make of them; a binary of no entries is LLVM's undefined behaviour.
#[test]
fn hostile_binaries_at_main() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/llvm-main");
    let dir = tempfile::tempdir().expect("tempdir");
    for f in [
        "dag_3_15.bin",
        "cnt_max.bin",
        "ns_wrap_big.bin",
        "count0.bin",
    ] {
        std::fs::copy(data.join(f), dir.path().join(f)).unwrap();
    }
    let out = packager("main", dir.path(), &["dag_3_15.bin"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("rule CLI-6"), "{out:?}");
    let written = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(written, 4, "nothing written beside the inputs");
    // EntriesCount 2^64 - 1: 40 times it wraps to 2^64 - 40, which fails
    // the size check (End of file) rather than passing it.
    let out = packager("main", dir.path(), &["--objdump-offloading", "cnt_max.bin"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr
            .contains("The end of the file was unexpectedly encountered")
            && out.stderr.contains("rule OB-6"),
        "{out:?}"
    );
    // NumStrings 3 * 2^60: 24 times it wraps to a large value: End of file.
    let out = packager(
        "main",
        dir.path(),
        &["--objdump-offloading", "ns_wrap_big.bin"],
    );
    assert!(
        out.stderr
            .contains("The end of the file was unexpectedly encountered")
            && out.stderr.contains("rule OB-7"),
        "{out:?}"
    );
    let out = packager("main", dir.path(), &["--objdump-offloading", "count0.bin"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("undefined behaviour"), "{out:?}");
}

/// Issue 30 item 6: `tools/llvm-main-changes` lists, per modelled file,
/// the commits of an llvm-project checkout since the profile's commit. On
/// a made-up checkout: a commit that touches `OffloadBundler.cpp` and one
/// that touches an unmodelled file; only the first is listed.
#[test]
fn main_changes_script_lists_what_changed_in_modelled_files() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .current_dir(repo)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .expect("git (tools/setup installs it)");
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    git(&["init", "-q"]);
    let write = |path: &str, text: &str| {
        let p = repo.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("clang/lib/Driver/OffloadBundler.cpp", "// the bundler\n");
    write("llvm/lib/Object/OffloadBinary.cpp", "// offload binaries\n");
    write("llvm/README.txt", "LLVM\n");
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    let base = git(&["rev-parse", "HEAD"]);
    write(
        "clang/lib/Driver/OffloadBundler.cpp",
        "// the bundler, changed\n",
    );
    git(&["commit", "-qam", "[clang] Change the bundler"]);
    write("llvm/README.txt", "LLVM, changed\n");
    git(&["commit", "-qam", "Unrelated change"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/llvm-main-changes");
    let run = |args: &[&str]| Command::new(&script).args(args).output().unwrap();
    let repo_s = repo.to_str().unwrap();
    let o = run(&[repo_s, "--since", &base]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("clang/lib/Driver/OffloadBundler.cpp (modelled at"),
        "{out}"
    );
    assert!(out.contains("[clang] Change the bundler"), "{out}");
    assert!(
        !out.contains("Unrelated change") && !out.contains("OffloadBinary.cpp"),
        "{out}"
    );
    // Since the last commit nothing modelled changed: exit 3.
    let head = git(&["rev-parse", "HEAD"]);
    assert_eq!(run(&[repo_s, "--since", &head]).status.code(), Some(3));
    // Without --since the profile's own commit is used; this checkout lacks
    // it, and says so.
    let o = run(&[repo_s]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(offload_kit::profile::MAIN_COMMIT), "{err}");
    // Not a checkout at all.
    let o = run(&[dir.path().join("nowhere").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
}

/// Packaging at main (OB-22, *LLVM main*; llvm#197456 and the proposed
/// llvm#222774 as stored): every `--image` in one version 3 binary, which
/// the strict reader accepts, main's objdump prints image by image, and
/// main's extraction gives back byte for byte; `--compress` writes the same
/// binary compressed after its header (`inflated size` = the plain one's
/// size), which lists the same images; the compression options are
/// checked in main's order and words, and are unknown before main.
#[test]
fn packaging_writes_one_multi_entry_binary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.o"), b"IMAGE-ONE").unwrap();
    std::fs::write(d.join("b.o"), b"IMAGE-TWO!!").unwrap();
    let images = [
        "--image=file=a.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip",
        "--image=file=b.o,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=openmp",
    ];
    let o = packager("main", d, &[&["-o", "m.bin"][..], &images].concat());
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let m = std::fs::read(d.join("m.bin")).unwrap();
    assert_eq!(
        &m[..8],
        b"\x10\xff\x10\xad\x03\0\0\0",
        "one version 3 binary"
    );
    assert_eq!(
        u64::from_le_bytes(m[24..32].try_into().unwrap()),
        2,
        "two entries"
    );
    assert_eq!(
        u64::from_le_bytes(m[32..40].try_into().unwrap()),
        0,
        "not compressed"
    );
    let strict = offload_kit::offload_binary::parse_strict(&m, 0, Default::default()).unwrap();
    assert_eq!(strict.len(), 1);
    let imgs: Vec<&[u8]> = strict[0].entries.iter().map(|e| &*e.image).collect();
    assert_eq!(imgs, [&b"IMAGE-ONE"[..], b"IMAGE-TWO!!"]);
    let o = packager("main", d, &["--objdump-offloading", "m.bin"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("OFFLOADING IMAGE [1]:\nkind            elf\narch            sm_70"),
        "{text}"
    );
    assert!(text.contains("image size      11 bytes"), "{text}");
    // 22 writes one v1 binary per image instead.
    let o = packager("22", d, &[&["-o", "v1.bin"][..], &images].concat());
    assert_eq!(o.code, Some(0));
    let v1 = std::fs::read(d.join("v1.bin")).unwrap();
    assert_eq!(v1[4], 1);
    assert_eq!(
        offload_kit::offload_binary::parse_strict(&v1, 0, Default::default())
            .unwrap()
            .len(),
        2
    );
    // Compressed, both formats: the same images.
    for fmt in ["zstd", "zlib"] {
        let format = format!("--compression-format={fmt}");
        let args = [&["-o", "c.bin", "--compress", &format][..], &images].concat();
        let o = packager("main", d, &args);
        assert_eq!(o.code, Some(0), "{fmt}: {}", o.stderr);
        let c = std::fs::read(d.join("c.bin")).unwrap();
        assert_eq!(c.len() % 8, 0);
        assert_eq!(
            u64::from_le_bytes(c[32..40].try_into().unwrap()),
            m.len() as u64,
            "{fmt}"
        );
        let read = offload_kit::offload_binary::parse_strict(&c, 0, Default::default()).unwrap();
        let got: Vec<&[u8]> = read[0].entries.iter().map(|e| &*e.image).collect();
        assert_eq!(got, imgs, "{fmt}");
        // main reads what it wrote: objdump prints both, extraction gives them back.
        let o = packager("main", d, &["--objdump-offloading", "c.bin"]);
        assert_eq!(o.code, Some(0), "{fmt}: {}", o.stderr);
        assert_eq!(
            o.stdout,
            packager("main", d, &["--objdump-offloading", "m.bin"]).stdout,
            "{fmt}"
        );
        let o = packager(
            "main",
            d,
            &["c.bin", "--image=triple=nvptx64-nvidia-cuda,file=nv.out"],
        );
        assert_eq!(o.code, Some(0), "{fmt}: {}", o.stderr);
        assert_eq!(
            std::fs::read(d.join("nv.out")).unwrap(),
            b"IMAGE-TWO!!",
            "{fmt}"
        );
    }
    for (args, want) in [
        (
            &["--compress", "--compression-level=9"][..],
            "--compression-level requires --compression-format",
        ),
        (
            &[
                "--compress",
                "--compression-format=zlib",
                "--compression-level=12",
            ],
            "invalid zlib compression level 12; expected a value in [0, 9]",
        ),
        (
            &[
                "--compress",
                "--compression-format=zstd",
                "--compression-level=23",
            ],
            "invalid zstd compression level 23; expected a value in [-5, 22]",
        ),
    ] {
        let o = packager(
            "main",
            d,
            &[&["-o", "x.bin"][..], args, &images[..1]].concat(),
        );
        assert_eq!(o.code, Some(1), "{args:?}");
        assert!(o.stderr.contains(want), "{args:?}: {}", o.stderr);
    }
    // A compressed binary claiming more than the stream holds, and one whose
    // entries offset is not 40: refused, nothing written, no panic.
    let mut c = std::fs::read(d.join("c.bin")).unwrap();
    let claim = u64::from_le_bytes(c[32..40].try_into().unwrap());
    c[32..40].copy_from_slice(&(claim + 8).to_le_bytes());
    std::fs::write(d.join("bad.bin"), &c).unwrap();
    let o = packager("main", d, &["bad.bin", "--image=triple=t,file=bad.out"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stderr.contains("OB-19") && !d.join("bad.out").exists(),
        "{}",
        o.stderr
    );
    c[32..40].copy_from_slice(&claim.to_le_bytes());
    c[16] = 48;
    std::fs::write(d.join("bad2.bin"), &c).unwrap();
    let o = packager("main", d, &["--objdump-offloading", "bad2.bin"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stderr.contains("Invalid data") && o.stderr.contains("OB-19"),
        "{}",
        o.stderr
    );
    let o = packager("22", d, &["-o", "x.bin", "--compress", images[0]]);
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr
            .contains("Unknown command line argument '--compress'"),
        "{}",
        o.stderr
    );
}

/// main's `member=` filter key picks the archive member an image came
/// from (`member-extract.test`); 22 takes it as a string key no image has.
#[test]
fn member_key_picks_an_archive_member() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, img) in [("a.o", &b"AAAA"[..]), ("b.o", b"BBBBBB")] {
        std::fs::write(d.join("img"), img).unwrap();
        let o = packager("22", d, &["-o", name, "--image=file=img,triple=t,arch=x"]);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
    let members: Vec<(String, Vec<u8>)> = ["a.o", "b.o"]
        .iter()
        .map(|n| (n.to_string(), std::fs::read(d.join(n)).unwrap()))
        .collect();
    let refs: Vec<(&str, &[u8])> = members
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    std::fs::write(d.join("lib.a"), offload_kit::host::ar::write_gnu(&refs)).unwrap();
    let o = packager(
        "main",
        d,
        &["lib.a", "--image=member=b.o,triple=t,file=out"],
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(!o.stderr.contains("Multiple inputs"), "{}", o.stderr);
    assert_eq!(std::fs::read(d.join("out")).unwrap(), b"BBBBBB");
    let o = packager("main", d, &["lib.a", "--image=triple=t,file=both"]);
    assert!(
        o.stderr
            .contains("Multiple inputs match to a single file, 'both'"),
        "{}",
        o.stderr
    );
    let o = packager("22", d, &["lib.a", "--image=member=b.o,triple=t,file=none"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(!d.join("none").exists(), "22 matches no image on member=");
}

/// `amdgpu<subarch>` IDs through main's bundler (spec/bundle-id.md ID-7,
/// COMPAT-4, *LLVM main*: OffloadBundler.cpp at 0629daa018e3): it bundles
/// and lists them as written, unbundles the pair clang's linker-wrapper
/// test unbundles, serves a subarch request from an `amdgcn` entry of the
/// same processor, but not a gfx942 request from generic code (GPUKind
/// equality); 22 refuses the triples.
#[test]
fn amdgpu_subarch_ids_through_mains_bundler() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("h"), b"HOST").unwrap();
    std::fs::write(d.join("g"), b"GENERIC").unwrap();
    std::fs::write(d.join("x"), b"GFX1200").unwrap();
    std::fs::write(d.join("n"), b"GFX942").unwrap();
    let targets = format!(
        "-targets={HOST},hip-amdgpu9.4-amd-amdhsa--gfx9-4-generic:xnack+,hip-amdgpu12.00-amd-amdhsa--gfx1200,hip-amdgcn-amd-amdhsa--gfx942"
    );
    let inputs = ["-input=h", "-input=g", "-input=x", "-input=n"];
    let o = bundler(
        "22",
        d,
        &[&["-type=bc", &targets, "-output=b22"][..], &inputs].concat(),
    );
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr
            .contains("unknown target triple 'amdgpu9.4-amd-amdhsa"),
        "{}",
        o.stderr
    );
    let o = bundler(
        "main",
        d,
        &[&["-type=bc", &targets, "-output=b"][..], &inputs].concat(),
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let mut listed = lines(&list("main", d, "b", "bc"));
    listed.sort();
    assert_eq!(
        listed,
        [
            "hip-amdgcn-amd-amdhsa--gfx942",
            "hip-amdgpu12.00-amd-amdhsa--gfx1200",
            "hip-amdgpu9.4-amd-amdhsa--gfx9-4-generic:xnack+",
            HOST
        ]
    );
    let unbundle = |target: &str, out: &str| {
        bundler(
            "main",
            d,
            &[
                "-type=bc",
                "-unbundle",
                &format!("-targets={target}"),
                "-input=b",
                &format!("-output={out}"),
            ],
        )
    };
    // Exact matches, as linker-wrapper-hip-no-rdc.c unbundles them.
    assert_eq!(
        unbundle("hip-amdgpu9.4-amd-amdhsa--gfx9-4-generic:xnack+", "o1").code,
        Some(0)
    );
    assert_eq!(std::fs::read(d.join("o1")).unwrap(), b"GENERIC");
    assert_eq!(
        unbundle("hip-amdgpu12.00-amd-amdhsa--gfx1200", "o2").code,
        Some(0)
    );
    assert_eq!(std::fs::read(d.join("o2")).unwrap(), b"GFX1200");
    // The amdgcn gfx942 entry serves a request naming gfx942 by its subarch.
    assert_eq!(
        unbundle("hipv4-amdgpu9.42-amd-amdhsa--", "o3").code,
        Some(0)
    );
    assert_eq!(std::fs::read(d.join("o3")).unwrap(), b"GFX942");
    // Without it, generic code does not serve gfx942: GPUKind equality.
    let generic_only = format!("-targets={HOST},hip-amdgpu9.4-amd-amdhsa--gfx9-4-generic:xnack+");
    let o = bundler(
        "main",
        d,
        &[
            "-type=bc",
            &generic_only,
            "-input=h",
            "-input=g",
            "-output=b2",
        ],
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let o = bundler(
        "main",
        d,
        &[
            "-type=bc",
            "-unbundle",
            "-targets=hip-amdgpu9.42-amd-amdhsa--gfx942:xnack+",
            "-input=b2",
            "-output=o4",
        ],
    );
    assert_eq!(o.code, Some(1));
    assert!(o.stderr.contains("Can't find bundles for"), "{}", o.stderr);
}
