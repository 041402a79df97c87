//! `offload-kit conformance`: the corpus runner (its own option syntax, conformance/README.md).

use crate::Settings;
use offload_kit_format::Error;

/// `offload-kit conformance`'s arguments, passed on as they are.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Runner options (`--help` lists them).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub(crate) args: Vec<String>,
}

/// Run it: the runner prints its own errors and gives its own exit status.
pub(crate) fn run(a: Args, settings: Settings) -> Result<i32, Vec<Error>> {
    Ok(crate::conformance::main(a.args, settings))
}
