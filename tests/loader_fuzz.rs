//! The loader-fuzzing kit against real loaders: LLVM 22's offload runtime
//! (libomptarget's host plugin, through `fuzz/harness/omptarget.c`) loads
//! what `generate` makes, refuses random payloads, and crashes on the
//! rules the spec records as unsafe for 22; comgr 5.2 finds every HIP entry
//! of generated bundles; bad `--payloads` input is refused with exit 1.
//! A missing LLVM 22, runtime or comgr fails these tests (run tools/setup).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The offload-kit binary under test.
const KIT: &str = env!("CARGO_BIN_EXE_offload-kit");
const CLANG: &str = "/usr/lib/llvm-22/bin/clang";
const LIBOMPTARGET: &str = "/usr/lib/x86_64-linux-gnu/libomptarget.so.22.1";
/// An entry ID whose images the host plugin loads.
const HOST_ID: &str = "openmp-x86_64-unknown-linux-gnu-";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh directory under target/.
fn scratch(name: &str) -> PathBuf {
    let d = root().join("target/loader-fuzz-test").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The harness with libFuzzer's driver (no custom mutator), built once.
fn harness() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        assert!(
            Path::new(CLANG).is_file(),
            "clang-22 missing at {CLANG}: run tools/setup"
        );
        assert!(
            Path::new(LIBOMPTARGET).is_file(),
            "LLVM 22's offload runtime missing ({LIBOMPTARGET}): run tools/setup (liboffload-22, libomp-22-dev)"
        );
        let dir = root().join("target/loader-fuzz-test");
        std::fs::create_dir_all(&dir).unwrap();
        let bin = dir.join("omptarget");
        common::run_ok(
            Command::new(CLANG)
                .args(["-fsanitize=fuzzer,address", "-g", "-O1", "-o"])
                .arg(&bin)
                .arg(root().join("fuzz/harness/omptarget.c"))
                .args([LIBOMPTARGET, "-ldl"]),
        );
        bin
    })
}

/// The harness's statistics over `inputs` (files or directories).
#[derive(Debug, Default)]
struct Stats {
    images: u64,
    loaded: u64,
    crash_binary: u64,
    crash_image: u64,
}

fn run_harness(inputs: &[&Path]) -> Stats {
    // The host plugin writes images to /tmp/tmpfile_* and the harness
    // removes them after each input: one harness at a time.
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let out = common::run(
        Command::new(harness())
            .arg("-runs=0")
            .args(inputs)
            .env("OMPT_HARNESS_STATS", "1")
            .env("OMPT_HARNESS_CRASH", "count"),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .rfind(|l| l.starts_with("omptarget-harness: execs="))
        .unwrap_or_else(|| panic!("the harness printed no statistics:\n{err}"));
    let field = |name: &str| -> u64 {
        let at = line.find(&format!(" {name}=")).unwrap() + name.len() + 2;
        line[at..].split(' ').next().unwrap().parse().unwrap()
    };
    Stats {
        images: field("images"),
        loaded: field("loaded"),
        crash_binary: field("crash_binary"),
        crash_image: field("crash_image"),
    }
}

fn generate(dir: &Path, args: &[&str]) {
    common::run_ok(
        Command::new(KIT)
            .args(["generate", "--out"])
            .arg(dir)
            .args(args),
    );
    for f in std::fs::read_dir(dir).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_some_and(|e| e == "json") {
            std::fs::remove_file(p).unwrap();
        }
    }
}

