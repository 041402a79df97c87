//! HIPK hosts (spec/kpack.md HIPK-2): the code object ROCm's runtime finds
//! for a GPU, through the host's search paths or those given, for
//! `check --gpu` and `extract --gpu`.

use super::Input;
use offload_kit_format::kpack::{self, compatible_targets, lookup_key, HostRef};
use offload_kit_format::{rules, Error};
use offload_kit_io::output::{commit_all, OutputFile};
use std::path::{Path, PathBuf};

/// What the runtime ends with for one GPU.
pub(super) enum Outcome {
    /// The code object, from `archive`, filed under `key` for `arch`.
    Found {
        archive: PathBuf,
        key: String,
        arch: String,
        code: Vec<u8>,
    },
    /// Every wrapper's code object (a host of several): how many, for
    /// which architectures, in which archives, bytes in all.
    FoundEach {
        count: usize,
        archs: Vec<String>,
        archives: Vec<PathBuf>,
        bytes: u64,
    },
    /// `KPACK_ERROR_ARCHIVE_NOT_FOUND`: none of `tried` is an archive;
    /// `outside`: the host's paths left unread, outside its tree.
    ArchiveNotFound {
        tried: Vec<PathBuf>,
        outside: Vec<PathBuf>,
    },
    /// `KPACK_ERROR_ARCH_NOT_FOUND`: no archive lists a compatible target.
    ArchNotFound { archives: Vec<PathBuf> },
    /// `KPACK_ERROR_KERNEL_NOT_FOUND`: the first archive with a compatible
    /// target has no `key` for it.
    KernelNotFound {
        archive: PathBuf,
        key: String,
        arch: String,
    },
}

impl Outcome {
    /// The runtime's error name, if the code object was not found.
    pub(super) fn error(&self) -> Option<&'static str> {
        match self {
            Outcome::Found { .. } | Outcome::FoundEach { .. } => None,
            Outcome::ArchiveNotFound { .. } => Some("ARCHIVE_NOT_FOUND"),
            Outcome::ArchNotFound { .. } => Some("ARCH_NOT_FOUND"),
            Outcome::KernelNotFound { .. } => Some("KERNEL_NOT_FOUND"),
        }
    }

    /// One line on the outcome.
    pub(super) fn describe(&self) -> String {
        let show = |p: &Path| {
            offload_kit_format::escape::escape_controls(&p.to_string_lossy()).into_owned()
        };
        // Kernel names and architectures come from the host and archives.
        let text = |s: &str| offload_kit_format::escape::escape_controls(s).into_owned();
        match self {
            Outcome::Found {
                archive,
                key,
                arch,
                code,
            } => format!(
                "code object '{}' for {} ({} bytes) in {}",
                text(key),
                text(arch),
                code.len(),
                show(archive)
            ),
            Outcome::FoundEach {
                count,
                archs,
                archives,
                bytes,
            } => format!(
                "{count} code objects (one per wrapper) for {} ({bytes} bytes) in {}",
                text(&archs.join(", ")),
                few(archives.iter().map(|p| show(p)))
            ),
            Outcome::ArchiveNotFound { tried, outside } => {
                let mut line = format!(
                    "ARCHIVE_NOT_FOUND: no archive at {}",
                    few(tried.iter().map(|p| show(p)))
                );
                if !outside.is_empty() {
                    line += &format!(
                        "; not read, outside the host's tree: {} (ROCm's runtime would read them; name them with --kpack-path)",
                        few(outside.iter().map(|p| show(p)))
                    );
                }
                line
            }
            Outcome::ArchNotFound { archives } => format!(
                "ARCH_NOT_FOUND: no compatible architecture in {}",
                few(archives.iter().map(|p| show(p)))
            ),
            Outcome::KernelNotFound { archive, key, arch } => format!(
                "KERNEL_NOT_FOUND: {} lists {} but no kernel '{}' (ROCm's runtime stops here)",
                show(archive),
                text(arch),
                text(key)
            ),
        }
    }
}

/// The archive paths given in place of the host's: `--kpack-path` (an
/// empty one names no archive at all), else a non-empty
/// `ROCM_KPACK_PATH`, each a `:`-separated list (`None`: the host's).
pub(super) fn override_paths(option: Option<&str>) -> Option<Vec<PathBuf>> {
    if let Some(list) = option {
        return Some(split(list));
    }
    let list = std::env::var("ROCM_KPACK_PATH")
        .ok()
        .filter(|l| !l.is_empty())?;
    Some(split(&list))
}

