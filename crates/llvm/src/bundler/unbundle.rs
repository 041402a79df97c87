//! `-unbundle` (all types but `-type=a`): `UnbundleFiles`, the walk over
//! the input that gives each target's output its bytes.
//!
//! `plan_unbundle_walk` runs the steps in the release's order:
//! `match_bundles` walks the bundles until every target is served, then
//! `check_all_found` and `check_host_found` make the release's checks of
//! what was found.

use super::input::malformed_id;
use super::{BundlerError, FileType, Job, Piece, Validated};
use crate::bundle::{binary, ccob, text};
use crate::error::Error;
use crate::rules;
use crate::source::Source;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// What the walk over the bundles left: the targets not served (in
/// worklist order), the output of each target served, and whether a host
/// bundle was among them.
struct Matched<'v> {
    worklist: Vec<&'v str>,
    pieces: Vec<Option<Piece>>,
    found_host: bool,
}

/// How [`unbundle_in_memory`] unbundles: what `clang-offload-bundler
/// -unbundle` of a release is told besides its files.
#[derive(Debug, Clone, Copy)]
pub struct UnbundleOptions<'a> {
    /// The release reproduced.
    pub release: crate::Release,
    /// `-type` (every type but `a`: an archive unbundles into archives).
    pub file_type: &'a str,
    /// `-allow-missing-bundles`.
    pub allow_missing: bool,
    /// How much decoded data it may hold (CLI-6).
    pub budget: crate::budget::Budget,
}

/// What `clang-offload-bundler -unbundle -type=… -targets=…` of
/// `opts.release` writes for each of `targets` from `input`, made in
/// memory: per target its output's bytes, or `None` where the release
/// opens no file for it (a target it writes like a later one). The
/// release's checks in its order, its decompression (or main's walk over
/// every blob), its errors; the same bytes as the drop-in's outputs, which
/// together (with a decompressed input) may take at most the budget (CLI-6).
///
/// ```
/// use offload_kit_llvm::bundler::{bundle_in_memory, unbundle_in_memory, BundleOptions, UnbundleOptions};
/// use offload_kit_llvm::Release;
/// let entries = [("host-x86_64-unknown-linux-gnu", &b"HOST"[..]), ("hip-amdgcn-amd-amdhsa--gfx906", &b"DEV"[..])];
/// let bundle = bundle_in_memory(&entries, BundleOptions {
///     release: Release::L22, file_type: "bc", align: 1, compress: None, budget: Default::default(),
/// }).unwrap();
/// let opts = UnbundleOptions { release: Release::L22, file_type: "bc", allow_missing: false, budget: Default::default() };
/// let out = unbundle_in_memory(&bundle, &["hip-amdgcn-amd-amdhsa--gfx906"], opts).unwrap();
/// assert_eq!(out, [Some(b"DEV".to_vec())]);
/// assert!(unbundle_in_memory(&bundle, &["hip-amdgcn-amd-amdhsa--gfx90a"], opts).is_err());
/// ```
pub fn unbundle_in_memory(
    input: &[u8],
    targets: &[&str],
    opts: UnbundleOptions<'_>,
) -> Result<Vec<Option<Vec<u8>>>, BundlerError> {
    if opts.file_type == "a" {
        return Err(BundlerError::llvm(
            "-type=a unbundles an archive into archives: use the drop-in (offload-kit bundler), which writes them",
        ));
    }
    let job = Job {
        release: opts.release,
        file_type: opts.file_type.to_string(),
        targets: targets.iter().map(|t| t.to_string()).collect(),
        inputs: Vec::new(),
        outputs: Vec::new(),
        unbundle: true,
        list: false,
        allow_missing: opts.allow_missing,
        align: 1,
        hip_openmp: false,
        check_input_archive: false,
        budget: opts.budget,
    };
    let v = job.validate_in_memory()?;
    // main walks every blob of the input (CCOB-4, *LLVM main*); the others
    // decompress a compressed input first, as the release does.
    let (decompressed, pieces) = if job.release.quirks().list_walks_every_bundle {
        (None, job.plan_unbundle_main(&v, &input, &mut |_, _, _| {})?)
    } else {
        let d = job.decompress_input(input)?;
        let pieces = job.plan_unbundle(&v, &d.as_deref().unwrap_or(input))?;
        (d, pieces)
    };
    let bytes = decompressed.as_deref().unwrap_or(input);
    // The outputs are copies: together with the decompressed input held,
    // within the budget.
    let held = decompressed.as_ref().map_or(0, |d| d.len() as u64);
    let total = (pieces.iter())
        .map(|p| match p {
            Piece::Range { size, .. } => *size,
            Piece::WholeInput => bytes.len() as u64,
            Piece::Owned(b) => b.len() as u64,
            Piece::Empty | Piece::NotWritten => 0,
        })
        .fold(held, u64::saturating_add);
    if opts.budget.exceeded(total) {
        return Err(BundlerError::with(
            "the outputs exceed the memory budget",
            Error::rule(
                rules::CLI_6,
                format!("{total} bytes, more than {}", opts.budget.bytes()),
            ),
        ));
    }
    let range = |offset: u64, size: u64| -> Result<Vec<u8>, BundlerError> {
        let at = usize::try_from(offset).ok();
        let end = at.and_then(|a| a.checked_add(usize::try_from(size).ok()?));
        match (at, end) {
            (Some(a), Some(e)) if e <= bytes.len() => Ok(bytes[a..e].to_vec()),
            _ => Err(BundlerError::with(
                "an output lies outside the input",
                Error::other(format!("{offset}+{size} of {} bytes", bytes.len())),
            )),
        }
    };
    (pieces.into_iter())
        .map(|p| match p {
            Piece::Range { offset, size } => range(offset, size).map(Some),
            Piece::WholeInput => Ok(Some(bytes.to_vec())),
            Piece::Empty => Ok(Some(Vec::new())),
            Piece::NotWritten => Ok(None),
            Piece::Owned(b) => Ok(Some(b)),
        })
        .collect()
}

