//! Bundling: the layout of the binary bundle the release writes.

use super::{BundlerError, Job, Validated};
use crate::bundle::binary::{self, Layout};

impl Job {
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
