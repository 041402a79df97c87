//! The `offload-kit` command line: a thin layer over the crates. The
//! binary (the root package's `src/main.rs`) calls [`main`].
//!
//! `native` is the clap command line (global options, the command table)
//! and `commands/` a file per native command, each with its options
//! (`Args`) and `run(args, settings)`: the exit status or the errors that
//! make it exit 1. Every command gets the run's `Settings` (memory
//! budget, colour) as a value. Behind them: the drop-ins under LLVM's tool
//! names, `bundler` (`clang-offload-bundler`), `packager`
//! (`clang-offload-packager`, `llvm-offload-binary`) and `offloading`
//! (`llvm-objdump`/`llvm-readobj --offloading`), which speak LLVM's option
//! syntax (`cl`) and print LLVM's messages; `inspect` (the reports of
//! inspect and check), `kpack` and `hipk` (kpack archives and split hosts),
//! `conformance` (the runner's options and reports), `dropins`, `man`, and
//! `term` (colour, progress).
//!
//! # Example
//!
//! The binary is one line (`src/main.rs`):
//!
//! ```no_run
//! offload_kit_cli::main()
//! ```

/// `println!` that never panics: a closed pipe (`offload-kit list … | head`)
/// ends the program quietly; another write error ends it with status 1.
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::write_line(format_args!($($t)*))
    };
}

