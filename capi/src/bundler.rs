//! `clang-offload-bundler` in memory: [`offloadkit_bundle`] and
//! [`offloadkit_unbundle`] write the bytes a release's bundler writes to its
//! files, from buffers, as Python's `bundle` and `unbundle` and the
//! `clang-offload-bundler` drop-in do (the library's `bundle_in_memory`
//! and `unbundle_in_memory`); [`offloadkit_compress`] and
//! [`offloadkit_decompress`] its compressed bundles, as Python's
//! `compress` and `decompress` and `offload-kit decompress`.

use crate::{
    budget, errors_json, input, write_json, OFFLOADKIT_EBADARG, OFFLOADKIT_EINTERNAL,
    OFFLOADKIT_EUNKNOWN,
};
use offload_kit::bundle::ccob;
use offload_kit::bundler::{bundle_in_memory, unbundle_in_memory, BundleOptions, UnbundleOptions};
use offload_kit::{LlvmError, Release};
use std::ffi::{c_char, c_int, CStr};
use std::panic::catch_unwind;

/// [`offloadkit_bundler_options`]' `compress`: the compressed bundle
/// version the release writes unless told otherwise.
pub const OFFLOADKIT_COMPRESS_DEFAULT: u32 = u32::MAX;

/// [`offloadkit_unbundle`]: the release opens no file for this target
/// (it writes a later target's file with the same name instead).
pub const OFFLOADKIT_NOT_WRITTEN: c_int = 2;

/// What [`offloadkit_bundle`] and [`offloadkit_unbundle`] are told besides
/// their data: a bundler command line's options.
#[allow(non_camel_case_types)] // a C type, named as C names them
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct offloadkit_bundler_options {
    /// The LLVM release whose bundler is reproduced: 13, 14, 15, 16, 19,
    /// 22 or 23; 24 for main (whose version is 24.0.0git).
    pub llvm_version: u32,
    /// `-type` (`o`, `bc`, `hipi`, ...), NUL-terminated; `a` (archives
    /// unbundle into archives) is refused with status 1: use the drop-in.
    pub file_type: *const c_char,
    /// `-bundle-align` (bundling; 1 where nothing is asked; clang's HIP
    /// driver passes 4096).
    pub align: u32,
    /// Bundling: 0 for a plain bundle, 1 to 3 for a compressed bundle
    /// (CCOB) of that version, [`OFFLOADKIT_COMPRESS_DEFAULT`] for the
    /// release's own (zstd).
    pub compress: u32,
    /// Bundling compressed: the zstd level, 0 for LLVM's default (3); a
    /// level without `compress` is [`OFFLOADKIT_EBADARG`], as Python refuses
    /// it.
    pub level: i32,
    /// Unbundling: nonzero for `-allow-missing-bundles`.
    pub allow_missing: c_int,
}

/// The release `n` numbers, as the C ABI numbers them (main is 24).
fn release_of(n: u32) -> Option<Release> {
    Release::MODELLED.into_iter().find(|r| r.major() == n)
}

/// What a bundler call is told, read and checked: its options, their
/// release and `-type`, the targets and the budget.
struct Call<'a> {
    options: offloadkit_bundler_options,
    release: Release,
    file_type: &'a str,
    targets: Vec<&'a str>,
    budget: offload_kit::budget::Budget,
}

