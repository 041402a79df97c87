//! The C ABI of offload-kit, for fuzzing harnesses of code-object loaders
//! written in C or C++ (`include/offload_kit.h`; link `liboffloadkit.a` or
//! `liboffloadkit.so`).
//!
//! - [`offloadkit_mutate`] has libFuzzer's `LLVMFuzzerCustomMutator`
//!   signature: a harness's custom mutator is one line.
//! - [`offloadkit_validate`] checks a buffer against every rule of `spec/`.
//! - [`offloadkit_generate`] and [`offloadkit_generate_malformed`] write a
//!   generated container into a caller's buffer;
//!   [`offloadkit_generate_companion`] the files beside it (a kpack
//!   split's archives).
//! - [`offloadkit_list`] gives a buffer's entries as `offload-kit list
//!   --json` does; [`offloadkit_inspect`] what it holds down to each code
//!   object, as the JSON report of `offload-kit inspect --json`;
//!   [`offloadkit_check`] which code object a GPU would load, as `check
//!   --json`'s verdict.
//! - [`offloadkit_bundle`] and [`offloadkit_unbundle`] write what a
//!   release's `clang-offload-bundler` writes, from buffers;
//!   [`offloadkit_compress`] and [`offloadkit_decompress`] its compressed
//!   bundles.
//!
//! No panic crosses the boundary (each call catches it and returns its
//! error value); NULL pointers and zero capacities are error codes; nothing
//! is allocated that the caller must free.
//!
//! # Example
//!
//! The functions are plain `extern "C"` functions; from Rust:
//!
//! ```
//! use offloadkit::{offloadkit_generate, offloadkit_mutate, offloadkit_validate};
//!
//! let mut buf = vec![0u8; 1 << 16];
//! let n = unsafe { offloadkit_generate(c"binary".as_ptr(), 7, buf.as_mut_ptr(), buf.len()) };
//! assert!(n > 0);
//! let (mut rule, mut offset) = ([0 as std::ffi::c_char; 16], 0u64);
//! let r = unsafe { offloadkit_validate(buf.as_ptr(), n, rule.as_mut_ptr(), rule.len(), &mut offset) };
//! assert_eq!(r, 0);
//! let m = unsafe { offloadkit_mutate(buf.as_mut_ptr(), n, buf.len(), 1) };
//! assert!(m <= buf.len());
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod bundler;
pub use bundler::{
    offloadkit_bundle, offloadkit_bundler_options, offloadkit_compress, offloadkit_decompress,
    offloadkit_unbundle, OFFLOADKIT_COMPRESS_DEFAULT, OFFLOADKIT_NOT_WRITTEN,
};

