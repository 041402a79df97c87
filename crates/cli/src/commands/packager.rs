//! `offload-kit packager`: the drop-in clang-offload-packager / llvm-offload-binary at
//! its default release.

use crate::Settings;
use offload_kit_format::Error;
use offload_kit_llvm::Release;

/// `offload-kit packager`'s arguments, passed on as they are.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Options as clang-offload-packager takes them.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub(crate) args: Vec<String>,
}

/// Run it: the drop-in prints its own errors and gives its own exit status.
pub(crate) fn run(a: Args, settings: Settings) -> Result<i32, Vec<Error>> {
    let prog = "offload-kit packager";
    Ok(crate::packager::main(
        prog,
        a.args,
        false,
        Release::DEFAULT,
        settings,
    ))
}
