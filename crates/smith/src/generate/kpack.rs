//! A ROCm kpack split (spec/kpack.md): a HIPK host whose device code went
//! into one archive per architecture, as ROCm's `split_artifacts` writes
//! them, the archives stored plain or zstd per kernel.
//!
//! ```
//! use offload_kit_smith::generate::{generate, kpack, Kind, Options};
//!
//! let split = generate(Kind::Kpack, 1, &Options::default()).unwrap();
//! // The host is `split.bytes`; each archive goes beside it under its name.
//! let (name, archive) = &split.companions[0];
//! assert!(name.starts_with("kpack-0000000000000001-gfx") && name.ends_with(".kpack"));
//! assert!(offload_kit_format::kpack::parse(archive).is_ok());
//! assert_eq!(kpack::archive_name("s", "gfx906"), "s-gfx906.kpack");
//! ```

use super::{host, pick, Cx, Draft};
use crate::host::elf::{self, Elf, SHF_ALLOC};
use offload_kit_format::kpack::{self, HostRef, Storage};

/// A file written beside the generated one: its name (in the same
/// directory) and bytes.
pub type Companion = (String, Vec<u8>);

/// The archive of `arch` for the split named `stem`, as the host's search
/// path finds it (`@GFXARCH@` replaced).
pub fn archive_name(stem: &str, arch: &str) -> String {
    format!("{stem}-{arch}.kpack")
}

/// A HIPK host and its archives: the host's `.hipFatBinSegment` wrapper
/// says `HIPK`, its `.hip_fatbin` is `NOBITS`, and its `.rocm_kpack_ref`
/// names `<stem>-@GFXARCH@.kpack` and the kernel name every archive files
/// its code object under (`<kernel>#0`, as the runtime looks it up).
pub(crate) fn build(mut cx: Cx<'_>, stem: &str) -> Option<(Draft, Vec<Companion>)> {
    let max = if cx.small { 1 } else { 3 };
    // One code object per processor: the archives are keyed by architecture.
    let devices = cx.ids.amdgcn_devices(cx.rng, max);
    if devices.is_empty() {
        return None;
    }
    let kernel = format!("lib/lib{stem}.so");
    let key = format!("{kernel}#0");
    let storage = if cx.rng.chance(50) {
        Storage::Plain
    } else {
        Storage::Zstd(1 + cx.rng.below(9) as i32)
    };
    let mut companions = Vec::new();
    let mut fatbin_size = 0u64;
    for (id, arch) in &devices {
        let code = pick::payload_for(&mut cx, id);
        fatbin_size += code.len() as u64;
        let archive = kpack::write(storage, stem, arch, &[(&key, arch, &code)]);
        companions.push((archive_name(stem, arch), archive));
    }
    let r = HostRef {
        search_paths: vec![archive_name(stem, "@GFXARCH@")],
        kernel_name: kernel.clone(),
    };
    // The wrapper: magic, version 1, the (zeroed) fat binary pointer, and
    // reserved1, which the runtime reads as the code-object index.
    let mut wrapper = kpack::HOST_MAGIC.to_vec();
    wrapper.extend(1u32.to_le_bytes());
    wrapper.extend([0u8; 16]);
    let sections: [(&str, &[u8], u64); 3] = [
        (kpack::WRAPPER_SECTION, &wrapper, SHF_ALLOC),
        (crate::bundle::fatbin::HIP_FATBIN, &[], SHF_ALLOC),
        (kpack::REF_SECTION, &r.to_bytes(), SHF_ALLOC),
    ];
    let mut bytes = elf::add_sections(&host::host_object(), &sections).ok()?;
    // The splitter leaves `.hip_fatbin` its size and alignment (FAT-4) but
    // no bytes in the file.
    let header = Elf::parse(&bytes)
        .ok()?
        .section_by_name(crate::bundle::fatbin::HIP_FATBIN)?
        .header_pos as usize;
    bytes[header + 4..header + 8].copy_from_slice(&elf::SHT_NOBITS.to_le_bytes());
    bytes[header + 32..header + 40].copy_from_slice(&fatbin_size.to_le_bytes());
    let align = crate::bundle::fatbin::FATBIN_ALIGN;
    bytes[header + 48..header + 56].copy_from_slice(&align.to_le_bytes());
    let arches: Vec<&str> = devices.iter().map(|(_, a)| a.as_str()).collect();
    let description = format!(
        "HIPK host of kernel '{kernel}' and {} {} archive(s): {}",
        arches.len(),
        match storage {
            Storage::Plain => "plain".to_string(),
            Storage::Zstd(l) => format!("zstd level {l}"),
        },
        arches.join(", ")
    );
    let draft = Draft {
        bytes,
        description,
        violation: None,
    };
    Some((draft, companions))
}
