//! The readers of offload binaries from LLVM 23 on (llvm#169425): every
//! entry of a version 2 binary, nested binaries; 23's with the 32-byte
//! header of its `extractHeader`, main's with the 40-byte one and the
//! checks main adds to `OffloadBinary::create` (`validateEntry`).

use super::*;

/// How a release from 23 on reads a binary's header and entries.
#[derive(Clone, Copy)]
struct V2Reader {
    /// The release, for messages and the images' names.
    release: Release,
    /// `sizeof(Header)`: 32 in 23, 40 (with the v3 inflated size) in main.
    header: u64,
    /// The shortest buffer `extractHeader` takes: 23 wants a header and an
    /// entry (72 bytes), main its 40-byte header.
    min_len: u64,
    /// The newest version read (2 in 23, 3 in main).
    newest: u32,
    /// The next binary of a section starts at the next multiple of 8
    /// (main); in 23 right after the previous one (`Offset +=
    /// Header->Size` in the pre-branch reader, and AMD's 23.0.0git build
    /// refuses the 3 bytes after a 157-byte binary: docs/llvm-23.md B3).
    aligns_next: bool,
}

impl V2Reader {
    fn of(release: Release) -> V2Reader {
        match release.quirks().main_offload_binary_reader {
            true => V2Reader {
                release,
                header: HEADER_SIZE_V3,
                min_len: HEADER_SIZE_V3,
                newest: 3,
                aligns_next: true,
            },
            false => V2Reader {
                release,
                header: HEADER_SIZE_V1,
                min_len: HEADER_SIZE_V1 + ENTRY_SIZE,
                newest: 2,
                aligns_next: false,
            },
        }
    }
}

/// `createBinary` of an offload binary in `release`: `OffloadBinary::create`
/// on the buffer. In main that reads every entry and takes the first,
/// which for a binary of none indexes an empty vector (undefined
/// behaviour, reported as OB-6).
pub(super) fn create_binary(data: &[u8], base: u64, release: Release) -> Result<(), Failure> {
    if !release.quirks().offload_binary_v2_reader {
        return create(data, base, release, true, false).map(|_| ());
    }
    let r = V2Reader::of(release);
    let (h, _) = main_header(data, base, true, r)?;
    let images = main_binary(&data[..h.size as usize], base, true, "", r)?;
    if images.is_empty() {
        return Err(Failure::Unsafe {
            error: Error::at(
                rules::OB_6,
                base + 24,
                format!("a binary of no entries: LLVM {release}'s createBinary takes the first of none (undefined behaviour)"),
            ),
        });
    }
    Ok(())
}

/// `OffloadBinary::extractHeader` of LLVM main (`llvm/lib/Object/OffloadBinary.cpp`
/// at llvm-project `02dc39ba9835`; spec/offload-binary.md, *What each release
/// does*): versions 1 to 3, at least 40 bytes (the v3 header) for every
/// version, `size` between 40 and the data, and the entry table inside
/// `size`. LLVM 23's (docs/llvm-23.md, B1/B3): versions 1 and 2, a 32-byte
/// header and at least a header and an entry. Returns the header and the
/// entry count (1 for v1).
fn main_header(
    buf: &[u8],
    base: u64,
    first: bool,
    r: V2Reader,
) -> Result<(RawHeader, u64), Failure> {
    let (len, llvm) = (buf.len() as u64, r.release);
    if len < r.min_len {
        return Err(Failure::parse(
            rules::OB_3,
            base + len,
            format!(
                "LLVM {llvm} wants {} bytes before it reads the header of any version, {len} remain",
                r.min_len
            ),
        ));
    }
    check_magic(buf, base, first)?;
    let h = RawHeader::read(&mut Cursor::new(buf))
        .map_err(|_| Failure::parse(rules::OB_3, base, "the header is incomplete"))?;
    if h.version == 0 || h.version > r.newest {
        return Err(Failure::parse(
            rules::OB_2,
            base + 4,
            format!(
                "version {} (LLVM {llvm} reads 1 to {})",
                h.version, r.newest
            ),
        ));
    }
    let size = h.size;
    // `Size < sizeof(Entry) || Size < sizeof(Header)`: 40 in both.
    let least = r.header.max(ENTRY_SIZE);
    if size > len || size < least {
        return Err(Failure::eof(
            rules::OB_4,
            base + 8,
            format!("size {size} is not between {least} and the data's {len} bytes"),
        ));
    }
    let inflated = read_u64(buf, 32).unwrap_or(0);
    if h.version >= 3 && inflated != 0 {
        return Err(Failure::Error {
            message: "offload-kit does not model how LLVM main reads a compressed version 3 binary (llvm#222774, not established to be merged)".into(),
            error: Error::at(rules::OB_19, base + 32, format!("inflated size {inflated}: compressed")),
        });
    }
    let count = if h.version == 1 {
        1
    } else {
        h.entry_size_or_count
    };
    // LLVM's arithmetic, modulo 2^64.
    let entries_size = count.wrapping_mul(ENTRY_SIZE);
    if h.entry_offset > size.wrapping_sub(entries_size) || entries_size > size - HEADER_SIZE_V1 {
        return Err(Failure::eof(
            rules::OB_6,
            base + 16,
            format!(
                "{count} entries at {} do not fit in the size {size}",
                h.entry_offset
            ),
        ));
    }
    if count.checked_mul(ENTRY_SIZE).is_none() {
        return Err(Failure::Unsafe {
            error: Error::at(
                rules::OB_6,
                base + 24,
                format!("{count} entries of {ENTRY_SIZE} bytes: the product wraps past 2^64 to {entries_size}, LLVM {llvm}'s check passes and it reads entries far past the binary"),
            ),
        });
    }
    Ok((h, count))
}

