//! `offload-kit dropins --llvm-version N DIR`: a directory in which LLVM
//! release N's offload tools are offload-kit, for `clang-N -B DIR` or for
//! a toolchain's own `bin/`.
//!
//! DIR gets a symbolic link to offload-kit under each tool name the
//! release ships and offload-kit models ([`Release::offload_tools`]), and
//! [`CONF`], which names the release. A drop-in started under a tool's
//! name reads [`CONF`] beside the name it was started by (the directory of
//! `argv[0]`, or the `PATH` entry that held it): no wrapper script is
//! needed, and `--llvm-version` on the command line still wins.

use offload_kit_format::Error;
use offload_kit_io::output::OutputFile;
use offload_kit_llvm::Release;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file beside the drop-ins that names their release.
pub(crate) const CONF: &str = "offload-kit-dropins.conf";

/// Write the drop-ins of `release` into `dir` (created if need be).
/// A file there that is not offload-kit is replaced only with `force`.
pub(crate) fn run(release: Release, dir: &Path, force: bool) -> Result<i32, Vec<Error>> {
    let one = |e: String| vec![Error::other(e)];
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| one(format!("cannot find offload-kit's own executable: {e}")))?;
    let _out_dir = super::create_out_dir(dir)?;
    let tools = release.offload_tools();
    // Every name is checked before anything is written: all or nothing.
    for t in tools.iter().filter(|t| t.modelled) {
        let at = dir.join(t.name);
        if !force && std::fs::symlink_metadata(&at).is_ok() && !runs_offload_kit(&at, &exe) {
            return Err(one(format!(
                "'{}' exists and is not offload-kit: pass --force to replace it (keep a copy: it may be LLVM's own tool)",
                at.display()
            )));
        }
    }
    let mut conf = OutputFile::create_replacing(&dir.join(CONF)).map_err(|e| vec![e])?;
    writeln!(
        conf,
        "# Written by `offload-kit dropins`: the offload tools in this directory\n\
         # run as LLVM {release}'s. --llvm-version on a command line still wins.\n\
         llvm-version = {release}"
    )
    .map_err(|e| one(e.to_string()))?;
    conf.commit().map_err(|e| vec![e])?;
    // A name an earlier run wrote for another release goes.
    for stale in Release::MODELLED
        .iter()
        .flat_map(|r| r.offload_tools())
        .filter(|s| !tools.iter().any(|t| t.modelled && t.name == s.name))
    {
        let at = dir.join(stale.name);
        if runs_offload_kit(&at, &exe) {
            std::fs::remove_file(&at).map_err(|e| one(format!("'{}': {e}", at.display())))?;
        }
    }
    for t in tools {
        if !t.modelled {
            outln!(
                "skipped {}: LLVM {release}'s is not modelled (clang runs its own)",
                t.name
            );
            continue;
        }
        let at = dir.join(t.name);
        link_replacing(&exe, &at).map_err(|e| one(format!("'{}': {e}", at.display())))?;
        outln!("{} -> {} (LLVM {release})", at.display(), exe.display());
    }
    outln!(
        "clang-{} -B {} runs these in place of its own",
        release.major(),
        dir.display()
    );
    Ok(0)
}

/// Whether `path` is (a link to) the executable `exe`: the same file, by
/// device and inode, so hard links count too.
pub(crate) fn runs_offload_kit(path: &Path, exe: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(path), std::fs::metadata(exe)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// A symbolic link to `target` at `at`, made under a temporary name and
/// renamed over whatever `at` was (a link there is replaced, not followed).
fn link_replacing(target: &Path, at: &Path) -> std::io::Result<()> {
    let dir = at.parent().unwrap_or(Path::new("."));
    for n in 0..1000u32 {
        let tmp = dir.join(format!(".offload-kit-{}-{n}.link", std::process::id()));
        match std::os::unix::fs::symlink(target, &tmp) {
            Ok(()) => {
                return std::fs::rename(&tmp, at).inspect_err(|_| {
                    let _ = std::fs::remove_file(&tmp);
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no temporary name left"))
}

/// The release a drop-in started as `prog` (argv[0]) under the tool name
/// `name` runs as by default: what [`CONF`] beside it says, else 22. A
/// malformed [`CONF`] is an error naming it.
pub(crate) fn default_release(prog: &str, name: &str) -> Result<Release, String> {
    let Some(dir) = started_from(prog, name) else {
        return Ok(Release::DEFAULT);
    };
    let conf = dir.join(CONF);
    let text = match read_conf(&conf) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(Release::DEFAULT),
        Err(e) => return Err(format!("'{}': {e}", conf.display())),
    };
    parse_conf(&text).map_err(|e| format!("'{}': {e}", conf.display()))
}

/// The directory the program was started from: `argv[0]`'s when it names
/// a path, else the first `PATH` entry holding `name`.
fn started_from(prog: &str, name: &str) -> Option<PathBuf> {
    if prog.contains('/') {
        let parent = Path::new(prog).parent()?;
        return Some(if parent.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            parent.to_path_buf()
        });
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find(|d| d.join(name).is_file())
}

/// [`CONF`]'s text, `None` when there is none; a regular file of at most
/// 4 KiB ([`offload_kit_io::input::read_regular_text`]).
fn read_conf(conf: &Path) -> Result<Option<String>, String> {
    use offload_kit_io::input::{read_regular_text, OpenError};
    match read_regular_text(conf, 4096) {
        Ok(text) => Ok(Some(text)),
        Err(OpenError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// The release `llvm-version = N` names; blank lines and `#` comments
/// aside, nothing else is allowed.
fn parse_conf(text: &str) -> Result<Release, String> {
    let mut release = None;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
            Some(("llvm-version", v)) => {
                release = Some(
                    v.parse::<Release>()
                        .map_err(|e| format!("line {}: {e}", n + 1))?,
                )
            }
            _ => {
                return Err(format!(
                    "line {}: expected 'llvm-version = N', not {line:?}",
                    n + 1
                ))
            }
        }
    }
    release.ok_or_else(|| "no 'llvm-version = N' line".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conf_names_one_release() {
        assert_eq!(parse_conf("# c\n\nllvm-version = 19\n"), Ok(Release::L19));
        assert_eq!(parse_conf("llvm-version=main"), Ok(Release::Main));
        assert!(parse_conf("llvm-version = 18").is_err());
        assert!(parse_conf("release = 19").is_err());
        assert!(parse_conf("").is_err());
    }
}
