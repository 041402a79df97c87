//! The operations of `clang-offload-bundler` (bundle, unbundle, list) as a
//! selected LLVM release performs them.
//!
//! This module decides; it does no I/O. [`Job::validate`] reproduces the
//! release's command-line checks in its order, [`Job::plan_unbundle`]
//! returns which bytes go to which output, [`Job::plan_bundle`] returns the
//! layout to write. The CLI executes the plans (streaming copies, temp files).

use crate::bundle::archive as hda;
use crate::bundle::binary::{self, Layout, LlvmView};
use crate::bundle::ccob::{self, LlvmDecompress};
use crate::bundle::{object, text};
use crate::error::Error;
use crate::host::ar;
use crate::host::symtab::Symbolic;
use crate::id::target_id;
use crate::profile::Release;
use crate::rules;
use crate::source::Source;
use std::collections::BTreeSet;
use std::fmt;
use std::path::PathBuf;

/// A failure reported the way LLVM reports it, plus offload-kit's detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundlerError {
    /// LLVM's message (without the `<argv0>: error: ` prefix).
    pub message: String,
    /// offset/rule detail offload-kit adds.
    pub detail: Option<Error>,
}

impl BundlerError {
    fn llvm(message: impl Into<String>) -> Self {
        BundlerError {
            message: message.into(),
            detail: None,
        }
    }
    fn with(message: impl Into<String>, detail: Error) -> Self {
        BundlerError {
            message: message.into(),
            detail: Some(detail),
        }
    }
}

impl fmt::Display for BundlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(d) = &self.detail {
            write!(f, " [{d}]")?;
        }
        Ok(())
    }
}

/// File types `-type` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    /// Binary bundle types: bc, gch, ast (and o/a when the input is not an object).
    Binary,
    /// `-type=o`.
    Object,
    /// `-type=a`.
    Archive,
    /// Text types with their comment string.
    Text(&'static str),
}

impl FileType {
    /// Parse a `-type` value as `release` does.
    pub fn parse(t: &str, release: Release) -> Option<FileType> {
        Some(match t {
            "bc" | "gch" | "ast" => FileType::Binary,
            "o" => FileType::Object,
            "a" => FileType::Archive,
            "i" | "ii" | "cui" => FileType::Text("//"),
            "hipi" if release >= Release::L16 => FileType::Text("//"),
            "d" | "s" => FileType::Text("#"),
            "ll" => FileType::Text(";"),
            _ => return None,
        })
    }
}

/// A bundler invocation after option parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The release reproduced.
    pub release: Release,
    /// `-type`.
    pub file_type: String,
    /// `-targets`, as given.
    pub targets: Vec<String>,
    /// Inputs.
    pub inputs: Vec<PathBuf>,
    /// Outputs.
    pub outputs: Vec<PathBuf>,
    /// `-unbundle`.
    pub unbundle: bool,
    /// `-list`.
    pub list: bool,
    /// `-allow-missing-bundles`.
    pub allow_missing: bool,
    /// `-bundle-align`.
    pub align: u64,
    /// `-hip-openmp-compatible`.
    pub hip_openmp: bool,
    /// `-check-input-archive`.
    pub check_input_archive: bool,
}

/// What validation established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validated {
    /// Targets as the release spells them (written IDs; worklist keys).
    pub targets: Vec<String>,
    /// Index of the host target, if any.
    pub host_index: Option<usize>,
    /// The file type.
    pub file_type: FileType,
}

/// One output of an unbundling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// A byte range of the input.
    Range {
        /// Offset in the input.
        offset: u64,
        /// Size.
        size: u64,
    },
    /// The whole input (host output of a non-bundle with `-allow-missing-bundles`).
    WholeInput,
    /// An empty file.
    Empty,
    /// Bytes computed by the plan (the host object of a fat object with its
    /// bundle sections removed, as LLVM 19 and 22 write it).
    Owned(Vec<u8>),
}

