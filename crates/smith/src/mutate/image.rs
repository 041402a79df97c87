//! Structure-aware changes inside the images a loader maps (ELF64
//! little-endian code objects, cubins, shared objects) and inside offload
//! binaries' string tables: where a loader's own parsing is, and where byte
//! flips otherwise win. Every read is bounds-checked; images keep their
//! length unless the change is a truncation.

use super::interesting;
use crate::format::code_object::{AMDGPU_MACHS, EM_AMDGPU, EM_CUDA};
use crate::generate::Rng;

fn get(b: &[u8], at: usize, n: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(n)?)?;
    Some(s.iter().rev().fold(0u64, |v, &x| v << 8 | u64::from(x)))
}

fn set(b: &mut [u8], at: usize, n: usize, v: u64) -> Option<()> {
    let s = b.get_mut(at..at.checked_add(n)?)?;
    s.copy_from_slice(&v.to_le_bytes()[..n]);
    Some(())
}

/// A 16-bit boundary value.
fn interesting16(rng: &mut Rng, orig: u64) -> u64 {
    *rng.pick(&[
        0,
        1,
        0xffff,
        0xff00,
        orig + 1,
        orig.saturating_sub(1),
        orig * 2,
    ])
}

/// Table `(offset, entry size, count)` of the program (`phdr`) or section
/// headers, when its entries are inside the image.
fn table(img: &[u8], phdr: bool) -> Option<(usize, usize, usize)> {
    let (off, size, num) = if phdr { (32, 54, 56) } else { (40, 58, 60) };
    let at = usize::try_from(get(img, off, 8)?).ok()?;
    let entsize = get(img, size, 2)? as usize;
    let count = get(img, num, 2)? as usize;
    (entsize >= 32 && at.checked_add(entsize.checked_mul(count)?)? <= img.len() && count > 0)
        .then_some((at, entsize, count))
}

/// A random section of type `ty`: the section table's offset and entry
/// size, and the section's index.
fn section_of(img: &[u8], ty: u64, rng: &mut Rng) -> Option<(usize, usize, usize)> {
    let (at, size, count) = table(img, false)?;
    let of_type: Vec<usize> = (0..count)
        .filter(|&i| get(img, at + i * size + 4, 4) == Some(ty))
        .collect();
    if of_type.is_empty() {
        return None;
    }
    Some((at, size, *rng.pick(&of_type)))
}