/// Write one line to standard output (see `outln!`).
pub(crate) fn write_line(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args).and_then(|()| o.write_all(b"\n")) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("offload-kit: error: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

mod bundler;
mod cl;
mod commands;
mod conformance;
mod dropins;
mod hipk;
mod inspect;
mod kpack;
mod man;
mod native;
mod offloading;
mod packager;
mod term;

use offload_kit_format::Error;
use offload_kit_io::output::io_text;
use offload_kit_llvm::budget::Budget;
use offload_kit_llvm::Release;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// An input file: mapped when it is a regular file, read when it is stdin.
pub(crate) struct Input {
    map: Option<memmap2::Mmap>,
    buf: Vec<u8>,
    /// The open file, for kernel-side copies of payload ranges.
    pub file: Option<File>,
}

impl AsRef<[u8]> for Input {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

impl Input {
    /// Open `path` (`-` is standard input).
    pub fn open(path: &Path) -> Result<Input, Error> {
        if path == Path::new("-") {
            // Standard input is read once: every later open (a command
            // that looks at a file twice, as `check` does for HIPK hosts)
            // maps the same spool, so `-` gets the verdict its file would.
            static SPOOL: std::sync::OnceLock<Result<(File, u64), Error>> =
                std::sync::OnceLock::new();
            let (spool, len) = match SPOOL.get_or_init(Input::spool_stdin) {
                Ok((f, len)) => (
                    f.try_clone()
                        .map_err(|e| Error::other(format!("standard input: {}", io_text(&e))))?,
                    *len,
                ),
                Err(e) => return Err(e.clone()),
            };
            let map = if len == 0 {
                None
            } else {
                Some(map_range(&spool, 0, len)?)
            };
            return Ok(Input {
                map,
                buf: Vec::new(),
                file: Some(spool),
            });
        }
        // Regular files only, opened without blocking (a FIFO would wait
        // for a writer for ever): the library's one rule for inputs.
        let (file, len) = offload_kit_io::input::open_regular(path)
            .map_err(|e| Error::other(format!("'{}': {e}", path.display())))?;
        Input::mapped(file, len, path)
    }

    /// Standard input spooled into an unlinked temporary file, to be mapped
    /// like any input: memory stays within the budget whatever its size.
    fn spool_stdin() -> Result<(File, u64), Error> {
        let mut spool = tempfile::tempfile().map_err(|e| {
            Error::other(format!("standard input: cannot spool it: {}", io_text(&e)))
        })?;
        // Never up to a full disk (`list - < /dev/zero`): the spool
        // leaves the temporary directory's file system some room.
        let room = spool_room(&spool);
        let len = std::io::copy(&mut std::io::stdin().lock().take(room + 1), &mut spool)
            .map_err(|e| Error::other(format!("standard input: {}", io_text(&e))))?;
        if len > room {
            return Err(Error::rule(
                offload_kit_format::rules::CLI_6,
                format!(
                    "standard input: more than {room} bytes, what the temporary directory's \
                         file system can hold while keeping free what OFFLOAD_KIT_SPOOL_KEEP_FREE \
                         says (default 256 MiB); give the file by name instead"
                ),
            ));
        }
        Ok((spool, len))
    }

    /// Open `path` as LLVM's tools do (the drop-ins): `-` is standard
    /// input, a regular file is mapped, and a device, pipe or socket
    /// (`/dev/null`, `/dev/fd/N`, `<(…)`, a named FIFO) is read to its end
    /// within the memory budget (CLI-6 past it), as
    /// `MemoryBuffer::getFileOrSTDIN` reads it. `budget` bounds what is
    /// read.
    pub fn open_as_llvm(path: &Path, budget: Budget) -> Result<Input, Error> {
        use offload_kit_io::input::{open_as_llvm, LlvmInput, OpenError};
        if path == Path::new("-") {
            return Input::open(path);
        }
        let name = || path.display();
        match open_as_llvm(path, budget.bytes()) {
            Ok(LlvmInput::Read(buf)) => Ok(Input::from_vec(buf)),
            Ok(LlvmInput::Regular(file, len)) => Input::mapped(file, len, path),
            Err(e @ OpenError::TooLarge(_)) => Err(Error::rule(
                offload_kit_format::rules::CLI_6,
                format!("'{}': {e}", name()),
            )),
            Err(e) => Err(Error::other(format!("'{}': {e}", name()))),
        }
    }

    /// `file`, a regular file of `len` bytes opened from `path`, mapped.
    fn mapped(file: File, len: u64, path: &Path) -> Result<Input, Error> {
        let map = if len == 0 {
            None
        } else {
            Some(map_range(&file, 0, len).map_err(|e| {
                Error::other(format!("'{}': cannot map {len} bytes: {e}", path.display()))
            })?)
        };
        Ok(Input {
            map,
            buf: Vec::new(),
            file: Some(file),
        })
    }

    /// An input held in memory (a decompressed bundle).
    pub fn from_vec(buf: Vec<u8>) -> Input {
        Input {
            map: None,
            buf,
            file: None,
        }
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&self.buf)
    }
}

impl offload_kit_format::source::Source for Input {
    fn bytes(&self) -> &[u8] {
        Input::bytes(self)
    }

    /// `pread` for a file-backed input: no page of it gets mapped.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> bool {
        let in_range = offset
            .checked_add(buf.len() as u64)
            .is_some_and(|e| e <= Input::bytes(self).len() as u64);
        match (&self.file, in_range) {
            (Some(f), true) => std::os::unix::fs::FileExt::read_exact_at(f, buf, offset).is_ok(),
            (None, true) => {
                let s = offset as usize;
                buf.copy_from_slice(&Input::bytes(self)[s..s + buf.len()]);
                true
            }
            _ => false,
        }
    }

    /// A file-backed input maps each window separately: its pages leave
    /// the resident set when the window is dropped (see `source`).
    fn window(&self, offset: u64, len: u64) -> Option<offload_kit_format::source::Window<'_>> {
        use offload_kit_format::source::Window;
        let end = offset.checked_add(len)?;
        if end > Input::bytes(self).len() as u64 {
            return None;
        }
        match (&self.file, &self.map) {
            (Some(f), Some(_)) if len > 0 => match map_range(f, offset, len) {
                Ok(m) => Some(Window::Held(Box::new(m))),
                Err(_) => None,
            },
            _ => Some(Window::Borrowed(
                &Input::bytes(self)[offset as usize..end as usize],
            )),
        }
    }
}

/// Print `errs` on stderr as `offload-kit: error: <prefix><error>`, at
/// most `shown` of them and then a count of the rest, in one buffered write;
/// "error" coloured as `color` says.
pub(crate) fn report_errors(prefix: &str, errs: &[Error], shown: usize, color: term::ColorChoice) {
    use std::io::Write;
    let error = color.paint(term::Stream::Stderr, term::Color::Red, "error");
    let mut w = std::io::BufWriter::new(std::io::stderr().lock());
    // Names and IDs in messages come from inputs and the file system.
    let prefix = offload_kit_io::output::escape_controls(prefix);
    for e in errs.iter().take(shown) {
        let text = e.to_string();
        let text = offload_kit_io::output::escape_controls(&text);
        let _ = writeln!(w, "offload-kit: {error}: {prefix}{text}");
    }
    if let Some(more) = errs.len().checked_sub(shown).filter(|&n| n > 0) {
        let _ = writeln!(
            w,
            "offload-kit: {error}: {prefix}... and {more} more ('offload-kit validate --json' lists every one)"
        );
    }
    let _ = w.flush();
}

