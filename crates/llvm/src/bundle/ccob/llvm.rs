//! What each LLVM release makes of a compressed input: the header checks
//! of `CompressedOffloadBundle::decompress` (16 reads no CCOB, 19 knows no
//! v3), its messages, the one-shot zstd and zlib calls, and the streamed
//! listing and extraction that agree with them.

use super::{
    copy_big, decode_into, is_ccob, zstd_frame_extent, Header, Method, Sink, Tap, STREAM_CHUNK,
};
use crate::budget::Budget;
use crate::bundle::binary;
use crate::error::Error;
use crate::format::ccob::{header_size, Layout, LAYOUTS, METHOD_ZLIB, METHOD_ZSTD};
use crate::profile::Release;
use crate::rules;
use crate::source::{Prefix, Reader, Source};
use std::io::Read;

/// What an LLVM release makes of a buffer that may be compressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlvmDecompress {
    /// Not compressed as far as this release can tell: use the bytes as they are.
    Plain,
    /// Decompressed bytes.
    Data(Vec<u8>),
    /// The release fails with this message (after `Failed to decompress input: `).
    Fails(String, Error),
}

/// Claims above this size make LLVM's up-front allocation fail (observed
/// from 2^35 up on the 24 GiB reference machine: `LLVM ERROR: out of
/// memory`, SIGABRT; the threshold depends on the machine's memory).
pub const LLVM_ALLOCATION_LIMIT: u64 = 1 << 35;

/// The header fields a release uses to decompress, or what it makes of
/// the buffer when it does not get that far.
struct LlvmPrepared {
    method: Method,
    claimed: u64,
    hsize: usize,
    /// Offset of the uncompressed-size field.
    field: u64,
    /// End of the compressed data: the end of the buffer, or for `main`
    /// the header's total size where it lies between the header and the
    /// end ([`main_payload_end`]).
    end: usize,
}

/// Where `main`'s `CompressedOffloadBundle::decompress` ends the
/// compressed data: `Blob.substr(HeaderSize, TotalFileSize - HeaderSize)`
/// with `size_t` operands, so a total size below the header size wraps and
/// `substr` clamps it to the rest of the blob (spec/ccob.md, CCOB-4,
/// *LLVM main*). v1 has no total size: 0, the rest of the blob.
fn main_payload_end(data: &[u8], version: u16, hsize: usize) -> usize {
    let total = total_size_field(data, version).unwrap_or(0);
    let len = (total as usize).wrapping_sub(hsize);
    hsize + len.min(data.len() - hsize)
}

/// The total-size field of a header of `version` at the start of `data`
/// (which holds the whole header): v2's 32 bits or v3's 64 at offset 8,
/// `None` for versions without one.
fn total_size_field(data: &[u8], version: u16) -> Option<u64> {
    Layout::of(version)?.total_size?.read(data)
}

/// The shortest buffer `release`'s `decompress` looks at (shorter ones are
/// kept as they are): 20 bytes in 19, 8 in 22 and main; `None` before 19,
/// which has no compressed bundles.
fn compressed_min_len(release: Release) -> Option<usize> {
    release.quirks().ccob_min_len
}

