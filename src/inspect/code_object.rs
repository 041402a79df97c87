//! What one device code object is, and the facts `offload-kit inspect` shows
//! for it: the AMDGPU processor, code object version and target ID, the CUDA
//! SM of a cubin, the PTX ISA version and target, the SPIR-V version.
//!
//! [`identify`] looks at the bytes alone, so it works on any bundle entry or
//! offload binary image whatever its container claims. Every number is taken
//! from LLVM 22 (22.1.8):
//!
//! - `llvm/include/llvm/BinaryFormat/ELF.h`: `EM_AMDGPU`, `EM_CUDA`,
//!   `ELFOSABI_AMDGPU_*`, `ELFABIVERSION_AMDGPU_HSA_V2..V6`,
//!   `ELFABIVERSION_CUDA_V1/V2`, the `EF_AMDGPU_*` and `EF_CUDA_*` flags.
//! - `llvm/lib/Object/ELFObjectFile.cpp`: `getAMDGPUCPUName` (processor
//!   names) and `getNVPTXCPUName` (which `e_flags` byte holds the SM).
//! - `llvm/docs/AMDGPUUsage.rst`, "ELF Header" (the `e_flags` tables for code
//!   object V2, V3 and V4 onwards) and "Target ID".
//! - `llvm/lib/Target/AMDGPU/MCTargetDesc/AMDGPUTargetStreamer.cpp`
//!   (`getEFlagsV3/V4/V6`): which layout each OS ABI and version uses.
//! - `llvm/lib/TargetParser/TargetParser.cpp` (`FEATURE_XNACK`,
//!   `FEATURE_SRAMECC`): which processors support xnack and sramecc; the
//!   table below was checked by assembling an empty file for every processor
//!   with `llvm-mc --amdhsa-code-object-version=6` (default flags say "any"
//!   where supported, "unsupported" elsewhere).
//! - `llvm/include/llvm/Bitcode/BitcodeReader.h` (`isBitcodeWrapper`,
//!   `isRawBitcode`), the SPIR-V specification 2.3 "Physical Layout" and the
//!   PTX ISA "Module Directives" (`.version`, `.target`, `.address_size`).
//!
//! The input may be hostile: every read is bounds-checked, arithmetic is
//! checked, nothing is allocated from a length field, and symbol name scans
//! share a budget linear in the string table size.
//!
//! # Example
//!
//! The header of a code object V6 for gfx90a built with xnack on
//! (`e_flags` 0x73f: mach 0x3f, xnack on, sramecc any).
//!
//! ```
//! use offload_kit::inspect::code_object::{identify, CodeObject, FeatureSetting};
//!
//! let mut elf = vec![0u8; 64];
//! elf[..9].copy_from_slice(b"\x7fELF\x02\x01\x01\x40\x04"); // HSA, V6
//! elf[16] = 3; // ET_DYN
//! elf[18] = 224; // EM_AMDGPU
//! elf[20] = 1;
//! elf[48..52].copy_from_slice(&0x73fu32.to_le_bytes());
//! elf[52] = 64;
//! let CodeObject::Amdgpu(o) = identify(&elf) else { panic!() };
//! assert_eq!((o.code_object_version, o.processor), (Some(6), Some("gfx90a")));
//! assert_eq!((o.xnack, o.sramecc), (FeatureSetting::On, FeatureSetting::Any));
//! assert_eq!(o.target_id(), "gfx90a:xnack+");
//! assert_eq!(identify(b"BC\xc0\xde"), CodeObject::Bitcode);
//! ```

use serde::Serialize;

/// ELF file class (`e_ident[EI_CLASS]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ElfClass {
    /// `ELFCLASS32`; AMDGPU uses it for r600 processors.
    Elf32,
    /// `ELFCLASS64`.
    Elf64,
}

impl ElfClass {
    /// 32 or 64.
    pub fn bits(self) -> u8 {
        match self {
            ElfClass::Elf32 => 32,
            ElfClass::Elf64 => 64,
        }
    }
}

/// What a buffer holds, with the facts read from it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CodeObject {
    /// An ELF for `EM_AMDGPU` (224).
    Amdgpu(AmdgpuObject),
    /// An ELF for `EM_CUDA` (190).
    Cubin(CubinObject),
    /// PTX assembly text.
    Ptx(PtxText),
    /// A SPIR-V binary module.
    SpirV(SpirV),
    /// Any other ELF, such as a host object.
    Host(HostObject),
    /// LLVM bitcode, raw or inside the bitcode wrapper.
    Bitcode,
    /// None of the above, or too short to tell.
    Unknown,
}

/// The AMDGPU OS ABI (`e_ident[EI_OSABI]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AmdgpuOsAbi {
    /// `ELFOSABI_NONE` (0): unknown OS, and every r600 object.
    None,
    /// `ELFOSABI_AMDGPU_HSA` (64): the ROCm runtime.
    Hsa,
    /// `ELFOSABI_AMDGPU_PAL` (65).
    Pal,
    /// `ELFOSABI_AMDGPU_MESA3D` (66).
    Mesa3d,
    /// Any other value.
    Other(u8),
}

/// The setting of a target feature (xnack, sramecc) recorded in `e_flags`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FeatureSetting {
    /// The processor does not have the feature.
    Unsupported,
    /// Code runs with the feature on or off (V4+ only).
    Any,
    /// Compiled for the feature off (`-`).
    Off,
    /// Compiled for the feature on (`+`).
    On,
}

/// The facts of an AMDGPU code object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AmdgpuObject {
    /// ELF class: 64-bit for amdgcn, 32-bit for r600.
    pub class: ElfClass,
    /// `e_ident[EI_OSABI]`.
    pub os_abi: AmdgpuOsAbi,
    /// `e_ident[EI_ABIVERSION]`, raw.
    pub abi_version: u8,
    /// The HSA code object version, 2 to 6 (`ELFABIVERSION_AMDGPU_HSA_V2` = 0
    /// to `_V6` = 4); `None` for other OS ABIs and unknown ABI versions.
    pub code_object_version: Option<u8>,
    /// `e_type`: 1 relocatable (`ET_REL`), 3 shared (`ET_DYN`, loadable).
    pub elf_type: u16,
    /// `e_flags`, raw.
    pub flags: u32,
    /// `e_flags & EF_AMDGPU_MACH`; `None` for code object V2, which names its
    /// processor in an `NT_AMD_HSA_ISA_VERSION` note this module does not read.
    pub mach: Option<u8>,
    /// The processor LLVM names for `mach` ("gfx90a", "gfx9-generic", "turks").
    pub processor: Option<&'static str>,
    /// The xnack setting.
    pub xnack: FeatureSetting,
    /// The sramecc setting.
    pub sramecc: FeatureSetting,
    /// The generic processor version (`EF_AMDGPU_GENERIC_VERSION`, V6 on);
    /// `None` when the field is absent or zero.
    pub generic_version: Option<u8>,
    /// Defined `STT_OBJECT` symbols named `*.kd` (kernel descriptors) in
    /// `.symtab`, or in `.dynsym` when there is no `.symtab`; `None` when there
    /// is no symbol table or it is malformed.
    pub kernel_count: Option<usize>,
}

