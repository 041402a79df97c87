//! Bundling: the layout of the binary bundle the release writes.

use super::{BundlerError, Job, Validated};
use crate::bundle::binary::{self, Layout};

/// What [`bundle_in_memory`] writes: the release, `-type`, `-bundle-align`
/// and `-compress` of a bundler command line, and the memory budget.
#[derive(Debug, Clone, Copy)]
pub struct BundleOptions<'a> {
    /// The release whose bytes are written.
    pub release: crate::Release,
    /// `-type` (`bc`, `o`, `hipi`, ...).
    pub file_type: &'a str,
    /// `-bundle-align` (clang's HIP driver passes 4096).
    pub align: u64,
    /// `-compress`: the CCOB version, method and level; `None`: plain.
    pub compress: Option<crate::bundle::ccob::WriteOptions>,
    /// How much of its own (header, padding) the bundle may take (CLI-6).
    pub budget: crate::budget::Budget,
}

/// The bundle `clang-offload-bundler -type=… -targets=… -bundle-align=…`
/// of `opts.release` writes for `entries` (target, payload), made in
/// memory: no input or output file, the release's checks of the targets
/// and type in its order, the same bytes as the drop-in.
///
/// ```
/// use offload_kit_llvm::bundler::{bundle_in_memory, BundleOptions};
/// use offload_kit_llvm::Release;
/// let opts = BundleOptions {
///     release: Release::L22,
///     file_type: "bc",
///     align: 1,
///     compress: None,
///     budget: Default::default(),
/// };
/// let host = ("host-x86_64-unknown-linux-gnu", &b"HOST"[..]);
/// let dev = ("hip-amdgcn-amd-amdhsa--gfx906", &b"DEV"[..]);
/// let bytes = bundle_in_memory(&[host, dev], opts).unwrap();
/// assert!(bytes.starts_with(b"__CLANG_OFFLOAD_BUNDLE__"));
/// assert!(bundle_in_memory(&[], opts).is_err());
/// ```
pub fn bundle_in_memory(
    entries: &[(&str, &[u8])],
    opts: BundleOptions<'_>,
) -> Result<Vec<u8>, BundlerError> {
    let job = Job {
        release: opts.release,
        file_type: opts.file_type.to_string(),
        targets: entries.iter().map(|(t, _)| t.to_string()).collect(),
        inputs: Vec::new(),
        outputs: Vec::new(),
        unbundle: false,
        list: false,
        allow_missing: false,
        align: opts.align,
        hip_openmp: false,
        check_input_archive: false,
        budget: opts.budget,
    };
    let v = job.validate_in_memory()?;
    let payloads: Vec<&[u8]> = entries.iter().map(|(_, p)| *p).collect();
    job.bundle_to_vec(&v, &payloads, opts.compress)
}

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

impl Job {
    /// The bundle this job writes, in memory, from the payloads `inputs`
    /// (one per target, as `-input=` names them), optionally compressed
    /// (`-compress`, zstd as the release's defaults): the bytes the drop-in
    /// writes to its output. For `-type=o` with an object-file host input,
    /// an object-file bundle (never compressed, as LLVM's objcopy path).
    ///
    /// ```
    /// use offload_kit_llvm::bundler::Job;
    /// use offload_kit_llvm::Release;
    /// let job = Job {
    ///     release: Release::L22,
    ///     file_type: "bc".into(),
    ///     targets: vec!["host-x86_64-unknown-linux-gnu".into(), "hip-amdgcn-amd-amdhsa--gfx906".into()],
    ///     inputs: vec!["h".into(), "d".into()],
    ///     outputs: vec!["out".into()],
    ///     unbundle: false,
    ///     list: false,
    ///     allow_missing: false,
    ///     align: 4096,
    ///     hip_openmp: false,
    ///     check_input_archive: false,
    ///     budget: Default::default(),
    /// };
    /// let v = job.validate().unwrap();
    /// let bytes = job.bundle_to_vec(&v, &[b"HOST", b"DEV"], None).unwrap();
    /// assert!(bytes.starts_with(b"__CLANG_OFFLOAD_BUNDLE__"));
    /// ```
    pub fn bundle_to_vec(
        &self,
        v: &Validated,
        inputs: &[&[u8]],
        compress: Option<crate::bundle::ccob::WriteOptions>,
    ) -> Result<Vec<u8>, BundlerError> {
        use crate::bundle::{ccob, object, text};
        use crate::{rules, Error};
        if inputs.len() != v.targets.len() {
            return Err(BundlerError::with(
                "number of input files and targets should match in bundling mode",
                Error::rule(
                    rules::CLI_1,
                    format!("{} inputs for {} targets", inputs.len(), v.targets.len()),
                ),
            ));
        }
        if let Some(o) = compress {
            if !self.release.ccob_versions_written().contains(&o.version) {
                return Err(BundlerError::llvm(format!(
                    "LLVM {} does not write compressed bundles of version {}",
                    self.release, o.version
                )));
            }
        }
        let compressed = |bundle: Vec<u8>| match compress {
            Some(opts) => ccob::compress(&bundle, opts)
                .map_err(|e| BundlerError::with("cannot compress the bundle", e)),
            None => Ok(bundle),
        };
        if let super::FileType::Object = v.file_type {
            let host = v.host_index.unwrap_or(0);
            if inputs.get(host).is_some_and(|h| object::is_object_file(h)) {
                let targets: Vec<&str> = self.targets.iter().map(String::as_str).collect();
                return object::bundle(self.release, &targets, inputs)
                    .map_err(|e| BundlerError::with("cannot write the object-file bundle", e));
            }
        }
        if let super::FileType::Text(c) = v.file_type {
            let entries: Vec<(&[u8], &[u8])> = v
                .targets
                .iter()
                .zip(inputs)
                .map(|(t, i)| (t.as_bytes(), *i))
                .collect();
            return compressed(text::write_to_vec(&entries, c));
        }
        let sizes: Vec<u64> = inputs.iter().map(|i| i.len() as u64).collect();
        let layout = self.plan_bundle(v, &sizes)?;
        // The payloads are the caller's; header and padding are the
        // writer's own: a huge alignment must not make a huge buffer (CLI-6).
        let own = layout.total - sizes.iter().sum::<u64>();
        if self.budget.exceeded(own) {
            return Err(BundlerError::with(
                "the bundle's header and padding do not fit the memory budget",
                Error::rule(
                    rules::CLI_6,
                    format!(
                        "{own} bytes of header and padding (alignment {})",
                        self.align
                    ),
                ),
            ));
        }
        let mut out = layout.header.clone();
        for (i, input) in inputs.iter().enumerate() {
            // Uncompressed, 14 and 16 seek to each offset and write the
            // payload, so an empty payload at the end never extends the
            // file; 19 and 22 pad (and a compressed bundle is laid out whole).
            if input.is_empty() && self.release.quirks().skips_empty_payloads && compress.is_none()
            {
                continue;
            }
            out.resize(layout.offsets[i] as usize, 0);
            out.extend_from_slice(input);
        }
        compressed(out)
    }
}
