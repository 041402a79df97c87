//! `offload_kit` for Python: the offload-kit library (not its CLI) behind a
//! small, typed API (stubs in `offload_kit.pyi`).
//!
//! Every failure is an `offload_kit.OffloadKitError` carrying the spec
//! rule (`.rule`, e.g. `"BIN-5"`) and the absolute byte offset (`.offset`)
//! when the error has them; nothing panics across the boundary (a panic
//! would surface as pyo3's `PanicException`, and the tests feed hostile
//! bytes to every entry point).

use okit::budget::Budget;
use okit::bundle::ccob;
use okit::bundler::{bundle_in_memory, unbundle_in_memory, BundleOptions, UnbundleOptions};
use okit::detect::{self, ListedEntry, Listing};
use okit::inspect::{self, check as gpu_check};
use okit::{generate as gen, Error, Release};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::path::PathBuf;

mod kpack;
use kpack::follow;

create_exception!(
    offload_kit,
    OffloadKitError,
    PyException,
    "A container breaks a spec rule, or a request cannot be carried out; `.rule` and `.offset` say which rule and where (None when the error has no rule or position)."
);

/// `repr` of an optional value, Python style.
fn opt<T: std::fmt::Debug>(v: &Option<T>) -> String {
    v.as_ref().map_or("None".into(), |x| format!("{x:?}"))
}

/// The Python exception for a library error.
fn py_err(e: &Error) -> PyErr {
    let err = OffloadKitError::new_err(e.to_string());
    Python::with_gil(|py| {
        let v = err.value(py);
        let _ = v.setattr("rule", e.rule_id());
        let _ = v.setattr("offset", e.offset());
        let _ = v.setattr("message", e.message());
    });
    err
}

/// The first of several errors (all of them in `.errors`, as violations).
fn py_errs(es: &[Error]) -> PyErr {
    let Some(first) = es.first() else {
        return OffloadKitError::new_err("failed without a reason");
    };
    let err = py_err(first);
    Python::with_gil(|py| {
        let all: Vec<Violation> = es.iter().map(Violation::from).collect();
        let _ = err.value(py).setattr("errors", all);
    });
    err
}

fn usage(message: impl Into<String>) -> PyErr {
    py_err(&Error::other(message))
}

/// The bytes of an input: a mapped file, Python's own `bytes` or
/// `bytearray` contents (no copy), or a copy of another buffer.
enum Data {
    Mapped(sigbus::Guarded),
    Python(PyBackedBytes),
    Owned(Vec<u8>),
}

impl Data {
    fn bytes(&self) -> &[u8] {
        match self {
            Data::Mapped(m) => m.bytes(),
            Data::Python(b) => b,
            Data::Owned(v) => v,
        }
    }

    /// The error to raise instead of a result computed from a mapped file
    /// that another process cut short meanwhile (its vanished pages read
    /// as zeros, see [`sigbus`]).
    fn intact(&self) -> PyResult<()> {
        match self {
            Data::Mapped(m) if m.faulted() => Err(pyo3::exceptions::PyOSError::new_err(
                "the input file shrank while it was read (truncated by another process?)",
            )),
            _ => Ok(()),
        }
    }
}

