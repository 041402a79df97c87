//! `offload-kit bundler`: the drop-in clang-offload-bundler at its default release.

use crate::Settings;
use offload_kit_format::Error;
use offload_kit_llvm::Release;

/// `offload-kit bundler`'s arguments, passed on as they are.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Options as clang-offload-bundler takes them.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub(crate) args: Vec<String>,
}

/// Run it: the drop-in prints its own errors and gives its own exit status.
pub(crate) fn run(a: Args, settings: Settings) -> Result<i32, Vec<Error>> {
    Ok(crate::bundler::main(
        "offload-kit bundler",
        a.args,
        Release::DEFAULT,
        settings,
    ))
}