impl Job {
    /// The detail of a count mismatch (CLI-1, CLI-2).
    fn counts(&self, rule: crate::rules::Rule) -> Error {
        Error::rule(
            rule,
            format!(
                "{} inputs, {} outputs, {} targets",
                self.inputs.len(),
                self.outputs.len(),
                self.targets.len()
            ),
        )
    }

    /// The command-line checks, in the order the release makes them.
    pub fn validate(&self) -> Result<Validated, BundlerError> {
        let r = self.release;
        if self.unbundle && self.list {
            return Err(BundlerError::llvm(
                "-unbundle and -list cannot be used together",
            ));
        }
        if self.list {
            if self.inputs.len() != 1 {
                return Err(BundlerError::with(
                    "only one input file supported for -list",
                    Error::rule(rules::CLI_2, format!("{} inputs given", self.inputs.len())),
                ));
            }
            if !self.outputs.is_empty() {
                return Err(BundlerError::llvm("-outputs option is invalid for -list"));
            }
            if !self.targets.is_empty() {
                return Err(BundlerError::llvm("-targets option is invalid for -list"));
            }
            let ft = FileType::parse(&self.file_type, r).ok_or_else(|| {
                BundlerError::llvm(format!("'{}': invalid file type specified", self.file_type))
            })?;
            return Ok(Validated {
                targets: vec![],
                host_index: None,
                file_type: ft,
            });
        }
        if self.outputs.is_empty() {
            return Err(BundlerError::llvm(if r == Release::L14 {
                "for the --outputs option: must be specified at least once!"
            } else {
                "no output file specified!"
            }));
        }
        if self.targets.is_empty() {
            return Err(BundlerError::llvm(
                "for the --targets option: must be specified at least once!",
            ));
        }
        if r >= Release::L19 && self.check_input_archive {
            if !self.unbundle {
                return Err(BundlerError::llvm(
                    "-check-input-archive cannot be used while bundling",
                ));
            }
            if self.file_type != "a" {
                return Err(BundlerError::llvm(
                    "-check-input-archive can only be used for unbundling archives (-type=a)",
                ));
            }
        }
        if self.unbundle {
            if self.inputs.len() != 1 {
                return Err(BundlerError::with(
                    "only one input file supported in unbundling mode",
                    self.counts(rules::CLI_2),
                ));
            }
            if self.outputs.len() != self.targets.len() {
                return Err(BundlerError::with(
                    "number of output files and targets should match in unbundling mode",
                    self.counts(rules::CLI_2),
                ));
            }
        } else {
            if self.file_type == "a" {
                return Err(BundlerError::llvm(
                    "Archive files are only supported for unbundling",
                ));
            }
            if self.outputs.len() != 1 {
                return Err(BundlerError::with(
                    "only one output file supported in bundling mode",
                    self.counts(rules::CLI_1),
                ));
            }
            if self.inputs.len() != self.targets.len() {
                return Err(BundlerError::with(
                    "number of input files and targets should match in bundling mode",
                    self.counts(rules::CLI_1),
                ));
            }
        }
        let mut seen = BTreeSet::new();
        let mut host_num = 0;
        let mut host_index = None;
        let mut hip_only = true;
        let mut written = Vec::new();
        for (i, t) in self.targets.iter().enumerate() {
            if !seen.insert(t.as_str()) {
                return Err(BundlerError::with(
                    "Duplicate targets are not allowed",
                    Error::rule(rules::CLI_3, format!("target '{t}' is given twice")),
                ));
            }
            let info = r.validate_target(t).map_err(|m| {
                let rule = if m.contains("offloading kind") {
                    rules::ID_2
                } else if m.starts_with("Targets need") {
                    rules::ID_1
                } else {
                    rules::ID_3
                };
                BundlerError::with(m, Error::rule(rule, format!("target '{t}'")))
            })?;
            if info.kind == "host" {
                host_num += 1;
                host_index = Some(i);
            }
            if info.kind != "hip" && info.kind != "hipv4" {
                hip_only = false;
            }
            written.push(r.written_id(t).map_err(BundlerError::llvm)?);
        }
        if r >= Release::L16 {
            if let Some((a, b)) = conflicting_targets(r, &self.targets, &written) {
                return Err(BundlerError::with(
                    format!("Cannot bundle inputs with conflicting targets: '{a}' and '{b}'"),
                    Error::rule(
                        rules::COMPOSE_1,
                        "one target leaves a feature Any that another sets",
                    ),
                ));
            }
        }
        if (self.unbundle && host_num > 1) || (!self.unbundle && host_num != 1 && !hip_only) {
            return Err(BundlerError::with(
                format!("expecting exactly one host target but got {host_num}"),
                Error::rule(rules::CLI_3, "exactly one host target is needed"),
            ));
        }
        let ft = FileType::parse(&self.file_type, r).ok_or_else(|| {
            BundlerError::llvm(format!("'{}': invalid file type specified", self.file_type))
        })?;
        if !self.unbundle {
            let uniq: BTreeSet<&String> = written.iter().collect();
            if uniq.len() != written.len() {
                return Err(BundlerError::with(
                    "Duplicate targets are not allowed",
                    Error::rule(
                        rules::BIN_8,
                        format!(
                            "two targets are written as the same ID under LLVM {r} ({written:?}); LLVM {r} writes a corrupt bundle here"
                        ),
                    ),
                ));
            }
        }
        Ok(Validated {
            targets: written,
            host_index,
            file_type: ft,
        })
    }