impl AmdgpuObject {
    /// The target ID in the canonical V4+ form of AMDGPUUsage "Target ID":
    /// the processor, then `:sramecc±` and `:xnack±` (alphabetic order), each
    /// only when On or Off ("gfx90a:sramecc+:xnack-", "gfx1100"). The generic
    /// version is not part of it. An unnamed processor prints as
    /// `unknown-mach-0xNN` (`unknown` for V2).
    pub fn target_id(&self) -> String {
        let mut id = match (self.processor, self.mach) {
            (Some(name), _) => name.to_string(),
            (None, Some(mach)) => format!("unknown-mach-0x{mach:02x}"),
            (None, None) => "unknown".to_string(),
        };
        for (feature, setting) in [("sramecc", self.sramecc), ("xnack", self.xnack)] {
            match setting {
                FeatureSetting::On => id.push_str(&format!(":{feature}+")),
                FeatureSetting::Off => id.push_str(&format!(":{feature}-")),
                FeatureSetting::Unsupported | FeatureSetting::Any => {}
            }
        }
        id
    }
}

/// The facts of an NVIDIA cubin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CubinObject {
    /// ELF class: a 64-bit cubin is for 64-bit addressing.
    pub class: ElfClass,
    /// `e_ident[EI_OSABI]`, raw (51 `ELFOSABI_CUDA` for older toolkits).
    pub os_abi: u8,
    /// `e_ident[EI_ABIVERSION]`: 7 (`ELFABIVERSION_CUDA_V1`) keeps the SM in
    /// `e_flags` bits 0-7, anything else (8, `_V2`, from Blackwell-era
    /// toolkits) in bits 8-15, as `getNVPTXCPUName` reads it.
    pub abi_version: u8,
    /// `e_flags`, raw.
    pub flags: u32,
    /// The SM number (`EF_CUDA_SM70` = 0x46 = 70).
    pub sm: u32,
    /// An architecture-specific ("a") target: `EF_CUDA_ACCELERATORS_V1`
    /// (0x800) in the V1 layout, `EF_CUDA_ACCELERATORS` (0x8) after.
    pub accelerator: bool,
    /// The virtual processor (`compute_NN`) in `EF_CUDA_VIRTUAL_SM` (bits
    /// 16-23, V1 layout only), when nonzero.
    pub virtual_sm: Option<u32>,
}

impl CubinObject {
    /// The GPU name LLVM prints: "sm_70", "sm_90a", "sm_100a".
    pub fn arch(&self) -> String {
        let suffix = if self.accelerator { "a" } else { "" };
        format!("sm_{}{suffix}", self.sm)
    }
}

/// The module directives at the head of a PTX text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PtxText {
    /// `.version major.minor` (the PTX ISA version), which must come first.
    pub version: (u32, u32),
    /// The first entry of `.target` ("sm_70", "sm_90a"), when present.
    pub target: Option<String>,
    /// `.address_size` (32 or 64), when present.
    pub address_size: Option<u32>,
}

/// The header of a SPIR-V module.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SpirV {
    /// SPIR-V major version (word 1, bits 16-23).
    pub major: u8,
    /// SPIR-V minor version (word 1, bits 8-15).
    pub minor: u8,
    /// The words are big-endian (the magic read byte-swapped).
    pub big_endian: bool,
    /// Generator magic (word 2): the Khronos-registered tool ID in the high
    /// 16 bits (43 is LLVM's SPIR-V backend), its version in the low 16.
    pub generator: u32,
    /// Bound on the result IDs (word 3).
    pub id_bound: u32,
}

/// An ELF for a machine other than AMDGPU or CUDA.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HostObject {
    /// `e_machine` (62 `EM_X86_64`, 183 `EM_AARCH64`, ...).
    pub machine: u16,
    /// ELF class.
    pub class: ElfClass,
    /// `ELFDATA2MSB` byte order.
    pub big_endian: bool,
}

/// Says what `data` is and reads its facts; never fails, never panics.
pub fn identify(data: &[u8]) -> CodeObject {
    if data.starts_with(b"\x7fELF") {
        return identify_elf(data).unwrap_or(CodeObject::Unknown);
    }
    if data.starts_with(b"BC\xC0\xDE") || data.starts_with(&[0xDE, 0xC0, 0x17, 0x0B]) {
        return CodeObject::Bitcode;
    }
    if let Some(spirv) = identify_spirv(data) {
        return CodeObject::SpirV(spirv);
    }
    match identify_ptx(data) {
        Some(ptx) => CodeObject::Ptx(ptx),
        None => CodeObject::Unknown,
    }
}

const EM_CUDA: u16 = 190;
const EM_AMDGPU: u16 = 224;

const ELFOSABI_NONE: u8 = 0;
const ELFOSABI_AMDGPU_HSA: u8 = 64;
const ELFOSABI_AMDGPU_PAL: u8 = 65;
const ELFOSABI_AMDGPU_MESA3D: u8 = 66;
const ELFABIVERSION_AMDGPU_HSA_V2: u8 = 0;
const ELFABIVERSION_AMDGPU_HSA_V3: u8 = 1;
const ELFABIVERSION_AMDGPU_HSA_V6: u8 = 4;
const ELFABIVERSION_CUDA_V1: u8 = 7;

const EF_AMDGPU_MACH: u32 = 0x0ff;
const EF_AMDGPU_FEATURE_XNACK_V2: u32 = 0x01;
const EF_AMDGPU_FEATURE_XNACK_V3: u32 = 0x100;
const EF_AMDGPU_FEATURE_SRAMECC_V3: u32 = 0x200;
const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
const EF_AMDGPU_GENERIC_VERSION: u32 = 0xff00_0000;
const EF_AMDGPU_GENERIC_VERSION_OFFSET: u32 = 24;

const EF_CUDA_SM: u32 = 0xff;
const EF_CUDA_SM_MASK: u32 = 0xff00;
const EF_CUDA_SM_OFFSET: u32 = 8;
const EF_CUDA_ACCELERATORS_V1: u32 = 0x800;
const EF_CUDA_ACCELERATORS: u32 = 0x8;
const EF_CUDA_VIRTUAL_SM: u32 = 0xff_0000;

const SHT_SYMTAB: u32 = 2;
const SHT_STRTAB: u32 = 3;
const SHT_DYNSYM: u32 = 11;
const STT_OBJECT: u8 = 1;
const SHN_UNDEF: u16 = 0;

/// Processor names by `EF_AMDGPU_MACH` value, as `getAMDGPUCPUName` returns
/// them, with whether the processor supports xnack and sramecc. Values LLVM 22
/// marks reserved (0x27, 0x40, 0x4b, 0x4d, 0x50, 0x56, 0x57, 0x11-0x1f) are
/// absent.
const AMDGPU_MACHS: &[(u8, &str, bool, bool)] = &[
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

/// The fields of an ELF header this module uses.
struct ElfHeader {
    class: ElfClass,
    os_abi: u8,
    abi_version: u8,
    elf_type: u16,
    machine: u16,
    flags: u32,
    shoff: u64,
    shentsize: u16,
    shnum: u16,
}

/// A bounds-checked reader over an ELF of either class and byte order.
struct Elf<'a> {
    data: &'a [u8],
    class: ElfClass,
    big_endian: bool,
}