/// `OffloadBinary::create` of LLVM main and 23 on one binary (`buf` holds
/// exactly its `size` bytes; 23's `validateEntry` as main's: AMD's
/// 23.0.0git build refuses `nstr_huge` and crashes where the count wraps,
/// docs/llvm-23.md B3): every entry checked by `validateEntry` (string
/// entries counted at 24 bytes **for v1 too**, so valid v1 binaries with
/// many strings fail), then read by the constructor (v1 string entries of
/// 16 bytes and C-string values; v2 and v3 values of their stored size; a
/// repeated key keeps its first place and takes the last value). Reads
/// that LLVM makes without a bound are [`Failure::Unsafe`] when they would
/// leave the binary.
fn main_binary<'a>(
    buf: &'a [u8],
    base: u64,
    first: bool,
    identifier: &str,
    r: V2Reader,
) -> Result<Vec<LlvmImage<'a>>, Failure> {
    let (h, count) = main_header(buf, base, first, r)?;
    let llvm = r.release;
    let size = buf.len() as u64;
    let string_entry = if h.version == 1 {
        STRING_ENTRY_SIZE_V1
    } else {
        STRING_ENTRY_SIZE_V2
    };
    let mut nuls = super::super::NulIndex::new(buf);
    let mut out = Vec::new();
    for i in 0..count {
        let entry_pos = h.entry_offset + i * ENTRY_SIZE;
        let e = RawEntry::read(&mut Cursor::new(&buf[entry_pos as usize..]))
            .map_err(|_| Failure::eof(rules::OB_6, base + entry_pos, "entry cut"))?;
        let strings_end = e
            .num_strings
            .wrapping_mul(STRING_ENTRY_SIZE_V2)
            .wrapping_add(e.string_offset);
        let wraps = e
            .num_strings
            .checked_mul(STRING_ENTRY_SIZE_V2)
            .and_then(|n| n.checked_add(e.string_offset))
            .is_none();
        if e.image_offset > size {
            return Err(Failure::eof(
                rules::OB_9,
                base + entry_pos + 24,
                format!(
                    "entry {i}: image offset {} lies past the size {size}",
                    e.image_offset
                ),
            ));
        }
        if e.string_offset > size || strings_end > size {
            return Err(Failure::eof(
                rules::OB_7,
                base + entry_pos + 8,
                format!(
                    "entry {i}: {} string entries at {}, counted at 24 bytes each by LLVM {llvm} (also for version 1), run past the size {size}",
                    e.num_strings, e.string_offset
                ),
            ));
        }
        if wraps {
            return Err(Failure::Unsafe {
                error: Error::at(
                    rules::OB_7,
                    base + entry_pos + 16,
                    format!(
                        "entry {i}: {} string entries × 24 wraps past 2^64: LLVM {llvm}'s check passes and it reads string entries far past the binary",
                        e.num_strings
                    ),
                ),
            });
        }
        let mut strings: Vec<(&[u8], &[u8])> = Vec::new();
        for j in 0..e.num_strings {
            let spos = e.string_offset + j * string_entry;
            let field = |k: u64| read_u64(buf, spos + 8 * k);
            let (Some(ko), Some(vo)) = (field(0), field(1)) else {
                return Err(Failure::Unsafe {
                    error: Error::at(rules::OB_7, base + spos, "string entry past the binary"),
                });
            };
            let outside = |what: &str, at: u64, off: u64| {
                Failure::Unsafe {
                error: Error::at(
                    rules::OB_8,
                    base + at,
                    format!("entry {i}, string entry {j}: {what} at {off} lies outside the binary ({size} bytes): LLVM {llvm} reads memory it does not own"),
                ),
            }
            };
            let mut c_string = |off: u64, at: u64, what: &str| -> Result<&'a [u8], Failure> {
                if off > size {
                    return Err(outside(what, at, off));
                }
                // The binary is read from a NUL-terminated copy of its bytes.
                let end = nuls.find(off as usize).unwrap_or(buf.len());
                Ok(&buf[off as usize..end])
            };
            let key = c_string(ko, spos, "key")?;
            let value = if h.version == 1 {
                c_string(vo, spos + 8, "value")?
            } else {
                let vs = field(2).ok_or_else(|| outside("value size", spos + 16, spos + 16))?;
                match vo.checked_add(vs).filter(|&end| end <= size) {
                    Some(end) => &buf[vo as usize..end as usize],
                    None => return Err(outside("value", spos + 8, vo)),
                }
            };
            // MapVector: a repeated key keeps its place, takes the last value.
            match strings.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => strings.push((key, value)),
            }
        }
        out.push(llvm_image(
            buf, base, &e, entry_pos, strings, identifier, llvm,
        ));
    }
    Ok(out)
}

