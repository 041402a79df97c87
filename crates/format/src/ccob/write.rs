//! The compression writers: a CCOB blob byte-identical to LLVM's (same
//! libzstd and zlib, same one-shot calls), or cut into zstd jobs on worker
//! threads.

use super::decode::truncated_md5;
use super::header::encode_header;
use super::Method;
use crate::error::{Error, Result};
use crate::raw::ccob::header_size;
use crate::rules;

/// Options for writing a compressed bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// Format version (1, 2 or 3).
    pub version: u16,
    /// Method.
    pub method: Method,
    /// Compression level.
    pub level: i32,
}

impl Default for WriteOptions {
    /// LLVM 22's defaults: v3, zstd level 3 (long-distance matching on).
    fn default() -> Self {
        WriteOptions {
            version: 3,
            method: Method::Zstd,
            level: 3,
        }
    }
}

/// Compress `bundle` with LLVM's one-shot calls: zstd `ZSTD_compress2`
/// with the level and long-distance matching; zlib `compress2`.
pub fn compress_payload(bundle: &[u8], method: Method, level: i32) -> Result<Vec<u8>> {
    compress_payload_threads(bundle, method, level, 0)
}

/// [`compress_payload`] with `threads` zstd worker threads (0: LLVM's
/// single-threaded call). With workers the frame is cut into jobs, so the
/// bytes differ from LLVM's (still a valid CCOB every release reads); zlib
/// ignores `threads`.
pub fn compress_payload_threads(
    bundle: &[u8],
    method: Method,
    level: i32,
    threads: u32,
) -> Result<Vec<u8>> {
    match method {
        Method::Zstd if threads == 0 => {
            // One context per thread and level, reused: creating one costs
            // more than compressing a small bundle (the fuzzing kit
            // compresses hundreds of thousands). The bytes are the same.
            thread_local! {
                static ZSTD: std::cell::RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
                    const { std::cell::RefCell::new(None) };
            }
            ZSTD.with(|cell| {
                let mut slot = cell.borrow_mut();
                if slot.as_ref().is_none_or(|(l, _)| *l != level) {
                    *slot = Some((level, zstd_compressor(level, 0)?));
                }
                let (_, c) = slot.as_mut().expect("just set");
                Ok(c.compress(bundle)?)
            })
        }
        Method::Zstd => Ok(zstd_compressor(level, threads)?.compress(bundle)?),
        Method::Zlib => {
            // compress2: -1 is Z_DEFAULT_COMPRESSION (6); any other level
            // outside 0..=9 is Z_STREAM_ERROR, which LLVM only asserts
            // against (spec/ccob.md CCOB-8): refuse it.
            let lvl = match level {
                -1 => 6,
                0..=9 => level as u32,
                _ => {
                    return Err(Error::rule(
                        rules::CCOB_8,
                        format!("zlib level {level} is outside -1..9 (compress2 refuses it)"),
                    ))
                }
            };
            let mut z = flate2::Compress::new(flate2::Compression::new(lvl), true);
            let bound = bundle.len() + bundle.len() / 1000 + bundle.len() / 4096 + 64;
            let mut out = Vec::with_capacity(bound);
            z.compress_vec(bundle, &mut out, flate2::FlushCompress::Finish)
                .map_err(|e| Error::other(format!("zlib: {e}")))?;
            Ok(out)
        }
    }
}

/// LLVM's zstd settings: `level`, long-distance matching on.
fn zstd_compressor(level: i32, threads: u32) -> std::io::Result<zstd::bulk::Compressor<'static>> {
    let mut c = zstd::bulk::Compressor::new(level)?;
    c.set_parameter(zstd::zstd_safe::CParameter::EnableLongDistanceMatching(
        true,
    ))?;
    if threads > 0 {
        c.set_parameter(zstd::zstd_safe::CParameter::NbWorkers(threads))?;
    }
    Ok(c)
}

/// Write a CCOB blob for `bundle` (CCOB-8).
pub fn compress(bundle: &[u8], opts: WriteOptions) -> Result<Vec<u8>> {
    compress_threads(bundle, opts, 0)
}

/// [`compress`] with `threads` zstd workers (see [`compress_payload_threads`]).
pub fn compress_threads(bundle: &[u8], opts: WriteOptions, threads: u32) -> Result<Vec<u8>> {
    let (mut out, payload) = compress_parts(bundle, opts, threads)?;
    out.extend_from_slice(&payload);
    Ok(out)
}

/// [`compress_threads`] as two parts, the header and the compressed data,
/// so that a caller writing a file need not join them. The truncated MD5
/// is computed on a second thread while the data is compressed: the same
/// bytes, in the time of the compression alone on a machine with two cores.
pub fn compress_parts(
    bundle: &[u8],
    opts: WriteOptions,
    threads: u32,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let hsize = header_size(opts.version).ok_or_else(|| {
        Error::rule(
            rules::CCOB_8,
            format!("cannot write compressed bundle version {}", opts.version),
        )
    })?;
    // A thread costs more than hashing a small bundle.
    let (payload, hash) = if bundle.len() < 1 << 20 {
        let payload = compress_payload_threads(bundle, opts.method, opts.level, threads);
        (payload, truncated_md5(bundle))
    } else {
        std::thread::scope(|s| {
            let hasher = s.spawn(|| truncated_md5(bundle));
            let payload = compress_payload_threads(bundle, opts.method, opts.level, threads);
            let hash = hasher
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            (payload, hash)
        })
    };
    let payload = payload?;
    let total = hsize + payload.len() as u64;
    let out = encode_header(
        opts.version,
        hsize,
        opts.method,
        total,
        bundle.len() as u64,
        &hash,
    )?;
    Ok((out, payload))
}

/// Length of the compressed data of a blob written by [`compress`]
/// (its length minus the header of its version).
pub fn compress_payload_len(blob: &[u8]) -> usize {
    let v = blob
        .get(4..6)
        .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
    blob.len() - header_size(v).unwrap_or(0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ccob::decompress_strict;

    #[test]
    fn zlib_levels_are_compress2s() {
        let bundle = b"__CLANG_OFFLOAD_BUNDLE__ payload".repeat(20);
        let z = |level| compress_payload(&bundle, Method::Zlib, level);
        assert_eq!(z(-1).unwrap(), z(6).unwrap(), "-1 is Z_DEFAULT_COMPRESSION");
        for bad in [-2, 10, 100] {
            let e = z(bad).unwrap_err();
            assert_eq!(e.rule_id(), Some("CCOB-8"), "level {bad}: {e}");
        }
        assert!(z(0).is_ok() && z(9).is_ok());
    }

    #[test]
    fn round_trip_every_version_and_method() {
        let bundle = b"__CLANG_OFFLOAD_BUNDLE__ some payload bytes, some payload bytes".repeat(10);
        for version in [1, 2, 3] {
            for method in [Method::Zlib, Method::Zstd] {
                let blob = compress(
                    &bundle,
                    WriteOptions {
                        version,
                        method,
                        level: method.default_level(),
                    },
                )
                .unwrap();
                let d = decompress_strict(&blob, 0).unwrap();
                assert_eq!(d.data, bundle);
                assert_eq!(d.header.version, version);
                assert_eq!(d.blob_len, blob.len() as u64);
            }
        }
    }
}
