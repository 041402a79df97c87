//! A structure-aware mutator for fuzzing loaders: what `wasm-mutate` is
//! for WebAssembly engines, in the shape libFuzzer's custom mutators take.
//!
//! [`mutate`] reads the input when it can and changes its structure: one
//! field set to a boundary value, an entry dropped, duplicated or moved, an
//! entry ID respelled (kind, processor, features), the payloads laid out
//! at another alignment, the bundle compressed or decompressed, one named
//! rule broken (through [`crate::generate`]'s violations), the container
//! nested in another (a `.hip_fatbin`, an archive); a kpack archive's TOC,
//! blobs and header, a HIPK host's reference. Input no reader
//! recognises gets byte-level mutations. The result never exceeds
//! `max_size`; the same `(data, max_size, seed)` gives the same result.
//!
//! # Example
//!
//! ```
//! use offload_kit_format::binary;
//! use offload_kit_smith::mutate::mutate;
//!
//! let bundle = binary::write_to_vec(&[(b"hip-amdgcn-amd-amdhsa--gfx906", b"code")], 1).unwrap();
//! let m = mutate(&bundle, 4096, 42);
//! assert!(m.bytes.len() <= 4096);
//! assert_eq!(m, mutate(&bundle, 4096, 42)); // deterministic
//! assert_ne!(m.bytes, bundle);
//! println!("{}", m.what); // e.g. "respell entry 0's ID"
//! ```

mod image;
mod kpack;

use crate::bundle::ccob::decompress_prefix;
use crate::detect::{self, Container};
use crate::format::bundle::{MAGIC, RECORD_FIXED_SIZE};
use crate::format::ccob::VERSIONS;
use crate::generate::binary as gen_binary;
use crate::generate::pick::Ids;
use crate::generate::{ccob as gen_ccob, host as gen_host, Cx, Payloads, Rng};
use crate::host::ar;
use crate::host::elf::{self, Elf, SHF_ALLOC};

/// A mutated input and what was done to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutation {
    /// The result, at most `max_size` bytes.
    pub bytes: Vec<u8>,
    /// What was done, in words.
    pub what: String,
}

/// Boundary values for size and offset fields.
fn interesting(rng: &mut Rng, len: u64, orig: u64) -> u64 {
    match rng.below(12) {
        0 => 0,
        1 => 1,
        2 => len,
        3 => len.wrapping_add(1),
        4 => len.wrapping_sub(1),
        5 => u64::from(u32::MAX),
        6 => u64::MAX,
        7 => u64::MAX - rng.below(64) as u64,
        8 => orig.wrapping_add(1),
        9 => orig.wrapping_sub(1),
        10 => 1 << (rng.below(63) + 1),
        _ => orig ^ (1 << rng.below(64)),
    }
}

/// How [`mutate_with`] mutates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MutateOptions {
    /// An input that is no container offload-kit recognises (a one-byte
    /// seed, random bytes) is replaced, one time in four, by a freshly
    /// generated file of a random kind, valid or breaking one rule: the
    /// structure-aware mutator then has a structure to work on. Off by
    /// default (the measured default arm of `tools/fuzz-eval`).
    pub bootstrap: bool,
    /// Ablation (`tools/fuzz-eval`'s arm `noimage`): leave out the
    /// image-aware family (edits of a code object's program and section
    /// headers, dynamic entries, relocations): its bytes are flipped
    /// instead. Breaking a code-object rule (CO-*) stays, as a rule edit.
    /// What the family is worth is the difference from the default.
    pub no_image: bool,
    /// Ablation (arm `bytesonly`): byte edits only (flips, inserts,
    /// deletes, copies), no structural mutation at all.
    pub no_structure: bool,
}

/// Mutate `data` into at most `max_size` bytes (see the [module docs](self)).
pub fn mutate(data: &[u8], max_size: usize, seed: u64) -> Mutation {
    mutate_with(data, max_size, seed, MutateOptions::default())
}

