//! `-list`: the IDs the release prints for an input.

use super::{BundlerError, FileType, Job};
use crate::bundle::{binary, text};
use crate::source::Source;

impl Job {
    /// LLVM main's `-list` of the input `raw` (spec/ccob.md, CCOB-4, *LLVM
    /// main*): the IDs of each blob of [`ccob::main_blobs`] in turn, each
    /// decompressed as main does and listed with [`Job::plan_list`].
    /// `report` is told each blob and what it decompressed to, as for
    /// [`Job::plan_unbundle_main`]. Returns the IDs listed before an error
    /// with the error: main prints them before it fails.
    ///
    /// [`ccob::main_blobs`]: crate::bundle::ccob::main_blobs
    pub fn plan_list_main(
        &self,
        raw: &dyn Source,
        report: &mut super::DecompressReport<'_>,
    ) -> (Vec<String>, Option<BundlerError>) {
        let mut ids = Vec::new();
        let r = self.for_each_main_blob(
            raw,
            crate::bundle::ccob::MainWalk::List,
            report,
            &mut |_, buf, _| {
                ids.extend(self.plan_list(&buf)?);
                Ok(())
            },
        );
        (ids, r.err())
    }

    /// IDs `-list` prints for `src` (already decompressed, see
    /// [`Job::decompress_input`], or a [`Prefix`] of a compressed input
    /// decoded only as far as its bundle header, see
    /// [`ccob::llvm_list_prefix`]). A text bundle is scanned window by
    /// window ([`crate::source::WINDOW`]), so that listing a multi-GB one keeps
    /// about one window of it resident.
    ///
    /// [`Prefix`]: crate::source::Prefix
    /// [`ccob::llvm_list_prefix`]: crate::bundle::ccob::llvm_list_prefix
    pub fn plan_list(&self, src: &dyn Source) -> Result<Vec<String>, BundlerError> {
        if let Some(FileType::Text(c)) = FileType::parse(&self.file_type, self.release) {
            return text::llvm_list(src, 0, c, self.release)
                .map_err(|e| BundlerError::with("malformed text bundle", e));
        }
        // main's `listBundleIDs` goes on after the first bundle (BIN-10).
        if self.release.quirks().list_walks_every_bundle && self.binary_handler(src.bytes()) {
            return binary::llvm_main_list(src.bytes(), 0, self.budget)
                .map_err(|e| BundlerError::with("LLVM main cannot list this input", e));
        }
        Ok(self
            .llvm_entries(src)?
            .iter()
            .map(|e| e.id_str().into_owned())
            .collect())
    }
}