/// `bytes`/`bytearray`/`memoryview` are data, anything else a path.
fn load(source: &Bound<'_, PyAny>) -> PyResult<(Data, Option<PathBuf>)> {
    if let Ok(b) = source.extract::<PyBackedBytes>() {
        return Ok((Data::Python(b), None));
    }
    if source.is_instance_of::<pyo3::types::PyMemoryView>() {
        let v: Vec<u8> = source
            .call_method0("tobytes")?
            .extract::<PyBackedBytes>()?
            .to_vec();
        return Ok((Data::Owned(v), None));
    }
    let path: PathBuf = source
        .extract()
        .map_err(|_| usage("expected a path (str or os.PathLike) or bytes"))?;
    let shown = path.display().to_string();
    let not_found = |e: std::io::Error| -> PyErr {
        let text = format!("'{shown}': {}", okit::output::io_text(&e));
        match e.kind() {
            std::io::ErrorKind::NotFound => pyo3::exceptions::PyFileNotFoundError::new_err(text),
            std::io::ErrorKind::PermissionDenied => {
                pyo3::exceptions::PyPermissionError::new_err(text)
            }
            _ => pyo3::exceptions::PyOSError::new_err(text),
        }
    };
    // The library's one rule for inputs, as the CLI's: regular files only,
    // opened without blocking (a FIFO would wait for a writer for ever).
    let (file, len) = match okit::input::open_regular(&path) {
        Ok(opened) => opened,
        Err(okit::input::OpenError::Io(e)) => return Err(not_found(e)),
        Err(okit::input::OpenError::NotRegular("a directory")) => {
            return Err(pyo3::exceptions::PyIsADirectoryError::new_err(format!(
                "'{shown}': is a directory, not an input file"
            )))
        }
        Err(e) => return Err(usage(format!("'{shown}': {e}"))),
    };
    if len == 0 {
        return Ok((Data::Owned(Vec::new()), Some(path)));
    }
    let map =
        sigbus::Guarded::map(&file).map_err(|e| usage(format!("'{shown}': cannot map: {e}")))?;
    Ok((Data::Mapped(map), Some(path)))
}

/// Mapped inputs without SIGBUS: the library's guard.
use offload_kit_io::guarded as sigbus;

/// What the writers (`bundle`, `unbundle`, `generate`) take: a numbered
/// release, or main as 24 (its version is 24.0.0git), as the C ABI takes
/// it; readers (`open`, `validate`) take numbered releases only, as the
/// CLI's `list --llvm-version`.
fn writer_release_of(v: Option<u32>) -> PyResult<Option<Release>> {
    v.map(|n| {
        (Release::MODELLED.into_iter())
            .find(|r| r.major() == n)
            .ok_or_else(|| {
                usage(format!(
                    "llvm_version {n}: not one of {}, or {} for LLVM main",
                    Release::listed(", ", ", "),
                    Release::Main.major()
                ))
            })
    })
    .transpose()
}

/// A numbered release offload-kit models, refused with the list otherwise.
fn release_of(v: Option<u32>) -> PyResult<Option<Release>> {
    v.map(|n| {
        Release::NUMBERED
            .into_iter()
            .find(|r| r.major() == n)
            .ok_or_else(|| {
                usage(format!(
                    "llvm_version {n}: not one of {}",
                    Release::listed(", ", ", ")
                ))
            })
    })
    .transpose()
}

/// One entry of a container.
#[pyclass(frozen, get_all, module = "offload_kit")]
#[derive(Clone)]
struct Entry {
    /// The bundle entry ID (an offload binary image: `<producer>-<triple>-<arch>`).
    id: String,
    /// Absolute offset of the payload in the file; within the decompressed
    /// bundle when `compressed_at` is set.
    offset: u64,
    /// Payload size in bytes.
    size: u64,
    /// Which bundle of the file holds it (from 0).
    bundle: usize,
    /// The archive member holding it, if any (an untrusted name).
    member: Option<String>,
    /// The member's position in the archive, if any.
    member_index: Option<usize>,
    /// The ELF section holding it, if any.
    section: Option<String>,
    /// Absolute offset of the compressed bundle (CCOB) holding it, if any.
    compressed_at: Option<u64>,
    /// A kpack entry's architecture (a kpack archive's, or a split host's
    /// code object in one).
    arch: Option<String>,
    /// For a split host's code object: the kpack archive holding it, as
    /// found; `offset` and `size` are that archive's.
    archive: Option<String>,
    /// Position in the listing (what `Container.read` uses).
    index: usize,
}

#[pymethods]
impl Entry {
    fn __repr__(&self) -> String {
        format!(
            "Entry(id={:?}, offset={}, size={}, bundle={})",
            self.id, self.offset, self.size, self.bundle
        )
    }
}

/// A spec violation: rule, absolute offset, message.
#[pyclass(frozen, get_all, module = "offload_kit")]
#[derive(Clone)]
struct Violation {
    /// The rule ID (`BIN-5`), or None for an error outside the spec.
    rule: Option<String>,
    /// The absolute byte offset, if the violation has one.
    offset: Option<u64>,
    /// What is wrong.
    message: String,
}