    /// Decompress the input first when it is a compressed bundle and the
    /// release reads them (19, 22); `None` when the bytes are used as they are.
    pub fn decompress_input(&self, input: &[u8]) -> Result<Option<Vec<u8>>, BundlerError> {
        match ccob::llvm_decompress(input, self.release) {
            LlvmDecompress::Plain => Ok(None),
            LlvmDecompress::Data(d) => Ok(Some(d)),
            LlvmDecompress::Fails(m, e) => Err(BundlerError::with(
                format!("Failed to decompress input: {m}"),
                e,
            )),
        }
    }

    /// The entries the release's file handler yields, in its order.
    fn llvm_entries<'a>(&self, data: &'a [u8]) -> Result<Vec<binary::Entry<'a>>, BundlerError> {
        match FileType::parse(&self.file_type, self.release) {
            Some(FileType::Text(c)) => text::llvm_entries(data, 0, c, self.release)
                .map_err(|e| BundlerError::with("malformed text bundle", e)),
            Some(FileType::Object | FileType::Archive) if object::is_object_file(data) => {
                let entries = object::llvm_list(data, self.release)
                    .map_err(|e| BundlerError::with("invalid object file", e))?;
                Ok(entries
                    .into_iter()
                    .map(|e| binary::Entry {
                        id: e.id,
                        offset: e.offset,
                        // An SHT_NOBITS section has no bytes in the file:
                        // every release writes an empty output for it.
                        size: if e.sh_type == crate::host::elf::SHT_NOBITS {
                            0
                        } else {
                            e.size
                        },
                        record_pos: e.record_pos,
                        id_pos: e.id_pos,
                    })
                    .collect())
            }
            _ => match binary::llvm_read(data, 0, self.release) {
                LlvmView::NoBundles => Ok(vec![]),
                LlvmView::Entries(e) => Ok(e),
                LlvmView::Crash(e) => Err(BundlerError::with("malformed bundle header", e)),
            },
        }
    }

    /// What unbundling writes for entry `e`: its bytes, except that in an
    /// object file a section of exactly one 0x00 byte stands for the host
    /// object (OBJ-11): 14/16 write the whole input, 19/22 strip it.
    fn piece_for(&self, input: &[u8], e: &binary::Entry<'_>) -> Result<Piece, BundlerError> {
        let is_object = matches!(
            FileType::parse(&self.file_type, self.release),
            Some(FileType::Object | FileType::Archive)
        ) && object::is_object_file(input);
        if is_object && e.payload(input).is_none() {
            return Err(BundlerError::with(
                "The end of the file was unexpectedly encountered",
                Error::at(
                    rules::OBJ_3,
                    e.record_pos,
                    format!(
                        "bundle section '{}': contents [0x{:x}, +0x{:x}) lie outside the file of {} bytes",
                        e.id_str(),
                        e.offset,
                        e.size,
                        input.len()
                    ),
                ),
            ));
        }
        let marker = is_object && e.size == 1 && e.payload(input) == Some(&[0u8][..]);
        if !marker {
            return Ok(Piece::Range {
                offset: e.offset,
                size: e.size,
            });
        }
        if self.release <= Release::L16 {
            return Ok(Piece::WholeInput);
        }
        object::strip(input)
            .map(Piece::Owned)
            .map_err(|err| BundlerError::with("cannot remove the bundle sections", err))
    }

    /// The walk `UnbundleFiles` makes over the input: for text bundles the
    /// text reader, which only reads a bundle's content when a target
    /// matches it; for the others the handler's entry list.
    fn walk<'a>(&self, data: &'a [u8]) -> Result<Walk<'a>, BundlerError> {
        if let Some(FileType::Text(c)) = FileType::parse(&self.file_type, self.release) {
            return Ok(Walk::Text(Box::new(text::LlvmReader::new(
                data,
                0,
                c,
                self.release,
            ))));
        }
        Ok(Walk::Entries(self.llvm_entries(data)?.into_iter()))
    }

    /// [`Job::plan_list`] over a [`Source`]: a text bundle is scanned
    /// window by window ([`text::WINDOW`]), so that listing a multi-GB one
    /// keeps about one window of it resident; other inputs are read whole.
    pub fn plan_list_source(&self, src: &dyn Source) -> Result<Vec<String>, BundlerError> {
        if let Some(FileType::Text(c)) = FileType::parse(&self.file_type, self.release) {
            return text::llvm_list_source(src, 0, c, self.release, text::WINDOW)
                .map_err(|e| BundlerError::with("malformed text bundle", e));
        }
        self.plan_list(src.bytes())
    }

    /// [`Job::plan_unbundle`] over a [`Source`]: a text bundle is scanned
    /// window by window ([`text::WINDOW`]); other inputs are read whole.
    pub fn plan_unbundle_source(
        &self,
        v: &Validated,
        src: &dyn Source,
    ) -> Result<Vec<Piece>, BundlerError> {
        if let Some(FileType::Text(c)) = FileType::parse(&self.file_type, self.release) {
            let r = text::LlvmReader::from_source(src, 0, c, self.release, text::WINDOW);
            return self.plan_unbundle_walk(v, src.bytes(), Walk::Text(Box::new(r)));
        }
        self.plan_unbundle(v, src.bytes())
    }

    /// IDs `-list` prints for `input` (already decompressed, see [`Job::decompress_input`]).
    pub fn plan_list(&self, input: &[u8]) -> Result<Vec<String>, BundlerError> {
        if let Some(FileType::Text(c)) = FileType::parse(&self.file_type, self.release) {
            return text::llvm_list(input, 0, c, self.release)
                .map_err(|e| BundlerError::with("malformed text bundle", e));
        }
        Ok(self
            .llvm_entries(input)?
            .iter()
            .map(|e| e.id_str().into_owned())
            .collect())
    }

    /// IDs `-list` prints for a compressed input decoded only as far as its
    /// bundle header (`prefix`, of a bundle of `total` bytes; see
    /// [`ccob::llvm_list_prefix`]).
    pub fn plan_list_prefix(&self, prefix: &[u8], total: u64) -> Result<Vec<String>, BundlerError> {
        Ok(self
            .llvm_entries_prefix(prefix, total)?
            .iter()
            .map(|e| e.id_str().into_owned())
            .collect())
    }

    /// [`Job::plan_unbundle`] for a compressed input decoded only as far
    /// as its binary-bundle header: ranges are within the decompressed
    /// bundle of `total` bytes ([`Piece::WholeInput`] is all of it).
    pub fn plan_unbundle_prefix(
        &self,
        v: &Validated,
        prefix: &[u8],
        total: u64,
    ) -> Result<Vec<Piece>, BundlerError> {
        let walk = Walk::Entries(self.llvm_entries_prefix(prefix, total)?.into_iter());
        self.plan_unbundle_walk(v, prefix, walk)
    }

    /// The release's reading of a binary-bundle header prefix.
    fn llvm_entries_prefix<'a>(
        &self,
        prefix: &'a [u8],
        total: u64,
    ) -> Result<Vec<binary::Entry<'a>>, BundlerError> {
        match binary::llvm_read_prefix(prefix, total, 0, self.release) {
            LlvmView::NoBundles => Ok(vec![]),
            LlvmView::Entries(e) => Ok(e),
            LlvmView::Crash(e) => Err(BundlerError::with("malformed bundle header", e)),
        }
    }

    /// Decide what each output of an unbundling receives.
    pub fn plan_unbundle(&self, v: &Validated, input: &[u8]) -> Result<Vec<Piece>, BundlerError> {
        let walk = self.walk(input)?;
        self.plan_unbundle_walk(v, input, walk)
    }

    fn plan_unbundle_walk(
        &self,
        v: &Validated,
        input: &[u8],
        mut walk: Walk<'_>,
    ) -> Result<Vec<Piece>, BundlerError> {
        let r = self.release;
        let keys: Vec<&str> = v.targets.iter().map(String::as_str).collect();
        let mut worklist: Vec<&str> = r.stringmap_order(&keys);
        let mut pieces: Vec<Option<Piece>> = vec![None; v.targets.len()];
        let mut found_host = false;
        while !worklist.is_empty() {
            let Some(start) = walk.next_start() else {
                break;
            };
            let id = start.id_str();
            if r == Release::L22 && !Release::llvm22_well_formed(&id) {
                return Err(BundlerError::with(
                    "invalid bundle id read from the bundle",
                    Error::at(
                        rules::ID_1,
                        start.id_pos(),
                        format!(
                            "entry ID '{}' does not have 5 or 6 '-'-separated fields",
                            id.escape_debug()
                        ),
                    ),
                ));
            }
            let Some(pos) = worklist
                .iter()
                .position(|t| r.compatible(&id, t, self.hip_openmp))
            else {
                continue;
            };
            let e = walk
                .read(&start)
                .map_err(|err| BundlerError::with("malformed bundle", err))?;
            if e.offset.checked_add(e.size).is_none() {
                return Err(BundlerError::with(
                    "malformed bundle header",
                    Error::at(
                        rules::BIN_5,
                        e.record_pos,
                        format!(
                            "entry '{}': offset + size wraps past 2^64; LLVM {r} accepts it and copies memory it does not own into the output",
                            id.escape_debug()
                        ),
                    ),
                ));
            }
            let t = worklist.remove(pos);
            let idx = v.targets.iter().position(|x| x == t).expect("worklist key");
            pieces[idx] = Some(self.piece_for(input, &e)?);
            if r.target_info(&id).is_some_and(|i| i.kind == "host") {
                found_host = true;
            }
        }
        if let Some(err) = walk.failure() {
            return Err(BundlerError::with("cannot read the input", err));
        }
        if !self.allow_missing && !worklist.is_empty() {
            let sorted: BTreeSet<&str> = worklist.iter().copied().collect();
            return Err(BundlerError::with(
                missing_message(&sorted),
                Error::rule(rules::CLI_4, "requested targets are not in the bundle"),
            ));
        }
        if worklist.len() == v.targets.len() {
            return Ok(v
                .targets
                .iter()
                .map(|t| {
                    if r.target_info(t).is_some_and(|i| i.kind == "host") {
                        Piece::WholeInput
                    } else {
                        Piece::Empty
                    }
                })
                .collect());
        }
        let host_exempt = r >= Release::L16 && self.allow_missing;
        if !(found_host || v.host_index.is_none() || host_exempt) {
            return Err(BundlerError::with(
                "Can't find bundle for the host target",
                Error::rule(rules::CLI_4, "the host target is not in the bundle"),
            ));
        }
        Ok(pieces
            .into_iter()
            .map(|p| p.unwrap_or(Piece::Empty))
            .collect())
    }

    /// The layout of the binary bundle for payloads of `sizes` (one per target).
    pub fn plan_bundle(&self, v: &Validated, sizes: &[u64]) -> Result<Layout, BundlerError> {
        let entries: Vec<(&[u8], u64)> = v
            .targets
            .iter()
            .zip(sizes)
            .map(|(t, s)| (t.as_bytes(), *s))
            .collect();
        binary::layout(&entries, self.align)
            .map_err(|e| BundlerError::with("invalid bundle alignment", e))
    }
}

