//! `-unbundle -type=a`: `UnbundleArchive` (and `-check-input-archive`),
//! which turns a heterogeneous archive into one archive per target.
//!
//! [`Job::plan_archive`] runs the steps: `plan_member` reads each member
//! of the input (decompressing it first, AR-2) and `place_entry` gives
//! each of its entries to the archives of the targets it is compatible
//! with; `collect_archives` then closes the archives in `-targets` order
//! and computes their symbols (AR-5), stopping at the first target left
//! without members (AR-6).

use super::input::malformed_id;
use super::{ArchiveMember, ArchivePlan, BundlerError, Bytes, Job, Piece, Validated};
use crate::bundle::archive as hda;
use crate::bundle::binary;
use crate::bundle::ccob::{self, LlvmDecompress};
use crate::bundle::object;
use crate::error::Error;
use crate::host::ar;
use crate::rules;
use std::collections::BTreeSet;

/// One member of the input archive as the release reads it.
struct MemberView<'m> {
    /// The member name as stored.
    name: &'m [u8],
    /// Absolute offset of the member data in the archive.
    data_offset: u64,
    /// The bytes read: decompressed (CCOB, 19 and 22) or as stored.
    data: &'m [u8],
    /// Whether `data` was decompressed; it is then buffer `first`.
    decompressed: bool,
    /// The index the member's first buffer gets in [`ArchivePlan::buffers`].
    first: usize,
    /// Which member errors come from, for their detail.
    context: String,
}

impl MemberView<'_> {
    /// Where the bytes of `piece` (a piece of `data`) come from; a piece
    /// the plan computed is appended to `owned`, the member's buffers
    /// after the decompressed bytes.
    fn bytes(&self, piece: Piece, owned: &mut Vec<Vec<u8>>) -> Bytes {
        let whole = self.data.len() as u64;
        match (piece, self.decompressed) {
            (Piece::Range { offset, size }, false) => Bytes::Input {
                offset: self.data_offset + offset,
                size,
            },
            (Piece::Range { offset, size }, true) => Bytes::Buffer {
                index: self.first,
                offset,
                size,
            },
            (Piece::WholeInput, false) => Bytes::Input {
                offset: self.data_offset,
                size: whole,
            },
            (Piece::WholeInput, true) => Bytes::Buffer {
                index: self.first,
                offset: 0,
                size: whole,
            },
            (Piece::Empty | Piece::NotWritten, _) => Bytes::Input { offset: 0, size: 0 },
            (Piece::Owned(o), _) => {
                let size = o.len() as u64;
                owned.push(o);
                Bytes::Buffer {
                    index: self.first + usize::from(self.decompressed) + owned.len() - 1,
                    offset: 0,
                    size,
                }
            }
        }
    }
}

impl Job {
    /// `CheckHeterogeneousArchive` (`-check-input-archive`, 19 and 22,
    /// AR-7): for each member, as stored (compressed members are not
    /// decompressed, so they hold no IDs), the set of its entry IDs must
    /// not hold a conflicting pair. `name` is the archive's path as given.
    pub fn check_archive(&self, input: &[u8], name: &str) -> Result<(), BundlerError> {
        for m in archive_members(input)? {
            let entries = self
                .llvm_entries(m.data)
                .map_err(|e| rebase(e, m.data_offset))?;
            let ids: BTreeSet<&[u8]> = entries.iter().map(|e| e.id).collect();
            if let Some(c) = hda::conflict(&ids) {
                return Err(self.conflict_error(c, &m, &entries, name));
            }
        }
        Ok(())
    }

