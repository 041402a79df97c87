//! `-list`: the IDs the release prints for an input.

use super::{BundlerError, FileType, Job};
use crate::bundle::text;
use crate::source::Source;

impl Job {
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
    /// [`ccob::llvm_list_prefix`](crate::bundle::ccob::llvm_list_prefix)).
    pub fn plan_list_prefix(&self, prefix: &[u8], total: u64) -> Result<Vec<String>, BundlerError> {
        Ok(self
            .llvm_entries_prefix(prefix, total)?
            .iter()
            .map(|e| e.id_str().into_owned())
            .collect())
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
}
