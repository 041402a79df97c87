//! Writing outputs safely (spec rule CLI-5): every output goes to a
//! temporary file in the destination directory and is renamed into place
//! only when complete; names derived from untrusted data (entry IDs, member
//! names) never leave the directory the user chose.
//!
//! On Linux the temporary file is anonymous (`O_TMPFILE`): it gets a name
//! only at [`OutputFile::commit`], for the instant between `linkat` and
//! `rename`, so a process killed while writing (even by SIGKILL) leaves
//! nothing behind. Elsewhere, or on a file system without `O_TMPFILE`, it
//! is a named `.offload-kit-<pid>-<n>.tmp` removed on drop.
//! [`commit_all`] commits several outputs as a unit: all of them or none.
//!
//! ```
//! use offload_kit_io::output::{commit_all, OutputFile};
//! use std::io::Write;
//! let dir = std::env::temp_dir().join(format!("ok-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let mut a = OutputFile::create(&dir.join("a.bin")).unwrap();
//! a.write_all(b"first").unwrap();
//! let mut b = OutputFile::create(&dir.join("b.bin")).unwrap();
//! b.write_all(b"second").unwrap();
//! commit_all(vec![a, b]).unwrap();
//! assert_eq!(std::fs::read(dir.join("b.bin")).unwrap(), b"second");
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use offload_kit_format::error::{Error, Result};
use offload_kit_format::rules;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

// Text from an input, escaped for a terminal (the spec core's; here too
// for the callers that write outputs).
pub use offload_kit_format::escape::{escape_control_bytes, escape_controls};

pub use offload_kit_format::binary::write_zeros;

/// An output being written; dropped without [`OutputFile::commit`] it leaves nothing behind.
pub struct OutputFile {
    target: Target,
    path: PathBuf,
    /// Counts this output among the open ones while it holds its file.
    held: Option<Held>,
}

/// Outputs holding an open file now, in this process.
static HELD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Outputs [`OutputFile::close`] leaves open and anonymous: up to this
/// many, a killed process leaves nothing; past it, each closed output has
/// a hidden temporary name until its commit, so the open-file limit does
/// not bound how many outputs a command writes.
pub const KEEP_OPEN: usize = 64;

/// One open output, counted in [`HELD`] while it lives.
struct Held;

impl Held {
    fn new() -> Option<Held> {
        HELD.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(Held)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        HELD.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

enum Target {
    /// `-`: standard output.
    Stdout(io::Stdout),
    /// A temporary file renamed onto `path` by `commit`.
    Temp(PathBuf, File),
    /// An anonymous file in directory `.0`, linked and renamed onto
    /// `path` by `commit`.
    Anonymous(PathBuf, File),
    /// An existing file that is not a regular file (a device, a FIFO),
    /// written in place: renaming over it would replace the node.
    Direct(File),
    /// Written and closed ([`OutputFile::close`]): a temporary file renamed
    /// onto `path` by `commit`.
    Closed(PathBuf),
    /// Committed or dropped.
    Done,
}

/// An I/O error as LLVM prints it: "No such file or directory", without
/// Rust's " (os error 2)".
pub fn io_text(e: &io::Error) -> String {
    strip_os_error(&e.to_string()).to_string()
}

/// `text` without Rust's " (os error N)" and what follows it.
pub fn strip_os_error(text: &str) -> &str {
    text.find(" (os error").map_or(text, |p| &text[..p])
}

/// Most symbolic links followed when resolving an output path (Linux's limit).
const MAX_LINKS: usize = 40;

/// `path` with symbolic links in its last component resolved, as opening
/// it for writing would resolve them (a dangling link names the file it
/// would create).
fn resolve_links(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(&p) {
                Ok(t) if t.is_absolute() => p = t,
                Ok(t) => p = p.parent().unwrap_or(Path::new(".")).join(t),
                Err(_) => break,
            },
            _ => break,
        }
    }
    p
}

