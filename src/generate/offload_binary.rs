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
    rules::OB_4,
    rules::OB_11,
    rules::OB_12,
    rules::OB_13,
    rules::OB_14,
    rules::OB_16,
    rules::OB_25,
];

/// (triple, arch, image kind, offload kind) of plausible images.
const IMAGES: &[(&str, &str, u16, u16)] = &[
    ("amdgcn-amd-amdhsa", "gfx906", 1, 1),
    ("amdgcn-amd-amdhsa", "gfx90a:xnack+", 2, 1),
    ("amdgcn-amd-amdhsa", "gfx1030", 1, 4),
    ("nvptx64-nvidia-cuda", "sm_70", 3, 2),
    ("nvptx64-nvidia-cuda", "sm_80", 5, 1),
    ("x86_64-unknown-linux-gnu", "", 1, 1),
];

/// One file of offload binaries, valid or breaking `rule`.
pub(super) fn build(cx: Cx<'_>, rule: Option<Rule>) -> Option<Draft> {
    let n = 1 + cx.rng.below(if cx.small { 2 } else { 4 });
    let images: Vec<OwnedImage> = (0..n)
        .map(|_| {
            let &(triple, arch, image_kind, offload_kind) = cx.rng.pick(IMAGES);
            let mut strings = vec![
                (b"arch".to_vec(), arch.as_bytes().to_vec()),
                (b"triple".to_vec(), triple.as_bytes().to_vec()),
            ];
            if rule == Some(rules::OB_11) {
                strings.push((b"arch".to_vec(), b"gfx908".to_vec()));
            }
            if rule == Some(rules::OB_25) {
                strings.push((b"feature".to_vec(), b"+wavefrontsize64\x01".to_vec()));
            }
            OwnedImage {
                image_kind,
                offload_kind,
                flags: 0,
                strings,
                image: pick::payload(cx.rng, cx.small),
            }
        })
        .collect();
    // Version 1 (every release) most often; 2 and 3 of LLVM main otherwise;
    // compressed version 3 only for valid files (its fields are deflated).
    let version = *cx.rng.pick(&[1u32, 1, 2, 3]);
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
    let v = |at: usize, what: String| Some(Violation::new(rule?, at as u64, what));
    let violation = match rule {
        None => None,
        Some(rules::OB_2) => {
            let ver = *cx.rng.pick(&[0u32, 4, 7, 0xffff_ffff]);
            bytes[4..8].copy_from_slice(&ver.to_le_bytes());
            v(4, format!("version {ver}"))
        }
        Some(rules::OB_4) => {
            let bad = (bytes.len() + 8 * (1 + cx.rng.below(100))) as u64;
            bytes[8..16].copy_from_slice(&bad.to_le_bytes());
            v(8, format!("size {bad} past the end"))
        }
        Some(rules::OB_12) => {
            let k = *cx.rng.pick(&[7u16, 0x55, 0xffff]);
            bytes[entry..entry + 2].copy_from_slice(&k.to_le_bytes());
            v(entry, format!("image kind {k}"))
        }
        Some(rules::OB_13) => {
            let k = *cx.rng.pick(&[0x10u16, 0x55, 0xffff]);
            bytes[entry + 2..entry + 4].copy_from_slice(&k.to_le_bytes());
            v(entry + 2, format!("offload kind {k}"))
        }
        Some(rules::OB_14) => {
            let bit = 1u32 << (1 + cx.rng.below(31));
            bytes[entry + 4..entry + 8].copy_from_slice(&bit.to_le_bytes());
            v(entry + 4, format!("flags 0x{bit:x}"))
        }
        Some(rules::OB_16) => {
            // The padding after the image, up to the size's multiple of 8.
            let end = image_off + image_size;
            if end >= size {
                return None;
            }
            let at = end + cx.rng.below(size - end);
            bytes[at] = 1 + cx.rng.below(255) as u8;
            v(at, "a padding byte set".into())
        }
        Some(rules::OB_11) => {
            let at = string_off + 2 * string_entry_size(version) as usize;
            v(at, "the key 'arch' twice".into())
        }
        Some(rules::OB_25) => {
            let value = b"+wavefrontsize64\x01";
            let at = memchr::memmem::find(&bytes, value)? + value.len() - 1;
            v(at, "a value holds the control character 0x01".into())
        }
        Some(_) => return None,
    };
    Some(Draft {
        bytes,
        description,
        violation,
    })
}
