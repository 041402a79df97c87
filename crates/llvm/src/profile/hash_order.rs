//! The order in which the packager of each release writes string entries:
//! iteration orders of LLVM's `DenseMap<StringRef, StringRef>` and
//! `StringMap<StringRef>`, and the hashes they use (`DenseMapInfo<StringRef>`,
//! `djbHash` in LLVM 14/16, `xxh3_64bits` in 19/22).
//!
//! `clang-offload-packager` collects the `--image=key=value,…` pairs in a
//! `DenseMap` (16, 19, 22), then copies every pair except `file` and
//! `kind` into the image's string map: a `StringMap` in 16 (so the written
//! order is that map's order), a `MapVector` in 19 and 22 (so the written
//! order is the `DenseMap` order). See `spec/offload-binary.md`, OB-17.
//!
//! # Example
//!
//! The orders of three packager keys in LLVM's hash maps.
//!
//! ```
//! use offload_kit_llvm::profile::hash_order::{densemap_hash, densemap_order, djb_hash, stringmap_order};
//!
//! // StringMap of LLVM 14/16: djbHash, 16 buckets, iterated in bucket order.
//! assert_eq!(djb_hash(b"kind"), 0x003c_79c6);
//! assert_eq!(stringmap_order(&["kind", "arch", "triple"], djb_hash), ["triple", "kind", "arch"]);
//!
//! // DenseMap<StringRef>: hash_value, 64 buckets.
//! assert_eq!(densemap_hash(b"kind"), 0xc820_7aa5);
//! let want: [&[u8]; 3] = [b"arch", b"triple", b"kind"];
//! assert_eq!(densemap_order(&[b"kind", b"arch", b"triple"]), want);
//! ```

const K0: u64 = 0xc3a5_c85c_97cb_3127;
const K1: u64 = 0xb492_b66f_be98_f273;
const K2: u64 = 0x9ae1_6a3b_2f90_404f;
const K3: u64 = 0xc949_d7c7_509e_6557;
/// `get_execution_seed()` of release builds (no ABI-breaking checks).
const SEED: u64 = 0xff51_afd7_ed55_8ccd;

fn fetch64(s: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(b)
}

fn fetch32(s: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&s[at..at + 4]);
    u64::from(u32::from_le_bytes(b))
}

fn shift_mix(v: u64) -> u64 {
    v ^ (v >> 47)
}

fn hash_16_bytes(low: u64, high: u64) -> u64 {
    const MUL: u64 = 0x9ddf_ea08_eb38_2d69;
    let mut a = (low ^ high).wrapping_mul(MUL);
    a ^= a >> 47;
    let mut b = (high ^ a).wrapping_mul(MUL);
    b ^= b >> 47;
    b.wrapping_mul(MUL)
}

fn hash_1to3(s: &[u8], seed: u64) -> u64 {
    let len = s.len();
    let a = u32::from(s[0]);
    let b = u32::from(s[len >> 1]);
    let c = u32::from(s[len - 1]);
    let y = a.wrapping_add(b << 8);
    let z = (len as u32).wrapping_add(c << 2);
    shift_mix(u64::from(y).wrapping_mul(K2) ^ u64::from(z).wrapping_mul(K3) ^ seed).wrapping_mul(K2)
}

fn hash_4to8(s: &[u8], seed: u64) -> u64 {
    let len = s.len();
    let a = fetch32(s, 0);
    hash_16_bytes(
        (len as u64).wrapping_add(a << 3),
        seed ^ fetch32(s, len - 4),
    )
}

fn hash_9to16(s: &[u8], seed: u64) -> u64 {
    let len = s.len();
    let a = fetch64(s, 0);
    let b = fetch64(s, len - 8);
    hash_16_bytes(
        seed ^ a,
        b.wrapping_add(len as u64).rotate_right(len as u32),
    ) ^ b
}

