//! Compressed bundles (`CCOB` v1/v2/v3, spec/ccob.md), strict reader and
//! writer.
//!
//! 1. One test per rule, CCOB-1 … CCOB-8, on hand-made blobs: each checks
//!    the rule ID and the absolute offset the spec gives, and collects every
//!    mismatch before failing once.
//! 2. Properties: every version × method × level round-trips with the right
//!    header fields; the strict readers never panic on mutated blobs or on
//!    arbitrary bytes after `CCOB`.
//! 3. Reading through windows: streamed extraction, the zstd frame walk.
//!
//! What each LLVM release makes of the same blobs (CCOB-9 too), the
//! native commands and the differential tests against the real LLVM are
//! in the root crate's tests/ccob.rs.

use md5::{Digest, Md5};
use offload_kit_format::binary;
use offload_kit_format::ccob::{self, Method, WriteOptions};
use offload_kit_format::source::{Source, Sub, Window};
use offload_kit_format::Error;
use proptest::prelude::*;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

#[path = "util/ccob_blobs.rs"]
mod ccob_blobs;
use ccob_blobs::*;

const GOOD: &[u8] = include_bytes!("../../../tests/data/malformed/good.bin");
const V3_SMALL: &[u8] = include_bytes!("../../../tests/data/malformed/ccob_v3_small.bin");
const V2_SMALL: &[u8] = include_bytes!("../../../tests/data/malformed/ccob_v2_small.bin");
const V3_2POW40: &[u8] = include_bytes!("../../../tests/data/malformed/ccob_v3_usize_2pow40.bin");
const V3_CORRUPT: &[u8] =
    include_bytes!("../../../tests/data/malformed/ccob_v3_silent_corruption.bin");
const MALFORMED_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/malformed");

const HOST: &str = "host-x86_64-unknown-linux-gnu";
const HOST_ID: &str = "host-x86_64-unknown-linux-gnu-";
const GFX906: &str = "hip-amdgcn-amd-amdhsa--gfx906";

const ZLIB: u16 = 0;
const ZSTD: u16 = 1;
const VERSIONS: [u16; 3] = [1, 2, 3];
const METHODS: [u16; 2] = [ZLIB, ZSTD];

// ---------------------------------------------------------------------------
// Hand-made blobs

fn hsize(layout: u16) -> usize {
    match layout {
        1 => 20,
        3 => 32,
        _ => 24,
    }
}

/// Offset of the uncompressed-size field.
fn usize_field(v: u16) -> u64 {
    match v {
        1 => 8,
        2 => 12,
        _ => 16,
    }
}

/// Offset of the hash field.
fn hash_field(v: u16) -> u64 {
    hsize(v) as u64 - 8
}

/// CCOB-2: where a header of version `v` cut to `len` bytes is reported:
/// the start of the first field that is not complete.
fn cut_field(v: u16, len: usize) -> u64 {
    fields(v)
        .iter()
        .find(|(at, n)| at + n > len)
        .map(|(at, _)| *at as u64)
        .expect("len is shorter than the header")
}

fn describe<T>(r: &Result<T, Error>) -> String {
    match r {
        Ok(_) => "Ok".into(),
        Err(e) => format!("{e}"),
    }
}

/// Record a mismatch unless `r` is an error citing `rule` at `offset`.
fn check<T>(label: &str, r: Result<T, Error>, rule: &str, offset: u64, m: &mut Vec<String>) {
    let good = matches!(&r, Err(e) if e.rule_id() == Some(rule) && e.offset() == Some(offset));
    if !good {
        m.push(format!(
            "{label}: want {rule} at 0x{offset:x}, got {}",
            describe(&r)
        ));
    }
}

// ---------------------------------------------------------------------------
// 1. One test per rule

#[test]
fn good_inputs_are_what_llvm_wrote() {
    assert_eq!(bundle_of(b"DEVDATA"), GOOD);
    for (b, v) in [(V3_SMALL, 3u16), (V2_SMALL, 2)] {
        let d = ccob::decompress_strict(b, 0).expect("LLVM's blob is valid");
        assert_eq!(d.data, GOOD);
        assert_eq!(d.header.version, v);
        assert_eq!(d.header.method(), Some(Method::Zstd));
        assert_eq!(d.header.hash, md5_8(GOOD));
        assert_eq!(d.header.hash_u64(), 0x7f11_0d81_ffe4_ec49);
        assert_eq!(d.blob_len, b.len() as u64);
    }
}