use offload_kit::generate::{generate, Kind, Options};
use std::ffi::{c_char, c_int, c_uint, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A bad argument: a NULL pointer where data is needed, or a zero capacity.
pub const OFFLOADKIT_EBADARG: c_int = -1;
/// An unknown kind or rule name.
pub const OFFLOADKIT_EUNKNOWN: c_int = -2;
/// offload-kit failed inside (a bug: please report it with the input).
pub const OFFLOADKIT_EINTERNAL: c_int = -3;

/// Mutate `data[0..size]` in place into at most `max_size` bytes and return
/// the new size; `seed` picks the mutation. The signature of libFuzzer's
/// `LLVMFuzzerCustomMutator`:
///
/// ```c
/// size_t LLVMFuzzerCustomMutator(uint8_t *d, size_t n, size_t max, unsigned int seed) {
///     return offloadkit_mutate(d, n, max, seed);
/// }
/// ```
///
/// Returns 0 when `data` is NULL or `max_size` is 0 (libFuzzer never does
/// that), and `size` unchanged if offload-kit fails inside.
///
/// # Safety
///
/// `data` must point to `max_size` writable bytes, of which the first
/// `size` are initialised (`size <= max_size`).
#[no_mangle]
pub unsafe extern "C" fn offloadkit_mutate(
    data: *mut u8,
    size: usize,
    max_size: usize,
    seed: c_uint,
) -> usize {
    // SAFETY: as this function's contract, which is the callee's.
    unsafe { offloadkit_mutate_flags(data, size, max_size, seed, 0) }
}

/// [`offloadkit_mutate_flags`]: an input that is no container offload-kit
/// recognises (a one-byte seed) is replaced, one time in four, by a freshly
/// generated file of a random kind, so fuzzing can start from nothing.
pub const OFFLOADKIT_MUTATE_BOOTSTRAP: c_uint = 1;

/// [`offloadkit_mutate_flags`], for ablation studies: leave out the
/// image-aware mutations of code objects (their bytes are flipped instead;
/// breaking a code-object rule stays).
pub const OFFLOADKIT_MUTATE_NO_IMAGE: c_uint = 2;

/// [`offloadkit_mutate_flags`], for ablation studies: byte edits only, no
/// structural mutation.
pub const OFFLOADKIT_MUTATE_NO_STRUCTURE: c_uint = 4;

/// [`offloadkit_mutate`] with `flags` (a sum of `OFFLOADKIT_MUTATE_*`;
/// 0 is `offloadkit_mutate`). Unknown flags are ignored.
///
/// ```c
/// size_t LLVMFuzzerCustomMutator(uint8_t *d, size_t n, size_t max, unsigned int seed) {
///     return offloadkit_mutate_flags(d, n, max, seed, OFFLOADKIT_MUTATE_BOOTSTRAP);
/// }
/// ```
///
/// # Safety
///
/// As [`offloadkit_mutate`].
#[no_mangle]
pub unsafe extern "C" fn offloadkit_mutate_flags(
    data: *mut u8,
    size: usize,
    max_size: usize,
    seed: c_uint,
    flags: c_uint,
) -> usize {
    if data.is_null() || max_size == 0 || size > max_size {
        return 0;
    }
    let options = offload_kit::mutate::MutateOptions {
        bootstrap: flags & OFFLOADKIT_MUTATE_BOOTSTRAP != 0,
        no_image: flags & OFFLOADKIT_MUTATE_NO_IMAGE != 0,
        no_structure: flags & OFFLOADKIT_MUTATE_NO_STRUCTURE != 0,
    };
    // SAFETY: the caller guarantees `data` holds `max_size` writable bytes,
    // the first `size` initialised; `size <= max_size` was checked.
    let buf = unsafe { std::slice::from_raw_parts_mut(data, max_size) };
    catch_unwind(AssertUnwindSafe(|| {
        let m = offload_kit::mutate::mutate_with(&buf[..size], max_size, u64::from(seed), options);
        buf[..m.bytes.len()].copy_from_slice(&m.bytes);
        m.bytes.len()
    }))
    .unwrap_or(size)
}

/// The budget of one call: `OFFLOAD_KIT_MAX_MEMORY` as it is when the call
/// is made, else 256 MiB, as the CLI and Python take it; `None` for a
/// variable that is not a size (the CLI and Python refuse it too).
fn budget() -> Option<offload_kit::budget::Budget> {
    match std::env::var_os("OFFLOAD_KIT_MAX_MEMORY") {
        None => Some(Default::default()),
        Some(text) => text.to_str().and_then(offload_kit::budget::Budget::parse),
    }
}

/// `data[0..size]`, empty when `size` is 0 (`data` may then be NULL).
///
/// # Safety
///
/// `data` points to `size` readable bytes, or `size` is 0.
unsafe fn input<'a>(data: *const u8, size: usize) -> &'a [u8] {
    if size == 0 {
        return &[];
    }
    // SAFETY: non-NULL with `size` readable bytes (caller).
    unsafe { std::slice::from_raw_parts(data, size) }
}

/// Check `data[0..size]` against every rule of offload-kit's spec: any
/// file offload-kit reads, a ROCm kpack archive included (the answer of
/// `offload-kit validate` and Python's `validate`), holding at most
/// `OFFLOAD_KIT_MAX_MEMORY` (else 256 MiB) of decoded data (CLI-6); a
/// variable that is not a size is [`OFFLOADKIT_EBADARG`].
///
/// Returns 0 when it conforms; 1 when it does not, with the first violated
/// rule's ID (e.g. `BIN-5`, NUL-terminated, cut to `rule_cap - 1` bytes)
/// in `rule_out` and its absolute offset in `offset_out` (`UINT64_MAX` when
/// the violation has no offset; inside a compressed bundle, the offset
/// within its decompressed bytes, which may lie past `size`);
/// [`OFFLOADKIT_EBADARG`] when `data` is NULL
/// (with `size > 0`), `rule_out` or `offset_out` is NULL, or `rule_cap` is
/// 0; [`OFFLOADKIT_EINTERNAL`] if offload-kit fails inside.
///
/// # Safety
///
/// `data` must point to `size` readable bytes (or be NULL with `size` 0),
/// `rule_out` to `rule_cap` writable bytes, `offset_out` to a `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn offloadkit_validate(
    data: *const u8,
    size: usize,
    rule_out: *mut c_char,
    rule_cap: usize,
    offset_out: *mut u64,
) -> c_int {
    if (data.is_null() && size > 0) || rule_out.is_null() || rule_cap == 0 || offset_out.is_null() {
        return OFFLOADKIT_EBADARG;
    }
    let Some(budget) = budget() else {
        return OFFLOADKIT_EBADARG;
    };
    // SAFETY: `size` readable bytes at `data`, non-NULL unless `size` is 0
    // (checked; caller).
    let input = unsafe { input(data, size) };
    // SAFETY: `rule_out` is non-NULL with `rule_cap` writable bytes (caller).
    let rule = unsafe { std::slice::from_raw_parts_mut(rule_out.cast::<u8>(), rule_cap) };
    let verdict = catch_unwind(|| {
        offload_kit::inspect::validate_any(input, budget)
            .err()
            .map(|es| {
                let first = es.iter().min_by_key(|e| e.offset().unwrap_or(u64::MAX));
                first.map_or((String::from("?"), u64::MAX), |e| {
                    (
                        e.rule_id().unwrap_or("?").to_string(),
                        e.offset().unwrap_or(u64::MAX),
                    )
                })
            })
    });
    let Ok(verdict) = verdict else {
        return OFFLOADKIT_EINTERNAL;
    };
    let (id, offset) = verdict.unwrap_or_default();
    let n = id.len().min(rule_cap - 1);
    rule[..n].copy_from_slice(&id.as_bytes()[..n]);
    rule[n] = 0;
    // SAFETY: `offset_out` is non-NULL and writable (caller).
    unsafe { offset_out.write(offset) };
    c_int::from(!id.is_empty())
}

