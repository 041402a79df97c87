//! Heterogeneous device archives (spec/archive.md): what
//! `clang-offload-bundler -unbundle -type=a` reads and writes, apart from
//! the walk itself (`bundler::Job::plan_archive`).
//!
//! * the release's archive compatibility rule ([`compatible`], AR-3);
//! * output member names ([`member_name`], AR-4), with LLVM's
//!   `sys::path` semantics on untrusted names ([`filename`], [`stem`],
//!   [`extension`]): the result is only ever a name inside the output
//!   archive, never a path;
//! * `getConflictTargetIDCombination` over the IDs of one member
//!   ([`conflict`], AR-7);
//! * the output archive ([`write`](fn@write), AR-5): the GNU writer of
//!   `host::ar` with each member's symbols.
//!
//! # Example
//!
//! Name, match and write the output member of one archive entry.
//!
//! ```
//! use offload_kit_llvm::bundle::archive::{self, OutMember};
//! use offload_kit_format::host::ar;
//! use offload_kit_llvm::Release;
//!
//! let id = "hip-amdgcn-amd-amdhsa--gfx90a:xnack+";
//! let name = archive::member_name(b"lib/foo.o", id.as_bytes(), "gfx90a:xnack+"); // AR-4
//! assert_eq!(name, b"foo-hip-amdgcn-amd-amdhsa--gfx90a_xnack+foo.bc");
//! // AR-3: the entry goes to a request with xnack on, not to one with xnack off.
//! assert!(archive::compatible(Release::L22, id, "hip-amdgcn-amd-amdhsa--gfx90a:xnack+", false));
//! assert!(!archive::compatible(Release::L22, id, "hip-amdgcn-amd-amdhsa--gfx90a:xnack-", false));
//!
//! // AR-5: the output archive, with the symbols of its members (none here).
//! let members = [OutMember { name: &name, data: b"device code" }];
//! let symbols = archive::symbols(&members).unwrap();
//! let mut out = Vec::new();
//! archive::write(&mut out, &members, &symbols, 1 << 32).unwrap();
//! assert_eq!(ar::members(&out, 0).unwrap()[0].name, "foo-hip-amdgcn-amd-amdhsa--gfx90a_xnack+foo.bc");
//! ```

use crate::error::{Error, Result};
use crate::host::ar::{self as ar, NewMember, WriteOptions};
use crate::host::symtab::{self, Symbolic};
use crate::profile::Release;
use crate::rules;
use std::collections::BTreeSet;
use std::io::Write;

/// `sys::path::filename` (POSIX style): the last component; "." for a path
/// ending in '/', "/" for a path of slashes only.
pub fn filename(path: &[u8]) -> &[u8] {
    if path.is_empty() {
        return path;
    }
    if path.iter().all(|&b| b == b'/') {
        return &path[..1];
    }
    if path.len() > 1 && path.ends_with(b"/") {
        return b".";
    }
    match path.iter().rposition(|&b| b == b'/') {
        Some(p) => &path[p + 1..],
        None => path,
    }
}

/// `sys::path::stem`: the file name without its last extension ("." and
/// ".." are kept whole; ".bashrc" has the empty stem).
pub fn stem(path: &[u8]) -> &[u8] {
    let f = filename(path);
    if f == b"." || f == b".." {
        return f;
    }
    match f.iter().rposition(|&b| b == b'.') {
        Some(p) => &f[..p],
        None => f,
    }
}

/// `sys::path::extension`: the last '.' of the file name and what follows.
pub fn extension(path: &[u8]) -> &[u8] {
    let f = filename(path);
    if f == b"." || f == b".." {
        return &[];
    }
    match f.iter().rposition(|&b| b == b'.') {
        Some(p) => &f[p..],
        None => &[],
    }
}

