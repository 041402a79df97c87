//! Image kinds and offload kinds per release (OB-12, OB-13).
//!
//! | value | image kind | 16 | 19 | 22 |     | value | offload kind | 16, 19 | 22 |
//! |---|---|---|---|---|---|---|---|---|---|
//! | 0 | none | ✓ | ✓ | ✓ | | 0 | none | ✓ | ✓ |
//! | 1 | object (`o`) | ✓ | ✓ | ✓ | | 1 | openmp | ✓ | ✓ |
//! | 2 | bitcode (`bc`) | ✓ | ✓ | ✓ | | 2 | cuda | ✓ | ✓ |
//! | 3 | cubin | ✓ | ✓ | ✓ | | 3 | hip | ✓ | — |
//! | 4 | fatbin | ✓ | ✓ | ✓ | | 4 | hip | — | ✓ |
//! | 5 | PTX (`s`) | ✓ | ✓ | ✓ | | 8 | sycl | — | ✓ |
//! | 6 | SPIR-V | — | — | ✓ (no name, not from `.spv`) | | | | | |

use crate::profile::Release;
use serde::Serialize;

/// What an image holds (`IMG_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImageKind {
    /// `IMG_None` (0): no image information.
    None,
    /// `IMG_Object` (1): an object file.
    Object,
    /// `IMG_Bitcode` (2): LLVM bitcode.
    Bitcode,
    /// `IMG_Cubin` (3): a CUDA object.
    Cubin,
    /// `IMG_Fatbinary` (4): a CUDA fat binary.
    Fatbinary,
    /// `IMG_PTX` (5): PTX assembly.
    Ptx,
    /// `IMG_SPIRV` (6, LLVM 22 and later): SPIR-V.
    Spirv,
}

impl ImageKind {
    /// Every image kind.
    pub const ALL: [ImageKind; 7] = [
        ImageKind::None,
        ImageKind::Object,
        ImageKind::Bitcode,
        ImageKind::Cubin,
        ImageKind::Fatbinary,
        ImageKind::Ptx,
        ImageKind::Spirv,
    ];

    /// The stored value.
    pub fn value(self) -> u16 {
        match self {
            ImageKind::None => 0,
            ImageKind::Object => 1,
            ImageKind::Bitcode => 2,
            ImageKind::Cubin => 3,
            ImageKind::Fatbinary => 4,
            ImageKind::Ptx => 5,
            ImageKind::Spirv => 6,
        }
    }

    /// Whether `release` defines this kind (SPIR-V: 22 only).
    pub fn defined_in(self, release: Release) -> bool {
        self != ImageKind::Spirv || release.quirks().spirv_image_kind
    }

    /// The kind a stored value means in `release`, if it defines one.
    pub fn from_value(v: u16, release: Release) -> Option<ImageKind> {
        ImageKind::ALL
            .into_iter()
            .find(|k| k.value() == v && k.defined_in(release))
    }

    /// `getImageKind`: the kind for a file extension (without the dot). The
    /// same in 16, 19 and 22.1.8 (`release` is kept for later releases).
    pub fn from_extension(ext: &str, release: Release) -> ImageKind {
        let _ = release;
        match ext {
            "o" => ImageKind::Object,
            "bc" => ImageKind::Bitcode,
            "cubin" => ImageKind::Cubin,
            "fatbin" => ImageKind::Fatbinary,
            "s" => ImageKind::Ptx,
            // 22.1.8 defines IMG_SPIRV but does not map "spv" to it (post-22
            // `main` does).
            _ => ImageKind::None,
        }
    }

    /// `getImageKindName`: the extension used in generated file names
    /// (empty for none, and for SPIR-V, which 22.1.8 does not name; post-22
    /// `main` writes `spv`).
    pub fn extension(self) -> &'static str {
        match self {
            ImageKind::None | ImageKind::Spirv => "",
            ImageKind::Object => "o",
            ImageKind::Bitcode => "bc",
            ImageKind::Cubin => "cubin",
            ImageKind::Fatbinary => "fatbin",
            ImageKind::Ptx => "s",
        }
    }

    /// The name `llvm-objdump --offloading` prints (16, 19 and 22 print
    /// `<none>` for SPIR-V).
    pub fn objdump_name(self) -> &'static str {
        match self {
            ImageKind::Object => "elf",
            ImageKind::Bitcode => "llvm ir",
            ImageKind::Cubin => "cubin",
            ImageKind::Fatbinary => "fatbinary",
            ImageKind::Ptx => "ptx",
            ImageKind::None | ImageKind::Spirv => "<none>",
        }
    }
}

