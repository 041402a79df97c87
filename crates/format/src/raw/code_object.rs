//! Raw definitions of device code objects: the ELF constants of AMDGPU and
//! CUDA objects and LLVM 22's table of AMDGPU processors by `EF_AMDGPU_MACH`
//! (numbers from `llvm/include/llvm/BinaryFormat/ELF.h` and
//! `llvm/lib/Object/ELFObjectFile.cpp`, LLVM 22.1.8).
//!
//! # Example
//!
//! ```
//! use offload_kit_format::raw::code_object::{AMDGPU_MACHS, EM_AMDGPU};
//!
//! assert_eq!(EM_AMDGPU, 224);
//! let gfx906 = AMDGPU_MACHS.iter().find(|m| m.1 == "gfx906").unwrap();
//! assert_eq!(gfx906.0, 0x2f);
//! ```

/// `EM_CUDA`, as LLVM 22 defines it.
pub const EM_CUDA: u16 = 190;
/// `EM_AMDGPU`, as LLVM 22 defines it.
pub const EM_AMDGPU: u16 = 224;

/// `ELFOSABI_NONE`, as LLVM 22 defines it.
pub const ELFOSABI_NONE: u8 = 0;
/// `ELFOSABI_AMDGPU_HSA`, as LLVM 22 defines it.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `ELFOSABI_AMDGPU_PAL`, as LLVM 22 defines it.
pub const ELFOSABI_AMDGPU_PAL: u8 = 65;
/// `ELFOSABI_AMDGPU_MESA3D`, as LLVM 22 defines it.
pub const ELFOSABI_AMDGPU_MESA3D: u8 = 66;
/// `ELFABIVERSION_AMDGPU_HSA_V2`, as LLVM 22 defines it.
pub const ELFABIVERSION_AMDGPU_HSA_V2: u8 = 0;
/// `ELFABIVERSION_AMDGPU_HSA_V3`, as LLVM 22 defines it.
pub const ELFABIVERSION_AMDGPU_HSA_V3: u8 = 1;
/// `ELFABIVERSION_AMDGPU_HSA_V6`, as LLVM 22 defines it.
pub const ELFABIVERSION_AMDGPU_HSA_V6: u8 = 4;
/// `ELFABIVERSION_CUDA_V1`, as LLVM 22 defines it.
pub const ELFABIVERSION_CUDA_V1: u8 = 7;

/// `EF_AMDGPU_MACH`, as LLVM 22 defines it.
pub const EF_AMDGPU_MACH: u32 = 0x0ff;
/// `EF_AMDGPU_FEATURE_XNACK_V2`, as LLVM 22 defines it.
pub const EF_AMDGPU_FEATURE_XNACK_V2: u32 = 0x01;
/// `EF_AMDGPU_FEATURE_XNACK_V3`, as LLVM 22 defines it.
pub const EF_AMDGPU_FEATURE_XNACK_V3: u32 = 0x100;
/// `EF_AMDGPU_FEATURE_SRAMECC_V3`, as LLVM 22 defines it.
pub const EF_AMDGPU_FEATURE_SRAMECC_V3: u32 = 0x200;
/// `EF_AMDGPU_FEATURE_XNACK_V4`, as LLVM 22 defines it.
pub const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
/// `EF_AMDGPU_FEATURE_SRAMECC_V4`, as LLVM 22 defines it.
pub const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
/// `EF_AMDGPU_GENERIC_VERSION`, as LLVM 22 defines it.
pub const EF_AMDGPU_GENERIC_VERSION: u32 = 0xff00_0000;
/// `EF_AMDGPU_GENERIC_VERSION_OFFSET`, as LLVM 22 defines it.
pub const EF_AMDGPU_GENERIC_VERSION_OFFSET: u32 = 24;

/// `EF_CUDA_SM`, as LLVM 22 defines it.
pub const EF_CUDA_SM: u32 = 0xff;
/// `EF_CUDA_SM_MASK`, as LLVM 22 defines it.
pub const EF_CUDA_SM_MASK: u32 = 0xff00;
/// `EF_CUDA_SM_OFFSET`, as LLVM 22 defines it.
pub const EF_CUDA_SM_OFFSET: u32 = 8;
/// `EF_CUDA_ACCELERATORS_V1`, as LLVM 22 defines it.
pub const EF_CUDA_ACCELERATORS_V1: u32 = 0x800;
/// `EF_CUDA_ACCELERATORS`, as LLVM 22 defines it.
pub const EF_CUDA_ACCELERATORS: u32 = 0x8;
/// `EF_CUDA_VIRTUAL_SM`, as LLVM 22 defines it.
pub const EF_CUDA_VIRTUAL_SM: u32 = 0xff_0000;

