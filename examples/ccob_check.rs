//! Compress a bundle as LLVM 22 (v3) and 19 (v2) would: `ccob_check IN OUT_V3 OUT_V2`.
use offload_kit::bundle::ccob::{compress, Method, WriteOptions};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let data = std::fs::read(&a[1]).unwrap();
    std::fs::write(&a[2], compress(&data, WriteOptions::default()).unwrap()).unwrap();
    std::fs::write(
        &a[3],
        compress(
            &data,
            WriteOptions {
                version: 2,
                method: Method::Zstd,
                level: 3,
            },
        )
        .unwrap(),
    )
    .unwrap();
}
