//! Compressed bundles (`CCOB` v1/v2/v3, spec/ccob.md) as LLVM reads them
//! and through the command line. The strict reader and the writer, one
//! test per rule CCOB-1 … CCOB-8 and their properties, are tested in the
//! spec core: crates/format/tests/ccob.rs.
//!
//! 1. Per rule: what each release's model makes of the rule's blobs, the
//!    CLI's refusals, and CCOB-9 (the content is a bundle), each collecting
//!    every mismatch before failing once.
//! 2. Properties: what each release reads of every version × method ×
//!    level; the models and the listing never panic on mutated blobs or on
//!    arbitrary bytes after `CCOB`.
//! 3. The native commands: `verify`, `list`, `extract`, `compress`,
//!    `decompress`, `convert`.
//! 4. Differential tests against the real LLVM (`/usr/lib/llvm-N/bin`, set
//!    up by `tools/setup`): byte identity of `compress` and of the drop-in's
//!    `-compress` with 19 and 22, LLVM reading offload-kit's blobs, a real
//!    `clang-22 --offload-compress` fat binary, the malformed corpus and
//!    crafted blobs through the drop-in, `-verbose` lines.
//!
//! A missing LLVM fails the differential tests with "LLVM N not installed:
//! run tools/setup"; `OFFLOAD_KIT_NO_LLVM=1` skips them instead.

mod common;

use common::{llvm_tool, Out};
use md5::{Digest, Md5};
use offload_kit::bundle::binary;
use offload_kit::bundle::ccob::{self, LlvmDecompress, Method, WriteOptions};
use offload_kit::source::Source;
use offload_kit::{detect, Release};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "../crates/format/tests/util/ccob_blobs.rs"]
mod ccob_blobs;
use ccob_blobs::*;

const KIT: &str = env!("CARGO_BIN_EXE_offload-kit");
const GOOD: &[u8] = include_bytes!("data/malformed/good.bin");
const V3_SMALL: &[u8] = include_bytes!("data/malformed/ccob_v3_small.bin");
const V2_SMALL: &[u8] = include_bytes!("data/malformed/ccob_v2_small.bin");
const V3_2POW40: &[u8] = include_bytes!("data/malformed/ccob_v3_usize_2pow40.bin");
const V3_CORRUPT: &[u8] = include_bytes!("data/malformed/ccob_v3_silent_corruption.bin");
const MALFORMED_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/malformed");

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

// ---------------------------------------------------------------------------
// 1. One test per rule

#[test]
fn ccob_1_llvm_and_cli() {
    let mut m = Vec::new();
    // The profiles: 14 and 16 know nothing of CCOB; a non-CCOB is plain.
    for r in [Release::L14, Release::L16] {
        assert_eq!(ccob::llvm_decompress(V3_SMALL, r), LlvmDecompress::Plain);
    }
    assert_eq!(
        ccob::llvm_decompress(GOOD, Release::L22),
        LlvmDecompress::Plain
    );
    // 19 treats CCOB + fewer than 16 bytes as a non-bundle, 22 fewer than 4.
    for len in 4..20 {
        assert_eq!(
            ccob::llvm_decompress(&V2_SMALL[..len], Release::L19),
            LlvmDecompress::Plain,
            "19, {len} bytes"
        );
    }
    for len in 4..8 {
        assert_eq!(
            ccob::llvm_decompress(&V3_SMALL[..len], Release::L22),
            LlvmDecompress::Plain,
            "22, {len} bytes"
        );
    }
    // `decompress` requires a compressed bundle.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("good.bin"), GOOD).expect("write");
    let o = kit(dir.path(), &["decompress", "good.bin", "-o", "out"]);
    if o.code != Some(1) || !o.stderr.contains("rule CCOB-1") || !o.stderr.contains("offset 0x0") {
        m.push(format!(
            "offload-kit decompress good.bin: want exit 1 with CCOB-1 at 0x0, got {} {:?}",
            o.status(),
            o.stderr
        ));
    }
    if dir.path().join("out").exists() {
        m.push("offload-kit decompress good.bin wrote an output".into());
    }
    finish("ccob_1_llvm_and_cli", &m);
}

#[test]
fn ccob_3_llvm() {
    let mut m = Vec::new();
    for v in VERSIONS {
        for method in [2u16, 3, 0x0100, 0xffff] {
            let b = make_with(v, ZSTD, GOOD, &zstd_frame(GOOD), |h| h.method = method);
            let label = format!("v{v} method {method}");
            // Both releases that read CCOB stop at the method.
            for r in [Release::L19, Release::L22] {
                match ccob::llvm_decompress(&b, r) {
                    LlvmDecompress::Fails(msg, e)
                        if msg == "Unknown compressing method" && e.rule_id() == Some("CCOB-3") => {
                    }
                    other => m.push(format!("{label}: LLVM {r} model gave {other:?}")),
                }
            }
        }
    }
    finish("ccob_3_llvm", &m);
}

#[test]
fn ccob_4_total_size_llvm() {
    let mut m = Vec::new();
    for v in [2u16, 3] {
        for meth in METHODS {
            let s = stream(meth, GOOD);
            let n = (hsize(v) + s.len()) as u64;
            let label = format!("v{v} {}", method_name(meth));
            // LLVM main (source-modelled, CCOB-4 *LLVM main*): the compressed
            // data ends at the total size, which wraps to "the rest" below the
            // header size and is clamped past the blob.
            for t in [0u64, 10, hsize(v) as u64 - 1, n, n + 1, 100_000] {
                let b = make_with(v, meth, GOOD, &s, |h| h.total = t);
                if ccob::llvm_decompress(&b, Release::Main) != LlvmDecompress::Data(GOOD.to_vec()) {
                    m.push(format!(
                        "{label} total {t}: main does not read the whole stream"
                    ));
                }
            }
            // One byte short: the stream is cut.
            let b = make_with(v, meth, GOOD, &s, |h| h.total = n - 1);
            match ccob::llvm_decompress(&b, Release::Main) {
                LlvmDecompress::Fails(msg, e) if e.rule_id() == Some("CCOB-5") => {
                    if !msg.starts_with("could not decompress embedded file contents: ") {
                        m.push(format!("{label} total n-1: message {msg:?}"));
                    }
                }
                other => m.push(format!("{label} total n-1: main gave {other:?}")),
            }
            // Bytes after the blob are not read by main; 22 reads them.
            let mut b = valid(v, meth, GOOD);
            b.extend_from_slice(b"JUNK");
            if ccob::llvm_decompress(&b, Release::Main) != LlvmDecompress::Data(GOOD.to_vec()) {
                m.push(format!("{label} + JUNK: main reads past the total size"));
            }
            if meth == ZSTD
                && matches!(
                    ccob::llvm_decompress(&b, Release::L22),
                    LlvmDecompress::Data(_)
                )
            {
                m.push(format!(
                    "{label} + JUNK: 22 ignores the junk after a zstd frame"
                ));
            }
            // The profiles ignore the field, as 19 and 22 do.
            for t in [0u64, 10, n - 1, 100_000] {
                let b = make_with(v, meth, GOOD, &s, |h| h.total = t);
                let releases: &[Release] = if v == 2 {
                    &[Release::L19, Release::L22]
                } else {
                    &[Release::L22]
                };
                for &r in releases {
                    if ccob::llvm_decompress(&b, r) != LlvmDecompress::Data(GOOD.to_vec()) {
                        m.push(format!(
                            "{label} total {t}: LLVM {r} model does not ignore the total size"
                        ));
                    }
                }
            }
        }
    }
    finish("ccob_4_total_size_llvm", &m);
}

/// LLVM main's `-list` lists every compressed blob of the input in turn,
/// each in its own StringMap order, and cuts a blob at the next `CCOB`
/// even inside compressed data (llvm#205587).
#[test]
fn main_lists_every_blob() {
    let dir = tempfile::tempdir().expect("tempdir");
    let zstd2 = opts(2, Method::Zstd, 3);
    let first = ccob::compress(&bundle_of(b"DEVDATA"), zstd2).expect("compress");
    let gfx908 = "hip-amdgcn-amd-amdhsa--gfx908";
    let second = ccob::compress(
        &binary::write_to_vec(&[(gfx908.as_bytes(), b"GFX908 DATA".as_slice())], 1)
            .expect("bundle"),
        zstd2,
    )
    .expect("compress");
    let two = [first.clone(), second].concat();
    std::fs::write(dir.path().join("two"), &two).expect("write");
    let list = |r: &str, input: &str| {
        drop_in_named(
            r,
            dir.path(),
            &["-type=bc", &format!("-input={input}"), "-list"],
        )
    };
    let out = list("main", "two");
    assert_eq!(out.code, Some(0), "{out:?}");
    let want = format!("{GFX906}\n{HOST_ID}\n{gfx908}\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        want,
        "main lists both blobs, each in StringMap order"
    );
    // 22 decompresses everything after the first header as one frame.
    let out = list("22", "two");
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("Src size is incorrect"), "{out:?}");

    // A bundle whose compressed data holds "CCOB" (incompressible bytes
    // are stored raw). A v2 blob ends at its total size, so main lists it;
    // a v1 blob has none, so main ends it at that CCOB and fails
    // (llvm#205587). 22 lists both.
    let mut dev = vec![0u8; 4096];
    let mut x = 0x9e37_79b9_u32;
    for b in dev.iter_mut() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *b = x as u8;
    }
    dev[2000..2004].copy_from_slice(b"CCOB");
    for version in [2u16, 1] {
        let inner =
            ccob::compress(&bundle_of(&dev), opts(version, Method::Zstd, 3)).expect("compress");
        let name = format!("inner-v{version}");
        std::fs::write(dir.path().join(&name), &inner).expect("write");
        let walk: Vec<_> = ccob::main_blobs(&inner, ccob::MainWalk::List).collect();
        let out = list("main", &name);
        if version == 2 {
            assert_eq!(walk, vec![Ok((0, inner.len() as u64))]);
            assert_eq!(out.code, Some(0), "{out:?}");
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                format!("{GFX906}\n{HOST_ID}\n")
            );
        } else {
            assert!(walk.len() > 1, "v1: cut at the CCOB inside: {walk:?}");
            assert_eq!(out.code, Some(1), "{out:?}");
            assert!(
                out.stderr
                    .contains("could not decompress embedded file contents: Src size is incorrect"),
                "{out:?}"
            );
        }
        let out = list("22", &name);
        assert_eq!(out.code, Some(0), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{GFX906}\n{HOST_ID}\n")
        );
    }

    // Where main would loop for ever (total size 0) or reach
    // llvm_unreachable (an unknown version after a first blob), the
    // profile stops with the rule, after listing what comes before.
    let mut zero = first.clone();
    zero[8..12].copy_from_slice(&0u32.to_le_bytes());
    std::fs::write(dir.path().join("zero"), &zero).expect("write");
    let out = list("main", "zero");
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("rule CCOB-4") && out.stderr.contains("for ever"),
        "{out:?}"
    );
    let unknown = [&first[..], b"CCOB\x07\x00\x01\x00\0\0\0\0"].concat();
    std::fs::write(dir.path().join("unknown"), &unknown).expect("write");
    let out = list("main", "unknown");
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{GFX906}\n{HOST_ID}\n")
    );
    assert!(
        out.stderr.contains("llvm_unreachable") && out.stderr.contains("rule CCOB-2"),
        "{out:?}"
    );
}

