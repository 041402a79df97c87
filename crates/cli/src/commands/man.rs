//! `offload-kit man`: the manual pages, generated from the command
//! definitions.

use offload_kit_format::Error;
use std::path::PathBuf;

/// `offload-kit man`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Directory for offload-kit.1 and offload-kit-<command>.1.
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
}

/// Run it: the exit status, or the errors that make it exit 1.
/// `cli` is the command line's definition, which the pages describe.
pub(crate) fn run(a: Args, cli: clap::Command) -> Result<i32, Vec<Error>> {
    let page = crate::man::man_pages(cli, a.dir.as_deref())?;
    if a.dir.is_some() {
        return Ok(0);
    }
    crate::write_stdout(&page)
}
