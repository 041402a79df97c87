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
//! use offload_kit_inspect::code_object::{identify, CodeObject, FeatureSetting};
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

use crate::format::code_object::*;
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
mod tests;