#[test]
fn ccob_4_bytes_after_the_blob_llvm() {
    let mut m = Vec::new();
    // The profiles: 22 decompresses everything after the header: data after
    // a zstd stream is fatal, after a zlib stream it is dropped.
    let mut f = V3_SMALL.to_vec();
    f.extend(b"junk");
    match ccob::llvm_decompress(&f, Release::L22) {
        LlvmDecompress::Fails(msg, _) if msg.ends_with("Src size is incorrect") => {}
        other => m.push(format!("22 model, v3 zstd + junk: {other:?}")),
    }
    let mut f = valid(3, ZLIB, GOOD);
    f.extend(b"junk");
    if ccob::llvm_decompress(&f, Release::L22) != LlvmDecompress::Data(GOOD.to_vec()) {
        m.push("22 model, v3 zlib + junk: should decompress (uncompress stops at the end of the stream)".into());
    }
    finish("ccob_4_bytes_after_the_blob_llvm", &m);
}

#[test]
fn ccob_6_claim_llvm() {
    let n = GOOD.len() as u64;
    let mut m = Vec::new();
    for v in VERSIONS {
        for meth in METHODS {
            let s = stream(meth, GOOD);
            let label = format!("v{v} {}", method_name(meth));
            // The profiles: a larger claim reads, a smaller one fails with
            // the library's message.
            for r in [Release::L19, Release::L22] {
                if v == 3 && r == Release::L19 {
                    continue;
                }
                let big = make_with(v, meth, GOOD, &s, |h| h.claim = n + 100);
                if ccob::llvm_decompress(&big, r) != LlvmDecompress::Data(GOOD.to_vec()) {
                    m.push(format!(
                        "{label}: LLVM {r} model does not read a claim larger than the data"
                    ));
                }
                let small = make_with(v, meth, GOOD, &s, |h| h.claim = n - 1);
                let want = if meth == ZSTD {
                    "Destination buffer is too small"
                } else {
                    "zlib error: Z_BUF_ERROR"
                };
                match ccob::llvm_decompress(&small, r) {
                    LlvmDecompress::Fails(msg, _) if msg.ends_with(want) => {}
                    other => m.push(format!(
                        "{label} claim n-1: LLVM {r} model gave {other:?}, want '{want}'"
                    )),
                }
            }
        }
    }
    finish("ccob_6_claim_llvm", &m);
}

#[test]
fn ccob_6_claim_2pow40_llvm() {
    let mut m = Vec::new();
    let started = Instant::now();
    // LLVM 22 allocates the claim and aborts; the profile reports it.
    match ccob::llvm_decompress(V3_2POW40, Release::L22) {
        LlvmDecompress::Fails(msg, e)
            if msg.contains("out of memory")
                && e.rule_id() == Some("CCOB-6")
                && e.offset() == Some(16) => {}
        other => m.push(format!("22 model on the 2^40 claim: {other:?}")),
    }
    // 19 cannot read v3 at all.
    if !matches!(
        ccob::llvm_decompress(V3_2POW40, Release::L19),
        LlvmDecompress::Fails(..)
    ) {
        m.push("19 model reads a v3 blob".into());
    }
    if started.elapsed() > Duration::from_secs(10) {
        m.push(format!(
            "reading huge claims took {:?}: the claim sized something",
            started.elapsed()
        ));
    }
    finish("ccob_6_claim_2pow40_llvm", &m);
}

#[test]
fn ccob_7_hash_llvm() {
    let mut m = Vec::new();
    for v in VERSIONS {
        for meth in METHODS {
            let label = format!("v{v} {}", method_name(meth));
            let mut flipped = md5_8(GOOD);
            flipped[7] ^= 0x80;
            for bad in [[0u8; 8], flipped] {
                let b = make_with(v, meth, GOOD, &stream(meth, GOOD), |h| h.hash = bad);
                // The profiles read it, as 19 and 22 do.
                let r = if v == 3 { Release::L22 } else { Release::L19 };
                if ccob::llvm_decompress(&b, r) != LlvmDecompress::Data(GOOD.to_vec()) {
                    m.push(format!("{label}: LLVM {r} model checks the hash"));
                }
            }
        }
    }
    match ccob::llvm_decompress(V3_CORRUPT, Release::L22) {
        LlvmDecompress::Data(d) if d.len() == GOOD.len() && d != GOOD => {
            if !d.windows(7).any(|w| w == b"DEVDANA") {
                m.push("22 model: the corrupt blob should decode to DEVDANA".into());
            }
        }
        other => m.push(format!("22 model on the corrupt blob: {other:?}")),
    }
    finish("ccob_7_hash_llvm", &m);
}

#[test]
fn ccob_8_cli_refuses_an_unknown_version() {
    let mut m = Vec::new();
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("good.bin"), GOOD).expect("write");
    let o = kit(
        dir.path(),
        &["compress", "good.bin", "-o", "x", "--format-version", "4"],
    );
    if o.code != Some(1) || !o.stderr.contains("rule CCOB-8") || dir.path().join("x").exists() {
        m.push(format!(
            "compress --format-version 4: want exit 1, rule CCOB-8, no output; got {} {:?}",
            o.status(),
            o.stderr
        ));
    }
    finish("ccob_8_cli_refuses_an_unknown_version", &m);
}

#[test]
fn ccob_9_content_is_a_bundle() {
    let mut m = Vec::new();
    for (what, content) in [
        ("text", &b"hello world, not a bundle"[..]),
        ("nothing", &b""[..]),
    ] {
        for v in VERSIONS {
            let b = ccob::compress(content, opts(v, Method::Zstd, 3)).expect("compress");
            // The container itself is fine.
            if ccob::decompress_strict(&b, 0).is_err() {
                m.push(format!("v{v} of {what}: the blob should verify"));
            }
            match detect::list(&b, None) {
                Err(es) if es[0].rule_id() == Some("CCOB-9") && es[0].offset() == Some(0) => {}
                Err(es) => m.push(format!(
                    "v{v} of {what}: strict list: want CCOB-9 at 0x0, got {}",
                    es.iter()
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>()
                        .join("; ")
                )),
                Ok(l) => m.push(format!("v{v} of {what}: strict list accepted it: {l:?}")),
            }
        }
    }
    // A broken bundle inside is reported under its own chapter's rules,
    // at offsets within the decompressed bundle.
    let broken = &GOOD[..GOOD.len() - 1];
    let b = ccob::compress(broken, WriteOptions::default()).expect("compress");
    match detect::list(&b, None) {
        Err(es)
            if es[0].rule_id().is_some_and(|r| r.starts_with("BIN-"))
                && es[0]
                    .to_string()
                    .contains("inside the compressed bundle at 0x0") => {}
        other => m.push(format!("good.bin minus a byte, compressed: {other:?}")),
    }
    // A good one lists its entries, with the blob's offset.
    match detect::list(&V3_SMALL, None) {
        Ok(l) => {
            let ids: Vec<&str> = l.entries.iter().map(|e| e.id.as_str()).collect();
            if ids != [HOST_ID, GFX906] || l.entries.iter().any(|e| e.ccob_offset != Some(0)) {
                m.push(format!("ccob_v3_small.bin lists {l:?}"));
            }
        }
        Err(es) => m.push(format!("ccob_v3_small.bin: {es:?}")),
    }
    // The CLI: list fails with CCOB-9, compress warns and writes.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("hello.txt"), b"hello world, not a bundle").expect("write");
    let o = kit(dir.path(), &["compress", "hello.txt", "-o", "hello.ccob"]);
    if o.code != Some(0) || !o.stderr.contains("CCOB-9") || !dir.path().join("hello.ccob").exists()
    {
        m.push(format!(
            "compress of a non-bundle: want a CCOB-9 warning and exit 0, got {} {:?}",
            o.status(),
            o.stderr
        ));
    }
    let o = kit(dir.path(), &["list", "hello.ccob"]);
    if o.code != Some(1) || !o.stderr.contains("rule CCOB-9") {
        m.push(format!(
            "list of a compressed non-bundle: want exit 1 with rule CCOB-9, got {} {:?}",
            o.status(),
            o.stderr
        ));
    }
    let o = kit(dir.path(), &["verify", "hello.ccob"]);
    if o.code != Some(0) {
        m.push(format!(
            "verify checks the container only (CCOB-1..7): want exit 0, got {} {:?}",
            o.status(),
            o.stderr
        ));
    }
    finish("ccob_9_content_is_a_bundle", &m);
}