/// The kind named by a C string, or an error code.
///
/// # Safety
///
/// `name` is NULL or a NUL-terminated string.
unsafe fn kind_of(name: *const c_char) -> Result<Kind, c_int> {
    if name.is_null() {
        return Err(OFFLOADKIT_EBADARG);
    }
    // SAFETY: non-NULL and NUL-terminated (caller).
    let name = unsafe { CStr::from_ptr(name) };
    name.to_str()
        .ok()
        .and_then(Kind::from_name)
        .ok_or(OFFLOADKIT_EUNKNOWN)
}

/// Generate into `buf[0..cap]`; the size written or 0.
///
/// # Safety
///
/// As [`offloadkit_generate_malformed`].
unsafe fn generate_into(
    kind: *const c_char,
    rule: Option<*const c_char>,
    release: Option<offload_kit::Release>,
    seed: u64,
    buf: *mut u8,
    cap: usize,
    offset_out: *mut u64,
) -> usize {
    if buf.is_null() || cap == 0 {
        return 0;
    }
    // SAFETY: `kind` is NULL or NUL-terminated (caller).
    let Ok(kind) = (unsafe { kind_of(kind) }) else {
        return 0;
    };
    let malformed = match rule {
        None => None,
        Some(r) if r.is_null() => return 0,
        Some(r) => {
            // SAFETY: non-NULL and NUL-terminated (caller).
            let id = unsafe { CStr::from_ptr(r) };
            match id.to_str().ok().and_then(offload_kit::rules::by_id) {
                Some(r) => Some(*r),
                None => return 0,
            }
        }
    };
    let opts = Options {
        max_size: cap,
        malformed,
        release,
        ..Options::default()
    };
    let Ok(Ok(g)) = catch_unwind(|| generate(kind, seed, &opts)) else {
        return 0;
    };
    // SAFETY: `buf` is non-NULL with `cap` writable bytes (caller), and
    // the generator kept within `cap`.
    let out = unsafe { std::slice::from_raw_parts_mut(buf, cap) };
    out[..g.bytes.len()].copy_from_slice(&g.bytes);
    if let (Some(v), false) = (&g.violation, offset_out.is_null()) {
        // SAFETY: non-NULL and writable (caller).
        unsafe { offset_out.write(v.offset) };
    }
    g.bytes.len()
}