/// `count` offload binaries of host images (`extra`: more options).
fn host_binaries(dir: &Path, count: &str, extra: &[&str]) {
    let mut args = vec!["--kind", "offload-binary", "--count", count];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--target-ids", HOST_ID]);
    generate(dir, &args);
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

#[test]
fn generated_host_images_are_loaded_by_llvm_22s_runtime() {
    let dir = scratch("host-images");
    host_binaries(&dir, "150", &[]);
    let s = run_harness(&[&dir]);
    // Compressed version 3 binaries hold no image a 22 loader can see.
    assert!(s.images >= 100, "{s:?}");
    assert!(s.loaded * 100 >= s.images * 99, "{s:?}");
    assert_eq!((s.crash_binary, s.crash_image), (0, 0), "{s:?}");
}

/// `generate --llvm-version 22` makes only what 22 reads (issue 41): of
/// 1,000 valid offload binaries (seeds 0-999) every image is seen, no
/// compressed version 3 hides one, and at least 99% load.
#[test]
fn generated_for_22_load_on_llvm_22s_runtime() {
    let dir = scratch("host-images-22");
    host_binaries(&dir, "1000", &["--llvm-version", "22", "--seed", "0"]);
    let s = run_harness(&[&dir]);
    assert!(s.images >= 1000, "every file's images are seen: {s:?}");
    assert!(s.loaded * 100 >= s.images * 99, "{s:?}");
    assert_eq!((s.crash_binary, s.crash_image), (0, 0), "{s:?}");
    eprintln!(
        "loader_fuzz: generate --llvm-version 22: {} of {} images loaded",
        s.loaded, s.images
    );
}

#[test]
fn user_payloads_are_loaded_and_random_payloads_are_not() {
    // The x86-64 image clang-22 built (fuzz/harness/make-seeds).
    let seed = root().join("fuzz/harness/seeds-omptarget/clang22-host.offbin");
    let images = scratch("payload-dir");
    common::run_ok(
        Command::new(KIT)
            .args(["extract", "--all", "--dir"])
            .arg(&images)
            .arg(&seed),
    );
    let dir = scratch("user-payloads");
    common::run_ok(
        Command::new(KIT)
            .args(["generate", "--kind", "offload-binary", "--count", "60"])
            .arg("--payloads")
            .arg(&images)
            .arg("--out")
            .arg(&dir),
    );
    // The harness gets the binaries, not their .json sidecars.
    for f in files(&dir) {
        if f.extension().is_some_and(|e| e == "json") {
            std::fs::remove_file(f).unwrap();
        }
    }
    let list = common::run_ok(Command::new(KIT).arg("list").arg(&files(&dir)[0]));
    assert!(
        String::from_utf8_lossy(&list.stdout).contains(HOST_ID),
        "IDs follow the image's ELF header"
    );
    let s = run_harness(&[&dir]);
    assert!(s.images >= 40, "{s:?}");
    assert!(s.loaded * 100 >= s.images * 99, "{s:?}");

    let random = scratch("random-payloads");
    host_binaries(&random, "40", &["--random-payloads"]);
    let r = run_harness(&[&random]);
    assert!(r.images >= 20, "{r:?}");
    assert_eq!(
        r.loaded, 0,
        "random payloads are refused at the first check: {r:?}"
    );
}

/// Whether `valgrind` reports an invalid read in `cmd` (run in `dir`).
fn valgrind_invalid_read(dir: &Path, args: &[&std::ffi::OsStr]) -> bool {
    assert!(
        Path::new("/usr/bin/valgrind").is_file(),
        "valgrind missing: run tools/setup"
    );
    let out = common::run(
        Command::new("/usr/bin/valgrind")
            .args(["-q", "--error-exitcode=99"])
            .args(args)
            .current_dir(dir),
    );
    String::from_utf8_lossy(&out.stderr).contains("Invalid read")
}

/// Crashes `__tgt_register_lib` (harness, descriptor at the whole binary)
/// or, where it does not, makes `llvm-objdump-22 --offloading` read memory
/// it does not own under valgrind.
fn crashes_or_overreads(file: &Path) -> bool {
    if run_harness(&[file]).crash_binary == 1 {
        return true;
    }
    let objdump = common::llvm_path(22, "llvm-objdump");
    valgrind_invalid_read(
        file.parent().unwrap(),
        &[
            objdump.as_os_str(),
            "--offloading".as_ref(),
            file.as_os_str(),
        ],
    )
}

#[test]
fn rules_unsafe_in_22_crash_or_overread_llvm_22() {
    for rule in ["OB-7", "OB-8"] {
        let dir = scratch(&format!("unsafe-{rule}"));
        host_binaries(&dir, "6", &["--malformed", rule]);
        let all = files(&dir);
        let bad = common::par_map(2, &all, |f| (!crashes_or_overreads(f)).then(|| f.clone()));
        let bad: Vec<PathBuf> = bad.into_iter().flatten().collect();
        assert!(bad.is_empty(), "{rule}: LLVM 22 read these safely: {bad:?}");
        // validate reports each file at its labelled rule.
        for f in &all {
            let out = common::run(Command::new(KIT).arg("validate").arg(f));
            assert_eq!(out.status.code(), Some(1));
            assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("rule {rule})")));
        }
    }
    // OB-9: extraction copies an image that runs past the binary.
    let dir = scratch("unsafe-OB-9");
    host_binaries(&dir, "40", &["--malformed", "OB-9"]);
    // One binary (no "multiple inputs" refusal) whose image size is one a
    // copy is attempted for (2^64 - n gives "Invalid argument" first).
    let single: Vec<PathBuf> = files(&dir)
        .into_iter()
        .filter(|f| {
            let b = std::fs::read(f).unwrap();
            let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
            word(8) == b.len() as u64 && word(64) < 1 << 32
        })
        .take(2)
        .collect();
    assert_eq!(
        single.len(),
        2,
        "the generator made too few single OB-9 binaries"
    );
    let tool = common::llvm_path(22, "llvm-offload-binary");
    for f in &single {
        let work = scratch("unsafe-OB-9-out");
        assert!(
            valgrind_invalid_read(
                &work,
                &[
                    tool.as_os_str(),
                    f.as_os_str(),
                    "--image=file=o,triple=x86_64-unknown-linux-gnu".as_ref(),
                ]
            ),
            "{}: llvm-offload-binary-22 extracted it without reading past its buffer",
            f.display()
        );
    }
}

