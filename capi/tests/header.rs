//! `include/offload_kit.h` is what cbindgen makes of `src/lib.rs` now: a
//! stale header fails here. `OFFLOADKIT_BLESS=1` rewrites it.

#[test]
fn header_is_current() {
    let crate_dir = env!("CARGO_MANIFEST_DIR");
    let config = cbindgen::Config::from_file(format!("{crate_dir}/cbindgen.toml")).unwrap();
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads capi/src/lib.rs")
        .write(&mut out);
    let path = format!("{crate_dir}/../include/offload_kit.h");
    if std::env::var_os("OFFLOADKIT_BLESS").is_some() {
        std::fs::write(&path, &out).unwrap();
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == out,
        "include/offload_kit.h is stale: run OFFLOADKIT_BLESS=1 cargo test -p offload-kit-capi --test header"
    );
}
