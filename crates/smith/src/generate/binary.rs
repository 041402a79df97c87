//! Binary bundles: a serialiser that knows where each field lands, and one
//! violation per rule of `binary-bundle.md` and the ID grammar.

use super::{pick, Cx, Draft, Violation};
use crate::format::bundle::{HEADER_SIZE, MAGIC, RECORD_FIXED_SIZE};
use crate::rules::{self, Rule};

/// Rules a binary bundle can break one at a time.
pub(crate) const RULES: &[Rule] = &[
    rules::BIN_1,
    rules::BIN_2,
    rules::BIN_3,
    rules::BIN_4,
    rules::BIN_5,
    rules::BIN_6,
    rules::BIN_7,
    rules::BIN_8,
    rules::BIN_9,
    rules::BIN_10,
    rules::BIN_13,
    rules::ID_1,
    rules::ID_2,
    rules::TID_1,
    rules::TID_2,
    rules::TID_3,
    rules::COMPOSE_1,
    rules::CO_2,
    rules::CO_3,
    rules::CO_4,
    rules::CO_5,
];

/// Alignments LLVM users pass (`-bundle-align`), small ones weighted up.
const ALIGNS: &[u64] = &[1, 1, 1, 4, 8, 8, 16, 64, 4096];

/// Where one entry landed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rec {
    /// The record (its offset field).
    pub at: usize,
    /// The ID bytes.
    pub id_at: usize,
    /// The payload.
    pub payload_at: usize,
    /// The payload size.
    pub size: usize,
}

/// A serialised bundle and where its fields are.
pub(crate) struct Layout {
    pub bytes: Vec<u8>,
    pub recs: Vec<Rec>,
    pub header_end: usize,
}

/// Serialise as every LLVM release writes (BIN-11): header, records,
/// payloads each at the next multiple of `align`.
pub(crate) fn write(entries: &[(Vec<u8>, Vec<u8>)], align: u64) -> Layout {
    let align = align.max(1) as usize;
    let header_end = HEADER_SIZE as usize
        + entries
            .iter()
            .map(|(id, _)| RECORD_FIXED_SIZE as usize + id.len())
            .sum::<usize>();
    let mut at = header_end;
    let mut recs = Vec::with_capacity(entries.len());
    let mut rec_at = HEADER_SIZE as usize;
    for (id, p) in entries {
        at = at.div_ceil(align) * align;
        recs.push(Rec {
            at: rec_at,
            id_at: rec_at + RECORD_FIXED_SIZE as usize,
            payload_at: at,
            size: p.len(),
        });
        rec_at += RECORD_FIXED_SIZE as usize + id.len();
        at += p.len();
    }
    let mut bytes = vec![0u8; at.max(header_end)];
    bytes[..MAGIC.len()].copy_from_slice(MAGIC);
    put(&mut bytes, MAGIC.len(), entries.len() as u64);
    for ((id, p), r) in entries.iter().zip(&recs) {
        put(&mut bytes, r.at, r.payload_at as u64);
        put(&mut bytes, r.at + 8, p.len() as u64);
        put(&mut bytes, r.at + 16, id.len() as u64);
        bytes[r.id_at..r.id_at + id.len()].copy_from_slice(id);
        bytes[r.payload_at..r.payload_at + p.len()].copy_from_slice(p);
    }
    Layout {
        bytes,
        recs,
        header_end,
    }
}