/// The header part of [`llvm_decompress`]: everything the release checks
/// before calling the decompressor.
fn llvm_prepare(
    data: &[u8],
    release: Release,
) -> std::result::Result<LlvmPrepared, LlvmDecompress> {
    match compressed_min_len(release) {
        Some(min) if is_ccob(data) && data.len() >= min => {}
        _ => return Err(LlvmDecompress::Plain),
    }
    let fail = |m: &str, e: Error| Err(LlvmDecompress::Fails(llvm_text(release, m), e));
    let version = u16::from_le_bytes([data[4], data[5]]);
    let method = u16::from_le_bytes([data[6], data[7]]);
    let q = release.quirks();
    let hsize = match version {
        // 19 reads a total size only for versions >= 2 and knows no v3.
        v if q.ccob_header_v1_or_v2 && v < 2 => 20,
        _ if q.ccob_header_v1_or_v2 => 24,
        // A version the release does not read is unknown to it, whatever
        // the spec's table holds.
        v => match header_size(v).filter(|_| q.ccob_versions_read.contains(&v)) {
            Some(h) => h as usize,
            // main's getHeaderSize runs before tryParse's check of the
            // version and ends in llvm_unreachable: undefined behaviour in
            // a release build, not reproduced.
            None if release.quirks().main_ccob_reader => {
                return Err(LlvmDecompress::Fails(
                    "LLVM main reaches llvm_unreachable(\"Unsupported version\") in getHeaderSize (undefined behaviour)".into(),
                    Error::at(rules::CCOB_2, 4, format!("unknown version {version}")),
                ))
            }
            None => {
                return fail(
                    "Compressed bundle header size too small",
                    Error::at(rules::CCOB_2, 4, format!("unknown version {version}")),
                )
            }
        },
    };
    if data.len() < hsize {
        return fail(
            "Compressed bundle header size too small",
            Error::at(rules::CCOB_2, data.len() as u64, "header truncated"),
        );
    }
    // A release reads the fields of the header size it settled on (19
    // reads a v3 header as v2's).
    let read_as = LAYOUTS
        .into_iter()
        .find(|l| l.size == hsize as u64)
        .expect("a known header size");
    let usize_off = read_as.uncompressed_size.at as usize;
    let claimed = read_as
        .uncompressed_size
        .read(data)
        .expect("the header is whole");
    let m = match method {
        METHOD_ZLIB => Method::Zlib,
        METHOD_ZSTD => Method::Zstd,
        _ => {
            return fail(
                "Unknown compressing method",
                Error::at(rules::CCOB_3, 6, format!("method {method}")),
            )
        }
    };
    let field = usize_off as u64;
    let end = if release.quirks().main_ccob_reader {
        main_payload_end(data, version, hsize)
    } else {
        data.len()
    };
    if claimed > LLVM_ALLOCATION_LIMIT {
        return fail(
            "LLVM ERROR: out of memory",
            Error::at(
                rules::CCOB_6,
                field,
                format!(
                    "the header claims {claimed} uncompressed bytes; LLVM {release} allocates the claim up front and aborts out of memory"
                ),
            ),
        );
    }
    Ok(LlvmPrepared {
        method: m,
        claimed,
        hsize,
        field,
        end,
    })
}

/// A message of clang's `CompressedOffloadBundle` as `release` words it:
/// main uses the copy in `llvm/lib/Object/OffloadBundle.cpp`, whose
/// messages start in lower case.
fn llvm_text(release: Release, m: &str) -> String {
    if release.quirks().main_ccob_reader && !m.starts_with("LLVM") {
        let mut c = m.chars();
        c.next()
            .map(|f| f.to_lowercase().chain(c).collect())
            .unwrap_or_default()
    } else {
        m.to_string()
    }
}

/// Model of `CompressedOffloadBundle::decompress` for `release`, within
/// the default memory budget ([`llvm_decompress_within`] takes one).
pub fn llvm_decompress(data: &[u8], release: Release) -> LlvmDecompress {
    llvm_decompress_within(data, release, Budget::default())
}

/// [`llvm_decompress`] holding at most `budget` of decoded data: past it,
/// CLI-6 where LLVM would hold the whole bundle.
pub fn llvm_decompress_within(data: &[u8], release: Release, budget: Budget) -> LlvmDecompress {
    let LlvmPrepared {
        method: m,
        claimed,
        hsize,
        field,
        end,
    } = match llvm_prepare(data, release) {
        Ok(p) => p,
        Err(outcome) => return outcome,
    };
    let fail = |m: &str, e: Error| LlvmDecompress::Fails(llvm_text(release, m), e);
    let payload = &data[hsize..end];
    let lib_fail = |lib: String, rule: crate::rules::Rule, at: u64, what: &str| {
        fail(
            &format!("Could not decompress embedded file contents: {lib}"),
            Error::at(rule, at, what.to_string()),
        )
    };
    match m {
        Method::Zstd => match zstd_one_shot(payload, claimed, budget) {
            Ok(out) => LlvmDecompress::Data(out),
            Err(name) if name == OVER_BUDGET => over_budget(release, hsize, budget),
            Err(name) => lib_fail(
                name.clone(),
                if name.contains("buffer is too small") {
                    rules::CCOB_6
                } else {
                    rules::CCOB_5
                },
                if name.contains("buffer is too small") {
                    field
                } else {
                    hsize as u64
                },
                &format!("ZSTD_decompress: {name}"),
            ),
        },
        Method::Zlib => match zlib_uncompress(payload, claimed, budget) {
            Ok(out) => LlvmDecompress::Data(out),
            Err(OVER_BUDGET) => over_budget(release, hsize, budget),
            Err(ZLIB_TRAILER_CUT) => lib_fail(
                "zlib error: Z_BUF_ERROR".into(),
                rules::CCOB_5,
                end as u64,
                "uncompress: Z_BUF_ERROR: every byte was decoded, but the stream's trailer is cut",
            ),
            Err(code) => lib_fail(
                format!("zlib error: {code}"),
                if code == "Z_BUF_ERROR" {
                    rules::CCOB_6
                } else {
                    rules::CCOB_5
                },
                if code == "Z_BUF_ERROR" {
                    field
                } else {
                    hsize as u64
                },
                &format!("uncompress: {code}"),
            ),
        },
    }
}

