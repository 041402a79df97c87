//! `offload-kit check`: which code object the HIP runtime would load on
//! each GPU.

use crate::Settings;
use offload_kit_format::Error;
use std::path::PathBuf;

/// `offload-kit check`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Input files and directories.
    #[arg(required = true)]
    pub(crate) paths: Vec<PathBuf>,
    /// The GPU: its target ID (gfx90a:sramecc+:xnack-), agent name (gfx90a: each xnack/sramecc
    /// mode is checked) or ISA name as rocminfo prints it (amdgcn-amd-amdhsa--gfx90a:xnack-), or
    /// `auto` for this machine's GPUs (KFD topology; OFFLOAD_KIT_KFD_TOPOLOGY names another);
    /// repeatable.
    #[arg(long, required = true)]
    pub(crate) gpu: Vec<String>,
    /// Print one JSON document (schema "offload-kit-check/1").
    #[arg(long)]
    pub(crate) json: bool,
    /// For a HIPK host (ROCm kpack split): the archives to search, `:`-separated, in place
    /// of the host's search paths (as ROCM_KPACK_PATH, which is read when this is absent).
    #[arg(long = "kpack-path")]
    pub(crate) kpack_path: Option<String>,
    /// Refuse files that break any spec rule. Without it, what clang 14-16 wrote and
    /// the HIP runtime still reads (ID-5 entry IDs, BIN-10 trailing bytes) is read and
    /// warned about.
    #[arg(long)]
    pub(crate) strict: bool,
}

/// Run it: the exit status, or the errors that make it exit 1.
pub(crate) fn run(a: Args, settings: Settings) -> Result<i32, Vec<Error>> {
    let how = (a.strict, a.kpack_path.as_deref());
    crate::inspect::run_check(&a.paths, &a.gpu, a.json, how, settings)
}
