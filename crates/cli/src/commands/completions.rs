//! `offload-kit completions`: a shell completion script.

use offload_kit_format::Error;

/// `offload-kit completions`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The shell.
    pub(crate) shell: clap_complete::Shell,
}

/// Run it: the exit status, or the errors that make it exit 1.
/// `cli` is the command line's definition, which the script completes.
pub(crate) fn run(a: Args, mut cli: clap::Command) -> Result<i32, Vec<Error>> {
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cli, "offload-kit", &mut out);
    crate::write_stdout(&out)
}