fn split(list: &str) -> Vec<PathBuf> {
    list.split(':')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// What [`for_each_filed`] calls per code object: archive, index, key,
/// architecture, code object.
pub(super) type EachFiled<'f> =
    dyn FnMut(&Path, u64, &str, &str, &[u8]) -> Result<(), Vec<Error>> + 'f;

/// The host's reference and the code-object index of each of its
/// wrappers (one per translation unit), if `data` is a HIPK host: the
/// library's, which Python asks too.
pub(super) use offload_kit_inspect::split_host::split_host as host_ref;

/// The tree a host's own search paths may reach (spec/kpack.md HIPK-2,
/// *Where archives are read*): the directory above the host's, where
/// ROCm's layout keeps `lib/` and `.kpack/` side by side. Canonical, so
/// `..` and links are judged by where they lead.
pub(super) fn host_tree(host: &Path) -> Option<PathBuf> {
    let host = std::fs::canonicalize(host).ok()?;
    let dir = host.parent()?;
    Some(dir.parent().unwrap_or(dir).to_path_buf())
}

/// Whether `path` (which need not exist) lies inside `tree` once its
/// links and `..` are resolved: its nearest existing ancestor resolved,
/// the rest appended as written (a `..` in the rest, which no link can
/// explain, is outside). A path in a directory that does not exist is
/// inside, so it is reported as missing, not as out of the tree.
pub(super) fn inside(tree: Option<&Path>, path: &Path) -> bool {
    let Some(tree) = tree else { return false };
    let mut base = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    let mut rest = Vec::new();
    let resolved = loop {
        match std::fs::canonicalize(base) {
            Ok(p) => break p,
            Err(_) => {
                let Some(name) = base.file_name() else {
                    return false;
                };
                rest.push(name.to_os_string());
                base = match base.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
            }
        }
    };
    // `file_name` is None for `..`: such a path stopped the walk above.
    let full = rest.iter().rev().fold(resolved, |p, n| p.join(n));
    full.starts_with(tree)
}

/// Every archive the host's search paths can name, `@GFXARCH@` standing
/// for any text (`given`, when set, in their place): the split's archives
/// for every architecture, sorted.
pub(super) fn archives(host: &Path, r: &HostRef, given: Option<&[PathBuf]>) -> Vec<PathBuf> {
    if let Some(g) = given {
        return g.iter().filter(|p| p.is_file()).cloned().collect();
    }
    let dir = host.parent().unwrap_or(Path::new(""));
    let tree = host_tree(host);
    let here = |p: &Path| {
        if p.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            p.to_path_buf()
        }
    };
    let mut out = Vec::new();
    for sp in &r.search_paths {
        let full = dir.join(sp);
        let name = full.file_name().map(|n| n.to_string_lossy().into_owned());
        match name.as_deref().and_then(|n| n.split_once(kpack::GFXARCH)) {
            Some((pre, post)) => {
                let parent = here(full.parent().unwrap_or(Path::new("")));
                // A host's search path lists no directory outside its tree.
                if !inside(tree.as_deref(), &parent) {
                    continue;
                }
                let Ok(entries) = std::fs::read_dir(&parent) else {
                    continue;
                };
                for e in entries.flatten() {
                    let n = e.file_name().to_string_lossy().into_owned();
                    if n.len() > pre.len() + post.len() && n.starts_with(pre) && n.ends_with(post) {
                        out.push(full.with_file_name(&n));
                    }
                }
            }
            None if full.is_file() && inside(tree.as_deref(), &full) => out.push(full),
            None => {}
        }
    }
    out.retain(|p| p.is_file() && inside(tree.as_deref(), p));
    out.sort();
    out.dedup();
    out
}

