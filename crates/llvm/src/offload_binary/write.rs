//! The writer: a binary is laid out first ([`layout_v1`], [`layout_multi`]
//! give a [`Layout`]: header, entries, strings and padding, with the image
//! offsets) and emitted after, byte-identical to what each release writes
//! (OB-17); [`write_multi`] may compress a version 3 body (OB-19).

use super::{align8, show, Compression, ImageSpec, OwnedImage};
use crate::error::{Error, Result};
use crate::format::offload_binary::{
    header_size, ENTRY_SIZE, HEADER_SIZE_V1, HEADER_SIZE_V3, MAGIC, STRING_ENTRY_SIZE_V1,
    STRING_ENTRY_SIZE_V2,
};
use crate::host::strtab::StrTab;
use crate::rules;
use std::io::{self, Write};

/// The computed layout of one binary (OB-17): everything before the first
/// image, then the images at their offsets, then zero padding to `size`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Header, entries, string entries, string table and the padding up to
    /// the first image.
    pub prefix: Vec<u8>,
    /// Offset of each image, in entry order.
    pub image_offsets: Vec<u64>,
    /// Size of each image.
    pub image_sizes: Vec<u64>,
    /// Total size (a multiple of 8).
    pub size: u64,
}

fn overflow() -> Error {
    Error::rule(rules::OB_17, "offload binary layout exceeds 2^64 bytes")
}

/// `start + count * each`: where `count` records of `each` bytes from
/// `start` end, or the overflow error.
fn after(start: u64, count: u64, each: u64) -> Result<u64> {
    count
        .checked_mul(each)
        .and_then(|x| x.checked_add(start))
        .ok_or_else(overflow)
}

/// `start + len` padded to a multiple of 8, or the overflow error.
fn end8(start: u64, len: u64) -> Result<u64> {
    start.checked_add(len).and_then(align8).ok_or_else(overflow)
}

fn check_strings(strings: &[(&[u8], &[u8])], version: u32) -> Result<()> {
    for (k, v) in strings {
        if k.contains(&0) {
            return Err(Error::rule(
                rules::OB_8,
                format!(
                    "key '{}' contains a NUL byte; keys are NUL-terminated",
                    show(k)
                ),
            ));
        }
        if version == 1 && v.contains(&0) {
            return Err(Error::rule(
                rules::OB_8,
                format!(
                    "the value of key '{}' contains a NUL byte; version 1 values are NUL-terminated",
                    show(k)
                ),
            ));
        }
    }
    Ok(())
}

/// Lay out a version 1 binary holding `spec`, as `OffloadBinary::write` of
/// LLVM 16, 19 and 22 does.
pub fn layout_v1(spec: &ImageSpec<'_>) -> Result<Layout> {
    check_strings(&spec.strings, 1)?;
    let tab = StrTab::build(spec.strings.iter().flat_map(|(k, v)| [*k, *v]));
    let n = spec.strings.len() as u64;
    let str_off = HEADER_SIZE_V1 + ENTRY_SIZE;
    let tab_off = after(str_off, n, STRING_ENTRY_SIZE_V1)?;
    let image_offset = end8(tab_off, tab.len())?;
    let size = end8(image_offset, spec.image_size)?;
    let mut p = Vec::with_capacity(image_offset as usize);
    p.extend_from_slice(&MAGIC);
    p.extend_from_slice(&1u32.to_le_bytes());
    for v in [size, HEADER_SIZE_V1, ENTRY_SIZE] {
        p.extend_from_slice(&v.to_le_bytes());
    }
    p.extend_from_slice(&spec.image_kind.to_le_bytes());
    p.extend_from_slice(&spec.offload_kind.to_le_bytes());
    p.extend_from_slice(&spec.flags.to_le_bytes());
    for v in [str_off, n, image_offset, spec.image_size] {
        p.extend_from_slice(&v.to_le_bytes());
    }
    for (k, v) in &spec.strings {
        let ko = tab_off + tab.offset(k).unwrap_or(0);
        let vo = tab_off + tab.offset(v).unwrap_or(0);
        p.extend_from_slice(&ko.to_le_bytes());
        p.extend_from_slice(&vo.to_le_bytes());
    }
    p.extend_from_slice(&tab.bytes);
    p.resize(image_offset as usize, 0);
    Ok(Layout {
        prefix: p,
        image_offsets: vec![image_offset],
        image_sizes: vec![spec.image_size],
        size,
    })
}

