//! `offload-kit`: the native CLI, and the drop-ins when invoked under
//! LLVM's tool names (crates/cli).

fn main() {
    offload_kit_cli::main()
}