impl Job {
    /// Decide what each output of an unbundling of `src` receives. A text
    /// bundle is scanned window by window ([`crate::source::WINDOW`]); a [`Prefix`]
    /// (a compressed input decoded only as far as its binary-bundle header)
    /// gives ranges within the decompressed bundle of [`Source::len`] bytes
    /// ([`Piece::WholeInput`] is all of it); other inputs are read whole.
    ///
    /// [`Prefix`]: crate::source::Prefix
    pub fn plan_unbundle(
        &self,
        v: &Validated,
        src: &dyn Source,
    ) -> Result<Vec<Piece>, BundlerError> {
        if let Some(FileType::Text(c)) = FileType::parse(&self.file_type, self.release) {
            let r = text::LlvmReader::new(src, 0, c, self.release);
            return self.plan_unbundle_walk(v, src.bytes(), Walk::Text(Box::new(r)));
        }
        let walk = Walk::Entries(self.llvm_entries(src)?.into_iter());
        self.plan_unbundle_walk(v, src.bytes(), walk)
    }

    /// `UnbundleFiles` over `walk`: match bundles to targets, then check
    /// what was found.
    fn plan_unbundle_walk(
        &self,
        v: &Validated,
        input: &[u8],
        mut walk: Walk<'_>,
    ) -> Result<Vec<Piece>, BundlerError> {
        let mut m = self.new_matched(v);
        self.match_bundles(v, input, &mut walk, &mut m)?;
        if let Some(err) = walk.failure() {
            return Err(BundlerError::with("cannot read the input", err));
        }
        self.finish_unbundle(v, m)
    }

