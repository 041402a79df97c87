//! HIPK hosts (spec/kpack.md HIPK-2) on the command line: the library's
//! lookup (`offload_kit_inspect::hipk`) with files the CLI maps, for
//! `check`, `inspect`, `extract --gpu` and `convert`.

use super::Input;
use offload_kit_format::kpack::HostRef;
use offload_kit_format::Error;
pub(super) use offload_kit_inspect::hipk::{
    archives, few, for_each_filed, override_paths, Finder, Located, Outcome,
};
/// The host's reference and the code-object index of each of its
/// wrappers (one per translation unit), if `data` is a HIPK host.
pub(super) use offload_kit_inspect::split_host::split_host as host_ref;
use offload_kit_llvm::budget::Budget;
use std::path::{Path, PathBuf};

/// The CLI's way of opening a file for the lookup: mapped ([`Input`]).
pub(super) fn open(path: &Path) -> Result<offload_kit_inspect::hipk::Bytes, Error> {
    Ok(Box::new(Input::open(path)?))
}

/// The library's lookup for the host at `path`, files opened by the CLI,
/// code objects decoded within `budget`.
pub(super) fn host<'a>(
    path: &'a Path,
    reference: &'a HostRef,
    indices: &'a [u64],
    given: Option<&'a [PathBuf]>,
    budget: Budget,
) -> offload_kit_inspect::hipk::Host<'a> {
    offload_kit_inspect::hipk::Host {
        path,
        reference,
        indices,
        given,
        open: &open,
        budget,
    }
}
