//! How the release reads an input: decompression first
//! ([`Job::decompress_input`]), then the entries its file handler yields
//! (text, object-file or binary bundle handler), then what it writes for
//! one entry.

use super::{BundlerError, FileType, Job, Piece};
use crate::bundle::binary::{self, LlvmView};
use crate::bundle::ccob::{self, LlvmDecompress};
use crate::bundle::{object, text};
use crate::error::Error;
use crate::profile::Release;
use crate::rules;
use crate::source::Source;

/// What [`Job::for_each_main_blob`] gives each blob to: its start in the
/// input, its bytes (decompressed where it was compressed) and whether it
/// was decompressed.
type BlobVisitor<'a> = dyn FnMut(u64, &[u8], bool) -> Result<(), BundlerError> + 'a;
impl Job {
    /// Decompress the input first when it is a compressed bundle and the
    /// release reads them (19, 22); `None` when the bytes are used as they are.
    pub fn decompress_input(&self, input: &[u8]) -> Result<Option<Vec<u8>>, BundlerError> {
        match ccob::llvm_decompress_within(input, self.release, self.budget) {
            LlvmDecompress::Plain => Ok(None),
            LlvmDecompress::Data(d) => Ok(Some(d)),
            LlvmDecompress::Fails(m, e) => Err(BundlerError::with(
                format!("Failed to decompress input: {m}"),
                e,
            )),
        }
    }

    /// LLVM main's walk over the blobs of `raw` ([`ccob::main_blobs`]):
    /// each blob decompressed as main does (told to `report` with the
    /// seconds it took), then given to `f` with its start in `raw` and
    /// whether it was decompressed. Errors in an uncompressed blob are
    /// moved to their offsets in `raw`.
    pub(super) fn for_each_main_blob(
        &self,
        raw: &dyn Source,
        walk: ccob::MainWalk,
        report: &mut super::DecompressReport<'_>,
        f: &mut BlobVisitor<'_>,
    ) -> Result<(), BundlerError> {
        for blob in ccob::main_blobs(raw, walk) {
            let (start, len) =
                blob.map_err(|e| BundlerError::with("LLVM main cannot read this input", e))?;
            let blob = &raw.bytes()[start as usize..(start + len) as usize];
            let started = std::time::Instant::now();
            let decompressed = self.decompress_input(blob)?;
            report(
                blob,
                decompressed.as_deref(),
                started.elapsed().as_secs_f64(),
            );
            let buf: &[u8] = decompressed.as_deref().unwrap_or(blob);
            f(start, buf, decompressed.is_some()).map_err(|e| match decompressed {
                Some(_) => e,
                None => e.rebased(start),
            })?;
        }
        Ok(())
    }

    /// Whether the release reads `data` with its binary handler:
    /// `-type=bc`-like types, and `-type=o`/`a` inputs that are no object.
    pub(super) fn binary_handler(&self, data: &[u8]) -> bool {
        match FileType::parse(&self.file_type, self.release) {
            Some(FileType::Text(_)) => false,
            Some(FileType::Object | FileType::Archive) => !object::is_object_file(data),
            _ => true,
        }
    }

    /// The entries the release's file handler yields for `src`, in its
    /// order (for a [`Prefix`](crate::source::Prefix), from its bundle
    /// header).
    pub(super) fn llvm_entries<'a, S: Source + ?Sized>(
        &self,
        src: &'a S,
    ) -> Result<Vec<binary::Entry<'a>>, BundlerError> {
        let data = src.bytes();
        match FileType::parse(&self.file_type, self.release) {
            Some(FileType::Text(c)) => Ok(text::llvm_entries(&data, 0, c, self.release)
                .map_err(|e| BundlerError::with("malformed text bundle", e))?
                .iter()
                .filter_map(|e| e.entry_in(data, 0))
                .collect()),
            Some(FileType::Object | FileType::Archive) if object::is_object_file(data) => {
                let entries = object::llvm_list(data, self.release)
                    .map_err(|e| BundlerError::with("invalid object file", e))?;
                Ok(entries
                    .into_iter()
                    .map(object::Entry::to_binary_entry)
                    .collect())
            }
            _ => match binary::llvm_read(src, 0, self.release) {
                LlvmView::NoBundles => Ok(vec![]),
                LlvmView::Entries(e) => Ok(e),
                LlvmView::Crash(e) => Err(BundlerError::with("malformed bundle header", e)),
            },
        }
    }

    /// What unbundling writes for entry `e`: its bytes, except that in an
    /// object file a section of exactly one 0x00 byte stands for the host
    /// object (OBJ-11): 14/16 write the whole input, 19/22 strip it.
    pub(super) fn piece_for(
        &self,
        input: &[u8],
        e: &binary::Entry<'_>,
    ) -> Result<Piece, BundlerError> {
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
        if self.release.quirks().reads_inputs_whole {
            return Ok(Piece::WholeInput);
        }
        object::strip(input)
            .map(Piece::Owned)
            .map_err(|err| BundlerError::with("cannot remove the bundle sections", err))
    }
}

/// LLVM 22's check of an entry ID read from the input (ID-1): `None` when
/// the release is not 22 or the ID has 5 or 6 '-'-separated fields, else
/// the detail, at `pos`.
pub(super) fn malformed_id(r: Release, id: &str, pos: u64) -> Option<Error> {
    if r.quirks().refuses_malformed_ids && !Release::llvm22_well_formed(id) {
        return Some(Error::at(
            rules::ID_1,
            pos,
            format!(
                "entry ID '{}' does not have 5 or 6 '-'-separated fields",
                id.escape_debug()
            ),
        ));
    }
    None
}
