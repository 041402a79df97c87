//! Exact duplicate-key detection (OB-11) in O(n log n) time for any input.
//!
//! Keys are C strings inside one binary, and hostile binaries can make
//! millions of keys overlap (every key starting inside one long run of
//! non-NUL bytes), so hashing every key is quadratic. Instead:
//!
//! * a key is the suffix, of its length, of the *run* that ends at its NUL
//!   (the bytes since the previous NUL); keys with the same start are equal;
//! * two keys of equal length are equal exactly when their runs share a
//!   common suffix at least that long;
//! * the runs are sorted by their reversed bytes; runs sharing a suffix of
//!   length `L` are then contiguous, and the common suffix of two sorted
//!   runs is the minimum of the adjacent common suffixes between them.
//!
//! Every comparison stops at the first difference, so sorting costs
//! O(total run length × log runs) and the adjacent suffixes O(total run
//! length).

use std::cmp::Ordering;
use std::collections::HashMap;

/// The reversed bytes of the run ending (exclusively) at `end`.
fn rev_run(bin: &[u8], end: usize) -> impl Iterator<Item = u8> + '_ {
    bin[..end].iter().rev().copied().take_while(|&b| b != 0)
}

fn common_suffix(bin: &[u8], a: usize, b: usize) -> usize {
    rev_run(bin, a)
        .zip(rev_run(bin, b))
        .take_while(|(x, y)| x == y)
        .count()
}

/// For keys given as `(start, end)` (the key is `bin[start..end]`,
/// `bin[end]` is its NUL), a class number per key: two keys get the same
/// class exactly when their bytes are equal.
pub(crate) fn key_classes(bin: &[u8], keys: &[(usize, usize)]) -> Vec<usize> {
    // Distinct runs (by their NUL position), sorted by reversed content.
    let mut runs: Vec<usize> = keys.iter().map(|&(_, e)| e).collect();
    runs.sort_unstable();
    runs.dedup();
    runs.sort_by(|&a, &b| {
        let mut ia = rev_run(bin, a);
        let mut ib = rev_run(bin, b);
        loop {
            match (ia.next(), ib.next()) {
                (None, None) => return Ordering::Equal,
                (None, Some(_)) => return Ordering::Less,
                (Some(_), None) => return Ordering::Greater,
                (Some(x), Some(y)) if x != y => return x.cmp(&y),
                _ => {}
            }
        }
    });
    let rank: HashMap<usize, usize> = runs.iter().enumerate().map(|(i, &e)| (e, i)).collect();
    // lcs[i]: common suffix of runs[i - 1] and runs[i].
    let mut lcs = vec![0usize; runs.len()];
    for i in 1..runs.len() {
        lcs[i] = common_suffix(bin, runs[i - 1], runs[i]);
    }
    let tree = MinTree::new(&lcs);
    // Per key length, the sorted ranks of the runs holding a key that long.
    let mut by_len: HashMap<usize, Vec<usize>> = HashMap::new();
    for &(s, e) in keys {
        by_len.entry(e - s).or_default().push(rank[&e]);
    }
    // Class of (length, rank): consecutive ranks whose runs share at least
    // `length` trailing bytes are one class.
    let mut class_of: HashMap<(usize, usize), usize> = HashMap::new();
    let mut next_class = 0;
    for (len, mut ranks) in by_len {
        ranks.sort_unstable();
        ranks.dedup();
        let mut prev: Option<usize> = None;
        for r in ranks {
            let joined = prev.is_some_and(|p| tree.min(p + 1, r) >= len);
            if !joined {
                next_class += 1;
            }
            class_of.insert((len, r), next_class);
            prev = Some(r);
        }
    }
    keys.iter()
        .map(|&(s, e)| class_of[&(e - s, rank[&e])])
        .collect()
}

/// Range minimum over a fixed array (iterative segment tree).
struct MinTree {
    n: usize,
    t: Vec<usize>,
}

impl MinTree {
    fn new(v: &[usize]) -> MinTree {
        let n = v.len().max(1);
        let mut t = vec![usize::MAX; 2 * n];
        t[n..n + v.len()].copy_from_slice(v);
        for i in (1..n).rev() {
            t[i] = t[2 * i].min(t[2 * i + 1]);
        }
        MinTree { n, t }
    }

    /// Minimum of `v[lo..=hi]`.
    fn min(&self, lo: usize, hi: usize) -> usize {
        let (mut l, mut r) = (lo + self.n, hi + self.n + 1);
        let mut m = usize::MAX;
        while l < r {
            if l & 1 == 1 {
                m = m.min(self.t[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                m = m.min(self.t[r]);
            }
            l /= 2;
            r /= 2;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_match_byte_equality() {
        let bin = b"\0arch\0xarch\0triple\0arch\0ch\0h\0";
        let mut keys = Vec::new();
        for (i, _) in bin.iter().enumerate() {
            if bin[i] != 0 {
                let e = i + bin[i..].iter().position(|&b| b == 0).unwrap();
                keys.push((i, e));
            }
        }
        let c = key_classes(bin, &keys);
        for a in 0..keys.len() {
            for b in 0..keys.len() {
                let ka = &bin[keys[a].0..keys[a].1];
                let kb = &bin[keys[b].0..keys[b].1];
                assert_eq!(c[a] == c[b], ka == kb, "{ka:?} {kb:?}");
            }
        }
    }
}