    /// LLVM main's `UnbundleFiles` of the input `raw` (spec/ccob.md, CCOB-4,
    /// *LLVM main*): the blobs of [`ccob::main_blobs`] are decompressed and
    /// walked in turn, each by a handler of its own, and serve the targets
    /// still unserved; the first blob to hold a target wins. Every blob is
    /// decompressed, even after the last target is served. When no target
    /// is served, the host output receives `raw` as it is, not what it
    /// decompresses to. Ranges of the returned pieces are ranges of `raw`.
    /// `report` is told each blob and what it decompressed to, `None` when
    /// it is not compressed (for `-verbose`, which the library does not
    /// print).
    pub fn plan_unbundle_main(
        &self,
        v: &Validated,
        raw: &dyn Source,
        report: &mut super::DecompressReport<'_>,
    ) -> Result<Vec<Piece>, BundlerError> {
        let mut m = self.new_matched(v);
        self.for_each_main_blob(
            raw,
            ccob::MainWalk::Unbundle,
            report,
            &mut |start, buf, decompressed| {
                // The handler reads its header whatever remains to be served,
                // but looks for bundles only while targets remain.
                if m.worklist.is_empty() {
                    return Ok(());
                }
                let before: Vec<bool> = m.pieces.iter().map(Option::is_some).collect();
                let mut walk = match FileType::parse(&self.file_type, self.release) {
                    Some(FileType::Text(c)) => {
                        Walk::Text(Box::new(text::LlvmReader::new(&buf, 0, c, self.release)))
                    }
                    _ => Walk::Entries(self.llvm_entries(&buf)?.into_iter()),
                };
                self.match_bundles(v, buf, &mut walk, &mut m)?;
                if let Some(err) = walk.failure() {
                    return Err(BundlerError::with("cannot read the input", err));
                }
                // What this blob served, as ranges of `raw` or bytes of its own.
                for (p, was) in m.pieces.iter_mut().zip(before) {
                    if let (Some(Piece::Range { offset, size }), false) = (p.as_ref(), was) {
                        let (offset, size) = (*offset, *size);
                        *p = Some(if decompressed {
                            Piece::Owned(buf[offset as usize..(offset + size) as usize].to_vec())
                        } else {
                            Piece::Range {
                                offset: start + offset,
                                size,
                            }
                        });
                    }
                }
                Ok(())
            },
        )?;
        self.finish_unbundle(v, m)
    }

    /// The worklist of `UnbundleFiles` before any bundle is read.
    fn new_matched<'v>(&self, v: &'v Validated) -> Matched<'v> {
        // One worklist entry per target text (a StringMap): targets the
        // release writes alike share it.
        let keys: Vec<&str> = (0..v.targets.len())
            .filter(|&i| v.first_alike(i) == i)
            .map(|i| v.targets[i].as_str())
            .collect();
        Matched {
            worklist: self.release.stringmap_order(&keys),
            pieces: vec![None; v.targets.len()],
            found_host: false,
        }
    }

    /// The release's checks of what the walk found, and each output's piece.
    fn finish_unbundle(&self, v: &Validated, m: Matched<'_>) -> Result<Vec<Piece>, BundlerError> {
        self.check_all_found(&m.worklist)?;
        if m.worklist.len() == v.targets.len() {
            return Ok(self.nothing_found(v));
        }
        self.check_host_found(v, m.found_host)?;
        Ok(m.pieces
            .into_iter()
            .enumerate()
            .map(|(i, p)| match p {
                _ if v.last_alike(i) != i => Piece::NotWritten,
                p => p.unwrap_or(Piece::Empty),
            })
            .collect())
    }

    /// Walk the bundles while targets remain: each bundle (its ID checked
    /// first) serves the first remaining target, in the release's
    /// worklist order, that it is compatible with.
    fn match_bundles<'v>(
        &self,
        v: &'v Validated,
        input: &[u8],
        walk: &mut Walk<'_>,
        m: &mut Matched<'v>,
    ) -> Result<(), BundlerError> {
        let r = self.release;
        while !m.worklist.is_empty() {
            let Some(start) = walk.next_start() else {
                break;
            };
            let id = start.id_str();
            if let Some(err) = malformed_id(r, &id, start.id_pos()) {
                return Err(BundlerError::with(
                    "invalid bundle id read from the bundle",
                    err,
                ));
            }
            let Some(pos) = m
                .worklist
                .iter()
                .position(|t| r.compatible(&id, t, self.hip_openmp))
            else {
                continue;
            };
            let e = self.read_matched(walk, &start)?;
            let t = m.worklist.remove(pos);
            // The key's output is the last one given for its text.
            let idx = v
                .targets
                .iter()
                .rposition(|x| x == t)
                .expect("worklist key");
            m.pieces[idx] = Some(self.piece_for(input, &e)?);
            if r.target_info(&id).is_some_and(|i| i.kind == "host") {
                m.found_host = true;
            }
        }
        Ok(())
    }

    /// `ReadBundle` for a bundle a target matched; its payload range must
    /// not wrap past 2^64 (BIN-5).
    fn read_matched<'a, 'f>(
        &self,
        walk: &mut Walk<'a>,
        start: &'f Found<'a>,
    ) -> Result<binary::Entry<'f>, BundlerError> {
        let e = walk
            .read(start)
            .map_err(|err| BundlerError::with("malformed bundle", err))?;
        if e.offset.checked_add(e.size).is_none() {
            return Err(BundlerError::with(
                "malformed bundle header",
                Error::at(
                    rules::BIN_5,
                    e.record_pos,
                    format!(
                        "entry '{}': offset + size wraps past 2^64; LLVM {} accepts it and copies memory it does not own into the output",
                        start.id_str().escape_debug(),
                        self.release
                    ),
                ),
            ));
        }
        Ok(e)
    }

    /// Without `-allow-missing-bundles`, every target must have been
    /// served (CLI-4).
    fn check_all_found(&self, worklist: &[&str]) -> Result<(), BundlerError> {
        if !self.allow_missing && !worklist.is_empty() {
            let sorted: BTreeSet<&str> = worklist.iter().copied().collect();
            return Err(BundlerError::with(
                missing_message(&sorted),
                Error::rule(rules::CLI_4, "requested targets are not in the bundle"),
            ));
        }
        Ok(())
    }

    /// No target served (with `-allow-missing-bundles`): the host output
    /// receives the whole input, the others are empty.
    fn nothing_found(&self, v: &Validated) -> Vec<Piece> {
        let r = self.release;
        v.targets
            .iter()
            .map(|t| {
                if r.target_info(t).is_some_and(|i| i.kind == "host") {
                    Piece::WholeInput
                } else {
                    Piece::Empty
                }
            })
            .collect()
    }

    /// A host target must have found its bundle, unless 16 or later runs
    /// with `-allow-missing-bundles` (CLI-4).
    fn check_host_found(&self, v: &Validated, found_host: bool) -> Result<(), BundlerError> {
        let host_exempt = self.release.quirks().allow_missing_exempts_host && self.allow_missing;
        if !(found_host || v.host_index.is_none() || host_exempt) {
            return Err(BundlerError::with(
                "Can't find bundle for the host target",
                Error::rule(rules::CLI_4, "the host target is not in the bundle"),
            ));
        }
        Ok(())
    }
}