/// Write `bytes` to stdout; a closed pipe ends the program quietly.
pub(crate) fn write_stdout(bytes: &[u8]) -> Result<i32, Vec<Error>> {
    use std::io::Write;
    match std::io::stdout().lock().write_all(bytes) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(vec![Error::other(format!(
            "cannot write to standard output: {}",
            io_text(&e)
        ))]),
        _ => Ok(0),
    }
}

/// The message for an input that got shorter while it was read.
const SHRANK: &str = "the input file shrank while it was read (truncated by another process?)";

/// What mapping inputs needs besides the mapping itself: a page of a
/// mapped input that vanished (another process truncated the file while
/// it was read) raises SIGBUS, which would kill the process with no word
/// (exit 135). The handler says what happened and exits 1 instead. Outputs
/// are anonymous until committed (O_TMPFILE), so nothing is left behind,
/// except by a command writing more than `output::KEEP_OPEN` outputs at
/// once: those past it have hidden temporary names until their commit.
#[cfg(unix)]
#[allow(unsafe_code)]
pub(crate) fn exit_on_sigbus() {
    extern "C" fn on_sigbus(_: libc::c_int) {
        const MSG: &[u8] = b"offload-kit: error: the input file shrank while it was read (truncated by another process?); no output was written\n";
        const _: () = assert!(MSG.len() > SHRANK.len());
        // SAFETY: write(2) and _exit(2) are async-signal-safe; MSG is static.
        unsafe {
            libc::write(2, MSG.as_ptr().cast(), MSG.len());
            libc::_exit(1);
        }
    }
    // SAFETY: a zeroed sigaction is valid (no flags, empty mask); the
    // handler only calls async-signal-safe functions.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigbus as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
    }
}

/// Elsewhere the default action stays.
#[cfg(not(unix))]
pub(crate) fn exit_on_sigbus() {}

/// Mapping (part of) an input file read-only: with [`exit_on_sigbus`] and
/// the C ABI, the only `unsafe` in offload-kit. A file truncated by another
/// process while mapped faults; the handler turns that into exit 1.
#[allow(unsafe_code)]
fn map_range(file: &File, offset: u64, len: u64) -> Result<memmap2::Mmap, Error> {
    let len = usize::try_from(len).map_err(|_| Error::other("file too large to map"))?;
    // SAFETY: read-only private mapping of a file we opened; see above.
    unsafe {
        memmap2::MmapOptions::new()
            .offset(offset)
            .len(len)
            .map(file)
    }
    .map_err(|e| Error::other(io_text(&e)))
}

/// Copy `size` bytes at `offset` of `input` to `out`: kernel-side copy
/// (copy_file_range) when both are files, else from the mapped bytes.
pub(crate) fn copy_range(
    input: &Input,
    offset: u64,
    size: u64,
    out: &mut offload_kit_io::output::OutputFile,
) -> Result<(), Error> {
    use std::io::{Seek, SeekFrom, Write};
    if let (Some(f), true) = (&input.file, out.file().is_some()) {
        let mut f = f;
        f.seek(SeekFrom::Start(offset))?;
        let mut src = f.take(size);
        let dst = out.file().expect("checked");
        let n = std::io::copy(&mut src, dst)?;
        if n != size {
            return Err(Error::other(SHRANK));
        }
        return Ok(());
    }
    let b = input.bytes();
    let s = usize::try_from(offset).map_err(|_| Error::other("offset too large"))?;
    let e = s + usize::try_from(size).map_err(|_| Error::other("size too large"))?;
    out.write_all(&b[s..e])?;
    Ok(())
}

/// How many bytes standard input may spool into `spool`: the space free
/// on its file system, less what is kept free (256 MiB, or
/// `OFFLOAD_KIT_SPOOL_KEEP_FREE`: bytes, or with K, M or G); unbounded
/// where the free space is not known.
fn spool_room(spool: &std::fs::File) -> u64 {
    let keep_free = std::env::var("OFFLOAD_KIT_SPOOL_KEEP_FREE")
        .ok()
        .and_then(|v| offload_kit_format::limits::parse_size(&v))
        .unwrap_or(256 << 20);
    match rustix::fs::fstatvfs(spool) {
        Ok(st) => st
            .f_bavail
            .saturating_mul(st.f_frsize)
            .saturating_sub(keep_free),
        Err(_) => u64::MAX - 1,
    }
}