/// The bundle would pass the memory budget: say what the release does.
fn over_budget(release: Release, hsize: usize, budget: Budget) -> LlvmDecompress {
    let budget = budget.bytes();
    LlvmDecompress::Fails(
        format!("the decompressed bundle exceeds offload-kit's memory budget of {budget} bytes"),
        Error::at(
            rules::CLI_6,
            hsize as u64,
            format!("LLVM {release} would hold the whole bundle in memory; raise the budget with OFFLOAD_KIT_MAX_MEMORY"),
        ),
    )
}

/// The first bytes of the bundle a compressed input holds, decoded only
/// as far as its binary-bundle header reaches, with the bundle's full
/// size: what `-list` needs (spec/ccob.md, "Listing a compressed
/// bundle").
///
/// `Some` only where the release would decompress the input and where the
/// outcome of its one-shot call is known without decoding everything: a
/// zstd payload that is exactly one frame (its extent found from the block
/// headers), whose content size is recorded and within the header's claim,
/// holding a binary bundle whose header ends within the content. Damage
/// inside the frame's blocks past the header is not seen (LLVM's one-shot
/// call reports it; `offload-kit verify` does). `None`: decompress the
/// whole input with [`llvm_decompress`] to learn what the release does.
pub fn llvm_list_prefix(src: &dyn Source, release: Release) -> Option<Prefix> {
    let data = src.bytes();
    let p = llvm_prepare(data, release).ok()?;
    if p.method != Method::Zstd {
        return None;
    }
    let end = p.end as u64;
    let payload_len = end - p.hsize as u64;
    let (frame, total) = zstd_frame_extent(src, p.hsize as u64, end)?;
    if frame != payload_len {
        return None;
    }
    let Some(total) = total else {
        return list_prefix_streamed(src, &p, end);
    };
    if total > p.claimed {
        return None;
    }
    let payload = Reader::new(src, p.hsize as u64, end, 1 << 20);
    let mut dec = zstd::stream::read::Decoder::with_buffer(payload)
        .ok()?
        .single_frame();
    let mut prefix = Vec::new();
    let mut want = 64u64 << 10;
    loop {
        let goal = want.min(total);
        let have = prefix.len() as u64;
        (&mut dec).take(goal - have).read_to_end(&mut prefix).ok()?;
        if (prefix.len() as u64) < goal || !binary::is_binary_bundle(&prefix) {
            return None;
        }
        let at_hand = Prefix::new(prefix, total);
        let scan = binary::scan(&at_hand, 0)?;
        let cut = matches!(scan.stop, Some(binary::Stop::Truncated { .. }));
        if !cut {
            return Some(at_hand);
        }
        prefix = at_hand.into_bytes();
        if goal == total {
            return None;
        }
        want = want.saturating_mul(4);
    }
}