/// LLVM's "Can't find bundles for A, B, and C".
pub fn missing_message(sorted: &BTreeSet<&str>) -> String {
    let mut msg = String::from("Can't find bundles for");
    let last = sorted.len().saturating_sub(1);
    for (i, e) in sorted.iter().enumerate() {
        if i != 0 && last > 1 {
            msg.push(',');
        }
        msg.push(' ');
        if i == last && i != 0 {
            msg.push_str("and ");
        }
        msg.push_str(e);
    }
    msg
}

/// What unbundling walks: a handler's entry list, or the text reader.
enum Walk<'a> {
    Entries(std::vec::IntoIter<binary::Entry<'a>>),
    Text(Box<text::LlvmReader<'a>>),
}

/// A bundle found by [`Walk::next_start`], not yet read.
enum Found<'a> {
    Entry(binary::Entry<'a>),
    Text(text::Start<'a>),
}

impl Found<'_> {
    fn id_str(&self) -> Cow<'_, str> {
        match self {
            Found::Entry(e) => e.id_str(),
            Found::Text(s) => s.id_str(),
        }
    }
    fn id_pos(&self) -> u64 {
        match self {
            Found::Entry(e) => e.id_pos,
            Found::Text(s) => s.id_pos,
        }
    }
}

impl<'a> Walk<'a> {
    /// A window of the input that could not be read during the walk.
    fn failure(&self) -> Option<Error> {
        match self {
            Walk::Entries(_) => None,
            Walk::Text(r) => r.failure(),
        }
    }
    /// `ReadBundleStart`.
    fn next_start(&mut self) -> Option<Found<'a>> {
        match self {
            Walk::Entries(it) => it.next().map(Found::Entry),
            Walk::Text(r) => r.read_bundle_start().map(Found::Text),
        }
    }
    /// `ReadBundle` + `ReadBundleEnd` for a bundle a target matched.
    fn read<'f>(&mut self, f: &'f Found<'a>) -> Result<binary::Entry<'f>, Error> {
        match (self, f) {
            (_, Found::Entry(e)) => Ok(*e),
            (Walk::Text(r), Found::Text(s)) => r.read_bundle(s),
            (Walk::Entries(_), Found::Text(_)) => {
                unreachable!("text starts come from the text walk")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_messages() {
        let s = |v: &[&'static str]| missing_message(&v.iter().copied().collect());
        assert_eq!(s(&["a"]), "Can't find bundles for a");
        assert_eq!(s(&["b", "a"]), "Can't find bundles for a and b");
        assert_eq!(s(&["c", "a", "b"]), "Can't find bundles for a, b, and c");
    }
}