/// `SHT_SYMTAB`, as LLVM 22 defines it.
pub const SHT_SYMTAB: u32 = 2;
/// `SHT_STRTAB`, as LLVM 22 defines it.
pub const SHT_STRTAB: u32 = 3;
/// `SHT_DYNSYM`, as LLVM 22 defines it.
pub const SHT_DYNSYM: u32 = 11;
/// `STT_OBJECT`, as LLVM 22 defines it.
pub const STT_OBJECT: u8 = 1;
/// `SHN_UNDEF`, as LLVM 22 defines it.
pub const SHN_UNDEF: u16 = 0;

/// Processor names by `EF_AMDGPU_MACH` value, as `getAMDGPUCPUName` returns
/// them, with whether the processor supports xnack and sramecc. Values LLVM 22
/// marks reserved (0x27, 0x40, 0x4b, 0x4d, 0x50, 0x56, 0x57, 0x11-0x1f) are
/// absent.
pub const AMDGPU_MACHS: &[(u8, &str, bool, bool)] = &[
    (0x01, "r600", false, false),
    (0x02, "r630", false, false),
    (0x03, "rs880", false, false),
    (0x04, "rv670", false, false),
    (0x05, "rv710", false, false),
    (0x06, "rv730", false, false),
    (0x07, "rv770", false, false),
    (0x08, "cedar", false, false),
    (0x09, "cypress", false, false),
    (0x0a, "juniper", false, false),
    (0x0b, "redwood", false, false),
    (0x0c, "sumo", false, false),
    (0x0d, "barts", false, false),
    (0x0e, "caicos", false, false),
    (0x0f, "cayman", false, false),
    (0x10, "turks", false, false),
    (0x20, "gfx600", false, false),
    (0x21, "gfx601", false, false),
    (0x22, "gfx700", false, false),
    (0x23, "gfx701", false, false),
    (0x24, "gfx702", false, false),
    (0x25, "gfx703", false, false),
    (0x26, "gfx704", false, false),
    (0x28, "gfx801", true, false),
    (0x29, "gfx802", false, false),
    (0x2a, "gfx803", false, false),
    (0x2b, "gfx810", true, false),
    (0x2c, "gfx900", true, false),
    (0x2d, "gfx902", true, false),
    (0x2e, "gfx904", true, false),
    (0x2f, "gfx906", true, true),
    (0x30, "gfx908", true, true),
    (0x31, "gfx909", true, false),
    (0x32, "gfx90c", true, false),
    (0x33, "gfx1010", true, false),
    (0x34, "gfx1011", true, false),
    (0x35, "gfx1012", true, false),
    (0x36, "gfx1030", false, false),
    (0x37, "gfx1031", false, false),
    (0x38, "gfx1032", false, false),
    (0x39, "gfx1033", false, false),
    (0x3a, "gfx602", false, false),
    (0x3b, "gfx705", false, false),
    (0x3c, "gfx805", false, false),
    (0x3d, "gfx1035", false, false),
    (0x3e, "gfx1034", false, false),
    (0x3f, "gfx90a", true, true),
    (0x41, "gfx1100", false, false),
    (0x42, "gfx1013", true, false),
    (0x43, "gfx1150", false, false),
    (0x44, "gfx1103", false, false),
    (0x45, "gfx1036", false, false),
    (0x46, "gfx1101", false, false),
    (0x47, "gfx1102", false, false),
    (0x48, "gfx1200", false, false),
    (0x49, "gfx1250", true, true),
    (0x4a, "gfx1151", false, false),
    (0x4c, "gfx942", true, true),
    (0x4e, "gfx1201", false, false),
    (0x4f, "gfx950", true, true),
    (0x51, "gfx9-generic", true, false),
    (0x52, "gfx10-1-generic", true, false),
    (0x53, "gfx10-3-generic", false, false),
    (0x54, "gfx11-generic", false, false),
    (0x55, "gfx1152", false, false),
    (0x58, "gfx1153", false, false),
    (0x59, "gfx12-generic", false, false),
    (0x5a, "gfx1251", true, true),
    (0x5f, "gfx9-4-generic", true, true),
];
