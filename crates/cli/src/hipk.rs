//! HIPK hosts (spec/kpack.md HIPK-2) on the command line: `extract --gpu`
//! and `extract --all` write what the library's lookup
//! (`offload_kit_inspect::hipk`) finds, through files the CLI maps.

use super::Input;
use offload_kit_format::kpack::HostRef;
use offload_kit_format::{rules, Error};
pub(super) use offload_kit_inspect::hipk::{
    archives, few, for_each_filed, override_paths, Finder, Located, Outcome,
};
/// The host's reference and the code-object index of each of its
/// wrappers (one per translation unit), if `data` is a HIPK host.
pub(super) use offload_kit_inspect::split_host::split_host as host_ref;
use offload_kit_io::output::{commit_all, OutputFile};
use std::path::{Path, PathBuf};

/// The CLI's way of opening a file for the lookup: mapped ([`Input`]).
pub(super) fn open(path: &Path) -> Result<offload_kit_inspect::hipk::Bytes, Error> {
    Ok(Box::new(Input::open(path)?))
}

/// The library's lookup for the host at `path`, files opened by the CLI.
pub(super) fn host<'a>(
    path: &'a Path,
    (reference, indices): &'a (HostRef, Vec<u64>),
    given: Option<&'a [PathBuf]>,
) -> offload_kit_inspect::hipk::Host<'a> {
    offload_kit_inspect::hipk::Host {
        path,
        reference,
        indices,
        given,
        open: &open,
    }
}

/// `extract --gpu` of a HIPK host: the code object the runtime finds for
/// each wrapper, to `output` (one wrapper) or into `dir` as `<arch>.hsaco`
/// (`<arch>.<index>.hsaco` for several); the runtime's error when it finds
/// none for some wrapper.
pub(super) fn extract(
    host: &Path,
    r: &HostRef,
    indices: &[u64],
    gpu: &str,
    given: Option<&[PathBuf]>,
    output: Option<PathBuf>,
    dir: Option<PathBuf>,
) -> Result<i32, Vec<Error>> {
    let parsed = offload_kit_inspect::check::Gpu::parse(gpu)
        .map_err(|e| vec![Error::other(format!("--gpu '{gpu}': {e}"))])?;
    // The first mode of the GPU in which every wrapper finds its code
    // object (a name without feature settings stands for each).
    let modes = parsed.modes();
    let isa = (modes.iter())
        .map(|m| m.text.as_str())
        .find(|m| {
            let finder = Finder::new(host, r, m, given, &open);
            (indices.iter()).all(|&i| matches!(finder.locate(r, i), Located::At(..)))
        })
        .unwrap_or(modes[0].text.as_str());
    let finder = Finder::new(host, r, isa, given, &open);
    // Taken back, if still empty, when the run fails.
    let _out_dir = match &dir {
        Some(d) => Some(super::create_out_dir(d)?),
        None => None,
    };
    let mut writes = Vec::new();
    for &index in indices {
        let found = finder.find(r, index)?;
        let Outcome::Found { arch, .. } = &found else {
            return Err(vec![Error::at(
                rules::HIPK_2,
                0,
                format!("no code object for {gpu}: {}", found.describe()),
            )]);
        };
        let path = match (&output, &dir) {
            (Some(o), None) if indices.len() == 1 => o.clone(),
            (_, Some(d)) => {
                let arch = arch.replace([':', '/'], "_");
                let name = match indices.len() {
                    1 => format!("{arch}.hsaco"),
                    _ => format!("{arch}.{index}.hsaco"),
                };
                offload_kit_io::output::contained_path(d, &name).map_err(|e| vec![e])?
            }
            (Some(_), None) => {
                return Err(vec![Error::other(format!(
                    "the host has {} wrappers, each with its code object: extract --gpu needs --dir DIR",
                    indices.len()
                ))])
            }
            (None, None) => {
                return Err(vec![Error::other(
                    "extract --gpu needs -o FILE or --dir DIR",
                )])
            }
        };
        writes.push((path, found));
    }
    let mut files = Vec::new();
    for (path, found) in &writes {
        let Outcome::Found { code, .. } = found else {
            continue;
        };
        let mut f = OutputFile::create_replacing(path).map_err(|e| vec![e])?;
        std::io::Write::write_all(&mut f, code).map_err(|e| vec![Error::from(e)])?;
        f.close().map_err(|e| vec![e])?;
        files.push(f);
    }
    commit_all(files).map_err(|e| vec![e])?;
    for (path, found) in &writes {
        outln!("{}: {}", path.display(), found.describe());
    }
    Ok(0)
}

/// `extract --all --dir DIR` of a HIPK host: every code object its keys
/// name in its archives (every architecture), as `<key>.<arch>.hsaco`.
pub(super) fn extract_all(
    host: &Path,
    r: &HostRef,
    indices: &[u64],
    given: Option<&[PathBuf]>,
    dir: &Path,
) -> Result<i32, Vec<Error>> {
    let found = archives(host, r, given);
    if found.is_empty() {
        return Err(vec![Error::at(
            rules::HIPK_2,
            0,
            format!(
                "ARCHIVE_NOT_FOUND: no archive matches {}",
                few((r.search_paths.iter())
                    .map(|p| offload_kit_format::escape::escape_controls(p).into_owned()))
            ),
        )]);
    }
    let _out_dir = super::create_out_dir(dir)?;
    let mut files: Vec<(PathBuf, OutputFile)> = Vec::new();
    for_each_filed(&found, r, indices, &open, &mut |_, _, key, arch, code| {
        // A name too long for a file system is cut and numbered.
        let name = super::extract::fit_name(
            &format!("{}.{arch}.hsaco", key.replace('/', "_")),
            files.len(),
        );
        let path = offload_kit_io::output::contained_path(dir, &name).map_err(|e| vec![e])?;
        if files.iter().any(|(p, _)| *p == path) {
            return Err(vec![Error::rule(
                rules::CLI_5,
                format!(
                    "two code objects would both be written to '{}'",
                    path.display()
                ),
            )]);
        }
        let mut f = OutputFile::create_replacing(&path).map_err(|e| vec![e])?;
        std::io::Write::write_all(&mut f, code).map_err(|e| vec![Error::from(e)])?;
        f.close().map_err(|e| vec![e])?;
        files.push((path, f));
        Ok(())
    })?;
    let n = files.len();
    commit_all(files.into_iter().map(|(_, f)| f).collect()).map_err(|e| vec![e])?;
    outln!(
        "offload-kit: wrote {n} file(s) into '{}' from {} archive(s)",
        dir.display(),
        found.len()
    );
    Ok(0)
}