/// Where the bytes of an output archive member come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bytes {
    /// A range of the input archive.
    Input {
        /// Absolute offset in the input.
        offset: u64,
        /// Size.
        size: u64,
    },
    /// A range of one of [`ArchivePlan::buffers`].
    Buffer {
        /// Index into the buffers.
        index: usize,
        /// Offset in that buffer.
        offset: u64,
        /// Size.
        size: u64,
    },
}

/// One member of an output archive (spec/archive.md AR-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveMember {
    /// The member name: a name inside the archive, never a path.
    pub name: Vec<u8>,
    /// Its bytes.
    pub data: Bytes,
}

/// What `-unbundle -type=a` writes: one archive per target, in `-targets`
/// order, up to the first target that fails (LLVM writes the archives of
/// the targets before it, AR-6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivePlan {
    /// Bytes computed by the plan: decompressed members (CCOB, 19/22) and
    /// host objects without their bundle sections (19/22).
    pub buffers: Vec<Vec<u8>>,
    /// The members of each archive to write, in order.
    pub archives: Vec<Vec<ArchiveMember>>,
    /// The symbols of the members of each archive (AR-5).
    pub symbols: Vec<Vec<Symbolic>>,
    /// The failure after the archives above are written.
    pub error: Option<BundlerError>,
}