fn hash_17to32(s: &[u8], seed: u64) -> u64 {
    let len = s.len();
    let a = fetch64(s, 0).wrapping_mul(K1);
    let b = fetch64(s, 8);
    let c = fetch64(s, len - 8).wrapping_mul(K2);
    let d = fetch64(s, len - 16).wrapping_mul(K0);
    hash_16_bytes(
        a.wrapping_sub(b)
            .rotate_right(43)
            .wrapping_add((c ^ seed).rotate_right(30))
            .wrapping_add(d),
        a.wrapping_add((b ^ K3).rotate_right(20))
            .wrapping_sub(c)
            .wrapping_add(len as u64)
            .wrapping_add(seed),
    )
}

fn hash_33to64(s: &[u8], seed: u64) -> u64 {
    let len = s.len();
    let mut z = fetch64(s, 24);
    let mut a = fetch64(s, 0).wrapping_add(
        (len as u64)
            .wrapping_add(fetch64(s, len - 16))
            .wrapping_mul(K0),
    );
    let mut b = a.wrapping_add(z).rotate_right(52);
    let mut c = a.rotate_right(37);
    a = a.wrapping_add(fetch64(s, 8));
    c = c.wrapping_add(a.rotate_right(7));
    a = a.wrapping_add(fetch64(s, 16));
    let vf = a.wrapping_add(z);
    let vs = b.wrapping_add(a.rotate_right(31)).wrapping_add(c);
    a = fetch64(s, 16).wrapping_add(fetch64(s, len - 32));
    z = fetch64(s, len - 8);
    b = a.wrapping_add(z).rotate_right(52);
    c = a.rotate_right(37);
    a = a.wrapping_add(fetch64(s, len - 24));
    c = c.wrapping_add(a.rotate_right(7));
    a = a.wrapping_add(fetch64(s, len - 16));
    let wf = a.wrapping_add(z);
    let ws = b.wrapping_add(a.rotate_right(31)).wrapping_add(c);
    let r = shift_mix(
        vf.wrapping_add(ws)
            .wrapping_mul(K2)
            .wrapping_add(wf.wrapping_add(vs).wrapping_mul(K0)),
    );
    shift_mix((seed ^ r.wrapping_mul(K0)).wrapping_add(vs)).wrapping_mul(K2)
}

fn hash_short(s: &[u8], seed: u64) -> u64 {
    match s.len() {
        0 => K2 ^ seed,
        1..=3 => hash_1to3(s, seed),
        4..=8 => hash_4to8(s, seed),
        9..=16 => hash_9to16(s, seed),
        17..=32 => hash_17to32(s, seed),
        _ => hash_33to64(s, seed),
    }
}

struct State {
    h: [u64; 7],
}

impl State {
    fn create(s: &[u8], seed: u64) -> State {
        let mut h = [
            0,
            seed,
            hash_16_bytes(seed, K1),
            (seed ^ K1).rotate_right(49),
            seed.wrapping_mul(K1),
            shift_mix(seed),
            0,
        ];
        h[6] = hash_16_bytes(h[4], h[5]);
        let mut st = State { h };
        st.mix(s);
        st
    }

    fn mix_32(s: &[u8], a: &mut u64, b: &mut u64) {
        *a = a.wrapping_add(fetch64(s, 0));
        let c = fetch64(s, 24);
        *b = b.wrapping_add(*a).wrapping_add(c).rotate_right(21);
        let d = *a;
        *a = a.wrapping_add(fetch64(s, 8).wrapping_add(fetch64(s, 16)));
        *b = b.wrapping_add(a.rotate_right(44)).wrapping_add(d);
        *a = a.wrapping_add(c);
    }