// ---------------------------------------------------------------------------
// 2. Properties

/// Every LLVM model and the listing on `b`: none may panic.
fn exercise(b: &[u8]) {
    for r in Release::WITH_BINARY {
        let _ = ccob::llvm_decompress(b, r);
        let _ = detect::list(&b, Some(r));
    }
    let _ = detect::list(&b, None);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// bytes -> compress -> what each release makes of it, for every
    /// version, method and a few levels.
    #[test]
    fn round_trip_llvm(
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
        prop_assert_eq!(ccob::llvm_decompress(&blob, Release::L22), LlvmDecompress::Data(raw.clone()));
        let r19 = ccob::llvm_decompress(&blob, Release::L19);
        if version == 3 {
            prop_assert!(matches!(r19, LlvmDecompress::Fails(..)), "19 read v3: {:?}", r19);
        } else {
            prop_assert_eq!(r19, LlvmDecompress::Data(raw.clone()));
        }
        for r in [Release::L14, Release::L16] {
            prop_assert_eq!(ccob::llvm_decompress(&blob, r), LlvmDecompress::Plain);
        }
    }

    /// Mutated blobs (flipped bytes, a cut, appended bytes) never panic.
    #[test]
    fn llvm_never_panics_on_mutated_blobs(
        seed in 0usize..8,
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        cut in prop::option::of(any::<prop::sample::Index>()),
        tail in prop::collection::vec(any::<u8>(), 0..24),
    ) {
        exercise(&mutated(seed, flips, cut, tail));
    }

    /// Any value in any header field never panics (claims, totals, versions).
    #[test]
    fn llvm_never_panics_on_header_fields(
        seed in 0usize..8,
        field in 0usize..5,
        value in prop_oneof![any::<u64>(), 0u64..400, Just(1u64 << 40), Just(u64::MAX)],
    ) {
        exercise(&with_field(seed, field, value));
    }

    /// Arbitrary bytes after the magic never panic.
    #[test]
    fn llvm_never_panics_after_magic(rest in prop::collection::vec(any::<u8>(), 0..160)) {
        let mut b = b"CCOB".to_vec();
        b.extend(rest);
        exercise(&b);
    }
}

// ---------------------------------------------------------------------------
// Running programs

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Ok,
    Fail,
    Crash,
}

impl Out {
    fn class(&self) -> Class {
        match (self.code, self.signal) {
            (Some(0), _) => Class::Ok,
            (Some(_), _) => Class::Fail,
            _ => Class::Crash,
        }
    }
}

const TIMEOUT: Duration = Duration::from_secs(180);
const ENV_VARS: [&str; 5] = [
    "OFFLOAD_BUNDLER_COMPRESS",
    "OFFLOAD_BUNDLER_VERBOSE",
    "OFFLOAD_BUNDLER_COMPRESSION_LEVEL",
    "OFFLOAD_BUNDLER_IGNORE_ENV_VAR",
    "COMPRESSED_BUNDLE_FORMAT_VERSION",
];

/// Run `prog` in `dir` with the bundler's environment variables cleared and
/// `env` set.
fn exec(prog: &Path, args: &[String], dir: &Path, env: &[(&str, &str)]) -> Out {
    let mut c = Command::new(prog);
    c.args(args);
    for v in ENV_VARS {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    common::exec(c, dir, TIMEOUT)
}

fn kit(dir: &Path, args: &[&str]) -> Out {
    exec(Path::new(KIT), &common::strings(args), dir, &[])
}

/// The drop-in at `--llvm-version=release` (a number or `main`), no environment.
fn drop_in_named(release: &str, dir: &Path, args: &[&str]) -> Out {
    let mut a = vec!["bundler".to_string(), format!("--llvm-version={release}")];
    a.extend(args.iter().map(|s| s.to_string()));
    exec(Path::new(KIT), &a, dir, &[])
}

fn drop_in(n: u32, dir: &Path, args: &[String], env: &[(&str, &str)]) -> Out {
    let mut a = vec!["bundler".to_string(), format!("--llvm-version={n}")];
    a.extend_from_slice(args);
    exec(Path::new(KIT), &a, dir, env)
}

fn bundler(n: u32) -> Option<PathBuf> {
    llvm_tool(n, "clang-offload-bundler")
}

/// Bundlers of `ns`; `None` (skip) if one is missing and that is allowed.
fn bundlers(ns: &[u32]) -> Option<Vec<(u32, PathBuf)>> {
    ns.iter()
        .map(|&n| bundler(n).map(|p| (n, p)))
        .collect::<Option<Vec<_>>>()
}

/// `-inputs=a,b -outputs=c` for 14, `-input=a -input=b -output=c` after.
fn io_args(n: u32, inputs: &[&str], outputs: &[&str]) -> Vec<String> {
    let mut a = Vec::new();
    if n <= 14 {
        a.push(format!("-inputs={}", inputs.join(",")));
        if !outputs.is_empty() {
            a.push(format!("-outputs={}", outputs.join(",")));
        }
    } else {
        a.extend(inputs.iter().map(|i| format!("-input={i}")));
        a.extend(outputs.iter().map(|o| format!("-output={o}")));
    }
    a
}

/// Error and warning lines with the program names and offload-kit's
/// `[detail]` removed; offload-kit's own `offload-kit: warning:` lines
/// (CCOB-7) are not LLVM's and are dropped.
fn messages(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with("offload-kit: warning:"))
        .map(|l| {
            let mut l = l.to_string();
            if l.starts_with("/usr/lib/llvm-") || l.starts_with("offload-kit bundler: ") {
                if let Some(i) = l.find(": ") {
                    l = l[i + 2..].to_string();
                }
            }
            if l.ends_with(']') {
                if let Some(i) = l.find(" [") {
                    l.truncate(i);
                }
            }
            l
        })
        .filter(|l| {
            l.starts_with("error: ") || l.starts_with("warning: ") || l.starts_with("Warning: ")
        })
        .collect()
}

/// Whether `s` contains `rule <A-Z>+-<digit>`.
fn mentions_rule(s: &str) -> bool {
    s.match_indices("rule ").any(|(i, _)| {
        let rest = &s.as_bytes()[i + 5..];
        let letters = rest.iter().take_while(|b| b.is_ascii_uppercase()).count();
        letters > 0
            && rest.get(letters) == Some(&b'-')
            && rest.get(letters + 1).is_some_and(u8::is_ascii_digit)
    })
}

/// Compare one LLVM run with one drop-in run of the same command, both in
/// their own directory; `outputs` are the files to compare.
fn compare_runs(
    label: &str,
    l: &Out,
    k: &Out,
    (ldir, kdir): (&Path, &Path),
    outputs: &[&str],
    m: &mut Vec<String>,
) {
    if k.panicked() {
        m.push(format!(
            "{label}: offload-kit PANICKED: {}",
            k.stderr.trim()
        ));
        return;
    }
    if l.class() == Class::Crash {
        // README, Layers: a crash is reported with a rule, not reproduced.
        let wrote: Vec<&&str> = outputs.iter().filter(|o| kdir.join(o).exists()).collect();
        if k.code != Some(1) || !mentions_rule(&k.stderr) || !wrote.is_empty() {
            m.push(format!(
                "{label}: LLVM crashed ({}); offload-kit must exit 1 citing a rule and write nothing, got {} {:?}, wrote {wrote:?}",
                l.status(),
                k.status(),
                k.stderr.trim()
            ));
        }
        return;
    }
    if l.class() != k.class() {
        m.push(format!(
            "{label}: LLVM {} {:?}, offload-kit {} {:?}",
            l.status(),
            messages(&l.stderr),
            k.status(),
            messages(&k.stderr)
        ));
        return;
    }
    if l.stdout != k.stdout {
        m.push(format!(
            "{label}: stdout differs: LLVM {:?}, offload-kit {:?}",
            l.stdout_text(),
            k.stdout_text()
        ));
    }
    let (lm, km) = (messages(&l.stderr), messages(&k.stderr));
    if lm != km {
        m.push(format!(
            "{label}: messages differ: LLVM {lm:?}, offload-kit {km:?}"
        ));
    }
    for o in outputs {
        let (a, b) = (
            std::fs::read(ldir.join(o)).ok(),
            std::fs::read(kdir.join(o)).ok(),
        );
        match (&a, &b) {
            (Some(a), Some(b)) if a != b => m.push(format!(
                "{label}: output {o} differs ({} vs {} bytes)",
                a.len(),
                b.len()
            )),
            (Some(_), None) => m.push(format!("{label}: offload-kit did not write {o}")),
            (None, Some(_)) => m.push(format!("{label}: offload-kit wrote {o}, LLVM did not")),
            _ => {}
        }
    }
}

/// Run `f` over `items` on a few threads; results in item order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 4);
    common::par_map(workers, items, f)
}

/// `len` bytes of LLVM's own shared library from `offset` (realistic
/// machine code), or deterministic text-like bytes when it is missing.
fn library_bytes(offset: u64, len: usize) -> Vec<u8> {
    let candidates = [
        "/usr/lib/llvm-22/lib/libLLVM.so.22.1",
        "/usr/lib/x86_64-linux-gnu/libLLVM.so.22.1",
        "/usr/lib/llvm-19/lib/libLLVM.so.19.1",
        "/usr/lib/llvm-19/lib/libLLVM-19.so",
    ];
    for c in candidates {
        if let Ok(mut f) = File::open(c) {
            let mut buf = vec![0; len];
            if f.seek(SeekFrom::Start(offset)).is_ok() && f.read_exact(&mut buf).is_ok() {
                return buf;
            }
        }
    }
    let words = [
        "kernel", "global", "vgpr", "sgpr", "s_load", "v_add", "buffer", "wave",
    ];
    let mut x: u64 = offset | 1;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(words[(x % 8) as usize].as_bytes());
        out.push(if x & 0x100 == 0 {
            b' '
        } else {
            (x >> 24) as u8
        });
    }
    out.truncate(len);
    out
}

