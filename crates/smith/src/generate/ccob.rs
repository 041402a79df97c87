//! Compressed bundles (`CCOB` v1/v2/v3, zlib or zstd) around a generated
//! binary bundle, and one violation per header rule of `ccob.md`.

use super::{binary, Cx, Draft, Violation};
use crate::bundle::ccob::{self, Method, WriteOptions};
use crate::format::ccob::{Field, Layout, VERSIONS};
use crate::rules::{self, Rule};

/// Rules a compressed bundle can break one at a time.
pub(crate) const RULES: &[Rule] = &[
    rules::CCOB_2,
    rules::CCOB_3,
    rules::CCOB_4,
    rules::CCOB_5,
    rules::CCOB_6,
    rules::CCOB_7,
    rules::CCOB_9,
];

/// Compress `bundle` with a random version, method and level.
///
/// The blob is a valid CCOB of that version, but not LLVM's bytes: zstd
/// runs without long-distance matching, whose tables cost more to reset
/// than a fuzzer's whole mutation (LLVM's bytes: [`ccob::compress`]).
pub(crate) fn compress(
    cx: &mut Cx<'_>,
    bundle: &[u8],
    versions: &[u16],
) -> (Vec<u8>, WriteOptions) {
    let version = *cx.rng.pick(versions);
    let method = if cx.rng.chance(50) {
        Method::Zstd
    } else {
        Method::Zlib
    };
    let level = match method {
        Method::Zstd => 1 + cx.rng.below(5) as i32,
        Method::Zlib => 1 + cx.rng.below(9) as i32,
    };
    let opts = WriteOptions {
        version,
        method,
        level,
    };
    // One context per thread, method and level, reused: creating one costs
    // more than compressing a small bundle.
    thread_local! {
        static ZSTD: std::cell::RefCell<Vec<Option<zstd::bulk::Compressor<'static>>>> =
            const { std::cell::RefCell::new(Vec::new()) };
        static ZLIB: std::cell::RefCell<Vec<Option<flate2::Compress>>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    let l = level as usize;
    let payload = match method {
        Method::Zstd => ZSTD.with(|c| {
            let mut c = c.borrow_mut();
            let n = c.len().max(l + 1);
            c.resize_with(n, || None);
            let ctx = c[l]
                .get_or_insert_with(|| zstd::bulk::Compressor::new(level).expect("zstd context"));
            ctx.compress(bundle).expect("compressing to memory")
        }),
        Method::Zlib => ZLIB.with(|c| {
            let mut c = c.borrow_mut();
            let n = c.len().max(l + 1);
            c.resize_with(n, || None);
            let z = c[l].get_or_insert_with(|| {
                flate2::Compress::new(flate2::Compression::new(level as u32), true)
            });
            z.reset();
            let mut out = Vec::with_capacity(bundle.len() + bundle.len() / 1000 + 64);
            loop {
                let before = z.total_in() as usize;
                let status = z
                    .compress_vec(&bundle[before..], &mut out, flate2::FlushCompress::Finish)
                    .expect("zlib to memory");
                if status == flate2::Status::StreamEnd {
                    break out;
                }
                out.reserve(out.capacity().max(64));
            }
        }),
    };
    let layout = Layout::of(version).expect("known version");
    let total = layout.size + payload.len() as u64;
    let mut blob = vec![0; layout.size as usize];
    blob[..4].copy_from_slice(b"CCOB");
    blob[4..6].copy_from_slice(&version.to_le_bytes());
    blob[6..8].copy_from_slice(&method.value().to_le_bytes());
    if let Some(f) = layout.total_size {
        put(&mut blob, f, total);
    }
    put(&mut blob, layout.uncompressed_size, bundle.len() as u64);
    let hash = layout.hash as usize;
    blob[hash..hash + 8].copy_from_slice(&ccob::truncated_md5(bundle));
    blob.extend_from_slice(&payload);
    (blob, opts)
}

/// `value` into field `f` of `blob`, cut to the field's width (a broken
/// header may claim what the field cannot hold).
fn put(blob: &mut [u8], f: Field, value: u64) {
    let (at, w) = (f.at as usize, f.width as usize);
    blob[at..at + w].copy_from_slice(&value.to_le_bytes()[..w]);
}

/// One compressed bundle, valid or breaking `rule`.
pub(crate) fn build(mut cx: Cx<'_>, rule: Option<Rule>) -> Option<Draft> {
    let entries = binary::entries(&mut cx, 70);
    let align = binary::align(&mut cx);
    let inner = if rule == Some(rules::CCOB_9) {
        // Data that is no bundle: text that starts like nothing known.
        b"not a bundle\n".repeat(1 + cx.rng.below(8))
    } else {
        binary::write(&entries, align).bytes
    };
    // generate() refused a release that reads no version.
    let versions = cx.ccob_versions(&VERSIONS);
    let (mut blob, opts) = compress(&mut cx, &inner, &versions);
    let description = format!(
        "CCOB v{} {:?} level {} of a binary bundle, {}",
        opts.version,
        opts.method,
        opts.level,
        binary::describe(&entries, align)
    );
    // Where this version's size and hash fields lie.
    let layout = Layout::of(opts.version).expect("known version");
    let total = layout.total_size.map(|f| f.at as usize);
    let (usize_at, hash_at) = (layout.uncompressed_size.at as usize, layout.hash as usize);
    let h = layout.size as usize;
    let v = |at: usize, what: &str| Some(Violation::new(rule?, at as u64, what));
    let violation = match rule {
        None => None,
        Some(rules::CCOB_2) => {
            let unknown: Vec<u16> = [0u16, 4, 5, 0x100, 0xffff]
                .into_iter()
                .filter(|v| Layout::of(*v).is_none())
                .collect();
            let ver = *cx.rng.pick(&unknown);
            blob[4..6].copy_from_slice(&ver.to_le_bytes());
            v(4, &format!("version {ver}"))
        }
        Some(rules::CCOB_3) => {
            let m = 2 + cx.rng.below(0xfffe) as u16;
            blob[6..8].copy_from_slice(&m.to_le_bytes());
            v(6, &format!("method {m}"))
        }
        Some(rules::CCOB_4) => {
            let at = total?;
            let len = blob.len() as u64;
            let bad = if cx.rng.chance(50) {
                len + 1 + cx.rng.below(1000) as u64
            } else {
                cx.rng.below(h) as u64
            };
            put(&mut blob, layout.total_size?, bad);
            v(at, &format!("total size {bad} of a {len}-byte blob"))
        }
        Some(rules::CCOB_5) => {
            // The stream is cut short; v2/v3 say so in their total size.
            let cut = h + cx.rng.below(blob.len() - h);
            blob.truncate(cut);
            if let Some(f) = layout.total_size {
                put(&mut blob, f, cut as u64);
            }
            v(h, "compressed stream cut short")
        }
        Some(rules::CCOB_6) => {
            let real = inner.len() as u64;
            let bad = real + 1 + cx.rng.below(64) as u64;
            put(&mut blob, layout.uncompressed_size, bad);
            v(
                usize_at,
                &format!("uncompressed size {bad}, the stream holds {real}"),
            )
        }
        Some(rules::CCOB_7) => {
            let k = cx.rng.below(8);
            blob[hash_at + k] ^= 1 << cx.rng.below(8);
            v(hash_at, &format!("hash byte {k} flipped"))
        }
        Some(rules::CCOB_9) => v(0, "the compressed data is not a bundle"),
        Some(_) => return None,
    };
    Some(Draft {
        bytes: blob,
        description,
        violation,
    })
}
