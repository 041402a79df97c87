//! The writer of binary bundles: the header and payload layout LLVM
//! writes (BIN-11) and the bundle built from it.

use crate::error::{Error, Result};
use crate::raw::bundle::{HEADER_SIZE, MAGIC, RECORD_FIXED_SIZE};
use crate::rules;
use std::io::{self, Write};

/// The computed layout of a binary bundle to be written (BIN-11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The complete header bytes.
    pub header: Vec<u8>,
    /// Payload offsets, in entry order.
    pub offsets: Vec<u64>,
    /// Payload sizes, in entry order.
    pub sizes: Vec<u64>,
    /// Total size of the bundle.
    pub total: u64,
}

/// Compute the layout for entries `(id, payload size)` with alignment `align`.
pub fn layout(entries: &[(&[u8], u64)], align: u64) -> Result<Layout> {
    if align == 0 {
        return Err(Error::rule(
            rules::BIN_11,
            "bundle alignment must be at least 1 (LLVM 14-22 die of SIGFPE on 0)",
        ));
    }
    let overflow = || Error::rule(rules::BIN_11, "bundle layout exceeds 2^64 bytes");
    let mut header_size = HEADER_SIZE;
    for (id, _) in entries {
        header_size = header_size
            .checked_add(RECORD_FIXED_SIZE + id.len() as u64)
            .ok_or_else(overflow)?;
    }
    let mut header = Vec::with_capacity(header_size as usize);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    let mut cur = header_size;
    let mut offsets = Vec::with_capacity(entries.len());
    for (id, size) in entries {
        cur = cur.checked_next_multiple_of(align).ok_or_else(overflow)?;
        header.extend_from_slice(&cur.to_le_bytes());
        header.extend_from_slice(&size.to_le_bytes());
        header.extend_from_slice(&(id.len() as u64).to_le_bytes());
        header.extend_from_slice(id);
        offsets.push(cur);
        cur = cur.checked_add(*size).ok_or_else(overflow)?;
    }
    Ok(Layout {
        header,
        offsets,
        sizes: entries.iter().map(|e| e.1).collect(),
        total: cur,
    })
}

impl Layout {
    /// Emit the bundle: header, then for each entry zero padding and the
    /// payload written by `payload(i, w)`, which must write exactly
    /// `sizes[i]` bytes.
    pub fn write<W: Write>(
        &self,
        w: &mut W,
        mut payload: impl FnMut(usize, &mut W) -> io::Result<()>,
    ) -> io::Result<()> {
        w.write_all(&self.header)?;
        let mut pos = self.header.len() as u64;
        for (i, &off) in self.offsets.iter().enumerate() {
            write_zeros(w, off - pos)?;
            payload(i, w)?;
            pos = off + self.sizes[i];
        }
        Ok(())
    }
}

/// Build a bundle in memory from `(id, payload)` pairs.
pub fn write_to_vec(entries: &[(&[u8], &[u8])], align: u64) -> Result<Vec<u8>> {
    let sized: Vec<(&[u8], u64)> = entries.iter().map(|(i, p)| (*i, p.len() as u64)).collect();
    let l = layout(&sized, align)?;
    let mut out = Vec::with_capacity(l.total as usize);
    l.write(&mut out, |i, w| w.write_all(entries[i].1))?;
    Ok(out)
}

/// Write `n` zero bytes (padding between payloads).
pub fn write_zeros<W: Write>(w: &mut W, mut n: u64) -> io::Result<()> {
    const Z: [u8; 4096] = [0; 4096];
    while n > 0 {
        let k = n.min(Z.len() as u64) as usize;
        w.write_all(&Z[..k])?;
        n -= k as u64;
    }
    Ok(())
}