impl From<&Error> for Violation {
    fn from(e: &Error) -> Self {
        Violation {
            rule: e.rule_id().map(str::to_string),
            offset: e.offset(),
            message: e.message().to_string(),
        }
    }
}

#[pymethods]
impl Violation {
    fn __repr__(&self) -> String {
        format!(
            "Violation(rule={}, offset={}, message={:?})",
            opt(&self.rule),
            opt(&self.offset),
            self.message
        )
    }
}

/// An opened container: its kind and entries; `read` gives an entry's bytes.
#[pyclass(module = "offload_kit")]
struct Container {
    data: Data,
    /// What the container holds itself (a kpack archive: nothing).
    listing: Listing,
    /// Code objects in kpack archives, after the listing's entries: a
    /// kpack archive's own, or those a split host's archives file.
    kpack: Vec<kpack::KpackEntry>,
    /// Every entry: the listing's, then the kpack entries.
    entries: Vec<Entry>,
    /// `kpack` for a kpack archive, else the listing's container.
    kind: String,
    path: Option<String>,
    /// The budget it was opened with: entries are read within it.
    budget: Budget,
}

impl Container {
    /// `kind` is the listing's container unless given (`kpack`).
    fn new(
        data: Data,
        (listing, kpack): (Listing, Vec<kpack::KpackEntry>),
        (kind, path): (Option<&str>, Option<PathBuf>),
        budget: Budget,
    ) -> Container {
        let kind = kind.map_or_else(|| listing.container.to_string(), str::to_string);
        let own = listing.entries.iter().map(entry_of);
        let filed = kpack.iter().map(kpack::KpackEntry::entry);
        let entries = (own.chain(filed).enumerate())
            .map(|(index, e)| Entry { index, ..e })
            .collect();
        Container {
            data,
            listing,
            kpack,
            entries,
            kind,
            path: path.map(|p| p.display().to_string()),
            budget,
        }
    }
}

fn entry_of(e: &ListedEntry) -> Entry {
    Entry {
        id: e.id.clone(),
        offset: e.offset,
        size: e.size,
        bundle: e.bundle,
        member: e.member.clone(),
        member_index: e.member_index,
        section: e.section.clone(),
        compressed_at: e.ccob_offset,
        arch: None,
        archive: None,
        index: 0,
    }
}

#[pymethods]
impl Container {
    /// The outer container: `binary-bundle`, `text-bundle`, `ccob`, `elf`,
    /// `archive`, `offload-binary`, `coff`, …
    #[getter]
    fn kind(&self) -> String {
        self.kind.clone()
    }

    /// The path it was opened from (None for bytes).
    #[getter]
    fn path(&self) -> Option<String> {
        self.path.clone()
    }

    /// Every entry, in the order the file holds them.
    #[getter]
    fn entries(&self) -> Vec<Entry> {
        self.entries.clone()
    }

    fn __len__(&self) -> usize {
        self.entries.len()
    }

    fn __getitem__(&self, i: isize) -> PyResult<Entry> {
        let n = self.entries.len() as isize;
        let k = if i < 0 { i + n } else { i };
        if !(0..n).contains(&k) {
            return Err(pyo3::exceptions::PyIndexError::new_err(
                "entry index out of range",
            ));
        }
        Ok(self.entries[k as usize].clone())
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let list = PyList::new(py, slf.entries())?;
        Ok(list.try_iter()?.unbind().into_any())
    }