#[test]
fn ccob_1_magic() {
    let mut m = Vec::new();
    let not_ccob: [&[u8]; 7] = [
        b"",
        b"C",
        b"CCO",
        b"ccob\x03\x00\x01\x00",
        b"XCOB\x03\x00\x01\x00",
        b"CCOX\x03\x00\x01\x00",
        GOOD,
    ];
    for (i, b) in not_ccob.iter().enumerate() {
        assert!(!ccob::is_ccob(b), "input {i}");
        check(
            &format!("parse_header input {i}"),
            ccob::parse_header(b, 0),
            "CCOB-1",
            0,
            &mut m,
        );
        check(
            &format!("parse_header input {i} at base 0x1000"),
            ccob::parse_header(b, 0x1000),
            "CCOB-1",
            0x1000,
            &mut m,
        );
        check(
            &format!("decompress_strict input {i}"),
            ccob::decompress_strict(b, 0),
            "CCOB-1",
            0,
            &mut m,
        );
    }
    assert!(ccob::is_ccob(b"CCOB"));
    finish("ccob_1_magic", &m);
}

#[test]
fn ccob_2_truncated_header_every_length() {
    let mut m = Vec::new();
    for v in VERSIONS {
        for meth in METHODS {
            let b = valid(v, meth, GOOD);
            for len in 0..hsize(v) {
                let (rule, at) = if len < 4 {
                    ("CCOB-1", 0)
                } else {
                    ("CCOB-2", cut_field(v, len))
                };
                let label = format!("v{v} {} cut to {len} bytes", method_name(meth));
                check(
                    &format!("{label}: parse_header"),
                    ccob::parse_header(&b[..len], 0),
                    rule,
                    at,
                    &mut m,
                );
                check(
                    &format!("{label}: parse_header at base 0x40"),
                    ccob::parse_header(&b[..len], 0x40),
                    rule,
                    at + 0x40,
                    &mut m,
                );
                check(
                    &format!("{label}: decompress_strict"),
                    ccob::decompress_strict(&b[..len], 0),
                    rule,
                    at,
                    &mut m,
                );
                // (No bytes at all are an empty sequence of blobs.)
                if len > 0 {
                    check(
                        &format!("{label}: blobs"),
                        ccob::blobs(&b[..len], 0),
                        rule,
                        at,
                        &mut m,
                    );
                }
            }
            // The whole header alone parses; the blob then fails later.
            let h = ccob::parse_header(&b[..hsize(v)], 0).expect("whole header");
            assert_eq!(h.header_size, hsize(v) as u64);
        }
    }
    finish("ccob_2_truncated_header_every_length", &m);
}

#[test]
fn ccob_2_unknown_version() {
    let mut m = Vec::new();
    for version in [0u16, 4, 5, 0x0100, 0x0300, 0xffff] {
        for layout in VERSIONS {
            let b = make_with(layout, ZSTD, GOOD, &zstd_frame(GOOD), |h| {
                h.version = version
            });
            let label = format!("version {version} in a v{layout} layout");
            check(
                &format!("{label}: parse_header"),
                ccob::parse_header(&b, 0),
                "CCOB-2",
                4,
                &mut m,
            );
            check(
                &format!("{label}: decompress_strict at base 0x100"),
                ccob::decompress_strict(&b, 0x100),
                "CCOB-2",
                0x104,
                &mut m,
            );
        }
    }
    // The version is checked before the rest of the header is looked for.
    check(
        "CCOB + 1 byte",
        ccob::parse_header(b"CCOB\x04", 0),
        "CCOB-2",
        4,
        &mut m,
    );
    check(
        "CCOB + version 4",
        ccob::parse_header(b"CCOB\x04\x00", 0),
        "CCOB-2",
        4,
        &mut m,
    );
    // The malformed corpus: ccob_v3_small.bin relabelled version 0.
    let ver0 = std::fs::read(Path::new(MALFORMED_DIR).join("ccob_v3_ver0.bin")).expect("read");
    check(
        "ccob_v3_ver0.bin",
        ccob::decompress_strict(&ver0, 0),
        "CCOB-2",
        4,
        &mut m,
    );
    finish("ccob_2_unknown_version", &m);
}