// ---------------------------------------------------------------------------
// 3. Native commands

#[test]
fn native_commands() {
    let mut m = Vec::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("good.bin"), GOOD).expect("write");
    let read = |name: &str| std::fs::read(d.join(name)).ok();
    let expect = |label: &str, o: &Out, code: i32, m: &mut Vec<String>| {
        if o.code != Some(code) || o.panicked() {
            m.push(format!(
                "{label}: want exit {code}, got {} stdout {:?} stderr {:?}",
                o.status(),
                o.stdout_text(),
                o.stderr
            ));
        }
    };

    // compress: defaults are LLVM 22's -compress.
    let o = kit(d, &["compress", "good.bin", "-o", "a.ccob"]);
    expect("compress", &o, 0, &mut m);
    if read("a.ccob").as_deref() != Some(V3_SMALL) {
        m.push("compress good.bin differs from LLVM 22's ccob_v3_small.bin".into());
    }
    // verify: one line per blob, exit 0.
    let o = kit(d, &["verify", "a.ccob"]);
    expect("verify", &o, 0, &mut m);
    let want = "0x0: CCOB v3 Zstd, 165 -> 154 bytes, hash 0x7f110d81ffe4ec49: ok\n";
    if o.stdout_text() != want {
        m.push(format!(
            "verify prints {:?}, want {want:?}",
            o.stdout_text()
        ));
    }
    // Two blobs back to back.
    let mut two = V3_SMALL.to_vec();
    two.extend(V2_SMALL);
    std::fs::write(d.join("two.ccob"), &two).expect("write");
    let o = kit(d, &["verify", "two.ccob"]);
    expect("verify two blobs", &o, 0, &mut m);
    if !o.stdout_text().contains("0x0: CCOB v3") || !o.stdout_text().contains("0xa5: CCOB v2") {
        m.push(format!("verify two blobs prints {:?}", o.stdout_text()));
    }
    // A bad second blob: the first is still reported ok, exit 1.
    let mut bad2 = V3_SMALL.to_vec();
    bad2.extend(make_with(2, ZSTD, GOOD, &zstd_frame(GOOD), |h| {
        h.hash = [0; 8]
    }));
    std::fs::write(d.join("bad2.ccob"), &bad2).expect("write");
    let o = kit(d, &["verify", "bad2.ccob"]);
    expect("verify, second blob bad", &o, 1, &mut m);
    if !o.stdout_text().contains("0x0: CCOB v3")
        || !o.stderr.contains("(at offset 0xb5, rule CCOB-7)")
    {
        m.push(format!(
            "verify, second blob bad: stdout {:?} stderr {:?} (want CCOB-7 at 0xa5 + 0x10)",
            o.stdout_text(),
            o.stderr
        ));
    }
    // Error format: absolute offset and rule.
    std::fs::write(d.join("cut.ccob"), &V3_SMALL[..16]).expect("write");
    let o = kit(d, &["verify", "cut.ccob"]);
    expect("verify cut header", &o, 1, &mut m);
    if !o.stderr.starts_with("offload-kit: error: ")
        || !o.stderr.contains("(at offset 0x10, rule CCOB-2)")
    {
        m.push(format!("verify of 16 bytes: stderr {:?}", o.stderr));
    }
    let o = kit(d, &["verify", "--no-such-option", "a.ccob"]);
    expect("verify usage error", &o, 2, &mut m);
    // verify on a plain bundle validates it, and says there is nothing to verify.
    let o = kit(d, &["verify", "good.bin"]);
    expect("verify good.bin", &o, 0, &mut m);
    if !o
        .stdout_text()
        .contains("nothing to verify: nothing in it is compressed")
    {
        m.push(format!("verify good.bin prints {:?}", o.stdout_text()));
    }

    // list and extract read the verified bundle.
    let o = kit(d, &["list", "a.ccob"]);
    expect("list", &o, 0, &mut m);
    if !o.stdout_text().contains(HOST_ID) || !o.stdout_text().contains(GFX906) {
        m.push(format!("list prints {:?}", o.stdout_text()));
    }
    let o = kit(d, &["list", "--json", "a.ccob"]);
    expect("list --json", &o, 0, &mut m);
    match serde_json::from_str::<serde_json::Value>(&o.stdout_text()) {
        Ok(v) => {
            let ok = v["entries"]
                .as_array()
                .is_some_and(|es| es.len() == 2 && es.iter().all(|e| e["ccob_offset"] == 0));
            if !ok || v["container"] != "compressed-bundle" {
                m.push(format!("list --json: {v}"));
            }
        }
        Err(e) => m.push(format!(
            "list --json is not JSON ({e}): {:?}",
            o.stdout_text()
        )),
    }
    let o = kit(d, &["list", "--llvm-version=19", "a.ccob"]);
    expect("list --llvm-version=19 of a v3 blob", &o, 1, &mut m);
    let o = kit(d, &["list", "--llvm-version=16", "a.ccob"]);
    if o.code != Some(1) || !o.stderr.contains("rule CCOB-1") {
        m.push(format!(
            "list --llvm-version=16: want exit 1 with CCOB-1, got {} {:?}",
            o.status(),
            o.stderr
        ));
    }
    let o = kit(d, &["extract", "a.ccob", "--id", GFX906, "-o", "dev.co"]);
    expect("extract", &o, 0, &mut m);
    if read("dev.co").as_deref() != Some(&b"DEVDATA"[..]) {
        m.push(format!("extract wrote {:?}", read("dev.co")));
    }
    std::fs::write(d.join("corrupt.ccob"), V3_CORRUPT).expect("write");
    let o = kit(
        d,
        &["extract", "corrupt.ccob", "--id", GFX906, "-o", "bad.co"],
    );
    if o.code != Some(1) || !o.stderr.contains("rule CCOB-7") || d.join("bad.co").exists() {
        m.push(format!(
            "extract from the silently corrupt blob: want exit 1, CCOB-7, nothing written; got {} {:?}",
            o.status(),
            o.stderr
        ));
    }

    // convert and decompress.
    let o = kit(d, &["convert", "a.ccob", "--to", "v2", "-o", "b.ccob"]);
    expect("convert --to v2", &o, 0, &mut m);
    if read("b.ccob").as_deref() != Some(V2_SMALL) {
        m.push("convert v3 -> v2 differs from LLVM 19's ccob_v2_small.bin".into());
    }
    let o = kit(
        d,
        &[
            "convert", "b.ccob", "--to", "v1", "--method", "zlib", "--level", "9", "-o", "c.ccob",
        ],
    );
    expect("convert --to v1 zlib", &o, 0, &mut m);
    match read("c.ccob") {
        Some(c) => {
            let want = ccob::compress(GOOD, opts(1, Method::Zlib, 9)).expect("compress");
            if c != want {
                m.push("convert --to v1 --method zlib --level 9 differs from the library".into());
            }
        }
        None => m.push("convert --to v1 wrote nothing".into()),
    }
    let o = kit(d, &["convert", "c.ccob", "--to", "v3", "-o", "d.ccob"]);
    expect("convert v1 -> v3", &o, 0, &mut m);
    if read("d.ccob").as_deref() != Some(V3_SMALL) {
        m.push("convert v1 zlib -> v3 differs from ccob_v3_small.bin".into());
    }
    for (cmd, out) in [("none", "e.bin"), ("decompress", "f.bin")] {
        let o = if cmd == "none" {
            kit(d, &["convert", "c.ccob", "--to", "none", "-o", out])
        } else {
            kit(d, &["decompress", "c.ccob", "-o", out])
        };
        expect(cmd, &o, 0, &mut m);
        if read(out).as_deref() != Some(GOOD) {
            m.push(format!("{cmd}: the bundle differs from good.bin"));
        }
    }
    let o = kit(d, &["convert", "two.ccob", "--to", "v2", "-o", "g.ccob"]);
    expect("convert of two blobs", &o, 1, &mut m);
    let o = kit(d, &["decompress", "corrupt.ccob", "-o", "h.bin"]);
    if o.code != Some(1) || !o.stderr.contains("rule CCOB-7") || d.join("h.bin").exists() {
        m.push(format!(
            "decompress of a bad hash: want exit 1, CCOB-7, nothing written; got {} {:?}",
            o.status(),
            o.stderr
        ));
    }
    finish("native_commands", &m);
}

// ---------------------------------------------------------------------------
// 4. Differential tests against LLVM

struct Payload {
    name: &'static str,
    dev: Vec<u8>,
}

fn payloads() -> Vec<Payload> {
    vec![
        Payload {
            name: "small",
            dev: b"DEVDATA".to_vec(),
        },
        Payload {
            name: "300k",
            dev: library_bytes(8 << 20, 300_000),
        },
        Payload {
            name: "3m",
            dev: library_bytes(20 << 20, 3_000_000),
        },
    ]
}

/// The bundling command of every test: host `HOSTDATA`, gfx906 `d`.
fn bundle_args(n: u32, output: &str) -> Vec<String> {
    let mut a = common::strings(&["-type=bc", &format!("-targets={HOST},{GFX906}")]);
    a.extend(io_args(n, &["h", "d"], &[output]));
    a
}

fn level_args(level: Option<i32>) -> Vec<String> {
    level
        .map(|l| vec![format!("-compression-level={l}")])
        .unwrap_or_default()
}

