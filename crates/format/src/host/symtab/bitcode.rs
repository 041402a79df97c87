//! The archive symbols of an LLVM bitcode member: a bounded bitstream
//! reader finds the top-level blocks, and the IR symbol table
//! (`SYMTAB_BLOCK`, laid out as `llvm/Object/IRSymtab.h` says, names in the
//! following `STRTAB_BLOCK`) lists the symbols `ModuleSymbolTable` would.

use super::{fatal, SymbolError};
use crate::error::Error;
use crate::rules;

/// A bitstream position over `data` (bit offsets).
struct Bits<'a> {
    data: &'a [u8],
    pos: u64,
    end: u64,
}

/// An abbreviation operand.
#[derive(Clone, Copy, Debug)]
enum Op {
    Lit(u64),
    Fixed(u32),
    Vbr(u32),
    Array,
    Char6,
    Blob,
}

/// A malformed stream: LLVM cannot read the file either.
struct Bad;

type B<T> = Result<T, Bad>;

/// A record read: its code, its number of operands and its blob (a byte
/// range of the stream), if any.
type Rec = (u64, u64, Option<(usize, usize)>);

impl<'a> Bits<'a> {
    fn read(&mut self, w: u32) -> B<u64> {
        if w == 0 {
            return Ok(0);
        }
        if w > 64 || self.end - self.pos < u64::from(w) {
            return Err(Bad);
        }
        let mut v = 0u64;
        let mut got = 0u32;
        while got < w {
            let byte = self.data[(self.pos >> 3) as usize];
            let off = (self.pos & 7) as u32;
            let take = (8 - off).min(w - got);
            let bits = (u64::from(byte) >> off) & ((1u64 << take) - 1);
            v |= bits << got;
            got += take;
            self.pos += u64::from(take);
        }
        Ok(v)
    }

    fn vbr(&mut self, w: u32) -> B<u64> {
        if !(2..=32).contains(&w) {
            return Err(Bad);
        }
        let hi = 1u64 << (w - 1);
        let mut v = 0u64;
        let mut shift = 0u32;
        loop {
            let c = self.read(w)?;
            if shift < 64 {
                v |= (c & (hi - 1)) << shift;
            }
            if c & hi == 0 {
                return Ok(v);
            }
            shift += w - 1;
            if shift >= 70 {
                return Err(Bad);
            }
        }
    }

    fn align32(&mut self) -> B<()> {
        let p = self.pos.next_multiple_of(32);
        if p > self.end {
            return Err(Bad);
        }
        self.pos = p;
        Ok(())
    }

    /// After ENTER_SUBBLOCK's abbrev ID: (block id, abbrev width, body
    /// start, body end) with the body inside the stream.
    fn enter(&mut self) -> B<(u64, u32, u64, u64)> {
        let id = self.vbr(8)?;
        let width = self.vbr(4)?;
        self.align32()?;
        let words = self.read(32)?;
        if width == 0 || width > 32 {
            return Err(Bad);
        }
        let start = self.pos;
        let end = words
            .checked_mul(32)
            .and_then(|n| start.checked_add(n))
            .filter(|&e| e <= self.end)
            .ok_or(Bad)?;
        Ok((id, width as u32, start, end))
    }

    fn define_abbrev(&mut self) -> B<Vec<Op>> {
        let n = self.vbr(5)?;
        // Every operand takes at least one bit.
        if n > self.end - self.pos {
            return Err(Bad);
        }
        let mut ops = Vec::with_capacity(n as usize);
        let mut i = 0;
        while i < n {
            if self.read(1)? == 1 {
                ops.push(Op::Lit(self.vbr(8)?));
            } else {
                ops.push(match self.read(3)? {
                    1 => match self.vbr(5)? {
                        0 => Op::Lit(0),
                        w @ 1..=64 => Op::Fixed(w as u32),
                        _ => return Err(Bad),
                    },
                    2 => match self.vbr(5)? {
                        0 => Op::Lit(0),
                        w @ 2..=32 => Op::Vbr(w as u32),
                        _ => return Err(Bad),
                    },
                    3 => Op::Array,
                    4 => Op::Char6,
                    5 => Op::Blob,
                    _ => return Err(Bad),
                });
            }
            i += 1;
        }
        Ok(ops)
    }

    fn scalar(&mut self, op: Op) -> B<u64> {
        match op {
            Op::Lit(v) => Ok(v),
            Op::Fixed(w) => self.read(w),
            Op::Vbr(w) => self.vbr(w),
            Op::Char6 => self.read(6),
            Op::Array | Op::Blob => Err(Bad),
        }
    }