/// [`mutate`] with `options`.
///
/// ```
/// use offload_kit_smith::mutate::{mutate_with, MutateOptions};
///
/// let boot = MutateOptions { bootstrap: true, ..MutateOptions::default() };
/// // From one byte, some seeds make a whole container.
/// let grown = (0..64).filter(|&s| mutate_with(b"x", 1 << 16, s, boot).bytes.len() > 64).count();
/// assert!(grown > 0);
/// ```
pub fn mutate_with(data: &[u8], max_size: usize, seed: u64, options: MutateOptions) -> Mutation {
    let mut rng = Rng::new(seed);
    let ids = Ids::builtin();
    if options.bootstrap && !recognised(data) && rng.chance(25) {
        if let Some(m) = fresh(&mut rng, max_size) {
            return m;
        }
    }
    // A structural draw that does not fit (or changes nothing) falls back
    // to bytes.
    if !data.is_empty() && !options.no_structure && rng.chance(80) {
        for _ in 0..4 {
            if let Some(m) = structural(data, &mut rng, ids, options) {
                if m.bytes.len() <= max_size && m.bytes != data {
                    return m;
                }
            }
        }
    }
    let mut out = data.to_vec();
    let what = bytes(&mut out, &mut rng, max_size);
    out.truncate(max_size);
    Mutation { bytes: out, what }
}

/// Whether `data` is a container [`structural`] can work on.
fn recognised(data: &[u8]) -> bool {
    offload_kit_format::kpack::is_kpack(data) || detect::detect(data).is_some()
}

/// A freshly generated file of a random kind, valid or breaking one of
/// the kind's rules, that fits `max_size`.
fn fresh(rng: &mut Rng, max_size: usize) -> Option<Mutation> {
    use crate::generate::{generate, Kind, Options};
    let kind = Kind::ALL[rng.below(Kind::ALL.len())];
    let rules = kind.malformable();
    let malformed = (rng.chance(50) && !rules.is_empty()).then(|| rules[rng.below(rules.len())]);
    let opts = Options {
        max_size: max_size.min(1 << 20),
        malformed,
        ..Options::default()
    };
    let g = generate(kind, rng.next_u64(), &opts).ok()?;
    (g.bytes.len() <= max_size).then(|| Mutation {
        what: format!(
            "a fresh {kind} file{}",
            malformed.map_or(String::new(), |r| format!(" breaking {}", r.id))
        ),
        bytes: g.bytes,
    })
}