/// [`llvm_list_prefix`] for a frame without a content size: the release's
/// one-shot call succeeds when the frame decodes within the claim, which
/// only decoding tells. The frame is decoded as a stream, counted and
/// dropped but for its first 16 MiB, which must hold the bundle header.
fn list_prefix_streamed(src: &dyn Source, p: &LlvmPrepared, end: u64) -> Option<Prefix> {
    /// Counts everything, keeps the first `limit` bytes.
    struct KeepPrefix {
        prefix: Vec<u8>,
        limit: usize,
        count: u64,
    }
    impl std::io::Write for KeepPrefix {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = self.limit.saturating_sub(self.prefix.len()).min(buf.len());
            self.prefix.extend_from_slice(&buf[..room]);
            self.count += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let payload = Reader::new(src, p.hsize as u64, end, 1 << 20);
    let mut dec = zstd::stream::read::Decoder::with_buffer(payload)
        .ok()?
        .single_frame();
    let mut keep = KeepPrefix {
        prefix: Vec::new(),
        limit: 16 << 20,
        count: 0,
    };
    copy_big(&mut (&mut dec).take(p.claimed.saturating_add(1)), &mut keep).ok()?;
    if keep.count > p.claimed || !binary::is_binary_bundle(&keep.prefix) {
        return None;
    }
    let at_hand = Prefix::new(keep.prefix, keep.count);
    let scan = binary::scan(&at_hand, 0)?;
    if matches!(scan.stop, Some(binary::Stop::Truncated { .. })) {
        return None;
    }
    Some(at_hand)
}

/// Why [`llvm_stream_ranges`] failed.
#[derive(Debug)]
pub enum StreamFailure {
    /// The release's decompression fails: its message (after
    /// `Failed to decompress input: `) and the detail.
    Llvm(String, Error),
    /// Writing to a sink failed.
    Write(std::io::Error),
}

/// Decode the compressed input of `src` as `release` decompresses it, in
/// one streaming pass, sending ranges of the decompressed bundle to
/// `sinks`; returns the truncated MD5 of the whole decompressed bundle
/// (for the CCOB-7 warning). Valid where [`llvm_list_prefix`] returned
/// `Some`: there the release's one-shot call and this stream agree, bytes
/// and errors alike. The compressed data is read through windows of
/// [`STREAM_CHUNK`] bytes and the decoder holds one zstd window, so memory
/// does not grow with the bundle.
pub fn llvm_stream_ranges(
    src: &dyn Source,
    release: Release,
    sinks: &mut [Sink<'_>],
) -> std::result::Result<[u8; 8], StreamFailure> {
    let data = src.bytes();
    let p = llvm_prepare(data, release).map_err(|outcome| match outcome {
        LlvmDecompress::Fails(m, e) => StreamFailure::Llvm(m, e),
        _ => StreamFailure::Llvm(
            "not a compressed bundle".into(),
            Error::at(rules::CCOB_1, 0, "not a compressed bundle"),
        ),
    })?;
    let mut tap = Tap::new(sinks);
    let end = p.end as u64;
    let payload = Reader::new(src, p.hsize as u64, end, STREAM_CHUNK);
    let lib_fail = |name: String| {
        StreamFailure::Llvm(
            llvm_text(
                release,
                &format!("Could not decompress embedded file contents: {name}"),
            ),
            Error::at(
                rules::CCOB_5,
                p.hsize as u64,
                format!("ZSTD_decompress: {name}"),
            ),
        )
    };
    let mut dec = zstd::stream::read::Decoder::with_buffer(payload)
        .map_err(|e| lib_fail(e.to_string()))?
        .single_frame();
    // The one-shot call fails on anything after the frame; the stream
    // would stop at its end. Callers check this first (llvm_list_prefix).
    let whole =
        zstd_frame_extent(src, p.hsize as u64, end).is_some_and(|(n, _)| n == end - p.hsize as u64);
    if !whole {
        return Err(lib_fail("Src size is incorrect".into()));
    }
    let copied = copy_big(&mut (&mut dec).take(p.claimed), &mut tap);
    if let Some(e) = tap.failed.take() {
        return Err(StreamFailure::Write(e));
    }
    copied.map_err(|e| lib_fail(e.to_string()))?;
    let digest = tap.md5.finish();
    let mut h = [0u8; 8];
    h.copy_from_slice(&digest[..8]);
    Ok(h)
}

/// What the one-shot models return when the decoded bundle would pass the
/// memory budget (CLI-6): LLVM holds it whole, offload-kit stops.
const OVER_BUDGET: &str = "over the memory budget";

/// Largest destination [`zstd_one_shot`] allocates before any output
/// exists; past it, [`zstd_growing`] grows the buffer with the output.
const ONE_SHOT_BUFFER: u64 = 64 << 20;

/// `ZSTD_decompress(dst, cap, src)` without a `cap`-byte buffer: the
/// streaming decoder runs the same frames and blocks, and the buffer grows
/// only with output that exists, so a frame header claiming 2^35 bytes
/// costs what its blocks decode to. Producing more than `cap` is zstd's
/// `dstSize_tooSmall`; input ending inside a frame is `srcSize_wrong`.
fn zstd_growing(src: &[u8], cap: u64, budget: Budget) -> std::result::Result<Vec<u8>, String> {
    use zstd::zstd_safe::{get_error_name, DCtx, InBuffer, OutBuffer};
    let mut dctx = DCtx::create();
    let mut input = InBuffer::around(src);
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let before = input.pos();
        let mut ob = OutBuffer::around(&mut chunk[..]);
        let hint = dctx
            .decompress_stream(&mut ob, &mut input)
            .map_err(|c| get_error_name(c).to_string())?;
        let produced = ob.pos();
        if out.len() as u64 + produced as u64 > cap {
            return Err("Destination buffer is too small".into());
        }
        if budget.exceeded_by_zstd(out.len() as u64 + produced as u64) {
            return Err(OVER_BUDGET.into());
        }
        out.extend_from_slice(&chunk[..produced]);
        if input.pos() == src.len() && hint == 0 {
            return Ok(out);
        }
        // No input taken and no output made: the stream ends inside a frame
        // (zstd's srcSize_wrong). Mid-input this cannot happen with output
        // space free; stopping anyway means no input can make this loop spin.
        if produced == 0 && input.pos() == before {
            return Err("Src size is incorrect".into());
        }
    }
}

/// `ZSTD_decompress(dst, claimed, src)` as LLVM calls it. The claim is
/// bounded by [`LLVM_ALLOCATION_LIMIT`] before this is called, so the
/// buffer is too; an empty input decodes to nothing (zstd accepts it).
fn zstd_one_shot(src: &[u8], claimed: u64, budget: Budget) -> std::result::Result<Vec<u8>, String> {
    if src.is_empty() {
        return Ok(Vec::new());
    }
    // Size the buffer by what the frame says it holds, never past the claim;
    // a frame without a content size is decoded as a stream instead, so no
    // allocation follows an untrusted claim.
    match zstd::zstd_safe::get_frame_content_size(src) {
        Ok(Some(n)) if n.min(claimed) > ONE_SHOT_BUFFER => {
            zstd_growing(src, n.min(claimed), budget)
        }
        Ok(Some(n)) => {
            let mut dst = vec![0u8; n.min(claimed) as usize];
            match zstd::zstd_safe::decompress(&mut dst[..], src) {
                Ok(k) => {
                    dst.truncate(k);
                    Ok(dst)
                }
                Err(code) => Err(zstd::zstd_safe::get_error_name(code).to_string()),
            }
        }
        Ok(None) | Err(_) if src.len() < 5 => Err("Src size is incorrect".into()),
        Err(_) => {
            let mut probe = [0u8; 0];
            match zstd::zstd_safe::decompress(&mut probe[..], src) {
                Err(code) => Err(zstd::zstd_safe::get_error_name(code).to_string()),
                Ok(_) => Ok(Vec::new()),
            }
        }
        Ok(None) => {
            let h = Header {
                version: 3,
                method_value: METHOD_ZSTD,
                total_size: None,
                uncompressed_size: claimed,
                hash: [0; 8],
                header_size: 0,
            };
            let mut out = Budgeted(Vec::new(), budget);
            decode_into(&h, src, 0, &mut out)
                .map(|_| out.0)
                .map_err(|e| {
                    if e.message().contains(OVER_BUDGET) {
                        OVER_BUDGET.into()
                    } else if e.rule_id() == Some(rules::CCOB_6.id) {
                        "Destination buffer is too small".into()
                    } else {
                        "Src size is incorrect".into()
                    }
                })
        }
    }
}

/// A growing buffer that refuses to pass the memory budget.
struct Budgeted(Vec<u8>, Budget);

impl std::io::Write for Budgeted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.1.exceeded_by_zstd((self.0.len() + buf.len()) as u64) {
            return Err(std::io::Error::other(OVER_BUDGET));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// [`zlib_uncompress`]'s `Z_BUF_ERROR` when the claim was met and the
/// input ends inside the trailer: the stream is cut (CCOB-5), not the
/// claim too small (CCOB-6).
const ZLIB_TRAILER_CUT: &str = "Z_BUF_ERROR (trailer cut)";

/// zlib's `uncompress(dst, &claimed, src)` result, emulated on `flate2`:
/// the stream must end within the claim; running out of output space is
/// `Z_BUF_ERROR`, an incomplete or corrupt stream `Z_DATA_ERROR`.
fn zlib_uncompress(
    src: &[u8],
    claimed: u64,
    budget: Budget,
) -> std::result::Result<Vec<u8>, &'static str> {
    let mut d = flate2::Decompress::new(true);
    if claimed == 0 {
        // zlib decodes into a 1-byte dummy: only an empty stream succeeds;
        // anything else was observed as Z_DATA_ERROR.
        let mut probe = [0u8; 1];
        return match d.decompress(src, &mut probe, flate2::FlushDecompress::Finish) {
            Ok(flate2::Status::StreamEnd) if d.total_out() == 0 => Ok(Vec::new()),
            _ => Err("Z_DATA_ERROR"),
        };
    }
    let mut out = Vec::with_capacity((claimed as usize).min(1 << 20));
    loop {
        let before_in = d.total_in();
        let before_out = d.total_out();
        let room = (claimed - d.total_out()) as usize;
        if room == 0 {
            // Output full: is the stream finished?
            let mut probe = [0u8; 1];
            let st = d.decompress(
                &src[d.total_in() as usize..],
                &mut probe,
                flate2::FlushDecompress::Finish,
            );
            return match st {
                Ok(flate2::Status::StreamEnd) if d.total_out() == before_out => Ok(out),
                // The stream holds more than the claim: the claim is short
                // (CCOB-6), however much input that took.
                Ok(_) if d.total_out() > before_out => Err("Z_BUF_ERROR"),
                // The output is full and so is the claim, but the input ran
                // out before the trailer: zlib says Z_BUF_ERROR all the same.
                Ok(_) if d.total_in() as usize == src.len() => Err(ZLIB_TRAILER_CUT),
                Ok(_) => Err("Z_BUF_ERROR"),
                Err(_) => Err("Z_DATA_ERROR"),
            };
        }
        let chunk = room.min(1 << 20);
        let start = out.len();
        if budget.exceeded((start + chunk) as u64) {
            return Err(OVER_BUDGET);
        }
        out.resize(start + chunk, 0);
        let st = d.decompress(
            &src[d.total_in() as usize..],
            &mut out[start..],
            flate2::FlushDecompress::Finish,
        );
        let wrote = (d.total_out() - before_out) as usize;
        out.truncate(start + wrote);
        match st {
            Ok(flate2::Status::StreamEnd) => return Ok(out),
            Ok(_) if d.total_in() == before_in && wrote == 0 => {
                return Err(if d.total_out() == claimed {
                    "Z_BUF_ERROR"
                } else {
                    "Z_DATA_ERROR"
                })
            }
            Ok(_) => {}
            Err(_) => return Err("Z_DATA_ERROR"),
        }
    }
}

/// Which of LLVM main's two walks over an input's blobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MainWalk {
    /// `ListBundleIDsInFile` (`-list`): only `CCOB` blobs are cut.
    List,
    /// `UnbundleFiles` (`-unbundle`): binary bundles are cut at the next
    /// bundle magic too.
    Unbundle,
}