/// Calls `each(archive, index, key, arch, code object)` for every code
/// object the host's keys (`<kernel_name>#<index>` for each index) name
/// in `archives`, in archive and table order; archives that do not parse
/// are errors.
pub(super) fn for_each_filed(
    archives: &[PathBuf],
    r: &HostRef,
    indices: &[u64],
    each: &mut EachFiled<'_>,
) -> Result<(), Vec<Error>> {
    let keys: Vec<(String, u64)> = indices
        .iter()
        .map(|&i| (lookup_key(&r.kernel_name, i), i))
        .collect();
    for path in archives {
        let input = Input::open(path).map_err(|e| vec![e])?;
        let data = input.bytes();
        let a = kpack::parse(data).map_err(|e| vec![e])?;
        for k in &a.kernels {
            let Some((key, index)) = keys.iter().find(|(key, _)| *key == k.name) else {
                continue;
            };
            let code = a
                .code_object(data, k, offload_kit_llvm::budget::get())
                .map_err(|e| vec![e])?;
            each(path, *index, key, &k.arch, &code)?;
        }
    }
    Ok(())
}

/// The archives the runtime opens for one ISA, each opened and indexed
/// once: every wrapper of a host is then a table lookup, not another pass
/// over every search path and archive (6,000 wrappers × 6,000 paths once
/// took minutes).
pub(super) struct Finder {
    /// The paths tried, in order.
    tried: Vec<PathBuf>,
    /// The host's own paths not read: outside its tree.
    outside: Vec<PathBuf>,
    /// Each archive opened: its path, bytes, table, and (name, arch) →
    /// kernel.
    open: Vec<Opened>,
    /// The first archive listing each compatible target, in the runtime's
    /// order of targets (HIPK-2).
    targets: Vec<(String, Option<usize>)>,
}

struct Opened {
    path: PathBuf,
    input: Input,
    archive: kpack::Archive,
    by_key: std::collections::HashMap<(String, String), usize>,
}

/// Where a wrapper's code object is: archive and kernel, or the runtime's
/// error.
enum Located {
    At(usize, usize),
    Missing(Outcome),
}

impl Finder {
    /// Open what the runtime opens for the host at `host` (reference `r`)
    /// on a GPU of ISA `isa`: `given`, else `ROCM_KPACK_PATH_PREFIX` and
    /// the host's search paths for `isa`.
    pub(super) fn new(host: &Path, r: &HostRef, isa: &str, given: Option<&[PathBuf]>) -> Finder {
        // Paths the user or the environment names are read; the host's
        // own only inside its tree (spec/kpack.md HIPK-2).
        let mut outside = Vec::new();
        let tried: Vec<PathBuf> = match given {
            Some(g) => g.to_vec(),
            None => {
                let dir = host.parent().unwrap_or(Path::new(""));
                let tree = host_tree(host);
                let mut v = std::env::var("ROCM_KPACK_PATH_PREFIX")
                    .map(|l| split(&l))
                    .unwrap_or_default();
                for p in r.archive_paths(isa).into_iter().map(|p| dir.join(p)) {
                    if inside(tree.as_deref(), &p) {
                        v.push(p);
                    } else {
                        outside.push(p);
                    }
                }
                v
            }
        };
        // Open each once, in order; those that are no regular file or
        // archive are passed over, as the runtime does.
        let mut seen = std::collections::HashSet::new();
        let mut open = Vec::new();
        for p in &tried {
            let canonical = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            if !seen.insert(canonical) {
                continue;
            }
            let Ok(input) = Input::open(p) else { continue };
            let Ok(archive) = kpack::parse(input.bytes()) else {
                continue;
            };
            let by_key = (archive.kernels.iter().enumerate())
                .map(|(i, k)| ((k.name.clone(), k.arch.clone()), i))
                .collect();
            open.push(Opened {
                path: p.clone(),
                input,
                archive,
                by_key,
            });
        }
        let targets = compatible_targets(isa)
            .into_iter()
            .map(|t| {
                let at = open.iter().position(|o| o.archive.gfx_arches.contains(&t));
                (t, at)
            })
            .collect();
        Finder {
            tried,
            outside,
            open,
            targets,
        }
    }

    /// Where the code object of wrapper `index` is, without decoding it.
    fn locate(&self, r: &HostRef, index: u64) -> Located {
        if self.open.is_empty() {
            return Located::Missing(Outcome::ArchiveNotFound {
                tried: self.tried.clone(),
                outside: self.outside.clone(),
            });
        }
        let key = lookup_key(&r.kernel_name, index);
        for (target, at) in &self.targets {
            let Some(at) = *at else { continue };
            let o = &self.open[at];
            return match o.by_key.get(&(key.clone(), target.clone())) {
                Some(&k) => Located::At(at, k),
                None => Located::Missing(Outcome::KernelNotFound {
                    archive: o.path.clone(),
                    key,
                    arch: target.clone(),
                }),
            };
        }
        Located::Missing(Outcome::ArchNotFound {
            archives: self.open.iter().map(|o| o.path.clone()).collect(),
        })
    }