#[test]
fn findings_crash_llvm_22() {
    let dir = root().join("fuzz/findings/llvm-22");
    for f in files(&dir) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("F4") {
            let tool = common::llvm_path(22, "llvm-offload-binary");
            let work = scratch("finding-F4");
            assert!(valgrind_invalid_read(
                &work,
                &[
                    tool.as_os_str(),
                    f.as_os_str(),
                    "--image=file=o,triple=x86_64-unknown-linux-gnu".as_ref()
                ]
            ));
        } else if name.ends_with(".offbin") {
            assert_eq!(run_harness(&[&f]).crash_binary, 1, "{name}");
        }
    }
}

/// Whether comgr 5.2 answers every HIP AMDGPU entry of the bundle in
/// `file`, one query per ISA as CLR asks per device; `None` when the bundle
/// has no such entry.
fn comgr_finds_all(lookup: &Path, file: &Path) -> Option<bool> {
    // As LLVM 22 lists it: a fat binary's bundle is followed by its padding.
    let out = common::run_ok(
        Command::new(KIT)
            .args(["list", "--json", "--llvm-version=22"])
            .arg(file),
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<String> = doc["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .filter(|id| id.starts_with("hip") && id.contains("-amdgcn-"))
        .collect();
    if ids.is_empty() {
        return None;
    }
    Some(ids.iter().all(|id| {
        let isa = format!("amdgcn-amd-amdhsa--{}", id.split_once("--").unwrap().1);
        let out = common::run(Command::new(lookup).arg(file).arg(&isa));
        let text = String::from_utf8_lossy(&out.stdout);
        out.status.success() && text.trim().rsplit('\t').next() != Some("0")
    }))
}

#[test]
fn comgr_finds_every_hip_entry_of_generated_bundles() {
    let lookup = root().join("target/comgr-lookup");
    assert!(
        lookup.is_file(),
        "target/comgr-lookup (comgr 5.2's lookup as CLR calls it) missing: run tools/setup"
    );
    let dir = scratch("comgr-bundles");
    generate(&dir, &["--kind", "binary", "--count", "100"]);
    // Fat binaries: each bundle of the .hip_fatbin, as the runtime registers
    // it (bundles start at multiples of 4096, FAT-1); files holding a
    // compressed bundle are left out (comgr 5.2 reads none).
    let fat = scratch("comgr-fatbins");
    generate(&fat, &["--kind", "fatbin", "--count", "60"]);
    let objcopy = common::llvm_path(22, "llvm-objcopy");
    let pieces = scratch("comgr-fatbin-bundles");
    let mut fat_files = 0;
    for f in files(&fat) {
        let section = pieces.join("section");
        common::run_ok(
            Command::new(&objcopy)
                .arg(format!("--dump-section=.hip_fatbin={}", section.display()))
                .arg(&f)
                .arg("/dev/null"),
        );
        let bytes = std::fs::read(&section).unwrap();
        if bytes.windows(4).any(|w| w == b"CCOB") {
            continue;
        }
        fat_files += 1;
        let starts: Vec<usize> = (0..bytes.len())
            .step_by(4096)
            .filter(|&at| bytes[at..].starts_with(b"__CLANG_OFFLOAD_BUNDLE__"))
            .collect();
        for (k, &at) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(bytes.len());
            let name = format!("{}.{k}", f.file_name().unwrap().to_string_lossy());
            std::fs::write(pieces.join(name), &bytes[at..end]).unwrap();
        }
        std::fs::remove_file(section).unwrap();
    }
    assert!(
        fat_files >= 20,
        "{fat_files} fat binaries without compressed bundles"
    );
    for (what, dir) in [("bundles", &dir), ("fat binary bundles", &pieces)] {
        let verdicts: Vec<bool> = files(dir)
            .iter()
            .filter_map(|f| comgr_finds_all(&lookup, f))
            .collect();
        let all_found = verdicts.iter().filter(|&&v| v).count();
        assert!(verdicts.len() >= 20, "{what}: {}", verdicts.len());
        assert!(
            all_found * 100 >= verdicts.len() * 99,
            "{what}: comgr found every entry of {all_found} of {}",
            verdicts.len()
        );
    }
}

#[test]
fn bad_payload_options_are_refused() {
    let empty = scratch("payloads-empty");
    let junk = scratch("payloads-junk");
    std::fs::write(junk.join("a.txt"), b"not an image").unwrap();
    let host = scratch("payloads-host");
    std::fs::write(
        host.join("k.so"),
        offload_kit::generate::image::for_target("x86_64-unknown-linux-gnu", "", 1).unwrap(),
    )
    .unwrap();
    let out_dir = scratch("payloads-out");
    let cases: Vec<(Vec<std::ffi::OsString>, &str)> = vec![
        (
            vec!["--payloads".into(), empty.clone().into()],
            "holds no files",
        ),
        (
            vec!["--payloads".into(), empty.join("missing").into()],
            "cannot read the directory",
        ),
        (
            vec!["--payloads".into(), junk.clone().into()],
            "must be a device image",
        ),
        (
            vec![
                "--payloads".into(),
                host.clone().into(),
                "--target-ids".into(),
                "hipv4-amdgcn-amd-amdhsa--gfx906".into(),
            ],
            "none of the given images is for its target",
        ),
        (
            vec![
                "--target-ids".into(),
                "hipv4-amdgcn-amd-amdhsa--gfx9999".into(),
            ],
            "gfx9999",
        ),
    ];
    for (args, want) in cases {
        let out = common::run(
            Command::new(KIT)
                .args(["generate", "--kind", "binary", "--count", "2", "--out"])
                .arg(&out_dir)
                .args(&args),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