/// The blobs LLVM main's `ListBundleIDsInFile` and `UnbundleFiles` take
/// one after the other from an input, as `(start, length)`; each is
/// decompressed and read by a handler of its own (spec/ccob.md, CCOB-4,
/// *LLVM main*; `clang/lib/Driver/OffloadBundler.cpp` at llvm-project
/// [`MAIN_COMMIT`](crate::profile::MAIN_COMMIT)). From the current offset:
///
/// * a blob starting with `CCOB` whose header parses with a total size ends
///   at that size (clamped to the input), and the next starts at the first
///   `CCOB` found from that size on; without a total size (v1, or a header
///   that does not parse), it ends at the next `CCOB` found from its fifth
///   byte (llvm#205587);
/// * for [`MainWalk::Unbundle`], a binary bundle ends at the next bundle
///   magic found from its 26th byte;
/// * anything else runs to the end and is the last.
///
/// Blobs come one at a time, as main reads them (it may fail on one before
/// the walk gets further). Where main does not end, or reads what no one
/// wrote, the walk ends in an error: a total size of 0 finds the same blob
/// again for ever (CCOB-4); an unknown version ends in `llvm_unreachable`,
/// and a `CCOB` blob of 4 or 5 bytes has a version read from uninitialised
/// memory (CCOB-2).
///
/// ```
/// use offload_kit_llvm::bundle::ccob::{main_blobs, MainWalk};
///
/// // Two v2 blobs of 24 bytes (header only), then junk, which main skips.
/// let mut v2 = b"CCOB\x02\x00\x01\x00".to_vec();
/// v2.extend_from_slice(&24u32.to_le_bytes());
/// v2.extend_from_slice(&[0; 12]);
/// let input = [&v2[..], &v2[..], b"junk"].concat();
/// let walk: Vec<_> = main_blobs(&input, MainWalk::List).collect();
/// assert_eq!(walk, vec![Ok((0, 24)), Ok((24, 24))]);
/// // A total size of 0: main would look at the same blob for ever.
/// let mut zero = v2.clone();
/// zero[8..12].copy_from_slice(&0u32.to_le_bytes());
/// let first = main_blobs(&zero, MainWalk::List).next().unwrap();
/// assert_eq!(first.unwrap_err().rule_id(), Some("CCOB-4"));
/// ```
pub fn main_blobs(src: &dyn Source, walk: MainWalk) -> MainBlobs<'_> {
    MainBlobs {
        data: src.bytes(),
        walk,
        offset: Some(0),
    }
}