/// `name` cut to fit a file name (255 bytes) with room for `-<index>`.
pub(crate) fn fit_name(name: &str, index: usize) -> String {
    const MAX: usize = 255;
    if name.len() <= MAX {
        return name.to_string();
    }
    let mut cut = MAX - 24;
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{index}", &name[..cut])
}

/// Create the output directory `dir` (and its parents); a failure is CLI-5.
pub(crate) fn create_out_dir(dir: &Path) -> Result<OutDir, Vec<Error>> {
    // The topmost directory this run creates, to take back if it stays empty.
    let created = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .last()
        .map(Path::to_path_buf);
    std::fs::create_dir_all(dir).map_err(|e| {
        vec![Error::rule(
            offload_kit_format::rules::CLI_5,
            format!("'{}': {e}", dir.display()),
        )]
    })?;
    Ok(OutDir {
        dir: dir.to_path_buf(),
        created,
    })
}

/// An output directory: the directories this run created for it are
/// removed again when the run ends with them empty (a failed run leaves
/// no empty `--dir` behind, CLI-5). Hold it until the outputs are committed.
pub(crate) struct OutDir {
    dir: std::path::PathBuf,
    created: Option<std::path::PathBuf>,
}

impl Drop for OutDir {
    fn drop(&mut self) {
        let Some(top) = &self.created else { return };
        for d in self.dir.ancestors() {
            // Fails on a directory that holds anything: that one stays.
            if std::fs::remove_dir(d).is_err() || d == top {
                break;
            }
        }
    }
}

/// What one run is configured with, made once from the environment and
/// the options and handed to each command as a value (the library keeps no
/// setting of its own): the memory budget and when to colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
    /// `--max-memory`, else `OFFLOAD_KIT_MAX_MEMORY`, else 256 MiB (CLI-6).
    pub budget: Budget,
    /// `--color`.
    pub color: term::ColorChoice,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            budget: Budget::default(),
            color: term::ColorChoice::Auto,
        }
    }
}

/// The `offload-kit` process: the drop-in named by `argv[0]`
/// (`clang-offload-bundler`, `clang-offload-packager`/`llvm-offload-binary`,
/// `llvm-objdump`, `llvm-readobj`), else the native CLI. Exits with the
/// command's status.
pub fn main() -> ! {
    exit_on_sigbus();
    let args_os: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // A malformed budget is refused as --max-memory refuses it, not
    // silently replaced by the default.
    let mut settings = Settings::default();
    if let Some(text) = std::env::var_os("OFFLOAD_KIT_MAX_MEMORY") {
        match text.to_str().and_then(Budget::parse) {
            Some(b) => settings.budget = b,
            None => {
                eprintln!(
                    "offload-kit: error: OFFLOAD_KIT_MAX_MEMORY={}: not a size (bytes, or with K, M or G)",
                    offload_kit_io::output::escape_controls(&text.to_string_lossy())
                );
                std::process::exit(1);
            }
        }
    }
    let prog = args_os
        .first()
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = std::path::Path::new(&prog)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The drop-ins take text arguments, as LLVM's option parser does; the
    // native commands take any path the OS can name.
    let text = || -> Result<Vec<String>, i32> {
        args_os[1..]
            .iter()
            .map(|a| {
                a.to_str().map(str::to_string).ok_or_else(|| {
                    eprintln!("{prog}: error: argument {a:?} is not valid UTF-8");
                    1
                })
            })
            .collect()
    };
    // A drop-in's release: --llvm-version, else what the directory it was
    // started from says (`offload-kit dropins`), else 22.
    let drop_in = |run: &dyn Fn(Vec<String>, Release) -> i32| {
        let args = match text() {
            Ok(a) => a,
            Err(code) => return code,
        };
        match dropins::default_release(&prog, &name) {
            Ok(release) => run(args, release),
            Err(e) => {
                eprintln!("{prog}: error: {e}");
                1
            }
        }
    };
    let code = if name.starts_with("clang-offload-bundler") {
        drop_in(&|a, r| bundler::main(&prog, a, r, settings))
    } else if name.starts_with("clang-offload-packager") || name.starts_with("llvm-offload-binary")
    {
        drop_in(&|a, r| packager::main(&prog, a, true, r, settings))
    } else if name.starts_with("llvm-objdump") {
        drop_in(&|a, r| offloading::main(&prog, offloading::Tool::Objdump, a, r, settings))
    } else if name.starts_with("llvm-readobj") {
        drop_in(&|a, r| offloading::main(&prog, offloading::Tool::Readobj, a, r, settings))
    } else {
        native::main(args_os, settings)
    };
    std::process::exit(code);
}
