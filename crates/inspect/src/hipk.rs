//! HIPK hosts (spec/kpack.md HIPK-2): the code object ROCm's runtime finds
//! for a GPU, through the host's search paths or those given. The CLI's
//! `check --gpu`, `extract --gpu` and `inspect`, Python's `check` and
//! `inspect_file`, and the conformance oracle all ask this module; each
//! opens files its own way (a memory map), given as an [`Open`].

use crate::budget::Budget;
use offload_kit_format::kpack::{self, compatible_targets, lookup_key, HostRef};
use offload_kit_format::Error;
use std::path::{Path, PathBuf};

/// The bytes of a file the lookup opened (an archive), held while it is
/// read.
pub type Bytes = Box<dyn AsRef<[u8]>>;

/// How the lookup opens a file: the front end's input (the CLI and Python
/// map files, each with its own guard).
pub type Open<'a> = &'a dyn Fn(&Path) -> Result<Bytes, Error>;

/// What the runtime ends with for one GPU.
pub enum Outcome {
    /// The code object, from `archive`, filed under `key` for `arch`.
    Found {
        /// The archive it was found in.
        archive: PathBuf,
        /// Its key in the archive (`<kernel_name>#<index>`).
        key: String,
        /// The architecture it is filed under.
        arch: String,
        /// The code object, decoded and checked.
        code: Vec<u8>,
    },
    /// Every wrapper's code object (a host of several): how many, for
    /// which architectures, in which archives, bytes in all.
    FoundEach {
        /// How many wrappers (each found).
        count: usize,
        /// The architectures they were found for.
        archs: Vec<String>,
        /// The archives they were found in.
        archives: Vec<PathBuf>,
        /// Their bytes in all.
        bytes: u64,
    },
    /// `KPACK_ERROR_ARCHIVE_NOT_FOUND`: none of `tried` is an archive.
    ArchiveNotFound {
        /// The paths tried, in order.
        tried: Vec<PathBuf>,
        /// The host's own paths left unread, outside its tree.
        outside: Vec<PathBuf>,
    },
    /// `KPACK_ERROR_ARCH_NOT_FOUND`: no archive lists a compatible target.
    ArchNotFound {
        /// The archives read.
        archives: Vec<PathBuf>,
    },
    /// `KPACK_ERROR_KERNEL_NOT_FOUND`: the first archive with a compatible
    /// target has no `key` for it.
    KernelNotFound {
        /// That archive.
        archive: PathBuf,
        /// The key looked for.
        key: String,
        /// The compatible target it lists.
        arch: String,
    },
}