    /// The code object at `(archive, kernel)`, decoded and checked.
    fn code(&self, at: usize, k: usize) -> Result<std::borrow::Cow<'_, [u8]>, Vec<Error>> {
        let o = &self.open[at];
        let kernel = &o.archive.kernels[k];
        o.archive
            .code_object(o.input.bytes(), kernel, offload_kit_llvm::budget::get())
            .map_err(|e| vec![e])
    }

    /// What the runtime finds for wrapper `index` (HIPK-2).
    pub(super) fn find(&self, r: &HostRef, index: u64) -> Result<Outcome, Vec<Error>> {
        match self.locate(r, index) {
            Located::Missing(o) => Ok(o),
            Located::At(at, k) => {
                let kernel = &self.open[at].archive.kernels[k];
                Ok(Outcome::Found {
                    archive: self.open[at].path.clone(),
                    key: kernel.name.clone(),
                    arch: kernel.arch.clone(),
                    code: self.code(at, k)?.into_owned(),
                })
            }
        }
    }
}

/// What the runtime finds for every wrapper of a host (`indices`): the
/// first wrapper's failure, else what was found for each. Each distinct
/// code object is decoded (checked) once, however many wrappers share it.
pub(super) fn find_all(
    host: &Path,
    r: &HostRef,
    indices: &[u64],
    isa: &str,
    given: Option<&[PathBuf]>,
) -> Result<Outcome, Vec<Error>> {
    let finder = Finder::new(host, r, isa, given);
    if let [index] = indices {
        return finder.find(r, *index);
    }
    let (mut archs, mut archives, mut bytes) = (Vec::new(), Vec::new(), 0u64);
    let mut checked: std::collections::HashMap<(usize, usize), u64> = Default::default();
    for &index in indices {
        match finder.locate(r, index) {
            Located::Missing(o) => return Ok(o),
            Located::At(at, k) => {
                let size = match checked.get(&(at, k)) {
                    Some(&n) => n,
                    None => {
                        let n = finder.code(at, k)?.len() as u64;
                        checked.insert((at, k), n);
                        n
                    }
                };
                bytes += size;
                let arch = &finder.open[at].archive.kernels[k].arch;
                if !archs.contains(arch) {
                    archs.push(arch.clone());
                }
                let archive = &finder.open[at].path;
                if !archives.contains(archive) {
                    archives.push(archive.clone());
                }
            }
        }
    }
    Ok(Outcome::FoundEach {
        count: indices.len(),
        archs,
        archives,
        bytes,
    })
}

/// What the runtime finds for a GPU whose name may leave feature settings
/// out (`gfx90a`): the agent's ISA always sets them, so each mode the GPU
/// may run in (`check::Gpu::modes`) is tried; per mode, its settings and
/// what was found.
pub(super) fn find_modes(
    host: &Path,
    r: &HostRef,
    indices: &[u64],
    gpu: &offload_kit_inspect::check::Gpu,
    given: Option<&[PathBuf]>,
) -> Result<Vec<(String, Outcome)>, Vec<Error>> {
    gpu.modes()
        .iter()
        .map(|m| Ok((m.text.clone(), find_all(host, r, indices, &m.text, given)?)))
        .collect()
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
            let finder = Finder::new(host, r, m, given);
            (indices.iter()).all(|&i| matches!(finder.locate(r, i), Located::At(..)))
        })
        .unwrap_or(modes[0].text.as_str());
    let finder = Finder::new(host, r, isa, given);
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
    for_each_filed(&found, r, indices, &mut |_, _, key, arch, code| {
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

/// The first few of `items`, comma-separated, and how many more there
/// are: a host naming thousands of search paths gets a line, not a page
/// per GPU (it once printed 667 KB lines).
pub(super) fn few(items: impl Iterator<Item = String>) -> String {
    const SHOWN: usize = 8;
    let mut shown = Vec::new();
    let mut more = 0usize;
    for item in items {
        if shown.len() < SHOWN {
            shown.push(item);
        } else {
            more += 1;
        }
    }
    match more {
        0 => shown.join(", "),
        n => format!("{}, and {n} more", shown.join(", ")),
    }
}