#[test]
fn ccob_3_unknown_method() {
    let mut m = Vec::new();
    for v in VERSIONS {
        for method in [2u16, 3, 0x0100, 0xffff] {
            let b = make_with(v, ZSTD, GOOD, &zstd_frame(GOOD), |h| h.method = method);
            let label = format!("v{v} method {method}");
            check(
                &format!("{label}: parse_header"),
                ccob::parse_header(&b, 0),
                "CCOB-3",
                6,
                &mut m,
            );
            check(
                &format!("{label}: decompress_strict at base 0x10"),
                ccob::decompress_strict(&b, 0x10),
                "CCOB-3",
                0x16,
                &mut m,
            );
            // A header cut short is CCOB-2 whatever its method says (the
            // offset is ccob_2_truncated_header_every_length's business).
            let len = hsize(v) - 1;
            let r = ccob::parse_header(&b[..len], 0);
            if !matches!(&r, Err(e) if e.rule_id() == Some("CCOB-2")) {
                m.push(format!(
                    "{label}: cut to {len} bytes: want CCOB-2, got {}",
                    describe(&r)
                ));
            }
        }
    }
    finish("ccob_3_unknown_method", &m);
}

#[test]
fn ccob_4_total_size() {
    let mut m = Vec::new();
    for v in [2u16, 3] {
        for meth in METHODS {
            let s = stream(meth, GOOD);
            let n = (hsize(v) + s.len()) as u64;
            let label = format!("v{v} {}", method_name(meth));
            let mut too_big = vec![n + 1, n + 100, 100_000, u64::from(u32::MAX)];
            if v == 3 {
                too_big.push(u64::MAX);
            }
            for t in [0, 1, hsize(v) as u64 - 1].into_iter().chain(too_big) {
                let b = make_with(v, meth, GOOD, &s, |h| h.total = t);
                check(
                    &format!("{label} total {t}: decompress_strict"),
                    ccob::decompress_strict(&b, 0),
                    "CCOB-4",
                    8,
                    &mut m,
                );
                check(
                    &format!("{label} total {t}: blobs at base 0x2000"),
                    ccob::blobs(&b, 0x2000),
                    "CCOB-4",
                    0x2008,
                    &mut m,
                );
            }
            // Exact: the blob is the whole input.
            let b = valid(v, meth, GOOD);
            match ccob::blobs(&b, 0) {
                Ok(bs) if bs.len() == 1 && bs[0].len == n && bs[0].offset == 0 => {}
                other => m.push(format!("{label}: blobs of a valid blob gave {other:?}")),
            }
            // Too small but covering the header: the blob ends inside the
            // stream. Alone it is a truncated stream (CCOB-5); in a file,
            // the rest of the stream follows the blob (CCOB-4).
            for t in [hsize(v) as u64, n - 1] {
                let b = make_with(v, meth, GOOD, &s, |h| h.total = t);
                check(
                    &format!("{label} total {t} (data cut): decompress_strict"),
                    ccob::decompress_strict(&b, 0),
                    "CCOB-5",
                    hsize(v) as u64,
                    &mut m,
                );
                check(
                    &format!("{label} total {t} (data cut): blobs"),
                    ccob::blobs(&b, 0),
                    "CCOB-4",
                    t,
                    &mut m,
                );
            }
        }
    }
    finish("ccob_4_total_size", &m);
}