/// Write a little-endian u64 at `at`.
pub(crate) fn put(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Random entries: IDs (maybe a host) with payloads.
pub(crate) fn entries(cx: &mut Cx<'_>, host_pct: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    entries_of(cx, host_pct, pick::payload_for)
}

/// Entries whose payloads `payload` draws.
pub(crate) fn entries_of(
    cx: &mut Cx<'_>,
    host_pct: usize,
    payload: fn(&mut Cx<'_>, &str) -> Vec<u8>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let max = if cx.small { 2 } else { 4 };
    let ids = cx.ids.entries(cx.rng, max, host_pct);
    ids.into_iter()
        .map(|id| {
            let p = payload(cx, &id);
            (id.into_bytes(), p)
        })
        .collect()
}

/// A random alignment.
pub(crate) fn align(cx: &mut Cx<'_>) -> u64 {
    if cx.small {
        *cx.rng.pick(&ALIGNS[..6])
    } else {
        *cx.rng.pick(ALIGNS)
    }
}

/// Describe a bundle's entries.
pub(crate) fn describe(entries: &[(Vec<u8>, Vec<u8>)], align: u64) -> String {
    let ids: Vec<String> = entries
        .iter()
        .map(|(id, _)| String::from_utf8_lossy(id).into_owned())
        .collect();
    format!("align {align}, entries [{}]", ids.join(", "))
}

/// One binary bundle, valid or breaking `rule`.
pub(crate) fn build(mut cx: Cx<'_>, rule: Option<Rule>) -> Option<Draft> {
    let entries = entries(&mut cx, 70);
    let align = align(&mut cx);
    let description = format!("binary bundle, {}", describe(&entries, align));
    let Some(rule) = rule else {
        return Some(Draft {
            bytes: write(&entries, align).bytes,
            description,
            violation: None,
        });
    };
    let (bytes, v) = malform(&mut cx, rule, entries, align, true)?;
    Some(Draft {
        bytes,
        description,
        violation: Some(v),
    })
}

/// A bundle of `entries` breaking `rule`, offsets relative to its start.
/// `standalone`: nothing follows the bundle (BIN-10 applies).
pub(crate) fn malform(
    cx: &mut Cx<'_>,
    rule: Rule,
    mut entries: Vec<(Vec<u8>, Vec<u8>)>,
    align: u64,
    standalone: bool,
) -> Option<(Vec<u8>, Violation)> {
    let n = entries.len();
    let v = |offset: usize, what: String| Violation::new(rule, offset as u64, what);
    if super::image::IMAGE_RULES.contains(&rule) {
        // One entry's image (loadable payloads) breaks it.
        let elfs: Vec<usize> = (0..n)
            .filter(|&i| entries[i].1.starts_with(b"\x7fELF"))
            .collect();
        let &i = elfs.get(cx.rng.below(elfs.len().max(1)))?;
        let (at, what) = super::image::break_image(&mut entries[i].1, rule, cx.rng, true)?;
        let l = write(&entries, align);
        let at = l.recs[i].payload_at + at;
        return Some((l.bytes, v(at, format!("entry {i}'s image: {what}"))));
    }
    if rule == rules::BIN_4 {
        let i = cx.rng.below(n);
        entries[i].0.clear();
        let l = write(&entries, align);
        return Some((
            l.bytes,
            v(l.recs[i].id_at, format!("entry {i}'s ID is empty")),
        ));
    }
    // Rules met by choosing what the entries are.
    match rule {
        rules::ID_1 | rules::ID_2 | rules::TID_1 | rules::TID_2 | rules::TID_3 => {
            let (id, pos, what) = bad_id(cx, rule)?;
            let i = cx.rng.below(n);
            entries[i].0 = id.into_bytes();
            let l = write(&entries, align);
            let at = l.recs[i].id_at + pos;
            return Some((l.bytes, v(at, format!("entry {i}: {what}"))));
        }
        rules::BIN_8 => {
            // Repeat a device ID (a repeated host ID would break BIN-13 too).
            let devs: Vec<usize> = (0..n).filter(|&i| !is_host(&entries[i].0)).collect();
            if devs.is_empty() {
                return None;
            }
            let &i = cx.rng.pick(&devs);
            let dup = (entries[i].0.clone(), pick::payload(cx.rng, cx.small));
            let j = i + 1 + cx.rng.below(n - i);
            entries.insert(j, dup);
            let l = write(&entries, align);
            return Some((
                l.bytes,
                v(l.recs[j].id_at, format!("entry {j} repeats entry {i}'s ID")),
            ));
        }
        rules::BIN_13 => {
            let h = entries.iter().position(|(id, _)| is_host(id))?;
            let first = String::from_utf8(entries[h].0.clone()).ok()?;
            let other = cx.ids.other_host(&first)?;
            let j = h + 1 + cx.rng.below(n - h);
            entries.insert(j, (other.into_bytes(), pick::payload(cx.rng, cx.small)));
            let l = write(&entries, align);
            return Some((
                l.bytes,
                v(l.recs[j].at, format!("entry {j} is a second host entry")),
            ));
        }
        rules::COMPOSE_1 => {
            // gfx90a with xnack set beside gfx90a leaving it Any.
            let i = cx.rng.below(n + 1);
            let a = b"hip-amdgcn-amd-amdhsa--gfx90a:xnack+".to_vec();
            let b = b"hip-amdgcn-amd-amdhsa--gfx90a:sramecc+".to_vec();
            entries.retain(|(id, _)| !String::from_utf8_lossy(id).contains("gfx90a"));
            let i = i.min(entries.len());
            entries.insert(i, (a, pick::payload(cx.rng, cx.small)));
            let j = i + 1 + cx.rng.below(entries.len() - i);
            entries.insert(j, (b, pick::payload(cx.rng, cx.small)));
            let l = write(&entries, align);
            return Some((
                l.bytes,
                v(
                    l.recs[j].id_at,
                    "gfx90a entries: one sets xnack, one leaves it Any".into(),
                ),
            ));
        }
        _ => {}
    }
    change_bytes(cx, rule, &entries, align, standalone)
}

/// [`malform`] for the rules met by changing bytes of a valid layout.
fn change_bytes(
    cx: &mut Cx<'_>,
    rule: Rule,
    entries: &[(Vec<u8>, Vec<u8>)],
    align: u64,
    standalone: bool,
) -> Option<(Vec<u8>, Violation)> {
    let n = entries.len();
    let v = |offset: usize, what: String| Violation::new(rule, offset as u64, what);
    let mut l = write(entries, align);
    let b = &mut l.bytes;
    let out = match rule {
        rules::BIN_1 => {
            let k = cx.rng.below(MAGIC.len());
            b[k] ^= 0x20;
            // No reader recognises the file any more: the error is at its start.
            v(0, format!("magic byte {k} changed"))
        }
        rules::BIN_3 => {
            b.truncate(HEADER_SIZE as usize);
            put(b, MAGIC.len(), 0);
            v(MAGIC.len(), "entry count 0".into())
        }
        rules::BIN_2 => {
            // The last record's ID length runs past the end of the file.
            let r = l.recs[n - 1];
            let len = b.len() as u64;
            put(b, r.at + 16, len + 1 + cx.rng.below(1 << 20) as u64);
            v(
                r.at + 16,
                format!("entry {}: ID length past the end", n - 1),
            )
        }
        rules::BIN_5 => {
            let i = cx.rng.below(n);
            let r = l.recs[i];
            let len = b.len() as u64;
            let size = match cx.rng.below(3) {
                0 => len - r.payload_at as u64 + 1,
                1 => u64::MAX - r.payload_at as u64 + 1,
                _ => u64::MAX,
            };
            put(b, r.at + 8, size);
            v(r.at, format!("entry {i}: payload size {size} past the end"))
        }
        rules::BIN_6 => {
            let i = cx.rng.below(n);
            let r = l.recs[i];
            let off = cx.rng.below(l.header_end);
            put(b, r.at, off as u64);
            v(
                r.at,
                format!("entry {i}: payload moved to 0x{off:x}, inside the header"),
            )
        }
        rules::BIN_7 => {
            if n < 2 {
                return None;
            }
            // Entry j's payload starts inside entry i's.
            let i = cx.rng.below(n - 1);
            let j = i + 1 + cx.rng.below(n - i - 1);
            let (ri, rj) = (l.recs[i], l.recs[j]);
            let start = ri.payload_at + cx.rng.below(ri.size);
            put(b, rj.at, start as u64);
            // Readers sort by (start, end, index): the later one is reported.
            let (end_i, end_j) = (ri.payload_at + ri.size, start + rj.size);
            let blamed = if (start, end_j, j) > (ri.payload_at, end_i, i) {
                rj
            } else {
                ri
            };
            v(
                blamed.at,
                format!("entry {j}'s payload moved into entry {i}'s"),
            )
        }
        rules::BIN_9 => {
            // A byte of the padding before some payload, if there is any.
            let mut gaps = Vec::new();
            let mut cur = l.header_end;
            for r in &l.recs {
                if r.payload_at > cur {
                    gaps.push((cur, r.payload_at));
                }
                cur = cur.max(r.payload_at + r.size);
            }
            if gaps.is_empty() {
                return None;
            }
            let &(s, e) = cx.rng.pick(&gaps);
            let at = s + cx.rng.below(e - s);
            b[at] = 1 + cx.rng.below(255) as u8;
            v(at, "a padding byte set".into())
        }
        rules::BIN_10 if standalone => {
            let at = b.len();
            let extra = 1 + cx.rng.below(16);
            b.extend(std::iter::repeat_n(0, extra));
            v(at, format!("{extra} zero bytes after the last payload"))
        }
        _ => return None,
    };
    Some((l.bytes, out))
}

fn is_host(id: &[u8]) -> bool {
    id.starts_with(b"host-")
}

/// An ID breaking one ID-grammar rule, the position the strict reader
/// reports, and what is wrong.
pub(crate) fn bad_id(cx: &mut Cx<'_>, rule: Rule) -> Option<(String, usize, String)> {
    const PRE: &str = "hip-amdgcn-amd-amdhsa--";
    let t = PRE.len();
    Some(match rule {
        rules::ID_1 => {
            let id = b"hipv4-amdgcn-amd-amdhsa--gfx906".to_vec();
            let k = cx.rng.below(id.len());
            let mut s = String::from_utf8(id).ok()?;
            let c = *cx.rng.pick(&['\u{1}', ' ', '\u{7f}', '\t']);
            s.replace_range(k..k + 1, &c.to_string());
            (s, k, format!("character {k} is {c:?}"))
        }
        rules::ID_2 => {
            let kind = *cx.rng.pick(&["cuda", "HIP", "sycl", "hipv5"]);
            (
                format!("{kind}-amdgcn-amd-amdhsa--gfx906"),
                0,
                format!("offload kind '{kind}'"),
            )
        }
        rules::TID_1 => (
            format!("{PRE}gfx906:xnack"),
            t + 6,
            "feature without +/-".into(),
        ),
        rules::TID_2 => (
            format!("{PRE}gfx90a:xnack+:xnack-"),
            t + 13,
            "xnack given twice".into(),
        ),
        rules::TID_3 => {
            let p = *cx.rng.pick(&["gfx9999", "gfx1030:xnack+", "sm_90"]);
            (
                format!("{PRE}{p}"),
                t,
                format!("'{p}' is not a target of amdgcn"),
            )
        }
        _ => return None,
    })
}
