//! `offload-kit`: the native CLI, and the drop-in `clang-offload-bundler`
//! when invoked under that name.

mod cli;

fn main() {
    cli::exit_on_sigbus();
    let args: Vec<String> = std::env::args().collect();
    if let Some(b) = offload_kit::budget::from_env() {
        offload_kit::budget::set(b);
    }
    let prog = args.first().cloned().unwrap_or_default();
    let name = std::path::Path::new(&prog)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let code = if name.starts_with("clang-offload-bundler") {
        cli::bundler::main(&prog, args[1..].to_vec())
    } else if name.starts_with("clang-offload-packager") || name.starts_with("llvm-offload-binary")
    {
        cli::packager::main(&prog, args[1..].to_vec(), true)
    } else {
        cli::native::main(args)
    };
    std::process::exit(code);
}