    /// The bytes of `entry` (an `Entry`, or an entry ID when it is unique):
    /// a payload, an image, or for an entry in a compressed bundle its bytes
    /// of the verified decompressed bundle.
    fn read<'py>(
        &self,
        py: Python<'py>,
        entry: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let e = if let Ok(e) = entry.extract::<Entry>() {
            self.entries
                .get(e.index)
                .filter(|x| x.id == e.id && x.offset == e.offset && x.archive == e.archive)
                .ok_or_else(|| usage("that entry is not from this container"))?
        } else {
            let id: String = entry
                .extract()
                .map_err(|_| usage("expected an Entry or an entry ID"))?;
            let mut hits = self.entries.iter().filter(|x| x.id == id);
            let first = hits
                .next()
                .ok_or_else(|| usage(format!("no entry '{id}'")))?;
            if hits.next().is_some() {
                return Err(usage(format!(
                    "several entries are '{id}' (in several bundles, members or archives): pass an Entry"
                )));
            }
            first
        };
        let Some(e) = self.listing.entries.get(e.index) else {
            let k = &self.kpack[e.index - self.listing.entries.len()];
            let code = k.read(&self.data, self.budget)?;
            return Ok(PyBytes::new(py, &code));
        };
        let data = self.data.bytes();
        let bytes = match &e.image {
            Some(img) => detect::image_bytes(data, img, self.budget).map(std::borrow::Cow::Owned),
            None => detect::payload(data, e, self.budget).map_err(|x| vec![x].into()),
        };
        // Checked after the copy out of the mapping: that is where a
        // vanished page is met.
        let out = bytes.map(|b| PyBytes::new(py, &b));
        self.data.intact()?;
        out.map_err(|es: okit::Errors| py_errs(&es))
    }

    fn __repr__(&self) -> String {
        format!(
            "Container(kind={:?}, entries={}, path={})",
            self.kind,
            self.entries.len(),
            opt(&self.path)
        )
    }
}

/// Open a container from a path or bytes (the file is mapped, not read:
/// it must not be modified while the container is open), strictly by
/// spec/, or as LLVM `llvm_version` reads it. Raises
/// OffloadKitError (with `.rule`, `.offset` and every violation in `.errors`)
/// when the file does not conform. Reading it and its entries holds at most
/// `max_memory` bytes of decoded data ([`max_memory`] when not given). A
/// kpack archive lists its code objects (`kind` `kpack`); a split host
/// (HIPK, given by its path) its own entries, then the code objects its
/// archives file under its keys (found through its search paths, or
/// `kpack_path`, else `ROCM_KPACK_PATH`), as `offload-kit list` does;
/// given as bytes, its own entries only (no directory to search from).
#[pyfunction]
#[pyo3(signature = (source, llvm_version=None, max_memory=None, kpack_path=None))]
fn open(
    source: &Bound<'_, PyAny>,
    llvm_version: Option<u32>,
    max_memory: Option<u64>,
    kpack_path: Option<&str>,
) -> PyResult<Container> {
    let release = release_of(llvm_version)?;
    let budget = budget_of(max_memory)?;
    let (data, path) = load(source)?;
    if okit::kpack::is_kpack(data.bytes()) {
        let entries = kpack::archive_entries(data.bytes());
        data.intact()?;
        let entries = entries.map_err(|e| py_err(&e))?;
        let none = Listing {
            container: detect::Container::Elf,
            mode: "strict".into(),
            entries: Vec::new(),
        };
        return Ok(Container::new(
            data,
            (none, entries),
            (Some("kpack"), path),
            budget,
        ));
    }
    let listing = detect::list(&data.bytes(), detect::ListOptions::new(release, budget));
    let host = inspect::split_host::split_host(data.bytes());
    data.intact()?;
    let listing = listing.map_err(|es| py_errs(&es))?;
    // A split host given by its path: what its archives file too (given
    // as bytes, or with a malformed reference: its own entries only).
    let filed = match (host, path.as_deref()) {
        (Some(Ok(found)), Some(_)) => kpack::host_entries(path.as_deref(), &found, kpack_path)?,
        _ => Vec::new(),
    };
    Ok(Container::new(data, (listing, filed), (None, path), budget))
}

/// Every violation of spec/ in a file (empty when it conforms: its
/// container and the ELF images in it), or with `llvm_version` what that
/// release cannot read; within `max_memory` ([`max_memory`] when not given).
#[pyfunction]
#[pyo3(signature = (source, llvm_version=None, max_memory=None))]
fn validate(
    source: &Bound<'_, PyAny>,
    llvm_version: Option<u32>,
    max_memory: Option<u64>,
) -> PyResult<Vec<Violation>> {
    let release = release_of(llvm_version)?;
    let budget = budget_of(max_memory)?;
    let (data, _) = load(source)?;
    // Strictly: the container and the images in it (CO-2 … CO-5).
    let res = match release {
        // Any file, a ROCm kpack archive included (which LLVM does not read).
        None => inspect::validate_any(data.bytes(), budget),
        Some(_) => {
            detect::list(&data.bytes(), detect::ListOptions::new(release, budget)).map(|_| ())
        }
    };
    data.intact()?;
    Ok(match res {
        Ok(_) => Vec::new(),
        Err(es) => es.iter().map(Violation::from).collect(),
    })
}

