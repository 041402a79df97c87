//! Binary bundles made by hand, and the entries properties draw.
//! Included by crates/format/tests and by the root crate's tests; each
//! uses part of it.
#![allow(dead_code)]

// What the including file imports and defines (its constants, its
// fixtures), shared with it.
use super::*;

pub const HOST: &[u8] = b"host-x86_64-unknown-linux-gnu-";

pub const GFX906: &[u8] = b"hip-amdgcn-amd-amdhsa--gfx906";

pub const GFX90A: &[u8] = b"hip-amdgcn-amd-amdhsa--gfx90a:xnack+";

pub fn good() -> Vec<u8> {
    binary::write_to_vec(&[(HOST, b"HOSTDATA"), (GFX906, b"DEVDATA")], 1).unwrap()
}

pub fn put(d: &mut [u8], at: usize, v: u64) {
    d[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

pub fn id_pool() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(vec![
        HOST.to_vec(),
        GFX906.to_vec(),
        GFX90A.to_vec(),
        b"hipv4-amdgcn-amd-amdhsa--gfx908:sramecc-:xnack+".to_vec(),
        b"openmp-nvptx64-nvidia-cuda-unknown-sm_70".to_vec(),
        b"openmp-amdgcn-amd-amdhsa--gfx1030".to_vec(),
        b"hip-spirv64-amd-amdhsa--amdgcnspirv".to_vec(),
        b"hip-amdgcn-amd-amdhsa--gfx9-4-generic:xnack+".to_vec(),
    ])
}

pub fn entries() -> impl Strategy<Value = Vec<(Vec<u8>, Vec<u8>)>> {
    prop::collection::vec((id_pool(), prop::collection::vec(any::<u8>(), 0..64)), 1..6).prop_map(
        |v| {
            let mut seen = std::collections::BTreeSet::new();
            let mut host = false;
            v.into_iter()
                .filter(|(id, _)| seen.insert(id.clone()))
                .filter(|(id, _)| {
                    let h = id.starts_with(b"host");
                    let keep = !(h && host);
                    host |= h;
                    keep
                })
                .collect()
        },
    )
}
