//! `offload-kit inspect`: what files hold, down to each code object.

use crate::Settings;
use offload_kit_format::Error;
use std::path::PathBuf;

/// `offload-kit inspect`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Input files and directories.
    #[arg(required = true)]
    pub(crate) paths: Vec<PathBuf>,
    /// Print one JSON document (schema "offload-kit-inspect/1").
    #[arg(long)]
    pub(crate) json: bool,
    /// Refuse files that break any spec rule. Without it, what clang 14-16 wrote and
    /// LLVM 22 and the HIP runtime still read (ID-5 entry IDs such as
    /// hip-amdgcn-amd-amdhsa-gfx906, BIN-10 trailing bytes) is read and warned about.
    #[arg(long)]
    pub(crate) strict: bool,
}

/// Run it: the exit status, or the errors that make it exit 1.
pub(crate) fn run(a: Args, settings: Settings) -> Result<i32, Vec<Error>> {
    crate::inspect::run(&a.paths, a.json, a.strict, settings)
}