fn json_value<'py>(py: Python<'py>, v: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(v).map_err(|e| usage(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// What a file holds down to each code object: the report of
/// `offload-kit inspect --json` (schema offload-kit-inspect/1, one file).
/// What clang 14–16 wrote (ID-5, BIN-10) is read with `warnings`, unless
/// `strict`. A ROCm kpack archive gives `{"kpack_archive": ...}`, as the
/// CLI's `inspect --json` does; a split host (HIPK, given by its path)
/// `{"report": ..., "kpack_host": ...}`, the code objects its archives
/// file under its keys, found through its search paths or `kpack_path`
/// (else `ROCM_KPACK_PATH`). Within `max_memory` ([`max_memory`] when not
/// given).
#[pyfunction]
#[pyo3(signature = (source, strict=false, kpack_path=None, max_memory=None))]
fn inspect_file<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    strict: bool,
    kpack_path: Option<&str>,
    max_memory: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let budget = budget_of(max_memory)?;
    let (data, path) = load(source)?;
    let host = inspect::split_host::split_host(data.bytes());
    let got = inspect::inspect_any(data.bytes(), inspect::Options { strict, budget });
    data.intact()?;
    // A kpack archive: `{"kpack_archive": ...}`, as `inspect --json` gives it.
    let report = match got.map_err(|es| py_errs(&es))? {
        inspect::Inspected::Container(report) => report,
        archive => return json_value(py, &archive),
    };
    let Some(host) = host else {
        return json_value(py, &report);
    };
    // A split host: its report and what its archives hold, as the CLI's.
    let kpack_host = match host {
        Ok(found) => {
            let found = follow(path.as_deref(), &found, (kpack_path, budget), |host| {
                host.report()
            })?;
            serde_json::to_value(&found).map_err(|e| usage(e.to_string()))?
        }
        Err(es) => serde_json::json!({ "errors": es }),
    };
    json_value(
        py,
        &serde_json::json!({ "report": report, "kpack_host": kpack_host }),
    )
}

/// Which code object the HIP runtime would load on each GPU: a list with
/// one verdict per GPU, as `offload-kit check --json` prints them (`gpu`,
/// `runs`, `bundles` with `entry`/`pick` or `why_not`). What clang 14–16
/// wrote (ID-5, BIN-10) is read unless `strict`. For a kpack archive,
/// per GPU whether it holds a target the GPU takes (`gpu`, `runs`,
/// `found`). For a split host (HIPK, given by its path), what ROCm's
/// runtime finds in the archives its search paths name, or those of
/// `kpack_path` (`:`-separated, as `--kpack-path`; else `ROCM_KPACK_PATH`):
/// per GPU `gpu`, `runs`, and `found` or the runtime's `error` and `why`,
/// as `check --json` gives them under `kpack`. Within `max_memory`
/// ([`max_memory`] when not given).
#[pyfunction]
#[pyo3(signature = (source, gpu, strict=false, kpack_path=None, max_memory=None))]
fn check<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    gpu: &Bound<'py, PyAny>,
    strict: bool,
    kpack_path: Option<&str>,
    max_memory: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let budget = budget_of(max_memory)?;
    let gpus: Vec<String> = match gpu.extract::<String>() {
        Ok(g) => vec![g],
        Err(_) => gpu
            .extract()
            .map_err(|_| usage("gpu: a target ID or a list of them"))?,
    };
    let gpus: Vec<gpu_check::Gpu> = gpus
        .iter()
        .map(|g| gpu_check::Gpu::parse(g).map_err(|e| py_err(&e)))
        .collect::<PyResult<_>>()?;
    let (data, path) = load(source)?;
    // A split host: the library's lookup, as the CLI's `check` asks it.
    if let Some(host) = inspect::split_host::split_host(data.bytes()) {
        data.intact()?;
        let found = host.map_err(|es| py_errs(&es))?;
        let verdicts = follow(path.as_deref(), &found, (kpack_path, budget), |host| {
            gpus.iter()
                .map(|g| host.check(g))
                .collect::<Result<Vec<_>, Vec<Error>>>()
        })?;
        return json_value(py, &verdicts.map_err(|es| py_errs(&es))?);
    }
    // A container's verdicts, or a kpack archive's (whether it holds a
    // target each GPU takes).
    let verdicts = inspect::check_any(data.bytes(), &gpus, inspect::Options { strict, budget });
    data.intact()?;
    json_value(py, &verdicts.map_err(|es| py_errs(&es))?)
}