#[test]
fn ccob_4_bytes_after_the_blob() {
    let mut m = Vec::new();
    for v in [2u16, 3] {
        for meth in METHODS {
            let b = valid(v, meth, GOOD);
            let n = b.len() as u64;
            let label = format!("v{v} {}", method_name(meth));
            let tails: [(&str, Vec<u8>); 4] = [
                ("one zero byte", vec![0]),
                ("junk", b"junkjunk".to_vec()),
                ("zero padding to 4096", vec![0; 4096 - b.len()]),
                ("CCO", b"CCO".to_vec()),
            ];
            for (what, tail) in tails {
                let mut f = b.clone();
                f.extend(&tail);
                check(
                    &format!("{label} + {what}: blobs"),
                    ccob::blobs(&f, 0),
                    "CCOB-4",
                    n,
                    &mut m,
                );
                // The blob itself is bounded by its total size.
                match ccob::decompress_strict(&f, 0) {
                    Ok(d) if d.data == GOOD && d.blob_len == n => {}
                    other => m.push(format!(
                        "{label} + {what}: decompress_strict of the first blob: {}",
                        describe(&other)
                    )),
                }
            }
            // Another blob after it: two blobs (any version, a v1 last).
            for v2 in VERSIONS {
                let second = valid(v2, ZSTD, b"second");
                let mut f = b.clone();
                f.extend(&second);
                match ccob::blobs(&f, 0x10) {
                    Ok(bs)
                        if bs.len() == 2
                            && bs[0].offset == 0x10
                            && bs[0].len == n
                            && bs[1].offset == 0x10 + n
                            && bs[1].len == second.len() as u64
                            && bs[1].header.version == v2 => {}
                    other => m.push(format!("{label} + v{v2} blob: blobs gave {other:?}")),
                }
            }
        }
    }
    finish("ccob_4_bytes_after_the_blob", &m);
}

#[test]
fn ccob_5_stream() {
    let mut m = Vec::new();
    for v in VERSIONS {
        for meth in METHODS {
            let s = stream(meth, GOOD);
            let h = hsize(v) as u64;
            let label = format!("v{v} {}", method_name(meth));
            let cases: [(&str, Vec<u8>); 5] = [
                ("stream one byte short", s[..s.len() - 1].to_vec()),
                ("half a stream", s[..s.len() / 2].to_vec()),
                ("no data", Vec::new()),
                ("garbage", b"this is not a compressed stream".to_vec()),
                ("the other method's stream", stream(1 - meth, GOOD)),
            ];
            for (what, data) in cases {
                let b = make_with(v, meth, GOOD, &data, |_| {});
                check(
                    &format!("{label}, {what}"),
                    ccob::decompress_strict(&b, 0),
                    "CCOB-5",
                    h,
                    &mut m,
                );
                check(
                    &format!("{label}, {what}, at base 0x1000"),
                    ccob::decompress_strict(&b, 0x1000),
                    "CCOB-5",
                    0x1000 + h,
                    &mut m,
                );
            }
        }
    }
    finish("ccob_5_stream", &m);
}

#[test]
fn ccob_5_bytes_after_the_stream() {
    let mut m = Vec::new();
    for v in VERSIONS {
        for meth in METHODS {
            let s = stream(meth, GOOD);
            let end = (hsize(v) + s.len()) as u64;
            let label = format!("v{v} {}", method_name(meth));
            let tails: [(&str, Vec<u8>); 3] = [
                ("one byte", vec![0]),
                ("junk", b"junk!".to_vec()),
                ("a second stream", s.clone()),
            ];
            for (what, tail) in tails {
                let mut data = s.clone();
                data.extend(&tail);
                // The total size (v2, v3) covers the extra bytes: they are
                // inside the blob, after the stream.
                let b = make_with(v, meth, GOOD, &data, |_| {});
                check(
                    &format!("{label} + {what} inside the blob"),
                    ccob::decompress_strict(&b, 0),
                    "CCOB-5",
                    end,
                    &mut m,
                );
            }
        }
    }
    finish("ccob_5_bytes_after_the_stream", &m);
}

#[test]
fn ccob_6_claim() {
    let mut m = Vec::new();
    let n = GOOD.len() as u64;
    for v in VERSIONS {
        for meth in METHODS {
            let s = stream(meth, GOOD);
            let label = format!("v{v} {}", method_name(meth));
            for claim in [0, 1, n - 1, n + 1, n + 100, u64::from(u32::MAX)] {
                let b = make_with(v, meth, GOOD, &s, |h| h.claim = claim);
                check(
                    &format!("{label} claim {claim} (real {n})"),
                    ccob::decompress_strict(&b, 0),
                    "CCOB-6",
                    usize_field(v),
                    &mut m,
                );
            }
        }
    }
    finish("ccob_6_claim", &m);
}

