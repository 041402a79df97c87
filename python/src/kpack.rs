//! kpack in Python: a split host's archives, mapped and guarded as inputs
//! are, for the library's lookup ([`follow`]), and a fat binary split into
//! archives and joined back ([`split_kpack`], [`join_kpack`]: the library's
//! `kpack_split`, as `offload-kit convert --to kpack` and `--to bundle`).

use super::{budget_of, load, py_err, py_errs, sigbus, usage};
use okit::budget::Budget;
use okit::inspect::{self, kpack_split};
use okit::Error;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// The kpack archives a split host's lookup opens, mapped and guarded as
/// inputs are ([`Data::Mapped`]): each mapping is let go as soon as the
/// lookup is done with it (a lookup maps an archive once per GPU mode,
/// and the guard has a fixed number of slots), and says on the way out
/// whether a page of it vanished; the answer is then refused
/// ([`Archives::intact`]).
#[derive(Default)]
struct Archives(std::rc::Rc<std::cell::Cell<bool>>);

/// One mapped archive; dropping it records a fault in [`Archives`].
struct SharedMap(sigbus::Guarded, std::rc::Rc<std::cell::Cell<bool>>);

impl AsRef<[u8]> for SharedMap {
    fn as_ref(&self) -> &[u8] {
        self.0.bytes()
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        if self.0.faulted() {
            self.1.set(true);
        }
    }
}

impl Archives {
    /// The lookup's way of opening a file (`okit::inspect::hipk::Open`).
    fn open(&self, path: &std::path::Path) -> Result<inspect::hipk::Bytes, Error> {
        let shown = path.display();
        let (file, len) =
            okit::input::open_regular(path).map_err(|e| Error::other(format!("'{shown}': {e}")))?;
        if len == 0 {
            return Ok(Box::new(Vec::new()));
        }
        let map = sigbus::Guarded::map(&file)
            .map_err(|e| Error::other(format!("'{shown}': cannot map: {e}")))?;
        Ok(Box::new(SharedMap(map, self.0.clone())))
    }

    /// `OSError` when an archive was cut short while it was read (every
    /// mapping has been let go by now).
    fn intact(&self) -> PyResult<()> {
        match self.0.get() {
            true => Err(pyo3::exceptions::PyOSError::new_err(
                "a kpack archive was cut short while it was read; the answer is withheld",
            )),
            false => Ok(()),
        }
    }
}

/// `f` of the split host's `path` and a way to open its archives, each
/// mapped and guarded; `OSError` when one was cut short meanwhile. A host
/// given as bytes (no `path`) cannot be followed: refused, saying why.
fn follow_path<T>(
    path: Option<&std::path::Path>,
    f: impl FnOnce(&std::path::Path, inspect::hipk::Open<'_>) -> T,
) -> PyResult<T> {
    let Some(path) = path else {
        return Err(usage(
            "a split host (HIPK) given as bytes: its kpack archives are found from its file's directory; pass its path",
        ));
    };
    let archives = Archives::default();
    let open = |p: &std::path::Path| archives.open(p);
    let out = f(path, &open);
    archives.intact()?;
    Ok(out)
}

/// `f` of the library's lookup for the split host at `path`, its archives
/// (`kpack_path`, else `ROCM_KPACK_PATH`, else its own search paths)
/// mapped and guarded ([`follow_path`]).
pub(crate) fn follow<T>(
    path: Option<&std::path::Path>,
    (reference, indices): &(okit::kpack::HostRef, Vec<u64>),
    (kpack_path, budget): (Option<&str>, Budget),
    f: impl FnOnce(&inspect::hipk::Host<'_>) -> T,
) -> PyResult<T> {
    follow_path(path, |path, open| {
        let given = inspect::hipk::override_paths(kpack_path);
        f(&inspect::hipk::Host {
            path,
            reference,
            indices,
            given: given.as_deref(),
            open,
            budget,
        })
    })
}

/// The files of a ROCm kpack split of `source` (a fat binary: a bundle, a
/// compressed bundle, an object or a HIP shared object), as `offload-kit
/// convert --to kpack` writes them: `{file name: bytes}`, one archive per
/// target ID (`<prefix>_<target ID>.kpack`, each code object under
/// `<kernel_name>#<index>`), and for a host the host rewritten to find them
/// (HIPK-3). `name` is the input's file name (a path's own by default,
/// else `a.out`): the default kernel name and, up to its first `.`, the
/// default prefix. Code objects are stored plain, or as zstd frames of
/// `level` (1-22). The files together hold at most `max_memory` bytes.
#[pyfunction]
#[pyo3(signature = (source, name=None, kernel_name=None, prefix=None, level=None, max_memory=None))]
pub(crate) fn split_kpack<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    name: Option<&str>,
    kernel_name: Option<&str>,
    prefix: Option<&str>,
    level: Option<i32>,
    max_memory: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let budget = budget_of(max_memory)?;
    let storage = match level {
        None => okit::kpack::Storage::Plain,
        Some(l @ 1..=22) => okit::kpack::Storage::Zstd(l),
        Some(l) => return Err(usage(format!("level {l}: zstd levels are 1-22"))),
    };
    let (data, path) = load(source)?;
    let own = path.as_deref().and_then(|p| p.file_name());
    let own = own.map(|n| n.to_string_lossy().into_owned());
    let opts = kpack_split::SplitOptions {
        name: name.or(own.as_deref()).unwrap_or("a.out"),
        kernel: kernel_name,
        prefix,
        storage,
        budget,
    };
    let files = kpack_split::split(data.bytes(), &opts).and_then(|s| s.files());
    data.intact()?;
    let out = PyDict::new(py);
    for (name, bytes) in files.map_err(|es| py_errs(&es))? {
        out.set_item(name, PyBytes::new(py, &bytes))?;
    }
    Ok(out)
}

/// A split made whole again, as `offload-kit convert --to bundle` writes
/// it: a kpack archive as one binary bundle of its code objects; a split
/// host (HIPK, given by its path) with a bundle per wrapper from the
/// archives its search paths name, or those of `kpack_path`
/// (`:`-separated; else `ROCM_KPACK_PATH`). At most `max_memory` bytes.
#[pyfunction]
#[pyo3(signature = (source, kpack_path=None, max_memory=None))]
pub(crate) fn join_kpack<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    kpack_path: Option<&str>,
    max_memory: Option<u64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let budget = budget_of(max_memory)?;
    let (data, path) = load(source)?;
    let Some(host) = inspect::split_host::split_host(data.bytes()) else {
        let joined = kpack_split::join_archive(data.bytes(), budget);
        data.intact()?;
        let (bundle, _) = joined.map_err(|es| py_errs(&es))?;
        return Ok(PyBytes::new(py, &bundle));
    };
    let (reference, _) = host.map_err(|es| py_errs(&es))?;
    let joined = follow_path(path.as_deref(), |path, open| {
        let given = inspect::hipk::override_paths(kpack_path);
        let plan = kpack_split::join_host(
            path,
            data.bytes(),
            &reference,
            given.as_deref(),
            (open, budget),
        )?;
        if budget.exceeded(plan.size()) {
            return Err(vec![Error::rule(
                okit::rules::CLI_6,
                format!("the host made whole is {} bytes, more than the memory budget of {} bytes (max_memory=)", plan.size(), budget.bytes()),
            )]);
        }
        let mut out = Vec::new();
        plan.write(&mut out)?;
        Ok(out)
    })?;
    data.intact()?;
    Ok(PyBytes::new(py, &joined.map_err(|es| py_errs(&es))?))
}

