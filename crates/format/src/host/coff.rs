//! COFF objects and PE images (Windows DLLs and executables): just enough
//! to find a section's bytes. The HIP toolchain for Windows puts the fat
//! binary in `.hip_fatbin` of a COFF object, and the linker truncates the
//! name to `.hip_fat` in a PE image (section names there have 8 bytes and
//! no string table). Layouts from the PE/COFF specification ("Section
//! Table", "COFF File Header"); LLVM reads them in
//! `llvm/lib/Object/COFFObjectFile.cpp`.
//!
//! # Example
//!
//! ```
//! use offload_kit_format::host::coff;
//!
//! // A COFF object (x86-64) with one section `.hip_fat` of 4 bytes at 60.
//! let mut obj = vec![0u8; 64];
//! obj[0..2].copy_from_slice(&0x8664u16.to_le_bytes()); // machine
//! obj[2..4].copy_from_slice(&1u16.to_le_bytes()); // one section
//! obj[20..28].copy_from_slice(b".hip_fat");
//! obj[36..40].copy_from_slice(&4u32.to_le_bytes()); // SizeOfRawData
//! obj[40..44].copy_from_slice(&60u32.to_le_bytes()); // PointerToRawData
//! obj[60..64].copy_from_slice(b"DATA");
//! let c = coff::parse(&obj).unwrap();
//! assert!(!c.image);
//! assert_eq!((c.sections[0].name, c.sections[0].offset, c.sections[0].size), (&b".hip_fat"[..], 60, 4));
//! ```

use crate::error::{Error, Result};
use crate::rules;

/// One section of the section table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoffSection<'a> {
    /// 1-based index, as tools number them.
    pub index: usize,
    /// The name: the 8-byte field without its NULs, or the string-table
    /// name it points to (`/N`, objects only), borrowed from the input:
    /// however many headers point at one long name, it is not copied.
    pub name: &'a [u8],
    /// Absolute offset of the contents in the file (`PointerToRawData`).
    pub offset: u64,
    /// Bytes of contents in the file: `SizeOfRawData`, in an image at most
    /// `VirtualSize` (the raw size is rounded up to the file alignment).
    pub size: u64,
    /// Absolute offset of the section's header (errors point at it).
    pub header_pos: u64,
}

/// A COFF object or PE image: whether it is an image and its sections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coff<'a> {
    /// A PE image (`MZ` … `PE\0\0`), else a COFF object.
    pub image: bool,
    /// The section table, in order.
    pub sections: Vec<CoffSection<'a>>,
}

