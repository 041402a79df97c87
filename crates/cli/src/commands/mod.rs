//! The native commands, a file each: its options (`Args`, clap) and its
//! `run(args, settings)`, which returns the exit status or the errors that
//! make it exit 1 (printed once, by `native::main`). The drop-in commands
//! (`bundler`, `packager`, `objdump`, `readobj`) hand their arguments to
//! the drop-in, which speaks LLVM's option syntax and prints its own
//! errors; `conformance` to the corpus runner's own syntax.

pub(crate) mod bundler;
pub(crate) mod check;
pub(crate) mod completions;
pub(crate) mod compress;
pub(crate) mod conformance;
pub(crate) mod convert;
pub(crate) mod decompress;
pub(crate) mod demo;
pub(crate) mod dropins;
pub(crate) mod extract;
pub(crate) mod generate;
pub(crate) mod inspect;
pub(crate) mod list;
pub(crate) mod man;
pub(crate) mod objdump;
pub(crate) mod packager;
pub(crate) mod readobj;
pub(crate) mod validate;
pub(crate) mod verify;