#[test]
fn ccob_6_claim_2pow40_never_allocates() {
    let mut m = Vec::new();
    let started = Instant::now();
    check(
        "ccob_v3_usize_2pow40.bin",
        ccob::decompress_strict(V3_2POW40, 0),
        "CCOB-6",
        16,
        &mut m,
    );
    for meth in METHODS {
        let s = stream(meth, GOOD);
        for claim in [1u64 << 40, u64::MAX] {
            let b = make_with(3, meth, GOOD, &s, |h| h.claim = claim);
            check(
                &format!("v3 {} claim {claim}", method_name(meth)),
                ccob::decompress_strict(&b, 0),
                "CCOB-6",
                16,
                &mut m,
            );
        }
        let b = make_with(2, meth, GOOD, &s, |h| h.claim = u64::from(u32::MAX));
        check(
            "v2 claim 2^32-1",
            ccob::decompress_strict(&b, 0),
            "CCOB-6",
            12,
            &mut m,
        );
    }
    if started.elapsed() > Duration::from_secs(10) {
        m.push(format!(
            "reading huge claims took {:?}: the claim sized something",
            started.elapsed()
        ));
    }
    finish("ccob_6_claim_2pow40_never_allocates", &m);
}

#[test]
fn ccob_7_hash() {
    let mut m = Vec::new();
    for v in VERSIONS {
        for meth in METHODS {
            let label = format!("v{v} {}", method_name(meth));
            let mut flipped = md5_8(GOOD);
            flipped[7] ^= 0x80;
            for bad in [[0u8; 8], flipped] {
                let b = make_with(v, meth, GOOD, &stream(meth, GOOD), |h| h.hash = bad);
                let r = ccob::decompress_strict(&b, 0);
                if let Err(e) = &r {
                    let computed = format!("0x{:016x}", hash_u64(GOOD));
                    let stored = format!("0x{:016x}", u64::from_le_bytes(bad));
                    if !e.message().contains(&computed) || !e.message().contains(&stored) {
                        m.push(format!(
                            "{label}: the CCOB-7 message should give {stored} and {computed}: {e}"
                        ));
                    }
                }
                check(
                    &format!("{label} hash {:02x?}", bad),
                    r,
                    "CCOB-7",
                    hash_field(v),
                    &mut m,
                );
            }
        }
    }
    // Reproducer C7: a damaged frame that still decodes, to wrong bytes.
    check(
        "ccob_v3_silent_corruption.bin",
        ccob::decompress_strict(V3_CORRUPT, 0),
        "CCOB-7",
        0x18,
        &mut m,
    );
    finish("ccob_7_hash", &m);
}