impl OutputFile {
    /// Start writing `path`, an output the user named (`-` means standard
    /// output). As LLVM's tools do, a symbolic link is written through
    /// (the file it points to is replaced) and an existing device or FIFO
    /// is written in place. Otherwise the data goes to a temporary file in
    /// the same directory, created with mode 0666 less the umask as LLVM's
    /// outputs are, and renamed into place by [`OutputFile::commit`].
    pub fn create(path: &Path) -> Result<OutputFile> {
        if path == Path::new("-") {
            return Ok(OutputFile {
                target: Target::Stdout(io::stdout()),
                path: path.to_path_buf(),
                held: None,
            });
        }
        let real = resolve_links(path);
        if let Ok(m) = std::fs::metadata(&real) {
            if !m.is_file() && !m.is_dir() {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&real)
                    .map_err(|e| Error::other(format!("'{}': {}", path.display(), io_text(&e))))?;
                return Ok(OutputFile {
                    target: Target::Direct(f),
                    path: real,
                    held: Held::new(),
                });
            }
        }
        Self::create_temp(&real, path)
    }

    /// Start writing `path` without following a symbolic link there: the
    /// link itself is replaced. For paths built from untrusted names
    /// ([`contained_path`]), where following a link planted in the
    /// directory would write outside it.
    pub fn create_replacing(path: &Path) -> Result<OutputFile> {
        Self::create_temp(path, path)
    }

    /// A temporary file next to `path`, to be renamed onto it; errors name
    /// `shown` (the path as the user gave it), as LLVM's do.
    fn create_temp(path: &Path, shown: &Path) -> Result<OutputFile> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if let Some(f) = anonymous_file(dir) {
            return Ok(OutputFile {
                target: Target::Anonymous(dir.to_path_buf(), f),
                path: path.to_path_buf(),
                held: Held::new(),
            });
        }
        let mut last = None;
        for n in 0..1000u32 {
            let tmp = dir.join(format!(".offload-kit-{}-{n}.tmp", std::process::id()));
            let mut o = std::fs::OpenOptions::new();
            // Readable too: a writer may map what it wrote to check it.
            o.read(true).write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                o.mode(0o666);
            }
            match o.open(&tmp) {
                Ok(f) => {
                    return Ok(OutputFile {
                        target: Target::Temp(tmp, f),
                        path: path.to_path_buf(),
                        held: Held::new(),
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => {
                    return Err(Error::other(format!(
                        "'{}': {}",
                        shown.display(),
                        io_text(&e)
                    )))
                }
            }
        }
        Err(Error::other(format!(
            "'{}': no temporary file name left: {}",
            shown.display(),
            last.map_or(String::new(), |e| e.to_string())
        )))
    }

    /// The underlying file, for `io::copy` fast paths; `None` for standard output.
    pub fn file(&mut self) -> Option<&mut File> {
        match &mut self.target {
            Target::Temp(_, f) | Target::Anonymous(_, f) | Target::Direct(f) => Some(f),
            _ => None,
        }
    }

    /// The path this output is written to when committed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rename the finished output into place.
    pub fn commit(mut self) -> Result<()> {
        self.stage()?;
        self.finish()
    }

    /// Written: flushed, and once more than [`KEEP_OPEN`] outputs are
    /// open, its file closed, keeping only a temporary name until the
    /// commit. A command that writes many outputs and commits them
    /// together calls this after each, so however many it writes, it holds
    /// at most [`KEEP_OPEN`] open files (`ulimit -n`).
    pub fn close(&mut self) -> Result<()> {
        if HELD.load(std::sync::atomic::Ordering::Relaxed) <= KEEP_OPEN {
            return self.flush().map_err(Error::from);
        }
        self.stage()?;
        let fail =
            |e: io::Error| Error::other(format!("'{}': {}", self.path.display(), io_text(&e)));
        match std::mem::replace(&mut self.target, Target::Done) {
            Target::Temp(tmp, mut f) => {
                if let Err(e) = f.flush() {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(fail(e));
                }
                self.target = Target::Closed(tmp);
                self.held = None;
            }
            // Written in place: nothing is left to rename.
            Target::Direct(mut f) => {
                f.flush().map_err(fail)?;
                self.held = None;
            }
            other => self.target = other,
        }
        Ok(())
    }

    /// First half of a commit: flush, and give an anonymous file a
    /// temporary name in its directory. Nothing is replaced yet.
    fn stage(&mut self) -> Result<()> {
        let fail =
            |e: io::Error| Error::other(format!("'{}': {}", self.path.display(), io_text(&e)));
        match std::mem::replace(&mut self.target, Target::Done) {
            Target::Anonymous(dir, mut f) => {
                f.flush().map_err(fail)?;
                let tmp = link_anonymous(&f, &dir).map_err(fail)?;
                self.target = Target::Temp(tmp, f);
            }
            other => self.target = other,
        }
        Ok(())
    }

    /// Second half of a commit: rename the staged file onto the path.
    fn finish(mut self) -> Result<()> {
        match std::mem::replace(&mut self.target, Target::Done) {
            Target::Stdout(mut s) => Ok(s.flush()?),
            Target::Direct(mut f) => f
                .flush()
                .map_err(|e| Error::other(format!("'{}': {e}", self.path.display()))),
            Target::Temp(tmp, mut f) => self.rename_staged(&tmp, f.flush()),
            // Flushed when it was closed.
            Target::Closed(tmp) => self.rename_staged(&tmp, Ok(())),
            Target::Anonymous(..) => unreachable!("staged before finishing"),
            Target::Done => Ok(()),
        }
    }

    /// Rename the staged file `tmp` onto the path once `flushed`; on a
    /// failure the temporary file is removed.
    fn rename_staged(&self, tmp: &Path, flushed: io::Result<()>) -> Result<()> {
        flushed
            .and_then(|()| std::fs::rename(tmp, &self.path))
            .map_err(|e| {
                let _ = std::fs::remove_file(tmp);
                Error::other(format!("'{}': {e}", self.path.display()))
            })
    }
}