/// Bundle `(target ID, payload)` pairs as `clang-offload-bundler
/// -type=TYPE` of `llvm_version` writes them: the same bytes as
/// `offload-kit bundler` (and the release) given the same options. The
/// defaults are the bundler's own: `align=1` (`-bundle-align`; clang's HIP
/// driver passes 4096), no compression. `compress=True` writes a
/// compressed bundle (`-compress`, zstd) of CCOB version `format_version`
/// (the release's default: 2 for 19, 3 for 22 and main;
/// `COMPRESSED_BUNDLE_FORMAT_VERSION`) at zstd level `level` (default 3).
#[pyfunction]
#[pyo3(signature = (entries, r#type="o", align=1, compress=None, format_version=None, level=None, llvm_version=22, max_memory=None))]
#[allow(clippy::too_many_arguments)]
fn bundle<'py>(
    py: Python<'py>,
    entries: Vec<(String, PyBackedBytes)>,
    r#type: &str,
    align: u64,
    compress: Option<&Bound<'py, PyAny>>,
    format_version: Option<u16>,
    level: Option<i32>,
    llvm_version: u32,
    max_memory: Option<u64>,
) -> PyResult<Bound<'py, PyBytes>> {
    // `compress` is a switch: an old `compress=3` (a version) is refused
    // rather than read as a level or a version.
    let compress = match compress {
        None => false,
        Some(c) if c.is_instance_of::<pyo3::types::PyBool>() => c.extract()?,
        Some(_) => {
            return Err(usage(
                "compress takes True or False; the CCOB version is format_version=2|3, the zstd level level=N",
            ))
        }
    };
    if !compress && (format_version.is_some() || level.is_some()) {
        return Err(usage("format_version and level need compress=True"));
    }
    let release = writer_release_of(Some(llvm_version))?.expect("given");
    if u32::try_from(align).is_err() {
        return Err(usage(format!(
            "align {align}: LLVM's -bundle-align is an unsigned 32-bit value"
        )));
    }
    let opts = BundleOptions {
        release,
        file_type: r#type,
        align,
        compress: compress.then(|| ccob::WriteOptions {
            version: format_version.unwrap_or(release.ccob_default_version()),
            method: ccob::Method::Zstd,
            level: level.unwrap_or(ccob::Method::Zstd.default_level()),
        }),
        // What the bundle's own bytes (header, padding) may take.
        budget: budget_of(max_memory)?,
    };
    let pairs: Vec<(&str, &[u8])> = entries.iter().map(|(t, p)| (t.as_str(), &p[..])).collect();
    let out = py
        .allow_threads(|| bundle_in_memory(&pairs, opts))
        .map_err(llvm_err)?;
    Ok(PyBytes::new(py, &out))
}

/// The Python exception for a release's failure: its rule and offset where
/// offload-kit has them, the release's own message in `.llvm_message`.
fn llvm_err(e: okit::error::LlvmError) -> PyErr {
    let d = e.detail.unwrap_or_else(|| Error::other(""));
    let err = py_err(&d);
    Python::with_gil(|py| {
        let _ = err.value(py).setattr("llvm_message", e.message.clone());
        let msg = if d.message().is_empty() {
            e.message.clone()
        } else {
            format!("{}: {d}", e.message)
        };
        err.value(py).setattr("args", (msg,)).ok();
    });
    err
}

