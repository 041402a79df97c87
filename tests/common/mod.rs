//! Helpers shared by the integration tests: locating LLVM's tools,
//! running programs with a time limit, parallel runs, and paired
//! LLVM/offload-kit directories. Each test binary uses a part of them.
#![allow(dead_code)]

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

// ---------------------------------------------------------------------------
// Locating LLVM

/// Whether a missing LLVM release may be skipped (`OFFLOAD_KIT_NO_LLVM=1`).
pub fn no_llvm_allowed() -> bool {
    std::env::var_os("OFFLOAD_KIT_NO_LLVM").is_some_and(|v| v == "1")
}

/// `/usr/lib/llvm-N/bin/<tool>`. Panics when it is missing, unless
/// `OFFLOAD_KIT_NO_LLVM=1`; then the path is returned anyway and the
/// caller is expected to skip.
pub fn llvm_path(n: u32, tool: &str) -> PathBuf {
    let p = PathBuf::from(format!("/usr/lib/llvm-{n}/bin/{tool}"));
    if !p.is_file() && !no_llvm_allowed() {
        panic!(
            "LLVM {n} not installed: run tools/setup ({} is missing; set OFFLOAD_KIT_NO_LLVM=1 to skip)",
            p.display()
        );
    }
    p
}

/// `/usr/lib/llvm-N/bin/<tool>`; a missing tool fails the test unless
/// `OFFLOAD_KIT_NO_LLVM=1`, which makes the caller skip (`None`, named on
/// stderr).
pub fn llvm_tool(n: u32, tool: &str) -> Option<PathBuf> {
    let p = llvm_path(n, tool);
    if p.is_file() {
        return Some(p);
    }
    eprintln!(
        "{}: SKIPPING LLVM {n}: {} missing (OFFLOAD_KIT_NO_LLVM=1)",
        env!("CARGO_CRATE_NAME"),
        p.display()
    );
    None
}

/// Release `n`'s bin directory when every one of `tools` is in it; a
/// missing tool fails the test unless `OFFLOAD_KIT_NO_LLVM=1` (`None`).
pub fn llvm_bin(n: u32, tools: &[&str]) -> Option<PathBuf> {
    for t in tools {
        llvm_tool(n, t)?;
    }
    Some(PathBuf::from(format!("/usr/lib/llvm-{n}/bin")))
}

// ---------------------------------------------------------------------------
// Running programs

/// How a program ended and what it printed.
#[derive(Debug)]
pub struct Out {
    /// Exit status, if it exited.
    pub code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Standard output, as written.
    pub stdout: Vec<u8>,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
}

impl Out {
    /// Exit status 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }
    /// Ended by a signal.
    pub fn crashed(&self) -> bool {
        self.signal.is_some()
    }
    /// A Rust panic (exit status 101 or the panic message).
    pub fn panicked(&self) -> bool {
        self.code == Some(101) || self.stderr.contains("panicked at")
    }
    /// `rc N` or `signal N`.
    pub fn status(&self) -> String {
        match (self.code, self.signal) {
            (Some(c), _) => format!("rc {c}"),
            (None, Some(s)) => format!("signal {s}"),
            (None, None) => "unknown status".into(),
        }
    }
    /// Standard output as (lossy UTF-8) text.
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

fn read_back(mut f: std::fs::File) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let mut b = Vec::new();
    f.seek(SeekFrom::Start(0)).expect("seek");
    f.read_to_end(&mut b).expect("read");
    b
}

/// Run `cmd` in `dir` with no standard input; its output goes to
/// anonymous files (no pipe to fill). A run longer than `timeout` is
/// killed (only the child started here) and fails the test.
pub fn exec(mut cmd: Command, dir: &Path, timeout: Duration) -> Out {
    use wait_timeout::ChildExt;
    let so = tempfile::tempfile().expect("tempfile");
    let se = tempfile::tempfile().expect("tempfile");
    cmd.current_dir(dir)
        .stdin(Stdio::null())
        .stdout(so.try_clone().expect("clone"))
        .stderr(se.try_clone().expect("clone"));
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let status = match child.wait_timeout(timeout).expect("wait") {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} (in {}) hung for {timeout:?}", dir.display());
        }
    };
    Out {
        code: status.code(),
        signal: status.signal(),
        stdout: read_back(so),
        stderr: String::from_utf8_lossy(&read_back(se)).into_owned(),
    }
}

/// Run `cmd` to completion (no time limit).
pub fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// Run `cmd`; a failure fails the test with its standard error.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = run(cmd);
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Owned copies of `args`.
pub fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// Fails the test with every mismatch found, counted, one per line;
/// passes when there are none.
#[allow(dead_code)]
pub fn assert_no_mismatches(mismatches: &[String]) {
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n  {}",
        mismatches.len(),
        mismatches.join("\n  ")
    );
}

/// `f` over `items` on `workers` threads, keeping the mismatches it
/// reports (`Some`), in the order of `items`.
#[allow(dead_code)]
pub fn par_mismatches<T: Sync>(
    workers: usize,
    items: &[T],
    f: impl Fn(&T) -> Option<String> + Sync,
) -> Vec<String> {
    par_map(workers, items, f).into_iter().flatten().collect()
}

/// Run `f` over `items` on `workers` threads (the work is spawning
/// processes); results in item order.
pub fn par_map<T: Sync, R: Send>(
    workers: usize,
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|sc| {
        for _ in 0..workers.min(items.len()) {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                *slots[i].lock().expect("slot") = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|s| s.into_inner().expect("slot").expect("every item ran"))
        .collect()
}

// ---------------------------------------------------------------------------
// Directories

/// A fresh pair of directories `<root>/<name>/{llvm,kit}`.
pub fn case_dirs(root: &Path, name: &str) -> (PathBuf, PathBuf) {
    let l = root.join(name).join("llvm");
    let k = root.join(name).join("kit");
    std::fs::create_dir_all(&l).expect("mkdir");
    std::fs::create_dir_all(&k).expect("mkdir");
    (l, k)
}

/// The same input `name` in both directories.
pub fn write_both(ldir: &Path, kdir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(ldir.join(name), bytes).expect("write input");
    std::fs::write(kdir.join(name), bytes).expect("write input");
}

// ---------------------------------------------------------------------------
// Inputs

/// A binary bundle of `(id, payload)` with alignment 1, as every release
/// lays it out (`binary::write_to_vec`).
pub fn bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let e: Vec<(&[u8], &[u8])> = entries.iter().map(|(i, p)| (i.as_bytes(), *p)).collect();
    offload_kit::bundle::binary::write_to_vec(&e, 1).expect("align 1 is valid")
}

/// A HIP translation unit that needs no HIP headers or runtime
/// (`-nogpuinc -nogpulib`); `NAME` is replaced to make symbols unique.
pub const HIP_KERNEL: &str = r#"#include <stddef.h>
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
struct dim3 { unsigned x, y, z; };
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *f, dim3 g, dim3 b, void **args,
                               size_t shm, hipStream_t s);
extern "C" int __hipPopCallConfiguration(dim3 *g, dim3 *b, size_t *shm,
                                         hipStream_t *s);
__device__ int counter_NAME;
__global__ void kernel_NAME(int *p) { *p = 42 + counter_NAME; }
int host_NAME(int x) { return x * 2; }
"#;