#[test]
fn ccob_8_writer_header_fields() {
    let mut m = Vec::new();
    let raw = bundle_of(&b"device code object bytes ".repeat(40));
    for v in VERSIONS {
        for method in [Method::Zlib, Method::Zstd] {
            let b =
                ccob::compress(&raw, opts(v, method, method.default_level())).expect("compress");
            let label = format!("v{v} {method:?}");
            let hs = hsize(v);
            let le16 = |at: usize| u16::from_le_bytes([b[at], b[at + 1]]);
            let le32 = |at: usize| u64::from(u32::from_le_bytes(b[at..at + 4].try_into().unwrap()));
            let le64 = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
            let (total, claim) = match v {
                1 => (None, le32(8)),
                2 => (Some(le32(8)), le32(12)),
                _ => (Some(le64(8)), le64(16)),
            };
            let ok = &b[..4] == b"CCOB"
                && le16(4) == v
                && le16(6) == method.value()
                && total.is_none_or(|t| t == b.len() as u64)
                && claim == raw.len() as u64
                && b[hs - 8..hs] == md5_8(&raw);
            if !ok {
                m.push(format!("{label}: header {:02x?}", &b[..hs]));
            }
            let data = &b[hs..];
            let back = if method == Method::Zlib {
                let mut out = Vec::new();
                flate2::read::ZlibDecoder::new(data)
                    .read_to_end(&mut out)
                    .map(|_| out)
                    .ok()
            } else {
                zstd::bulk::decompress(data, raw.len()).ok()
            };
            if back.as_deref() != Some(&raw[..]) {
                m.push(format!(
                    "{label}: the data does not decode to the bundle with a plain decoder"
                ));
            }
            if method == Method::Zstd {
                // Frame header descriptor: no checksum, content size present.
                let fhd = data[4];
                let has_size = fhd >> 6 != 0 || fhd & 0x20 != 0;
                if fhd & 0x04 != 0 || !has_size {
                    m.push(format!("{label}: frame descriptor 0x{fhd:02x}"));
                }
            }
            if ccob::compress_payload_len(&b) != data.len() {
                m.push(format!("{label}: compress_payload_len"));
            }
        }
    }
    // Defaults: v3, zstd level 3, which is what LLVM 22 writes for good.bin
    // (and v2 what 19 writes): byte identity with the system libzstd.
    assert_eq!(WriteOptions::default(), opts(3, Method::Zstd, 3));
    let zv = zstd::zstd_safe::version_number();
    if ccob::compress(GOOD, WriteOptions::default())
        .ok()
        .as_deref()
        != Some(V3_SMALL)
    {
        m.push(format!(
            "compress(good.bin) with the defaults differs from LLVM 22's ccob_v3_small.bin (libzstd {zv})"
        ));
    }
    if ccob::compress(GOOD, opts(2, Method::Zstd, 3))
        .ok()
        .as_deref()
        != Some(V2_SMALL)
    {
        m.push(format!(
            "compress(good.bin, v2) differs from LLVM 19's ccob_v2_small.bin (libzstd {zv})"
        ));
    }
    // zlib levels are compress2's: -1 is 6; outside -1..9 is refused (CCOB-8).
    let z = |l| ccob::compress_payload(&raw, Method::Zlib, l);
    if z(-1).ok() != z(6).ok() || z(12).is_ok() || z(-2).is_ok() {
        m.push("zlib levels: -1 should be 6, and 12 and -2 refused".into());
    }
    // zstd levels pass through; libzstd clamps 100 to 22.
    let zs = |l| ccob::compress_payload(&raw, Method::Zstd, l).expect("zstd");
    if zs(100) != zs(22) {
        m.push("zstd level 100 should be libzstd's 22".into());
    }
    for bad in [0u16, 4, 0xffff] {
        match ccob::compress(GOOD, opts(bad, Method::Zstd, 3)) {
            Err(e) if e.rule_id() == Some("CCOB-8") => {}
            other => m.push(format!(
                "compress version {bad}: want CCOB-8, got {}",
                describe(&other)
            )),
        }
    }
    finish("ccob_8_writer_header_fields", &m);
}

// ---------------------------------------------------------------------------
// 2. Properties