/// One change to an ELF64 little-endian image; `None` when `img` is not one.
pub(crate) fn mutate_elf(img: &mut Vec<u8>, rng: &mut Rng) -> Option<String> {
    if img.len() < 64 || &img[..4] != b"\x7fELF" || img[4] != 2 || img[5] != 1 {
        return None;
    }
    let len = img.len() as u64;
    let m = |what: String| Some(format!("image: {what}"));
    // What the dynamic loader applies (program headers, dynamic entries,
    // relocations) weighted up: that is where mapping a bad image crashes.
    const OPS: [usize; 16] = [0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 9, 9, 9, 10, 10, 10];
    match OPS[rng.below(OPS.len())] {
        0 => {
            let (at, name) = *rng.pick(&[(32, "e_phoff"), (40, "e_shoff")]);
            let v = interesting(rng, len, get(img, at, 8)?);
            set(img, at, 8, v)?;
            m(format!("{name} set to {v}"))
        }
        1 => {
            let (at, name) = *rng.pick(&[(56, "e_phnum"), (60, "e_shnum"), (62, "e_shstrndx")]);
            let v = interesting16(rng, get(img, at, 2)?) & 0xffff;
            set(img, at, 2, v)?;
            m(format!("{name} set to {v}"))
        }
        2 => {
            let (at, name) = *rng.pick(&[(54, "e_phentsize"), (58, "e_shentsize")]);
            let v = interesting16(rng, get(img, at, 2)?) & 0xffff;
            set(img, at, 2, v)?;
            m(format!("{name} set to {v}"))
        }
        3 => {
            let (at, size, count) = table(img, true)?;
            let i = rng.below(count);
            let (k, name) = *rng.pick(&[
                (8, "p_offset"),
                (16, "p_vaddr"),
                (32, "p_filesz"),
                (40, "p_memsz"),
                (48, "p_align"),
            ]);
            let v = interesting(rng, len, get(img, at + i * size + k, 8)?);
            set(img, at + i * size + k, 8, v)?;
            m(format!("program header {i}'s {name} set to {v}"))
        }
        4 => {
            let (at, size, count) = table(img, false)?;
            let i = rng.below(count);
            let (k, n, name) = *rng.pick(&[
                (24, 8, "sh_offset"),
                (32, 8, "sh_size"),
                (40, 4, "sh_link"),
                (56, 8, "sh_entsize"),
            ]);
            let orig = get(img, at + i * size + k, n)?;
            let v = interesting(rng, len, orig) & (u64::MAX >> (64 - 8 * n));
            set(img, at + i * size + k, n, v)?;
            m(format!("section header {i}'s {name} set to {v}"))
        }
        5 => {
            // Cut at a section's start: what a short read leaves.
            let (at, size, count) = table(img, false)?;
            let i = 1 + rng.below(count.saturating_sub(1).max(1));
            let cut = usize::try_from(get(img, at + i * size + 24, 8)?).ok()?;
            if cut == 0 || cut >= img.len() {
                return None;
            }
            img.truncate(cut);
            m(format!("cut at section {i}'s start ({cut} bytes)"))
        }
        6 => {
            let flags = get(img, 48, 4)?;
            let v = match get(img, 18, 2)? as u16 {
                // Another processor, or another xnack/sramecc setting.
                EM_AMDGPU if rng.chance(50) => {
                    (flags & !0xff) | u64::from(rng.pick(AMDGPU_MACHS).0)
                }
                EM_AMDGPU => flags ^ (0x100 << rng.below(4)),
                EM_CUDA => (flags & !0xff) | u64::from(*rng.pick(&[30u8, 52, 70, 80, 90, 100])),
                _ => flags ^ (1 << rng.below(32)),
            };
            set(img, 48, 4, v)?;
            m(format!("e_flags respelled 0x{flags:x} -> 0x{v:x}"))
        }
        7 => {
            // A string table loses its last NUL.
            let (at, size, i) = section_of(img, 3, rng)?;
            let off = get(img, at + i * size + 24, 8)?;
            let sz = get(img, at + i * size + 32, 8)?;
            let last = usize::try_from(off.checked_add(sz)?.checked_sub(1)?).ok()?;
            *img.get_mut(last)? = b'A';
            m(format!("string table (section {i}) unterminated"))
        }
        8 => {
            let (at, name, v) = *rng.pick(&[
                (16, "e_type", 1u64),
                (16, "e_type", 2),
                (16, "e_type", 4),
                (18, "e_machine", 62),
                (18, "e_machine", 224),
                (18, "e_machine", 190),
            ]);
            set(img, at, 2, v)?;
            m(format!("{name} set to {v}"))
        }
        9 => {
            // A relocation (SHT_RELA): its type, offset or addend, what the
            // dynamic loader applies to the mapped image.
            let (at, size, i) = section_of(img, 4, rng)?;
            let h = at + i * size;
            let (off, sz) = (get(img, h + 24, 8)?, get(img, h + 32, 8)?);
            let n = usize::try_from(sz / 24).ok()?;
            if n == 0 {
                return None;
            }
            // Offsets come from the image: checked, never wrapped.
            let e = usize::try_from(off).ok()?.checked_add(24 * rng.below(n))?;
            let (k, name) = *rng.pick(&[(0, "r_offset"), (8, "r_info"), (16, "r_addend")]);
            let orig = get(img, e + k, 8)?;
            let v = match k {
                // Another relocation type, the symbol kept.
                8 => (orig & !0xffff_ffff) | rng.below(48) as u64,
                _ => interesting(rng, len, orig),
            };
            set(img, e + k, 8, v)?;
            m(format!("relocation at {e}: {name} set to {v:#x}"))
        }
        _ => {
            // A dynamic entry's value (DT_STRTAB, DT_SYMTAB, DT_HASH, …).
            let (at, size, count) = table(img, true)?;
            let dynamic = (0..count).find(|&i| get(img, at + i * size, 4) == Some(2))?;
            let off = usize::try_from(get(img, at + dynamic * size + 8, 8)?).ok()?;
            let n = usize::try_from(get(img, at + dynamic * size + 32, 8)?).ok()? / 16;
            if n == 0 {
                return None;
            }
            let i = rng.below(n);
            // `off` comes from the image (the 10-minute mutate_chain run
            // found it near usize::MAX): checked, never wrapped.
            let entry = off.checked_add(16 * i)?;
            let tag = get(img, entry, 8)?;
            let v = interesting(rng, len, get(img, entry.checked_add(8)?, 8)?);
            set(img, entry.checked_add(8)?, 8, v)?;
            m(format!("dynamic entry {i} (tag {tag}) set to {v}"))
        }
    }
}

