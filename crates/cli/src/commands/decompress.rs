//! `offload-kit decompress`: a compressed bundle (CCOB) into the bundle it
//! holds, its sizes and hash verified.

use crate::Input;
use crate::Settings;
use offload_kit_format::Error;
use offload_kit_io::output;
use offload_kit_llvm::bundle::ccob;
use std::path::{Path, PathBuf};

/// `offload-kit decompress`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Input CCOB file.
    pub(crate) file: PathBuf,
    /// Output file.
    #[arg(short, long)]
    pub(crate) output: PathBuf,
}

/// Run it: the exit status, or the errors that make it exit 1.
pub(crate) fn run(a: Args, _: Settings) -> Result<i32, Vec<Error>> {
    decompress(&a.file, &a.output)
}

/// The uncompressed bytes of `data`: the bundle itself, or the verified
/// content of a single CCOB blob.
pub(crate) fn uncompressed(data: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, Vec<Error>> {
    if ccob::is_ccob(data) {
        let blobs = ccob::blobs(data, 0).map_err(|e| vec![e])?;
        if blobs.len() != 1 {
            return Err(vec![Error::other(format!(
                "the file holds {} compressed bundles; convert one at a time",
                blobs.len()
            ))]);
        }
        return Ok(ccob::decompress_strict(data, 0)
            .map_err(|e| vec![e])?
            .data
            .into());
    }
    Ok(data.into())
}

/// `file`, a compressed bundle, decompressed into `output`.
pub(crate) fn decompress(file: &Path, output: &Path) -> Result<i32, Vec<Error>> {
    let input = Input::open(file).map_err(|e| vec![e])?;
    if !ccob::is_ccob(input.bytes()) {
        return Err(vec![Error::at(
            offload_kit_format::rules::CCOB_1,
            0,
            "not a compressed bundle",
        )]);
    }
    let bundle = uncompressed(input.bytes())?;
    output::write_file(output, &bundle).map_err(|e| vec![e])?;
    Ok(0)
}