/// Every strict reader on `b`: none may panic; a strict success must be
/// consistent.
fn exercise(b: &[u8]) {
    let _ = ccob::parse_header(b, 0);
    let _ = ccob::blobs(b, 0);
    if let Ok(h) = ccob::parse_header(b, 0) {
        let _ = ccob::blob_len(&h, b, 0);
    }
    let _ = ccob::decompress_prefix(&b, 0, 64);
    if let Ok(d) = ccob::decompress_strict(b, 0) {
        assert_eq!(d.data.len() as u64, d.header.uncompressed_size);
        assert_eq!(md5_8(&d.data), d.header.hash);
        assert!(d.blob_len <= b.len() as u64);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// bytes -> compress -> decompress_strict -> the same bytes, with the
    /// header fields of CCOB-8, for every version, method and a few levels.
    #[test]
    fn round_trip(
        chunk in prop::collection::vec(any::<u8>(), 0..1500),
        repeat in 1usize..6,
        version in 1u16..=3,
        zstd in any::<bool>(),
        level_ix in 0usize..4,
    ) {
        let raw = chunk.repeat(repeat);
        let (method, level) = if zstd {
            (Method::Zstd, [-5, 1, 3, 19][level_ix])
        } else {
            (Method::Zlib, [0, 1, 6, 9][level_ix])
        };
        let blob = ccob::compress(&raw, opts(version, method, level)).unwrap();
        let d = ccob::decompress_strict(&blob, 0).unwrap();
        prop_assert_eq!(&d.data, &raw);
        prop_assert_eq!(d.blob_len, blob.len() as u64);
        let h = d.header;
        prop_assert_eq!(h.version, version);
        prop_assert_eq!(h.method(), Some(method));
        prop_assert_eq!(h.header_size, hsize(version) as u64);
        prop_assert_eq!(h.uncompressed_size, raw.len() as u64);
        prop_assert_eq!(h.hash, md5_8(&raw));
        prop_assert_eq!(h.total_size, (version != 1).then_some(blob.len() as u64));
        prop_assert_eq!(ccob::parse_header(&blob, 0).unwrap(), h);
        // Two in a row.
        let mut two = blob.clone();
        two.extend(ccob::compress(b"tail", opts(3, Method::Zstd, 3)).unwrap());
        if version != 1 {
            let bs = ccob::blobs(&two, 0).unwrap();
            prop_assert_eq!(bs.len(), 2);
            prop_assert_eq!(bs[1].offset, blob.len() as u64);
        }
    }

    /// Mutated blobs (flipped bytes, a cut, appended bytes) never panic.
    #[test]
    fn never_panics_on_mutated_blobs(
        seed in 0usize..8,
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        cut in prop::option::of(any::<prop::sample::Index>()),
        tail in prop::collection::vec(any::<u8>(), 0..24),
    ) {
        exercise(&mutated(seed, flips, cut, tail));
    }

    /// Any value in any header field never panics (claims, totals, versions).
    #[test]
    fn never_panics_on_header_fields(
        seed in 0usize..8,
        field in 0usize..5,
        value in prop_oneof![any::<u64>(), 0u64..400, Just(1u64 << 40), Just(u64::MAX)],
    ) {
        exercise(&with_field(seed, field, value));
    }

    /// Arbitrary bytes after the magic never panic.
    #[test]
    fn never_panics_after_magic(rest in prop::collection::vec(any::<u8>(), 0..160)) {
        let mut b = b"CCOB".to_vec();
        b.extend(rest);
        exercise(&b);
    }
}

// ---------------------------------------------------------------------------
// 3. Reading through windows

impl Source for WindowLog {
    fn bytes(&self) -> &[u8] {
        &self.data
    }
    fn window(&self, offset: u64, len: u64) -> Option<Window<'_>> {
        self.taken.borrow_mut().push((offset, len));
        let w = self.data.get(offset as usize..(offset + len) as usize)?;
        Some(Window::Held(Box::new(w.to_vec())))
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> bool {
        self.taken.borrow_mut().push((offset, buf.len() as u64));
        match self.data.get(offset as usize..offset as usize + buf.len()) {
            Some(b) => {
                buf.copy_from_slice(b);
                true
            }
            None => false,
        }
    }
}

/// Streamed extraction and listing read the compressed data in pieces of
/// at most `STREAM_CHUNK` bytes (`pread` for a file, so a mapped input is
/// never resident as a whole), with the same result and the same errors as
/// the slice path.
#[test]
fn streamed_extraction_reads_bounded_windows() {
    // 12 MB of poorly compressible bytes: the compressed data spans windows.
    let dev = xorshift_bytes(12_000_000, 0x9e3779b97f4a7c15, 56);
    let bundle =
        binary::write_to_vec(&[(HOST.as_bytes(), b"HOST"), (GFX906.as_bytes(), &dev)], 1).unwrap();
    for version in [2u16, 3] {
        let opts = WriteOptions {
            version,
            method: Method::Zstd,
            level: 1,
        };
        let mut file = b"PREFIX".to_vec();
        let at = file.len() as u64;
        file.extend(ccob::compress(&bundle, opts).unwrap());
        let src = WindowLog {
            data: file.clone(),
            taken: Default::default(),
        };
        let avail = file.len() as u64 - at;
        let off = bundle.len() as u64 - dev.len() as u64;
        let mut out = Vec::new();
        let blob = Sub::new(&src, at, avail).unwrap();
        ccob::extract_range(&blob, at, off, dev.len() as u64, &mut out).unwrap();
        assert!(out == dev, "v{version}: extracted bytes differ");
        let taken = src.taken.borrow();
        assert!(taken.len() >= 3, "v{version}: {} windows", taken.len());
        assert!(taken.iter().all(|&(_, n)| n <= ccob::STREAM_CHUNK));
        let covered: u64 = taken.iter().skip(1).map(|w| w.1).sum();
        assert_eq!(covered, avail - if version == 2 { 24 } else { 32 });
        drop(taken);
        // The slice path agrees.
        let mut out2 = Vec::new();
        ccob::extract_range(&&file[at as usize..], at, off, dev.len() as u64, &mut out2).unwrap();
        assert!(out2 == out);
        // A flipped byte in the middle of the stream: same error both ways.
        let mut bad = file.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x40;
        let e1 = ccob::extract_range(&&bad[at as usize..], at, 0, 4, &mut Vec::new()).unwrap_err();
        let src = WindowLog {
            data: bad.clone(),
            taken: Default::default(),
        };
        let blob = Sub::new(&src, at, avail).unwrap();
        let e2 = ccob::extract_range(&blob, at, 0, 4, &mut Vec::new()).unwrap_err();
        assert_eq!(e1, e2);
        assert!(
            matches!(e1.rule_id(), Some("CCOB-5") | Some("CCOB-7")),
            "{e1}"
        );
    }
}

/// The frame walk that decides the header-only path agrees with zstd's own
/// `ZSTD_findFrameCompressedSize` and `ZSTD_getFrameContentSize`.
#[test]
fn frame_extent_matches_zstd() {
    let mut x = 0x853c49e6748fea9bu64;
    for (i, len) in [
        0usize, 1, 255, 256, 257, 65_535, 65_536, 65_792, 300_000, 1_000_000,
    ]
    .into_iter()
    .enumerate()
    {
        let raw: Vec<u8> = (0..len)
            .map(|k| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if k % 3 == 0 {
                    (x >> 59) as u8
                } else {
                    b'a' + (k % 7) as u8
                }
            })
            .collect();
        for (level, checksum, size_known) in [
            (1, false, true),
            (3, true, true),
            (19, false, false),
            (3, false, false),
        ] {
            let mut c = zstd::bulk::Compressor::new(level).unwrap();
            c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(checksum))
                .unwrap();
            c.set_parameter(zstd::zstd_safe::CParameter::ContentSizeFlag(size_known))
                .unwrap();
            let frame = if size_known {
                c.compress(&raw).unwrap()
            } else {
                // Streamed: no content size in the header.
                let mut e = zstd::stream::write::Encoder::new(Vec::new(), level).unwrap();
                e.include_checksum(checksum).unwrap();
                e.write_all(&raw).unwrap();
                e.finish().unwrap()
            };
            let mut data = b"JUNK".to_vec();
            data.extend_from_slice(&frame);
            data.extend_from_slice(b"TAIL");
            let end = 4 + frame.len() as u64;
            let want_len = zstd::zstd_safe::find_frame_compressed_size(&frame).unwrap() as u64;
            let want_size = zstd::zstd_safe::get_frame_content_size(&frame).unwrap();
            let got = ccob::zstd_frame_extent(&data.as_slice(), 4, data.len() as u64);
            assert_eq!(
                got,
                Some((want_len, want_size)),
                "case {i} len {len} level {level}"
            );
            // Cut anywhere inside the frame: no extent (zstd fails too).
            for cut in [5, frame.len() / 2, frame.len() - 1] {
                if cut >= frame.len() {
                    continue;
                }
                assert!(zstd::zstd_safe::find_frame_compressed_size(&frame[..cut]).is_err());
                assert_eq!(
                    ccob::zstd_frame_extent(&data.as_slice(), 4, 4 + cut as u64),
                    None
                );
            }
            assert_eq!(
                ccob::zstd_frame_extent(&data.as_slice(), 4, end),
                Some((want_len, want_size))
            );
        }
    }
    assert_eq!(
        ccob::zstd_frame_extent(&b"\x28\xb5\x2f\xfd\x08xxxx".as_slice(), 0, 9),
        None
    );
}