/// The call `options` and `targets[0..count]` describe;
/// [`OFFLOADKIT_EUNKNOWN`] for a release offload-kit does not model,
/// [`OFFLOADKIT_EBADARG`] for NULL options, a NULL type or target, one
/// that is no UTF-8, or a budget variable that is not a size.
///
/// # Safety
///
/// `options` is NULL or points to an options value whose type is NULL or
/// NUL-terminated; `targets` as [`targets_of`] says.
unsafe fn call_of<'a>(
    options: *const offloadkit_bundler_options,
    targets: *const *const c_char,
    count: usize,
) -> Result<Call<'a>, c_int> {
    if options.is_null() {
        return Err(OFFLOADKIT_EBADARG);
    }
    // SAFETY: non-NULL, an options value (caller).
    let o = unsafe { *options };
    let release = release_of(o.llvm_version).ok_or(OFFLOADKIT_EUNKNOWN)?;
    if o.file_type.is_null() {
        return Err(OFFLOADKIT_EBADARG);
    }
    // SAFETY: non-NULL and NUL-terminated (caller).
    let t = unsafe { CStr::from_ptr(o.file_type) };
    Ok(Call {
        options: o,
        release,
        file_type: t.to_str().map_err(|_| OFFLOADKIT_EBADARG)?,
        // SAFETY: `count` targets, each NULL or NUL-terminated (caller).
        targets: unsafe { targets_of(targets, count) }.ok_or(OFFLOADKIT_EBADARG)?,
        budget: budget().ok_or(OFFLOADKIT_EBADARG)?,
    })
}

/// `targets[0..count]` as text; `None` where one is NULL or no UTF-8.
///
/// # Safety
///
/// `targets` points to `count` pointers, each NULL or NUL-terminated.
unsafe fn targets_of<'a>(targets: *const *const c_char, count: usize) -> Option<Vec<&'a str>> {
    if count == 0 {
        return Some(Vec::new());
    }
    if targets.is_null() {
        return None;
    }
    // SAFETY: `count` readable pointers (caller).
    let all = unsafe { std::slice::from_raw_parts(targets, count) };
    (all.iter())
        .map(|&t| {
            // SAFETY: each non-NULL pointer is NUL-terminated (caller).
            (!t.is_null()).then(|| unsafe { CStr::from_ptr(t) }.to_str().ok())?
        })
        .collect()
}

/// `{"errors": [...], "llvm_message": ...}` of a release's failure: the
/// rule and offset offload-kit adds (the message alone where it has
/// none), and the release's own message, as Python's exception carries.
fn llvm_errors_json(e: LlvmError) -> serde_json::Result<String> {
    let detail = (e.detail).unwrap_or_else(|| offload_kit::Error::other(&e.message));
    serde_json::to_string(&serde_json::json!({ "errors": [detail], "llvm_message": e.message }))
}

/// Store the answer's length in `len_out` and write it into `out`: bytes
/// when they fit (`cap` at least their length), an errors document as
/// [`write_json`] writes it.
///
/// # Safety
///
/// `out` points to `cap` writable bytes (or `cap` is 0); `len_out` is
/// non-NULL and writable.
unsafe fn write_answer(answer: &Answer, out: *mut u8, cap: usize, len_out: *mut usize) -> c_int {
    match answer {
        Answer::Bytes(status, bytes) => {
            // SAFETY: `len_out` is non-NULL and writable (caller).
            unsafe { len_out.write(bytes.len()) };
            if cap >= bytes.len() && !bytes.is_empty() {
                // SAFETY: `out` is non-NULL with `cap` >= `bytes.len()`
                // writable bytes (caller), which `bytes` does not overlap.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len()) };
            }
            *status
        }
        Answer::Errors(doc) => {
            // SAFETY: the caller's guarantees for `out`, `cap`, `len_out`.
            unsafe { write_json(doc, out.cast(), cap, len_out) };
            1
        }
    }
}