/// As [`offloadkit_generate`], but every entry carries one of the images in
/// the directory `payload_dir` (a user's own `.hsaco` files, cubins, x86-64
/// shared objects, SPIR-V modules), its entry ID or triple and arch made to
/// match the image's ELF header; the directory is read on each call. Returns
/// 0 as [`offloadkit_generate`] does, and when `payload_dir` is NULL, not
/// UTF-8, empty, unreadable, or holds a file that is no device image (or
/// `OFFLOAD_KIT_MAX_MEMORY` is not a size).
///
/// # Safety
///
/// `kind` and `payload_dir` are NULL or NUL-terminated; `buf` points to
/// `cap` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn offloadkit_generate_with_payloads(
    kind: *const c_char,
    payload_dir: *const c_char,
    seed: u64,
    buf: *mut u8,
    cap: usize,
) -> usize {
    if payload_dir.is_null() || buf.is_null() || cap == 0 {
        return 0;
    }
    // SAFETY: non-NULL and NUL-terminated (caller).
    let Ok(dir) = (unsafe { CStr::from_ptr(payload_dir) }).to_str() else {
        return 0;
    };
    // SAFETY: `kind` is NULL or NUL-terminated (caller).
    let Ok(kind) = (unsafe { kind_of(kind) }) else {
        return 0;
    };
    let Some(budget) = budget() else {
        return 0;
    };
    let made = catch_unwind(|| {
        let given = offload_kit::generate::payloads_from_dir(
            std::path::Path::new(dir),
            cap,
            budget.bytes(),
        )?;
        let opts = Options {
            max_size: cap,
            payloads: offload_kit::generate::Payloads::Given(given),
            ..Options::default()
        };
        generate(kind, seed, &opts)
    });
    let Ok(Ok(g)) = made else {
        return 0;
    };
    // SAFETY: `buf` is non-NULL with `cap` writable bytes (caller), and
    // the generator kept within `cap`.
    let out = unsafe { std::slice::from_raw_parts_mut(buf, cap) };
    out[..g.bytes.len()].copy_from_slice(&g.bytes);
    g.bytes.len()
}

/// Write a valid container of `kind` (`binary`, `text`, `object`,
/// `fatbin`, `ccob`, `offload-binary`, `archive`, `kpack`) made from `seed` into
/// `buf`, at most `cap` bytes; return its size, or 0 when `kind` is NULL or
/// unknown, `buf` is NULL, `cap` is 0, or no file of that kind fits.
///
/// # Safety
///
/// `kind` is NULL or NUL-terminated; `buf` points to `cap` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn offloadkit_generate(
    kind: *const c_char,
    seed: u64,
    buf: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { generate_into(kind, None, None, seed, buf, cap, std::ptr::null_mut()) }
}

/// As [`offloadkit_generate`], but only what LLVM release `llvm_version`
/// (13, 14, 15, 16, 19, 22 or 23; 24 for main, whose version is 24.0.0git) reads: offload
/// binaries of version 1 for 15-22, 1 and 2 for 23, compressed bundles of the versions it reads. Returns
/// 0 also for another release number, or a kind the release reads none of.
///
/// # Safety
///
/// `kind` is NULL or NUL-terminated; `buf` points to `cap` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn offloadkit_generate_for_release(
    kind: *const c_char,
    llvm_version: u32,
    seed: u64,
    buf: *mut u8,
    cap: usize,
) -> usize {
    let Some(release) = offload_kit::Release::MODELLED
        .into_iter()
        .find(|r| r.major() == llvm_version)
    else {
        return 0;
    };
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        generate_into(
            kind,
            None,
            Some(release),
            seed,
            buf,
            cap,
            std::ptr::null_mut(),
        )
    }
}

