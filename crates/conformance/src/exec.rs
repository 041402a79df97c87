//! Running one command with a time limit, capturing bounded stdout/stderr.
//!
//! # Example
//!
//! Run a shell command and look at how it ended (Unix).
//!
//! ```
//! use offload_kit_conformance::exec::{run, shell_quote, signal_name, Exit};
//! use std::path::Path;
//! use std::time::Duration;
//!
//! let argv: Vec<String> = ["sh", "-c", "echo out; echo err >&2; exit 3"].map(String::from).to_vec();
//! let r = run(&argv, Path::new("."), &[], Duration::from_secs(10));
//! assert_eq!(r.exit, Exit::Code(3));
//! assert_eq!((&r.stdout[..], &r.stderr[..]), (&b"out\n"[..], &b"err\n"[..]));
//! assert_eq!(shell_quote(&argv), "sh -c 'echo out; echo err >&2; exit 3'");
//! assert_eq!(signal_name(11), "SIGSEGV");
//! ```

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// At most this much of stdout and of stderr is kept (the rest is drained).
pub const CAPTURE_LIMIT: usize = 1 << 20;

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// Exited with a status code.
    Code(i32),
    /// Killed by a signal.
    Signal(i32),
    /// Did not finish in time and was killed.
    TimedOut,
    /// Could not be started.
    SpawnFailed(String),
}

/// The result of one run.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The command.
    pub argv: Vec<String>,
    /// How it ended.
    pub exit: Exit,
    /// Captured stdout (at most [`CAPTURE_LIMIT`] bytes).
    pub stdout: Vec<u8>,
    /// Captured stderr (at most [`CAPTURE_LIMIT`] bytes).
    pub stderr: Vec<u8>,
    /// Wall time.
    pub elapsed: Duration,
}

fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 16384];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = CAPTURE_LIMIT.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        kept
    })
}

/// Crashing reference runs (LLVM dies of SIGSEGV on several corpus inputs)
/// would each write a core file, which costs most of a second: the runner
/// lowers its own soft `RLIMIT_CORE` to 0 once, and children inherit it.
fn no_core_dumps() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(unix)]
        if let Ok((_, hard)) = rlimit::Resource::CORE.get() {
            let _ = rlimit::Resource::CORE.set(0, hard);
        }
    });
}

/// Run `argv` in `cwd` with `env` added, killing it after `timeout`.
pub fn run(argv: &[String], cwd: &Path, env: &[(String, String)], timeout: Duration) -> RunResult {
    no_core_dumps();
    let start = Instant::now();
    let fail = |m: String| RunResult {
        argv: argv.to_vec(),
        exit: Exit::SpawnFailed(m),
        stdout: vec![],
        stderr: vec![],
        elapsed: start.elapsed(),
    };
    let Some((prog, args)) = argv.split_first() else {
        return fail("empty command".into());
    };
    let mut cmd = Command::new(prog);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return fail(format!("cannot run {prog}: {e}")),
    };
    let out = drain(child.stdout.take().expect("piped"));
    let err = drain(child.stderr.take().expect("piped"));
    let exit = match child.wait_timeout(timeout) {
        Ok(Some(status)) => status_exit(status),
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            Exit::TimedOut
        }
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Exit::SpawnFailed(format!("waiting for {prog}: {e}"))
        }
    };
    RunResult {
        argv: argv.to_vec(),
        exit,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        elapsed: start.elapsed(),
    }
}

#[cfg(unix)]
fn status_exit(s: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => Exit::Code(c),
        (None, Some(sig)) => Exit::Signal(sig),
        (None, None) => Exit::Code(-1),
    }
}

#[cfg(not(unix))]
fn status_exit(s: std::process::ExitStatus) -> Exit {
    Exit::Code(s.code().unwrap_or(-1))
}

/// The conventional name of a signal number.
pub fn signal_name(sig: i32) -> String {
    match sig {
        4 => "SIGILL".into(),
        5 => "SIGTRAP".into(),
        6 => "SIGABRT".into(),
        7 => "SIGBUS".into(),
        8 => "SIGFPE".into(),
        9 => "SIGKILL".into(),
        11 => "SIGSEGV".into(),
        13 => "SIGPIPE".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

/// Quote argv for a shell (reproducers).
pub fn shell_quote(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_=./,:+@%".contains(&b))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_hanging_process_is_killed() {
        let argv: Vec<String> = ["sleep", "30"].iter().map(|s| s.to_string()).collect();
        let r = run(&argv, Path::new("."), &[], Duration::from_millis(200));
        assert_eq!(r.exit, Exit::TimedOut);
        assert!(r.elapsed < Duration::from_secs(5));
    }

    #[test]
    fn signals_and_codes() {
        let sh = |c: &str| {
            let argv: Vec<String> = ["sh", "-c", c].iter().map(|s| s.to_string()).collect();
            run(&argv, Path::new("."), &[], Duration::from_secs(10))
        };
        assert_eq!(sh("kill -SEGV $$").exit, Exit::Signal(11));
        let r = sh("echo out; echo err >&2; exit 3");
        assert_eq!(r.exit, Exit::Code(3));
        assert_eq!(r.stdout, b"out\n");
        assert_eq!(r.stderr, b"err\n");
        assert!(matches!(
            run(
                &["/nonexistent/x".to_string()],
                Path::new("."),
                &[],
                Duration::from_secs(1)
            )
            .exit,
            Exit::SpawnFailed(_)
        ));
    }
}
