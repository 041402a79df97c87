//! Placeholder until the conformance runner lands.
fn main() {}