/// One structural mutation of a recognised container.
fn structural(data: &[u8], rng: &mut Rng, ids: &Ids, opt: MutateOptions) -> Option<Mutation> {
    let m = |bytes: Vec<u8>, what: String| Some(Mutation { bytes, what });
    if offload_kit_format::kpack::is_kpack(data) {
        let (bytes, what) = kpack::archive(data, rng, opt.no_image)?;
        return m(bytes, what);
    }
    match detect::detect(data)? {
        Container::BinaryBundle => {
            let model = Model::read(data)?;
            bundle(model, data, rng, ids, opt.no_image)
        }
        Container::CompressedBundle => {
            if rng.chance(50) {
                return header_field(data, rng, &ccob_fields(data), "CCOB");
            }
            // Mutate the bundle inside, then compress it again.
            let (_, inner) = decompress_prefix(&data, 0, 1 << 20).ok()?;
            let inner = inner.into_bytes();
            let model = Model::read(&inner)?;
            let mut inner_m = bundle(model, &inner, rng, ids, opt.no_image)?;
            let mut cx = Cx {
                rng,
                ids,
                small: true,
                payloads: &Payloads::Random,
                release: None,
            };
            let (blob, o) = gen_ccob::compress(&mut cx, &inner_m.bytes, &VERSIONS);
            inner_m.what = format!("{} inside, recompressed as v{}", inner_m.what, o.version);
            m(blob, inner_m.what)
        }
        Container::OffloadBinary => {
            // The header; or, most often, the string table and the image
            // that LLVM's reader and the loader parse.
            if rng.chance(15) {
                return header_field(data, rng, &OB_FIELDS, "offload binary");
            }
            let (bytes, what) = image::mutate_offload_binary(data, rng, opt.no_image)?;
            m(bytes, format!("offload binary: {what}"))
        }
        Container::TextBundle => text(data, rng, ids),
        Container::Archive => {
            let members = ar::members_raw(data, 0, crate::rules::AR_1).ok()?;
            if members.is_empty() {
                return None;
            }
            let mem = rng.pick(&members);
            let (at, len) = (mem.data_offset as usize, mem.data.len());
            let inner = mutate_with(mem.data, len, rng.next_u64(), opt);
            let mut out = data[..at].to_vec();
            out.extend_from_slice(&inner.bytes);
            out.resize(at + len, 0);
            out.extend_from_slice(&data[at + len..]);
            m(
                out,
                format!("member '{}': {} (in place)", mem.name_str(), inner.what),
            )
        }
        _ => {
            // A HIPK host: its archive reference or wrapper, half the time.
            if rng.chance(50) {
                if let Some((bytes, what)) = kpack::host(data, rng) {
                    return m(bytes, what);
                }
            }
            // An ELF host: mutate one bundle section or the .hip_fatbin in place.
            let e = Elf::parse(data).ok()?;
            let secs: Vec<_> = e
                .sections
                .iter()
                .filter(|s| s.name.starts_with(MAGIC) || s.name == b".hip_fatbin")
                .filter_map(|s| Some((s.name_str().into_owned(), s.data(data)?, s.offset as usize)))
                .collect();
            if secs.is_empty() {
                return None;
            }
            let (name, body, at) = rng.pick(&secs);
            let inner = mutate_with(body, body.len(), rng.next_u64(), opt);
            let mut out = data.to_vec();
            // Same length: a shorter result leaves the rest as it was.
            let n = inner.bytes.len().min(body.len());
            // The section's offset is the file's claim (a NOBITS or empty
            // section may point past the end): placed only where it fits.
            out.get_mut(*at..at.checked_add(n)?)?
                .copy_from_slice(&inner.bytes[..n]);
            m(out, format!("section {name}: {} (in place)", inner.what))
        }
    }
}