/// `offload-kit compress` of LLVM's uncompressed bundle, and the drop-in's
/// `-compress`, are byte-identical to LLVM 19's (v2) and 22's (v3, and v2
/// with `COMPRESSED_BUNDLE_FORMAT_VERSION=2`), for several sizes and levels.
#[test]
fn llvm_compress_is_byte_identical() {
    let Some(bs) = bundlers(&[19, 22]) else {
        return;
    };
    let bin = |n: u32| bs.iter().find(|b| b.0 == n).expect("bundler").1.clone();
    let root = tempfile::tempdir().expect("tempdir");
    let payloads = payloads();
    // (release, COMPRESSED_BUNDLE_FORMAT_VERSION, version written)
    let configs: [(u32, Option<&str>, u16); 3] = [(19, None, 2), (22, None, 3), (22, Some("2"), 2)];
    let levels = [None, Some(1), Some(9), Some(19)];
    let mut items = Vec::new();
    for p in &payloads {
        for c in configs {
            for l in levels {
                items.push((p, c, l));
            }
        }
    }
    let results = par_map(&items, |&(p, (n, envv, want_v), level)| {
        let mut m = Vec::new();
        let name = format!(
            "{}-{n}-{}-{}",
            p.name,
            envv.unwrap_or("default"),
            level.map_or("default".into(), |l| l.to_string())
        );
        let label = format!(
            "{} bytes, LLVM {n}{}, level {}",
            p.dev.len(),
            envv.map_or(String::new(), |v| format!(
                " COMPRESSED_BUNDLE_FORMAT_VERSION={v}"
            )),
            level.map_or("default".into(), |l| l.to_string())
        );
        let (ldir, kdir) = common::case_dirs(root.path(), &name);
        common::write_both(&ldir, &kdir, "h", b"HOSTDATA");
        common::write_both(&ldir, &kdir, "d", &p.dev);
        let env: Vec<(&str, &str)> = envv
            .map(|v| vec![("COMPRESSED_BUNDLE_FORMAT_VERSION", v)])
            .unwrap_or_default();
        // LLVM: the uncompressed bundle, then the compressed one.
        let u = exec(&bin(n), &bundle_args(n, "u.bc"), &ldir, &[]);
        let mut ca = bundle_args(n, "c.ccob");
        ca.push("-compress".into());
        ca.extend(level_args(level));
        let c = exec(&bin(n), &ca, &ldir, &env);
        if u.class() != Class::Ok || c.class() != Class::Ok {
            m.push(format!("{label}: LLVM failed: {} {}", u.stderr, c.stderr));
            return m;
        }
        let llvm_c = std::fs::read(ldir.join("c.ccob")).expect("LLVM output");
        match ccob::parse_header(&llvm_c, 0) {
            Ok(h) if h.version == want_v && h.method() == Some(Method::Zstd) => {}
            other => m.push(format!(
                "{label}: LLVM wrote {other:?}, want v{want_v} zstd"
            )),
        }
        // Native compress of LLVM's own uncompressed bundle.
        let mut na = common::strings(&["compress", "u.bc", "-o", "k.ccob", "--format-version"]);
        na.push(want_v.to_string());
        if let Some(l) = level {
            na.push(format!("--level={l}"));
        }
        let k = exec(Path::new(KIT), &na, &ldir, &[]);
        match std::fs::read(ldir.join("k.ccob")) {
            Ok(kb) if kb == llvm_c => {}
            Ok(kb) => m.push(format!(
                "{label}: offload-kit compress gives {} bytes, LLVM {} (libzstd {})",
                kb.len(),
                llvm_c.len(),
                zstd::zstd_safe::version_number()
            )),
            Err(_) => m.push(format!(
                "{label}: offload-kit compress failed: {}",
                k.stderr
            )),
        }
        // The drop-in, same command and environment.
        let d = drop_in(n, &kdir, &ca, &env);
        compare_runs(&label, &c, &d, (&ldir, &kdir), &["c.ccob"], &mut m);
        m
    });
    let m: Vec<String> = results.into_iter().flatten().collect();
    eprintln!(
        "llvm_compress_is_byte_identical: {} configurations, libzstd {}",
        items.len(),
        zstd::zstd_safe::version_number()
    );
    finish("llvm_compress_is_byte_identical", &m);
}

/// `convert` between versions gives what LLVM writes for each version.
#[test]
fn llvm_convert_matches_llvm_versions() {
    let Some(bs) = bundlers(&[19, 22]) else {
        return;
    };
    let root = tempfile::tempdir().expect("tempdir");
    let mut m = Vec::new();
    for p in payloads().into_iter().take(2) {
        let dir = root.path().join(p.name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("h"), b"HOSTDATA").expect("write");
        std::fs::write(dir.join("d"), &p.dev).expect("write");
        let mut files = Vec::new();
        for (n, bin) in &bs {
            for envv in [None, Some("2")] {
                let name = format!("l{n}-{}.ccob", envv.unwrap_or("d"));
                let mut a = bundle_args(*n, &name);
                a.push("-compress".into());
                let env: Vec<(&str, &str)> = envv
                    .map(|v| vec![("COMPRESSED_BUNDLE_FORMAT_VERSION", v)])
                    .unwrap_or_default();
                let o = exec(bin, &a, &dir, &env);
                assert_eq!(o.class(), Class::Ok, "LLVM {n}: {}", o.stderr);
                files.push(name);
            }
        }
        let f = |name: &str| std::fs::read(dir.join(name)).expect("read");
        // 22 with version 2 is byte-identical to 19 (same libzstd).
        if f("l22-2.ccob") != f("l19-d.ccob") {
            m.push(format!(
                "{}: LLVM 22 v2 != LLVM 19 (spec/ccob.md CCOB-8 says equal)",
                p.name
            ));
        }
        for (src, to, want) in [
            ("l22-d.ccob", "v2", "l19-d.ccob"),
            ("l19-d.ccob", "v3", "l22-d.ccob"),
            ("l22-2.ccob", "v3", "l22-d.ccob"),
        ] {
            let out = format!("{src}.to-{to}");
            let o = exec(
                Path::new(KIT),
                &common::strings(&["convert", src, "--to", to, "-o", &out]),
                &dir,
                &[],
            );
            if o.code != Some(0) || std::fs::read(dir.join(&out)).ok() != Some(f(want)) {
                m.push(format!(
                    "{}: convert {src} --to {to} != LLVM's {want} ({} {})",
                    p.name,
                    o.status(),
                    o.stderr.trim()
                ));
            }
        }
    }
    finish("llvm_convert_matches_llvm_versions", &m);
}

/// The environment variables and option combinations of `-compress`.
#[test]
fn llvm_compress_options_and_environment() {
    let Some(bs) = bundlers(&[13, 14, 15, 16, 19, 22]) else {
        return;
    };
    let root = tempfile::tempdir().expect("tempdir");
    type Case = (
        &'static str,
        Vec<&'static str>,
        Vec<(&'static str, &'static str)>,
    );
    let cases: Vec<Case> = vec![
        ("-compress", vec!["-compress"], vec![]),
        (
            "env COMPRESS=1",
            vec![],
            vec![("OFFLOAD_BUNDLER_COMPRESS", "1")],
        ),
        (
            "env COMPRESS=0",
            vec![],
            vec![("OFFLOAD_BUNDLER_COMPRESS", "0")],
        ),
        (
            "env COMPRESS=yes",
            vec![],
            vec![("OFFLOAD_BUNDLER_COMPRESS", "yes")],
        ),
        (
            "env COMPRESS=1, IGNORE_ENV_VAR=1",
            vec![],
            vec![
                ("OFFLOAD_BUNDLER_COMPRESS", "1"),
                ("OFFLOAD_BUNDLER_IGNORE_ENV_VAR", "1"),
            ],
        ),
        (
            "-compress=false beats env COMPRESS=1",
            vec!["-compress=false"],
            vec![("OFFLOAD_BUNDLER_COMPRESS", "1")],
        ),
        (
            "env LEVEL=9",
            vec!["-compress"],
            vec![("OFFLOAD_BUNDLER_COMPRESSION_LEVEL", "9")],
        ),
        (
            "env LEVEL=abc",
            vec!["-compress"],
            vec![("OFFLOAD_BUNDLER_COMPRESSION_LEVEL", "abc")],
        ),
        (
            "-compression-level=9 beats env LEVEL=1",
            vec!["-compress", "-compression-level=9"],
            vec![("OFFLOAD_BUNDLER_COMPRESSION_LEVEL", "1")],
        ),
        (
            "level 100",
            vec!["-compress", "-compression-level=100"],
            vec![],
        ),
        (
            "level -5",
            vec!["-compress", "-compression-level=-5"],
            vec![],
        ),
        (
            "level without -compress",
            vec!["-compression-level=9"],
            vec![],
        ),
        (
            "FORMAT_VERSION=2",
            vec!["-compress"],
            vec![("COMPRESSED_BUNDLE_FORMAT_VERSION", "2")],
        ),
        (
            "FORMAT_VERSION=3",
            vec!["-compress"],
            vec![("COMPRESSED_BUNDLE_FORMAT_VERSION", "3")],
        ),
        (
            "FORMAT_VERSION=1",
            vec!["-compress"],
            vec![("COMPRESSED_BUNDLE_FORMAT_VERSION", "1")],
        ),
        (
            "FORMAT_VERSION=abc",
            vec!["-compress"],
            vec![("COMPRESSED_BUNDLE_FORMAT_VERSION", "abc")],
        ),
    ];
    let mut items = Vec::new();
    for (n, bin) in &bs {
        for (i, c) in cases.iter().enumerate() {
            // 14 and 16 have no -compress: only the cases that turn
            // compression on apply (the drop-in accepts the other options
            // under every release, cli.md).
            if *n <= 16 && !c.1.contains(&"-compress") {
                continue;
            }
            items.push((*n, bin.clone(), i, c));
        }
    }
    let results = par_map(&items, |(n, bin, i, (label, extra, env))| {
        let mut m = Vec::new();
        let label = format!("LLVM {n}, {label}");
        let (ldir, kdir) = common::case_dirs(root.path(), &format!("{n}-{i}"));
        common::write_both(&ldir, &kdir, "h", b"HOSTDATA");
        common::write_both(&ldir, &kdir, "d", b"DEVDATA");
        let mut a = bundle_args(*n, "o.bc");
        a.extend(extra.iter().map(|s| s.to_string()));
        let l = exec(bin, &a, &ldir, env);
        let k = drop_in(*n, &kdir, &a, env);
        if *n <= 16 {
            // LLVM: unknown option; offload-kit: an error naming the release.
            if l.class() != Class::Fail || k.class() != Class::Fail || k.panicked() {
                m.push(format!(
                    "{label}: want both to fail, LLVM {} {:?}, offload-kit {} {:?}",
                    l.status(),
                    l.stderr,
                    k.status(),
                    k.stderr
                ));
            }
            return m;
        }
        compare_runs(&label, &l, &k, (&ldir, &kdir), &["o.bc"], &mut m);
        m
    });
    let m: Vec<String> = results.into_iter().flatten().collect();
    finish("llvm_compress_options_and_environment", &m);
}