impl<'a> Elf<'a> {
    fn bytes(&self, offset: u64, len: u64) -> Option<&'a [u8]> {
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        self.data.get(start..end)
    }

    /// An unsigned field of `size` bytes (at most 8) in the file's byte order.
    fn uint(&self, offset: u64, size: u64) -> Option<u64> {
        let bytes = self.bytes(offset, size)?;
        let push = |value: u64, &byte: &u8| value << 8 | u64::from(byte);
        Some(match self.big_endian {
            true => bytes.iter().fold(0, push),
            false => bytes.iter().rev().fold(0, push),
        })
    }

    fn u16(&self, offset: u64) -> Option<u16> {
        self.uint(offset, 2).map(|value| value as u16)
    }

    fn u32(&self, offset: u64) -> Option<u32> {
        self.uint(offset, 4).map(|value| value as u32)
    }

    /// An address-sized field: 4 bytes in ELF32, 8 in ELF64.
    fn word(&self, offset: u64) -> Option<u64> {
        self.uint(offset, u64::from(self.class.bits() / 8))
    }

    fn header(&self) -> Option<ElfHeader> {
        // Offsets of e_shoff, e_flags, e_shentsize, e_shnum per class.
        let (shoff, flags, shentsize, shnum) = match self.class {
            ElfClass::Elf32 => (32, 36, 46, 48),
            ElfClass::Elf64 => (40, 48, 58, 60),
        };
        Some(ElfHeader {
            class: self.class,
            os_abi: *self.data.get(7)?,
            abi_version: *self.data.get(8)?,
            elf_type: self.u16(16)?,
            machine: self.u16(18)?,
            flags: self.u32(flags)?,
            shoff: self.word(shoff)?,
            shentsize: self.u16(shentsize)?,
            shnum: self.u16(shnum)?,
        })
    }

    /// The section header at `index`.
    fn section(&self, header: &ElfHeader, index: u64) -> Option<Section> {
        let at = header
            .shoff
            .checked_add(index.checked_mul(u64::from(header.shentsize))?)?;
        // Offsets of sh_type, sh_offset, sh_size, sh_link, sh_entsize.
        let (offset, size, link, entsize) = match self.class {
            ElfClass::Elf32 => (16, 20, 24, 36),
            ElfClass::Elf64 => (24, 32, 40, 56),
        };
        Some(Section {
            kind: self.u32(at.checked_add(4)?)?,
            offset: self.word(at.checked_add(offset)?)?,
            size: self.word(at.checked_add(size)?)?,
            link: self.u32(at.checked_add(link)?)?,
            entsize: self.word(at.checked_add(entsize)?)?,
        })
    }

    /// The number of section headers, all of which lie inside the file.
    fn section_count(&self, header: &ElfHeader) -> Option<u64> {
        let min_size = match self.class {
            ElfClass::Elf32 => 40,
            ElfClass::Elf64 => 64,
        };
        if header.shoff == 0 || header.shentsize < min_size {
            return None;
        }
        // e_shnum 0 with a table present: the count is section 0's sh_size.
        let count = match header.shnum {
            0 => self.section(header, 0)?.size,
            n => u64::from(n),
        };
        self.bytes(
            header.shoff,
            count.checked_mul(u64::from(header.shentsize))?,
        )?;
        Some(count)
    }

    /// Defined `STT_OBJECT` symbols whose name ends in ".kd".
    fn kernel_descriptor_count(&self, header: &ElfHeader) -> Option<usize> {
        let count = self.section_count(header)?;
        let find =
            |kind| (0..count).find_map(|i| self.section(header, i).filter(|s| s.kind == kind));
        let symtab = find(SHT_SYMTAB).or_else(|| find(SHT_DYNSYM))?;
        if symtab.link == 0 || u64::from(symtab.link) >= count {
            return None;
        }
        let strtab = self.section(header, u64::from(symtab.link))?;
        if strtab.kind != SHT_STRTAB {
            return None;
        }
        let names = self.bytes(strtab.offset, strtab.size)?;
        let symbols = self.bytes(symtab.offset, symtab.size)?;
        // st_info, st_shndx offsets and the entry size per class.
        let (info_at, shndx_at, entry_size) = match self.class {
            ElfClass::Elf32 => (12, 14, 16),
            ElfClass::Elf64 => (4, 6, 24),
        };
        if symtab.entsize != entry_size as u64 || symbols.len() % entry_size != 0 {
            return None;
        }
        // Names may share tails, so one string can be scanned several times;
        // the budget keeps a crafted table from making the scans quadratic.
        let mut budget = names.len().saturating_mul(8).saturating_add(1 << 20);
        let mut kernels = 0usize;
        for entry in symbols.chunks_exact(entry_size) {
            let sym = Elf {
                data: entry,
                class: self.class,
                big_endian: self.big_endian,
            };
            let info = *entry.get(info_at)?;
            if info & 0xf != STT_OBJECT || sym.u16(shndx_at)? == SHN_UNDEF {
                continue;
            }
            let rest = names.get(usize::try_from(sym.u32(0)?).ok()?..)?;
            let window = rest.get(..rest.len().min(budget))?;
            let len = window.iter().position(|&b| b == 0)?;
            budget -= len + 1;
            if window.get(..len)?.ends_with(b".kd") {
                kernels += 1;
            }
        }
        Some(kernels)
    }
}

/// The section header fields the symbol scan needs.
struct Section {
    kind: u32,
    offset: u64,
    size: u64,
    link: u32,
    entsize: u64,
}

fn identify_elf(data: &[u8]) -> Option<CodeObject> {
    let (class, header_size) = match data.get(4)? {
        1 => (ElfClass::Elf32, 52),
        2 => (ElfClass::Elf64, 64),
        _ => return None,
    };
    let big_endian = match data.get(5)? {
        1 => false,
        2 => true,
        _ => return None,
    };
    data.get(..header_size)?;
    let elf = Elf {
        data,
        class,
        big_endian,
    };
    let header = elf.header()?;
    Some(match header.machine {
        EM_AMDGPU => CodeObject::Amdgpu(amdgpu(&elf, &header)),
        EM_CUDA => CodeObject::Cubin(cubin(&header)),
        machine => CodeObject::Host(HostObject {
            machine,
            class,
            big_endian,
        }),
    })
}

/// Which `e_flags` layout an AMDGPU object uses (AMDGPUUsage "ELF Header").
#[derive(Clone, Copy, PartialEq)]
enum FlagsLayout {
    V2,
    V3,
    V4,
    V6,
}

