//! Writing outputs safely (spec rule CLI-5): every output goes to a
//! temporary file in the destination directory and is renamed into place
//! only when complete; names derived from untrusted data (entry IDs, member
//! names) never leave the directory the user chose.

use crate::error::{Error, Result};
use crate::rules;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

/// Write `n` zero bytes.
pub fn write_zeros<W: Write>(w: &mut W, mut n: u64) -> io::Result<()> {
    const Z: [u8; 4096] = [0; 4096];
    while n > 0 {
        let k = n.min(Z.len() as u64) as usize;
        w.write_all(&Z[..k])?;
        n -= k as u64;
    }
    Ok(())
}

/// An output being written; dropped without [`OutputFile::commit`] it leaves nothing behind.
pub struct OutputFile {
    target: Target,
    path: PathBuf,
}

enum Target {
    /// `-`: standard output.
    Stdout(io::Stdout),
    /// A temporary file renamed onto `path` by `commit`.
    Temp(PathBuf, File),
    /// An existing file that is not a regular file (a device, a FIFO),
    /// written in place: renaming over it would replace the node.
    Direct(File),
    /// Committed or dropped.
    Done,
}

/// An I/O error as LLVM prints it: "No such file or directory", without
/// Rust's " (os error 2)".
fn io_text(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(p) => s[..p].to_string(),
        None => s,
    }
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
        let mut last = None;
        for n in 0..1000u32 {
            let tmp = dir.join(format!(".offload-kit-{}-{n}.tmp", std::process::id()));
            let mut o = std::fs::OpenOptions::new();
            o.write(true).create_new(true);
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
            Target::Temp(_, f) | Target::Direct(f) => Some(f),
            _ => None,
        }
    }

    /// Rename the finished output into place.
    pub fn commit(mut self) -> Result<()> {
        match std::mem::replace(&mut self.target, Target::Done) {
            Target::Stdout(mut s) => Ok(s.flush()?),
            Target::Direct(mut f) => f
                .flush()
                .map_err(|e| Error::other(format!("'{}': {e}", self.path.display()))),
            Target::Temp(tmp, mut f) => {
                let done = f.flush().and_then(|()| std::fs::rename(&tmp, &self.path));
                if let Err(e) = done {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(Error::other(format!("'{}': {e}", self.path.display())));
                }
                Ok(())
            }
            Target::Done => Ok(()),
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Target::Temp(tmp, _) = std::mem::replace(&mut self.target, Target::Done) {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.target {
            Target::Temp(_, f) | Target::Direct(f) => f.write(buf),
            Target::Stdout(s) => s.write(buf),
            Target::Done => Err(io::Error::other("output already committed")),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.target {
            Target::Temp(_, f) | Target::Direct(f) => f.flush(),
            Target::Stdout(s) => s.flush(),
            Target::Done => Ok(()),
        }
    }
}

/// Write `bytes` to `path` atomically.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut o = OutputFile::create(path)?;
    o.write_all(bytes)?;
    o.commit()
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
}
