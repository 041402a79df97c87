//! `offload-kit objdump`: the drop-in `llvm-objdump --offloading` at its default
//! release.

use crate::offloading::Tool;
use crate::Settings;
use offload_kit_format::Error;

/// `offload-kit objdump`'s arguments, passed on as they are.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Options and files as llvm-objdump takes them.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub(crate) args: Vec<String>,
}

/// Run it: the drop-in prints its own errors and gives its own exit status.
pub(crate) fn run(a: Args, settings: Settings) -> Result<i32, Vec<Error>> {
    Ok(crate::offloading::native(Tool::Objdump, a.args, settings))
}
