//! Mutations of ROCm kpack splits (spec/kpack.md): an archive's header,
//! its MessagePack TOC (numbers, names, architectures, keys dropped or
//! repeated) and blobs (the code object inside, a zstd frame, its size
//! prefix); a HIPK host's `.rocm_kpack_ref` and wrapper.

use super::{image, interesting};
use crate::generate::Rng;
use offload_kit_format::kpack::{self, HEADER_SIZE};
use rmpv::Value;

/// The TOC of `data` as LLVM-independent MessagePack, with its offset.
fn toc(data: &[u8]) -> Option<(usize, Value)> {
    let at = usize::try_from(u64::from_le_bytes(data.get(8..16)?.try_into().ok()?)).ok()?;
    let mut rd = data.get(at..)?;
    let v = rmpv::decode::read_value_with_max_depth(&mut rd, 16).ok()?;
    Some((at, v))
}

/// `data` with its TOC replaced by `v` (the blobs before it kept).
fn with_toc(data: &[u8], at: usize, v: &Value) -> Vec<u8> {
    let mut out = data[..at].to_vec();
    rmpv::encode::write_value(&mut out, v).expect("writing to a Vec");
    out
}

/// Every value of the tree, depth first, as paths of indices.
fn paths(v: &Value, path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    out.push(path.clone());
    let children: Vec<&Value> = match v {
        Value::Map(m) => m.iter().map(|(_, x)| x).collect(),
        Value::Array(a) => a.iter().collect(),
        _ => return,
    };
    for (i, c) in children.into_iter().enumerate() {
        path.push(i);
        paths(c, path, out);
        path.pop();
    }
}

/// A value of `v` for which `pred` holds, as its path; `None` if none does.
fn pick_path(v: &Value, rng: &mut Rng, pred: impl Fn(&Value) -> bool) -> Option<Vec<usize>> {
    let mut all = Vec::new();
    paths(v, &mut Vec::new(), &mut all);
    let mut scratch = v.clone();
    let hits: Vec<Vec<usize>> = (all.into_iter())
        .filter(|p| at_mut(&mut scratch, p).is_some_and(|x| pred(x)))
        .collect();
    (!hits.is_empty()).then(|| rng.pick(&hits).clone())
}

fn at_mut<'v>(v: &'v mut Value, path: &[usize]) -> Option<&'v mut Value> {
    let Some((&i, rest)) = path.split_first() else {
        return Some(v);
    };
    let child = match v {
        Value::Map(m) => &mut m.get_mut(i)?.1,
        Value::Array(a) => a.get_mut(i)?,
        _ => return None,
    };
    at_mut(child, rest)
}

/// Architectures a TOC or a search path may name instead.
const ARCHES: &[&str] = &[
    "gfx906",
    "gfx90a",
    "gfx942",
    "gfx9-generic",
    "gfx1100",
    "gfx12-generic",
    "",
    "@GFXARCH@",
    "../gfx906",
];

/// One mutation of a kpack archive.
pub(super) fn archive(data: &[u8], rng: &mut Rng, no_image: bool) -> Option<(Vec<u8>, String)> {
    let (at, mut v) = toc(data)?;
    match rng.below(8) {
        0 => {
            // A header field: the version or the TOC offset.
            let mut out = data.to_vec();
            if rng.chance(50) {
                let n = interesting(rng, 4, 1) as u32;
                out[4..8].copy_from_slice(&n.to_le_bytes());
                Some((out, format!("kpack version set to {n}")))
            } else {
                let n = interesting(rng, data.len() as u64, at as u64);
                out[8..16].copy_from_slice(&n.to_le_bytes());
                Some((out, format!("kpack TOC offset set to {n:#x}")))
            }
        }
        1 | 2 => {
            // A number of the TOC: an ordinal, a size, an offset.
            let p = pick_path(&v, rng, Value::is_u64)?;
            let x = at_mut(&mut v, &p)?;
            let n = interesting(rng, data.len() as u64, x.as_u64()?);
            *x = Value::from(n);
            Some((
                with_toc(data, at, &v),
                format!("kpack TOC number set to {n}"),
            ))
        }
        3 => {
            // A string: a kernel name's '#<index>', an architecture, a scheme.
            let p = pick_path(&v, rng, Value::is_str)?;
            let x = at_mut(&mut v, &p)?;
            let old = x.as_str()?.to_string();
            let stem = old.split('#').next().unwrap_or_default();
            let new = match rng.below(4) {
                0 => stem.to_string(),
                1 => format!("{stem}#{}", rng.below(3)),
                2 => rng.pick(ARCHES).to_string(),
                _ => rng
                    .pick(&["none", "zstd-per-kernel", "zlib", "hsaco", ""])
                    .to_string(),
            };
            *x = Value::from(new.as_str());
            Some((
                with_toc(data, at, &v),
                format!("kpack TOC string '{old}' respelled '{new}'"),
            ))
        }
        4 => {
            // A map key dropped or repeated (KPAK-2, KPAK-5).
            let p = pick_path(&v, rng, |x| matches!(x, Value::Map(m) if !m.is_empty()))?;
            let Some(Value::Map(m)) = at_mut(&mut v, &p) else {
                return None;
            };
            let i = rng.below(m.len());
            let key = m[i].0.to_string();
            let what = if rng.chance(50) {
                m.remove(i);
                "dropped"
            } else {
                let e = m[i].clone();
                m.push(e);
                "repeated"
            };
            Some((
                with_toc(data, at, &v),
                format!("kpack TOC key {key} {what}"),
            ))
        }
        5 => blob(data, rng, no_image),
        6 => {
            // Cut short: inside the header, the blobs or the TOC.
            let n = [
                rng.below(HEADER_SIZE as usize),
                rng.below(at.max(1)),
                at + rng.below((data.len() - at).max(1)),
            ];
            let n = *rng.pick(&n);
            Some((
                data[..n].to_vec(),
                format!("kpack archive cut to {n} bytes"),
            ))
        }
        _ => {
            // One kernel filed twice: a second name on the same blob.
            let a = kpack::parse(data).ok()?;
            let k = rng.pick(&a.kernels).clone();
            let Value::Map(top) = &mut v else { return None };
            let (_, tocv) = top
                .iter_mut()
                .find(|(key, _)| key.as_str() == Some("toc"))?;
            let Value::Map(names) = tocv else { return None };
            let entry = names
                .iter()
                .find(|(n, _)| n.as_str() == Some(k.name.as_str()))?
                .1
                .clone();
            names.push((
                Value::from(format!("{}#9", k.name.split('#').next().unwrap_or(""))),
                entry,
            ));
            Some((
                with_toc(data, at, &v),
                format!("kpack kernel {} filed twice", k.name),
            ))
        }
    }
}