fn amdgpu(elf: &Elf<'_>, header: &ElfHeader) -> AmdgpuObject {
    let flags = header.flags;
    let os_abi = match header.os_abi {
        ELFOSABI_NONE => AmdgpuOsAbi::None,
        ELFOSABI_AMDGPU_HSA => AmdgpuOsAbi::Hsa,
        ELFOSABI_AMDGPU_PAL => AmdgpuOsAbi::Pal,
        ELFOSABI_AMDGPU_MESA3D => AmdgpuOsAbi::Mesa3d,
        other => AmdgpuOsAbi::Other(other),
    };
    let hsa = os_abi == AmdgpuOsAbi::Hsa;
    let code_object_version = match header.abi_version {
        v @ ELFABIVERSION_AMDGPU_HSA_V2..=ELFABIVERSION_AMDGPU_HSA_V6 if hsa => Some(v + 2),
        _ => None,
    };
    // LLVM writes the V3 layout for every OS but HSA (getEFlagsV3); an HSA
    // version newer than V6 is read as V6, the newest layout.
    let layout = match header.abi_version {
        _ if !hsa => FlagsLayout::V3,
        ELFABIVERSION_AMDGPU_HSA_V2 => FlagsLayout::V2,
        ELFABIVERSION_AMDGPU_HSA_V3 => FlagsLayout::V3,
        v if v < ELFABIVERSION_AMDGPU_HSA_V6 => FlagsLayout::V4,
        _ => FlagsLayout::V6,
    };
    // V2 bits 0-1 are XNACK_V2 and TRAP_HANDLER_V2 and the processor is in a
    // note (AMDGPUUsage); llvm-readelf 22 still decodes a mach from them.
    let mach = (layout != FlagsLayout::V2).then_some((flags & EF_AMDGPU_MACH) as u8);
    let known = mach.and_then(|m| AMDGPU_MACHS.iter().find(|entry| entry.0 == m));
    let (xnack_supported, sramecc_supported) = known.map_or((false, false), |e| (e.2, e.3));
    // V2/V3 have one bit per feature, set for On or Any (AMDGPUUsage "Code
    // Object V2 to V3 Target ID": Any is treated as On). A clear bit is Off on
    // a processor with the feature (as the ROCm runtime reads it), else
    // Unsupported.
    let bit = |set: bool, supported: bool| match (set, supported) {
        (true, _) => FeatureSetting::On,
        (false, true) => FeatureSetting::Off,
        (false, false) => FeatureSetting::Unsupported,
    };
    let field = |value: u32, unit: u32| match value / unit {
        0 => FeatureSetting::Unsupported,
        1 => FeatureSetting::Any,
        2 => FeatureSetting::Off,
        _ => FeatureSetting::On,
    };
    let (xnack, sramecc) = match layout {
        FlagsLayout::V2 => (
            bit(flags & EF_AMDGPU_FEATURE_XNACK_V2 != 0, false),
            FeatureSetting::Unsupported,
        ),
        FlagsLayout::V3 => (
            bit(flags & EF_AMDGPU_FEATURE_XNACK_V3 != 0, xnack_supported),
            bit(flags & EF_AMDGPU_FEATURE_SRAMECC_V3 != 0, sramecc_supported),
        ),
        FlagsLayout::V4 | FlagsLayout::V6 => (
            field(flags & EF_AMDGPU_FEATURE_XNACK_V4, 0x100),
            field(flags & EF_AMDGPU_FEATURE_SRAMECC_V4, 0x400),
        ),
    };
    let generic = (flags & EF_AMDGPU_GENERIC_VERSION) >> EF_AMDGPU_GENERIC_VERSION_OFFSET;
    AmdgpuObject {
        class: header.class,
        os_abi,
        abi_version: header.abi_version,
        code_object_version,
        elf_type: header.elf_type,
        flags,
        mach,
        processor: known.map(|entry| entry.1),
        xnack,
        sramecc,
        generic_version: (layout == FlagsLayout::V6 && generic != 0).then_some(generic as u8),
        kernel_count: elf.kernel_descriptor_count(header),
    }
}

fn cubin(header: &ElfHeader) -> CubinObject {
    let flags = header.flags;
    let v1 = header.abi_version == ELFABIVERSION_CUDA_V1;
    let (sm, accelerator, virtual_sm) = if v1 {
        let virtual_sm = (flags & EF_CUDA_VIRTUAL_SM) >> 16;
        (
            flags & EF_CUDA_SM,
            flags & EF_CUDA_ACCELERATORS_V1 != 0,
            Some(virtual_sm),
        )
    } else {
        let sm = (flags & EF_CUDA_SM_MASK) >> EF_CUDA_SM_OFFSET;
        (sm, flags & EF_CUDA_ACCELERATORS != 0, None)
    };
    CubinObject {
        class: header.class,
        os_abi: header.os_abi,
        abi_version: header.abi_version,
        flags,
        sm,
        accelerator,
        virtual_sm: virtual_sm.filter(|&v| v != 0),
    }
}

fn identify_spirv(data: &[u8]) -> Option<SpirV> {
    const MAGIC: u32 = 0x0723_0203;
    // The header is five words: magic, version, generator, bound, schema.
    let header = data.get(..20)?;
    let raw = |i: usize| -> Option<[u8; 4]> { header.get(i * 4..i * 4 + 4)?.try_into().ok() };
    let big_endian = match raw(0)? {
        m if u32::from_le_bytes(m) == MAGIC => false,
        m if u32::from_be_bytes(m) == MAGIC => true,
        _ => return None,
    };
    let word = |i| {
        raw(i).map(|w| {
            if big_endian {
                u32::from_be_bytes(w)
            } else {
                u32::from_le_bytes(w)
            }
        })
    };
    let version = word(1)?;
    Some(SpirV {
        major: (version >> 16) as u8,
        minor: (version >> 8) as u8,
        big_endian,
        generator: word(2)?,
        id_bound: word(3)?,
    })
}

/// The longest `.target` entry kept; real ones are a dozen bytes.
const MAX_PTX_TARGET: usize = 64;

/// A cursor over PTX text that knows its comments.
struct PtxCursor<'a> {
    text: &'a [u8],
    pos: usize,
}

impl<'a> PtxCursor<'a> {
    fn rest(&self) -> &'a [u8] {
        self.text.get(self.pos..).unwrap_or_default()
    }

    /// Skips white space and comments; `None` at an unterminated `/*`.
    fn skip_blank(&mut self) -> Option<()> {
        loop {
            let rest = self.rest();
            if rest.first().is_some_and(|b| b.is_ascii_whitespace()) {
                self.pos += 1;
            } else if rest.starts_with(b"//") {
                self.pos += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            } else if rest.starts_with(b"/*") {
                let end = rest.windows(2).skip(2).position(|w| w == b"*/")?;
                self.pos += end + 4;
            } else {
                return Some(());
            }
        }
    }

    fn skip_spaces(&mut self) {
        while self
            .rest()
            .first()
            .is_some_and(|&b| b == b' ' || b == b'\t')
        {
            self.pos += 1;
        }
    }

    /// Consumes `byte` if it comes next.
    fn byte(&mut self, byte: u8) -> bool {
        let next = self.rest().first() == Some(&byte);
        if next {
            self.pos += 1;
        }
        next
    }

    /// Consumes `word` if it is the next whole token.
    fn eat(&mut self, word: &[u8]) -> bool {
        let rest = self.rest();
        let whole = rest.starts_with(word)
            && !rest
                .get(word.len())
                .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_');
        if whole {
            self.pos += word.len();
            self.skip_spaces();
        }
        whole
    }

    /// An identifier of letters, digits and `_`, at most `max` bytes long.
    fn token(&mut self, max: usize) -> Option<&str> {
        let rest = self.text.get(self.pos..)?;
        let len = rest
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        if len == 0 || len > max {
            return None;
        }
        self.pos += len;
        std::str::from_utf8(rest.get(..len)?).ok()
    }

    fn number(&mut self) -> Option<u32> {
        let rest = self.text.get(self.pos..)?;
        let len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let value = std::str::from_utf8(rest.get(..len)?).ok()?.parse().ok()?;
        self.pos += len;
        Some(value)
    }
}

