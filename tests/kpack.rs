//! kpack archives written by ROCm's own tools (tests/data/kpack/, made by
//! ROCm/rocm-kpack's `pack_tree` and `split_artifacts` from clang 22's fat
//! binaries; its README has the commands): offload-kit lists and validates
//! each, and extracts code objects byte-identical to what the fat binary
//! they were split from holds (spec/kpack.md).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_offload-kit");

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/kpack")
        .join(name)
}

fn offload_kit(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(EXE).args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        o.status.code().unwrap_or(-1),
        text(&o.stdout),
        text(&o.stderr),
    )
}

/// `extract --all` of `file` into a fresh directory: name → bytes.
fn extracted(file: &Path, dir: &Path) -> Vec<(String, Vec<u8>)> {
    let _ = std::fs::remove_dir_all(dir);
    let d = dir.to_str().unwrap();
    let (code, out, err) = offload_kit(&["extract", "--all", "--dir", d, file.to_str().unwrap()]);
    assert_eq!(code, 0, "{}: {out}{err}", file.display());
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn rocm_written_archives_hold_the_fat_binarys_code_objects() {
    let tmp = std::env::temp_dir().join(format!("ok-kpack-{}", std::process::id()));
    // (archive, fat binary it was split from, kernel names without '#')
    let cases = [
        ("pack_tree-test-gfx9.kpack", "libk.so", true),
        (
            "pack_tree-compressed-test-gfx9.kpack",
            "libk-compressed.so",
            true,
        ),
        ("split-test_lib_gfx906.kpack", "libk.so", false),
        ("split-test_lib_gfx90a.kpack", "libk.so", false),
    ];
    for (archive, fat, unindexed) in cases {
        let (code, out, err) = offload_kit(&["validate", data(archive).to_str().unwrap()]);
        assert_eq!(code, 0, "{archive}: {out}{err}");
        assert!(out.contains("valid kpack archive"), "{archive}: {out}");
        // pack_tree's keys are bare paths, which ROCm's runtime does not find.
        assert_eq!(
            err.contains("has no '#<index>'"),
            unindexed,
            "{archive}: {err}"
        );
        let (code, json, _) = offload_kit(&["list", "--json", data(archive).to_str().unwrap()]);
        assert_eq!(code, 0);
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(doc["container"], "kpack");
        let from_fat = extracted(&data(fat), &tmp.join(format!("{archive}-fat")));
        let from_kpack = extracted(&data(archive), &tmp.join(archive));
        assert_eq!(from_kpack.len(), doc["entries"].as_array().unwrap().len());
        for (name, bytes) in &from_kpack {
            let arch = name.trim_end_matches(".hsaco").rsplit('.').next().unwrap();
            let want = from_fat
                .iter()
                .find(|(n, _)| n.ends_with(&format!("--{arch}")))
                .unwrap_or_else(|| panic!("{fat} has no {arch} entry"));
            assert!(
                bytes == &want.1,
                "{archive}: {name} differs from {fat}'s {}",
                want.0
            );
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// The hosts ROCm's splitter rewrote (HIPK-1): their `.hip_fatbin` is
/// NOBITS or keeps a small compressed bundle, and `list` says where the
/// device code went; the same host with the wrapper's `HIPF` back is held
/// to FAT-4, and a damaged reference is refused.
#[test]
fn hipk_hosts_name_their_archives() {
    for (host, kernel) in [
        ("split-host-libk.so", "'stage/lib/libk.so'"),
        ("pack_tree-host-libk.so", "'lib/libk.so'"),
        ("pack_tree-compressed-host-libk.so", "'lib/libk.so'"),
    ] {
        let path = data(host);
        let (code, out, err) = offload_kit(&["validate", path.to_str().unwrap()]);
        assert_eq!(code, 0, "{host}: {out}{err}");
        let (code, out, err) = offload_kit(&["list", path.to_str().unwrap()]);
        assert_eq!(code, 0, "{host}: {err}");
        assert!(
            out.contains("kpack archives (HIPK host)") && out.contains(kernel),
            "{host}: {out}"
        );
    }
    let good = std::fs::read(data("split-host-libk.so")).unwrap();
    let find = |what: &[u8]| good.windows(what.len()).rposition(|w| w == what).unwrap();
    let tmp = std::env::temp_dir().join(format!("ok-hipk-{}.so", std::process::id()));
    let (hipk, reference) = (find(b"HIPK"), find(b"kpack_search_paths"));
    for (at, value, rule) in [(hipk + 3, b'F', "FAT-4"), (reference, b'X', "HIPK-1")] {
        let mut b = good.clone();
        b[at] = value;
        std::fs::write(&tmp, &b).unwrap();
        let (code, out, err) = offload_kit(&["validate", tmp.to_str().unwrap()]);
        assert_eq!(code, 1, "{rule}: {out}{err}");
        assert!(err.contains(&format!("rule {rule}")), "{rule}: {err}");
    }
    let _ = std::fs::remove_file(&tmp);
}

#[test]
fn damaged_archives_are_refused_with_their_rule() {
    let plain = std::fs::read(data("split-test_lib_gfx906.kpack")).unwrap();
    let zstd = std::fs::read(data("pack_tree-test-gfx9.kpack")).unwrap();
    let ordinal = plain
        .windows(9)
        .position(|w| w == b"\xa7ordinal\x00")
        .unwrap()
        + 8;
    let tmp = std::env::temp_dir().join(format!("ok-kpack-bad-{}.kpack", std::process::id()));
    // (archive, byte changed, value, rule): split_artifacts' plain archive,
    // and pack_tree's zstd one with its first frame's magic broken.
    for (archive, at, value, rule) in [
        (&plain, 4, 2u8, "KPAK-1"),
        (&plain, 15, 0x80, "KPAK-1"),
        (&plain, 8, 0x10, "KPAK-2"),
        (&plain, plain.len() - 1, 0xc1, "KPAK-3"),
        (&zstd, 0x48, 0, "KPAK-4"),
        (&plain, ordinal, 7, "KPAK-5"),
    ] {
        let mut b = archive.clone();
        b[at] = value;
        std::fs::write(&tmp, &b).unwrap();
        let (code, out, err) = offload_kit(&["validate", tmp.to_str().unwrap()]);
        assert_eq!(code, 1, "{rule} at {at}: {out}{err}");
        assert!(
            err.contains(&format!("rule {rule}")),
            "{rule} at {at}: {err}"
        );
    }
    let _ = std::fs::remove_file(&tmp);
}

/// `generate --kind kpack` writes splits laid out as ROCm's
/// `split_artifacts` writes them: each host validates and names, through
/// `@GFXARCH@`, one archive per architecture beside it; each archive
/// validates, files its code object under `<kernel_name>#0` (the key the
/// runtime looks up) and holds an AMDGPU code object for its architecture.
#[test]
fn generated_splits_validate_and_name_their_archives() {
    use offload_kit::inspect::code_object::{identify, CodeObject};
    use offload_kit::kpack;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, out, err) = offload_kit(&[
        "generate", "--kind", "kpack", "--count", "12", "--seed", "40", "--out", d,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let mut archives_seen = 0;
    for seed in 40..52u64 {
        let host = dir.path().join(format!("kpack-{seed:016x}.o"));
        let (code, out, err) = offload_kit(&["validate", host.to_str().unwrap()]);
        assert_eq!(code, 0, "{}: {out}{err}", host.display());
        let bytes = std::fs::read(&host).unwrap();
        let elf = offload_kit::host::elf::Elf::parse(&bytes).unwrap();
        let r = offload_kit::bundle::fatbin::kpack_ref(&elf, &bytes)
            .expect("a HIPK host")
            .unwrap();
        assert_eq!(r.search_paths.len(), 1);
        let pattern = &r.search_paths[0];
        let (before, after) = pattern.split_once("@GFXARCH@").expect("@GFXARCH@");
        let mut found = 0;
        for e in std::fs::read_dir(dir.path()).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            let Some(arch) = name
                .strip_prefix(before)
                .and_then(|n| n.strip_suffix(after))
            else {
                continue;
            };
            found += 1;
            let data = std::fs::read(dir.path().join(&name)).unwrap();
            let a = kpack::parse(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(a.kernels.len(), 1, "{name}");
            let k = &a.kernels[0];
            assert_eq!(k.name, format!("{}#0", r.kernel_name), "{name}");
            assert_eq!(k.arch, arch, "{name}");
            let co = a.code_object(&data, k, 1 << 28).unwrap();
            match identify(&co) {
                CodeObject::Amdgpu(o) => assert_eq!(o.processor, Some(arch), "{name}"),
                _ => panic!("{name}: not an AMDGPU code object"),
            }
            let (code, out, err) =
                offload_kit(&["validate", dir.path().join(&name).to_str().unwrap()]);
            assert_eq!(code, 0, "{name}: {out}{err}");
        }
        assert!(
            found >= 1,
            "{}: no archive matches {pattern}",
            host.display()
        );
        archives_seen += found;
    }
    assert!(archives_seen > 12, "every split had one architecture");
}

/// `check --gpu` and `extract --gpu` of a HIPK host find its code object as
/// ROCm's runtime does (spec/kpack.md HIPK-2), in the layout the splitter
/// wrote (`lib/libk.so`, archives in `../.kpack`): `split_artifacts`'
/// archives serve gfx906 and a gfx90a agent ISA with features, byte for
/// byte the fat binary's code objects; gfx942 has no archive
/// (ARCHIVE_NOT_FOUND); `pack_tree`'s archive lists gfx906 but files it
/// without `#0` (KERNEL_NOT_FOUND, what its runtime answers); `--kpack-path`
/// names archives in place of the host's search paths.
#[test]
fn hosts_find_their_code_objects_as_the_runtime_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let put = |from: &str, to: &str| {
        let p = d.join(to);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::copy(data(from), p).unwrap();
    };
    put("split-host-libk.so", "split/stage/lib/libk.so");
    put(
        "split-test_lib_gfx906.kpack",
        "split/stage/.kpack/test_lib_gfx906.kpack",
    );
    put(
        "split-test_lib_gfx90a.kpack",
        "split/stage/.kpack/test_lib_gfx90a.kpack",
    );
    put("pack_tree-host-libk.so", "tree/lib/libk.so");
    put("pack_tree-test-gfx9.kpack", "tree/.kpack/test-gfx9.kpack");
    let host = d.join("split/stage/lib/libk.so");
    let h = host.to_str().unwrap();
    let fat = extracted(&data("libk.so"), &d.join("fat"));
    let of = |arch: &str| {
        fat.iter()
            .find(|(n, _)| n.ends_with(arch))
            .unwrap()
            .1
            .clone()
    };
    for (gpu, arch) in [
        ("gfx906", "gfx906"),
        ("amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+", "gfx90a"),
    ] {
        let (code, out, err) = offload_kit(&["check", "--gpu", gpu, h]);
        assert_eq!(code, 0, "{gpu}: {out}{err}");
        assert!(
            out.contains(&format!(
                "runs: code object 'stage/lib/libk.so#0' for {arch}"
            )),
            "{out}"
        );
        let o = d.join(format!("{arch}.hsaco"));
        let (code, out, err) =
            offload_kit(&["extract", "--gpu", gpu, "-o", o.to_str().unwrap(), h]);
        assert_eq!(code, 0, "{gpu}: {out}{err}");
        assert_eq!(
            std::fs::read(&o).unwrap(),
            of(&format!("--{arch}")),
            "{gpu}"
        );
    }
    let (code, out, _) = offload_kit(&["check", "--gpu", "gfx942", h]);
    assert_eq!(code, 1);
    assert!(out.contains("ARCHIVE_NOT_FOUND"), "{out}");
    let o = d.join("none.hsaco");
    let (code, _, err) = offload_kit(&["extract", "--gpu", "gfx942", "-o", o.to_str().unwrap(), h]);
    assert_eq!(code, 1);
    assert!(err.contains("rule HIPK-2") && !o.exists(), "{err}");
    let tree = d.join("tree/lib/libk.so");
    let (code, out, _) = offload_kit(&["check", "--gpu", "gfx906", tree.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        out.contains("KERNEL_NOT_FOUND") && out.contains("'lib/libk.so#0'"),
        "{out}"
    );
    // Named archives: the split's gfx906 archive for the split's host.
    let named = d.join("split/stage/.kpack/test_lib_gfx906.kpack");
    let moved = d.join("elsewhere.kpack");
    std::fs::rename(&named, &moved).unwrap();
    let (code, out, _) = offload_kit(&["check", "--gpu", "gfx906", h]);
    assert_eq!(code, 1, "{out}");
    let (code, out, err) = offload_kit(&[
        "check",
        "--gpu",
        "gfx906",
        "--kpack-path",
        moved.to_str().unwrap(),
        h,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("elsewhere.kpack"), "{out}");
    let (code, out, _) = offload_kit(&[
        "check",
        "--json",
        "--gpu",
        "gfx906",
        "--gpu",
        "gfx942",
        "--kpack-path",
        moved.to_str().unwrap(),
        h,
    ]);
    assert_eq!(code, 1);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let v = &doc["files"][0]["kpack"];
    assert_eq!(
        (v[0]["runs"].as_bool(), v[1]["error"].as_str()),
        (Some(true), Some("ARCH_NOT_FOUND")),
        "{doc}"
    );
}

/// `convert --to kpack` splits a clang-built fat binary's code objects into
/// one archive per target as `split_artifacts` files them: each archive
/// validates and holds the code object ROCm's own archive holds, byte for
/// byte; named as ROCm's host names its kernel, ROCm's HIPK host finds
/// them (HIPK-2, through `--kpack-path`). `convert --to bundle` joins an
/// archive back into a bundle with the same code objects.
#[test]
fn fat_binaries_split_into_archives_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("split");
    let (code, o, e) = offload_kit(&[
        "convert",
        "--to",
        "kpack",
        data("libk.so").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--kernel-name",
        "stage/lib/libk.so",
        "--prefix",
        "test_lib",
    ]);
    assert_eq!(code, 0, "{o}{e}");
    let host = d.join("libk.so");
    std::fs::copy(data("split-host-libk.so"), &host).unwrap();
    for arch in ["gfx906", "gfx90a"] {
        let ours = out.join(format!("test_lib_{arch}.kpack"));
        let (code, o, e) = offload_kit(&["validate", ours.to_str().unwrap()]);
        assert_eq!(code, 0, "{arch}: {o}{e}");
        let mine = extracted(&ours, &d.join(format!("mine-{arch}")));
        let theirs = extracted(
            &data(&format!("split-test_lib_{arch}.kpack")),
            &d.join(format!("theirs-{arch}")),
        );
        assert_eq!(mine.len(), 1, "{arch}");
        assert_eq!(
            mine, theirs,
            "{arch}: the same key, architecture and bytes as ROCm's archive"
        );
        // ROCm's host, pointed at our archive, finds its code object there.
        let co = d.join(format!("{arch}.hsaco"));
        let (code, o, e) = offload_kit(&[
            "extract",
            "--gpu",
            arch,
            "--kpack-path",
            ours.to_str().unwrap(),
            "-o",
            co.to_str().unwrap(),
            host.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{arch}: {o}{e}");
        assert_eq!(std::fs::read(&co).unwrap(), mine[0].1, "{arch}");
        // And back: a bundle holding the same code object.
        let bundle = d.join(format!("{arch}.bundle"));
        let (code, o, e) = offload_kit(&[
            "convert",
            "--to",
            "bundle",
            ours.to_str().unwrap(),
            "-o",
            bundle.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{arch}: {o}{e}");
        let back = extracted(&bundle, &d.join(format!("back-{arch}")));
        let dev = back
            .iter()
            .find(|(n, _)| n.ends_with(&format!("--{arch}")))
            .expect("the device entry");
        assert_eq!(dev.1, mine[0].1, "{arch}: the bundle's code object");
    }
}

/// The stand-in HIP runtime (tests/data/kpack/loader/) built into `dir`:
/// `load HOST...` dlopens each host, and the runtime prints what glibc's
/// loader handed each wrapper.
fn loader(dir: &Path) -> PathBuf {
    let src = data("loader");
    let cc = |args: &[&str]| {
        let o = Command::new("cc").args(args).output().unwrap_or_else(|e| {
            panic!("a C compiler ('cc') is needed to build the loader stand-in: {e}")
        });
        assert!(
            o.status.success(),
            "cc {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let map = format!("-Wl,--version-script={}", s(&src.join("hip.map")));
    cc(&[
        "-shared",
        "-fPIC",
        "-o",
        &s(&dir.join("libamdhip64.so.5")),
        &map,
        &s(&src.join("hip_stub.c")),
    ]);
    cc(&["-o", &s(&dir.join("load")), &s(&src.join("load.c")), "-ldl"]);
    dir.join("load")
}

/// What each wrapper of `host` registers when the loader runs it:
/// (magic as stored, reserved1, the first 20 bytes its pointer reaches).
fn registered(load: &Path, host: &Path) -> Vec<(String, u64, Vec<u8>)> {
    let o = Command::new(load)
        .arg(host)
        .env("LD_LIBRARY_PATH", load.parent().unwrap())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{}: {out}{}",
        host.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    out.lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!((w[0], w[2], w[4]), ("magic", "index", "data"), "{l}");
            let bytes = w[5..]
                .iter()
                .map(|b| u8::from_str_radix(b, 16).unwrap())
                .collect();
            (w[1].to_string(), w[3].parse().unwrap(), bytes)
        })
        .collect()
}

/// The device entries of a file as `list` shows them: (ID, size), sorted.
fn device_entries(file: &Path) -> Vec<(String, String)> {
    let (code, out, err) = offload_kit(&["list", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let mut v: Vec<(String, String)> = out
        .lines()
        .filter(|l| l.starts_with("hipv4-"))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[0].to_string(), w[4].to_string())
        })
        .collect();
    v.sort();
    v
}

/// The code objects `extract --all` writes for `file` (host entries left
/// out), each as its size and hash, sorted (a 1.3 GB library's are not
/// held).
fn code_objects(file: &Path, dir: &Path) -> Vec<(u64, u64)> {
    use std::hash::{Hash, Hasher};
    let _ = std::fs::remove_dir_all(dir);
    let (code, out, err) = offload_kit(&[
        "extract",
        "--all",
        "--dir",
        dir.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{}: {out}{err}", file.display());
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let b = std::fs::read(&p).unwrap();
        if p.to_string_lossy().contains("host-") || b.is_empty() {
            continue;
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        b.hash(&mut h);
        v.push((b.len() as u64, h.finish()));
    }
    v.sort();
    let _ = std::fs::remove_dir_all(dir);
    v
}

/// A fat binary split by `convert --to kpack` and made whole by
/// `convert --to bundle`, checked through offload-kit's readers and
/// glibc's loader (HIPK-3): returns the split's directory.
fn split_and_back(fat: &Path, d: &Path, gpu: &str) -> PathBuf {
    let split = d.join("split");
    let name = fat.file_name().unwrap().to_str().unwrap();
    let (code, o, e) = offload_kit(&[
        "convert",
        "--to",
        "kpack",
        fat.to_str().unwrap(),
        "-o",
        split.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{o}{e}");
    let host = split.join(name);
    assert!(o.contains("HIPK host"), "{o}");
    // The same code objects, through the host, as in the fat binary.
    assert_eq!(
        code_objects(&host, &d.join("x-split")),
        code_objects(fat, &d.join("x-fat"))
    );
    let (code, o, e) = offload_kit(&["check", "--gpu", gpu, host.to_str().unwrap()]);
    assert_eq!(code, 0, "{o}{e}");
    assert!(o.contains(": runs: "), "{o}");
    let (code, o, e) = offload_kit(&["inspect", host.to_str().unwrap()]);
    assert_eq!(code, 0, "{o}{e}");
    // The code objects shown through the host (a fat binary under a page
    // is shown as well, before them).
    let shown = o
        .lines()
        .skip_while(|l| !l.contains("split into kpack archives"))
        .filter(|l| l.contains("AMDGPU code object"))
        .count();
    assert_eq!(shown, device_entries(fat).len(), "{o}");
    assert!(o.contains("split into kpack archives (HIPK host)"), "{o}");
    let (code, o, e) = offload_kit(&["inspect", "--json", host.to_str().unwrap()]);
    assert_eq!(code, 0, "{o}{e}");
    let doc: serde_json::Value = serde_json::from_str(&o).unwrap();
    let filed = doc["files"][0]["kpack_host"]["code_objects"]
        .as_array()
        .unwrap();
    assert_eq!(filed.len(), shown, "{o}");
    assert!(
        filed.iter().all(|c| c["code_object"]["kind"] == "amdgpu"),
        "{o}"
    );
    // And back: the host registers bundles again, of the same code objects.
    let back = d.join(format!("back-{name}"));
    let (code, o, e) = offload_kit(&[
        "convert",
        "--to",
        "bundle",
        host.to_str().unwrap(),
        "-o",
        back.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{o}{e}");
    assert_eq!(device_entries(&back), device_entries(fat));
    assert_eq!(
        code_objects(&back, &d.join("x-back")),
        code_objects(fat, &d.join("x-fat"))
    );
    let (code, o, e) = offload_kit(&["validate", back.to_str().unwrap()]);
    assert_eq!(code, 0, "{o}{e}");
    split
}

#[test]
fn split_hosts_load_find_their_archives_and_convert_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let load = loader(d);
    let fat = data("libk.so");
    let split = split_and_back(&fat, d, "gfx90a");
    let ours = split.join("libk.so");
    // glibc maps the new segment and applies the retargeted relocation:
    // the wrapper says HIPK and points at `.rocm_kpack_ref`, as the
    // wrapper of ROCm's own split does; the fat binary's points at its
    // bundle, and so does the host made whole again.
    let reference = offload_kit::kpack::HostRef {
        search_paths: vec!["libk_@GFXARCH@.kpack".into()],
        kernel_name: "libk.so".into(),
    }
    .to_bytes();
    let bundle = b"__CLANG_OFFLOAD_BUNDLE__"[..20].to_vec();
    assert_eq!(
        registered(&load, &ours),
        [("HIPK".into(), 0, reference[..20].to_vec())]
    );
    let rocm = registered(&load, &data("split-host-libk.so"));
    assert_eq!(
        (rocm[0].0.as_str(), rocm[0].1, &rocm[0].2[..2]),
        ("HIPK", 0, &reference[..2])
    );
    assert_eq!(
        registered(&load, &fat),
        [("FPIH".into(), 0, bundle.clone())]
    );
    assert_eq!(
        registered(&load, &d.join("back-libk.so")),
        [("FPIH".into(), 0, bundle)]
    );
    // The host is smaller by the fat binary's whole pages.
    let (before, after) = (
        std::fs::metadata(&fat).unwrap().len(),
        std::fs::metadata(&ours).unwrap().len(),
    );
    assert!(after + 8192 <= before, "{after} of {before} bytes");
    // A compressed fat binary under a page keeps its bytes (HIPK-1), as
    // ROCm's splitter leaves it; it splits and comes back all the same.
    let compressed = d.join("compressed");
    std::fs::create_dir_all(&compressed).unwrap();
    split_and_back(&data("libk-compressed.so"), &compressed, "gfx906");
    let host = compressed.join("split/libk-compressed.so");
    assert_eq!(registered(&load, &host)[0].0, "HIPK");
    // A split host is not split twice, and a fat binary is not made whole.
    let (code, _, e) = offload_kit(&[
        "convert",
        "--to",
        "kpack",
        ours.to_str().unwrap(),
        "-o",
        d.join("again").to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{e}");
    assert!(e.contains("HIPK-3"), "{e}");
}

#[test]
fn hosts_of_several_translation_units_split_per_wrapper() {
    let Some(bin) = common::llvm_bin(22, &["clang", "clang-offload-bundler"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = std::fs::read_to_string(data("../../fixtures/k.hip")).unwrap();
    std::fs::write(d.join("a.hip"), &src).unwrap();
    std::fs::write(d.join("b.hip"), src.replace("void k(", "void k2(")).unwrap();
    let lib = d.join("libab.so");
    let o = Command::new(bin.join("clang"))
        .args([
            "-x",
            "hip",
            "-nogpulib",
            "-nogpuinc",
            "--offload-arch=gfx906",
            "--offload-arch=gfx90a:xnack+",
            "-fPIC",
            "-shared",
            "-o",
        ])
        .arg(&lib)
        .args([d.join("a.hip"), d.join("b.hip")])
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let split = split_and_back(&lib, d, "gfx90a:xnack+");
    // Two wrappers: each archive files one code object under each index,
    // and each wrapper registers its own.
    let (code, o, e) = offload_kit(&["list", split.join("libab_gfx906.kpack").to_str().unwrap()]);
    assert_eq!(code, 0, "{e}");
    let keys: Vec<&str> = o
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(keys, ["libab.so#0", "libab.so#1"], "{o}");
    let load = loader(d);
    let regs = registered(&load, &split.join("libab.so"));
    let indices: Vec<u64> = regs.iter().map(|r| r.1).collect();
    assert_eq!(indices, [0, 1]);
    assert!(regs.iter().all(|r| r.0 == "HIPK"));
    let (code, o, e) = offload_kit(&[
        "extract",
        "--gpu",
        "gfx90a:xnack+",
        "--dir",
        d.join("gpu").to_str().unwrap(),
        split.join("libab.so").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{o}{e}");
    assert!(
        d.join("gpu/gfx90a_xnack+.0.hsaco").is_file()
            && d.join("gpu/gfx90a_xnack+.1.hsaco").is_file(),
        "{o}"
    );
}

/// Debian's librocsparse0 5.3 (tools/setup puts it in target/rocsparse).
fn rocsparse() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/rocsparse/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1");
    assert!(
        p.is_file(),
        "{} is missing: run tools/setup (it fetches Debian's librocsparse0)",
        p.display()
    );
    p
}

#[test]
fn librocsparse_splits_into_archives_and_back() {
    let lib = rocsparse();
    let dir = tempfile::tempdir().unwrap();
    let split = split_and_back(&lib, dir.path(), "gfx90a:sramecc+:xnack-");
    let archives = std::fs::read_dir(&split).unwrap().filter(|e| {
        e.as_ref()
            .unwrap()
            .path()
            .extension()
            .is_some_and(|x| x == "kpack")
    });
    assert_eq!(archives.count(), 7, "one archive per target ID");
    // A GPU named without its settings stands for each mode its agent may
    // report, as for the fat binary: gfx906 runs with xnack- only.
    let host = split.join("librocsparse.so.0.1");
    for file in [&host, &lib] {
        let (code, o, e) = offload_kit(&[
            "check",
            "--gpu",
            "gfx906",
            "--gpu",
            "gfx90a",
            file.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{o}{e}");
        assert!(
            o.contains("gfx906: runs") && o.contains("(not in every mode of gfx906)"),
            "{o}"
        );
        assert!(o.contains("gfx90a: runs: "), "{o}");
    }
}

/// `list` of a split host follows its search paths: after the host's own
/// entries (none: its fat binary is gone), each code object its archives
/// file under its keys, at its blob in the archive named, as `extract
/// --all` finds them; with no archive where they point, the host's note
/// and nothing else.
#[test]
fn split_hosts_list_the_code_objects_their_archives_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("split");
    let (code, o, e) = offload_kit(&[
        "convert",
        "--to",
        "kpack",
        "-o",
        out.to_str().unwrap(),
        data("libk.so").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{o}{e}");
    let host = out.join("libk.so");
    let (code, json, e) = offload_kit(&["list", "--json", host.to_str().unwrap()]);
    assert_eq!(code, 0, "{e}");
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let entries = doc["entries"].as_array().unwrap();
    let listed: Vec<(String, String)> = (entries.iter())
        .map(|e| {
            let archive = Path::new(e["kpack"]["archive"].as_str().unwrap());
            let name = archive.file_name().unwrap().to_string_lossy().into_owned();
            (e["kpack"]["arch"].as_str().unwrap().to_string(), name)
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("gfx906".to_string(), "libk_gfx906.kpack".to_string()),
            ("gfx90a".to_string(), "libk_gfx90a.kpack".to_string())
        ]
    );
    // Each entry's blob is its archive's: the code object, stored plain.
    let files = extracted(&host, &dir.path().join("all"));
    assert_eq!(files.len(), entries.len());
    for (e, (name, bytes)) in entries.iter().zip(&files) {
        let archive = std::fs::read(e["kpack"]["archive"].as_str().unwrap()).unwrap();
        let at = e["offset"].as_u64().unwrap() as usize;
        let size = e["size"].as_u64().unwrap() as usize;
        assert_eq!(&archive[at..at + size], &bytes[..], "{name}");
        assert_eq!(e["id"], "libk.so#0");
    }
    let (_, text, _) = offload_kit(&["list", host.to_str().unwrap()]);
    assert!(
        text.starts_with("device code split into kpack archives"),
        "{text}"
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("libk.so#0 gfx9"))
            .count(),
        2,
        "{text}"
    );
    // ROCm's split host: its search paths lead nowhere here.
    let (code, json, _) = offload_kit(&[
        "list",
        "--json",
        data("split-host-libk.so").to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["entries"], serde_json::json!([]));
}