/// A blob's bytes: its code object mutated in place (plain), or a zstd
/// frame's byte or size prefix changed.
fn blob(data: &[u8], rng: &mut Rng, no_image: bool) -> Option<(Vec<u8>, String)> {
    let a = kpack::parse(data).ok()?;
    let k = rng.pick(&a.kernels).clone();
    let (off, size) = a.blob(&k);
    let (off, size) = (usize::try_from(off).ok()?, usize::try_from(size).ok()?);
    let mut out = data.to_vec();
    let blob = out.get_mut(off..off.checked_add(size)?)?;
    match a.scheme {
        kpack::Scheme::Plain(_) => {
            let mut co = blob.to_vec();
            let what = match no_image {
                false => image::mutate_elf(&mut co, rng)?,
                true => image::flip(&mut co, rng)?,
            };
            co.resize(size, 0);
            blob.copy_from_slice(&co[..size]);
            Some((
                out,
                format!("kpack blob of {} {}: {what} (in place)", k.name, k.arch),
            ))
        }
        kpack::Scheme::ZstdPerKernel(_) if rng.chance(50) && off >= 4 => {
            let n = interesting(rng, size as u64, size as u64) as u32;
            out[off - 4..off].copy_from_slice(&n.to_le_bytes());
            Some((
                out,
                format!("kpack zstd frame size of {} set to {n}", k.arch),
            ))
        }
        kpack::Scheme::ZstdPerKernel(_) => {
            let i = rng.below(size.max(1));
            *blob.get_mut(i)? ^= 1 << rng.below(8);
            Some((
                out,
                format!("kpack zstd frame of {} flipped at {i}", k.arch),
            ))
        }
    }
}

/// One mutation of a HIPK host's reference or wrapper, in place where the
/// section keeps its size; `None` for a host without them.
pub(super) fn host(data: &[u8], rng: &mut Rng) -> Option<(Vec<u8>, String)> {
    let e = crate::host::elf::Elf::parse(data).ok()?;
    let sec = |n: &str| e.sections.iter().find(|s| s.name == n.as_bytes());
    let wrapper = sec(kpack::WRAPPER_SECTION)?;
    let w_at = usize::try_from(wrapper.offset).ok()?;
    let mut out = data.to_vec();
    if rng.chance(30) {
        // The wrapper: its magic back to HIPF, or the code-object index.
        if rng.chance(50) {
            out.get_mut(w_at..w_at.checked_add(4)?)?
                .copy_from_slice(b"HIPF");
            return Some((out, "HIPK wrapper magic set to HIPF".into()));
        }
        let n = interesting(rng, 4, 0);
        // The section's offset is the input's: near 2^64, the sum wraps.
        out.get_mut(w_at.checked_add(16)?..w_at.checked_add(24)?)?
            .copy_from_slice(&n.to_le_bytes());
        return Some((out, format!("HIPK wrapper code-object index set to {n}")));
    }
    let r = sec(kpack::REF_SECTION)?;
    let (r_at, r_len) = (
        usize::try_from(r.offset).ok()?,
        usize::try_from(r.size).ok()?,
    );
    let mut href = kpack::parse_host_ref(r.data(data)?, r.offset).ok()?;
    let what = match rng.below(4) {
        0 => {
            let p = rng.pick(&[
                "/etc/passwd",
                "../../@GFXARCH@.kpack",
                "@GFXARCH@@GFXARCH@",
                "",
                "x/../../y-@GFXARCH@.kpack",
            ]);
            href.search_paths.push(p.to_string());
            format!("search path '{p}' added")
        }
        1 => {
            href.search_paths.clear();
            "search paths emptied".to_string()
        }
        2 => {
            let a = rng.pick(ARCHES);
            href.search_paths = href
                .search_paths
                .iter()
                .map(|p| p.replace("@GFXARCH@", a))
                .collect();
            format!("@GFXARCH@ replaced by '{a}'")
        }
        _ => {
            href.kernel_name = format!("{}#0", href.kernel_name);
            "kernel name given a '#0' of its own".to_string()
        }
    };
    let bytes = href.to_bytes();
    // In place: a longer reference is cut at the section's end.
    let dst = out.get_mut(r_at..r_at.checked_add(r_len)?)?;
    let n = bytes.len().min(r_len);
    dst[..n].copy_from_slice(&bytes[..n]);
    dst[n..].fill(0);
    Some((out, format!(".rocm_kpack_ref: {what} (in place)")))
}
