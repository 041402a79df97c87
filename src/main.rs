//! `offload-kit`: the native CLI, and the drop-in `clang-offload-bundler`
//! when invoked under that name.

mod cli;

fn main() {
    cli::exit_on_sigbus();
    let args_os: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(b) = offload_kit::budget::from_env() {
        offload_kit::budget::set(b);
    }
    let prog = args_os
        .first()
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = std::path::Path::new(&prog)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The drop-ins take text arguments, as LLVM's option parser does; the
    // native commands take any path the OS can name.
    let text = || -> Result<Vec<String>, i32> {
        args_os[1..]
            .iter()
            .map(|a| {
                a.to_str().map(str::to_string).ok_or_else(|| {
                    eprintln!("{prog}: error: argument {a:?} is not valid UTF-8");
                    1
                })
            })
            .collect()
    };
    let drop_in = |run: &dyn Fn(Vec<String>) -> i32| text().map_or_else(|c| c, run);
    let code = if name.starts_with("clang-offload-bundler") {
        drop_in(&|a| cli::bundler::main(&prog, a))
    } else if name.starts_with("clang-offload-packager") || name.starts_with("llvm-offload-binary")
    {
        drop_in(&|a| cli::packager::main(&prog, a, true))
    } else if name.starts_with("llvm-objdump") {
        drop_in(&|a| cli::offloading::main(&prog, cli::offloading::Tool::Objdump, a))
    } else if name.starts_with("llvm-readobj") {
        drop_in(&|a| cli::offloading::main(&prog, cli::offloading::Tool::Readobj, a))
    } else {
        cli::native::main(args_os)
    };
    std::process::exit(code);
}
