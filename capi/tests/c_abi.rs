//! The C ABI as C sees it: `tests/c/abi_test.c`, compiled with the system C
//! compiler against `include/offload_kit.h` and linked with the static
//! library this package builds, must run and pass.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn c_program_links_and_passes() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // target/<profile>/deps/c_abi-… → target/<profile>/liboffloadkit.a
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap();
    let lib = profile_dir.join("liboffloadkit.a");
    // `cargo test` builds the rlib only: build the static library as a
    // user would (the build lock is free while tests run).
    let mut build = Command::new(env!("CARGO"));
    build.args(["build", "--quiet", "-p", "offload-kit-capi", "--lib"]);
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    assert!(
        build.status().unwrap().success(),
        "cargo build of the static library failed"
    );
    assert!(lib.exists(), "{} was not built", lib.display());
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("abi_test");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
        .arg(crate_dir.join("../include"))
        .arg(crate_dir.join("tests/c/abi_test.c"))
        .arg(&lib)
        // The system zstd and zlib the library links (see README, *C ABI*).
        .args(["-lzstd", "-lz", "-lpthread", "-ldl", "-lm", "-o"])
        .arg(&out)
        .status()
        .unwrap_or_else(|e| {
            panic!("the C compiler '{cc}' cannot run ({e}): install gcc or set CC")
        });
    assert!(status.success(), "compiling tests/c/abi_test.c failed");
    let run = Command::new(&out)
        .arg(crate_dir.join("../tests/data/kpack/split-test_lib_gfx906.kpack"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "abi_test failed:\n{text}");
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "c abi: ok");
}
