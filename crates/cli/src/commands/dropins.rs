//! `offload-kit dropins`: a directory of LLVM's offload tools that run
//! offload-kit as one release.

use crate::Settings;
use offload_kit_format::Error;
use offload_kit_llvm::Release;
use std::path::PathBuf;

/// `offload-kit dropins`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The release the drop-ins reproduce.
    #[arg(long = "llvm-version")]
    pub(crate) llvm: Release,
    /// The directory (created if need be).
    pub(crate) dir: PathBuf,
    /// Replace files there that are not offload-kit (LLVM's own tools).
    #[arg(long)]
    pub(crate) force: bool,
}

/// Run it: the exit status, or the errors that make it exit 1.
pub(crate) fn run(a: Args, _: Settings) -> Result<i32, Vec<Error>> {
    crate::dropins::run(a.llvm, &a.dir, a.force)
}
