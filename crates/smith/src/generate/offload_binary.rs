//! Offload binaries (`10 FF 10 AD`): version 1 binaries back to back, as
//! every release's packager writes them, or one version 2/3 binary of LLVM
//! main holding several images; and one violation per rule of
//! `offload-binary.md` that a field can break.

use super::{pick, Cx, Draft, Violation};
use crate::format::offload_binary::{read_u64, string_entry_size};
use crate::offload_binary::{write_multi, write_v1_all};
use crate::offload_binary::{Compression, OwnedImage};
use crate::rules::{self, Rule};

/// Rules an offload binary can break one at a time.
pub(super) const RULES: &[Rule] = &[
    rules::OB_2,
    rules::OB_3,
    rules::OB_4,
    rules::OB_5,
    rules::OB_6,
    rules::OB_7,
    rules::OB_8,
    rules::OB_9,
    rules::OB_10,
    rules::OB_11,
    rules::OB_12,
    rules::OB_13,
    rules::OB_14,
    rules::OB_15,
    rules::OB_16,
    rules::OB_25,
    rules::CO_2,
    rules::CO_3,
    rules::CO_4,
    rules::CO_5,
];

/// Rules whose violations are laid out for version 1 (what every release
/// reads): the first binary's fields are where LLVM 16-22 read them.
const V1_ONLY: &[&str] = &[
    "OB-3", "OB-5", "OB-6", "OB-7", "OB-8", "OB-9", "OB-10", "OB-15",
];

/// (triple, arch, image kind, offload kind) of the image for a bundle
/// entry ID: `IMG_Cubin` for NVPTX, `IMG_SPIRV` for SPIR-V, `IMG_Object`
/// otherwise; `OFK_OpenMP` for OpenMP and host IDs, `OFK_Cuda`, `OFK_HIP`
/// (4, as 22 numbers it).
fn image_of(id: &str) -> (String, String, u16, u16) {
    let parsed = crate::id::BundleEntryId::parse_strict(id).ok();
    let (kind, triple, arch) = parsed.as_ref().map_or(("openmp", "", ""), |p| {
        (p.kind.as_str(), p.triple.as_str(), p.target_id.as_str())
    });
    let t = crate::id::triple::Triple::parse(triple);
    let image_kind = if t.is_nvptx() {
        3
    } else if t.arch.starts_with("spirv") {
        6
    } else {
        1
    };
    let offload_kind = match kind {
        "cuda" => 2,
        "hip" | "hipv4" | "hip-spirv" => 4,
        _ => 1,
    };
    // The triple as clang writes it in an offload binary: no empty environment.
    let triple = triple.trim_end_matches('-').to_string();
    (triple, arch.to_string(), image_kind, offload_kind)
}