/// Lay out a version 2 or 3 binary holding several entries, as post-22
/// `main` does: all entries, then all string entries, one shared string
/// table, padding to 8, the images back to back, padding to 8.
pub fn layout_multi(specs: &[ImageSpec<'_>], version: u32) -> Result<Layout> {
    if !matches!(version, 2 | 3) {
        return Err(Error::rule(
            rules::OB_17,
            format!("layout_multi writes version 2 or 3, not {version}"),
        ));
    }
    if specs.is_empty() {
        return Err(Error::rule(
            rules::OB_6,
            "a binary needs at least one entry",
        ));
    }
    for s in specs {
        check_strings(&s.strings, version)?;
    }
    let hsize = header_size(version).unwrap_or(HEADER_SIZE_V3);
    let count = specs.len() as u64;
    let total_strings: u64 = specs.iter().map(|s| s.strings.len() as u64).sum();
    let tab = StrTab::build(
        specs
            .iter()
            .flat_map(|s| s.strings.iter().flat_map(|(k, v)| [*k, *v])),
    );
    let strings_off = after(hsize, count, ENTRY_SIZE)?;
    let tab_off = after(strings_off, total_strings, STRING_ENTRY_SIZE_V2)?;
    let data_size = end8(tab_off, tab.len())?;
    let mut total_images = 0u64;
    for s in specs {
        total_images = total_images
            .checked_add(s.image_size)
            .ok_or_else(overflow)?;
    }
    let size = end8(data_size, total_images)?;
    let mut p = Vec::with_capacity(data_size as usize);
    p.extend_from_slice(&MAGIC);
    p.extend_from_slice(&version.to_le_bytes());
    for v in [size, hsize, count] {
        p.extend_from_slice(&v.to_le_bytes());
    }
    if version == 3 {
        p.extend_from_slice(&0u64.to_le_bytes());
    }
    let mut so = strings_off;
    let mut io_ = data_size;
    let mut image_offsets = Vec::with_capacity(specs.len());
    for s in specs {
        p.extend_from_slice(&s.image_kind.to_le_bytes());
        p.extend_from_slice(&s.offload_kind.to_le_bytes());
        p.extend_from_slice(&s.flags.to_le_bytes());
        let n = s.strings.len() as u64;
        for v in [so, n, io_, s.image_size] {
            p.extend_from_slice(&v.to_le_bytes());
        }
        image_offsets.push(io_);
        so += n * STRING_ENTRY_SIZE_V2;
        io_ += s.image_size;
    }
    for s in specs {
        for (k, v) in &s.strings {
            let ko = tab_off + tab.offset(k).unwrap_or(0);
            let vo = tab_off + tab.offset(v).unwrap_or(0);
            for x in [ko, vo, v.len() as u64] {
                p.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    p.extend_from_slice(&tab.bytes);
    p.resize(data_size as usize, 0);
    Ok(Layout {
        prefix: p,
        image_offsets,
        image_sizes: specs.iter().map(|s| s.image_size).collect(),
        size,
    })
}

impl Layout {
    /// Emit the binary: the prefix, each image written by `image(i, w)`
    /// (which must write exactly `image_sizes[i]` bytes) at its offset, and
    /// the final zero padding.
    pub fn write<W: Write>(
        &self,
        w: &mut W,
        mut image: impl FnMut(usize, &mut W) -> io::Result<()>,
    ) -> io::Result<()> {
        w.write_all(&self.prefix)?;
        let mut pos = self.prefix.len() as u64;
        for (i, &off) in self.image_offsets.iter().enumerate() {
            offload_kit_format::binary::write_zeros(w, off.saturating_sub(pos))?;
            image(i, w)?;
            pos = off + self.image_sizes[i];
        }
        offload_kit_format::binary::write_zeros(w, self.size.saturating_sub(pos))
    }

    /// Emit into memory with the images given as slices.
    pub fn to_vec(&self, images: &[&[u8]]) -> Result<Vec<u8>> {
        if images.len() != self.image_sizes.len()
            || images
                .iter()
                .zip(&self.image_sizes)
                .any(|(i, &s)| i.len() as u64 != s)
        {
            return Err(Error::other("image sizes differ from the layout"));
        }
        let mut out = Vec::with_capacity(usize::try_from(self.size).unwrap_or(0));
        self.write(&mut out, |i, w| w.write_all(images[i]))?;
        Ok(out)
    }
}

/// Write one version 1 binary.
pub fn write_v1(img: &OwnedImage) -> Result<Vec<u8>> {
    layout_v1(&img.spec())?.to_vec(&[&img.image])
}

/// Write version 1 binaries, one per image, concatenated (what every
/// release's packager writes for several `--image`).
pub fn write_v1_all(images: &[OwnedImage]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for i in images {
        out.extend_from_slice(&write_v1(i)?);
    }
    Ok(out)
}

/// Write one binary of version 2 or 3 holding every image; version 3 may
/// compress the body after the header (OB-19).
pub fn write_multi(
    images: &[OwnedImage],
    version: u32,
    compression: Option<Compression>,
) -> Result<Vec<u8>> {
    let specs: Vec<ImageSpec<'_>> = images.iter().map(OwnedImage::spec).collect();
    let l = layout_multi(&specs, version)?;
    let imgs: Vec<&[u8]> = images.iter().map(|i| i.image.as_slice()).collect();
    let plain = l.to_vec(&imgs)?;
    let Some(c) = compression else {
        return Ok(plain);
    };
    if version != 3 {
        return Err(Error::rule(
            rules::OB_19,
            "only version 3 binaries can be compressed",
        ));
    }
    let body = &plain[HEADER_SIZE_V3 as usize..];
    let stream = match c {
        Compression::Zstd(level) => zstd::bulk::compress(body, level)?,
        Compression::Zlib(level) => {
            let mut e =
                flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level.min(9)));
            e.write_all(body)?;
            e.finish()?
        }
    };
    let size = HEADER_SIZE_V3 + stream.len() as u64;
    let mut out = Vec::with_capacity(size as usize + 8);
    out.extend_from_slice(&plain[..HEADER_SIZE_V3 as usize]);
    out[8..16].copy_from_slice(&size.to_le_bytes());
    out[32..40].copy_from_slice(&(plain.len() as u64).to_le_bytes());
    out.extend_from_slice(&stream);
    out.resize(align8(size).ok_or_else(overflow)? as usize, 0);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offload_binary::{parse_strict, ReadOptions};

    /// The first binary `llvm-offload-binary` 22 writes for an sm_70 image (`pk.22`).
    const PK22_FIRST: &str = "10ff10ad01000000a0000000000000002000000000000000280000000000000000000100000000004800000000000000020000000000000090000000000000001000000000000000690000000000000089000000000000006e000000000000007500000000000000006172636800747269706c65006e7670747836342d6e76696469612d6375646100736d5f373000004e565054582d494d4147452d534d3730";

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn writes_pk22() {
        let img = OwnedImage {
            image_kind: 0,
            offload_kind: 1,
            flags: 0,
            strings: vec![
                (b"arch".to_vec(), b"sm_70".to_vec()),
                (b"triple".to_vec(), b"nvptx64-nvidia-cuda".to_vec()),
            ],
            image: b"NVPTX-IMAGE-SM70".to_vec(),
        };
        assert_eq!(write_v1(&img).unwrap(), unhex(PK22_FIRST));
        let bytes = unhex(PK22_FIRST);
        let bins = parse_strict(&bytes, 0, ReadOptions::default()).unwrap();
        assert_eq!(bins.len(), 1);
        assert_eq!(OwnedImage::from_entry(&bins[0].entries[0]), img);
    }

    #[test]
    fn multi_round_trip() {
        let imgs = vec![
            OwnedImage {
                image_kind: 2,
                offload_kind: 4,
                flags: 0,
                strings: vec![(b"triple".to_vec(), b"amdgcn-amd-amdhsa".to_vec())],
                image: b"abc".to_vec(),
            },
            OwnedImage {
                image_kind: 1,
                offload_kind: 1,
                flags: 0,
                strings: vec![(b"arch".to_vec(), b"with\0nul".to_vec())],
                image: vec![7; 100],
            },
        ];
        for (v, c) in [
            (2, None),
            (3, None),
            (3, Some(Compression::Zstd(5))),
            (3, Some(Compression::Zlib(6))),
        ] {
            let bytes = write_multi(&imgs, v, c).unwrap();
            let bins = parse_strict(&bytes, 0, ReadOptions::default())
                .unwrap_or_else(|e| panic!("v{v} {c:?}: {e:?}"));
            let back: Vec<OwnedImage> =
                bins[0].entries.iter().map(OwnedImage::from_entry).collect();
            assert_eq!(back, imgs, "v{v} {c:?}");
        }
    }
}