/// The name of the output member for entry `id` (as stored) of the input
/// member `member` (its archive name), whose target ID as the release
/// parses it is `target_id` (AR-4): `stem + "-" + id + stem + ext`, ext
/// `.bc` when the target ID contains "gfx", `.cubin` when it contains
/// "sm_", else the member's own extension; every ':' becomes '_'.
pub fn member_name(member: &[u8], id: &[u8], target_id: &str) -> Vec<u8> {
    member_name_in(Release::L22, member, id, target_id)
}

/// [`member_name`] as `release` writes it: LLVM 13 writes only
/// `stem + "-" + id` (no second stem, no extension; observed), ':' as '_'.
pub fn member_name_in(release: Release, member: &[u8], id: &[u8], target_id: &str) -> Vec<u8> {
    let file = filename(member);
    let st = stem(file);
    let mut out = Vec::with_capacity(2 * st.len() + 1 + id.len() + 6);
    out.extend_from_slice(st);
    out.push(b'-');
    out.extend_from_slice(id);
    if release.quirks().archive_member_extension {
        let ext: &[u8] = if target_id.contains("gfx") {
            b".bc"
        } else if target_id.contains("sm_") {
            b".cubin"
        } else {
            extension(file)
        };
        out.extend_from_slice(st);
        out.extend_from_slice(ext);
    }
    for b in &mut out {
        if *b == b':' {
            *b = b'_';
        }
    }
    out
}

/// Whether `release`, unbundling an archive, sends a code object with
/// entry ID `entry` to the requested (written) `target` (AR-3). 16 and
/// later use `isCodeObjectCompatible`, as plain unbundling does
/// ([`Release::compatible`]); 13-15's archive path compares kinds as
/// `isOffloadKindCompatible` does (hip/hipv4 and openmp alike under
/// `-hip-openmp-compatible`, from 15), the target ID (the "GPU arch" with
/// its features) as strings and the triples
/// with `isCompatibleWith`, where its plain unbundling compares whole IDs.
pub fn compatible(release: Release, entry: &str, target: &str, hip_openmp: bool) -> bool {
    if release.quirks().archive_uses_bundler_compatibility {
        return release.compatible(entry, target, hip_openmp);
    }
    let (Some(e), Some(t)) = (release.target_info(entry), release.target_info(target)) else {
        return false;
    };
    release.kinds_compatible(&e.kind, &t.kind, hip_openmp)
        && e.triple.is_compatible_with_in(&t.triple, release.major())
        && e.target_id == t.target_id
}

/// `parseTargetIDWithFormatCheckingOnly` on a whole entry ID: the
/// "processor" (everything before the first ':') and the feature names.
fn parse_format_only(id: &[u8]) -> Option<(&[u8], BTreeSet<&[u8]>)> {
    let (processor, features) = crate::profile::target_id::format_only(id)?;
    Some((processor, features.into_iter().map(|(n, _)| n).collect()))
}

/// A conflict `getConflictTargetIDCombination` finds among the entry IDs
/// of one member, or why it cannot be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conflict<'a> {
    /// `[first, second]`: `second` sets a feature `first` leaves Any.
    Pair(&'a [u8], &'a [u8]),
    /// An ID LLVM's parser rejects; LLVM dereferences the empty result
    /// (undefined behaviour). The ID is given.
    Malformed(&'a [u8]),
}

/// `getConflictTargetIDCombination` (AR-7) over the set of entry IDs of
/// one member, iterated in sorted order: the first ID seen for a
/// "processor" (the whole ID before its first ':') is kept; a later ID
/// conflicts with it when it names a feature the first one does not. The
/// check is one-directional, as LLVM's is.
pub fn conflict<'a>(ids: &BTreeSet<&'a [u8]>) -> Option<Conflict<'a>> {
    // Per processor: the first ID seen and its features.
    type First<'b> = (&'b [u8], &'b [u8], BTreeSet<&'b [u8]>);
    let mut first: Vec<First<'a>> = Vec::new();
    for &id in ids {
        let Some((proc_, feats)) = parse_format_only(id) else {
            return Some(Conflict::Malformed(id));
        };
        match first.iter().find(|(p, _, _)| *p == proc_) {
            None => first.push((proc_, id, feats)),
            Some((_, fid, ffeats)) => {
                if feats.iter().any(|f| !ffeats.contains(f)) {
                    return Some(Conflict::Pair(fid, id));
                }
            }
        }
    }
    None
}

