//! `offload-kit verify`: every compressed bundle in a file, its sizes and
//! hash; every code object of a kpack archive.

use crate::Input;
use crate::Settings;
use offload_kit_format::source::Sub;
use offload_kit_format::{rules, Error};
use offload_kit_io::output;
use offload_kit_llvm::bundle::ccob;
use std::path::PathBuf;

/// `offload-kit verify`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Input file.
    pub(crate) file: PathBuf,
}

/// Run it: the exit status, or the errors that make it exit 1.
pub(crate) fn run(a: Args, settings: Settings) -> Result<i32, Vec<Error>> {
    let (file, budget) = (&a.file, settings.budget);
    let input = Input::open(file).map_err(|e| vec![e])?;
    let data = input.bytes();
    // A kpack archive: every blob decoded to its size (KPAK-3, KPAK-4).
    if offload_kit_format::kpack::is_kpack(data) {
        let a = offload_kit_inspect::validate_kpack(data, budget).map_err(Vec::from)?;
        let name = output::escape_controls(&file.to_string_lossy()).into_owned();
        outln!(
            "{name}: {} code object(s) of the kpack archive read to their sizes",
            a.kernels.len()
        );
        return Ok(0);
    }
    if !ccob::is_ccob(data) {
        // Compressed bundles inside (a .hip_fatbin, an archive member) are
        // verified as the strict reader lists them.
        let l = offload_kit_inspect::validate(&input, budget).map_err(Vec::from)?;
        // CCOBs, and compressed version 3 offload binaries (OB-19).
        let compressed: std::collections::BTreeSet<u64> = l
            .entries
            .iter()
            .filter_map(|e| {
                e.ccob_offset.or(e
                    .image
                    .as_ref()
                    .filter(|i| i.compressed)
                    .map(|i| i.binary_offset))
            })
            .collect();
        let name = output::escape_controls(&file.to_string_lossy()).into_owned();
        match compressed.len() {
            0 => outln!(
                "{name}: nothing to verify: nothing in it is compressed (a valid {} with {} entries)",
                l.container,
                l.entries.len()
            ),
            n => outln!(
                "{name}: {n} compressed bundle(s) or offload binaries verified (a valid {} with {} entries)",
                l.container,
                l.entries.len()
            ),
        }
        return Ok(0);
    }
    let blobs = ccob::blobs(data, 0).map_err(|e| vec![e])?;
    let mut errs = Vec::new();
    for b in &blobs {
        // Streamed: sizes and hash are checked as the stream decodes, and
        // nothing of the decompressed bundle is kept.
        let verified = Sub::new(&input, b.offset, b.len)
            .ok_or_else(|| Error::at(rules::CCOB_4, b.offset, "compressed bundle out of range"))
            .and_then(|blob| ccob::verify_prefix(&blob, b.offset, 0));
        match verified {
            Ok((h, _)) => outln!(
                "0x{:x}: CCOB v{} {:?}, {} -> {} bytes, hash 0x{:016x}: ok",
                b.offset,
                b.header.version,
                b.header.method().expect("checked"),
                b.len,
                h.uncompressed_size,
                b.header.hash_u64()
            ),
            Err(e) => errs.push(e),
        }
    }
    if errs.is_empty() {
        Ok(0)
    } else {
        Err(errs)
    }
}
