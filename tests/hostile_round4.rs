//! Hostile input, round 4 (issue 42): each finding of the adversarial
//! round that this change fixes, reproduced and checked. Every run has a
//! time limit, so a command that waits for ever fails the test instead of
//! hanging it.

mod common;

use std::ffi::OsStr;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const KIT: &str = env!("CARGO_BIN_EXE_offload-kit");
const LIMIT: Duration = Duration::from_secs(60);

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("hostile-round4")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

/// CPU time any round-4 run may take: `conformance export` of the whole
/// corpus, the heaviest, takes 15-18 s.
const ANY_CPU_LIMIT_S: f64 = 45.0;

/// `offload-kit ARGS` in `dir` as every round-4 trial runs it: under a 4 GiB
/// address-space limit, within the time limit, its peak RSS within the
/// budget (256 MiB beyond its outputs, which are files) and its CPU time
/// within [`ANY_CPU_LIMIT_S`].
fn kit(dir: &Path, args: &[&str]) -> common::Out {
    let (o, kib) = measured(dir, args, &[], ANY_CPU_LIMIT_S);
    assert!(kib < 256 << 10, "{args:?}: peak RSS {kib} KiB");
    o
}

fn mkfifo(p: &Path) {
    assert!(Command::new("mkfifo")
        .arg(p)
        .status()
        .expect("mkfifo")
        .success());
}

/// A link and a FIFO planted in an output directory under the names a
/// command will write: the file the link points to is untouched, the
/// command does not wait on the FIFO, and both names end up as its files.
#[test]
fn planted_links_and_fifos_in_output_directories_are_replaced() {
    let d = scratch("planted");
    let victim = d.join("victim");
    std::fs::write(&victim, b"keep me\n").expect("victim");
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "gen",
            &[
                "generate", "--kind", "binary", "--count", "2", "--out", "gen",
            ],
            &[
                "binary-0000000000000000.bundle",
                "binary-0000000000000001.bundle.json",
            ],
        ),
        (
            "man",
            &["man", "--dir", "man"],
            &["offload-kit.1", "offload-kit-list.1"],
        ),
        (
            "demo",
            &["demo", "--dir", "demo"],
            &["demo.bundle", "gfx906.co"],
        ),
    ];
    for (dir, args, names) in cases {
        let out = d.join(dir);
        std::fs::create_dir_all(&out).expect("mkdir");
        symlink(&victim, out.join(names[0])).expect("link");
        mkfifo(&out.join(names[1]));
        let o = kit(&d, args);
        assert!(o.ok(), "{args:?}: {}", o.stderr);
        for n in *names {
            let m = std::fs::symlink_metadata(out.join(n)).expect("written");
            assert!(m.is_file(), "{args:?}: {n} is not a regular file now");
        }
        assert_eq!(
            std::fs::read(&victim).expect("victim"),
            b"keep me\n",
            "{args:?}"
        );
    }
    // A directory on the way that is a link is refused, not followed.
    let export = d.join("export");
    std::fs::create_dir_all(&export).expect("mkdir");
    let elsewhere = d.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    symlink(&elsewhere, export.join("locate")).expect("link");
    let o = kit(&d, &["conformance", "export", "export"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("symbolic link"), "{}", o.stderr);
    assert_eq!(std::fs::read_dir(&elsewhere).expect("dir").count(), 0);
}

/// Reports and KFD `properties` files are read only when regular: a FIFO
/// is refused at once, /dev/zero never read to the end.
#[test]
fn reports_and_kfd_files_are_never_waited_on() {
    let d = scratch("fifos");
    mkfifo(&d.join("old.json"));
    // Refused at once, in bounds (RSS and CPU: kit_rss).
    let (o, kib) = kit_rss(&d, &["conformance", "merge", "old.json"]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.stderr.contains("FIFO"), "{}", o.stderr);
    assert!(kib < 32 << 10, "merge of a FIFO: peak RSS {kib} KiB");
    // A made-up KFD tree: one node a FIFO, one /dev/zero, one a gfx90a.
    let topo = d.join("nodes");
    for n in ["0", "1", "2"] {
        std::fs::create_dir_all(topo.join(n)).expect("mkdir");
    }
    mkfifo(&topo.join("0/properties"));
    symlink("/dev/zero", topo.join("1/properties")).expect("link");
    std::fs::write(topo.join("2/properties"), "gfx_target_version 90010\n").expect("node");
    // /dev/zero is endless: read within a bound, in little memory and time.
    let (o, kib) = kit_rss_with(
        &d,
        &["check", "/bin/ls", "--gpu", "auto"],
        &[("OFFLOAD_KIT_KFD_TOPOLOGY", topo.as_os_str())],
    );
    assert!(kib < 32 << 10, "--gpu auto: peak RSS {kib} KiB");
    // The gfx90a node was read, the others passed over: the check ran.
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let text = o.stdout_text();
    assert!(text.contains("no file holds device code"), "{text}");
}

