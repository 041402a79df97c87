//! The operations of `clang-offload-bundler` (bundle, unbundle, list) as a
//! selected LLVM release performs them.
//!
//! This module decides; it does no I/O. [`Job::validate`] reproduces the
//! release's command-line checks in its order, [`Job::plan_unbundle`]
//! returns which bytes go to which output, [`Job::plan_bundle`] returns the
//! layout to write. The CLI executes the plans (streaming copies, temp files).
//!
//! This module holds the public types: the options ([`Job`]), what validation
//! establishes ([`Validated`]) and the plans ([`Piece`], [`ArchivePlan`]).
//! The operations live in child modules: `validate.rs` (the command-line
//! checks), `input.rs` (decompression and the entries a release's file
//! handler yields), `list.rs`, `unbundle.rs`, `bundle.rs` and `archive.rs`
//! (`-unbundle -type=a`).

mod archive;
mod bundle;
mod input;
mod list;
mod unbundle;
mod validate;

pub use bundle::{bundle_in_memory, BundleOptions};
pub use unbundle::{missing_message, unbundle_in_memory, UnbundleOptions};

use crate::bundle::archive as hda;
use crate::host::symtab::Symbolic;
use crate::profile::Release;
use std::path::PathBuf;

/// A failure of the bundler, reported the way the release reports it.
pub type BundlerError = crate::error::LlvmError;

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
            "hipi" if release.quirks().hipi_file_type => FileType::Text("//"),
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
    /// How much decoded data the job may hold (`--max-memory`; CLI-6).
    pub budget: crate::budget::Budget,
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

impl Validated {
    /// The first target written as target `i` is.
    pub fn first_alike(&self, i: usize) -> usize {
        self.targets
            .iter()
            .position(|t| *t == self.targets[i])
            .unwrap_or(i)
    }

    /// The last target written as target `i` is.
    pub fn last_alike(&self, i: usize) -> usize {
        self.targets
            .iter()
            .rposition(|t| *t == self.targets[i])
            .unwrap_or(i)
    }
}

/// Told each buffer the release decompresses, with what it decompressed to
/// (`None`: kept as it is) and the seconds that took, in the release's
/// order: how the CLI prints `-verbose`'s report, which the library does
/// not print.
pub type DecompressReport<'a> = dyn FnMut(&[u8], Option<&[u8]>, f64) + 'a;

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
    /// No file: the release never opens this output. Its target is
    /// written like a later one, and LLVM keeps one output per target
    /// text, the last (`Worklist` in `UnbundleFiles`).
    NotWritten,
    /// Bytes computed by the plan (the host object of a fat object with its
    /// bundle sections removed, as LLVM 19 and 22 write it).
    Owned(Vec<u8>),
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
    /// The output (index into `-output`) each archive is written to: its
    /// target's own, or, for targets the release writes alike, the last
    /// of theirs (AR-5).
    pub outputs: Vec<usize>,
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