/// Whether a call's buffers are given as the C ABI asks: input bytes
/// (NULL only when empty), an output (NULL only with no capacity) and the
/// answer's length.
fn buffers_given(
    (data, size): (*const u8, usize),
    out: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> bool {
    !(len_out.is_null() || (out.is_null() && cap > 0) || (data.is_null() && size > 0))
}

/// The status of a call whose `answer` was caught (a panic inside, or a
/// document that could not be made: [`OFFLOADKIT_EINTERNAL`]), the answer
/// written by [`write_answer`].
///
/// # Safety
///
/// As [`write_answer`].
unsafe fn answered(
    answer: std::thread::Result<serde_json::Result<Answer>>,
    out: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> c_int {
    let Ok(Ok(answer)) = answer else {
        return OFFLOADKIT_EINTERNAL;
    };
    // SAFETY: the caller's guarantees for `out`, `cap` and `len_out`.
    unsafe { write_answer(&answer, out, cap, len_out) }
}

/// A bundler call's answer: a status with its bytes, or an errors document.
enum Answer {
    Bytes(c_int, Vec<u8>),
    Errors(String),
}

/// The bundle `clang-offload-bundler -type=… -targets=… -bundle-align=…
/// [-compress]` of `options->llvm_version` writes for `count` entries:
/// entry `i` is target `targets[i]` (`host-x86_64-unknown-linux-gnu`,
/// `hip-amdgcn-amd-amdhsa--gfx906`, ...) with the payload
/// `payloads[i][0..sizes[i]]`. The release's checks of the targets and
/// type in its order; the drop-in's bytes. What the bundle's own bytes
/// (header, padding) take is within `OFFLOAD_KIT_MAX_MEMORY` (else 256
/// MiB; CLI-6).
///
/// Returns 0 with the bundle: its size in `len_out`, its bytes in `out`
/// when `cap` is at least that size (call with `cap` 0 to learn it). Returns
/// 1 when the release refuses: `out` then holds (when `cap` is more than
/// `len`, for its NUL), sized and written as
/// [`offloadkit_inspect`](crate::offloadkit_inspect)'s document,
/// `{"errors": [{"rule", "offset", "message"}], "llvm_message": …}` (the
/// release's own message). [`OFFLOADKIT_EUNKNOWN`] for a release
/// offload-kit does not model; [`OFFLOADKIT_EBADARG`] for NULL `options`,
/// type, `len_out` or target, a target or type that is no UTF-8, a NULL
/// payload with a size, NULL `out` with `cap` > 0, a compressed bundle
/// version over 3, or a variable that is not a size;
/// [`OFFLOADKIT_EINTERNAL`] if offload-kit fails inside.
///
/// # Safety
///
/// `targets`, `payloads` and `sizes` point to `count` elements each (or
/// are NULL with `count` 0); each target is NUL-terminated, each payload
/// points to its size's readable bytes; `options` points to an
/// [`offloadkit_bundler_options`] whose type is NUL-terminated; `out` to
/// `cap` writable bytes (or NULL with `cap` 0); `len_out` to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn offloadkit_bundle(
    targets: *const *const c_char,
    payloads: *const *const u8,
    sizes: *const usize,
    count: usize,
    options: *const offloadkit_bundler_options,
    out: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> c_int {
    if !buffers_given((std::ptr::null(), 0), out, cap, len_out) {
        return OFFLOADKIT_EBADARG;
    }
    // SAFETY: the caller's guarantees for `options` and `targets`.
    let call = match unsafe { call_of(options, targets, count) } {
        Ok(call) => call,
        Err(code) => return code,
    };
    if count > 0 && (payloads.is_null() || sizes.is_null()) {
        return OFFLOADKIT_EBADARG;
    }
    let mut entries = Vec::with_capacity(count);
    for (i, name) in call.targets.iter().enumerate() {
        // SAFETY: `payloads` and `sizes` hold `count` elements (caller).
        let (p, n) = unsafe { (*payloads.add(i), *sizes.add(i)) };
        if p.is_null() && n > 0 {
            return OFFLOADKIT_EBADARG;
        }
        // SAFETY: `n` readable bytes at `p`, or `n` is 0 (caller).
        entries.push((*name, unsafe { input(p, n) }));
    }
    let (o, release) = (call.options, call.release);
    let compress = match o.compress {
        0 if o.level != 0 => return OFFLOADKIT_EBADARG,
        0 => None,
        v @ (1..=3 | OFFLOADKIT_COMPRESS_DEFAULT) => Some(ccob::WriteOptions {
            version: u16::try_from(v).unwrap_or(release.ccob_default_version()),
            method: ccob::Method::Zstd,
            level: if o.level == 0 {
                ccob::Method::Zstd.default_level()
            } else {
                o.level
            },
        }),
        _ => return OFFLOADKIT_EBADARG,
    };
    let opts = BundleOptions {
        release,
        file_type: call.file_type,
        align: u64::from(o.align),
        compress,
        budget: call.budget,
    };
    let answer = catch_unwind(|| match bundle_in_memory(&entries, opts) {
        Ok(bytes) => Ok(Answer::Bytes(0, bytes)),
        Err(e) => llvm_errors_json(e).map(Answer::Errors),
    });
    // SAFETY: the caller's guarantees for `out`, `cap` and `len_out`.
    unsafe { answered(answer, out, cap, len_out) }
}

/// What `clang-offload-bundler -unbundle -type=… -targets=…` of
/// `options->llvm_version` writes to the output file of `targets[index]`
/// when unbundling `data[0..size]` for all `count` targets: the release's
/// checks in its order (every target found unless `allow_missing`, the
/// host's bundle), its decompression, its errors; the drop-in's bytes. The
/// outputs (with a decompressed input) are within `OFFLOAD_KIT_MAX_MEMORY`
/// (else 256 MiB; CLI-6). Each call unbundles anew: ask for each index.
///
/// Returns 0 with that output: its size in `len_out`, its bytes in `out`
/// when `cap` is at least that size (call with `cap` 0 to learn it);
/// [`OFFLOADKIT_NOT_WRITTEN`] (size 0) where the release opens no file for
/// that target; 1 when the release refuses, with the errors document of
/// [`offloadkit_bundle`] in `out`. [`OFFLOADKIT_EUNKNOWN`] for a release
/// offload-kit does not model; [`OFFLOADKIT_EBADARG`] for `index` not
/// under `count`, NULL `data` with `size` > 0, and as
/// [`offloadkit_bundle`]; [`OFFLOADKIT_EINTERNAL`] if offload-kit fails
/// inside.
///
/// # Safety
///
/// `data` points to `size` readable bytes (or is NULL with `size` 0);
/// `targets` to `count` NUL-terminated strings; `options`, `out` and
/// `len_out` as [`offloadkit_bundle`] says.
#[no_mangle]
pub unsafe extern "C" fn offloadkit_unbundle(
    data: *const u8,
    size: usize,
    targets: *const *const c_char,
    count: usize,
    index: usize,
    options: *const offloadkit_bundler_options,
    out: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> c_int {
    if !buffers_given((data, size), out, cap, len_out) || index >= count {
        return OFFLOADKIT_EBADARG;
    }
    // SAFETY: the caller's guarantees for `options` and `targets`.
    let call = match unsafe { call_of(options, targets, count) } {
        Ok(call) => call,
        Err(code) => return code,
    };
    let opts = UnbundleOptions {
        release: call.release,
        file_type: call.file_type,
        allow_missing: call.options.allow_missing != 0,
        budget: call.budget,
    };
    // SAFETY: `size` readable bytes at `data`, non-NULL unless `size` is 0
    // (checked; caller).
    let data = unsafe { input(data, size) };
    let answer = catch_unwind(|| match unbundle_in_memory(data, &call.targets, opts) {
        Ok(mut outputs) => Ok(match outputs.get_mut(index).map(Option::take) {
            Some(Some(bytes)) => Answer::Bytes(0, bytes),
            _ => Answer::Bytes(OFFLOADKIT_NOT_WRITTEN, Vec::new()),
        }),
        Err(e) => llvm_errors_json(e).map(Answer::Errors),
    });
    // SAFETY: the caller's guarantees for `out`, `cap` and `len_out`.
    unsafe { answered(answer, out, cap, len_out) }
}

/// A compressed bundle (CCOB) of `data[0..size]`, as Python's `compress`
/// writes it: format `version` 1, 2 or 3, `method` `"zstd"` or `"zlib"`
/// (NULL: zstd), `level` 0 for the method's default (zstd 3, zlib 6); with
/// the defaults, LLVM 22's bytes.
///
/// Returns 0 with the compressed bundle, sized and written as
/// [`offloadkit_bundle`]'s; 1 with `{"errors": [...]}` in `out` (a version
/// offload-kit does not write, CCOB-2); [`OFFLOADKIT_EBADARG`] for NULL
/// `data` with `size` > 0, NULL `out` with `cap` > 0, NULL `len_out`, or a
/// method that is neither; [`OFFLOADKIT_EINTERNAL`] if offload-kit fails
/// inside.
///
/// # Safety
///
/// `data` points to `size` readable bytes (or is NULL with `size` 0);
/// `method` is NULL or NUL-terminated; `out` and `len_out` as
/// [`offloadkit_bundle`] says.
#[no_mangle]
pub unsafe extern "C" fn offloadkit_compress(
    data: *const u8,
    size: usize,
    version: u32,
    method: *const c_char,
    level: i32,
    out: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> c_int {
    if !buffers_given((data, size), out, cap, len_out) {
        return OFFLOADKIT_EBADARG;
    }
    let method = if method.is_null() {
        ccob::Method::Zstd
    } else {
        // SAFETY: non-NULL and NUL-terminated (caller).
        match unsafe { CStr::from_ptr(method) }.to_bytes() {
            b"zstd" => ccob::Method::Zstd,
            b"zlib" => ccob::Method::Zlib,
            _ => return OFFLOADKIT_EBADARG,
        }
    };
    let opts = ccob::WriteOptions {
        version: u16::try_from(version).unwrap_or(u16::MAX),
        method,
        level: if level == 0 {
            method.default_level()
        } else {
            level
        },
    };
    // SAFETY: `size` readable bytes at `data`, non-NULL unless `size` is 0
    // (checked; caller).
    let data = unsafe { input(data, size) };
    let answer = catch_unwind(|| match ccob::compress(data, opts) {
        Ok(bytes) => Ok(Answer::Bytes(0, bytes)),
        Err(e) => errors_json(vec![e]).map(Answer::Errors),
    });
    // SAFETY: the caller's guarantees for `out`, `cap` and `len_out`.
    unsafe { answered(answer, out, cap, len_out) }
}

/// The bundle that `data[0..size]` holds when it is one compressed bundle
/// (CCOB) and nothing else, its sizes and hash verified: what `offload-kit
/// decompress` writes and Python's `decompress` returns (the library's
/// `decompress_single`). The bundle is held within
/// `OFFLOAD_KIT_MAX_MEMORY` (else 256 MiB; a header claiming more is
/// refused with CLI-6 before decoding); asking the size decodes it too.
///
/// Returns 0 with the bundle, sized and written as [`offloadkit_bundle`]'s;
/// 1 with `{"errors": [...]}` in `out`; [`OFFLOADKIT_EBADARG`] as
/// [`offloadkit_compress`], or for a variable that is not a size;
/// [`OFFLOADKIT_EINTERNAL`] if offload-kit fails inside.
///
/// # Safety
///
/// As [`offloadkit_compress`].
#[no_mangle]
pub unsafe extern "C" fn offloadkit_decompress(
    data: *const u8,
    size: usize,
    out: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> c_int {
    if !buffers_given((data, size), out, cap, len_out) {
        return OFFLOADKIT_EBADARG;
    }
    let Some(budget) = budget() else {
        return OFFLOADKIT_EBADARG;
    };
    // SAFETY: `size` readable bytes at `data`, non-NULL unless `size` is 0
    // (checked; caller).
    let data = unsafe { input(data, size) };
    let answer = catch_unwind(|| {
        let mut bundle = Vec::new();
        match ccob::decompress_single(data, Some(budget), &mut bundle) {
            Ok(_) => Ok(Answer::Bytes(0, bundle)),
            Err(e) => errors_json(vec![e]).map(Answer::Errors),
        }
    });
    // SAFETY: the caller's guarantees for `out`, `cap` and `len_out`.
    unsafe { answered(answer, out, cap, len_out) }
}