/// A malformed OFFLOAD_KIT_MAX_MEMORY is refused as --max-memory is.
#[test]
fn malformed_budgets_are_refused() {
    let d = scratch("budget");
    for bad in ["-1", "1e30", "abc", "512MB", "99999999999999999999G"] {
        let env = [("OFFLOAD_KIT_MAX_MEMORY", OsStr::new(bad))];
        let (o, _) = kit_rss_with(&d, &["list", "/dev/null"], &env);
        assert_eq!(o.code, Some(1), "{bad}: {}", o.stderr);
        assert!(
            o.stderr.contains("OFFLOAD_KIT_MAX_MEMORY"),
            "{bad}: {}",
            o.stderr
        );
    }
}

/// Plain programs are not files "with offload code", and a check of
/// nothing but plain programs says so (nothing there needs a GPU: exit 0).
#[test]
fn plain_programs_get_right_answers() {
    let d = scratch("plain");
    let o = kit(&d, &["inspect", "/bin/ls", "/bin/cp"]);
    let text = o.stdout_text();
    assert!(
        text.contains("2 files: 0 with offload code, 2 without"),
        "{text}"
    );
    let o = kit(&d, &["check", "/bin/ls", "/bin/cp", "--gpu", "gfx906"]);
    let text = o.stdout_text();
    assert!(!text.contains("2 of 2 files run"), "{text}");
    assert!(text.contains("gfx906: 0 of 0 files run"), "{text}");
    assert!(text.contains("2 without device code"), "{text}");
    assert!(
        text.contains("no file holds device code (2 without)"),
        "{text}"
    );
    let dir = d.join("bin");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy("/bin/ls", dir.join("ls")).expect("copy");
    std::fs::copy("/bin/cp", dir.join("cp")).expect("copy");
    let o = kit(&d, &["check", "bin", "--gpu", "gfx906"]);
    assert_eq!(o.code, Some(0), "nothing there needs a GPU");
    let text = o.stdout_text();
    assert!(
        text.contains("no file holds device code (2 without)"),
        "{text}"
    );
}

/// `check` of a kpack archive answers (the runtime loads it only through
/// its host); `convert --to kpack` honours --level and refuses zlib.
#[test]
fn kpack_archives_and_options() {
    let d = scratch("kpack");
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/kpack");
    let archive = format!("{data}/split-test_lib_gfx906.kpack");
    let o = kit(&d, &["check", &archive, "--gpu", "gfx1100"]);
    let text = o.stdout_text();
    assert!(
        text.contains("DOES NOT RUN: no code object for it in this kpack archive (gfx906)"),
        "{text}"
    );
    assert_eq!(o.code, Some(1), "{text}");
    let o = kit(&d, &["check", &archive, "--gpu", "gfx906"]);
    assert!(
        o.stdout_text()
            .contains("runs: holds a code object for gfx906"),
        "{}",
        o.stdout_text()
    );
    assert_eq!(o.code, Some(0));
    let lib = format!("{data}/libk.so");
    let o = kit(
        &d,
        &[
            "convert", &lib, "--to", "kpack", "-o", "z", "--method", "zlib",
        ],
    );
    assert_eq!(o.code, Some(1));
    assert!(o.stderr.contains("zlib"), "{}", o.stderr);
    let o = kit(
        &d,
        &["convert", &lib, "--to", "kpack", "-o", "z", "--level", "19"],
    );
    assert!(o.ok(), "{}", o.stderr);
    let written: Vec<PathBuf> = std::fs::read_dir(d.join("z"))
        .expect("z")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "kpack"))
        .collect();
    assert!(!written.is_empty());
    for a in &written {
        let o = kit(&d, &["inspect", "--json", a.to_str().expect("utf-8")]);
        assert!(
            o.stdout_text().contains("zstd-per-kernel"),
            "{}",
            o.stdout_text()
        );
    }
}

/// `extract --all --kpack-path X` of a split host reads X, not the host's
/// search paths; an empty `--kpack-path` names no archive at all.
#[test]
fn extract_all_takes_the_kpack_path_given() {
    let d = scratch("kpack-path");
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/kpack");
    let host = format!("{data}/split-host-libk.so");
    let gfx906 = format!("{data}/split-test_lib_gfx906.kpack");
    let o = kit(
        &d,
        &[
            "extract",
            &host,
            "--all",
            "--dir",
            "one",
            "--kpack-path",
            &gfx906,
        ],
    );
    assert!(o.ok(), "{}", o.stderr);
    let names: Vec<String> = std::fs::read_dir(d.join("one"))
        .expect("one")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.is_empty() && names.iter().all(|n| n.contains("gfx906")),
        "{names:?}"
    );
    let o = kit(
        &d,
        &[
            "extract",
            &host,
            "--all",
            "--dir",
            "none",
            "--kpack-path",
            "",
        ],
    );
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("ARCHIVE_NOT_FOUND"), "{}", o.stderr);
}