/// LLVM 14/16/19/22 read offload-kit's v1/v2/v3 zlib and zstd blobs as the
/// spec says (14/16: not a bundle; 19: v1, v2 but not v3; 22: all), and the
/// drop-in does the same.
#[test]
fn llvm_reads_our_blobs() {
    let Some(bs) = bundlers(&[13, 14, 15, 16, 19, 22]) else {
        return;
    };
    let root = tempfile::tempdir().expect("tempdir");
    let big = library_bytes(8 << 20, 300_000);
    let bundles: [(&str, &[u8]); 2] = [("small", b"DEVDATA"), ("300k", &big)];
    let mut items = Vec::new();
    for (bname, dev) in &bundles {
        for v in VERSIONS {
            for meth in ["zlib", "zstd"] {
                for (n, bin) in &bs {
                    items.push((*bname, *dev, v, meth, *n, bin.clone()));
                }
            }
        }
    }
    let results = par_map(&items, |&(bname, dev, v, meth, n, ref bin)| {
        let mut m = Vec::new();
        let label = format!("{bname} v{v} {meth}, LLVM {n}");
        let (ldir, kdir) = common::case_dirs(root.path(), &format!("{bname}-{v}-{meth}-{n}"));
        let bundle = bundle_of(dev);
        std::fs::write(ldir.join("u.bc"), &bundle).expect("write");
        let o = exec(
            Path::new(KIT),
            &common::strings(&[
                "compress",
                "u.bc",
                "-o",
                "in.ccob",
                "--format-version",
                &v.to_string(),
                "--method",
                meth,
            ]),
            &ldir,
            &[],
        );
        if o.code != Some(0) {
            m.push(format!(
                "{label}: offload-kit compress failed: {}",
                o.stderr
            ));
            return m;
        }
        let blob = std::fs::read(ldir.join("in.ccob")).expect("read");
        std::fs::write(kdir.join("in.ccob"), &blob).expect("write");
        let want = if n <= 16 || (n == 19 && v == 3) {
            Class::Fail
        } else {
            Class::Ok
        };
        // Unbundle both entries.
        let mut a = common::strings(&[
            "-type=bc",
            &format!("-targets={HOST},{GFX906}"),
            "-unbundle",
        ]);
        a.extend(io_args(n, &["in.ccob"], &["h.out", "d.out"]));
        let l = exec(bin, &a, &ldir, &[]);
        let k = drop_in(n, &kdir, &a, &[]);
        if l.class() != want {
            m.push(format!(
                "{label}: LLVM {} {:?}, the spec says {want:?}",
                l.status(),
                messages(&l.stderr)
            ));
        }
        if want == Class::Ok {
            for (o, bytes) in [("h.out", &b"HOSTDATA"[..]), ("d.out", dev)] {
                if std::fs::read(ldir.join(o)).ok().as_deref() != Some(bytes) {
                    m.push(format!("{label}: LLVM's {o} is not the original"));
                }
            }
        }
        compare_runs(
            &format!("{label} -unbundle"),
            &l,
            &k,
            (&ldir, &kdir),
            &["h.out", "d.out"],
            &mut m,
        );
        // -list.
        let mut a = common::strings(&["-type=bc", "-list"]);
        a.extend(io_args(n, &["in.ccob"], &[]));
        let l = exec(bin, &a, &ldir, &[]);
        let k = drop_in(n, &kdir, &a, &[]);
        compare_runs(
            &format!("{label} -list"),
            &l,
            &k,
            (&ldir, &kdir),
            &[],
            &mut m,
        );
        m
    });
    let m: Vec<String> = results.into_iter().flatten().collect();
    finish("llvm_reads_our_blobs", &m);
}

