//! Hand-made compressed bundles (spec/ccob.md) and what tests of them share.
//! Included by crates/format/tests and by the root crate's tests; each
//! uses part of it.
#![allow(dead_code)]

// What the including file imports and defines (its constants, its
// fixtures), shared with it.
use super::*;

/// (offset, size) of every header field after the magic.
pub fn fields(v: u16) -> &'static [(usize, usize)] {
    match v {
        1 => &[(4, 2), (6, 2), (8, 4), (12, 8)],
        2 => &[(4, 2), (6, 2), (8, 4), (12, 4), (16, 8)],
        _ => &[(4, 2), (6, 2), (8, 8), (16, 8), (24, 8)],
    }
}

pub fn method_name(m: u16) -> &'static str {
    if m == ZLIB {
        "zlib"
    } else {
        "zstd"
    }
}

pub fn md5_8(raw: &[u8]) -> [u8; 8] {
    let d = Md5::digest(raw);
    d[..8].try_into().expect("8 bytes")
}

/// The hash as LLVM's `-verbose` prints it (`MD5Result::low()`).
pub fn hash_u64(raw: &[u8]) -> u64 {
    u64::from_le_bytes(md5_8(raw))
}

pub fn zlib_stream(raw: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(6));
    e.write_all(raw).expect("zlib");
    e.finish().expect("zlib")
}

pub fn zstd_frame(raw: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(raw, 3).expect("zstd")
}

pub fn stream(m: u16, raw: &[u8]) -> Vec<u8> {
    if m == ZLIB {
        zlib_stream(raw)
    } else {
        zstd_frame(raw)
    }
}

/// Header fields of a hand-made blob; `layout` (1, 2, 3) picks the field
/// widths, `version` is what the version field says.
#[derive(Clone, Copy)]
pub struct Hdr {
    pub layout: u16,
    pub version: u16,
    pub method: u16,
    pub total: u64,
    pub claim: u64,
    pub hash: [u8; 8],
}

pub fn header_bytes(h: &Hdr) -> Vec<u8> {
    let mut b = b"CCOB".to_vec();
    b.extend(h.version.to_le_bytes());
    b.extend(h.method.to_le_bytes());
    match h.layout {
        1 => b.extend((h.claim as u32).to_le_bytes()),
        2 => {
            b.extend((h.total as u32).to_le_bytes());
            b.extend((h.claim as u32).to_le_bytes());
        }
        _ => {
            b.extend(h.total.to_le_bytes());
            b.extend(h.claim.to_le_bytes());
        }
    }
    b.extend(h.hash);
    b
}

/// A blob of layout `v` whose fields are right for `raw` and `data` (the
/// total size covers `data`), after `f` has changed them.
pub fn make_with(v: u16, m: u16, raw: &[u8], data: &[u8], f: impl FnOnce(&mut Hdr)) -> Vec<u8> {
    let mut h = Hdr {
        layout: v,
        version: v,
        method: m,
        total: (hsize(v) + data.len()) as u64,
        claim: raw.len() as u64,
        hash: md5_8(raw),
    };
    f(&mut h);
    let mut b = header_bytes(&h);
    b.extend_from_slice(data);
    b
}

/// A correct blob of version `v`, method `m` for `raw`.
pub fn valid(v: u16, m: u16, raw: &[u8]) -> Vec<u8> {
    make_with(v, m, raw, &stream(m, raw), |_| {})
}

pub fn opts(version: u16, method: Method, level: i32) -> WriteOptions {
    WriteOptions {
        version,
        method,
        level,
    }
}

pub fn finish(test: &str, m: &[String]) {
    if !m.is_empty() {
        panic!(
            "{test}: {} mismatches:\n  {}",
            m.len(),
            m.iter().take(80).cloned().collect::<Vec<_>>().join("\n  ")
        );
    }
}

/// The binary bundle LLVM 19/22 write for host `HOSTDATA` and `dev` (gfx906).
pub fn bundle_of(dev: &[u8]) -> Vec<u8> {
    binary::write_to_vec(
        &[(HOST_ID.as_bytes(), b"HOSTDATA"), (GFX906.as_bytes(), dev)],
        1,
    )
    .expect("bundle")
}

pub fn seeds() -> Vec<Vec<u8>> {
    let mut v = vec![V3_SMALL.to_vec(), V2_SMALL.to_vec()];
    for ver in VERSIONS {
        for meth in METHODS {
            v.push(valid(ver, meth, GOOD));
        }
    }
    v
}

/// A source whose windows are copies, recording each window taken and
/// each `read_at` (the streaming reader's `pread`).
pub struct WindowLog {
    pub data: Vec<u8>,
    pub taken: std::cell::RefCell<Vec<(u64, u64)>>,
}

/// `n` pseudo-random bytes (xorshift64 from `seed`, each byte the state
/// shifted right by `shift`: 56 gives incompressible bytes, 60 bytes of
/// 16 values).
pub fn xorshift_bytes(n: usize, seed: u64, shift: u32) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> shift) as u8
        })
        .collect()
}

/// Seed `seed` (of [`seeds`]) with bytes flipped, then cut, then bytes
/// appended: what the never-panic properties hand every reader.
pub fn mutated(
    seed: usize,
    flips: Vec<(prop::sample::Index, u8)>,
    cut: Option<prop::sample::Index>,
    tail: Vec<u8>,
) -> Vec<u8> {
    let seeds = seeds();
    let mut b = seeds[seed % seeds.len()].clone();
    for (i, x) in flips {
        let at = i.index(b.len());
        b[at] ^= x;
    }
    if let Some(c) = cut {
        b.truncate(c.index(b.len() + 1));
    }
    b.extend(tail);
    b
}

/// Seed `seed` with its header field `field` (of its version's
/// [`fields`]) set to `value`.
pub fn with_field(seed: usize, field: usize, value: u64) -> Vec<u8> {
    let seeds = seeds();
    let mut b = seeds[seed % seeds.len()].clone();
    let v = u16::from_le_bytes([b[4], b[5]]);
    let f = fields(v);
    let (at, n) = f[field % f.len()];
    b[at..at + n].copy_from_slice(&value.to_le_bytes()[..n]);
    b
}