/// Commit several outputs as a unit: every one is flushed and staged
/// under a temporary name first (a full disk or a bad name fails here,
/// before any destination changes), then each is renamed into place. If a
/// rename still fails, the outputs already renamed by this call that did
/// not exist before are removed again, so the caller sees all or none.
pub fn commit_all(mut outputs: Vec<OutputFile>) -> Result<()> {
    for o in &mut outputs {
        o.stage()?;
    }
    let existed: Vec<bool> = outputs
        .iter()
        .map(|o| std::fs::symlink_metadata(&o.path).is_ok())
        .collect();
    let mut done: Vec<PathBuf> = Vec::new();
    let mut rest = outputs.into_iter();
    for (o, existed) in rest.by_ref().zip(existed) {
        let path = o.path.clone();
        if let Err(e) = o.finish() {
            for p in done {
                let _ = std::fs::remove_file(p);
            }
            return Err(e);
        }
        if !existed {
            done.push(path);
        }
    }
    Ok(())
}

/// An anonymous file in `dir` (`O_TMPFILE`, mode 0666 less the umask),
/// when the system supports it and `/proc/self/fd` can name it for
/// `linkat` later; `None` otherwise.
#[cfg(target_os = "linux")]
fn anonymous_file(dir: &Path) -> Option<File> {
    use rustix::fs::{Mode, OFlags};
    if std::env::var_os("OFFLOAD_KIT_NO_TMPFILE").is_some() || !Path::new("/proc/self/fd").is_dir()
    {
        return None;
    }
    let fd = rustix::fs::open(
        dir,
        // Readable too: a writer may map what it wrote to check it.
        OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o666),
    )
    .ok()?;
    Some(File::from(fd))
}

#[cfg(not(target_os = "linux"))]
fn anonymous_file(_dir: &Path) -> Option<File> {
    None
}