/// As [`offloadkit_generate`], but the file breaks exactly the spec rule
/// `rule` (e.g. `"BIN-7"`), which `offloadkit_validate` reports at the
/// offset stored in `offset_out` (may be NULL). Returns 0 also when the
/// kind cannot break that rule.
///
/// # Safety
///
/// `kind` and `rule` are NULL or NUL-terminated; `buf` points to `cap`
/// writable bytes; `offset_out` is NULL or points to a `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn offloadkit_generate_malformed(
    kind: *const c_char,
    rule: *const c_char,
    seed: u64,
    buf: *mut u8,
    cap: usize,
    offset_out: *mut u64,
) -> usize {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { generate_into(kind, Some(rule), None, seed, buf, cap, offset_out) }
}

/// The files written beside what [`offloadkit_generate`]`(kind, seed, _,
/// max_size)` makes: for `kpack`, the split's archives (the host it makes
/// names them by its search path, relative to its own directory; the other
/// kinds have none). Returns the size of file `index` (from 0), writing
/// its bytes into `buf` and its file name, NUL-terminated, into `name` only
/// when both fit (`cap` at least the size, `name_cap` more than the name's
/// length, which is under 128 bytes): call with `cap` 0 to learn the size.
/// When they do not fit, `name` (if `name_cap` > 0) is set to the empty
/// string: an empty name means nothing was written. Returns 0 when there
/// is no file `index`, `kind` is NULL or unknown, or generation fails.
///
/// # Safety
///
/// `kind` is NULL or NUL-terminated; `name` points to `name_cap` writable
/// bytes and `buf` to `cap` (either may be NULL when its capacity is 0).
#[no_mangle]
pub unsafe extern "C" fn offloadkit_generate_companion(
    kind: *const c_char,
    seed: u64,
    max_size: usize,
    index: usize,
    name: *mut c_char,
    name_cap: usize,
    buf: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: `kind` is NULL or NUL-terminated (caller).
    let Ok(kind) = (unsafe { kind_of(kind) }) else {
        return 0;
    };
    let opts = Options {
        max_size,
        ..Options::default()
    };
    let Ok(Ok(g)) = catch_unwind(|| generate(kind, seed, &opts)) else {
        return 0;
    };
    let Some((file, bytes)) = g.companions.get(index) else {
        return 0;
    };
    let fits = !buf.is_null() && cap >= bytes.len() && !name.is_null() && name_cap > file.len();
    if !fits && !name.is_null() && name_cap > 0 {
        // SAFETY: `name` is non-NULL with `name_cap` > 0 writable bytes
        // (caller): an empty name says nothing was written.
        unsafe { name.write(0) };
    }
    if fits {
        // SAFETY: `buf` is non-NULL with `cap` ≥ the size writable bytes,
        // `name` non-NULL with `name_cap` > the name's length (caller).
        let (out, text) = unsafe {
            (
                std::slice::from_raw_parts_mut(buf, cap),
                std::slice::from_raw_parts_mut(name.cast::<u8>(), name_cap),
            )
        };
        out[..bytes.len()].copy_from_slice(bytes);
        text[..file.len()].copy_from_slice(file.as_bytes());
        text[file.len()] = 0;
    }
    bytes.len()
}

/// What `data[0..size]` holds down to each code object, as JSON: the
/// file's member of `offload-kit inspect --json`'s document without its
/// name (Python's `inspect_file` gives the same report): `{"report": …}`
/// (schema offload-kit-inspect/1; what clang 14-16 wrote is read, its
/// violations as `warnings`), `{"kpack_archive": …}` for a kpack archive,
/// or `{"errors": [{"rule", "offset", "message"}, …]}` when it cannot be
/// read. A split host's archives are not followed (bytes have no directory
/// to search from): its own report. At most `OFFLOAD_KIT_MAX_MEMORY` (else
/// 256 MiB) of decoded data.
///
/// Stores the document's length (without the NUL) in `len_out`, and writes
/// the document, NUL-terminated, into `json` only when `cap` is more than
/// that length (else, with `cap` > 0, the empty string): call with `cap` 0
/// to size a buffer. Returns 0 with a
/// report, 1 with errors, [`OFFLOADKIT_EBADARG`] when `data` is NULL (with
/// `size > 0`), `len_out` is NULL, `json` is NULL with `cap > 0`, or the
/// variable is not a size; [`OFFLOADKIT_EINTERNAL`] if offload-kit fails
/// inside.
///
/// # Safety
///
/// `data` must point to `size` readable bytes (or be NULL with `size` 0),
/// `json` to `cap` writable bytes (or be NULL with `cap` 0), `len_out` to
/// a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn offloadkit_inspect(
    data: *const u8,
    size: usize,
    json: *mut c_char,
    cap: usize,
    len_out: *mut usize,
) -> c_int {
    let answer = |input: &[u8], opts| match offload_kit::inspect::inspect_any(input, opts) {
        Ok(found) => serde_json::to_string(&found).map(|d| (0, d)),
        Err(es) => errors_json(es).map(|d| (1, d)),
    };
    // SAFETY: the caller's guarantees, passed on.
    unsafe { buffer_answer((data, size), answer, json, cap, len_out) }
}

