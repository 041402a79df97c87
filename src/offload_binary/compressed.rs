//! Compressed version 3 binaries (OB-19): the strict reader inflates the
//! body after the header ([`inflate`]) and checks the restored binary as
//! an uncompressed one.

use super::read::{check_body, Ctx};
use super::{align8, Binary, Entry, ReadOptions, StringPair};
use crate::error::Error;
use crate::format::offload_binary::{RawHeader, HEADER_SIZE_V3};
use crate::rules;
use std::borrow::Cow;
use std::io::{self, Cursor, Read};

/// Read and check a compressed v3 binary (OB-19).
#[allow(clippy::too_many_arguments)]
pub(super) fn parse_compressed<'a>(
    data: &'a [u8],
    base: u64,
    h: RawHeader,
    size: u64,
    inflated: u64,
    opts: ReadOptions,
    errs: &mut Vec<Error>,
    stop_after: bool,
) -> Option<Binary<'a>> {
    let len = data.len() as u64;
    let mut cx = Ctx { base, errs };
    let eoff = h.entry_offset;
    if eoff != HEADER_SIZE_V3 || eoff > size || inflated < eoff {
        cx.err(
            rules::OB_19,
            16,
            format!(
                "compressed binary: entries offset {eoff} must be {HEADER_SIZE_V3}, inside the size ({size}) and below the inflated size ({inflated})"
            ),
        );
        return None;
    }
    // The binary occupies its size rounded up to 8, the padding zero.
    let extent = if stop_after {
        len
    } else {
        match align8(size) {
            Some(e) if e <= len => {
                if let Some(p) = data[size as usize..e as usize].iter().position(|&b| b != 0) {
                    cx.err(
                        rules::OB_16,
                        size + p as u64,
                        "non-zero byte in the padding after a compressed binary",
                    );
                }
                e
            }
            _ => {
                cx.err(
                    rules::OB_19,
                    8,
                    format!(
                        "compressed binary of size {size} lacks its zero padding to a multiple of 8 ({len} bytes remain)"
                    ),
                );
                len
            }
        }
    };
    let stream = &data[eoff as usize..size as usize];
    let body_len = inflated - eoff;
    let body = match inflate(stream, body_len) {
        Ok(b) => b,
        Err(e) => {
            let rule = e
                .rule_id()
                .and_then(rules::by_id)
                .copied()
                .unwrap_or(rules::OB_19);
            cx.err(rule, eoff, e.message().to_string());
            return Some(Binary {
                offset: base,
                version: h.version,
                size: h.size,
                inflated_size: inflated,
                extent,
                entries: Vec::new(),
            });
        }
    };
    // Restore the header as LLVM does: size = inflated, inflated = 0.
    let mut full = Vec::with_capacity(HEADER_SIZE_V3 as usize + body.len());
    full.extend_from_slice(&data[..HEADER_SIZE_V3 as usize]);
    full[8..16].copy_from_slice(&inflated.to_le_bytes());
    full[32..40].copy_from_slice(&0u64.to_le_bytes());
    full.extend_from_slice(&body);
    let mut inner_errs = Vec::new();
    let mut hh = h;
    hh.size = inflated;
    let entries = check_body(&full, 0, hh, HEADER_SIZE_V3, opts, &mut inner_errs);
    for e in inner_errs {
        let rule = e
            .rule_id()
            .and_then(rules::by_id)
            .copied()
            .unwrap_or(rules::OB_19);
        cx.err(
            rule,
            eoff,
            format!(
                "{} (at 0x{:x} of the inflated binary)",
                e.message(),
                e.offset().unwrap_or(0)
            ),
        );
    }
    let entries = entries.map(|es| {
        es.into_iter()
            .map(|e| Entry {
                image_kind: e.image_kind,
                offload_kind: e.offload_kind,
                flags: e.flags,
                strings: e
                    .strings
                    .into_iter()
                    .map(|p| StringPair {
                        key: Cow::Owned(p.key.into_owned()),
                        value: Cow::Owned(p.value.into_owned()),
                    })
                    .collect(),
                image: Cow::Owned(e.image.into_owned()),
                image_offset: base,
                entry_offset: base,
            })
            .collect()
    });
    Some(Binary {
        offset: base,
        version: h.version,
        size: h.size,
        inflated_size: inflated,
        extent,
        entries: entries.unwrap_or_default(),
    })
}

/// Inflate `stream` (zstd if it starts with the zstd magic, else zlib, as
/// LLVM decides) into exactly `want` bytes. Output grows with what the
/// stream yields, never from `want`, and stops one byte past it, or one
/// byte past the memory budget (CLI-6). Errors are OB-19 or CLI-6 at
/// offset 0 of the stream.
pub fn inflate(stream: &[u8], want: u64) -> crate::error::Result<Vec<u8>> {
    inflate_text(stream, want).map_err(|(rule, msg)| Error::at(rule, 0, msg))
}

fn inflate_text(stream: &[u8], want: u64) -> std::result::Result<Vec<u8>, (rules::Rule, String)> {
    // What may be held: the budget, less the decoder's window for zstd.
    let is_zstd_stream = stream.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
    let budget = if is_zstd_stream {
        crate::budget::get()
            .saturating_sub(crate::budget::ZSTD_WINDOW)
            .max(1 << 20)
    } else {
        crate::budget::get()
    };
    let limit = want.min(budget).saturating_add(1);
    let mut out = Vec::new();
    let is_zstd = stream.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
    let mut cur = Cursor::new(stream);
    let n = if is_zstd {
        let dec = zstd::stream::read::Decoder::with_buffer(&mut cur).map_err(|e| {
            (
                rules::OB_19,
                format!("the zstd stream does not decode: {e}"),
            )
        })?;
        let mut dec = dec.single_frame();
        io::copy(&mut (&mut dec).take(limit), &mut out).map_err(|e| {
            (
                rules::OB_19,
                format!("the zstd stream does not decode: {e}"),
            )
        })?
    } else {
        let mut dec = flate2::bufread::ZlibDecoder::new(&mut cur);
        io::copy(&mut (&mut dec).take(limit), &mut out).map_err(|e| {
            (
                rules::OB_19,
                format!("the zlib stream does not decode: {e}"),
            )
        })?
    };
    if n > budget && want > budget {
        return Err((
            rules::CLI_6,
            format!(
                "the compressed body inflates past the memory budget of {budget} bytes (the header promises {want}; raise it with --max-memory)"
            ),
        ));
    }
    if n != want {
        return Err((
            rules::OB_19,
            format!(
                "the compressed body inflates to {}{n} bytes, the header promises {want}",
                if n > want { "more than " } else { "" }
            ),
        ));
    }
    let used = cur.position();
    if is_zstd && used != stream.len() as u64 {
        return Err((
            rules::OB_19,
            format!(
                "{} bytes follow the end of the compressed stream",
                stream.len() as u64 - used
            ),
        ));
    }
    Ok(out)
}