/// Give the anonymous file `f` a fresh temporary name in `dir`.
#[cfg(target_os = "linux")]
fn link_anonymous(f: &File, dir: &Path) -> io::Result<PathBuf> {
    use rustix::fs::{AtFlags, CWD};
    use std::os::fd::AsRawFd;
    use std::sync::atomic::{AtomicU32, Ordering};
    // Names are tried from a counter, not from 0: several outputs staged
    // at once (`extract --all`) would otherwise try every name taken
    // before theirs, n² system calls for n outputs.
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let proc_path = format!("/proc/self/fd/{}", f.as_raw_fd());
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for _ in 0..1000u32 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".offload-kit-{}-{n}.tmp", std::process::id()));
        match rustix::fs::linkat(CWD, proc_path.as_str(), CWD, &tmp, AtFlags::SYMLINK_FOLLOW) {
            Ok(()) => return Ok(tmp),
            Err(e) if e == rustix::io::Errno::EXIST => last = e.into(),
            Err(e) => return Err(e.into()),
        }
    }
    Err(last)
}

#[cfg(not(target_os = "linux"))]
fn link_anonymous(_f: &File, _dir: &Path) -> io::Result<PathBuf> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Target::Temp(tmp, _) | Target::Closed(tmp) =
            std::mem::replace(&mut self.target, Target::Done)
        {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

impl Write for OutputFile {
    /// A failure names the output (ENOSPC is the output's fault, not the
    /// input's).
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.target {
            Target::Temp(_, f) | Target::Anonymous(_, f) | Target::Direct(f) => f.write(buf),
            Target::Stdout(s) => s.write(buf),
            Target::Closed(_) | Target::Done => {
                Err(io::Error::other("output already closed or committed"))
            }
        }
        .map_err(|e| {
            let text = format!("writing '{}': {}", self.path.display(), io_text(&e));
            io::Error::new(e.kind(), text)
        })
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.target {
            Target::Temp(_, f) | Target::Anonymous(_, f) | Target::Direct(f) => f.flush(),
            Target::Stdout(s) => s.flush(),
            Target::Closed(_) | Target::Done => Ok(()),
        }
    }
}

/// Write `bytes` to `path` atomically. For a path the user named (as
/// LLVM's tools write theirs: a link there is written through); a name the
/// program chose inside the user's directory is [`write_in_dir`]'s.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut o = OutputFile::create(path)?;
    o.write_all(bytes)?;
    o.commit()
}

/// Write `bytes` as `rel` (a relative path of plain components the
/// program chose: `demo.bundle`, `case/locate/x.html`) inside `dir`, the
/// directory the user named. Nothing outside `dir` is touched: a symbolic
/// link, FIFO or device already at the name is replaced, never written
/// through or waited on, and a directory on the way that is a symbolic
/// link is refused (CLI-5).
pub fn write_in_dir(dir: &Path, rel: &str, bytes: &[u8]) -> Result<()> {
    let mut o = create_in_dir(dir, rel)?;
    o.write_all(bytes)?;
    o.commit()
}

/// Start writing `rel` inside `dir` as [`write_in_dir`] does: its
/// directories are created (none through a symbolic link), and the output
/// replaces whatever is at the name when committed.
pub fn create_in_dir(dir: &Path, rel: &str) -> Result<OutputFile> {
    let parts: Vec<&str> = rel.split('/').collect();
    let bad = || {
        Error::rule(
            rules::CLI_5,
            format!(
                "output name '{}' would leave '{}'",
                rel.escape_debug(),
                dir.display()
            ),
        )
    };
    let (name, subdirs) = parts.split_last().ok_or_else(bad)?;
    // The directory the user named is made as they named it.
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::rule(
            rules::CLI_5,
            format!("'{}': {}", dir.display(), io_text(&e)),
        )
    })?;
    let mut at = dir.to_path_buf();
    for d in subdirs {
        at = contained_path(&at, d).map_err(|_| bad())?;
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(Error::rule(
                    rules::CLI_5,
                    format!(
                        "'{}' is a symbolic link: offload-kit writes nothing through it",
                        at.display()
                    ),
                ))
            }
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::rule(
                    rules::CLI_5,
                    format!("'{}' is in the way: not a directory", at.display()),
                ))
            }
            Err(_) => std::fs::create_dir(&at).map_err(|e| {
                Error::rule(rules::CLI_5, format!("'{}': {}", at.display(), io_text(&e)))
            })?,
        }
    }
    let path = contained_path(&at, name).map_err(|_| bad())?;
    OutputFile::create_replacing(&path)
}