    /// The error `-check-input-archive` reports for a conflict in member
    /// `m` (whose entries are `entries`) of the archive `name`.
    fn conflict_error(
        &self,
        c: hda::Conflict<'_>,
        m: &ar::RawMember<'_>,
        entries: &[binary::Entry<'_>],
        name: &str,
    ) -> BundlerError {
        let member = m.name_str();
        match c {
            hda::Conflict::Pair(a, b) => {
                let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
                BundlerError::with(
                    format!("conflicting TargetIDs [{a}, {b}] found in {member} of {name}"),
                    Error::at(
                        rules::AR_7,
                        m.header_offset,
                        format!("'{b}' sets a feature that '{a}' leaves Any"),
                    ),
                )
            }
            hda::Conflict::Malformed(id) => {
                let pos = entries
                    .iter()
                    .find(|e| e.id == id)
                    .map_or(m.data_offset, |e| m.data_offset + e.id_pos);
                BundlerError::with(
                    format!("malformed target ID in {member} of {name}"),
                    Error::at(
                        rules::AR_7,
                        pos,
                        format!(
                            "'{}' is not processor(:feature(+|-))*; LLVM {} dereferences the empty result of parseTargetIDWithFormatCheckingOnly here (undefined behaviour)",
                            String::from_utf8_lossy(id).escape_debug(),
                            self.release
                        ),
                    ),
                )
            }
        }
    }

    /// `UnbundleArchive`: decide what each target's archive holds. `name`
    /// is the input's path as given (LLVM's messages name it).
    pub fn plan_archive(
        &self,
        v: &Validated,
        input: &[u8],
        name: &str,
    ) -> Result<ArchivePlan, BundlerError> {
        self.plan_archive_reporting(v, input, name, &mut |_, _, _| {})
    }

    /// [`Job::plan_archive`], telling `report` each member's data and what
    /// it decompressed to (`None`: not compressed), in the order the
    /// release decompresses them (for `-verbose`, which the library does
    /// not print).
    pub fn plan_archive_reporting(
        &self,
        v: &Validated,
        input: &[u8],
        name: &str,
        report: &mut super::DecompressReport<'_>,
    ) -> Result<ArchivePlan, BundlerError> {
        if self.check_input_archive && self.release.quirks().checks_input_archives {
            self.check_archive(input, name)?;
        }
        let members = archive_members(input)?;
        let mut buffers: Vec<Vec<u8>> = Vec::new();
        let mut archives: Vec<Vec<ArchiveMember>> = vec![Vec::new(); v.targets.len()];
        for m in &members {
            let added = self.plan_member(v, m, buffers.len(), &mut archives, report)?;
            buffers.extend(added);
        }
        Ok(self.collect_archives(v, input, name, buffers, archives))
    }

    /// Read member `m` and place each of its entries; returns the buffers
    /// the member adds (at index `first` on): its decompressed bytes
    /// first, then host objects computed from them.
    fn plan_member(
        &self,
        v: &Validated,
        m: &ar::RawMember<'_>,
        first: usize,
        archives: &mut [Vec<ArchiveMember>],
        report: &mut super::DecompressReport<'_>,
    ) -> Result<Vec<Vec<u8>>, BundlerError> {
        let started = std::time::Instant::now();
        let decompressed = self.decompress_member(m)?;
        report(
            m.data,
            decompressed.as_deref(),
            started.elapsed().as_secs_f64(),
        );
        // Offsets inside a decompressed member are reported relative to
        // the member's data in the archive (the offset inside the
        // decompressed bytes, plus where the member starts).
        let view = MemberView {
            name: m.name,
            data_offset: m.data_offset,
            data: decompressed.as_deref().unwrap_or(m.data),
            decompressed: decompressed.is_some(),
            first,
            context: if decompressed.is_some() {
                format!("in the decompressed archive member '{}'", m.name_str())
            } else {
                format!("in archive member '{}'", m.name_str())
            },
        };
        let mut owned: Vec<Vec<u8>> = Vec::new();
        let entries = self
            .llvm_entries(view.data)
            .map_err(|e| with_context(rebase(e, view.data_offset), view.context.clone()))?;
        for e in &entries {
            self.place_entry(v, &view, e, &mut owned, archives)?;
        }
        drop(entries);
        Ok(decompressed.into_iter().chain(owned).collect())
    }

    /// 19 and 22 decompress a CCOB member first (AR-2); `None` when the
    /// member is used as stored.
    fn decompress_member(&self, m: &ar::RawMember<'_>) -> Result<Option<Vec<u8>>, BundlerError> {
        match ccob::llvm_decompress_within(m.data, self.release, self.budget) {
            LlvmDecompress::Plain => Ok(None),
            LlvmDecompress::Data(d) => Ok(Some(d)),
            LlvmDecompress::Fails(msg, e) => Err(BundlerError::with(
                format!("Failed to decompress code object: {msg}"),
                e.rebase(m.data_offset)
                    .context(format!("in archive member '{}'", m.name_str())),
            )),
        }
    }

    /// Entry `e` of a member: its ID checked (22, ID-1), host entries
    /// skipped by 14 and 16 (AR-3), its payload in range (BIN-5), then
    /// added to the archive of every compatible target.
    fn place_entry(
        &self,
        v: &Validated,
        view: &MemberView<'_>,
        e: &binary::Entry<'_>,
        owned: &mut Vec<Vec<u8>>,
        archives: &mut [Vec<ArchiveMember>],
    ) -> Result<(), BundlerError> {
        let r = self.release;
        let id = e.id_str();
        if let Some(err) = malformed_id(r, &id, view.data_offset + e.id_pos) {
            return Err(BundlerError::with(
                "Invalid bundle id read from code object",
                err.context(view.context.clone()),
            ));
        }
        // 14 and 16 skip host entries ("we don't extract host code
        // yet"); 19 and 22 extract them (AR-3).
        if r.quirks().archive_skips_host_entries
            && r.target_info(&id).is_some_and(|i| i.kind == "host")
        {
            return Ok(());
        }
        let targets: Vec<usize> = v
            .targets
            .iter()
            .enumerate()
            .filter(|(_, t)| hda::compatible(r, &id, t, self.hip_openmp))
            .map(|(i, _)| i)
            .collect();
        if targets.is_empty() {
            return Ok(());
        }
        self.check_in_member(view, e)?;
        let piece = self
            .piece_for(view.data, e)
            .map_err(|err| with_context(rebase(err, view.data_offset), view.context.clone()))?;
        let bytes = view.bytes(piece, owned);
        let target_id = r.target_info(&id).map(|i| i.target_id).unwrap_or_default();
        let out_name = hda::member_name_in(r, view.name, e.id, &target_id);
        // LLVM keys its archives by the target's text: targets written
        // alike share one archive, which gets the member once per target.
        for t in targets {
            archives[v.first_alike(t)].push(ArchiveMember {
                name: out_name.clone(),
                data: bytes,
            });
        }
        Ok(())
    }

    /// The payload of `e` lies inside the member (BIN-5); object files
    /// are checked by [`Job::piece_for`] instead.
    fn check_in_member(
        &self,
        view: &MemberView<'_>,
        e: &binary::Entry<'_>,
    ) -> Result<(), BundlerError> {
        let data = view.data;
        let in_range = e
            .offset
            .checked_add(e.size)
            .is_some_and(|end| end <= data.len() as u64);
        if !in_range && !object::is_object_file(data) {
            return Err(BundlerError::with(
                "malformed bundle header",
                Error::at(
                    rules::BIN_5,
                    view.data_offset + e.record_pos,
                    format!(
                        "entry '{}': payload [0x{:x}, +0x{:x}) lies outside the member of {} bytes; LLVM {} copies memory it does not own",
                        e.id_str().escape_debug(),
                        e.offset,
                        e.size,
                        data.len(),
                        self.release
                    ),
                )
                .context(view.context.clone()),
            ));
        }
        Ok(())
    }

    /// Close the archives in `-targets` order: each needs a member unless
    /// `-allow-missing-bundles` (AR-6), and its symbols (AR-5). The first
    /// failure ends the plan, the archives before it kept.
    fn collect_archives(
        &self,
        v: &Validated,
        input: &[u8],
        name: &str,
        buffers: Vec<Vec<u8>>,
        mut archives: Vec<Vec<ArchiveMember>>,
    ) -> ArchivePlan {
        let mut plan = ArchivePlan {
            buffers,
            archives: Vec::new(),
            outputs: Vec::new(),
            symbols: Vec::new(),
            error: None,
        };
        for (i, t) in v.targets.iter().enumerate() {
            // Targets written alike share one archive and one output file,
            // the last of their outputs (LLVM's maps by target text, AR-5).
            let first = v.first_alike(i);
            let ms = if first == i && v.last_alike(i) == i {
                std::mem::take(&mut archives[i])
            } else {
                archives[first].clone()
            };
            if ms.is_empty() && !self.allow_missing {
                plan.error = Some(BundlerError::with(
                    format!(
                        "no compatible code object found for the target '{t}' in {} archive library: {name}",
                        if self.release.quirks().heterogenous_typo { "heterogenous" } else { "heterogeneous" }
                    ),
                    Error::rule(
                        rules::AR_6,
                        format!("no member holds a code object compatible with '{t}'"),
                    ),
                ));
                break;
            }
            if ms.is_empty() && self.release.quirks().writes_no_empty_archive {
                // 13 writes no empty archive for -allow-missing-bundles.
                continue;
            }
            plan.archives.push(ms);
            plan.outputs.push(v.last_alike(i));
            let outs = plan.members(input, plan.archives.len() - 1);
            match hda::symbols(&outs) {
                Ok(s) => plan.symbols.push(s),
                Err((k, msg, err)) => {
                    plan.archives.pop();
                    plan.outputs.pop();
                    plan.error = Some(BundlerError::with(
                        msg,
                        err.context(format!(
                            "output member {k} of the archive for '{t}' (offset inside the member)"
                        )),
                    ));
                    break;
                }
            }
        }
        plan
    }
}

/// LLVM's `Archive::create` failure for `input`, with offload-kit's detail.
fn archive_error(input: &[u8], e: Error) -> BundlerError {
    if input.starts_with(ar::ARCHIVE_MAGIC) || input.starts_with(ar::THIN_MAGIC) {
        BundlerError::with("truncated or malformed archive", e)
    } else {
        BundlerError::with("file too small to be an archive", e)
    }
}

/// The members of the input archive (AR-1). A thin archive without
/// members is read as empty, as LLVM reads it.
fn archive_members(input: &[u8]) -> Result<Vec<ar::RawMember<'_>>, BundlerError> {
    if input == ar::THIN_MAGIC {
        return Ok(Vec::new());
    }
    ar::members_raw(input, 0, rules::AR_1).map_err(|e| archive_error(input, e))
}

/// `e` with its detail's offset moved by `base`.
fn rebase(e: BundlerError, base: u64) -> BundlerError {
    BundlerError {
        message: e.message,
        detail: e.detail.map(|d| d.rebase(base)),
    }
}

/// `e` with `what` added to its detail's context.
fn with_context(e: BundlerError, what: String) -> BundlerError {
    BundlerError {
        message: e.message,
        detail: e.detail.map(|d| d.context(what)),
    }
}