/// `getImageKindName` of `release` for a stored value (empty when unknown).
pub fn image_kind_extension(v: u16, release: Release) -> &'static str {
    match ImageKind::from_value(v, release) {
        // main's getImageKindName names SPIR-V `spv`; 22.1.8's does not.
        Some(ImageKind::Spirv) if release.quirks().names_spirv => "spv",
        k => k.map_or("", ImageKind::extension),
    }
}

/// The `llvm-objdump --offloading` name of a stored image kind value.
pub fn image_kind_objdump_name(v: u16, release: Release) -> &'static str {
    match ImageKind::from_value(v, release) {
        // main's objdump names SPIR-V; 22.1.8's prints `<none>`.
        Some(ImageKind::Spirv) if release.quirks().names_spirv => "spir-v",
        k => k.map_or("<none>", ImageKind::objdump_name),
    }
}

/// The producer of an image (`OFK_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OffloadKind {
    /// `OFK_None` (0).
    None,
    /// `OFK_OpenMP` (1).
    OpenMp,
    /// `OFK_Cuda` (2).
    Cuda,
    /// `OFK_HIP`: 3 in 16 and 19, 4 in 22.
    Hip,
    /// `OFK_SYCL` (8, LLVM 22 and later).
    Sycl,
}

impl OffloadKind {
    /// Every offload kind.
    pub const ALL: [OffloadKind; 5] = [
        OffloadKind::None,
        OffloadKind::OpenMp,
        OffloadKind::Cuda,
        OffloadKind::Hip,
        OffloadKind::Sycl,
    ];

    /// The value `release` stores for this kind (`None`: SYCL before 22).
    pub fn value(self, release: Release) -> Option<u16> {
        let new = release.quirks().offload_kinds_22;
        match self {
            OffloadKind::None => Some(0),
            OffloadKind::OpenMp => Some(1),
            OffloadKind::Cuda => Some(2),
            OffloadKind::Hip => Some(if new { 4 } else { 3 }),
            OffloadKind::Sycl => new.then_some(8),
        }
    }

    /// The kind a stored value means in `release`.
    pub fn from_value(v: u16, release: Release) -> Option<OffloadKind> {
        OffloadKind::ALL
            .into_iter()
            .find(|k| k.value(release) == Some(v))
    }

    /// `getOffloadKind`: the kind for a `kind=` argument (anything unknown
    /// is none).
    pub fn from_name(name: &str, release: Release) -> OffloadKind {
        match name {
            "openmp" => OffloadKind::OpenMp,
            "cuda" => OffloadKind::Cuda,
            "hip" => OffloadKind::Hip,
            "sycl" if release.quirks().offload_kinds_22 => OffloadKind::Sycl,
            _ => OffloadKind::None,
        }
    }

    /// `getOffloadKindName`.
    pub fn name(self) -> &'static str {
        match self {
            OffloadKind::None => "none",
            OffloadKind::OpenMp => "openmp",
            OffloadKind::Cuda => "cuda",
            OffloadKind::Hip => "hip",
            OffloadKind::Sycl => "sycl",
        }
    }
}

/// `getOffloadKindName` of `release` for a stored value (`none` when unknown).
pub fn offload_kind_name(v: u16, release: Release) -> &'static str {
    OffloadKind::from_value(v, release).map_or("none", OffloadKind::name)
}

/// `getOffloadKind(name)` of `release` as the stored value.
pub fn offload_kind_value(name: &str, release: Release) -> u16 {
    OffloadKind::from_name(name, release)
        .value(release)
        .unwrap_or(0)
}

/// How each modelled release reads a stored offload kind value, for messages.
pub fn offload_kind_meanings(v: u16) -> String {
    let mut parts = Vec::new();
    for r in [Release::L16, Release::L19, Release::L22] {
        let n = OffloadKind::from_value(v, r).map_or("undefined", OffloadKind::name);
        parts.push(format!("{n} in LLVM {r}"));
    }
    parts.join(", ")
}

/// How each modelled release reads a stored image kind value, for messages.
pub fn image_kind_meanings(v: u16) -> String {
    let mut parts = Vec::new();
    for r in [Release::L16, Release::L19, Release::L22] {
        let n = match ImageKind::from_value(v, r) {
            Some(ImageKind::None) => "none",
            Some(ImageKind::Spirv) => "spirv",
            Some(k) => k.extension(),
            None => "undefined",
        };
        parts.push(format!("{n} in LLVM {r}"));
    }
    parts.join(", ")
}