/// A real `clang-22 -x hip --offload-compress` object: its `.hip_fatbin`
/// verifies, and `list` finds what LLVM 22's `-list -type=o` finds.
#[test]
fn llvm_hip_fatbin_from_clang22() {
    let (Some(clang), Some(objcopy), Some(b22)) = (
        llvm_tool(22, "clang"),
        llvm_tool(22, "llvm-objcopy"),
        bundler(22),
    ) else {
        return;
    };
    let Some(b19) = bundler(19) else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(
        d.join("k.hip"),
        "#define __global__ __attribute__((global))\n\
         struct dim3 { unsigned x, y, z; };\n\
         typedef struct ihipStream_t *hipStream_t;\n\
         extern \"C\" int hipLaunchKernel(const void *f, dim3 g, dim3 b, void **args,\n\
                                        unsigned long shm, hipStream_t s);\n\
         __global__ void k(int *p) { p[0] = 42; }\n",
    )
    .expect("write");
    let o = exec(
        &clang,
        &common::strings(&[
            "-x",
            "hip",
            "--offload-compress",
            "--offload-arch=gfx906",
            "-nogpulib",
            "-nogpuinc",
            "-c",
            "k.hip",
            "-o",
            "k.o",
        ]),
        d,
        &[],
    );
    assert_eq!(o.class(), Class::Ok, "clang-22 failed: {}", o.stderr);
    let o = exec(
        &objcopy,
        &common::strings(&["--dump-section=.hip_fatbin=fat.bin", "k.o", "k.copy.o"]),
        d,
        &[],
    );
    assert_eq!(o.class(), Class::Ok, "llvm-objcopy failed: {}", o.stderr);
    let fat = std::fs::read(d.join("fat.bin")).expect("fat.bin");
    let mut m = Vec::new();
    match ccob::parse_header(&fat, 0) {
        Ok(h) if h.version == 3 && h.method() == Some(Method::Zstd) => {}
        other => m.push(format!("clang-22's .hip_fatbin header: {other:?}")),
    }
    let v = kit(d, &["verify", "fat.bin"]);
    if v.code != Some(0)
        || !v.stdout_text().contains("CCOB v3 Zstd")
        || !v.stdout_text().contains(": ok")
    {
        m.push(format!(
            "verify fat.bin: {} {:?} {:?}",
            v.status(),
            v.stdout_text(),
            v.stderr
        ));
    }
    let l = exec(
        &b22,
        &common::strings(&["-list", "-type=o", "-input=fat.bin"]),
        d,
        &[],
    );
    assert_eq!(l.class(), Class::Ok, "LLVM 22 -list: {}", l.stderr);
    let l_stdout = l.stdout_text();
    let mut llvm_ids: Vec<&str> = l_stdout.lines().collect();
    llvm_ids.sort_unstable();
    let k = kit(d, &["list", "--json", "fat.bin"]);
    match serde_json::from_str::<serde_json::Value>(&k.stdout_text()) {
        Ok(j) => {
            let mut ids: Vec<String> = j["entries"]
                .as_array()
                .map(|es| {
                    es.iter()
                        .filter_map(|e| e["id"].as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            ids.sort_unstable();
            if ids != llvm_ids {
                m.push(format!(
                    "list fat.bin: {ids:?}, LLVM 22 -list: {llvm_ids:?}"
                ));
            }
        }
        Err(e) => m.push(format!(
            "list --json fat.bin: {} {e}: {:?} {:?}",
            k.status(),
            k.stdout_text(),
            k.stderr
        )),
    }
    // The drop-in's -list prints LLVM's lines in LLVM's order.
    let di = drop_in(
        22,
        d,
        &common::strings(&["-list", "-type=o", "-input=fat.bin"]),
        &[],
    );
    if di.code != Some(0) || di.stdout != l.stdout {
        m.push(format!(
            "drop-in 22 -list: {} {:?}, LLVM {:?}",
            di.status(),
            di.stdout_text(),
            l.stdout_text()
        ));
    }
    // The device code object: LLVM's unbundling = offload-kit's extract.
    if let Some(dev_id) = l_stdout.lines().find(|id| id.contains("gfx906")) {
        let u = exec(
            &b22,
            &common::strings(&[
                "-unbundle",
                "-type=o",
                &format!("-targets={dev_id}"),
                "-input=fat.bin",
                "-output=llvm.co",
            ]),
            d,
            &[],
        );
        let e = kit(d, &["extract", "fat.bin", "--id", dev_id, "-o", "kit.co"]);
        let (a, b) = (
            std::fs::read(d.join("llvm.co")).ok(),
            std::fs::read(d.join("kit.co")).ok(),
        );
        if u.code != Some(0)
            || e.code != Some(0)
            || a != b
            || !a.is_some_and(|a| a.starts_with(b"\x7fELF"))
        {
            m.push(format!(
                "unbundling {dev_id}: LLVM {} offload-kit {} {:?}, same bytes: {}",
                u.status(),
                e.status(),
                e.stderr,
                std::fs::read(d.join("llvm.co")).ok() == std::fs::read(d.join("kit.co")).ok()
            ));
        }
    } else {
        m.push(format!(
            "LLVM 22 lists no gfx906 entry: {:?}",
            l.stdout_text()
        ));
    }
    // 19 cannot read the v3 blob, and the 19 profile says so the same way.
    let l19 = exec(
        &b19,
        &common::strings(&["-list", "-type=o", "-input=fat.bin"]),
        d,
        &[],
    );
    let k19 = drop_in(
        19,
        d,
        &common::strings(&["-list", "-type=o", "-input=fat.bin"]),
        &[],
    );
    if l19.class() != Class::Fail
        || k19.class() != Class::Fail
        || messages(&l19.stderr) != messages(&k19.stderr)
    {
        m.push(format!(
            "LLVM 19 on clang-22's fat binary: LLVM {} {:?}, offload-kit {} {:?}",
            l19.status(),
            messages(&l19.stderr),
            k19.status(),
            messages(&k19.stderr)
        ));
    }
    finish("llvm_hip_fatbin_from_clang22", &m);
}

/// `tests/data/malformed/ccob_*.bin` through LLVM and the drop-in: same exit
/// class, stdout, messages and outputs; where LLVM crashes, offload-kit
/// exits 1 citing a rule.
#[test]
fn llvm_malformed_files_match_drop_in() {
    let Some(bs) = bundlers(&[13, 14, 15, 16, 19, 22]) else {
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(MALFORMED_DIR)
        .expect("malformed dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("ccob_") && n.ends_with(".bin"))
        })
        .collect();
    files.sort();
    assert!(files.len() >= 5, "the malformed corpus has the CCOB files");
    let root = tempfile::tempdir().expect("tempdir");
    let commands: [(&str, &[&str], &[&str]); 3] = [
        ("-list", &["-list"], &[]),
        ("-unbundle gfx906", &["-unbundle"], &["d.out"]),
        ("-unbundle host,gfx906", &["-unbundle"], &["h.out", "d.out"]),
    ];
    let mut items = Vec::new();
    for f in &files {
        for (n, bin) in &bs {
            for (ci, c) in commands.iter().enumerate() {
                items.push((f, *n, bin.clone(), ci, c));
            }
        }
    }
    let results = par_map(&items, |&(f, n, ref bin, ci, &(cname, flags, outs))| {
        let mut m = Vec::new();
        let fname = f.file_name().and_then(|n| n.to_str()).expect("name");
        let label = format!("{fname}, LLVM {n}, {cname}");
        let (ldir, kdir) = common::case_dirs(root.path(), &format!("{fname}-{n}-{ci}"));
        common::write_both(&ldir, &kdir, "in", &std::fs::read(f).expect("read"));
        let targets = if outs.len() == 2 {
            format!("-targets={HOST},{GFX906}")
        } else {
            format!("-targets={GFX906}")
        };
        let mut a = common::strings(&["-type=bc"]);
        a.extend(flags.iter().map(|s| s.to_string()));
        if !outs.is_empty() {
            a.push(targets);
        }
        a.extend(io_args(n, &["in"], outs));
        let l = exec(bin, &a, &ldir, &[]);
        let k = drop_in(n, &kdir, &a, &[]);
        if fname == "ccob_v2_damaged_payload.bin" && cname == "-list" && n >= 19 {
            // The documented difference (spec/ccob.md, "Listing a compressed
            // bundle"): -list decodes the header only, LLVM everything.
            let k_stdout = k.stdout_text();
            let listed: BTreeSet<&str> = k_stdout.lines().collect();
            if l.code != Some(1)
                || !l.stderr.contains("Data corruption detected")
                || k.code != Some(0)
                || listed != BTreeSet::from([HOST_ID, GFX906])
            {
                m.push(format!(
                    "{label}: want LLVM to fail on the damaged block and offload-kit to list the header; LLVM {:?} {}, offload-kit {:?} {} {}",
                    l.code, l.stderr.trim(), k.code, k.stdout_text().trim(), k.stderr.trim()
                ));
            }
            return m;
        }
        compare_runs(&label, &l, &k, (&ldir, &kdir), outs, &mut m);
        m
    });
    let m: Vec<String> = results.into_iter().flatten().collect();
    finish("llvm_malformed_files_match_drop_in", &m);
}

/// Hand-made blobs (every truncation of interest, sizes, claims, versions,
/// methods, trailing data, empty data) through LLVM 19/22 `-list` and the
/// drop-in.
fn crafted_blobs() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let hello = b"hello world, not a bundle";
    for v in VERSIONS {
        for meth in METHODS {
            let s = stream(meth, GOOD);
            let name = format!("v{v}-{}", method_name(meth));
            let b = valid(v, meth, GOOD);
            let n = GOOD.len() as u64;
            let mut add = |what: &str, bytes: Vec<u8>| out.push((format!("{name} {what}"), bytes));
            add("valid", b.clone());
            for len in [
                4, 7, 8, 12, 16, 19, 20, 21, 23, 24, 25, 28, 31, 32, 33, 36, 40,
            ] {
                if len < b.len() {
                    add(&format!("cut to {len}"), b[..len].to_vec());
                }
            }
            add("stream one byte short", b[..b.len() - 1].to_vec());
            add("half the stream", b[..b.len() - s.len() / 2].to_vec());
            add("header only", make_with(v, meth, GOOD, &[], |_| {}));
            add("+1 zero byte", [b.clone(), vec![0]].concat());
            add("+junk", [b.clone(), b"junkjunk".to_vec()].concat());
            add("twice", [b.clone(), b.clone()].concat());
            for claim in [0, n - 1, n + 100] {
                add(
                    &format!("claim {claim}"),
                    make_with(v, meth, GOOD, &s, |h| h.claim = claim),
                );
            }
            if v == 3 {
                add(
                    "claim 2^40",
                    make_with(v, meth, GOOD, &s, |h| h.claim = 1 << 40),
                );
            }
            if v >= 2 {
                for t in [0, 10, (hsize(v) + s.len()) as u64 - 1, 100_000] {
                    add(
                        &format!("total {t}"),
                        make_with(v, meth, GOOD, &s, |h| h.total = t),
                    );
                }
            }
            add(
                "hash zero",
                make_with(v, meth, GOOD, &s, |h| h.hash = [0; 8]),
            );
            add("method 2", make_with(v, meth, GOOD, &s, |h| h.method = 2));
            add(
                "the other method",
                make_with(v, meth, GOOD, &s, |h| h.method = 1 - meth),
            );
            for version in [0u16, 4, 0xffff] {
                add(
                    &format!("relabelled version {version}"),
                    make_with(v, meth, GOOD, &s, |h| h.version = version),
                );
            }
            add(
                "non-bundle content",
                make_with(v, meth, hello, &stream(meth, hello), |_| {}),
            );
            add(
                "empty content",
                make_with(v, meth, b"", &stream(meth, b""), |_| {}),
            );
        }
    }
    out
}

#[test]
fn llvm_crafted_blobs_match_drop_in() {
    let Some(bs) = bundlers(&[19, 22]) else {
        return;
    };
    let root = tempfile::tempdir().expect("tempdir");
    let blobs = crafted_blobs();
    let mut items = Vec::new();
    for (i, b) in blobs.iter().enumerate() {
        for (n, bin) in &bs {
            items.push((i, b, *n, bin.clone()));
        }
    }
    let results = par_map(&items, |&(i, (name, bytes), n, ref bin)| {
        let mut m = Vec::new();
        let (ldir, kdir) = common::case_dirs(root.path(), &format!("{i}-{n}"));
        common::write_both(&ldir, &kdir, "in", bytes);
        let a = common::strings(&["-type=bc", "-list", "-input=in"]);
        let l = exec(bin, &a, &ldir, &[]);
        let k = drop_in(n, &kdir, &a, &[]);
        compare_runs(
            &format!("{name}, LLVM {n} -list"),
            &l,
            &k,
            (&ldir, &kdir),
            &[],
            &mut m,
        );
        m
    });
    let m: Vec<String> = results.into_iter().flatten().collect();
    eprintln!(
        "llvm_crafted_blobs_match_drop_in: {} blobs x 2 releases",
        blobs.len()
    );
    finish("llvm_crafted_blobs_match_drop_in", &m);
}

/// `-verbose` prints LLVM's lines, bundling and unbundling, except the
/// speed lines and 19's timer report (timings).
#[test]
fn llvm_verbose_lines_match() {
    let Some(bs) = bundlers(&[19, 22]) else {
        return;
    };
    fn lines(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for l in text.lines() {
            if l.starts_with("===-") {
                break; // the timer report closes the output
            }
            if l.starts_with("offload-kit: warning:")
                || l.starts_with("Compression speed:")
                || l.starts_with("Decompression speed:")
            {
                continue;
            }
            out.push(l.to_string());
        }
        out
    }
    // A device payload whose bundle's hash prints with a leading zero digit
    // (LLVM formats it with `format_hex(h, 16)`: 14 digits at least).
    let dev = (0..10_000)
        .map(|i| format!("DEVDATA{i}").into_bytes())
        .find(|d| hash_u64(&bundle_of(d)) >> 56 < 0x10)
        .expect("a short hash");
    let root = tempfile::tempdir().expect("tempdir");
    let mut m = Vec::new();
    for (n, bin) in &bs {
        for (pname, d) in [("small", b"DEVDATA".to_vec()), ("short hash", dev.clone())] {
            // Bundling.
            let label = format!("LLVM {n}, {pname}, -compress -verbose");
            let (ldir, kdir) = common::case_dirs(root.path(), &format!("{n}-{pname}"));
            common::write_both(&ldir, &kdir, "h", b"HOSTDATA");
            common::write_both(&ldir, &kdir, "d", &d);
            let mut a = bundle_args(*n, "c.ccob");
            a.extend(common::strings(&["-compress", "-verbose"]));
            let l = exec(bin, &a, &ldir, &[]);
            let k = drop_in(*n, &kdir, &a, &[]);
            if lines(&l.stderr) != lines(&k.stderr) {
                m.push(format!(
                    "{label}:\n    LLVM        {:?}\n    offload-kit {:?}",
                    lines(&l.stderr),
                    lines(&k.stderr)
                ));
            }
        }
        // Unbundling.
        let blobs: Vec<(&str, Vec<u8>)> = vec![
            ("LLVM's v2", V2_SMALL.to_vec()),
            ("LLVM's v3", V3_SMALL.to_vec()),
            ("v1 zlib", valid(1, ZLIB, GOOD)),
            ("v2 zlib", valid(2, ZLIB, GOOD)),
            (
                "v2, hash zero",
                make_with(2, ZSTD, GOOD, &zstd_frame(GOOD), |h| h.hash = [0; 8]),
            ),
            ("v3 short hash", valid(3, ZSTD, &bundle_of(&dev))),
        ];
        for (bname, blob) in blobs {
            if *n == 19 && bname.contains("v3") {
                continue;
            }
            let label = format!("LLVM {n}, {bname}, -unbundle -verbose");
            let (ldir, kdir) = common::case_dirs(root.path(), &format!("{n}-u-{bname}"));
            common::write_both(&ldir, &kdir, "in", &blob);
            let a = common::strings(&[
                "-type=bc",
                &format!("-targets={GFX906}"),
                "-unbundle",
                "-input=in",
                "-output=d.out",
                "-verbose",
            ]);
            let l = exec(bin, &a, &ldir, &[]);
            let k = drop_in(*n, &kdir, &a, &[]);
            if l.class() != k.class() || lines(&l.stderr) != lines(&k.stderr) {
                m.push(format!(
                    "{label}:\n    LLVM        {} {:?}\n    offload-kit {} {:?}",
                    l.status(),
                    lines(&l.stderr),
                    k.status(),
                    lines(&k.stderr)
                ));
            }
        }
    }
    finish("llvm_verbose_lines_match", &m);
}

impl offload_kit::source::Source for WindowLog {
    fn bytes(&self) -> &[u8] {
        &self.data
    }
    fn window(&self, offset: u64, len: u64) -> Option<offload_kit::source::Window<'_>> {
        self.taken.borrow_mut().push((offset, len));
        let w = self.data.get(offset as usize..(offset + len) as usize)?;
        Some(offload_kit::source::Window::Held(Box::new(w.to_vec())))
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

fn ids_of(view: binary::LlvmView<'_>) -> Vec<String> {
    match view {
        binary::LlvmView::Entries(es) => es.iter().map(|e| e.id_str().into_owned()).collect(),
        other => panic!("not a list: {other:?}"),
    }
}

/// `-list` of a compressed bundle decodes only the bundle header when
/// LLVM's outcome is known without decoding the rest, and lists what the
/// full decompression lists (spec/ccob.md, "Listing a compressed bundle").
#[test]
fn list_decodes_only_the_header() {
    // A bundle much larger than the header, with a header over 64 KiB.
    let big = xorshift_bytes(3_000_000, 0x2545f4914f6cdd1d, 60);
    let many: Vec<String> = (0..1500)
        .map(|i| format!("hip-amdgcn-amd-amdhsa--gfx906:xnack+:sramecc-{i:0>40}"))
        .collect();
    let mut entries: Vec<(&[u8], &[u8])> = vec![(HOST.as_bytes(), &big)];
    entries.extend(many.iter().map(|id| (id.as_bytes(), &b"D"[..])));
    let bundle = binary::write_to_vec(&entries, 1).unwrap();
    for r in [Release::L19, Release::L22] {
        for version in [2u16, 3] {
            if r == Release::L19 && version == 3 {
                continue;
            }
            let opts = WriteOptions {
                version,
                method: Method::Zstd,
                level: 3,
            };
            let blob = ccob::compress(&bundle, opts).unwrap();
            let at_hand = ccob::llvm_list_prefix(&blob.as_slice(), r).expect("header-only path");
            assert_eq!(at_hand.len(), bundle.len() as u64);
            let prefix = at_hand.bytes();
            assert!(prefix.len() > 64 << 10, "the header is longer than 64 KiB");
            assert!(
                prefix.len() < bundle.len() / 2,
                "{} bytes decoded",
                prefix.len()
            );
            assert_eq!(prefix[..], bundle[..prefix.len()]);
            let LlvmDecompress::Data(full) = ccob::llvm_decompress(&blob, r) else {
                panic!("decompresses");
            };
            assert_eq!(
                ids_of(binary::llvm_read(&at_hand, 0, r)),
                ids_of(binary::llvm_read(&full, 0, r))
            );
        }
    }
    // Damage in a later zstd block: LLVM's one-shot call fails, -list
    // reads the header (the documented difference).
    let damaged = std::fs::read(format!("{MALFORMED_DIR}/ccob_v2_damaged_payload.bin")).unwrap();
    for r in [Release::L19, Release::L22] {
        assert!(matches!(
            ccob::llvm_decompress(&damaged, r),
            LlvmDecompress::Fails(..)
        ));
        let prefix = ccob::llvm_list_prefix(&damaged.as_slice(), r).unwrap();
        let mut ids = ids_of(binary::llvm_read(&prefix, 0, r));
        ids.sort();
        assert_eq!(ids, [GFX906, HOST_ID]);
    }
    // Where the outcome needs the whole payload: the full path.
    let good_v2 = ccob::compress(
        GOOD,
        WriteOptions {
            version: 2,
            method: Method::Zstd,
            level: 3,
        },
    )
    .unwrap();
    assert!(ccob::llvm_list_prefix(&good_v2.as_slice(), Release::L22).is_some());
    assert!(
        ccob::llvm_list_prefix(&good_v2.as_slice(), Release::L16).is_none(),
        "16 reads no CCOB"
    );
    let zlib = ccob::compress(
        GOOD,
        WriteOptions {
            version: 2,
            method: Method::Zlib,
            level: 6,
        },
    )
    .unwrap();
    assert!(
        ccob::llvm_list_prefix(&zlib.as_slice(), Release::L22).is_none(),
        "zlib"
    );
    let two = [good_v2.clone(), good_v2.clone()].concat();
    assert!(
        ccob::llvm_list_prefix(&two.as_slice(), Release::L22).is_none(),
        "two blobs"
    );
    let cut = &good_v2[..good_v2.len() - 1];
    assert!(
        ccob::llvm_list_prefix(&cut, Release::L22).is_none(),
        "cut frame"
    );
    let text = ccob::compress(
        b"// __CLANG_OFFLOAD_BUNDLE____START__ host-x86_64-unknown-linux-gnu\nint x;\n// __CLANG_OFFLOAD_BUNDLE____END__ host-x86_64-unknown-linux-gnu\n",
        WriteOptions::default(),
    )
    .unwrap();
    assert!(
        ccob::llvm_list_prefix(&text.as_slice(), Release::L22).is_none(),
        "text bundle"
    );
}

/// `list --llvm-version N` of a compressed bundle reads only its header
/// where the release's outcome is known otherwise (zstd): the same
/// entries as the full decompression (zlib takes that path), through
/// windows no larger than a stream chunk.
#[test]
fn release_listing_reads_the_header_only() {
    let dev = xorshift_bytes(9_000_000, 0x9e3779b97f4a7c15, 56);
    let bundle =
        binary::write_to_vec(&[(HOST.as_bytes(), b"HOST"), (GFX906.as_bytes(), &dev)], 1).unwrap();
    let blob = |method| {
        ccob::compress(
            &bundle,
            WriteOptions {
                version: 2,
                method,
                level: 1,
            },
        )
        .unwrap()
    };
    let (zstd, zlib) = (blob(Method::Zstd), blob(Method::Zlib));
    for r in [Release::L19, Release::L22] {
        let src = WindowLog {
            data: zstd.clone(),
            taken: Default::default(),
        };
        let got = detect::list(&src, Some(r)).unwrap();
        let want = detect::list(&zlib, Some(r)).unwrap();
        assert_eq!(got.entries, want.entries, "LLVM {r}");
        assert_eq!(got.entries.len(), 2);
        let taken = src.taken.borrow();
        let read: u64 = taken.iter().map(|w| w.1).sum();
        assert!(
            read < zstd.len() as u64 / 2,
            "LLVM {r}: {read} of {} bytes read",
            zstd.len()
        );
        assert!(taken.iter().all(|w| w.1 <= ccob::STREAM_CHUNK));
    }
    // 16 reads no compressed bundle: the listing says so.
    let e = detect::list(&zstd, Some(Release::L16)).unwrap_err();
    assert_eq!(e[0].rule_id(), Some("CCOB-1"));
}

/// `extract` from a file that is one large compressed bundle decodes the
/// stream once (the listing reads the header, the extraction verifies):
/// right bytes, and damage anywhere is still an error with no output.
#[test]
fn large_extract_verifies_in_one_pass() {
    let dev: Vec<u8> = (0..70_000_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 29) as u8 ^ (i / 4096) as u8)
        .collect();
    let bundle =
        binary::write_to_vec(&[(HOST.as_bytes(), b"HOST"), (GFX906.as_bytes(), &dev)], 1).unwrap();
    let blob = ccob::compress(
        &bundle,
        WriteOptions {
            version: 3,
            method: Method::Zstd,
            level: 1,
        },
    )
    .unwrap();
    let d = tempfile::tempdir().unwrap();
    let good = d.path().join("good.ccob");
    std::fs::write(&good, &blob).unwrap();
    let out = d.path().join("dev");
    let o = Command::new(KIT)
        .args(["extract", good.to_str().unwrap(), "--id", GFX906, "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read(&out).unwrap() == dev);
    let mut bad = blob.clone();
    let mid = 32 + (bad.len() - 32) * 3 / 4;
    bad[mid] ^= 0x20;
    let badp = d.path().join("bad.ccob");
    std::fs::write(&badp, &bad).unwrap();
    let v = Command::new(KIT).arg("verify").arg(&badp).output().unwrap();
    assert_eq!(v.status.code(), Some(1));
    for id in [HOST, GFX906] {
        let out = d.path().join(format!("x-{id}"));
        let o = Command::new(KIT)
            .args(["extract", badp.to_str().unwrap(), "--id", id, "-o"])
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{id}: {err}");
        assert!(
            err.contains("rule CCOB-5")
                || err.contains("rule CCOB-6")
                || err.contains("rule CCOB-7"),
            "{id}: {err}"
        );
        assert!(!out.exists(), "{id}: no output on error");
    }
}