impl ArchivePlan {
    /// The bytes of `b` (`input` is the archive the plan was made from).
    pub fn bytes<'a>(&'a self, input: &'a [u8], b: &Bytes) -> &'a [u8] {
        let (src, offset, size): (&[u8], u64, u64) = match *b {
            Bytes::Input { offset, size } => (input, offset, size),
            Bytes::Buffer {
                index,
                offset,
                size,
            } => (
                self.buffers.get(index).map_or(&[][..], Vec::as_slice),
                offset,
                size,
            ),
        };
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let end = usize::try_from(offset.saturating_add(size)).unwrap_or(usize::MAX);
        src.get(start..end).unwrap_or(&[])
    }

    /// The members of archive `i` with their bytes.
    pub fn members<'a>(&'a self, input: &'a [u8], i: usize) -> Vec<hda::OutMember<'a>> {
        self.archives.get(i).map_or_else(Vec::new, |ms| {
            ms.iter()
                .map(|m| hda::OutMember {
                    name: &m.name,
                    data: self.bytes(input, &m.data),
                })
                .collect()
        })
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
            let member = m.name_str();
            match hda::conflict(&ids) {
                None => {}
                Some(hda::Conflict::Pair(a, b)) => {
                    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
                    return Err(BundlerError::with(
                        format!("conflicting TargetIDs [{a}, {b}] found in {member} of {name}"),
                        Error::at(
                            rules::AR_7,
                            m.header_offset,
                            format!("'{b}' sets a feature that '{a}' leaves Any"),
                        ),
                    ));
                }
                Some(hda::Conflict::Malformed(id)) => {
                    let pos = entries
                        .iter()
                        .find(|e| e.id == id)
                        .map_or(m.data_offset, |e| m.data_offset + e.id_pos);
                    return Err(BundlerError::with(
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
                    ));
                }
            }
        }
        Ok(())
    }

    /// `UnbundleArchive`: decide what each target's archive holds. `name`
    /// is the input's path as given (LLVM's messages name it).
    pub fn plan_archive(
        &self,
        v: &Validated,
        input: &[u8],
        name: &str,
    ) -> Result<ArchivePlan, BundlerError> {
        let r = self.release;
        if self.check_input_archive && r >= Release::L19 {
            self.check_archive(input, name)?;
        }
        let members = archive_members(input)?;
        let mut buffers: Vec<Vec<u8>> = Vec::new();
        let mut archives: Vec<Vec<ArchiveMember>> = vec![Vec::new(); v.targets.len()];
        for m in &members {
            // 19 and 22 decompress a CCOB member first (AR-2).
            let decompressed: Option<Vec<u8>> = match ccob::llvm_decompress(m.data, r) {
                LlvmDecompress::Plain => None,
                LlvmDecompress::Data(d) => Some(d),
                LlvmDecompress::Fails(msg, e) => {
                    return Err(BundlerError::with(
                        format!("Failed to decompress code object: {msg}"),
                        e.rebase(m.data_offset)
                            .context(format!("in archive member '{}'", m.name_str())),
                    ));
                }
            };
            // Buffers this member adds: the decompressed bytes first (at
            // index `first`), then host objects computed from them.
            let first = buffers.len();
            let mut owned: Vec<Vec<u8>> = Vec::new();
            let data: &[u8] = decompressed.as_deref().unwrap_or(m.data);
            // Offsets inside a decompressed member are reported relative
            // to the member's data in the archive (the offset inside the
            // decompressed bytes, plus where the member starts).
            let report_base = m.data_offset;
            let context = if decompressed.is_some() {
                format!("in the decompressed archive member '{}'", m.name_str())
            } else {
                format!("in archive member '{}'", m.name_str())
            };
            let entries = self
                .llvm_entries(data)
                .map_err(|e| with_context(rebase(e, report_base), context.clone()))?;
            for e in &entries {
                let id = e.id_str();
                if r == Release::L22 && !Release::llvm22_well_formed(&id) {
                    return Err(BundlerError::with(
                        "Invalid bundle id read from code object",
                        Error::at(
                            rules::ID_1,
                            report_base + e.id_pos,
                            format!(
                                "entry ID '{}' does not have 5 or 6 '-'-separated fields",
                                id.escape_debug()
                            ),
                        )
                        .context(context.clone()),
                    ));
                }
                // 14 and 16 skip host entries ("we don't extract host code
                // yet"); 19 and 22 extract them (AR-3).
                if r <= Release::L16 && r.target_info(&id).is_some_and(|i| i.kind == "host") {
                    continue;
                }
                let targets: Vec<usize> = v
                    .targets
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| hda::compatible(r, &id, t, self.hip_openmp))
                    .map(|(i, _)| i)
                    .collect();
                if targets.is_empty() {
                    continue;
                }
                let in_range = e
                    .offset
                    .checked_add(e.size)
                    .is_some_and(|end| end <= data.len() as u64);
                if !in_range && !object::is_object_file(data) {
                    return Err(BundlerError::with(
                        "malformed bundle header",
                        Error::at(
                            rules::BIN_5,
                            report_base + e.record_pos,
                            format!(
                                "entry '{}': payload [0x{:x}, +0x{:x}) lies outside the member of {} bytes; LLVM {r} copies memory it does not own",
                                id.escape_debug(),
                                e.offset,
                                e.size,
                                data.len()
                            ),
                        )
                        .context(context.clone()),
                    ));
                }
                let piece = self
                    .piece_for(data, e)
                    .map_err(|err| with_context(rebase(err, report_base), context.clone()))?;
                let whole = data.len() as u64;
                let bytes = match (piece, decompressed.is_some()) {
                    (Piece::Range { offset, size }, false) => Bytes::Input {
                        offset: m.data_offset + offset,
                        size,
                    },
                    (Piece::Range { offset, size }, true) => Bytes::Buffer {
                        index: first,
                        offset,
                        size,
                    },
                    (Piece::WholeInput, false) => Bytes::Input {
                        offset: m.data_offset,
                        size: whole,
                    },
                    (Piece::WholeInput, true) => Bytes::Buffer {
                        index: first,
                        offset: 0,
                        size: whole,
                    },
                    (Piece::Empty, _) => Bytes::Input { offset: 0, size: 0 },
                    (Piece::Owned(o), _) => {
                        let size = o.len() as u64;
                        owned.push(o);
                        Bytes::Buffer {
                            index: first + usize::from(decompressed.is_some()) + owned.len() - 1,
                            offset: 0,
                            size,
                        }
                    }
                };
                let target_id = r.target_info(&id).map(|i| i.target_id).unwrap_or_default();
                let out_name = hda::member_name(m.name, e.id, &target_id);
                for t in targets {
                    archives[t].push(ArchiveMember {
                        name: out_name.clone(),
                        data: bytes,
                    });
                }
            }
            drop(entries);
            buffers.extend(decompressed);
            buffers.extend(owned);
        }
        let mut plan = ArchivePlan {
            buffers,
            archives: Vec::new(),
            symbols: Vec::new(),
            error: None,
        };
        for (i, t) in v.targets.iter().enumerate() {
            let ms = std::mem::take(&mut archives[i]);
            if ms.is_empty() && !self.allow_missing {
                plan.error = Some(BundlerError::with(
                    format!(
                        "no compatible code object found for the target '{t}' in heterogeneous archive library: {name}"
                    ),
                    Error::rule(
                        rules::AR_6,
                        format!("no member holds a code object compatible with '{t}'"),
                    ),
                ));
                break;
            }
            plan.archives.push(ms);
            let outs = plan.members(input, i);
            match hda::symbols(&outs) {
                Ok(s) => plan.symbols.push(s),
                Err((k, msg, err)) => {
                    plan.archives.pop();
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
        Ok(plan)
    }
}

fn rebase(e: BundlerError, base: u64) -> BundlerError {
    BundlerError {
        message: e.message,
        detail: e.detail.map(|d| d.rebase(base)),
    }
}

fn with_context(e: BundlerError, what: String) -> BundlerError {
    BundlerError {
        message: e.message,
        detail: e.detail.map(|d| d.context(what)),
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

/// The release's conflict check (`getConflictTargetIDCombination` per
/// `kind-triple`): the first target ID seen per processor (in sorted order)
/// is kept; a later one conflicts when it sets a feature the first leaves Any.
fn conflicting_targets(r: Release, raw: &[String], written: &[String]) -> Option<(String, String)> {
    use std::collections::BTreeMap;
    let mut groups: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (t, w) in raw.iter().zip(written) {
        let Some(info) = r.target_info(if r >= Release::L19 { w } else { t }) else {
            continue;
        };
        if info.target_id.is_empty() {
            continue;
        }
        let key = format!("{}-{}", info.kind, info.triple.as_str());
        groups
            .entry(key)
            .or_default()
            .insert(info.target_id.clone());
    }
    for (key, ids) in groups {
        let mut first: BTreeMap<String, target_id::TargetId> = BTreeMap::new();
        for id in &ids {
            let Ok(parsed) = target_id::parse(id) else {
                continue;
            };
            match first.get(&parsed.processor) {
                None => {
                    first.insert(parsed.processor.clone(), parsed);
                }
                Some(f) => {
                    let fm = f.feature_map();
                    if parsed
                        .features
                        .iter()
                        .any(|(n, _)| !fm.contains_key(n.as_str()))
                    {
                        let a = format!("{key}-{}", original(f));
                        let b = format!("{key}-{id}");
                        return Some((a, b));
                    }
                }
            }
        }
    }
    None
}

fn original(t: &target_id::TargetId) -> String {
    let mut s = t.processor.clone();
    for (n, f) in &t.features {
        s.push(':');
        s.push_str(n);
        s.push(if *f == target_id::Feature::On {
            '+'
        } else {
            '-'
        });
    }
    s
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
    fn id_str(&self) -> std::borrow::Cow<'_, str> {
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