/// `answer` for `data[0..size]`, as [`json_answer`] writes it; the
/// arguments checked first (NULL `data` with `size > 0`, NULL `json` with
/// `cap > 0`, NULL `len_out`: [`OFFLOADKIT_EBADARG`]).
///
/// # Safety
///
/// `data` points to `size` readable bytes (or is NULL), and as [`write_json`].
unsafe fn buffer_answer(
    (data, size): (*const u8, usize),
    answer: impl FnOnce(&[u8], offload_kit::inspect::Options) -> serde_json::Result<(c_int, String)>
        + std::panic::UnwindSafe,
    json: *mut c_char,
    cap: usize,
    len_out: *mut usize,
) -> c_int {
    if (data.is_null() && size > 0) || (json.is_null() && cap > 0) || len_out.is_null() {
        return OFFLOADKIT_EBADARG;
    }
    // SAFETY: `size` readable bytes at `data`, non-NULL unless `size` is 0
    // (checked; caller).
    let input = unsafe { input(data, size) };
    // SAFETY: the caller's guarantees for `json`, `cap` and `len_out`.
    unsafe { json_answer(|opts| answer(input, opts), json, cap, len_out) }
}

/// `answer`'s JSON document (status and text) for the call's reading
/// options, written by [`write_json`]; the status, [`OFFLOADKIT_EBADARG`]
/// for a malformed `OFFLOAD_KIT_MAX_MEMORY`, [`OFFLOADKIT_EINTERNAL`] when
/// offload-kit fails inside.
///
/// # Safety
///
/// As [`write_json`].
unsafe fn json_answer(
    answer: impl FnOnce(offload_kit::inspect::Options) -> serde_json::Result<(c_int, String)>
        + std::panic::UnwindSafe,
    json: *mut c_char,
    cap: usize,
    len_out: *mut usize,
) -> c_int {
    let Some(budget) = budget() else {
        return OFFLOADKIT_EBADARG;
    };
    // What clang 14-16 wrote is read, as the CLI and Python read it.
    let opts = offload_kit::inspect::Options {
        strict: false,
        budget,
    };
    let Ok(Ok((status, doc))) = catch_unwind(|| answer(opts)) else {
        return OFFLOADKIT_EINTERNAL;
    };
    // SAFETY: the caller's guarantees for `json`, `cap` and `len_out`.
    unsafe { write_json(&doc, json, cap, len_out) };
    status
}

/// The entries of `data[0..size]`, as JSON: `offload-kit list --json`'s
/// document (schema offload-kit-list/1; a kpack archive's code objects
/// without `kpack.file`, bytes having no name; a split host's own
/// entries, its archives not followed), strictly by spec/, or
/// `{"errors": [...]}` when it does not conform. Returns and sizes as
/// [`offloadkit_inspect`] does: 0 with the entries, 1 with errors.
///
/// # Safety
///
/// As [`offloadkit_inspect`].
#[no_mangle]
pub unsafe extern "C" fn offloadkit_list(
    data: *const u8,
    size: usize,
    json: *mut c_char,
    cap: usize,
    len_out: *mut usize,
) -> c_int {
    let answer = |input: &[u8], opts: offload_kit::inspect::Options| {
        let strict = offload_kit::detect::ListOptions::new(None, opts.budget);
        match offload_kit::inspect::list_doc::list_document(input, strict, None) {
            // Through a value: its keys sorted, as the CLI's.
            Ok(doc) => serde_json::to_value(&doc)
                .and_then(|v| serde_json::to_string(&v))
                .map(|d| (0, d)),
            Err(es) => errors_json(es).map(|d| (1, d)),
        }
    };
    // SAFETY: the caller's guarantees, passed on.
    unsafe { buffer_answer((data, size), answer, json, cap, len_out) }
}