impl Outcome {
    /// The runtime's error name, if the code object was not found.
    pub fn error(&self) -> Option<&'static str> {
        match self {
            Outcome::Found { .. } | Outcome::FoundEach { .. } => None,
            Outcome::ArchiveNotFound { .. } => Some("ARCHIVE_NOT_FOUND"),
            Outcome::ArchNotFound { .. } => Some("ARCH_NOT_FOUND"),
            Outcome::KernelNotFound { .. } => Some("KERNEL_NOT_FOUND"),
        }
    }

    /// One line on the outcome.
    pub fn describe(&self) -> String {
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
pub fn override_paths(option: Option<&str>) -> Option<Vec<PathBuf>> {
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
pub type EachFiled<'f> = dyn FnMut(&Path, u64, &str, &str, &[u8]) -> Result<(), Vec<Error>> + 'f;

/// The tree a host's own search paths may reach (spec/kpack.md HIPK-2,
/// *Where archives are read*): the directory above the host's, where
/// ROCm's layout keeps `lib/` and `.kpack/` side by side. Canonical, so
/// `..` and links are judged by where they lead.
pub fn host_tree(host: &Path) -> Option<PathBuf> {
    let host = std::fs::canonicalize(host).ok()?;
    let dir = host.parent()?;
    Some(dir.parent().unwrap_or(dir).to_path_buf())
}

/// Whether `path` (which need not exist) lies inside `tree` once its
/// links and `..` are resolved: its nearest existing ancestor resolved,
/// the rest appended as written (a `..` in the rest, which no link can
/// explain, is outside). A path in a directory that does not exist is
/// inside, so it is reported as missing, not as out of the tree.
pub fn inside(tree: Option<&Path>, path: &Path) -> bool {
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
pub fn archives(host: &Path, r: &HostRef, given: Option<&[PathBuf]>) -> Vec<PathBuf> {
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
pub fn for_each_filed(
    archives: &[PathBuf],
    r: &HostRef,
    indices: &[u64],
    (open, budget): (Open<'_>, Budget),
    each: &mut EachFiled<'_>,
) -> Result<(), Vec<Error>> {
    walk_filed(
        archives,
        (r, indices),
        open,
        &mut |path, data, a, k, index, key| {
            let code = a
                .code_object(data, k, budget.bytes())
                .map_err(|e| vec![e])?;
            each(path, index, key, &k.arch, &code)
        },
    )
}

/// A code object a split host's archives file under one of its keys:
/// where it is, not its bytes.
#[derive(Debug, Clone)]
pub struct Filed {
    /// The archive holding it, as found.
    pub archive: PathBuf,
    /// The wrapper index whose key names it.
    pub index: u64,
    /// Its record in the archive's table (`name` is the key).
    pub kernel: kpack::Kernel,
    /// Where its stored blob is in the archive: offset and size.
    pub blob: (u64, u64),
}

/// Every code object the host's keys name in `archives`, as
/// [`for_each_filed`] finds them, listed and not decoded ([`Filed`]).
pub fn filed(
    archives: &[PathBuf],
    r: &HostRef,
    indices: &[u64],
    open: Open<'_>,
) -> Result<Vec<Filed>, Vec<Error>> {
    let mut out = Vec::new();
    walk_filed(
        archives,
        (r, indices),
        open,
        &mut |path, _, a, k, index, _| {
            out.push(Filed {
                archive: path.to_path_buf(),
                index,
                kernel: k.clone(),
                blob: a.blob(k),
            });
            Ok(())
        },
    )?;
    Ok(out)
}

/// What [`walk_filed`] calls per code object: archive path, its bytes and
/// table, the kernel, the wrapper index, the key.
type EachKernel<'f> = dyn FnMut(&Path, &[u8], &kpack::Archive, &kpack::Kernel, u64, &str) -> Result<(), Vec<Error>>
    + 'f;

/// Open and parse each archive, and call `each` for every kernel filed
/// under one of the host's keys.
fn walk_filed(
    archives: &[PathBuf],
    (r, indices): (&HostRef, &[u64]),
    open: Open<'_>,
    each: &mut EachKernel<'_>,
) -> Result<(), Vec<Error>> {
    let keys: Vec<(String, u64)> = indices
        .iter()
        .map(|&i| (lookup_key(&r.kernel_name, i), i))
        .collect();
    for path in archives {
        let input = open(path).map_err(|e| vec![e])?;
        let data = (*input).as_ref();
        let a = kpack::parse(data).map_err(|e| vec![e])?;
        for k in &a.kernels {
            if let Some((key, index)) = keys.iter().find(|(key, _)| *key == k.name) {
                each(path, data, &a, k, *index, key)?;
            }
        }
    }
    Ok(())
}

/// The archives the runtime opens for one ISA, each opened and indexed
/// once: every wrapper of a host is then a table lookup, not another pass
/// over every search path and archive (6,000 wrappers × 6,000 paths once
/// took minutes).
pub struct Finder {
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
    /// How much a decoded code object may take (CLI-6).
    budget: Budget,
}

struct Opened {
    path: PathBuf,
    input: Bytes,
    archive: kpack::Archive,
    by_key: std::collections::HashMap<(String, String), usize>,
}

/// Where a wrapper's code object is: archive and kernel, or the runtime's
/// error.
pub enum Located {
    /// In the opened archive at this index, at this kernel of its table.
    At(usize, usize),
    /// Not found: what the runtime says.
    Missing(Outcome),
}

impl Finder {
    /// Open what the runtime opens for the host at `host` (reference `r`)
    /// on a GPU of ISA `isa`: `given`, else `ROCM_KPACK_PATH_PREFIX` and
    /// the host's search paths for `isa`. Code objects are decoded within
    /// `budget`.
    pub fn new(
        host: &Path,
        r: &HostRef,
        isa: &str,
        given: Option<&[PathBuf]>,
        (open, budget): (Open<'_>, Budget),
    ) -> Finder {
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
        let mut opened = Vec::new();
        for p in &tried {
            let canonical = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            if !seen.insert(canonical) {
                continue;
            }
            let Ok(input) = open(p) else { continue };
            let Ok(archive) = kpack::parse((*input).as_ref()) else {
                continue;
            };
            let by_key = (archive.kernels.iter().enumerate())
                .map(|(i, k)| ((k.name.clone(), k.arch.clone()), i))
                .collect();
            opened.push(Opened {
                path: p.clone(),
                input,
                archive,
                by_key,
            });
        }
        let targets = compatible_targets(isa)
            .into_iter()
            .map(|t| {
                let at = opened
                    .iter()
                    .position(|o| o.archive.gfx_arches.contains(&t));
                (t, at)
            })
            .collect();
        Finder {
            tried,
            outside,
            open: opened,
            targets,
            budget,
        }
    }

    /// Where the code object of wrapper `index` is, without decoding it.
    pub fn locate(&self, r: &HostRef, index: u64) -> Located {
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
    pub fn code(&self, at: usize, k: usize) -> Result<std::borrow::Cow<'_, [u8]>, Vec<Error>> {
        let o = &self.open[at];
        let kernel = &o.archive.kernels[k];
        o.archive
            .code_object((*o.input).as_ref(), kernel, self.budget.bytes())
            .map_err(|e| vec![e])
    }

    /// What the runtime finds for wrapper `index` (HIPK-2).
    pub fn find(&self, r: &HostRef, index: u64) -> Result<Outcome, Vec<Error>> {
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

/// A HIPK host to look its code objects up for: where it is, its
/// reference and wrappers, the archives given in place of its own search
/// paths (`None`: its own), and how files are opened.
pub struct Host<'a> {
    /// The host's path (its search paths are relative to its directory).
    pub path: &'a Path,
    /// Its kpack reference.
    pub reference: &'a HostRef,
    /// The code-object index of each of its wrappers.
    pub indices: &'a [u64],
    /// Archives given in place of the host's (`--kpack-path`,
    /// `ROCM_KPACK_PATH`: [`override_paths`]).
    pub given: Option<&'a [PathBuf]>,
    /// How files are opened.
    pub open: Open<'a>,
    /// How much a decoded code object may take (CLI-6).
    pub budget: Budget,
}

impl Host<'_> {
    /// What the runtime finds for every wrapper on a GPU of ISA `isa`.
    pub fn find_all(&self, isa: &str) -> Result<Outcome, Vec<Error>> {
        find_all(
            self.path,
            self.reference,
            self.indices,
            isa,
            self.given,
            (self.open, self.budget),
        )
    }

    /// What the runtime finds in each mode `gpu` may run in
    /// ([`crate::check::Gpu::modes`]: the agent's ISA always sets every
    /// feature, so a name that leaves one out stands for each): per mode,
    /// its settings and what was found.
    pub fn find_modes(
        &self,
        gpu: &crate::check::Gpu,
    ) -> Result<Vec<(String, Outcome)>, Vec<Error>> {
        gpu.modes()
            .iter()
            .map(|m| Ok((m.text.clone(), self.find_all(&m.text)?)))
            .collect()
    }
}

/// What the runtime finds for every wrapper of a host (`indices`): the
/// first wrapper's failure, else what was found for each. Each distinct
/// code object is decoded (checked) once, however many wrappers share it.
fn find_all(
    host: &Path,
    r: &HostRef,
    indices: &[u64],
    isa: &str,
    given: Option<&[PathBuf]>,
    opening: (Open<'_>, Budget),
) -> Result<Outcome, Vec<Error>> {
    let finder = Finder::new(host, r, isa, given, opening);
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

/// The first few of `items`, comma-separated, and how many more there
/// are: a host naming thousands of search paths gets a line, not a page
/// per GPU (it once printed 667 KB lines).
pub fn few(items: impl Iterator<Item = String>) -> String {
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

/// One GPU's verdict on a HIPK host (`check --gpu`, Python's `check`):
/// whether every wrapper finds its code object in some mode the GPU may
/// run in, and what was found, or the runtime's error.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HostVerdict {
    /// The GPU as given.
    pub gpu: String,
    /// Whether it runs (in some mode of the GPU).
    pub runs: bool,
    /// What was found, when it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    /// The runtime's error, when it does not (`ARCHIVE_NOT_FOUND`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'static str>,
    /// Why not, when it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The modes it runs in, when not in every mode of the GPU (a name
    /// without feature settings stands for each).
    #[serde(skip)]
    pub only_in: Vec<String>,
}

impl Host<'_> {
    /// One GPU's verdict: whether every wrapper finds its code object in
    /// some mode of `gpu`, and what, or the runtime's error.
    pub fn check(&self, gpu: &crate::check::Gpu) -> Result<HostVerdict, Vec<Error>> {
        let modes = self.find_modes(gpu)?;
        let runs: Vec<&(String, Outcome)> =
            modes.iter().filter(|(_, o)| o.error().is_none()).collect();
        Ok(match runs.first() {
            Some((_, found)) => HostVerdict {
                gpu: gpu.text.clone(),
                runs: true,
                found: Some(found.describe()),
                error: None,
                why: None,
                only_in: match runs.len() == modes.len() {
                    true => Vec::new(),
                    false => runs.iter().map(|(m, _)| m.clone()).collect(),
                },
            },
            None => {
                let found = &modes[0].1;
                HostVerdict {
                    gpu: gpu.text.clone(),
                    runs: false,
                    found: None,
                    error: Some(found.error().unwrap_or("NOT_FOUND")),
                    why: Some(found.describe()),
                    only_in: Vec::new(),
                }
            }
        })
    }
}

/// One code object a host's archives file under its keys (`inspect` of a
/// split host).
#[derive(Debug, Clone, serde::Serialize)]
pub struct FiledCode {
    /// Its key, `<kernel_name>#<index>`.
    pub key: String,
    /// The architecture it is filed under.
    pub arch: String,
    /// Its size in bytes.
    pub size: usize,
    /// What it is.
    pub code_object: crate::code_object::CodeObject,
    /// The archive holding it.
    pub archive: String,
}

/// Where a HIPK host's device code went: its reference, its wrappers, the
/// archives its search paths (or those given) name, and every code object
/// they file under its keys, every architecture (the CLI's `inspect
/// --json` under `kpack_host`, Python's `inspect_file`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct HostReport {
    /// The reference's kernel name (the keys' stem).
    pub kernel_name: String,
    /// The reference's search paths, as written.
    pub search_paths: Vec<String>,
    /// The code-object index of each wrapper.
    pub wrappers: Vec<u64>,
    /// The archives found.
    pub archives: Vec<String>,
    /// The code objects they file under the host's keys.
    pub code_objects: Vec<FiledCode>,
    /// What could not be read (an archive that does not parse, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<Error>,
}

impl Host<'_> {
    /// What the host's archives hold for it ([`HostReport`]).
    pub fn report(&self) -> HostReport {
        let found = archives(self.path, self.reference, self.given);
        let mut code_objects = Vec::new();
        let res = for_each_filed(
            &found,
            self.reference,
            self.indices,
            (self.open, self.budget),
            &mut |archive, _, key, arch, code| {
                code_objects.push(FiledCode {
                    key: key.to_string(),
                    arch: arch.to_string(),
                    size: code.len(),
                    code_object: crate::code_object::identify(code),
                    archive: archive.to_string_lossy().into_owned(),
                });
                Ok(())
            },
        );
        HostReport {
            kernel_name: self.reference.kernel_name.clone(),
            search_paths: self.reference.search_paths.clone(),
            wrappers: self.indices.to_vec(),
            archives: found
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            code_objects,
            errors: res.err().unwrap_or_default(),
        }
    }
}
