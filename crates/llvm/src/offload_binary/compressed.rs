//! Compressed version 3 binaries (OB-19): [`inflate`] restores the body
//! after the header, bounded by the claim and the memory budget (CLI-6);
//! the strict reader then checks the restored binary as an uncompressed one.

use crate::budget::Budget;
use crate::error::Error;
use crate::rules;
use std::io::{self, Cursor, Read};

/// Inflate `stream` (zstd if it starts with the zstd magic, else zlib, as
/// LLVM decides) into exactly `want` bytes. Output grows with what the
/// stream yields, never from `want`, and stops one byte past it, or one
/// byte past the memory budget `budget` (CLI-6). Errors are OB-19 or
/// CLI-6 at offset 0 of the stream.
pub fn inflate(stream: &[u8], want: u64, budget: Budget) -> crate::error::Result<Vec<u8>> {
    inflate_text(stream, want, budget).map_err(|(rule, msg)| Error::at(rule, 0, msg))
}

fn inflate_text(
    stream: &[u8],
    want: u64,
    budget: Budget,
) -> std::result::Result<Vec<u8>, (rules::Rule, String)> {
    // What may be held: the budget, less the decoder's window for zstd.
    let is_zstd = stream.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
    let budget = if is_zstd {
        budget.zstd_room().max(1 << 20)
    } else {
        budget.bytes()
    };
    let limit = want.min(budget).saturating_add(1);
    let mut out = Vec::new();
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