/// The iterator of [`main_blobs`].
#[derive(Debug, Clone)]
pub struct MainBlobs<'a> {
    data: &'a [u8],
    walk: MainWalk,
    /// Where the next blob starts; `None` after the last.
    offset: Option<usize>,
}

impl Iterator for MainBlobs<'_> {
    type Item = Result<(u64, u64), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let offset = self.offset.filter(|&o| o < self.data.len())?;
        let buf = &self.data[offset..];
        let find_from = |needle: &[u8], from: usize| {
            buf.get(from..)
                .and_then(|b| memchr::memmem::find(b, needle))
                .map(|p| p + from)
        };
        let ccob_magic = &crate::format::ccob::MAGIC[..];
        let (end, next) = if is_ccob(buf) {
            match main_total_size(buf, offset as u64) {
                Err(e) => {
                    self.offset = None;
                    return Some(Err(e));
                }
                Ok(Some(0)) => {
                    self.offset = None;
                    return Some(Err(Error::at(
                        rules::CCOB_4,
                        offset as u64 + 8,
                        "total size 0: LLVM main finds this blob again at the same offset and loops for ever",
                    )));
                }
                Ok(Some(size)) => {
                    let size = usize::try_from(size).unwrap_or(usize::MAX);
                    (size.min(buf.len()), find_from(ccob_magic, size))
                }
                Ok(None) => {
                    let next = find_from(ccob_magic, 4);
                    (next.unwrap_or(buf.len()), next)
                }
            }
        } else if self.walk == MainWalk::Unbundle && binary::is_binary_bundle(buf) {
            // `sizeof(OFFLOAD_BUNDLER_MAGIC_STR)`: the 24 bytes and a NUL.
            let next = find_from(crate::format::bundle::MAGIC, 25);
            (next.unwrap_or(buf.len()), next)
        } else {
            (buf.len(), None)
        };
        self.offset = next.map(|n| offset + n);
        Some(Ok((offset as u64, end as u64)))
    }
}