/// What `clang-offload-bundler -unbundle -type=TYPE -targets=...` of LLVM
/// `llvm_version` writes for each of `targets` from `source` (a path or
/// bytes): a list with, per target, its output's bytes, or None where the
/// release writes no file for it (a target it spells like a later one).
/// The release's checks, decompression and errors, the drop-in's bytes;
/// `-type=a` is refused (an archive unbundles into archives). The outputs
/// together hold at most `max_memory` bytes.
#[pyfunction]
#[pyo3(signature = (source, targets, r#type="o", allow_missing=false, llvm_version=22, max_memory=None))]
fn unbundle<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    targets: Vec<String>,
    r#type: &str,
    allow_missing: bool,
    llvm_version: u32,
    max_memory: Option<u64>,
) -> PyResult<Vec<Option<Bound<'py, PyBytes>>>> {
    let release = writer_release_of(Some(llvm_version))?.expect("given");
    let opts = UnbundleOptions {
        release,
        file_type: r#type,
        allow_missing,
        budget: budget_of(max_memory)?,
    };
    let (data, _) = load(source)?;
    let names: Vec<&str> = targets.iter().map(String::as_str).collect();
    let out = unbundle_in_memory(data.bytes(), &names, opts);
    data.intact()?;
    let out = out.map_err(llvm_err)?;
    Ok((out.iter())
        .map(|o| o.as_ref().map(|b| PyBytes::new(py, b)))
        .collect())
}

/// A compressed bundle (CCOB) of `data`: version 1, 2 or 3, method `zstd`
/// or `zlib`; the defaults are LLVM 22's bytes.
#[pyfunction]
#[pyo3(signature = (data, version=3, method="zstd", level=None))]
fn compress<'py>(
    py: Python<'py>,
    data: PyBackedBytes,
    version: u16,
    method: &str,
    level: Option<i32>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (method, default) = match method {
        "zstd" => (ccob::Method::Zstd, 3),
        "zlib" => (ccob::Method::Zlib, 6),
        m => return Err(usage(format!("method '{m}': zstd or zlib"))),
    };
    let opts = ccob::WriteOptions {
        version,
        method,
        level: level.unwrap_or(default),
    };
    let out = py
        .allow_threads(|| ccob::compress(&data, opts))
        .map_err(|e| py_err(&e))?;
    Ok(PyBytes::new(py, &out))
}

/// The bundle a compressed bundle holds, its sizes and hash verified,
/// decoded straight into the returned `bytes` (no second copy); a bundle
/// larger than `max_memory` ([`max_memory`] when not given) is refused
/// (CLI-6).
#[pyfunction]
#[pyo3(signature = (data, max_memory=None))]
fn decompress<'py>(
    py: Python<'py>,
    data: PyBackedBytes,
    max_memory: Option<u64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let budget = budget_of(max_memory)?;
    // The library's one decompression (the CLI's and the C ABI's): sized
    // by its checks, then decoded straight into the returned bytes.
    let len = ccob::single_len(&data, Some(budget)).map_err(|e| py_err(&e))?;
    let len = usize::try_from(len).map_err(|_| usage("bundle too large"))?;
    let mut failure = None;
    let out = PyBytes::new_with(py, len, |buf: &mut [u8]| {
        let mut w: &mut [u8] = buf;
        if let Err(e) = ccob::extract_range(&&data[..], 0, 0, len as u64, &mut w) {
            failure = Some(e);
        }
        Ok(())
    })?;
    match failure {
        Some(e) => Err(py_err(&e)),
        None => Ok(out),
    }
}

/// The memory budget a call given no `max_memory=` uses, in bytes: how
/// much decoded data it may hold (inflated bundles and images, entries
/// read from compressed bundles), as the CLI's `--max-memory`.
/// `OFFLOAD_KIT_MAX_MEMORY` as it is when the call is made, else 256 MiB.
#[pyfunction]
fn max_memory() -> PyResult<u64> {
    Ok(budget_of(None)?.bytes())
}