/// One file of offload binaries, valid or breaking `rule`.
pub(super) fn build(mut cx: Cx<'_>, rule: Option<Rule>) -> Option<Draft> {
    let n = 1 + cx.rng.below(if cx.small { 2 } else { 4 });
    // Host IDs become OpenMP images for the host (LLVM's host plugin).
    let mut images: Vec<OwnedImage> = Vec::with_capacity(n);
    for _ in 0..n {
        let host = cx.ids.host(cx.rng).filter(|_| cx.rng.chance(30));
        let id = match host {
            Some(h) => h,
            None => cx
                .ids
                .devices(cx.rng, 1)
                .pop()
                .or_else(|| cx.ids.host(cx.rng))?,
        };
        let (triple, arch, image_kind, offload_kind) = image_of(&id);
        let mut strings = vec![
            (b"arch".to_vec(), arch.into_bytes()),
            (b"triple".to_vec(), triple.into_bytes()),
        ];
        if rule == Some(rules::OB_11) {
            strings.push((b"arch".to_vec(), b"gfx908".to_vec()));
        }
        if rule == Some(rules::OB_25) {
            strings.push((b"feature".to_vec(), b"+wavefrontsize64\x01".to_vec()));
        }
        let mut image = pick::payload_for(&mut cx, &id);
        if rule == Some(rules::OB_16) && image.len() % 8 == 0 {
            // Images are multiples of 8: leave padding to break.
            image.push(0);
        }
        images.push(OwnedImage {
            image_kind,
            offload_kind,
            flags: 0,
            strings,
            image,
        });
    }
    // Version 1 (every release) most often; 2 and 3 of LLVM main otherwise;
    // compressed version 3 only for valid files (its fields are deflated).
    let readable = cx.offload_binary_versions();
    let version = match rule {
        Some(r) if V1_ONLY.contains(&r.id) => 1,
        _ => {
            let drawn: Vec<u32> = [1u32, 1, 2, 3]
                .into_iter()
                .filter(|v| readable.contains(v))
                .collect();
            *cx.rng.pick(&drawn)
        }
    };
    let compression = (version == 3 && rule.is_none() && cx.rng.chance(50)).then(|| {
        if cx.rng.chance(50) {
            Compression::Zstd(1 + cx.rng.below(5) as i32)
        } else {
            Compression::Zlib(1 + cx.rng.below(9) as u32)
        }
    });
    let mut bytes = if version == 1 {
        write_v1_all(&images).ok()?
    } else {
        write_multi(&images, version, compression).ok()?
    };
    let archs: Vec<String> = images
        .iter()
        .map(|i| String::from_utf8_lossy(&i.strings[0].1).into_owned())
        .collect();
    let description = format!(
        "offload binary v{version}{}, {n} image(s): [{}]",
        compression.map_or(String::new(), |c| format!(" {c:?}")),
        archs.join(", ")
    );
    // The first binary's first entry.
    let entry = read_u64(&bytes, 16)? as usize;
    let string_off = read_u64(&bytes, entry as u64 + 8)? as usize;
    let image_off = read_u64(&bytes, entry as u64 + 24)? as usize;
    let image_size = read_u64(&bytes, entry as u64 + 32)? as usize;
    let size = read_u64(&bytes, 8)? as usize;
    let at = FirstEntry {
        entry,
        string_off,
        image_off,
        image_size,
        size,
    };
    let violation = match rule {
        None => None,
        Some(r) => Some(break_rule(&mut cx, &mut bytes, r, version, at)?),
    };
    Some(Draft {
        bytes,
        description,
        violation,
    })
}

/// Where the first binary's first entry and its parts lie.
#[derive(Clone, Copy)]
struct FirstEntry {
    entry: usize,
    string_off: usize,
    image_off: usize,
    image_size: usize,
    size: usize,
}