/// `getCompressedBundleSize` of main: the total size of the header at the
/// start of `buf` (which starts with `CCOB`), `None` without one (v1) or
/// when `tryParse` fails. `tryParse` copies what there is of the header
/// into an uninitialised one (its size assertion is off in release
/// builds) and checks the length against the version's header size first.
fn main_total_size(buf: &[u8], at: u64) -> Result<Option<u64>, Error> {
    if buf.len() < 6 {
        return Err(Error::at(
            rules::CCOB_2,
            at,
            format!(
                "a CCOB blob of {} bytes: LLVM main reads its version from uninitialised memory",
                buf.len()
            ),
        ));
    }
    let version = u16::from_le_bytes([buf[4], buf[5]]);
    let known = Release::Main.ccob_versions_read().contains(&version);
    let Some(hsize) = header_size(version).filter(|_| known) else {
        return Err(Error::at(
            rules::CCOB_2,
            at + 4,
            format!("unknown version {version}: LLVM main reaches llvm_unreachable(\"Unsupported version\") in getHeaderSize"),
        ));
    };
    if buf.len() < hsize as usize {
        return Ok(None);
    }
    let method = u16::from_le_bytes([buf[6], buf[7]]);
    if !matches!(method, METHOD_ZLIB | METHOD_ZSTD) {
        return Ok(None);
    }
    Ok(total_size_field(buf, version))
}