/// The budget of a call: `max_memory` bytes (at least 1 MiB) when given,
/// else `OFFLOAD_KIT_MAX_MEMORY`, else 256 MiB; `ValueError` for a variable
/// that is not a size, as the CLI refuses it. A value per call, so threads
/// asking for different budgets never see each other's.
fn budget_of(max_memory: Option<u64>) -> PyResult<Budget> {
    if let Some(bytes) = max_memory {
        return Ok(Budget::new(bytes));
    }
    match std::env::var_os("OFFLOAD_KIT_MAX_MEMORY") {
        None => Ok(Budget::default()),
        Some(text) => text.to_str().and_then(Budget::parse).ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "OFFLOAD_KIT_MAX_MEMORY={:?}: not a size (bytes, or with K, M or G)",
                text
            ))
        }),
    }
}

/// A generated container of `kind` for `seed` (deterministic): valid, or
/// breaking the rule `malformed`. Entries carry images loaders accept for
/// their targets; `payloads` (a directory) the user's own images instead,
/// `random_payloads=True` random bytes; `llvm_version` makes only what that
/// release reads. Returns `(bytes, info)`, `info` a
/// dict with `description` and, when malformed, `rule` and `offset`.
#[pyfunction]
#[pyo3(signature = (kind, seed=0, malformed=None, max_size=1 << 20, target_ids=None, payloads=None, random_payloads=false, llvm_version=None, max_memory=None))]
#[allow(clippy::too_many_arguments)]
fn generate<'py>(
    py: Python<'py>,
    kind: &str,
    seed: u64,
    malformed: Option<&str>,
    max_size: usize,
    target_ids: Option<Vec<String>>,
    payloads: Option<std::path::PathBuf>,
    random_payloads: bool,
    llvm_version: Option<u32>,
    max_memory: Option<u64>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyDict>)> {
    let release = writer_release_of(llvm_version)?;
    let k = gen::Kind::from_name(kind).ok_or_else(|| {
        let names: Vec<&str> = gen::Kind::ALL.iter().map(|k| k.name()).collect();
        usage(format!("kind '{kind}': one of {}", names.join(", ")))
    })?;
    let rule = malformed
        .map(|m| {
            okit::rules::by_id(m)
                .copied()
                .ok_or_else(|| usage(format!("malformed '{m}': no such rule")))
        })
        .transpose()?;
    let payloads = match (payloads, random_payloads) {
        (Some(_), true) => return Err(usage("payloads and random_payloads exclude each other")),
        (Some(dir), false) => gen::Payloads::Given(
            gen::payloads_from_dir(&dir, max_size, budget_of(max_memory)?.bytes())
                .map_err(|e| usage(e.to_string()))?,
        ),
        (None, true) => gen::Payloads::Random,
        (None, false) => gen::Payloads::Loadable,
    };
    let opts = gen::Options {
        target_ids: target_ids.unwrap_or_default(),
        max_size,
        malformed: rule,
        payloads,
        release,
    };
    let g = gen::generate(k, seed, &opts).map_err(|e| usage(e.to_string()))?;
    let info = PyDict::new(py);
    info.set_item("description", &g.description)?;
    if let Some(v) = &g.violation {
        info.set_item("rule", v.rule.id)?;
        info.set_item("offset", v.offset)?;
        info.set_item("violation", &v.description)?;
    }
    // A kpack split's archives: {file name: bytes}, written beside the host.
    let companions = PyDict::new(py);
    for (name, bytes) in &g.companions {
        companions.set_item(name, PyBytes::new(py, bytes))?;
    }
    info.set_item("companions", companions)?;
    Ok((PyBytes::new(py, &g.bytes), info))
}

/// The offload-kit Python module.
#[pymodule]
fn offload_kit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("OffloadKitError", m.py().get_type::<OffloadKitError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Container>()?;
    m.add_class::<Entry>()?;
    m.add_class::<Violation>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(inspect_file, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(bundle, m)?)?;
    m.add_function(wrap_pyfunction!(unbundle, m)?)?;
    m.add_function(wrap_pyfunction!(compress, m)?)?;
    m.add_function(wrap_pyfunction!(decompress, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(max_memory, m)?)?;
    m.add_function(wrap_pyfunction!(kpack::split_kpack, m)?)?;
    m.add_function(wrap_pyfunction!(kpack::join_kpack, m)?)?;
    Ok(())
}