fn identify_ptx(data: &[u8]) -> Option<PtxText> {
    let text = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let mut cursor = PtxCursor { text, pos: 0 };
    cursor.skip_blank()?;
    if !cursor.eat(b".version") {
        return None;
    }
    let major = cursor.number()?;
    if !cursor.byte(b'.') {
        return None;
    }
    let mut ptx = PtxText {
        version: (major, cursor.number()?),
        target: None,
        address_size: None,
    };
    // The other module directives follow; the first other token ends them.
    while cursor.skip_blank().is_some() {
        if cursor.eat(b".target") {
            ptx.target = cursor.token(MAX_PTX_TARGET).map(str::to_string);
        } else if cursor.eat(b".address_size") {
            ptx.address_size = cursor.number();
        } else {
            break;
        }
    }
    Some(ptx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(text: &str) -> Vec<u8> {
        let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
        assert_eq!(digits.len() % 2, 0, "odd hex digit count");
        digits
            .chunks(2)
            .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
            .collect()
    }

    fn amdgpu_of(data: &[u8]) -> AmdgpuObject {
        match identify(data) {
            CodeObject::Amdgpu(object) => object,
            other => panic!("not AMDGPU: {other:?}"),
        }
    }

    fn cubin_of(data: &[u8]) -> CubinObject {
        match identify(data) {
            CodeObject::Cubin(object) => object,
            other => panic!("not a cubin: {other:?}"),
        }
    }

    /// An ELF header with no sections.
    fn elf_header(class: u8, big: bool, os_abi: u8, abi: u8, machine: u16, flags: u32) -> Vec<u8> {
        let mut elf = ElfBuilder::new(class == 2, big);
        elf.os_abi = os_abi;
        elf.abi_version = abi;
        elf.machine = machine;
        elf.flags = flags;
        elf.build()
    }

    /// Writes small ELFs with a symbol table, in either class and byte order.
    struct ElfBuilder {
        is64: bool,
        big: bool,
        os_abi: u8,
        abi_version: u8,
        machine: u16,
        flags: u32,
        /// Sections after the null one: (type, link, entsize, contents).
        sections: Vec<(u32, u32, u64, Vec<u8>)>,
    }

    impl ElfBuilder {
        fn new(is64: bool, big: bool) -> Self {
            let sections = Vec::new();
            let (os_abi, abi_version, machine, flags) = (64, 3, EM_AMDGPU, 0x3f);
            ElfBuilder {
                is64,
                big,
                os_abi,
                abi_version,
                machine,
                flags,
                sections,
            }
        }

        fn put(&self, out: &mut Vec<u8>, value: u64, size: usize) {
            let bytes = value.to_le_bytes();
            let mut field = bytes.get(..size).unwrap().to_vec();
            if self.big {
                field.reverse();
            }
            out.extend_from_slice(&field);
        }

        fn word(&self, out: &mut Vec<u8>, value: u64) {
            self.put(out, value, if self.is64 { 8 } else { 4 });
        }

        /// Appends a string table and a symbol table of type `kind` holding
        /// `symbols` (name, STT type, defined).
        fn symbols(&mut self, kind: u32, symbols: &[(&str, u8, bool)]) {
            let mut names = vec![0u8];
            let mut table = vec![0u8; if self.is64 { 24 } else { 16 }];
            for &(name, stt, defined) in symbols {
                let name_at = names.len() as u64;
                names.extend_from_slice(name.as_bytes());
                names.push(0);
                let mut entry = Vec::new();
                let shndx = if defined { 1 } else { 0 };
                self.put(&mut entry, name_at, 4);
                if self.is64 {
                    entry.extend_from_slice(&[0x10 | stt, 0]);
                    self.put(&mut entry, shndx, 2);
                    self.put(&mut entry, 0, 8);
                    self.put(&mut entry, 64, 8);
                } else {
                    self.put(&mut entry, 0, 4);
                    self.put(&mut entry, 64, 4);
                    entry.extend_from_slice(&[0x10 | stt, 0]);
                    self.put(&mut entry, shndx, 2);
                }
                table.extend_from_slice(&entry);
            }
            let strtab_index = self.sections.len() as u32 + 1;
            self.sections.push((SHT_STRTAB, 0, 0, names));
            let entsize = if self.is64 { 24 } else { 16 };
            self.sections.push((kind, strtab_index, entsize, table));
        }

        fn build(&self) -> Vec<u8> {
            let header_size = if self.is64 { 64 } else { 52 };
            let shentsize: u64 = if self.is64 { 64 } else { 40 };
            let mut body = Vec::new();
            let mut placed = Vec::new();
            for (_, _, _, contents) in &self.sections {
                placed.push((header_size + body.len()) as u64);
                body.extend_from_slice(contents);
            }
            let shoff = (header_size + body.len()) as u64;
            let shnum = if self.sections.is_empty() {
                0
            } else {
                self.sections.len() + 1
            };
            let mut out = b"\x7fELF".to_vec();
            let class = if self.is64 { 2 } else { 1 };
            out.extend_from_slice(&[class, if self.big { 2 } else { 1 }, 1]);
            out.extend_from_slice(&[self.os_abi, self.abi_version, 0, 0, 0, 0, 0, 0, 0]);
            self.put(&mut out, 1, 2);
            self.put(&mut out, u64::from(self.machine), 2);
            self.put(&mut out, 1, 4);
            self.word(&mut out, 0);
            self.word(&mut out, 0);
            self.word(&mut out, if shnum == 0 { 0 } else { shoff });
            self.put(&mut out, u64::from(self.flags), 4);
            self.put(&mut out, header_size as u64, 2);
            self.put(&mut out, 0, 2);
            self.put(&mut out, 0, 2);
            self.put(&mut out, shentsize, 2);
            self.put(&mut out, shnum as u64, 2);
            self.put(&mut out, 0, 2);
            assert_eq!(out.len(), header_size);
            out.extend_from_slice(&body);
            if shnum == 0 {
                return out;
            }
            out.extend(std::iter::repeat_n(0u8, shentsize as usize));
            for ((kind, link, entsize, contents), offset) in self.sections.iter().zip(placed) {
                let mut header = Vec::new();
                self.put(&mut header, 0, 4);
                self.put(&mut header, u64::from(*kind), 4);
                self.word(&mut header, 0);
                self.word(&mut header, 0);
                self.word(&mut header, offset);
                self.word(&mut header, contents.len() as u64);
                self.put(&mut header, u64::from(*link), 4);
                self.put(&mut header, 0, 4);
                self.word(&mut header, 1);
                self.word(&mut header, *entsize);
                assert_eq!(header.len() as u64, shentsize);
                out.extend_from_slice(&header);
            }
            out
        }
    }

    // ELF headers (first 64 bytes) of real objects from LLVM 22.1.8, made from
    // a C file with two `__attribute__((amdgpu_kernel))` functions by
    // `clang --target=amdgcn-amd-amdhsa -nogpulib -c k.c` with the -mcpu and
    // -mcode-object-version given; the .so by `ld.lld -shared`; the PAL one by
    // `llvm-mc -triple amdgcn-amd-amdpal -mcpu=gfx1030 -filetype=obj /dev/null`.
    // `llvm-readelf -h` printed the flags quoted with each.
    const GFX90A_XNACK_ON_V4: &str =
        "7f454c460201014002000000000000000100e000010000000000000000000000\
        0000000000000000f0120000000000003f07000040000000000040000b000100"; // 0x73f, gfx90a, xnack+, sramecc
    const GFX90A_XNACK_ON_V5: &str =
        "7f454c460201014003000000000000000100e000010000000000000000000000\
        0000000000000000a8170000000000003f07000040000000000040000b000100"; // 0x73f, gfx90a, xnack+, sramecc
    const GFX906_DEFAULT_V6: &str =
        "7f454c460201014004000000000000000100e000010000000000000000000000\
        000000000000000080130000000000002f05000040000000000040000b000100"; // 0x52f, gfx906, xnack, sramecc
    const GFX90A_SRAMECC_ON_XNACK_OFF_V6: &str =
        "7f454c460201014004000000000000000100e000010000000000000000000000\
        0000000000000000b0170000000000003f0e000040000000000040000b000100"; // 0xe3f
    const GFX9_GENERIC_V6: &str =
        "7f454c460201014004000000000000000100e000010000000000000000000000\
        000000000000000088130000000000005101000140000000000040000b000100"; // 0x1000151, generic_v1
    const GFX1100_V6: &str = "7f454c460201014004000000000000000100e000010000000000000000000000\
        000000000000000040140000000000004100000040000000000040000b000100"; // 0x41, gfx1100
    const GFX90A_LINKED_SO_V6: &str =
        "7f454c460201014004000000000000000300e000010000000000000000000000\
        4000000000000000181b0000000000003f07000040003800080040000f000d00"; // DYN, 0x73f
    const GFX1030_PAL: &str = "7f454c460201014100000000000000000100e000010000000000000000000000\
        0000000000000000700000000000000036000000400000000000400004000100"; // PAL, 0x36, gfx1030
                                                                           // `llvm-mc -triple r600 -mcpu=turks -filetype=obj /dev/null`: ELF32, 0x10, turks.
    const TURKS_R600: &str = "7f454c460101010000000000000000000100e000010000000000000000000000\
        5c00000010000000340000000000280004000100";

    #[test]
    fn real_amdgpu_headers_decode_as_llvm_readelf_prints_them() {
        // (header, code object version, elf type, target ID, xnack, sramecc)
        use FeatureSetting::{Any, Off, On, Unsupported};
        let cases = [
            (GFX90A_XNACK_ON_V4, Some(4), 1, "gfx90a:xnack+", On, Any),
            (GFX90A_XNACK_ON_V5, Some(5), 1, "gfx90a:xnack+", On, Any),
            (GFX906_DEFAULT_V6, Some(6), 1, "gfx906", Any, Any),
            (
                GFX90A_SRAMECC_ON_XNACK_OFF_V6,
                Some(6),
                1,
                "gfx90a:sramecc+:xnack-",
                Off,
                On,
            ),
            (
                GFX9_GENERIC_V6,
                Some(6),
                1,
                "gfx9-generic",
                Any,
                Unsupported,
            ),
            (GFX1100_V6, Some(6), 1, "gfx1100", Unsupported, Unsupported),
            (GFX90A_LINKED_SO_V6, Some(6), 3, "gfx90a:xnack+", On, Any),
            (GFX1030_PAL, None, 1, "gfx1030", Unsupported, Unsupported),
        ];
        for (header, version, elf_type, target_id, xnack, sramecc) in cases {
            let object = amdgpu_of(&hex(header));
            assert_eq!(object.code_object_version, version, "{target_id}");
            assert_eq!(object.elf_type, elf_type, "{target_id}");
            assert_eq!(object.target_id(), target_id);
            assert_eq!(
                (object.xnack, object.sramecc),
                (xnack, sramecc),
                "{target_id}"
            );
            assert_eq!(object.class, ElfClass::Elf64);
            // The section headers lie past the 64 bytes kept.
            assert_eq!(object.kernel_count, None, "{target_id}");
        }
        let generic = amdgpu_of(&hex(GFX9_GENERIC_V6));
        assert_eq!(
            (generic.mach, generic.generic_version),
            (Some(0x51), Some(1))
        );
        assert_eq!(amdgpu_of(&hex(GFX1030_PAL)).os_abi, AmdgpuOsAbi::Pal);
        assert_eq!(amdgpu_of(&hex(GFX90A_XNACK_ON_V5)).generic_version, None);

        let turks = amdgpu_of(&hex(TURKS_R600));
        assert_eq!(
            (turks.class, turks.os_abi),
            (ElfClass::Elf32, AmdgpuOsAbi::None)
        );
        assert_eq!(
            (turks.processor, turks.target_id().as_str()),
            (Some("turks"), "turks")
        );
    }

    /// `e_flags` of an empty object from `llvm-mc -triple amdgcn-amd-amdhsa
    /// -mcpu=NAME --amdhsa-code-object-version=6` for every processor
    /// `llc -mcpu=help` lists (LLVM 22.1.8): the mach, "any" (0x100, 0x400)
    /// for each supported feature, and generic_v1 for generic processors.
    const LLVM_MC_DEFAULT_FLAGS: &str = "\
        gfx10-1-generic 0x01000152 gfx10-3-generic 0x01000053 gfx1010 0x00000133 gfx1011 0x00000134
        gfx1012 0x00000135 gfx1013 0x00000142 gfx1030 0x00000036 gfx1031 0x00000037 gfx1032 0x00000038
        gfx1033 0x00000039 gfx1034 0x0000003e gfx1035 0x0000003d gfx1036 0x00000045
        gfx11-generic 0x01000054 gfx1100 0x00000041 gfx1101 0x00000046 gfx1102 0x00000047
        gfx1103 0x00000044 gfx1150 0x00000043 gfx1151 0x0000004a gfx1152 0x00000055 gfx1153 0x00000058
        gfx12-generic 0x01000059 gfx1200 0x00000048 gfx1201 0x0000004e gfx1250 0x00000549
        gfx1251 0x0000055a gfx600 0x00000020 gfx601 0x00000021 gfx602 0x0000003a gfx700 0x00000022
        gfx701 0x00000023 gfx702 0x00000024 gfx703 0x00000025 gfx704 0x00000026 gfx705 0x0000003b
        gfx801 0x00000128 gfx802 0x00000029 gfx803 0x0000002a gfx805 0x0000003c gfx810 0x0000012b
        gfx9-4-generic 0x0100055f gfx9-generic 0x01000151 gfx900 0x0000012c gfx902 0x0000012d
        gfx904 0x0000012e gfx906 0x0000052f gfx908 0x00000530 gfx909 0x00000131 gfx90a 0x0000053f
        gfx90c 0x00000132 gfx942 0x0000054c gfx950 0x0000054f";

    #[test]
    fn every_llvm_22_processor_round_trips_through_its_default_flags() {
        let words: Vec<&str> = LLVM_MC_DEFAULT_FLAGS.split_whitespace().collect();
        assert_eq!(words.len(), 2 * 53);
        for pair in words.chunks(2) {
            let (name, flags) = (pair[0], u32::from_str_radix(&pair[1][2..], 16).unwrap());
            let object = amdgpu_of(&elf_header(2, false, 64, 4, EM_AMDGPU, flags));
            assert_eq!(object.processor, Some(name));
            let entry = AMDGPU_MACHS.iter().find(|e| e.1 == name).unwrap();
            let any_if = |supported| {
                if supported {
                    FeatureSetting::Any
                } else {
                    FeatureSetting::Unsupported
                }
            };
            assert_eq!(
                (object.xnack, object.sramecc),
                (any_if(entry.2), any_if(entry.3)),
                "{name}"
            );
            assert_eq!(
                object.generic_version.is_some(),
                name.contains("generic"),
                "{name}"
            );
            assert_eq!(object.target_id(), name);
        }
        // Plus the 16 r600 processors, and no value twice.
        assert_eq!(AMDGPU_MACHS.len(), 53 + 16);
        assert!(AMDGPU_MACHS.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn v4_feature_fields_cover_all_four_settings() {
        use FeatureSetting::{Any, Off, On, Unsupported};
        let expect = [
            (0x000, Unsupported),
            (0x100, Any),
            (0x200, Off),
            (0x300, On),
        ];
        for (xnack_bits, xnack) in expect {
            for (sramecc_bits, sramecc) in expect {
                let flags = 0x3f | xnack_bits | (sramecc_bits << 2);
                let object = amdgpu_of(&elf_header(2, false, 64, 2, EM_AMDGPU, flags));
                assert_eq!((object.xnack, object.sramecc), (xnack, sramecc));
            }
        }
        let on_off = amdgpu_of(&elf_header(
            2,
            false,
            64,
            3,
            EM_AMDGPU,
            0x3f | 0x300 | 0x800,
        ));
        assert_eq!(on_off.target_id(), "gfx90a:sramecc-:xnack+");
    }

    #[test]
    fn v3_bits_are_on_or_off_where_supported() {
        // `llvm-readelf -h` prints these hand-made V3 headers as
        // "0x12f, gfx906, xnack" and "0x22f, gfx906, sramecc".
        let xnack = amdgpu_of(&elf_header(2, false, 64, 1, EM_AMDGPU, 0x12f));
        assert_eq!(xnack.code_object_version, Some(3));
        assert_eq!(xnack.target_id(), "gfx906:sramecc-:xnack+");
        let sramecc = amdgpu_of(&elf_header(2, false, 64, 1, EM_AMDGPU, 0x22f));
        assert_eq!(sramecc.target_id(), "gfx906:sramecc+:xnack-");
        let plain = amdgpu_of(&elf_header(2, false, 64, 1, EM_AMDGPU, 0x036));
        assert_eq!(plain.target_id(), "gfx1030");
        assert_eq!(plain.xnack, FeatureSetting::Unsupported);
        // Mesa3D uses the V3 layout too, with no HSA version.
        let mesa = amdgpu_of(&elf_header(2, false, 66, 0, EM_AMDGPU, 0x12c));
        assert_eq!(
            (mesa.os_abi, mesa.code_object_version),
            (AmdgpuOsAbi::Mesa3d, None)
        );
        assert_eq!(mesa.target_id(), "gfx900:xnack+");
    }

    #[test]
    fn v2_has_no_mach_and_unknown_values_stay_visible() {
        let v2 = amdgpu_of(&elf_header(2, false, 64, 0, EM_AMDGPU, 0x01));
        assert_eq!(
            (v2.code_object_version, v2.mach, v2.processor),
            (Some(2), None, None)
        );
        assert_eq!(v2.target_id(), "unknown:xnack+");
        let reserved = amdgpu_of(&elf_header(2, false, 64, 4, EM_AMDGPU, 0x140));
        assert_eq!(reserved.target_id(), "unknown-mach-0x40");
        // A future HSA ABI version is read with the newest layout.
        let future = amdgpu_of(&elf_header(2, false, 64, 9, EM_AMDGPU, 0x0200_0051));
        assert_eq!(
            (future.code_object_version, future.generic_version),
            (None, Some(2))
        );
        let other = amdgpu_of(&elf_header(2, false, 200, 0, EM_AMDGPU, 0x2c));
        assert_eq!(other.os_abi, AmdgpuOsAbi::Other(200));
    }

    #[test]
    fn kernel_descriptors_are_counted_in_either_class_and_byte_order() {
        let symbols = [
            ("k1.kd", STT_OBJECT, true),
            ("k2.kd", STT_OBJECT, true),
            ("k1", 2, true),                  // STT_FUNC
            ("extern.kd", STT_OBJECT, false), // undefined
            ("k3.kdd", STT_OBJECT, true),
            (".kd", STT_OBJECT, true),
        ];
        for (is64, big) in [(true, false), (false, false), (true, true), (false, true)] {
            let mut elf = ElfBuilder::new(is64, big);
            elf.symbols(SHT_SYMTAB, &symbols);
            assert_eq!(
                amdgpu_of(&elf.build()).kernel_count,
                Some(3),
                "{is64} {big}"
            );
        }
        let mut dynamic = ElfBuilder::new(true, false);
        dynamic.symbols(SHT_DYNSYM, &symbols[..1]);
        assert_eq!(amdgpu_of(&dynamic.build()).kernel_count, Some(1));
        let empty = ElfBuilder::new(true, false).build();
        assert_eq!(amdgpu_of(&empty).kernel_count, None);
    }

    #[test]
    fn malformed_symbol_tables_give_no_count() {
        let mut elf = ElfBuilder::new(true, false);
        elf.symbols(SHT_SYMTAB, &[("k.kd", STT_OBJECT, true)]);
        let good = elf.build();
        assert_eq!(amdgpu_of(&good).kernel_count, Some(1));
        let mutate = |edit: &dyn Fn(&mut ElfBuilder)| {
            let mut copy = ElfBuilder::new(true, false);
            copy.sections = elf.sections.clone();
            edit(&mut copy);
            amdgpu_of(&copy.build()).kernel_count
        };
        assert_eq!(mutate(&|e| e.sections[1].1 = 9), None); // link out of range
        assert_eq!(mutate(&|e| e.sections[1].1 = 0), None); // link to the null section
        assert_eq!(mutate(&|e| e.sections[0].0 = 1), None); // link not a STRTAB
        assert_eq!(mutate(&|e| e.sections[1].2 = 16), None); // wrong entsize
        assert_eq!(mutate(&|e| e.sections[1].3.push(0)), None); // size not a multiple
        assert_eq!(mutate(&|e| e.sections[0].3.truncate(3)), None); // name unterminated
        assert_eq!(mutate(&|e| e.sections[1].3[24] = 0xff), None); // name out of range
    }

    #[test]
    fn hostile_elf_inputs_never_panic() {
        let mut elf = ElfBuilder::new(true, false);
        elf.symbols(
            SHT_SYMTAB,
            &[("a.kd", STT_OBJECT, true), ("b.kd", STT_OBJECT, true)],
        );
        let object = elf.build();
        for len in 0..object.len() {
            let _ = identify(&object[..len]);
        }
        // Deterministic byte corruption over the whole object.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let mut copy = object.clone();
            for _ in 0..4 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let at = (state % copy.len() as u64) as usize;
                copy[at] = (state >> 32) as u8;
            }
            let _ = identify(&copy);
        }
        // Extended numbering with a huge count, and offsets near u64::MAX.
        let mut huge = object.clone();
        huge[60..62].copy_from_slice(&[0, 0]);
        let shoff = u64::from_le_bytes(huge[40..48].try_into().unwrap()) as usize;
        huge[shoff + 32..shoff + 40].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(amdgpu_of(&huge).kernel_count, None);
        let mut far = object.clone();
        far[40..48].copy_from_slice(&(u64::MAX - 8).to_le_bytes());
        assert_eq!(amdgpu_of(&far).kernel_count, None);
        // A string table of tail-sharing names cannot make the scan quadratic.
        let mut names = vec![0u8];
        names.extend(std::iter::repeat_n(b'x', 100_000));
        names.push(0);
        let mut shared = ElfBuilder::new(true, false);
        shared.symbols(SHT_SYMTAB, &[]);
        shared.sections[0].3 = names;
        let mut entry = 1u32.to_le_bytes().to_vec();
        entry.extend_from_slice(&[0x11, 0, 1, 0]);
        entry.extend_from_slice(&[0; 16]);
        shared.sections[1].3 = entry.repeat(20_000);
        assert_eq!(amdgpu_of(&shared.build()).kernel_count, None);
    }

    #[test]
    fn cubin_sm_follows_the_abi_version_layout() {
        // llvm-readelf -h prints these hand-made headers as sm_70, sm_90a,
        // sm_100a and sm_120.
        let sm70 = cubin_of(&elf_header(2, false, 51, 7, EM_CUDA, 0x0046_0546));
        assert_eq!(
            (sm70.arch(), sm70.virtual_sm, sm70.class),
            ("sm_70".into(), Some(70), ElfClass::Elf64)
        );
        let sm90a = cubin_of(&elf_header(2, false, 51, 7, EM_CUDA, 0x005a_0c5a));
        assert_eq!(sm90a.arch(), "sm_90a");
        let sm100a = cubin_of(&elf_header(2, false, 65, 8, EM_CUDA, 0x6408));
        assert_eq!((sm100a.arch(), sm100a.virtual_sm), ("sm_100a".into(), None));
        assert_eq!(
            cubin_of(&elf_header(2, false, 65, 8, EM_CUDA, 0x7800)).arch(),
            "sm_120"
        );
        let sm35 = cubin_of(&elf_header(1, false, 51, 7, EM_CUDA, 0x0023));
        assert_eq!((sm35.sm, sm35.class.bits()), (35, 32));
    }

    #[test]
    fn other_elfs_are_host_objects() {
        let x86_64 = elf_header(2, false, 0, 0, 62, 0);
        let expect = HostObject {
            machine: 62,
            class: ElfClass::Elf64,
            big_endian: false,
        };
        assert_eq!(identify(&x86_64), CodeObject::Host(expect));
        let i386 = identify(&elf_header(1, false, 0, 0, 3, 0));
        assert!(matches!(
            i386,
            CodeObject::Host(HostObject {
                machine: 3,
                class: ElfClass::Elf32,
                ..
            })
        ));
        let ppc64 = identify(&elf_header(2, true, 0, 0, 21, 0));
        assert!(matches!(
            ppc64,
            CodeObject::Host(HostObject {
                machine: 21,
                big_endian: true,
                ..
            })
        ));
        let mut bad_class = x86_64.clone();
        bad_class[4] = 3;
        assert_eq!(identify(&bad_class), CodeObject::Unknown);
        assert_eq!(identify(&x86_64[..63]), CodeObject::Unknown);
    }

    #[test]
    fn ptx_module_directives() {
        // The head of `clang -x cuda --cuda-gpu-arch=sm_70 --cuda-device-only
        // -nocudalib -nocudainc -Xclang -target-feature -Xclang +ptx64 -S`.
        let clang = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 6.4\n.target sm_70\n\
                     .address_size 64\n\n\t// .globl\t_Z2k1Pi\n.visible .entry _Z2k1Pi(\n";
        let expect = PtxText {
            version: (6, 4),
            target: Some("sm_70".into()),
            address_size: Some(64),
        };
        assert_eq!(identify(clang.as_bytes()), CodeObject::Ptx(expect));
        let nvcc =
            "/* a\n block */ .version 8.0 // c\n.target sm_90a, texmode_independent\n.entry k()";
        let CodeObject::Ptx(ptx) = identify(nvcc.as_bytes()) else {
            panic!("not PTX")
        };
        assert_eq!(
            (ptx.version, ptx.target.as_deref(), ptx.address_size),
            ((8, 0), Some("sm_90a"), None)
        );
        let bare = identify(b".version 7.8");
        assert_eq!(
            bare,
            CodeObject::Ptx(PtxText {
                version: (7, 8),
                target: None,
                address_size: None
            })
        );
        for not_ptx in [
            &b".versions 1.0"[..],
            b".version x",
            b"/* open .version 1.0",
            b"text",
            b"",
        ] {
            assert_eq!(identify(not_ptx), CodeObject::Unknown);
        }
        let long = format!(".version 1.0\n.target sm_{}", "9".repeat(100));
        assert!(matches!(
            identify(long.as_bytes()),
            CodeObject::Ptx(PtxText { target: None, .. })
        ));
    }

    #[test]
    fn spirv_header_in_either_byte_order() {
        // The first 20 bytes of `clang --target=spirv64 -c k.c` (LLVM 22.1.8):
        // SPIR-V 1.4, generator 43 (LLVM SPIR-V backend) version 22.
        let clang = hex("0302230700040100 16002b0061000000 00000000");
        let expect = SpirV {
            major: 1,
            minor: 4,
            big_endian: false,
            generator: 0x002b_0016,
            id_bound: 0x61,
        };
        assert_eq!(identify(&clang), CodeObject::SpirV(expect.clone()));
        let swapped: Vec<u8> = clang
            .chunks(4)
            .flat_map(|w| w.iter().rev().copied())
            .collect();
        assert_eq!(
            identify(&swapped),
            CodeObject::SpirV(SpirV {
                big_endian: true,
                ..expect
            })
        );
        assert_eq!(identify(&clang[..19]), CodeObject::Unknown);
    }

    #[test]
    fn bitcode_raw_and_wrapped() {
        // `clang --target=amdgcn-amd-amdhsa -emit-llvm -c` starts "BC\xC0\xDE".
        assert_eq!(identify(&hex("4243c0de35140000")), CodeObject::Bitcode);
        assert_eq!(identify(&hex("dec0170b00000000")), CodeObject::Bitcode);
        assert_eq!(identify(&hex("4243c0")), CodeObject::Unknown);
    }
}