/// Store `doc`'s length in `len_out`, and write it NUL-terminated into
/// `json` when `cap` is more than that length (else, with `cap` > 0, the
/// empty string).
///
/// # Safety
///
/// `json` points to `cap` writable bytes (or `cap` is 0); `len_out` is
/// non-NULL and writable.
unsafe fn write_json(doc: &str, json: *mut c_char, cap: usize, len_out: *mut usize) {
    // SAFETY: `len_out` is non-NULL and writable (caller).
    unsafe { len_out.write(doc.len()) };
    if cap > doc.len() {
        // SAFETY: `json` is non-NULL with `cap` writable bytes (caller).
        let out = unsafe { std::slice::from_raw_parts_mut(json.cast::<u8>(), cap) };
        out[..doc.len()].copy_from_slice(doc.as_bytes());
        out[doc.len()] = 0;
    } else if cap > 0 {
        // SAFETY: as above; too small for the document, it holds "".
        unsafe { json.write(0) };
    }
}

/// `{"errors": [...]}` of `es`, each with its rule, offset and message.
fn errors_json(es: impl Into<Vec<offload_kit::Error>>) -> serde_json::Result<String> {
    let es: Vec<offload_kit::Error> = es.into();
    serde_json::to_string(&serde_json::json!({ "errors": es }))
}

/// Which code object the HIP runtime would load from `data[0..size]` on a
/// GPU of target ID `gpu` (`gfx90a:xnack+`), as JSON: the verdict
/// `offload-kit check --json` and Python's `check` give for it (`gpu`,
/// `runs`, `bundles` with `entry`/`pick` or `why_not`; for a kpack archive
/// `gpu`, `runs`, `found`), or `{"errors": [...]}` when the file cannot be
/// read. What clang 14-16 wrote is read. A split host's code objects are in
/// archives found from its path: refused with HIPK-2 (check it by path
/// with the CLI or Python).
///
/// Returns and sizes as [`offloadkit_inspect`] does: 0 with a verdict, 1
/// with errors; [`OFFLOADKIT_EBADARG`] also for a NULL `gpu` or one that
/// is no target ID.
///
/// # Safety
///
/// As [`offloadkit_inspect`]; `gpu` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn offloadkit_check(
    data: *const u8,
    size: usize,
    gpu: *const c_char,
    json: *mut c_char,
    cap: usize,
    len_out: *mut usize,
) -> c_int {
    if gpu.is_null() {
        return OFFLOADKIT_EBADARG;
    }
    // SAFETY: non-NULL and NUL-terminated (caller).
    let gpu = unsafe { CStr::from_ptr(gpu) };
    let Some(gpu) = gpu
        .to_str()
        .ok()
        .and_then(|g| offload_kit::inspect::check::Gpu::parse(g).ok())
    else {
        return OFFLOADKIT_EBADARG;
    };
    let answer = |input: &[u8], opts| {
        let host = offload_kit::inspect::split_host::split_host(input);
        if let Some(Err(es)) = host {
            return errors_json(es).map(|d| (1, d));
        }
        if host.is_some() {
            let e = offload_kit::Error::rule(
                offload_kit::rules::HIPK_2,
                "a split host (HIPK): its code objects are in kpack archives found from its file's directory; check it by its path",
            );
            return errors_json(vec![e]).map(|d| (1, d));
        }
        match offload_kit::inspect::check_any(input, std::slice::from_ref(&gpu), opts) {
            Ok(offload_kit::inspect::Verdicts::Container(v)) => {
                serde_json::to_string(&v[0]).map(|d| (0, d))
            }
            Ok(offload_kit::inspect::Verdicts::KpackArchive(v)) => {
                serde_json::to_string(&v[0]).map(|d| (0, d))
            }
            Err(es) => errors_json(es).map(|d| (1, d)),
        }
    };
    // SAFETY: the caller's guarantees, passed on.
    unsafe { buffer_answer((data, size), answer, json, cap, len_out) }
}