/// A binary bundle as entries (lenient: what LLVM's reader would see).
struct Model {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Model {
    fn read(data: &[u8]) -> Option<Model> {
        let scan = crate::bundle::binary::scan(data, 0)?;
        let entries = scan
            .entries
            .iter()
            .map(|e| {
                let payload = e
                    .offset
                    .checked_add(e.size)
                    .filter(|&end| end <= data.len() as u64)
                    .map_or(&[][..], |end| &data[e.offset as usize..end as usize]);
                (e.id.to_vec(), payload.to_vec())
            })
            .collect();
        Some(Model { entries })
    }
}

/// One structural mutation of a binary bundle.
fn bundle(
    mut model: Model,
    data: &[u8],
    rng: &mut Rng,
    ids: &Ids,
    no_image: bool,
) -> Option<Mutation> {
    let n = model.entries.len();
    let align = *rng.pick(&[1u64, 1, 8, 16, 4096]);
    let write = |m: &Model| gen_binary::write(&m.entries, align).bytes;
    let done = |bytes: Vec<u8>, what: String| Some(Mutation { bytes, what });
    // Weights: fields and payloads, which keep the bundle readable and
    // reach a loader's range checks, most; whole-container changes
    // (compression, nesting) least.
    const BRANCH: [usize; 20] = [0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 4, 5, 6, 6, 6, 7, 8, 9, 9, 10];
    match BRANCH[rng.below(BRANCH.len())] {
        0 => {
            // One header or record field (raw, in place).
            let scan = crate::bundle::binary::scan(data, 0)?;
            let mut out = data.to_vec();
            let len = data.len() as u64;
            if scan.entries.is_empty() || rng.chance(15) {
                let v = interesting(rng, len, scan.num_entries);
                gen_binary::put(&mut out, MAGIC.len(), v);
                return done(out, format!("entry count set to {v}"));
            }
            let i = rng.below(scan.entries.len());
            let rec = (scan.entries[i].id_pos - RECORD_FIXED_SIZE) as usize;
            let (k, name) = *rng.pick(&[(0, "offset"), (8, "size"), (16, "ID length")]);
            let orig = u64::from_le_bytes(out[rec + k..rec + k + 8].try_into().ok()?);
            let v = interesting(rng, len, orig);
            gen_binary::put(&mut out, rec + k, v);
            done(out, format!("entry {i}'s {name} set to {v}"))
        }
        1 if n > 1 => {
            let i = rng.below(n);
            model.entries.remove(i);
            done(write(&model), format!("entry {i} dropped"))
        }
        2 if n > 0 => {
            let i = rng.below(n);
            let e = model.entries[i].clone();
            let j = rng.below(n + 1);
            model.entries.insert(j, e);
            done(write(&model), format!("entry {i} duplicated at {j}"))
        }
        3 if n > 1 => {
            let (i, j) = (rng.below(n), rng.below(n));
            model.entries.swap(i, j);
            done(write(&model), format!("entries {i} and {j} swapped"))
        }
        4 if n > 0 => {
            let i = rng.below(n);
            let old = String::from_utf8_lossy(&model.entries[i].0).into_owned();
            let new = respell(&old, rng);
            model.entries[i].0 = new.clone().into_bytes();
            done(
                write(&model),
                format!("entry {i}'s ID '{old}' respelled '{new}'"),
            )
        }
        5 | 6 if n > 0 => {
            let i = rng.below(n);
            let p = &mut model.entries[i].1;
            // An image's own structure most often; bytes otherwise.
            let what = match rng.chance(70) && !no_image {
                true => image::mutate_elf(p, rng),
                false => None,
            };
            let what = what.unwrap_or_else(|| bytes(p, rng, 1 << 16));
            done(write(&model), format!("entry {i}'s payload: {what}"))
        }
        7 => done(
            write(&model),
            format!("laid out again at alignment {align}"),
        ),
        8 => {
            let mut cx = Cx {
                rng,
                ids,
                small: true,
                payloads: &Payloads::Random,
                release: None,
            };
            let (blob, o) = gen_ccob::compress(&mut cx, data, &VERSIONS);
            done(
                blob,
                format!("compressed as CCOB v{} {:?}", o.version, o.method),
            )
        }
        9 if n > 0 => {
            let rule = *rng.pick(gen_binary::RULES);
            let mut cx = Cx {
                rng,
                ids,
                small: true,
                payloads: &Payloads::Random,
                release: None,
            };
            let (b, v) = gen_binary::malform(&mut cx, rule, model.entries, align, true)?;
            done(b, format!("rule {} broken: {}", rule.id, v.description))
        }
        _ => nest(data, rng),
    }
}

/// Put the bundle inside another container.
fn nest(data: &[u8], rng: &mut Rng) -> Option<Mutation> {
    let (bytes, what) = match rng.below(3) {
        0 => {
            let obj = elf::add_sections(
                &gen_host::host_object(),
                &[(".hip_fatbin", data, SHF_ALLOC)],
            )
            .ok()?;
            (obj, "nested in an ELF .hip_fatbin")
        }
        1 => (ar::write_gnu(&[("k.o", data)]), "nested in an archive"),
        _ => {
            // Two copies back to back, the second at the next 4096.
            let mut two = data.to_vec();
            two.resize(data.len().div_ceil(4096) * 4096, 0);
            two.extend_from_slice(data);
            (two, "repeated at the next multiple of 4096")
        }
    };
    Some(Mutation {
        bytes,
        what: what.into(),
    })
}

/// A different spelling of an entry ID: kind, processor, features, fields.
fn respell(id: &str, rng: &mut Rng) -> String {
    const KINDS: &[&str] = &["hip", "hipv4", "openmp", "host", "hcc", "HIP", "cuda"];
    const PROCS: &[&str] = &[
        "gfx906",
        "gfx908",
        "gfx90a",
        "gfx942",
        "gfx1030",
        "gfx1100",
        "gfx9-generic",
        "sm_70",
        "gfx9999",
        "",
    ];
    const FEATS: &[&str] = &[
        ":xnack+",
        ":xnack-",
        ":sramecc+",
        ":sramecc-",
        ":xnack",
        ":xnack+:xnack-",
        ":wavefrontsize64+",
    ];
    let parts: Vec<&str> = id.splitn(6, '-').collect();
    let mut p: Vec<String> = parts.iter().map(|s| s.to_string()).collect();
    match rng.below(7) {
        0 if !p.is_empty() => p[0] = rng.pick(KINDS).to_string(),
        1 if p.len() == 6 => {
            let feats = p[5].find(':').map_or("", |i| &p[5][i..]).to_string();
            p[5] = format!("{}{feats}", rng.pick(PROCS));
        }
        2 if p.len() == 6 => {
            let proc_ = p[5].split(':').next().unwrap_or("").to_string();
            p[5] = format!("{proc_}{}", rng.pick(FEATS));
        }
        3 if p.len() == 6 => {
            // Five fields: the target ID where the environment was.
            let tid = p.pop().unwrap_or_default();
            p[4] = tid;
        }
        4 if p.len() > 1 => {
            p[1] = rng
                .pick(&["amdgcn", "nvptx64", "spirv64", "x86_64", "AMDGCN"])
                .to_string()
        }
        5 if p.len() == 6 => subarch_spelling(&mut p, rng),
        _ => return format!("{id}{}", rng.pick(FEATS)),
    }
    p.join("-")
}

/// LLVM main's spelling of an AMDGPU ID (spec/bundle-id.md ID-7): the
/// processor in an `amdgpu<subarch>` arch field, the target ID kept or
/// left empty; or a subarch of a family, of no GPU, or of none known.
fn subarch_spelling(p: &mut [String], rng: &mut Rng) {
    use crate::id::subarch::Subarch;
    let named = p[5].split(':').next().unwrap_or("").to_string();
    let own = crate::id::processor::canonical_amdgpu(&named)
        .and_then(Subarch::of_processor)
        .map(Subarch::arch);
    p[1] = match rng.below(4) {
        0 => own.unwrap_or_else(|| "amdgpu9.42".to_string()),
        1 => rng.pick(&["amdgpu9.4", "amdgpu9", "amdgpu12"]).to_string(),
        2 => rng.pick(&["amdgpu", "amdgpu8", "amdgpufoo"]).to_string(),
        _ => rng
            .pick(&["amdgpu9.06", "amdgpu10.30", "amdgpu9.5"])
            .to_string(),
    };
    if rng.chance(50) {
        // The processor carried by the subarch alone.
        p[5] = p[5].find(':').map_or("", |i| &p[5][i..]).to_string();
    }
}

/// A text bundle: respell an ID in one marker line, or drop one line.
fn text(data: &[u8], rng: &mut Rng, _ids: &Ids) -> Option<Mutation> {
    let lines: Vec<(usize, usize)> = memchr::memchr_iter(b'\n', data)
        .scan(0usize, |start, nl| {
            let r = (*start, nl);
            *start = nl + 1;
            Some(r)
        })
        .filter(|&(s, e)| memchr::memmem::find(&data[s..e], b"__CLANG_OFFLOAD_BUNDLE__").is_some())
        .collect();
    if lines.is_empty() {
        return None;
    }
    let &(s, e) = rng.pick(&lines);
    let line = String::from_utf8_lossy(&data[s..e]).into_owned();
    let (new, what) = if rng.chance(30) {
        (String::new(), "marker line dropped".to_string())
    } else {
        let (head, id) = line.rsplit_once(' ')?;
        let id2 = respell(id, rng);
        (
            format!("{head} {id2}"),
            format!("ID '{id}' respelled '{id2}' in one marker line"),
        )
    };
    let mut out = data[..s].to_vec();
    out.extend_from_slice(new.as_bytes());
    out.extend_from_slice(&data[e..]);
    if new.is_empty() && e < data.len() {
        out.remove(s); // the line's own "\n"
    }
    Some(Mutation { bytes: out, what })
}

/// Header fields of a container: (offset, width, name).
type Fields = [(usize, usize, &'static str)];

/// The header fields of a CCOB blob of its version, from the one
/// declaration of the layouts (`raw::ccob::LAYOUTS`); for a version no
/// layout has, every layout's.
fn ccob_fields(data: &[u8]) -> Vec<(usize, usize, &'static str)> {
    use crate::format::ccob::{Layout, LAYOUTS};
    let version = data.get(4..6).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let layouts = match version.and_then(Layout::of) {
        Some(l) => vec![l],
        None => LAYOUTS.to_vec(),
    };
    let mut out = vec![(4, 2, "version"), (6, 2, "method")];
    for l in layouts {
        if let Some(f) = l.total_size {
            out.push((f.at as usize, f.width as usize, "total size"));
        }
        let u = l.uncompressed_size;
        out.push((u.at as usize, u.width as usize, "uncompressed size"));
        out.push((l.hash as usize, 8, "hash"));
    }
    out
}

const OB_FIELDS: [(usize, usize, &str); 8] = [
    (4, 4, "version"),
    (8, 8, "size"),
    (16, 8, "entry offset"),
    (24, 8, "entry size or count"),
    (32, 2, "first image kind (v1)"),
    (34, 2, "first offload kind (v1)"),
    (40, 8, "first string offset (v1)"),
    (56, 8, "first image offset (v1)"),
];

/// Set one header field to a boundary value.
fn header_field(data: &[u8], rng: &mut Rng, fields: &Fields, what: &str) -> Option<Mutation> {
    let &(at, w, name) = rng.pick(fields);
    if at + w > data.len() {
        return None;
    }
    let mut raw = [0u8; 8];
    raw[..w].copy_from_slice(&data[at..at + w]);
    let v = interesting(rng, data.len() as u64, u64::from_le_bytes(raw));
    let mut out = data.to_vec();
    out[at..at + w].copy_from_slice(&v.to_le_bytes()[..w]);
    Some(Mutation {
        bytes: out,
        what: format!("{what} {name} set to {}", v & (u64::MAX >> (64 - 8 * w))),
    })
}

/// Byte-level mutation of `b` (at most `max` bytes long afterwards).
fn bytes(b: &mut Vec<u8>, rng: &mut Rng, max: usize) -> String {
    if b.is_empty() {
        let n = 1 + rng.below(max.clamp(1, 64));
        *b = rng.bytes(n);
        return format!("{n} random bytes");
    }
    let at = rng.below(b.len());
    match rng.below(7) {
        0 => {
            b[at] ^= 1 << rng.below(8);
            format!("bit flipped at {at}")
        }
        1 => {
            b[at] = *rng.pick(&[0u8, 0xff, 0x7f, 0x80, 1]);
            format!("byte set at {at}")
        }
        2 => {
            let at = at & !7;
            let w = (b.len() - at).min(8);
            let orig = {
                let mut raw = [0u8; 8];
                raw[..w].copy_from_slice(&b[at..at + w]);
                u64::from_le_bytes(raw)
            };
            let v = interesting(rng, b.len() as u64, orig);
            b[at..at + w].copy_from_slice(&v.to_le_bytes()[..w]);
            format!("u64 at {at} set to {v}")
        }
        3 if b.len() < max => {
            let n = (1 + rng.below(16)).min(max - b.len());
            let ins = rng.bytes(n);
            b.splice(at..at, ins);
            format!("{n} bytes inserted at {at}")
        }
        4 => {
            let n = 1 + rng.below((b.len() - at).min(64));
            b.drain(at..at + n);
            format!("{n} bytes deleted at {at}")
        }
        5 if b.len() < max => {
            let n = (1 + rng.below((b.len() - at).min(64))).min(max - b.len());
            let chunk = b[at..at + n].to_vec();
            let to = rng.below(b.len() + 1);
            b.splice(to..to, chunk);
            format!("{n} bytes from {at} copied to {to}")
        }
        _ => {
            b.truncate(at);
            format!("cut at {at}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Kind, Options};

    #[test]
    fn every_kind_mutates_within_the_limit_and_deterministically() {
        for kind in Kind::ALL {
            for seed in 0..40 {
                let g = generate(kind, seed, &Options::default()).unwrap();
                for max in [g.bytes.len(), g.bytes.len() + 100, 64] {
                    let m = mutate(&g.bytes, max, seed);
                    assert!(m.bytes.len() <= max, "{kind} seed {seed}: {}", m.what);
                    assert_eq!(m, mutate(&g.bytes, max, seed));
                }
            }
        }
    }

    #[test]
    fn ids_are_respelled_as_llvm_main_writes_them() {
        let g = generate(Kind::Binary, 1, &Options::default()).unwrap();
        let main: Vec<String> = (0..3000)
            .map(|s| mutate(&g.bytes, 1 << 16, s).what)
            .filter(|w| w.contains("respelled") && w.contains("-amdgpu"))
            .collect();
        assert!(main.iter().any(|w| w.contains("amdhsa--'")), "{main:?}");
        assert!(main.iter().any(|w| w.contains("-amdgpu-amd")), "{main:?}");
    }

    /// The ablations leave out exactly their family: `no_image` makes no
    /// image-aware edit (a code object's bytes are flipped), and
    /// `no_structure` leaves only byte edits, which never name a field.
    #[test]
    fn ablations_leave_out_their_family() {
        let seed = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fuzz/harness/seeds/hip22-gfx906-gfx90a.fatbin"
        );
        let data = std::fs::read(seed).expect("a real bundle of code objects");
        let whats = |o: MutateOptions| -> Vec<String> {
            (0..3000)
                .map(|s| mutate_with(&data, 1 << 20, s, o).what)
                .collect()
        };
        // The image-aware family's edits (the rule family's CO-* breaks,
        // which also touch images, stay).
        let elf_edit = |w: &&String| {
            w.contains("image: ") && !w.contains("byte(s) set") && !w.starts_with("rule ")
        };
        let default = whats(MutateOptions::default());
        assert!(default.iter().filter(elf_edit).count() > 100);
        let no_image = whats(MutateOptions {
            no_image: true,
            ..MutateOptions::default()
        });
        assert_eq!(no_image.iter().filter(elf_edit).count(), 0, "{no_image:?}");
        assert!(no_image.iter().any(|w| w.contains("respelled")));
        let bytes_only = whats(MutateOptions {
            no_structure: true,
            ..MutateOptions::default()
        });
        let byte_edit = [
            "bit flipped",
            "byte set",
            "u64 at",
            "bytes inserted",
            "bytes deleted",
        ];
        let structural = [
            "entry",
            "image",
            "rule",
            "CCOB",
            "nested",
            "respelled",
            "member",
        ];
        for w in &bytes_only {
            let byte = byte_edit.iter().any(|b| w.contains(b))
                || ["copied to", "cut at", "random bytes"]
                    .iter()
                    .any(|b| w.contains(b));
            assert!(byte && !structural.iter().any(|x| w.contains(x)), "{w}");
        }
    }

    #[test]
    fn structure_is_mutated_not_only_bytes() {
        let g = generate(Kind::Binary, 1, &Options::default()).unwrap();
        let whats: Vec<String> = (0..300)
            .map(|s| mutate(&g.bytes, 1 << 16, s).what)
            .collect();
        // Field, respelling, compression, rule-breaking and nesting all occur.
        for want in [
            "respelled",
            "compressed",
            "rule",
            "nested",
            "set to",
            "dropped",
        ] {
            assert!(
                whats.iter().any(|w| w.contains(want)),
                "no '{want}' among {whats:?}"
            );
        }
        // Mutants stay readable often enough to reach a loader's deeper code.
        let readable = (0..300)
            .filter(|&s| detect::detect(&mutate(&g.bytes, 1 << 16, s).bytes).is_some())
            .count();
        assert!(
            readable > 150,
            "{readable} of 300 mutants are recognisable containers"
        );
    }

    #[test]
    fn kpack_splits_are_mutated_by_structure() {
        use offload_kit_format::kpack;
        let mut rules = std::collections::BTreeSet::new();
        let mut whats = Vec::new();
        for seed in 0..6 {
            let g = generate(Kind::Kpack, seed, &Options::default()).unwrap();
            let archive = &g.companions[0].1;
            for s in 0..200 {
                let m = mutate(archive, 1 << 16, s);
                match kpack::parse(&m.bytes) {
                    Ok(a) => {
                        for k in &a.kernels {
                            if let Err(e) = a.code_object(&m.bytes, k, 1 << 28) {
                                rules.extend(e.rule_id());
                            }
                        }
                    }
                    Err(e) => {
                        rules.extend(e.rule_id());
                    }
                }
                whats.push(m.what);
            }
            for s in 0..100 {
                let m = mutate(&g.bytes, 1 << 16, s);
                whats.push(m.what);
            }
        }
        for want in [
            "kpack TOC number",
            "kpack TOC string",
            "kpack TOC key",
            "kpack version",
            "kpack blob",
            "rocm_kpack_ref",
            "HIPK wrapper",
        ] {
            assert!(
                whats.iter().any(|w| w.contains(want)),
                "no '{want}' among the mutations"
            );
        }
        for rule in ["KPAK-1", "KPAK-2", "KPAK-3", "KPAK-5"] {
            assert!(rules.contains(rule), "no mutant breaks {rule}: {rules:?}");
        }
    }

    #[test]
    fn long_chains_never_panic() {
        // Each mutant is the next input, as in a fuzzing campaign.
        for kind in Kind::ALL {
            let mut cur = generate(kind, 3, &Options::default()).unwrap().bytes;
            for seed in 0..400 {
                cur = mutate(&cur, 8192, seed).bytes;
                assert!(cur.len() <= 8192);
            }
        }
    }

    #[test]
    fn real_artifacts_mutate_without_panicking() {
        // clang-built fat binaries and objects (the repository's), mutated in chains.
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
        let mut seeds = Vec::new();
        for dir in [
            "fuzz/harness/seeds",
            "conformance/fixtures",
            "fuzz/seeds/ccob_stream",
        ] {
            for e in std::fs::read_dir(format!("{root}{dir}")).unwrap() {
                let p = e.unwrap().path();
                if p.extension().is_none_or(|x| x != "md" && x != "json") {
                    seeds.push(std::fs::read(p).unwrap());
                }
            }
        }
        assert!(seeds.len() >= 5, "seed files missing");
        for s in &seeds {
            let mut cur = s.clone();
            for seed in 0..300 {
                let max = s.len().max(4096);
                cur = mutate(&cur, max, seed).bytes;
                assert!(cur.len() <= max);
                if seed % 50 == 0 {
                    cur = s.clone();
                }
            }
        }
    }

    #[test]
    fn empty_and_tiny_inputs() {
        for seed in 0..100 {
            assert!(mutate(&[], 10, seed).bytes.len() <= 10);
            assert!(mutate(&[0x10], 1, seed).bytes.len() <= 1);
            assert!(mutate(b"CCOB", 0, seed).bytes.is_empty());
        }
    }
}