/// 1-8 bytes of an image set to random values, the container around it
/// left whole: what byte flips do, aimed where loaders parse.
pub(crate) fn flip(img: &mut [u8], rng: &mut Rng) -> Option<String> {
    if img.is_empty() {
        return None;
    }
    let n = 1 + rng.below(8);
    for _ in 0..n {
        let at = rng.below(img.len());
        img[at] = rng.below(256) as u8;
    }
    Some(format!("image: {n} byte(s) set"))
}

/// One change to the string table or the image of the first entry of the
/// first offload binary in `data` (any version; string entries of 16 bytes
/// in version 1, 24 after), in place.
pub(crate) fn mutate_offload_binary(
    data: &[u8],
    rng: &mut Rng,
    no_image: bool,
) -> Option<(Vec<u8>, String)> {
    let mut out = data.to_vec();
    let version = get(data, 4, 4)?;
    let size = get(data, 8, 8)?.min(data.len() as u64);
    // The entry offset is the file's claim: kept where `entry + 40` fits.
    let entry = usize::try_from(get(data, 16, 8)?)
        .ok()
        .filter(|e| e.checked_add(40).is_some())?;
    let strings = usize::try_from(get(data, entry + 8, 8)?).ok()?;
    let count = get(data, entry + 16, 8)?;
    let stride = if version == 1 { 16 } else { 24 };
    // The image most often (where loaders crash), the string table else.
    match rng.below(20) {
        0 | 1 => {
            let v = interesting(rng, size / stride as u64, count);
            set(&mut out, entry + 16, 8, v)?;
            Some((out, format!("num strings set to {v}")))
        }
        2 | 3 if count > 0 => {
            let i = rng.below(count.min(64) as usize);
            let (k, name) = *rng.pick(&[(0, "key"), (8, "value")]);
            let at = strings.checked_add(i * stride + k)?;
            let orig = get(data, at, 8)?;
            let v = match rng.below(3) {
                0 => size,
                1 => interesting(rng, size, orig),
                _ => orig.wrapping_sub(1 + rng.below(64) as u64),
            };
            set(&mut out, at, 8, v)?;
            Some((out, format!("string {i}'s {name} offset set to {v}")))
        }
        4 if count > 0 => {
            // A key or value loses its NUL (it runs into what follows).
            let i = rng.below(count.min(64) as usize);
            let at = strings.checked_add(i * stride + 8 * rng.below(2))?;
            let s = usize::try_from(get(data, at, 8)?).ok()?;
            let nul = s + memchr::memchr(0, data.get(s..size as usize)?)?;
            out[nul] = b'x';
            Some((out, format!("string {i} unterminated at {nul}")))
        }
        _ => {
            let off = usize::try_from(get(data, entry + 24, 8)?).ok()?;
            let n = usize::try_from(get(data, entry + 32, 8)?).ok()?;
            let mut img = data.get(off..off.checked_add(n)?)?.to_vec();
            let what = match rng.chance(50) && !no_image {
                true => mutate_elf(&mut img, rng)?,
                false => flip(&mut img, rng)?,
            };
            out[off..off + img.len()].copy_from_slice(&img);
            if img.len() != n {
                // A truncated image: the entry says so, the bytes stay.
                set(&mut out, entry + 32, 8, img.len() as u64)?;
            }
            Some((out, what))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Kind, Options};
    use crate::mutate::mutate;

    #[test]
    fn mutants_reach_images_and_string_tables() {
        let opts = Options {
            target_ids: vec!["openmp-x86_64-unknown-linux-gnu-".into()],
            ..Options::default()
        };
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..40 {
            let ob = generate(Kind::OffloadBinary, seed, &opts).unwrap().bytes;
            let bundle = generate(Kind::Binary, seed, &Options::default())
                .unwrap()
                .bytes;
            for s in 0..40u64 {
                for input in [&ob, &bundle] {
                    let m = mutate(input, 1 << 20, seed * 1000 + s);
                    assert!(m.bytes.len() <= 1 << 20);
                    for key in [
                        "image:",
                        "num strings",
                        "offset set",
                        "unterminated",
                        "e_flags",
                    ] {
                        if m.what.contains(key) {
                            seen.insert(key);
                        }
                    }
                }
            }
        }
        assert_eq!(seen.len(), 5, "{seen:?}");
    }

    #[test]
    fn images_change_in_place_or_shrink() {
        let mut rng = Rng::new(3);
        let img = crate::generate::image::for_target("amdgcn-amd-amdhsa", "gfx90a", 1).unwrap();
        for _ in 0..500 {
            let mut m = img.clone();
            if mutate_elf(&mut m, &mut rng).is_some() {
                assert!(m.len() <= img.len());
            }
        }
        assert!(mutate_elf(&mut b"not an ELF file at all, no".to_vec(), &mut rng).is_none());
    }
}
