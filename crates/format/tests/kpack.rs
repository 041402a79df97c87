//! kpack archives (spec/kpack.md) read by the spec core, on archives made
//! in memory. The archives ROCm's own tools wrote, and the command line
//! over them, are tested in the root crate's tests/kpack.rs.

use offload_kit_format::kpack;

#[test]
fn empty_frames_cost_no_memory() {
    // A zstd region of 2^20 empty frames and a TOC naming one: parsed,
    // and only the named frame held (the region's index once took 16
    // bytes per 4-byte frame header).
    let n: u32 = 1 << 20;
    let mut a = vec![0u8; 0x40];
    a[..4].copy_from_slice(b"KPAK");
    a[4..8].copy_from_slice(&1u32.to_le_bytes());
    let region_at = a.len() as u64;
    a.extend(n.to_le_bytes());
    a.resize(a.len() + 4 * n as usize, 0);
    let size = a.len() as u64 - region_at;
    let entry = rmpv::Value::Map(vec![
        ("ordinal".into(), 7u64.into()),
        ("original_size".into(), 0u64.into()),
        ("type".into(), "hsaco".into()),
    ]);
    let toc = rmpv::Value::Map(vec![
        ("format_version".into(), 1u64.into()),
        ("compression_scheme".into(), "zstd-per-kernel".into()),
        ("group_name".into(), "g".into()),
        ("gfx_arch_family".into(), "gfx906".into()),
        (
            "gfx_arches".into(),
            rmpv::Value::Array(vec!["gfx906".into()]),
        ),
        ("zstd_offset".into(), region_at.into()),
        ("zstd_size".into(), size.into()),
        (
            "toc".into(),
            rmpv::Value::Map(vec![(
                "k#0".into(),
                rmpv::Value::Map(vec![("gfx906".into(), entry)]),
            )]),
        ),
    ]);
    let toc_at = a.len() as u64;
    a[8..16].copy_from_slice(&toc_at.to_le_bytes());
    rmpv::encode::write_value(&mut a, &toc).unwrap();
    let z = kpack::parse(&a).unwrap();
    let kpack::Scheme::ZstdPerKernel(f) = &z.scheme else {
        panic!("zstd")
    };
    assert_eq!((f.count, f.named.len()), (u64::from(n), 1));
    assert_eq!(z.blob(&z.kernels[0]), (region_at + 4 + 7 * 4 + 4, 0));
}
