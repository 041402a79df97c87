//! Writing outputs safely (spec rule CLI-5): every output goes to a
//! temporary file in the destination directory and is renamed into place
//! only when complete; names derived from untrusted data (entry IDs, member
//! names) never leave the directory the user chose.

use crate::error::{Error, Result};
use crate::rules;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

/// An output being written; dropped without [`OutputFile::commit`] it leaves nothing behind.
pub struct OutputFile {
    tmp: Option<(PathBuf, File)>,
    path: PathBuf,
    stdout: Option<io::Stdout>,
}

impl OutputFile {
    /// Start writing `path` (`-` means standard output). The temporary file
    /// is created in the same directory with mode 0666 less the umask, as
    /// LLVM's outputs are, so the renamed file has the usual permissions.
    pub fn create(path: &Path) -> Result<OutputFile> {
        if path == Path::new("-") {
            return Ok(OutputFile {
                tmp: None,
                path: path.to_path_buf(),
                stdout: Some(io::stdout()),
            });
        }
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
                        tmp: Some((tmp, f)),
                        path: path.to_path_buf(),
                        stdout: None,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(Error::other(format!("'{}': {e}", path.display()))),
            }
        }
        Err(Error::other(format!(
            "'{}': no temporary file name left: {}",
            path.display(),
            last.map_or(String::new(), |e| e.to_string())
        )))
    }

    /// The underlying file, for `io::copy` fast paths; `None` for standard output.
    pub fn file(&mut self) -> Option<&mut File> {
        self.tmp.as_mut().map(|(_, f)| f)
    }

    /// Rename the finished output into place.
    pub fn commit(mut self) -> Result<()> {
        if let Some(s) = self.stdout.as_mut() {
            s.flush()?;
            return Ok(());
        }
        let (tmp, mut f) = self.tmp.take().expect("file output");
        let done = f.flush().and_then(|()| std::fs::rename(&tmp, &self.path));
        if let Err(e) = done {
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::other(format!("'{}': {e}", self.path.display())));
        }
        Ok(())
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Some((tmp, _)) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match (&mut self.tmp, &mut self.stdout) {
            (Some((_, f)), _) => f.write(buf),
            (None, Some(s)) => s.write(buf),
            _ => unreachable!(),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match (&mut self.tmp, &mut self.stdout) {
            (Some((_, f)), _) => f.flush(),
            (None, Some(s)) => s.flush(),
            _ => Ok(()),
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