/// What glibc's loader says of `path` (`dlopen` through Python's ctypes):
/// its refusal of the program headers, or the next thing it stops at (a
/// HIP host needs `libamdhip64.so`, which this machine lacks).
fn glibc_says(path: &Path) -> String {
    let o = Command::new("python3")
        .args([
            "-c",
            "import ctypes,sys\ntry:\n ctypes.CDLL(sys.argv[1])\n print('loaded')\nexcept OSError as e:\n print(e)",
        ])
        .arg(path)
        .output()
        .expect("python3");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A split host GNU `strip` rewrote is refused by glibc, and offload-kit
/// says so (HIPK-4) instead of calling it valid and runnable.
#[test]
fn stripped_split_hosts_break_hipk_4() {
    let d = scratch("stripped");
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/kpack");
    let host = d.join("split-host-libk.so");
    std::fs::copy(format!("{data}/split-host-libk.so"), &host).expect("copy");
    let before = glibc_says(&host);
    assert!(!before.contains("ELF load command"), "{before}");
    for a in ["split-test_lib_gfx906.kpack", "split-test_lib_gfx90a.kpack"] {
        std::fs::copy(format!("{data}/{a}"), d.join(a)).expect("copy");
    }
    let o = kit(&d, &["validate", "split-host-libk.so"]);
    assert!(o.ok(), "{}{}", o.stdout_text(), o.stderr);
    let stripped = d.join("stripped.so");
    let s = Command::new("strip")
        .args(["--strip-unneeded", "-o"])
        .arg(&stripped)
        .arg(&host)
        .status()
        .expect("GNU strip (binutils) is needed for this test");
    assert!(s.success());
    let after = glibc_says(&stripped);
    assert!(
        after.contains("ELF load command"),
        "glibc loads it: {after}"
    );
    for args in [
        &["validate", "stripped.so"][..],
        &["list", "stripped.so"][..],
        &["inspect", "stripped.so"][..],
        &["check", "stripped.so", "--gpu", "gfx906"][..],
    ] {
        let o = kit(&d, args);
        let all = format!("{}{}", o.stdout_text(), o.stderr);
        assert_eq!(o.code, Some(1), "{args:?}: {all}");
        assert!(all.contains("HIPK-4"), "{args:?}: {all}");
    }
}

/// A split host's search paths reach only its tree (spec/kpack.md HIPK-2,
/// *Where archives are read*): the layout ROCm writes is found, while an
/// absolute path and a link out of the tree are neither listed nor read.
#[test]
fn split_host_references_stay_inside_the_tree() {
    let d = scratch("tree");
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/kpack");
    let host = std::fs::read(format!("{data}/split-host-libk.so")).expect("host");
    let archives = ["split-test_lib_gfx906.kpack", "split-test_lib_gfx90a.kpack"];
    let place = |root: &Path, kpack_dir: Option<&Path>| {
        std::fs::create_dir_all(root.join("lib")).expect("lib");
        std::fs::write(root.join("lib/libk.so"), &host).expect("host");
        if let Some(k) = kpack_dir {
            std::fs::create_dir_all(k).expect(".kpack");
            for a in archives {
                let name = a.replace("split-", "");
                std::fs::copy(format!("{data}/{a}"), k.join(name)).expect("archive");
            }
        }
    };
    // ROCm's layout: lib/libk.so, .kpack/test_lib_gfx906.kpack.
    let good = d.join("good");
    place(&good, Some(&good.join(".kpack")));
    let o = kit(&d, &["check", "good/lib/libk.so", "--gpu", "gfx906"]);
    assert!(o.ok(), "{}{}", o.stdout_text(), o.stderr);
    // .kpack a link to archives outside the tree.
    let linked = d.join("linked");
    place(&linked, None);
    place(&d.join("elsewhere"), Some(&d.join("elsewhere/.kpack")));
    symlink(d.join("elsewhere/.kpack"), linked.join(".kpack")).expect("link");
    let o = kit(&d, &["check", "linked/lib/libk.so", "--gpu", "gfx906"]);
    let text = o.stdout_text();
    assert_eq!(o.code, Some(1), "{text}");
    assert!(text.contains("not read, outside the host's tree"), "{text}");
    // The same archives named by the user are read.
    let o = kit(
        &d,
        &[
            "check",
            "linked/lib/libk.so",
            "--gpu",
            "gfx906",
            "--kpack-path",
            "linked/.kpack/test_lib_gfx906.kpack",
        ],
    );
    assert!(o.ok(), "{}{}", o.stdout_text(), o.stderr);
    // An absolute search path: /etc is never listed.
    let old = b"../.kpack/test_lib_@GFXARCH@.kpack";
    let new = b"/etc/////////////////////@GFXARCH@";
    assert_eq!(old.len(), new.len());
    let at = host
        .windows(old.len())
        .position(|w| w == old)
        .expect("the search path");
    let mut abs = host.clone();
    abs[at..at + old.len()].copy_from_slice(new);
    std::fs::write(d.join("abs.so"), &abs).expect("abs");
    for args in [
        &["inspect", "--json", "abs.so"][..],
        &["check", "abs.so", "--gpu", "gfx906"][..],
    ] {
        let o = kit(&d, args);
        let all = format!("{}{}", o.stdout_text(), o.stderr);
        assert!(
            !all.contains("passwd") && !all.contains("hostname"),
            "{args:?} listed /etc: {all}"
        );
    }
}

/// A split host on standard input gets the verdict it gets by name: its
/// search paths have no directory to start from there, so no archive is
/// found (and the user can name them), never "no device code object".
#[test]
fn split_hosts_on_stdin_get_their_verdict() {
    let d = scratch("stdin-host");
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/kpack");
    let host = format!("{data}/split-host-libk.so");
    let gfx906 = format!("{data}/split-test_lib_gfx906.kpack");
    let by_name = kit(&d, &["check", &host, "--gpu", "gfx906"]);
    let on_stdin = |extra: &str| {
        let mut c = Command::new("sh");
        c.args([
            "-c",
            &format!("\"$0\" check - --gpu gfx906 {extra} < \"$1\""),
            KIT,
            &host,
        ]);
        common::exec(c, &d, LIMIT)
    };
    let o = on_stdin("");
    let text = o.stdout_text();
    assert_eq!((o.code, by_name.code), (Some(1), Some(1)), "{text}");
    assert!(text.contains("ARCHIVE_NOT_FOUND"), "{text}");
    assert!(!text.contains("no device code"), "{text}");
    let o = on_stdin(&format!("--kpack-path {gfx906}"));
    assert!(o.ok(), "{}{}", o.stdout_text(), o.stderr);
}

/// `convert --to kpack` refuses a host whose wrapper points inside its
/// bundle (the split would answer KERNEL_NOT_FOUND where the input ran),
/// and writes nothing.
#[test]
fn splits_that_would_not_work_are_refused() {
    use offload_kit::host::elf::hipk;
    let d = scratch("split-refused");
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/kpack");
    let mut lib = std::fs::read(format!("{data}/libk.so")).expect("libk.so");
    let w = hipk::wrappers(&lib).expect("wrappers");
    let rel = w[0].relocation.expect("a relative relocation") as usize;
    let addend = i64::from_le_bytes(lib[rel + 16..rel + 24].try_into().unwrap());
    lib[rel + 16..rel + 24].copy_from_slice(&(addend + 8).to_le_bytes());
    let moved = hipk::wrappers(&lib).expect("wrappers");
    assert_eq!(moved[0].target_offset, w[0].target_offset + 8);
    std::fs::write(d.join("libk.so"), &lib).expect("write");
    let o = kit(&d, &["convert", "libk.so", "--to", "kpack", "-o", "out"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stderr.contains("HIPK-3") && o.stderr.contains("starts no bundle"),
        "{}",
        o.stderr
    );
    assert!(!d.join("out").exists(), "a failed split left out/ behind");
}

/// A failed run takes back the output directories it created (they stay
/// when they held something before).
#[test]
fn failed_runs_leave_no_empty_directories() {
    let d = scratch("no-empty-dirs");
    // Two kernels that would be written to one file: the archive reads,
    // its code objects cannot both be written.
    let archive = offload_kit::kpack::write_plain(
        "g",
        "gfx906",
        &[("x/y#0", "gfx906", b"one"), ("x_y#0", "gfx906", b"two")],
    );
    std::fs::write(d.join("cut.kpack"), &archive).expect("write");
    let o = kit(&d, &["extract", "cut.kpack", "--all", "--dir", "a/b/c"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(!d.join("a").exists(), "a/b/c left behind");
    std::fs::create_dir(d.join("kept")).expect("mkdir");
    let o = kit(&d, &["extract", "cut.kpack", "--all", "--dir", "kept/new"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(d.join("kept").is_dir() && !d.join("kept/new").exists());
}

/// kpack `extract --all` cuts and numbers a kernel name too long for a
/// file name, as the README says `extract --all` does.
#[test]
fn long_kpack_names_are_cut_and_numbered() {
    let d = scratch("long-names");
    let name = format!("{}#0", "k".repeat(300));
    let archive = offload_kit::kpack::write_plain("g", "gfx906", &[(&name, "gfx906", b"code")]);
    std::fs::write(d.join("long.kpack"), &archive).expect("write");
    let o = kit(&d, &["extract", "long.kpack", "--all", "--dir", "out"]);
    assert!(o.ok(), "{}", o.stderr);
    let names: Vec<String> = std::fs::read_dir(d.join("out"))
        .expect("out")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(
        names[0].len() <= 255 && names[0].ends_with("-0"),
        "{names:?}"
    );
}

/// CPU time (user + system) a round-4 run may take: each took seconds or
/// aborted before its fix, and takes a fraction of a second now.
const CPU_LIMIT_S: f64 = 10.0;

/// Peak RSS in KiB of `offload-kit ARGS` run in `dir` (GNU time) under a
/// 4 GiB address-space limit (`prlimit`, as `ulimit -v`), checked against
/// [`CPU_LIMIT_S`] of CPU time.
fn kit_rss(dir: &Path, args: &[&str]) -> (common::Out, u64) {
    measured(dir, args, &[], CPU_LIMIT_S)
}

/// [`kit_rss`] with environment variables set.
fn kit_rss_with(dir: &Path, args: &[&str], env: &[(&str, &OsStr)]) -> (common::Out, u64) {
    measured(dir, args, env, CPU_LIMIT_S)
}

/// Peak RSS in KiB of a run (GNU time) under a 4 GiB address-space limit,
/// its CPU time checked against `cpu_limit` seconds.
fn measured(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &OsStr)],
    cpu_limit: f64,
) -> (common::Out, u64) {
    let rss = dir.join("rss");
    let mut c = Command::new("/usr/bin/time");
    c.arg("-f")
        .arg("%U %S %M")
        .arg("-o")
        .arg(&rss)
        .args(["prlimit", "--as=4294967296"])
        .arg(KIT)
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = common::exec(c, dir, LIMIT);
    let text = std::fs::read_to_string(&rss).unwrap_or_default();
    let fields: Vec<f64> = (text.trim().lines().last().unwrap_or(""))
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    let [user, system, kib] = fields[..] else {
        panic!(
            "/usr/bin/time wrote no CPU times and peak RSS (install GNU time: tools/setup): {text}"
        );
    };
    assert!(
        user + system < cpu_limit,
        "{args:?}: {user} s user + {system} s system CPU"
    );
    let kib = kib as u64;
    (o, kib)
}

/// `generate --payloads DIR` of 1,024 sparse 1 MiB images (each a real
/// code object, padded) is refused by its sizes before anything is read
/// (it held 2.9 GB and left its --out behind); a small directory works for
/// every kind, `--kind object` included (it always failed: no host ID).
#[test]
fn generate_payloads_stay_within_the_budget() {
    let d = scratch("payloads");
    let co =
        offload_kit::generate::image::for_target("amdgcn-amd-amdhsa", "gfx906", 1).expect("image");
    std::fs::create_dir_all(d.join("many")).expect("mkdir");
    for i in 0..1024 {
        let p = d.join(format!("many/k{i:04}.hsaco"));
        std::fs::write(&p, &co).expect("write");
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .expect("open");
        f.set_len(1 << 20).expect("sparse");
    }
    for kind in ["binary", "offload-binary", "object", "kpack"] {
        let (o, kib) = kit_rss(
            &d,
            &[
                "generate",
                "--kind",
                kind,
                "--payloads",
                "many",
                "--out",
                "out",
                "--count",
                "3",
            ],
        );
        assert_eq!(o.code, Some(1), "{kind}: {}", o.stderr);
        assert!(
            o.stderr.contains("memory budget (CLI-6)"),
            "{kind}: {}",
            o.stderr
        );
        assert!(kib < 64 << 10, "{kind}: peak RSS {kib} KiB");
        assert!(!d.join("out").exists(), "{kind}: --out left behind");
    }
    std::fs::create_dir_all(d.join("few")).expect("mkdir");
    std::fs::write(d.join("few/k.hsaco"), &co).expect("write");
    for (kind, ext) in [
        ("binary", "bundle"),
        ("object", "o"),
        ("offload-binary", "offbin"),
    ] {
        let out = format!("out-{kind}");
        let o = kit(
            &d,
            &[
                "generate",
                "--kind",
                kind,
                "--payloads",
                "few",
                "--out",
                &out,
                "--count",
                "3",
            ],
        );
        assert!(o.ok(), "{kind}: {}", o.stderr);
        let file = format!("{out}/{kind}-0000000000000000.{ext}");
        let o = kit(&d, &["validate", &file]);
        assert!(o.ok(), "{kind}: {file}: {}", o.stderr);
    }
}

/// Commands that write many outputs and commit them together hold one
/// open file at a time: 1,100 entries under `ulimit -n 200` (every output
/// was held open until the commit: "Too many open files").
#[test]
fn many_outputs_fit_a_small_open_file_limit() {
    let d = scratch("open-files");
    let images: Vec<offload_kit::offload_binary::OwnedImage> = (0..1100)
        .map(|i| offload_kit::offload_binary::OwnedImage {
            image_kind: 1,
            offload_kind: 2,
            flags: 0,
            strings: vec![
                (b"triple".to_vec(), b"nvptx64-nvidia-cuda".to_vec()),
                (b"arch".to_vec(), format!("sm_{i}").into_bytes()),
            ],
            image: format!("image {i}").into_bytes(),
        })
        .collect();
    let v1 = offload_kit::offload_binary::write_v1_all(&images).expect("v1");
    std::fs::write(d.join("many.bin"), &v1).expect("write");
    let v2 = offload_kit::offload_binary::write_multi(&images, 2, None).expect("v2");
    std::fs::write(d.join("many2.bin"), &v2).expect("write");
    let limited = |dir: &Path, args: &[&str]| {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg("ulimit -n 200 && exec \"$0\" \"$@\"")
            .arg(KIT)
            .args(args);
        common::exec(c, dir, LIMIT)
    };
    let o = limited(&d, &["extract", "many.bin", "--all", "--dir", "all"]);
    assert!(o.ok(), "extract --all: {}", o.stderr);
    assert_eq!(std::fs::read_dir(d.join("all")).expect("all").count(), 1100);
    std::fs::create_dir_all(d.join("main")).expect("mkdir");
    std::fs::copy(d.join("many2.bin"), d.join("main/many2.bin")).expect("copy");
    let o = limited(
        &d.join("main"),
        &["packager", "--llvm-version=main", "many2.bin"],
    );
    assert!(o.ok(), "llvm-offload-binary (main): {}", o.stderr);
    assert_eq!(
        std::fs::read_dir(d.join("main")).expect("main").count(),
        1101,
        "the input and 1,100 images"
    );
}

/// Answers that named the wrong thing: `extract --gpu` of a kpack archive
/// said BIN-1 ("no offload container"); it now writes the code objects
/// the GPU would load from it, or says the archive holds none for it. A
/// split host whose reference is gone says what a NOBITS `.hip_fatbin` is.
#[test]
fn archives_and_damaged_split_hosts_get_answers_that_fit() {
    let d = scratch("fit");
    let o = kit(
        &d,
        &["generate", "--kind", "kpack", "--count", "1", "--out", "kp"],
    );
    assert!(o.ok(), "{}", o.stderr);
    let archive = "kp/kpack-0000000000000000-gfx90a.kpack";
    let o = kit(
        &d,
        &["extract", "--gpu", "gfx90a:xnack+", archive, "--dir", "x"],
    );
    assert!(o.ok(), "{}", o.stderr);
    let files: Vec<_> = std::fs::read_dir(d.join("x")).expect("x").collect();
    assert_eq!(files.len(), 1);
    let o = kit(&d, &["extract", "--gpu", "gfx90a", archive, "-o", "one.co"]);
    assert!(o.ok(), "{}", o.stderr);
    assert!(std::fs::read(d.join("one.co"))
        .expect("one.co")
        .starts_with(b"\x7fELF"));
    let o = kit(
        &d,
        &["extract", "--gpu", "gfx906", archive, "--dir", "none"],
    );
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stderr
            .contains("no code object for gfx906 in this kpack archive (it holds gfx90a)"),
        "{}",
        o.stderr
    );
    assert!(!d.join("none").exists());
    // The host with its wrapper's magic and its reference's name damaged.
    let mut host = std::fs::read(d.join("kp/kpack-0000000000000000.o")).expect("host");
    let at = |h: &[u8], what: &[u8]| {
        h.windows(what.len())
            .position(|w| w == what)
            .expect("found")
    };
    let i = at(&host, b"HIPK");
    host[i] = b'X';
    let j = at(&host, b".rocm_kpack_ref");
    host[j + 1] = b'X';
    std::fs::write(d.join("damaged.o"), &host).expect("write");
    let (o, kib) = kit_rss(&d, &["validate", "damaged.o"]);
    assert!(
        kib < 32 << 10,
        "validate of a damaged split host: peak RSS {kib} KiB"
    );
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr.contains("SHT_NOBITS is what a kpack split leaves")
            && o.stderr.contains("rule FAT-4"),
        "{}",
        o.stderr
    );
}

/// A host built by clang 22 whose `wrappers` wrappers all register one
/// CCOB bundle holding a `mib` MiB code object (the others' bundles are
/// left unregistered): the shape of round 4's "40 wrappers sharing one
/// huge CCOB". `None` when LLVM 22 may be skipped.
fn host_sharing_one_ccob(d: &Path, wrappers: usize, mib: u32) -> Option<PathBuf> {
    use offload_kit::host::elf::hipk;
    let bin = common::llvm_bin(22, &["clang", "clang-offload-bundler"])?;
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/k.hip");
    let decls: String = std::fs::read_to_string(fixture)
        .expect("k.hip")
        .lines()
        .take_while(|l| !l.starts_with("__global__"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(
        d.join("big.hip"),
        format!(
            "{decls}__attribute__((device)) char big[{mib} << 20] = {{1}};\n\
             __global__ void kbig(char *o) {{ o[0] = big[o[1]]; }}\n"
        ),
    )
    .expect("write");
    std::fs::write(
        d.join("small.hip"),
        format!("{decls}namespace {{ __global__ void ks(int *o) {{ *o = 1; }} }}\nvoid *use_ks() {{ return (void *)&ks; }}\n"),
    )
    .expect("write");
    let clang = |args: &[&str]| {
        let mut c = Command::new(bin.join("clang"));
        c.args(args).env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        );
        let o = common::exec(c, d, LIMIT);
        assert!(o.ok(), "clang {args:?}: {}", o.stderr);
    };
    let hip = [
        "-x",
        "hip",
        "-nogpulib",
        "-nogpuinc",
        "--offload-arch=gfx906",
        "-fPIC",
        "-c",
    ];
    clang(&[&hip[..], &["--offload-compress", "big.hip", "-o", "big.o"]].concat());
    clang(&[&hip[..], &["small.hip", "-o", "small.o"]].concat());
    // One translation unit linked many times: each copy keeps its own
    // (internal) wrapper; muldefs takes the first of the global symbols.
    let mut link = vec![
        "-shared",
        "-fPIC",
        "-Wl,-z,muldefs",
        "-o",
        "lib.so",
        "big.o",
    ];
    link.extend(std::iter::repeat_n("small.o", wrappers - 1));
    clang(&link);
    let lib_path = d.join("lib.so");
    let mut lib = std::fs::read(&lib_path).expect("lib.so");
    let w = hipk::wrappers(&lib).expect("wrappers");
    assert_eq!(w.len(), wrappers);
    let first = w[0].relocation.expect("a relative relocation") as usize;
    let addend = lib[first + 16..first + 24].to_vec();
    for x in &w[1..] {
        let rel = x.relocation.expect("a relative relocation") as usize;
        lib[rel + 16..rel + 24].copy_from_slice(&addend);
    }
    // The bundles no wrapper registers now are given a triple that is not
    // AMDGPU's (the split leaves such entries alone): only the CCOB's code
    // object is split, filed under every wrapper's index.
    let (id, other) = (
        b"hipv4-amdgcn-amd-amdhsa--gfx906",
        b"hipv4-x86_64-unknown-linux-gnu-",
    );
    let mut at = 0;
    while let Some(i) = lib[at..].windows(id.len()).position(|x| x == id) {
        lib[at + i..at + i + id.len()].copy_from_slice(other);
        at += i + id.len();
    }
    std::fs::write(&lib_path, &lib).expect("write");
    let shared = hipk::wrappers(&lib).expect("wrappers");
    assert!(shared.iter().all(|x| x.target_offset == w[0].target_offset));
    Some(lib_path)
}

/// `convert --to kpack` of a host whose wrappers share one CCOB bundle
/// holds its code object once (it held a copy per wrapper: 40 wrappers of
/// a 100 MiB code object aborted), the archives are written as they go,
/// and `convert --to bundle` of the split streams its bundles: peak RSS
/// stays far below the wrappers' total, whatever the output's size.
#[test]
fn splits_and_joins_hold_one_code_object_at_a_time() {
    let d = scratch("shared-ccob");
    let Some(_) = host_sharing_one_ccob(&d, 24, 8) else {
        return;
    };
    let (o, kib) = kit_rss(
        &d,
        &[
            "convert", "lib.so", "--to", "kpack", "--method", "zstd", "-o", "split",
        ],
    );
    assert!(o.ok(), "{}", o.stderr);
    assert!(
        o.stdout_text().contains("24 code object(s) for gfx906"),
        "{}",
        o.stdout_text()
    );
    // 24 copies of 8 MiB were 192 MiB, and the archive as much again.
    assert!(kib < 64 << 10, "split: peak RSS {kib} KiB");
    let o = kit(&d, &["validate", "split/lib_gfx906.kpack"]);
    assert!(o.ok(), "{}", o.stderr);
    let (o, kib) = kit_rss(
        &d,
        &["convert", "split/lib.so", "--to", "bundle", "-o", "back.so"],
    );
    assert!(o.ok(), "{}", o.stderr);
    let back = std::fs::metadata(d.join("back.so")).expect("back.so").len();
    assert!(back > 24 * (8 << 20), "{back} bytes");
    assert!(kib < 64 << 10, "join: peak RSS {kib} KiB for {back} bytes");
    let o = kit(&d, &["list", "back.so"]);
    assert!(o.ok(), "{}", o.stderr);
    assert_eq!(o.stdout_text().matches("gfx906").count(), 24);
}

/// A `conformance --html` run that cannot write every page (a link
/// planted where the case pages go) writes none: no partial site (it left
/// 22 pages), and nothing through the link.
#[test]
fn failed_html_runs_leave_no_partial_site() {
    let d = scratch("html-partial");
    std::fs::create_dir_all(d.join("site")).expect("mkdir");
    std::fs::create_dir_all(d.join("elsewhere")).expect("mkdir");
    symlink(d.join("elsewhere"), d.join("site/case")).expect("symlink");
    let html = [
        "conformance",
        "--impl",
        "offload-kit",
        "--case",
        "bundle/align-*",
        "--html",
        "site",
    ];
    let o = kit(&d, &html);
    // Exit 2: the runner could not do its job (1 is for divergences).
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.stderr.contains("CLI-5"), "{}", o.stderr);
    let left: Vec<_> = std::fs::read_dir(d.join("site"))
        .expect("site")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(left, ["case"], "a partial site was left");
    assert_eq!(
        std::fs::read_dir(d.join("elsewhere")).expect("x").count(),
        0
    );
    std::fs::remove_file(d.join("site/case")).expect("rm");
    let o = kit(&d, &html);
    assert!(o.ok(), "{}", o.stderr);
    assert!(
        d.join("site/index.html").is_file() && d.join("site/case/bundle/align-0.html").is_file()
    );
}

/// A split host whose reference names 1.5 million search paths (a 3 MB
/// host: once 973 MB, 26 s and one 51 MB output line) or 6,000 of them
/// for each of its wrappers: `check`, `inspect --json` and `extract --gpu`
/// answer within the budget and in seconds, and print no line longer than
/// a screen's worth of paths.
#[test]
fn hosts_naming_millions_of_search_paths_are_answered_in_bounds() {
    use offload_kit::host::elf::hipk;
    use offload_kit::kpack::HostRef;
    let d = scratch("many-paths");
    let lib = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/kpack/libk.so"
    ))
    .expect("libk.so");
    for (name, n) in [("million.so", 1_500_000), ("thousands.so", 6_000)] {
        let reference = HostRef {
            search_paths: (0..n).map(|i| format!("p{i}/@GFXARCH@.kpack")).collect(),
            kernel_name: "libk.so".into(),
        };
        let host = hipk::rewrite(&lib, &reference).expect("rewrite");
        std::fs::write(d.join(name), &host).expect("write");
        for args in [
            vec!["check", "--gpu", "gfx906", name],
            vec!["inspect", "--json", name],
            vec!["inspect", name],
            vec!["extract", "--gpu", "gfx906", "--dir", "out", name],
        ] {
            let (o, kib) = kit_rss(&d, &args);
            // No archive is found: check and extract fail; inspect says so
            // (exit 0 when it read the host, 1 past the budget).
            let expected = if args[0] == "inspect" {
                [Some(0), Some(1)]
            } else {
                [Some(1); 2]
            };
            assert!(
                expected.contains(&o.code),
                "{args:?}: {:?} {}",
                o.code,
                o.stderr
            );
            assert!(kib < 256 << 10, "{args:?}: peak RSS {kib} KiB");
            let longest = (o.stdout_text().lines().chain(o.stderr.lines()))
                .map(str::len)
                .max()
                .unwrap_or(0);
            assert!(longest < 64 << 10, "{args:?}: a {longest}-byte line");
            assert!(!d.join("out").exists(), "{args:?}: out/ left behind");
            // Paths that do not exist inside the tree are missing, not
            // "outside the host's tree".
            assert!(
                !o.stdout_text().contains("outside the host's tree"),
                "{args:?}"
            );
        }
    }
}