/// Turn an untrusted name (an entry ID, a member name) into a file name
/// inside `dir`: path separators, `..`, NUL and other control characters are
/// replaced so the result is one plain component under `dir`.
pub fn contained_path(dir: &Path, untrusted: &str) -> Result<PathBuf> {
    let mut name: String = untrusted
        .chars()
        .map(|c| match c {
            '/' | '\\' | '\0' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    if name.is_empty() || name == "." || name == ".." {
        name = format!("_{name}");
    }
    let p = dir.join(&name);
    let ok = Path::new(&name)
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
        && Path::new(&name).components().count() == 1;
    if !ok {
        return Err(Error::rule(
            rules::CLI_5,
            format!(
                "output name '{}' would leave '{}'",
                untrusted.escape_debug(),
                dir.display()
            ),
        ));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_inside() {
        let d = Path::new("/tmp/out");
        for bad in [
            "../../etc/passwd",
            "/etc/passwd",
            "..",
            ".",
            "a/../../b",
            "x\0y",
            "",
        ] {
            let p = contained_path(d, bad).unwrap();
            assert_eq!(p.parent(), Some(d), "{bad:?} -> {p:?}");
        }
        assert_eq!(
            contained_path(d, "hip-amdgcn-amd-amdhsa--gfx906").unwrap(),
            d.join("hip-amdgcn-amd-amdhsa--gfx906")
        );
    }

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ok-out-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn writing_leaves_no_name_until_commit() {
        let d = scratch("anon");
        let mut o = OutputFile::create(&d.join("x")).unwrap();
        o.write_all(b"data").unwrap();
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            0,
            "anonymous while written"
        );
        o.commit().unwrap();
        let names: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["x"]);
        assert_eq!(std::fs::read(d.join("x")).unwrap(), b"data");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn commit_all_is_all_or_nothing() {
        let d = scratch("all");
        // The second destination is a directory: renaming a file onto it
        // fails, and the first output must not stay behind.
        std::fs::create_dir(d.join("b")).unwrap();
        std::fs::write(d.join("b").join("keep"), b"k").unwrap();
        let mut a = OutputFile::create(&d.join("a")).unwrap();
        a.write_all(b"A").unwrap();
        let mut b = OutputFile::create_replacing(&d.join("b")).unwrap();
        b.write_all(b"B").unwrap();
        assert!(commit_all(vec![a, b]).is_err());
        let mut names: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["b"], "only the pre-existing directory remains");
        let mut a = OutputFile::create(&d.join("a")).unwrap();
        a.write_all(b"A").unwrap();
        let mut c = OutputFile::create(&d.join("c")).unwrap();
        c.write_all(b"C").unwrap();
        commit_all(vec![a, c]).unwrap();
        assert_eq!(std::fs::read(d.join("a")).unwrap(), b"A");
        assert_eq!(std::fs::read(d.join("c")).unwrap(), b"C");
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Past KEEP_OPEN, closed outputs hold no file open; they are
    /// committed all or none, and dropped uncommitted they leave nothing.
    #[test]
    fn closed_outputs_hold_no_file_open() {
        let d = scratch("closed");
        let open_fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
        let before = open_fds();
        let n = KEEP_OPEN + 100;
        let mut outs = Vec::new();
        for i in 0..n {
            let mut o = OutputFile::create_replacing(&d.join(format!("f{i}"))).unwrap();
            o.write_all(b"x").unwrap();
            o.close().unwrap();
            outs.push(o);
        }
        let last = outs.last_mut().unwrap();
        assert!(last.write_all(b"y").is_err(), "written after close");
        // Other tests run in parallel threads: allow a few of theirs.
        assert!(
            open_fds() < before + KEEP_OPEN + 10,
            "{} files open",
            open_fds() - before
        );
        drop(outs.pop());
        commit_all(outs).unwrap();
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            n - 1,
            "one dropped, nothing left of it"
        );
        assert_eq!(std::fs::read(d.join("f0")).unwrap(), b"x");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