    fn mix(&mut self, s: &[u8]) {
        let h = &mut self.h;
        h[0] = h[0]
            .wrapping_add(h[1])
            .wrapping_add(h[3])
            .wrapping_add(fetch64(s, 8))
            .rotate_right(37)
            .wrapping_mul(K1);
        h[1] = h[1]
            .wrapping_add(h[4])
            .wrapping_add(fetch64(s, 48))
            .rotate_right(42)
            .wrapping_mul(K1);
        h[0] ^= h[6];
        h[1] = h[1].wrapping_add(h[3]).wrapping_add(fetch64(s, 40));
        h[2] = h[2].wrapping_add(h[5]).rotate_right(33).wrapping_mul(K1);
        h[3] = h[4].wrapping_mul(K1);
        h[4] = h[0].wrapping_add(h[5]);
        let (mut a, mut b) = (h[3], h[4]);
        Self::mix_32(s, &mut a, &mut b);
        h[3] = a;
        h[4] = b;
        h[5] = h[2].wrapping_add(h[6]);
        h[6] = h[1].wrapping_add(fetch64(s, 16));
        let (mut a, mut b) = (h[5], h[6]);
        Self::mix_32(&s[32..], &mut a, &mut b);
        h[5] = a;
        h[6] = b;
        h.swap(2, 0);
    }

    fn finalize(&self, len: u64) -> u64 {
        let h = &self.h;
        hash_16_bytes(
            hash_16_bytes(h[3], h[5])
                .wrapping_add(shift_mix(h[1]).wrapping_mul(K1))
                .wrapping_add(h[2]),
            hash_16_bytes(h[4], h[6])
                .wrapping_add(shift_mix(len).wrapping_mul(K1))
                .wrapping_add(h[0]),
        )
    }
}

/// `llvm::hash_value(StringRef)`: `hash_combine_range` over the bytes with
/// the fixed seed of release builds (identical in LLVM 16, 19 and 22).
pub fn llvm_hash_value(s: &[u8]) -> u64 {
    let len = s.len();
    if len <= 64 {
        return hash_short(s, SEED);
    }
    let mut st = State::create(&s[..64], SEED);
    let aligned_end = len & !63;
    let mut pos = 64;
    while pos != aligned_end {
        st.mix(&s[pos..pos + 64]);
        pos += 64;
    }
    if len & 63 != 0 {
        st.mix(&s[len - 64..]);
    }
    st.finalize(len as u64)
}

/// `DenseMapInfo<StringRef>::getHashValue`: the low 32 bits of [`llvm_hash_value`].
pub fn densemap_hash(s: &[u8]) -> u32 {
    llvm_hash_value(s) as u32
}

/// Iteration order of an LLVM `DenseMap<StringRef, …>` after inserting
/// `keys` in order (a repeated key keeps its first bucket): 64 buckets at
/// the first insertion, quadratic probing, doubling when an insertion would
/// make the map 3/4 full, old buckets re-inserted in bucket order.
pub fn densemap_order<'k>(keys: &[&'k [u8]]) -> Vec<&'k [u8]> {
    let mut table: Vec<Option<(&'k [u8], u32)>> = Vec::new();
    let mut entries = 0usize;
    fn find(table: &[Option<(&[u8], u32)>], k: &[u8], h: u32) -> (bool, usize) {
        let mask = table.len() - 1;
        let mut b = h as usize & mask;
        let mut probe = 1;
        loop {
            match table[b] {
                None => return (false, b),
                Some((ek, _)) if ek == k => return (true, b),
                Some(_) => {
                    b = (b + probe) & mask;
                    probe += 1;
                }
            }
        }
    }
    for &k in keys {
        let h = densemap_hash(k);
        if !table.is_empty() && find(&table, k, h).0 {
            continue;
        }
        if (entries + 1) * 4 >= table.len() * 3 {
            let new_len = (table.len() * 2).max(64);
            let old = std::mem::replace(&mut table, vec![None; new_len]);
            for (k2, h2) in old.into_iter().flatten() {
                let (_, b) = find(&table, k2, h2);
                table[b] = Some((k2, h2));
            }
        }
        let (_, b) = find(&table, k, h);
        table[b] = Some((k, h));
        entries += 1;
    }
    table.into_iter().flatten().map(|(k, _)| k).collect()
}