fn u16_at(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

/// The ends of the C strings found so far: each key starts a run of
/// scanned bytes without a NUL, its value the NUL (or the end of input)
/// that ends the run.
#[derive(Default)]
struct NameEnds(std::collections::BTreeMap<usize, usize>);

impl NameEnds {
    /// The first NUL at or after `from` (else `data.len()`), scanning only
    /// bytes no earlier call scanned.
    fn end_of(&mut self, data: &[u8], from: usize) -> usize {
        if let Some((_, &end)) = self.0.range(..=from).next_back() {
            if end >= from {
                return end;
            }
        }
        let next = self.0.range(from..).next().map(|(&s, &e)| (s, e));
        let stop = next.map_or(data.len(), |(s, _)| s);
        let end = match data[from..stop].iter().position(|&b| b == 0) {
            Some(n) => from + n,
            // The scan ran into a run scanned before: its end is ours.
            None => next.map_or(data.len(), |(_, e)| e),
        };
        self.0.insert(from, end);
        end
    }
}

/// Parse the headers and section table of a COFF object or PE image. A
/// table or section outside the file is an OBJ-2 error at the field that
/// points there.
pub fn parse(data: &[u8]) -> Result<Coff<'_>> {
    // A field cut off by the end of the input is reported at that end.
    let bad = |at: usize, what: String| Error::at(rules::OBJ_2, at.min(data.len()) as u64, what);
    // The COFF file header: at 0 in an object, after `PE\0\0` in an image.
    let (image, hdr) = if data.starts_with(b"MZ") {
        let pe = u32_at(data, 0x3c)
            .ok_or_else(|| bad(0x3c, "the DOS header is cut short".into()))?
            as usize;
        if data.get(pe..pe.saturating_add(4)) != Some(&b"PE\0\0"[..]) {
            return Err(bad(0x3c, format!("no PE signature at 0x{pe:x}")));
        }
        (true, pe + 4)
    } else {
        (false, 0)
    };
    let nsections =
        u16_at(data, hdr + 2).ok_or_else(|| bad(hdr, "the COFF header is cut short".into()))?;
    let symtab = u32_at(data, hdr + 8).unwrap_or(0) as usize;
    let nsymbols = u32_at(data, hdr + 12).unwrap_or(0) as usize;
    let opt_size = u16_at(data, hdr + 16).unwrap_or(0) as usize;
    let table = hdr + 20 + opt_size;
    // The string table follows the symbol table (18 bytes per symbol).
    let strings = (!image && symtab != 0)
        .then(|| nsymbols.checked_mul(18).and_then(|n| n.checked_add(symtab)))
        .flatten();
    // Where each long name ends, remembered per run of bytes already
    // scanned, so that however many headers name long names, the string
    // table is scanned once.
    let mut name_ends = NameEnds::default();
    let mut sections = Vec::with_capacity(usize::from(nsections).min(data.len() / 40));
    for i in 0..usize::from(nsections) {
        let at = table + 40 * i;
        let h = data.get(at..at + 40).ok_or_else(|| {
            bad(
                hdr + 2,
                format!("section header {} lies outside the file", i + 1),
            )
        })?;
        let raw_name = &h[..8];
        let short = &raw_name[..raw_name.iter().position(|&b| b == 0).unwrap_or(8)];
        let name = match (short.strip_prefix(b"/"), strings) {
            (Some(digits), Some(st))
                if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) =>
            {
                let off: usize = std::str::from_utf8(digits)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| bad(at, format!("section {}: bad long-name offset", i + 1)))?;
                let from = st
                    .checked_add(off)
                    .filter(|&f| f < data.len())
                    .ok_or_else(|| {
                        bad(
                            at,
                            format!("section {}: its name lies outside the file", i + 1),
                        )
                    })?;
                &data[from..name_ends.end_of(data, from)]
            }
            _ => short,
        };
        let vsize = u64::from(u32_at(h, 8).unwrap_or(0));
        let raw_size = u64::from(u32_at(h, 16).unwrap_or(0));
        let offset = u64::from(u32_at(h, 20).unwrap_or(0));
        // PointerToRawData 0: no contents in the file (uninitialised data,
        // `.bss`), whatever SizeOfRawData says, as LLVM's COFFObjectFile reads it.
        let size = if offset == 0 {
            0
        } else if image && vsize != 0 {
            raw_size.min(vsize)
        } else {
            raw_size
        };
        if size > 0
            && offset
                .checked_add(size)
                .is_none_or(|end| end > data.len() as u64)
        {
            return Err(bad(
                at + 16,
                format!(
                    "section {} '{}': contents [0x{offset:x}, +0x{size:x}) lie outside the file of {} bytes",
                    i + 1,
                    String::from_utf8_lossy(name),
                    data.len()
                ),
            ));
        }
        sections.push(CoffSection {
            index: i + 1,
            name,
            offset,
            size,
            header_pos: at as u64,
        });
    }
    Ok(Coff { image, sections })
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn cut_and_out_of_range_tables_are_errors_not_panics() {
        for n in 0..80 {
            let mut obj = vec![0u8; n];
            if n >= 4 {
                obj[0..2].copy_from_slice(&0x8664u16.to_le_bytes());
                obj[2..4].copy_from_slice(&3u16.to_le_bytes());
            }
            let _ = parse(&obj);
        }
        // Offsets stay within the input (the C ABI harness's finding).
        for cut in [&b"MZ"[..], b"MZ\0\0", &[0x64, 0x86, 1, 0]] {
            let e = parse(cut).unwrap_err();
            assert!(e.offset().is_some_and(|o| o <= cut.len() as u64), "{e}");
        }
        let mut img = b"MZ".to_vec();
        img.resize(0x40, 0);
        img[0x3c..0x40].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
        assert!(parse(&img).is_err());
    }
}