    /// Read one record; returns (code, number of operands, blob range in
    /// bytes).
    fn record(&mut self, id: u64, abbrevs: &[Vec<Op>]) -> B<Rec> {
        if id == 3 {
            let code = self.vbr(6)?;
            let n = self.vbr(6)?;
            if n > self.end - self.pos {
                return Err(Bad);
            }
            for _ in 0..n {
                self.vbr(6)?;
            }
            return Ok((code, n, None));
        }
        let ops = abbrevs.get((id - 4) as usize).ok_or(Bad)?;
        let Some((&first, rest)) = ops.split_first() else {
            return Err(Bad);
        };
        let code = self.scalar(first)?;
        let mut n = 0u64;
        let mut blob = None;
        let mut i = 0;
        while i < rest.len() {
            match rest[i] {
                Op::Array => {
                    let elt = *rest.get(i + 1).ok_or(Bad)?;
                    if matches!(elt, Op::Lit(_) | Op::Array | Op::Blob) {
                        return Err(Bad);
                    }
                    let count = self.vbr(6)?;
                    if count > self.end - self.pos {
                        return Err(Bad);
                    }
                    for _ in 0..count {
                        self.scalar(elt)?;
                    }
                    n += count;
                    i += 2;
                    continue;
                }
                Op::Blob => {
                    let bytes = self.vbr(6)?;
                    self.align32()?;
                    let start = self.pos / 8;
                    let end = bytes
                        .checked_mul(8)
                        .and_then(|b| self.pos.checked_add(b))
                        .filter(|&e| e <= self.end)
                        .ok_or(Bad)?;
                    self.pos = end;
                    self.align32()?;
                    blob = Some((start as usize, (start + bytes) as usize));
                    n += 1;
                }
                op => {
                    self.scalar(op)?;
                    n += 1;
                }
            }
            i += 1;
        }
        Ok((code, n, blob))
    }

    /// Walk the block whose body is `[start, end)` with abbrev width
    /// `width`: every record is given to `f`; nested blocks are skipped.
    fn walk(
        &mut self,
        width: u32,
        end: u64,
        f: &mut dyn FnMut(u64, u64, Option<(usize, usize)>),
    ) -> B<()> {
        let mut abbrevs: Vec<Vec<Op>> = Vec::new();
        let saved = self.end;
        self.end = end;
        let r = (|| loop {
            let id = self.read(width)?;
            match id {
                0 => {
                    self.align32()?;
                    return Ok(());
                }
                1 => {
                    let (_, _, _, e) = self.enter()?;
                    self.pos = e;
                }
                2 => abbrevs.push(self.define_abbrev()?),
                _ => {
                    let (code, n, blob) = self.record(id, &abbrevs)?;
                    f(code, n, blob);
                }
            }
        })();
        self.end = saved;
        self.pos = end;
        r
    }
}

/// LLVM bitcode block IDs and record codes.
const MODULE_BLOCK: u64 = 8;
const STRTAB_BLOCK: u64 = 23;
const SYMTAB_BLOCK: u64 = 25;
const MODULE_CODE_ASM: u64 = 4;
const BLOB: u64 = 1;

/// What the top level of a bitcode file holds.
struct BitcodeContents {
    modules: u64,
    asm: bool,
    symtab: Option<(usize, usize)>,
    strtab: Option<(usize, usize)>,
}

/// `getBitcodeFileContents`: the top-level blocks of `bc` (after any
/// wrapper); `None` when LLVM cannot read the stream.
fn bitcode_contents(bc: &[u8]) -> B<BitcodeContents> {
    if !bc.starts_with(b"BC\xc0\xde") {
        return Err(Bad);
    }
    let mut s = Bits {
        data: bc,
        pos: 32,
        end: bc.len() as u64 * 8,
    };
    let mut c = BitcodeContents {
        modules: 0,
        asm: false,
        symtab: None,
        strtab: None,
    };
    let mut top_abbrevs: Vec<Vec<Op>> = Vec::new();
    loop {
        // A client may leave garbage at the end: LLVM stops when another
        // module cannot fit.
        if s.pos / 8 + 8 >= bc.len() as u64 {
            return Ok(c);
        }
        let id = s.read(2)?;
        match id {
            0 => return Err(Bad),
            1 => {
                let (block, width, start, end) = s.enter()?;
                s.pos = start;
                match block {
                    MODULE_BLOCK => {
                        c.modules += 1;
                        let mut asm = false;
                        s.walk(width, end, &mut |code, n, _| {
                            asm |= code == MODULE_CODE_ASM && n > 0;
                        })?;
                        c.asm |= asm;
                    }
                    STRTAB_BLOCK | SYMTAB_BLOCK => {
                        let mut blob = None;
                        s.walk(width, end, &mut |code, _, b| {
                            if code == BLOB {
                                blob = Some(b.unwrap_or((0, 0)));
                            }
                        })?;
                        let blob = blob.unwrap_or((0, 0));
                        if block == SYMTAB_BLOCK {
                            if c.symtab.is_none_or(|(a, b)| a == b) {
                                c.symtab = Some(blob);
                            }
                        } else if c.symtab.is_some_and(|(a, b)| a != b)
                            && c.strtab.is_none_or(|(a, b)| a == b)
                        {
                            c.strtab = Some(blob);
                        }
                    }
                    _ => s.pos = end,
                }
            }
            2 => top_abbrevs.push(s.define_abbrev()?),
            _ => {
                s.record(id, &top_abbrevs)?;
            }
        }
    }
}