/// What `-verbose` makes the release print when `decompress` is given a
/// buffer it keeps as it is: `Uncompressed bundle.` in 19 (buffers of 20
/// bytes or more) and 22 (8 or more), `Uncompressed bundle` in main (8 or
/// more, `llvm/lib/Object/OffloadBundle.cpp`); nothing for shorter
/// buffers, compressed ones, or releases without compressed bundles
/// (observed with 19.1.7 and 22.1.8).
///
/// ```
/// use offload_kit_llvm::bundle::ccob::llvm_uncompressed_note;
/// use offload_kit_llvm::Release;
///
/// let plain = [b'a'; 8];
/// assert_eq!(llvm_uncompressed_note(&plain, Release::L22), Some("Uncompressed bundle."));
/// assert_eq!(llvm_uncompressed_note(&plain, Release::L19), None);
/// assert_eq!(llvm_uncompressed_note(b"CCOB\x02\x00\x01\x00", Release::L22), None);
/// ```
pub fn llvm_uncompressed_note(data: &[u8], release: Release) -> Option<&'static str> {
    let min = compressed_min_len(release)?;
    if data.len() < min || is_ccob(data) {
        return None;
    }
    Some(if release.quirks().main_ccob_reader {
        "Uncompressed bundle"
    } else {
        "Uncompressed bundle."
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A version 2 zlib blob of `plain` whose header claims `claimed` bytes,
    /// its compressed data cut by `cut` bytes (the total size follows).
    fn zlib_blob(plain: &[u8], claimed: u32, cut: usize) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(plain).unwrap();
        let mut data = z.finish().unwrap();
        data.truncate(data.len() - cut);
        let mut b = b"CCOB".to_vec();
        b.extend_from_slice(&2u16.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&(24 + data.len() as u32).to_le_bytes());
        b.extend_from_slice(&claimed.to_le_bytes());
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&data);
        b
    }

    fn rule_of(blob: &[u8]) -> Option<&'static str> {
        match llvm_decompress(blob, Release::L22) {
            LlvmDecompress::Fails(_, e) => e.rule_id(),
            _ => None,
        }
    }

    /// zlib's Z_BUF_ERROR has two causes: a claim one byte short is the
    /// claim's (CCOB-6, at the uncompressed size field), however much input
    /// the last byte took; a stream cut in its trailer is the stream's (CCOB-5).
    #[test]
    fn zlib_buffer_error_names_its_cause() {
        let plain: Vec<u8> = (0..153u32).map(|i| (i * 7 % 251) as u8).collect();
        assert_eq!(rule_of(&zlib_blob(&plain, 152, 0)), Some("CCOB-6"));
        assert_eq!(rule_of(&zlib_blob(&plain, 153, 2)), Some("CCOB-5"));
        assert!(matches!(
            llvm_decompress(&zlib_blob(&plain, 153, 0), Release::L22),
            LlvmDecompress::Data(d) if d == plain
        ));
    }
}