/// `extractOffloadFiles` of LLVM main: the binaries that fill `contents`,
/// each read by [`main_binary`], the next starting at the first multiple
/// of 8 at or after the end of the previous one; anything after the last
/// binary that is not one fails the whole read.
pub(super) fn main_offload_files<'a>(
    contents: &'a [u8],
    base: u64,
    identifier: &str,
    release: Release,
) -> Result<Vec<LlvmImage<'a>>, Failure> {
    let r = V2Reader::of(release);
    let mut out = Vec::new();
    let len = contents.len() as u64;
    let mut off = 0u64;
    while off < len {
        let rest = &contents[off as usize..];
        let (h, _) = main_header(rest, base + off, off == 0, r)?;
        out.extend(main_binary(
            &rest[..h.size as usize],
            base + off,
            off == 0,
            identifier,
            r,
        )?);
        off = match r.aligns_next {
            true => (off + h.size).div_ceil(8) * 8,
            false => off + h.size,
        };
    }
    Ok(out)
}

/// A file of offload binaries as LLVM main reads it with the proposed
/// llvm#222774 (`OffloadBinary.h` at `05ed393bf1e3`): each version 3
/// binary whose `inflated size` is not 0 inflated (its stream zstd when it
/// starts with the zstd magic, else zlib) into the uncompressed binary it
/// stands for (`size` the inflated size, `inflated size` 0), everything
/// else kept as it is; borrowed when nothing is compressed. An entries
/// offset other than 40, past the size, or an inflated size below it is
/// main's "invalid data". Offsets after an inflated binary are offsets in
/// this view, not in the file.
pub fn main_inflated(
    contents: &[u8],
    budget: crate::budget::Budget,
) -> Result<std::borrow::Cow<'_, [u8]>, Failure> {
    let len = contents.len() as u64;
    let mut out: Option<Vec<u8>> = None;
    let mut off = 0u64;
    while off < len {
        let rest = &contents[off as usize..];
        let field = |at: u64| read_u64(rest, at);
        let (Some(size), Some(eo), Some(inflated)) = (field(8), field(16), field(32)) else {
            break;
        };
        let version = u32::from_le_bytes(rest[4..8].try_into().expect("4 bytes"));
        if !rest.starts_with(&MAGIC) || size == 0 || size > len - off {
            break;
        }
        let next = (off + size).div_ceil(8).saturating_mul(8).min(len);
        if version == 3 && inflated != 0 {
            if eo != HEADER_SIZE_V3 || eo > size || inflated < eo {
                return Err(Failure::parse(
                    rules::OB_19,
                    off + 16,
                    format!(
                        "compressed: entries offset {eo}, size {size}, inflated size {inflated}"
                    ),
                ));
            }
            // Every inflated binary is held at once: the whole view within the budget.
            let held = out.as_ref().map_or(off, |o| o.len() as u64);
            if budget.exceeded(held.saturating_add(inflated)) {
                return Err(Failure::Unsafe {
                    error: Error::at(
                        rules::CLI_6,
                        off + 32,
                        format!(
                            "the inflated binaries take more than the memory budget of {} bytes",
                            budget.bytes()
                        ),
                    ),
                });
            }
            let body = super::super::compressed::inflate(
                &rest[eo as usize..size as usize],
                inflated - eo,
                budget,
            )
            .map_err(|e| Failure::Error {
                message: PARSE_FAILED.into(),
                error: e.rebase(off + eo),
            })?;
            let o = out.get_or_insert_with(|| contents[..off as usize].to_vec());
            let at = o.len();
            o.extend_from_slice(&rest[..eo as usize]);
            o[at + 8..at + 16].copy_from_slice(&inflated.to_le_bytes());
            o[at + 32..at + 40].copy_from_slice(&0u64.to_le_bytes());
            o.extend_from_slice(&body);
            o.resize(o.len().div_ceil(8) * 8, 0);
        } else if let Some(o) = &mut out {
            o.extend_from_slice(&contents[off as usize..next as usize]);
        }
        off = next;
    }
    Ok(match out {
        Some(mut o) => {
            o.extend_from_slice(&contents[off as usize..]);
            std::borrow::Cow::Owned(o)
        }
        None => std::borrow::Cow::Borrowed(contents),
    })
}
