//! HIPK hosts (spec/kpack.md HIPK-2): the code object ROCm's runtime finds
//! for a GPU, through the host's search paths or those given, for
//! `check --gpu` and `extract --gpu`.

use super::Input;
use offload_kit_format::host::elf::Elf;
use offload_kit_format::kpack::{self, compatible_targets, lookup_key, HostRef};
use offload_kit_format::{rules, Error};
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
    /// `KPACK_ERROR_ARCHIVE_NOT_FOUND`: none of `tried` is an archive.
    ArchiveNotFound { tried: Vec<PathBuf> },
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
            Outcome::Found { .. } => None,
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
        match self {
            Outcome::Found { archive, key, arch, code } => format!(
                "code object '{key}' for {arch} ({} bytes) in {}",
                code.len(),
                show(archive)
            ),
            Outcome::ArchiveNotFound { tried } => format!(
                "ARCHIVE_NOT_FOUND: no archive at {}",
                tried.iter().map(|p| show(p)).collect::<Vec<_>>().join(", ")
            ),
            Outcome::ArchNotFound { archives } => format!(
                "ARCH_NOT_FOUND: no compatible architecture in {}",
                archives.iter().map(|p| show(p)).collect::<Vec<_>>().join(", ")
            ),
            Outcome::KernelNotFound { archive, key, arch } => format!(
                "KERNEL_NOT_FOUND: {} lists {arch} but no kernel '{key}' (ROCm's runtime stops here)",
                show(archive)
            ),
        }
    }
}

/// The archive paths given in place of the host's: `--kpack-path`, else
/// `ROCM_KPACK_PATH`, each a `:`-separated list (`None`: the host's).
pub(super) fn override_paths(option: Option<&str>) -> Option<Vec<PathBuf>> {
    let list = option
        .map(str::to_string)
        .or_else(|| std::env::var("ROCM_KPACK_PATH").ok())
        .filter(|l| !l.is_empty())?;
    Some(split(&list))
}

fn split(list: &str) -> Vec<PathBuf> {
    list.split(':')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// The host's reference and code-object index, if `data` is a HIPK host.
pub(super) fn host_ref(data: &[u8]) -> Option<Result<(HostRef, u64), Vec<Error>>> {
    let elf = Elf::parse(data).ok()?;
    let r = offload_kit_llvm::bundle::fatbin::kpack_ref(&elf, data)?;
    let wrapper = elf
        .section_by_name(kpack::WRAPPER_SECTION)
        .and_then(|s| Some((s.data(data)?, s.offset)));
    Some(match (r, wrapper) {
        (Err(e), _) => Err(vec![e]),
        (Ok(r), Some((w, at))) => match kpack::wrapper_index(w) {
            Some(i) => Ok((r, i)),
            None => Err(vec![Error::at(
                rules::HIPK_1,
                at,
                format!(
                    "the {} wrapper of {} bytes has no code-object index",
                    kpack::WRAPPER_SECTION,
                    w.len()
                ),
            )]),
        },
        (Ok(_), None) => Err(vec![Error::at(rules::HIPK_1, 0, "no wrapper section")]),
    })
}

/// What ROCm's runtime finds for the HIPK host at `host` (its reference
/// `r` and index `index`) on a GPU of ISA `isa` (HIPK-2).
pub(super) fn find(
    host: &Path,
    r: &HostRef,
    index: u64,
    isa: &str,
    given: Option<&[PathBuf]>,
) -> Result<Outcome, Vec<Error>> {
    let paths: Vec<PathBuf> = match given {
        Some(g) => g.to_vec(),
        None => {
            let dir = host.parent().unwrap_or(Path::new(""));
            let mut v = std::env::var("ROCM_KPACK_PATH_PREFIX")
                .map(|l| split(&l))
                .unwrap_or_default();
            v.extend(r.archive_paths(isa).into_iter().map(|p| dir.join(p)));
            v
        }
    };
    // Open each once, in order; those that are no regular file or archive
    // are passed over, as the runtime does.
    let mut open: Vec<(PathBuf, Input, kpack::Archive)> = Vec::new();
    for p in &paths {
        let canonical = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        if open.iter().any(|(c, ..)| *c == canonical) || !p.is_file() {
            continue;
        }
        let Ok(input) = Input::open(p) else { continue };
        let Ok(a) = kpack::parse(input.bytes()) else {
            continue;
        };
        open.push((canonical, input, a));
    }
    if open.is_empty() {
        return Ok(Outcome::ArchiveNotFound { tried: paths });
    }
    let key = lookup_key(&r.kernel_name, index);
    for target in compatible_targets(isa) {
        let Some((path, input, a)) = open.iter().find(|(_, _, a)| a.gfx_arches.contains(&target))
        else {
            continue;
        };
        let Some(k) = a.kernels.iter().find(|k| k.name == key && k.arch == target) else {
            return Ok(Outcome::KernelNotFound {
                archive: path.clone(),
                key,
                arch: target,
            });
        };
        let code = a
            .code_object(input.bytes(), k, offload_kit_llvm::budget::get())
            .map_err(|e| vec![e])?
            .into_owned();
        return Ok(Outcome::Found {
            archive: path.clone(),
            key,
            arch: target,
            code,
        });
    }
    Ok(Outcome::ArchNotFound {
        archives: open.into_iter().map(|(p, ..)| p).collect(),
    })
}

/// `extract --gpu` of a HIPK host: the code object the runtime finds,
/// to `output` or into `dir` as `<arch>.hsaco`; the runtime's error when it
/// finds none.
pub(super) fn extract(
    host: &Path,
    r: &HostRef,
    index: u64,
    gpu: &str,
    given: Option<&[PathBuf]>,
    output: Option<PathBuf>,
    dir: Option<PathBuf>,
) -> Result<i32, Vec<Error>> {
    let found = find(host, r, index, gpu, given)?;
    let Outcome::Found { arch, code, .. } = &found else {
        return Err(vec![Error::at(
            rules::HIPK_2,
            0,
            format!("no code object for {gpu}: {}", found.describe()),
        )]);
    };
    let path = match (output, dir) {
        (Some(o), None) => o,
        (_, Some(d)) => {
            super::create_out_dir(&d)?;
            let name = format!("{}.hsaco", arch.replace([':', '/'], "_"));
            offload_kit_io::output::contained_path(&d, &name).map_err(|e| vec![e])?
        }
        (None, None) => {
            return Err(vec![Error::other(
                "extract --gpu needs -o FILE or --dir DIR",
            )])
        }
    };
    offload_kit_io::output::write_file(&path, code).map_err(|e| vec![e])?;
    outln!("{}: {}", path.display(), found.describe());
    Ok(0)
}