/// The bitcode inside a wrapper (`SkipBitcodeWrapperHeader`), or `bc`.
fn unwrap_bitcode(bc: &[u8]) -> B<&[u8]> {
    if bc.len() % 4 != 0 {
        return Err(Bad);
    }
    if !bc.starts_with(&[0xde, 0xc0, 0x17, 0x0b]) {
        return Ok(bc);
    }
    let u = |at: usize| -> B<u64> {
        Ok(u64::from(u32::from_le_bytes(
            bc.get(at..at + 4).ok_or(Bad)?.try_into().map_err(|_| Bad)?,
        )))
    };
    let (off, size) = (u(8)?, u(12)?);
    if bc.len() < 20 || off + size > bc.len() as u64 {
        return Err(Bad);
    }
    Ok(&bc[off as usize..(off + size) as usize])
}

/// `storage::Symbol` flag bits (IRSymtab.h).
const FB_UNDEFINED: u32 = 3;
const FB_GLOBAL: u32 = 10;
const FB_FORMAT_SPECIFIC: u32 = 11;

/// The archive symbols of a bitcode member (raw or wrapped).
pub(super) fn bitcode_symbols(member: &[u8]) -> Result<Vec<Vec<u8>>, SymbolError> {
    let unmodelled = |msg: String| SymbolError::Unmodelled {
        error: Error::at(rules::OB_24, 0, msg),
    };
    // LLVM treats a bitcode file it cannot read as a blob: no symbols.
    let Ok(bc) = unwrap_bitcode(member) else {
        return Ok(Vec::new());
    };
    let Ok(c) = bitcode_contents(bc) else {
        return Ok(Vec::new());
    };
    if c.modules == 0 {
        return Ok(Vec::new());
    }
    if c.asm {
        return Err(fatal(
            0,
            "LLVM bitcode member with module-level inline asm: the packagers of LLVM 19 and 22 die of SIGSEGV collecting its asm symbols (no target is initialised)",
        ));
    }
    let nonempty = |r: Option<(usize, usize)>| r.filter(|(a, b)| a != b);
    let (Some((sa, sb)), Some((ta, tb))) = (nonempty(c.symtab), nonempty(c.strtab)) else {
        return Err(unmodelled(
            "LLVM bitcode member without an IR symbol table (SYMTAB_BLOCK and STRTAB_BLOCK): LLVM lists the symbols of its modules, which offload-kit does not parse".into(),
        ));
    };
    let symtab = &bc[sa..sb];
    let strtab = &bc[ta..tb];
    let w = |at: usize| -> Option<u64> {
        Some(u64::from(u32::from_le_bytes(
            symtab.get(at..at.checked_add(4)?)?.try_into().ok()?,
        )))
    };
    let bad = |what: &str| unmodelled(format!("LLVM bitcode member: its IR symbol table {what}"));
    let version = w(0).ok_or_else(|| bad("is shorter than its header"))?;
    if !(1..=4).contains(&version) {
        return Err(bad(&format!("has the unknown version {version}")));
    }
    let modules = w(16).ok_or_else(|| bad("is shorter than its header"))?;
    if modules != c.modules {
        return Err(bad(&format!(
            "covers {modules} modules, the file holds {}",
            c.modules
        )));
    }
    let (off, n) = match (w(28), w(32)) {
        (Some(o), Some(n)) => (o, n),
        _ => return Err(bad("is shorter than its header")),
    };
    if n.checked_mul(24)
        .and_then(|b| b.checked_add(off))
        .is_none_or(|e| e > symtab.len() as u64)
    {
        return Err(bad("lists symbols past its end"));
    }
    let mut out = Vec::new();
    for i in 0..n {
        let at = (off + i * 24) as usize;
        let (Some(no), Some(ns), Some(flags)) = (w(at), w(at + 4), w(at + 20)) else {
            return Err(bad("lists symbols past its end"));
        };
        let flags = flags as u32;
        let global = flags >> FB_GLOBAL & 1 == 1;
        let undefined = flags >> FB_UNDEFINED & 1 == 1;
        let fs = flags >> FB_FORMAT_SPECIFIC & 1 == 1;
        if !global || undefined || fs {
            continue;
        }
        let name = no
            .checked_add(ns)
            .filter(|&e| e <= strtab.len() as u64)
            .map(|e| &strtab[no as usize..e as usize])
            .ok_or_else(|| bad("names a symbol outside the string table"))?;
        out.push(name.to_vec());
    }
    Ok(out)
}
