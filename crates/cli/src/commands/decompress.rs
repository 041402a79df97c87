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
        let mut out = Vec::new();
        ccob::decompress_single(data, None, &mut out).map_err(|e| vec![e])?;
        return Ok(out.into());
    }
    Ok(data.into())
}

/// `file`, a compressed bundle, decompressed into `output` as it is
/// decoded (the library's `decompress_single`, which Python and the C ABI
/// call too, holding the bundle in memory within their budget); the output
/// is renamed into place only once its size and hash are verified.
pub(crate) fn decompress(file: &Path, output: &Path) -> Result<i32, Vec<Error>> {
    let input = Input::open(file).map_err(|e| vec![e])?;
    let mut out = output::OutputFile::create(output).map_err(|e| vec![e])?;
    ccob::decompress_single(input.bytes(), None, &mut out).map_err(|e| vec![e])?;
    out.commit().map_err(|e| vec![e])?;
    Ok(0)
}