/// A code object in a kpack archive, as `Container` lists it: a kpack
/// archive's own (`archive` None), or one a split host's archives file
/// under its keys.
pub(crate) struct KpackEntry {
    /// Its record in the archive's table.
    kernel: okit::kpack::Kernel,
    /// Its stored blob in the archive: offset and size.
    blob: (u64, u64),
    /// The archive holding it, for a split host's.
    pub(crate) archive: Option<std::path::PathBuf>,
}

impl KpackEntry {
    /// Its `Entry` (numbered by the container).
    pub(crate) fn entry(&self) -> super::Entry {
        super::Entry {
            id: self.kernel.name.clone(),
            offset: self.blob.0,
            size: self.blob.1,
            bundle: 0,
            member: None,
            member_index: None,
            section: None,
            compressed_at: None,
            arch: Some(self.kernel.arch.clone()),
            archive: self.archive.as_ref().map(|p| p.display().to_string()),
            index: 0,
        }
    }

    /// Its code object, decoded within `budget`, from the container's own
    /// bytes or from its archive (mapped again, guarded, and let go).
    pub(crate) fn read(&self, own: &super::Data, budget: Budget) -> PyResult<Vec<u8>> {
        let Some(path) = &self.archive else {
            let code = self.decode(own.bytes(), budget);
            own.intact()?;
            return code;
        };
        let archives = Archives::default();
        let code = archives
            .open(path)
            .map_err(|e| py_err(&e))
            .and_then(|bytes| self.decode((*bytes).as_ref(), budget));
        archives.intact()?;
        code
    }

    fn decode(&self, data: &[u8], budget: Budget) -> PyResult<Vec<u8>> {
        let a = okit::kpack::parse(data).map_err(|e| py_err(&e))?;
        let k = (a.kernels.iter().find(|k| **k == self.kernel))
            .ok_or_else(|| usage("the kpack archive changed since it was opened"))?;
        let code = a.code_object(data, k, budget.bytes());
        Ok(code.map_err(|e| py_err(&e))?.into_owned())
    }
}

/// A kpack archive's code objects, as `offload-kit list` lists them.
pub(crate) fn archive_entries(data: &[u8]) -> Result<Vec<KpackEntry>, Error> {
    let a = okit::kpack::parse(data)?;
    Ok((a.kernels.iter())
        .map(|k| KpackEntry {
            kernel: k.clone(),
            blob: a.blob(k),
            archive: None,
        })
        .collect())
}

/// The code objects the archives of the split host at `path` file under
/// its keys (its search paths, or `kpack_path`, else `ROCM_KPACK_PATH`),
/// listed, not decoded, as `offload-kit list` lists them.
pub(crate) fn host_entries(
    path: Option<&std::path::Path>,
    (reference, indices): &(okit::kpack::HostRef, Vec<u64>),
    kpack_path: Option<&str>,
) -> PyResult<Vec<KpackEntry>> {
    let filed = follow_path(path, |path, open| {
        let given = inspect::hipk::override_paths(kpack_path);
        let found = inspect::hipk::archives(path, reference, given.as_deref());
        inspect::hipk::filed(&found, reference, indices, open)
    })?;
    let filed = filed.map_err(|es| py_errs(&es))?;
    Ok((filed.into_iter())
        .map(|f| KpackEntry {
            kernel: f.kernel,
            blob: f.blob,
            archive: Some(f.archive),
        })
        .collect())
}