/// Break `r` in `bytes`, a valid file of offload binaries of `version`;
/// `None` when the draw cannot break it.
fn break_rule(
    cx: &mut Cx<'_>,
    bytes: &mut Vec<u8>,
    r: Rule,
    version: u32,
    at: FirstEntry,
) -> Option<Violation> {
    let FirstEntry {
        entry,
        string_off,
        image_off,
        image_size,
        size,
    } = at;
    let v = |at: usize, what: String| Some(Violation::new(r, at as u64, what));
    match r {
        rules::OB_2 => {
            let ver = *cx.rng.pick(&[0u32, 4, 7, 0xffff_ffff]);
            bytes[4..8].copy_from_slice(&ver.to_le_bytes());
            v(4, format!("version {ver}"))
        }
        rules::OB_4 => {
            let bad = (bytes.len() + 8 * (1 + cx.rng.below(100))) as u64;
            bytes[8..16].copy_from_slice(&bad.to_le_bytes());
            v(8, format!("size {bad} past the end"))
        }
        rules::OB_3 => {
            // A header cut short: the magic stays, the rest of 32 does not.
            let k = 4 + cx.rng.below(28);
            bytes.truncate(k);
            v(k, format!("the file ends {k} bytes into the header"))
        }
        rules::OB_5 => {
            // The last binary grows by 1-7 zero bytes, its size with it.
            let last = last_binary(bytes);
            let extra = 1 + cx.rng.below(7);
            let grown = read_u64(bytes, last as u64 + 8)? + extra as u64;
            bytes.resize(bytes.len() + extra, 0);
            bytes[last + 8..last + 16].copy_from_slice(&grown.to_le_bytes());
            v(last + 8, format!("size {grown}, not a multiple of 8"))
        }
        rules::OB_6 => {
            let bad = *cx
                .rng
                .pick(&[(size - 39) as u64, size as u64, 0x1_0000_0000, u64::MAX - 7]);
            bytes[16..24].copy_from_slice(&bad.to_le_bytes());
            v(
                16,
                format!("entry offset {bad}: the entry is not inside the binary"),
            )
        }
        rules::OB_7 => {
            // LLVM 16-22 read this many string entries from the heap.
            let room = (size - string_off) as u64 / 16;
            let bad = *cx
                .rng
                .pick(&[room + 1, room + 64, 1 << 40, (u64::MAX >> 4) + 2]);
            let at = entry + 16;
            bytes[at..at + 8].copy_from_slice(&bad.to_le_bytes());
            v(
                at,
                format!("num strings {bad}: string entries past the end"),
            )
        }
        rules::OB_8 => {
            // A key or value offset past the binary: LLVM 16-22 strlen() it.
            let at = string_off + 8 * cx.rng.below(2);
            let (near, far) = (cx.rng.below(4096) as u64, cx.rng.below(64) as u64);
            let bad = *cx
                .rng
                .pick(&[size as u64 + 1 + near, 1 << 32, u64::MAX - far]);
            bytes[at..at + 8].copy_from_slice(&bad.to_le_bytes());
            let which = if at == string_off { "key" } else { "value" };
            v(at, format!("{which} offset {bad} past the binary"))
        }
        rules::OB_9 => {
            // The image runs past the binary: extraction copies heap bytes.
            let room = (size - image_off) as u64;
            let more = 8 * (1 + cx.rng.below(1024) as u64);
            let bad = *cx.rng.pick(&[
                room + more,
                room + 1_000_000,
                u64::MAX - image_off as u64 + 1,
            ]);
            let at = entry + 32;
            bytes[at..at + 8].copy_from_slice(&bad.to_le_bytes());
            v(at, format!("image size {bad} past the binary"))
        }
        rules::OB_10 => {
            // The image moved back over the string entries.
            let to = string_off + 8 * cx.rng.below(2);
            let at = entry + 24;
            bytes[at..at + 8].copy_from_slice(&(to as u64).to_le_bytes());
            v(at, format!("image moved to {to}, over the string entries"))
        }
        rules::OB_15 => {
            // Bytes after the last binary that are no binary.
            let junk = 1 + cx.rng.below(24);
            let at = bytes.len();
            let mut tail = cx.rng.bytes(junk);
            if tail[0] == 0x10 {
                tail[0] = 0;
            }
            bytes.extend_from_slice(&tail);
            v(at, format!("{junk} bytes after the last binary"))
        }
        rules::CO_2 | rules::CO_3 | rules::CO_4 | rules::CO_5 => {
            // The first entry's image, in place (its size stays).
            let mut img = bytes.get(image_off..image_off + image_size)?.to_vec();
            let (at, what) = super::image::break_image(&mut img, r, cx.rng, false)?;
            bytes[image_off..image_off + image_size].copy_from_slice(&img);
            v(image_off + at, format!("the first image: {what}"))
        }
        rules::OB_12 => {
            let k = *cx.rng.pick(&[7u16, 0x55, 0xffff]);
            bytes[entry..entry + 2].copy_from_slice(&k.to_le_bytes());
            v(entry, format!("image kind {k}"))
        }
        rules::OB_13 => {
            let k = *cx.rng.pick(&[0x10u16, 0x55, 0xffff]);
            bytes[entry + 2..entry + 4].copy_from_slice(&k.to_le_bytes());
            v(entry + 2, format!("offload kind {k}"))
        }
        rules::OB_14 => {
            let bit = 1u32 << (1 + cx.rng.below(31));
            bytes[entry + 4..entry + 8].copy_from_slice(&bit.to_le_bytes());
            v(entry + 4, format!("flags 0x{bit:x}"))
        }
        rules::OB_16 => {
            // The padding after the image, up to the size's multiple of 8.
            let end = image_off + image_size;
            if end >= size {
                return None;
            }
            let at = end + cx.rng.below(size - end);
            bytes[at] = 1 + cx.rng.below(255) as u8;
            v(at, "a padding byte set".into())
        }
        rules::OB_11 => {
            let at = string_off + 2 * string_entry_size(version) as usize;
            v(at, "the key 'arch' twice".into())
        }
        rules::OB_25 => {
            let value = b"+wavefrontsize64\x01";
            let at = memchr::memmem::find(bytes, value)? + value.len() - 1;
            v(at, "a value holds the control character 0x01".into())
        }
        _ => None,
    }
}

/// Where the last binary of a file of offload binaries begins.
fn last_binary(bytes: &[u8]) -> usize {
    let mut last = 0usize;
    while let Some(sz) = read_u64(bytes, last as u64 + 8) {
        if last + sz as usize >= bytes.len() {
            break;
        }
        last += sz as usize;
    }
    last
}