/// `llvm::djbHash` with seed 0: the hash of LLVM 14/16's `StringMap`.
pub fn djb_hash(k: &[u8]) -> u32 {
    k.iter()
        .fold(0u32, |h, &c| h.wrapping_mul(33).wrapping_add(c as u32))
}

/// The low 32 bits of `xxh3_64bits`: the hash of LLVM 19/22's `StringMap`.
pub fn xxh3_hash(k: &[u8]) -> u32 {
    xxhash_rust::xxh3::xxh3_64(k) as u32
}

/// Iteration order of an LLVM `StringMap` after inserting `keys` in order
/// (repeated keys keep their first slot): 16 initial buckets, quadratic
/// probing, doubling when more than 3/4 full.
pub fn stringmap_order<K: AsRef<[u8]> + Copy>(keys: &[K], hash: fn(&[u8]) -> u32) -> Vec<K> {
    fn place<K: AsRef<[u8]> + Copy>(table: &mut [Option<(K, u32)>], k: K, h: u32) -> bool {
        let mask = table.len() - 1;
        let mut b = h as usize & mask;
        let mut probe = 1;
        while let Some((ek, eh)) = table[b] {
            if eh == h && ek.as_ref() == k.as_ref() {
                return false;
            }
            b = (b + probe) & mask;
            probe += 1;
        }
        table[b] = Some((k, h));
        true
    }
    let mut table: Vec<Option<(K, u32)>> = vec![None; 16];
    let mut n = 0usize;
    for &k in keys {
        let h = hash(k.as_ref());
        if place(&mut table, k, h) {
            n += 1;
            if n * 4 > table.len() * 3 {
                let len = table.len() * 2;
                let old = std::mem::replace(&mut table, vec![None; len]);
                for (k2, h2) in old.into_iter().flatten() {
                    place(&mut table, k2, h2);
                }
            }
        }
    }
    table.into_iter().flatten().map(|(k, _)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by `DenseMapInfo<StringRef>::getHashValue` and
    /// `hash_value` linked against libLLVM 16, 19 and 22 (all equal).
    #[test]
    fn hash_matches_libllvm() {
        let long_a: String = (0..130).map(|i| (b'a' + (i % 26) as u8) as char).collect();
        let long_upper: String = (0..128).map(|i| (b'A' + (i % 26) as u8) as char).collect();
        let cases: &[(&str, u32)] = &[
            ("", 0xc2c5cc82),
            ("a", 0x517c61f8),
            ("ab", 0x6be496b4),
            ("abc", 0x19c71a3f),
            ("abcd", 0x34c9023c),
            ("file", 0xd4e6b353),
            ("kind", 0xc8207aa5),
            ("arch", 0xf386c709),
            ("triple", 0x0819b0d8),
            ("abcdefgh", 0x411dec9d),
            ("abcdefghi", 0x8b830f7c),
            ("abcdefghijklmnop", 0xe6ce0c04),
            ("abcdefghijklmnopq", 0x5e3c7715),
            ("abcdefghijklmnopqrstuvwxyz012345", 0x9a5a4728),
            ("abcdefghijklmnopqrstuvwxyz0123456", 0x3b5b3b86),
        ];
        for &(s, h) in cases {
            assert_eq!(densemap_hash(s.as_bytes()), h, "{s:?}");
        }
        assert_eq!(densemap_hash(&[b'x'; 64]), 0x7ad43243);
        assert_eq!(densemap_hash(&[b'y'; 65]), 0xec35b523);
        assert_eq!(densemap_hash(long_a.as_bytes()), 0xc02f4f7a);
        assert_eq!(densemap_hash(long_upper.as_bytes()), 0x26e914a3);
    }
}
