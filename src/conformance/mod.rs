//! Conformance runner: runs JSON corpus cases against implementations
//! described by adapter files and prints a case × implementation matrix.

/// Entry point of `offload-kit conformance ARGS…`; returns the exit status.
pub fn cli_main(args: Vec<String>) -> i32 {
    let _ = args;
    eprintln!("offload-kit conformance: not implemented yet");
    2
}
