//! The native command line (clap): the global options and the command
//! table; each command's options and run are in `commands/`.

use super::commands;
use super::term::ColorChoice;
use clap::{CommandFactory, Parser, Subcommand};
use offload_kit_format::Error;
use offload_kit_llvm::budget::Budget;

/// offload-kit: read, check and write LLVM offload containers.
#[derive(Parser, Debug)]
#[command(name = "offload-kit", version, about)]
pub struct Cli {
    /// Most bytes of decoded data a command may hold beyond its outputs
    /// (CLI-6): bytes, or with K, M or G; default 256M, or
    /// OFFLOAD_KIT_MAX_MEMORY.
    #[arg(long = "max-memory", global = true, value_parser = parse_budget)]
    max_memory: Option<Budget>,
    /// When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    #[command(subcommand)]
    cmd: Cmd,
}

fn parse_budget(text: &str) -> Result<Budget, String> {
    Budget::parse(text).ok_or_else(|| format!("'{text}' is not a size (bytes, or with K, M or G)"))
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// List the entries of a container (auto-detected).
    List(commands::list::Args),
    /// Extract one entry (or all entries into a directory), or the bytes a
    /// code object URI names (`extract file://PATH#offset=N&size=M -o F`).
    Extract(commands::extract::Args),
    /// What files hold, down to each code object (processor, code object
    /// version, xnack/sramecc, kernels), and whether each entry's ID agrees
    /// with its code object (CO-1); directories are walked. Exit 0 when
    /// every file was read and nothing disagrees.
    Inspect(commands::inspect::Args),
    /// Which code object the HIP runtime would load on each GPU, per bundle
    /// (exact target ID, compatible, generic fallback), or why none fits;
    /// exit 0 when every file runs on every GPU.
    Check(commands::check::Args),
    /// Check a container against every rule of spec/; exit 0 only when it conforms.
    Validate(commands::validate::Args),
    /// Compress a bundle into a CCOB blob (default: version 3, zstd level 3, as LLVM 22).
    Compress(commands::compress::Args),
    /// Decompress a CCOB blob (verifying sizes and hash) into the bundle it holds.
    Decompress(commands::decompress::Args),
    /// Convert between uncompressed and CCOB v1/v2/v3; a fat binary's AMDGPU code objects to
    /// kpack archives and its host to a HIPK host finding them (`--to kpack`, -o a directory);
    /// a HIPK host back to a fat binary, or a kpack archive to a bundle (`--to bundle`).
    Convert(commands::convert::Args),
    /// Verify every compressed bundle in a file: sizes and hashes; exit 0 only if all check out.
    Verify(commands::verify::Args),
    /// Generate containers for fuzzing loaders: valid by default, or each breaking one rule (with a .json sidecar)
    Generate(commands::generate::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(commands::completions::Args),
    /// Write the manual pages (roff) generated from these definitions: the
    /// command's page on stdout, or one page per command into --dir.
    Man(commands::man::Args),
    /// Build a built-in example bundle, then list, validate and extract it.
    Demo(commands::demo::Args),
    /// Run the conformance corpus against offload-kit and LLVM releases (see conformance/README.md).
    #[command(disable_help_flag = true)]
    Conformance(commands::conformance::Args),
    /// The drop-in clang-offload-packager / llvm-offload-binary (LLVM option syntax; --llvm-version=16|19|22).
    #[command(disable_help_flag = true)]
    Packager(commands::packager::Args),
    /// The drop-in `llvm-objdump --offloading` of LLVM 22 (offload images, bundle entries extracted next to the input).
    #[command(disable_help_flag = true)]
    Objdump(commands::objdump::Args),
    /// The drop-in `llvm-readobj --offloading` of LLVM 22 (a code object URI per bundle entry).
    #[command(disable_help_flag = true)]
    Readobj(commands::readobj::Args),
    /// The drop-in clang-offload-bundler (LLVM option syntax; --llvm-version picks the release).
    #[command(disable_help_flag = true)]
    Bundler(commands::bundler::Args),
    /// Make DIR a directory of LLVM's offload tools (clang-offload-bundler,
    /// clang-offload-packager, llvm-offload-binary, as the release has them)
    /// that run offload-kit as that release: `clang-N -B DIR` then uses them.
    Dropins(commands::dropins::Args),
}

/// Run the native CLI; returns the exit status. `settings` are the run's
/// from the environment; the options given here override them.
pub(crate) fn main(args: Vec<std::ffi::OsString>, mut settings: super::Settings) -> i32 {
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    if let Some(b) = cli.max_memory {
        settings.budget = b;
    }
    settings.color = cli.color;
    match run(cli.cmd, settings) {
        Ok(code) => code,
        Err(errs) => {
            super::report_errors("", &errs, SHOWN_ERRORS, settings.color);
            1
        }
    }
}

/// Run one command: its exit status, or the errors that make it exit 1.
/// The drop-ins print their own errors and give their own exit status.
fn run(cmd: Cmd, settings: super::Settings) -> Result<i32, Vec<Error>> {
    match cmd {
        Cmd::List(a) => commands::list::run(a, settings),
        Cmd::Extract(a) => commands::extract::run(a, settings),
        Cmd::Inspect(a) => commands::inspect::run(a, settings),
        Cmd::Check(a) => commands::check::run(a, settings),
        Cmd::Validate(a) => commands::validate::run(a, settings),
        Cmd::Compress(a) => commands::compress::run(a, settings),
        Cmd::Decompress(a) => commands::decompress::run(a, settings),
        Cmd::Convert(a) => commands::convert::run(a, settings),
        Cmd::Verify(a) => commands::verify::run(a, settings),
        Cmd::Generate(a) => commands::generate::run(a, settings),
        Cmd::Completions(a) => commands::completions::run(a, Cli::command()),
        Cmd::Man(a) => commands::man::run(a, Cli::command()),
        Cmd::Demo(a) => commands::demo::run(a, settings),
        Cmd::Conformance(a) => commands::conformance::run(a, settings),
        Cmd::Packager(a) => commands::packager::run(a, settings),
        Cmd::Objdump(a) => commands::objdump::run(a, settings),
        Cmd::Readobj(a) => commands::readobj::run(a, settings),
        Cmd::Bundler(a) => commands::bundler::run(a, settings),
        Cmd::Dropins(a) => commands::dropins::run(a, settings),
    }
}

/// At most this many errors are printed; the rest are counted. A hostile
/// file can hold a million bad entries (issue 16): a screenful tells what
/// is wrong, `validate --json` lists every one.
const SHOWN_ERRORS: usize = 100;