/// One member of an output archive: its name and bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutMember<'a> {
    /// The member name (AR-4).
    pub name: &'a [u8],
    /// The code object.
    pub data: &'a [u8],
}

/// The symbols of each member as LLVM's `writeArchive` lists them (AR-5),
/// or the first member whose symbols LLVM cannot list: its index and the
/// failure (message as LLVM prints it, detail with the offset inside the
/// member).
pub fn symbols(
    members: &[OutMember<'_>],
) -> std::result::Result<Vec<Symbolic>, (usize, String, Error)> {
    let mut out = Vec::with_capacity(members.len());
    for (i, m) in members.iter().enumerate() {
        match symtab::member_symbols(m.data, false) {
            Ok(s) => out.push(s),
            Err(e) => {
                let name = String::from_utf8_lossy(m.name);
                let msg = match &e {
                    symtab::SymbolError::Llvm { message, .. } => format!("'{name}': {message}"),
                    _ => format!("cannot list the symbols of archive member '{name}'"),
                };
                return Err((i, msg, e.error().clone()));
            }
        }
    }
    Ok(out)
}

/// Write the archive of `members` with their `symbols` (from [`symbols`])
/// as LLVM's `writeArchive(…, NormalSymtab, K_GNU, Deterministic)` does
/// (AR-5). `sym64_threshold` is 2^32 unless LLVM's `SYM64_THRESHOLD` test
/// variable says otherwise. Member data are streamed from their slices.
pub fn write<W: Write>(
    out: &mut W,
    members: &[OutMember<'_>],
    symbols: &[Symbolic],
    sym64_threshold: u64,
) -> Result<()> {
    let news: Vec<NewMember<'_>> = members
        .iter()
        .zip(symbols)
        .map(|(m, s)| NewMember {
            name: m.name,
            data: m.data,
            symbols: match s {
                Symbolic::No => None,
                Symbolic::Yes(v) => Some(v.iter().map(Vec::as_slice).collect()),
            },
        })
        .collect();
    ar::write_gnu_to(
        out,
        &news,
        WriteOptions {
            symtab: true,
            sym64_threshold,
        },
    )
    .map_err(|e| Error::rule(rules::AR_5, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_parts_as_llvm() {
        assert_eq!(filename(b"a/b.o"), b"b.o");
        assert_eq!(filename(b"a/"), b".");
        assert_eq!(filename(b"/"), b"/");
        assert_eq!(stem(b".bashrc"), b"");
        assert_eq!(extension(b".bashrc"), b".bashrc");
        assert_eq!(stem(b"x.tar.gz"), b"x.tar");
        assert_eq!(extension(b"x"), b"");
        assert_eq!(stem(b".."), b"..");
        assert_eq!(extension(b".."), b"");
    }

    #[test]
    fn conflicts_one_directional() {
        let s = |v: &[&'static str]| -> BTreeSet<&'static [u8]> {
            v.iter().map(|x| x.as_bytes()).collect()
        };
        let a = "hip-amdgcn-amd-amdhsa--gfx90a";
        let b = "hip-amdgcn-amd-amdhsa--gfx90a:xnack+";
        assert_eq!(
            conflict(&s(&[b, a])),
            Some(Conflict::Pair(a.as_bytes(), b.as_bytes()))
        );
        let c = "hip-amdgcn-amd-amdhsa--gfx906:sramecc+:xnack+";
        let d = "hip-amdgcn-amd-amdhsa--gfx906:xnack+";
        assert_eq!(conflict(&s(&[c, d])), None);
        assert_eq!(
            conflict(&s(&["x:y"])),
            Some(Conflict::Malformed(b"x:y".as_slice()))
        );
    }
}
