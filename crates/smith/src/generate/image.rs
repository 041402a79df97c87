//! Device images a loader accepts for an entry's target: the payloads that
//! [`generate`](super::generate) puts in valid files by default.
//!
//! A fuzzer seeded with random payloads never gets past a loader's first
//! check (LLVM 22's offload runtime asks each plugin whether the image is an
//! ELF file for its machine; comgr and CLR read the code object's `e_flags`).
//! [`for_target`] writes, with offload-kit's own ELF writer, the smallest
//! image that passes those checks for a triple and a target ID:
//!
//! - `amdgcn`: an AMDGPU code object (ELF64 `ET_DYN`, `EM_AMDGPU`, OS ABI
//!   HSA, code object V4, V5 or V6; `e_flags` naming the processor and its
//!   xnack/sramecc settings as the target ID says, *any* where it says
//!   nothing; V6 and the generic version for generic processors) with one
//!   kernel `k` and its kernel descriptor `k.kd`;
//! - `nvptx`/`nvptx64`: a cubin (ELF64 `ET_EXEC`, `EM_CUDA`, ABI version V1,
//!   the SM in `e_flags` where LLVM's CUDA plugin reads it);
//! - `spirv*`: a SPIR-V module (header, `Kernel` capability, memory model);
//! - any other architecture LLVM names an ELF machine for (`x86_64`,
//!   `aarch64`, `powerpc64le`, …): a shared object the system's `dlopen`
//!   accepts (one `PT_LOAD`, a read-only `PT_DYNAMIC` with a SysV hash
//!   table, `PT_GNU_STACK` not executable), exporting `k`: what LLVM's host
//!   plugin loads.
//!
//! Layouts follow the ELF gABI and LLVM 22's `llvm/include/llvm/BinaryFormat/
//! ELF.h`; AMDGPU `e_flags` and ABI versions follow AMDGPUUsage "ELF Header";
//! the kernel descriptor is AMDGPUUsage's 64-byte `kernel_descriptor_t` with
//! its `kernel_code_entry_byte_offset` (byte 16) pointing at `k`.
//!
//! # Example
//!
//! ```
//! use offload_kit_smith::generate::image::for_target;
//! use offload_kit_inspect::code_object::{identify, CodeObject};
//!
//! let co = for_target("amdgcn-amd-amdhsa", "gfx90a:xnack+", 6).unwrap();
//! let CodeObject::Amdgpu(o) = identify(&co) else { panic!() };
//! assert_eq!(o.target_id(), "gfx90a:xnack+");
//! assert_eq!(o.kernel_count, Some(1));
//! let so = for_target("x86_64-unknown-linux-gnu", "", 1).unwrap();
//! assert!(matches!(identify(&so), CodeObject::Host(h) if h.machine == 62));
//! assert!(for_target("amdgcn-amd-amdhsa", "gfx9999", 1).is_err());
//! ```

use super::Rng;
use crate::format::code_object::*;
use crate::host::elf::SHT_PROGBITS;
use crate::id::subarch::Subarch;
use crate::id::target_id::{self, Feature};
use crate::id::triple::Triple;

/// `ELFOSABI_CUDA` (`llvm/include/llvm/BinaryFormat/ELF.h`).
const ELFOSABI_CUDA: u8 = 51;
/// `EF_CUDA_64BIT_ADDRESS`.
const EF_CUDA_64BIT_ADDRESS: u32 = 0x400;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_GNU_STACK: u32 = 0x6474_e551;
const SHT_HASH: u32 = 5;
const SHT_DYNAMIC: u32 = 6;
const DT_HASH: u64 = 4;
const DT_STRTAB: u64 = 5;
const DT_SYMTAB: u64 = 6;
const DT_STRSZ: u64 = 10;
const DT_SYMENT: u64 = 11;
/// `PF_X`, `PF_W`, `PF_R`.
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;
const STT_FUNC: u8 = 2;
const STB_GLOBAL: u8 = 1;
/// AMDGPUUsage "Kernel Descriptor": 64 bytes, aligned to 64.
const KD_SIZE: usize = 64;

/// What an image is for, read from a triple and a target ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageTarget {
    /// An AMDGPU code object.
    Amdgpu {
        /// `EF_AMDGPU_MACH` of the processor.
        mach: u8,
        /// `EF_AMDGPU_FEATURE_XNACK_V4` field value (0, 0x100, 0x200, 0x300).
        xnack: u32,
        /// `EF_AMDGPU_FEATURE_SRAMECC_V4` field value (0, 0x400, 0x800, 0xc00).
        sramecc: u32,
        /// Whether the processor is a generic one (code object V6 only).
        generic: bool,
    },
    /// A cubin for `sm_N`.
    Cuda {
        /// The SM number (70 for `sm_70`).
        sm: u32,
    },
    /// A SPIR-V module.
    SpirV,
    /// A shared object for a host machine (`e_machine`).
    Host {
        /// `e_machine`.
        machine: u16,
    },
}

/// Why no image can be made for a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageError(pub String);

impl std::fmt::Display for ImageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ImageError {}

/// `e_machine` of a host architecture as LLVM's `Triple` names it.
fn host_machine(arch: &str) -> Option<u16> {
    Some(match arch {
        "x86_64" | "amd64" => 62,
        "aarch64" | "arm64" => 183,
        "powerpc64le" | "powerpc64" | "ppc64le" | "ppc64" => 21,
        "riscv64" => 243,
        "s390x" => 22,
        _ => return None,
    })
}

/// What `triple` and `arch` (a target ID, `sm_N`, or empty) ask for.
pub fn target_of(triple: &str, arch: &str) -> Result<ImageTarget, ImageError> {
    let t = Triple::parse(triple);
    if t.is_amdgpu() {
        // LLVM main's `amdgpu<subarch>` with an empty target ID: the
        // subarch's processor (spec/bundle-id.md ID-7).
        let subarch = Subarch::parse(&t.arch).and_then(Subarch::processor);
        let arch = match subarch {
            Some(p) if arch.is_empty() => p,
            _ => arch,
        };
        let tid = target_id::parse(arch)
            .map_err(|e| ImageError(format!("target ID '{arch}': {}", e.message)))?;
        let name = target_id::canonical_processor(&t, &tid.processor)
            .ok_or_else(|| ImageError(format!("'{}' is no AMDGPU processor", tid.processor)))?;
        let &(mach, _, has_xnack, has_sramecc) = AMDGPU_MACHS
            .iter()
            .find(|m| m.1 == name)
            .ok_or_else(|| ImageError(format!("'{name}' has no EF_AMDGPU_MACH value")))?;
        let feature = |name: &str, has: bool, unit: u32| -> Result<u32, ImageError> {
            let set = tid.features.iter().find(|f| f.0 == name).map(|f| f.1);
            match (has, set) {
                (false, Some(_)) => Err(ImageError(format!(
                    "{} has no {name} to set",
                    tid.processor
                ))),
                (false, None) => Ok(0),
                (true, None) => Ok(unit),
                (true, Some(Feature::Off)) => Ok(2 * unit),
                (true, Some(Feature::On)) => Ok(3 * unit),
            }
        };
        return Ok(ImageTarget::Amdgpu {
            mach,
            xnack: feature("xnack", has_xnack, 0x100)?,
            sramecc: feature("sramecc", has_sramecc, 0x400)?,
            generic: name.ends_with("-generic"),
        });
    }
    if t.is_nvptx() {
        let sm = arch
            .strip_prefix("sm_")
            .map(|n| n.trim_end_matches(['a', 'f']))
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|&n| (10..=255).contains(&n))
            .ok_or_else(|| ImageError(format!("'{arch}' is no sm_N architecture")))?;
        return Ok(ImageTarget::Cuda { sm });
    }
    if t.arch.starts_with("spirv") {
        return Ok(ImageTarget::SpirV);
    }
    host_machine(&t.arch)
        .map(|machine| ImageTarget::Host { machine })
        .ok_or_else(|| ImageError(format!("no image format known for triple '{triple}'")))
}

/// An image for `triple` and `arch` (see the [module docs](self)); `seed`
/// picks the code object version of an AMDGPU object (V6 for generic
/// processors) and the kernel's size.
pub fn for_target(triple: &str, arch: &str, seed: u64) -> Result<Vec<u8>, ImageError> {
    let target = target_of(triple, arch)?;
    Ok(write(target, &mut Rng::new(seed)))
}

/// An image for `target`, drawing its free choices from `rng`.
pub fn write(target: ImageTarget, rng: &mut Rng) -> Vec<u8> {
    // Code padding, so images differ in size and offsets.
    let pad = 4 * rng.below(8);
    match target {
        ImageTarget::Amdgpu {
            mach,
            xnack,
            sramecc,
            generic,
        } => {
            let version: u8 = if generic { 6 } else { *rng.pick(&[4, 5, 6]) };
            let mut flags = u32::from(mach) | xnack | sramecc;
            if generic {
                flags |= 1 << EF_AMDGPU_GENERIC_VERSION_OFFSET;
            }
            // s_endpgm, then s_nop 0 as padding.
            let mut text = 0xbf81_0000u32.to_le_bytes().to_vec();
            text.extend((0..pad / 4).flat_map(|_| 0xbf80_0000u32.to_le_bytes()));
            shared_object(&Spec {
                os_abi: ELFOSABI_AMDGPU_HSA,
                abi_version: version - 2,
                e_type: 3,
                machine: EM_AMDGPU,
                flags,
                text,
                descriptor: true,
            })
        }
        ImageTarget::Cuda { sm } => shared_object(&Spec {
            os_abi: ELFOSABI_CUDA,
            abi_version: ELFABIVERSION_CUDA_V1,
            e_type: 2,
            machine: EM_CUDA,
            flags: sm | sm << 16 | EF_CUDA_64BIT_ADDRESS,
            text: vec![0; 16 + pad],
            descriptor: false,
        }),
        ImageTarget::SpirV => spirv(pad / 4),
        ImageTarget::Host { machine } => {
            let ret: &[u8] = match machine {
                62 => &[0xc3],
                183 => &[0xc0, 0x03, 0x5f, 0xd6],
                21 => &[0x20, 0x00, 0x80, 0x4e],
                _ => &[0; 4],
            };
            let mut text = ret.to_vec();
            text.resize(ret.len() + pad, 0);
            shared_object(&Spec {
                os_abi: 0,
                abi_version: 0,
                e_type: 3,
                machine,
                flags: 0,
                text,
                descriptor: false,
            })
        }
    }
}

/// A SPIR-V module: header (version 1.0), `OpCapability Addresses`,
/// `OpCapability Kernel`, `OpMemoryModel Physical64 OpenCL`, `nops` `OpNop`s.
fn spirv(nops: usize) -> Vec<u8> {
    let mut words = vec![0x0723_0203u32, 0x0001_0000, 0, 1, 0];
    words.extend([2 << 16 | 17, 4, 2 << 16 | 17, 6, 3 << 16 | 14, 2, 2]);
    words.extend(std::iter::repeat_n(1 << 16, nops));
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The fields of one image's ELF file.
struct Spec {
    os_abi: u8,
    abi_version: u8,
    e_type: u16,
    machine: u16,
    flags: u32,
    text: Vec<u8>,
    /// Add `k.kd`, a kernel descriptor for `k` (AMDGPU).
    descriptor: bool,
}

/// The section names of a [`shared_object`].
const SHSTRTAB: &[u8] = b"\0.hash\0.dynsym\0.dynstr\0.text\0.rodata\0.dynamic\0.shstrtab\0";

/// An ELF64 little-endian file laid out so that file offsets are virtual
/// addresses: header, program headers, `.hash`, `.dynsym`, `.dynstr`,
/// `.text`, `.rodata`, `.dynamic`, `.shstrtab`, section headers.
fn shared_object(s: &Spec) -> Vec<u8> {
    let name_at = |name: &str| {
        let needle = [b"\0", name.as_bytes(), b"\0"].concat();
        memchr::memmem::find(SHSTRTAB, &needle).expect("section name in table") as u32 + 1
    };
    let dynstr: &[u8] = if s.descriptor {
        b"\0k\0k.kd\0"
    } else {
        b"\0k\0"
    };
    let nsyms = if s.descriptor { 3 } else { 2 };
    let phnum = 3u64;
    let align = |x: u64, a: u64| x.div_ceil(a) * a;
    let hash_at = 64 + 56 * phnum;
    let hash_size = 4 * (2 + 1 + nsyms);
    let dynsym_at = align(hash_at + hash_size, 8);
    let dynstr_at = dynsym_at + 24 * nsyms;
    let text_at = align(dynstr_at + dynstr.len() as u64, 256);
    let rodata_at = align(text_at + s.text.len() as u64, 64);
    let rodata_size = if s.descriptor { KD_SIZE as u64 } else { 0 };
    let dynamic_at = align(rodata_at + rodata_size, 8);
    let dynamic_size = 16 * 6;
    let shstrtab_at = dynamic_at + dynamic_size;
    let shoff = align(shstrtab_at + SHSTRTAB.len() as u64, 8);
    let shnum = 8u64;
    let mut b = vec![0u8; (shoff + 64 * shnum) as usize];
    let w16 = |b: &mut Vec<u8>, at: u64, v: u16| {
        b[at as usize..at as usize + 2].copy_from_slice(&v.to_le_bytes())
    };
    let w32 = |b: &mut Vec<u8>, at: u64, v: u32| {
        b[at as usize..at as usize + 4].copy_from_slice(&v.to_le_bytes())
    };
    let w64 = |b: &mut Vec<u8>, at: u64, v: u64| {
        b[at as usize..at as usize + 8].copy_from_slice(&v.to_le_bytes())
    };
    // ELF header.
    b[..9].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, s.os_abi, s.abi_version]);
    w16(&mut b, 16, s.e_type);
    w16(&mut b, 18, s.machine);
    w32(&mut b, 20, 1);
    w64(&mut b, 24, text_at); // e_entry
    w64(&mut b, 32, 64); // e_phoff
    w64(&mut b, 40, shoff);
    w32(&mut b, 48, s.flags);
    w16(&mut b, 52, 64);
    w16(&mut b, 54, 56);
    w16(&mut b, 56, phnum as u16);
    w16(&mut b, 58, 64);
    w16(&mut b, 60, shnum as u16);
    w16(&mut b, 62, shnum as u16 - 1);
    // Program headers: (type, flags, offset, size, align); vaddr = offset.
    let end = dynamic_at + dynamic_size;
    let phdrs = [
        (PT_LOAD, PF_R | PF_X, 0, end, 0x1000),
        (PT_DYNAMIC, PF_R, dynamic_at, dynamic_size, 8),
        (PT_GNU_STACK, PF_R | PF_W, 0, 0, 16),
    ];
    for (i, (ty, fl, off, size, al)) in phdrs.into_iter().enumerate() {
        let h = 64 + 56 * i as u64;
        w32(&mut b, h, ty);
        w32(&mut b, h + 4, fl);
        for (field, v) in [
            (8, off),
            (16, off),
            (24, off),
            (32, size),
            (40, size),
            (48, al),
        ] {
            w64(&mut b, h + field, v);
        }
    }
    // .hash: one bucket chaining every symbol (lookups compare names).
    w32(&mut b, hash_at, 1);
    w32(&mut b, hash_at + 4, nsyms as u32);
    w32(&mut b, hash_at + 8, 1);
    for i in 1..nsyms {
        let next = if i + 1 < nsyms { i + 1 } else { 0 };
        w32(&mut b, hash_at + 12 + 4 * i, next as u32);
    }
    // .dynsym: the null symbol, k (in .text, section 4), k.kd (.rodata, 5).
    let syms = [
        (1u32, STT_FUNC, 4u16, text_at, s.text.len() as u64),
        (3, STT_OBJECT, 5, rodata_at, KD_SIZE as u64),
    ];
    for (i, &(name, ty, shndx, value, size)) in syms.iter().take(nsyms as usize - 1).enumerate() {
        let at = dynsym_at + 24 * (i as u64 + 1);
        w32(&mut b, at, name);
        b[at as usize + 4] = STB_GLOBAL << 4 | ty;
        w16(&mut b, at + 6, shndx);
        w64(&mut b, at + 8, value);
        w64(&mut b, at + 16, size);
    }
    let put = |b: &mut Vec<u8>, at: u64, bytes: &[u8]| {
        b[at as usize..at as usize + bytes.len()].copy_from_slice(bytes)
    };
    put(&mut b, dynstr_at, dynstr);
    put(&mut b, text_at, &s.text);
    if s.descriptor {
        // kernel_code_entry_byte_offset: from the descriptor to the code.
        w64(&mut b, rodata_at + 16, text_at.wrapping_sub(rodata_at));
    }
    let dynamic = [
        (DT_HASH, hash_at),
        (DT_STRTAB, dynstr_at),
        (DT_SYMTAB, dynsym_at),
        (DT_STRSZ, dynstr.len() as u64),
        (DT_SYMENT, 24),
        (0, 0),
    ];
    for (i, (tag, v)) in dynamic.into_iter().enumerate() {
        w64(&mut b, dynamic_at + 16 * i as u64, tag);
        w64(&mut b, dynamic_at + 16 * i as u64 + 8, v);
    }
    put(&mut b, shstrtab_at, SHSTRTAB);
    let alloc = 2u64;
    let sections = section_rows(&Parts {
        hash_at,
        hash_size,
        nsyms,
        dynsym_at,
        dynstr_at,
        dynstr_size: dynstr.len() as u64,
        text_at,
        text_size: s.text.len() as u64,
        rodata_at,
        rodata_size,
        dynamic_at,
        dynamic_size,
        shstrtab_at,
    });
    for (i, (name, ty, flags, off, size, link, info, al, entsize)) in
        sections.into_iter().enumerate()
    {
        let h = shoff + 64 * (i as u64 + 1);
        w32(&mut b, h, name_at(name));
        w32(&mut b, h + 4, ty);
        w64(&mut b, h + 8, flags);
        w64(&mut b, h + 16, if flags & alloc != 0 { off } else { 0 });
        w64(&mut b, h + 24, off);
        w64(&mut b, h + 32, size);
        w32(&mut b, h + 40, link);
        w32(&mut b, h + 44, info);
        w64(&mut b, h + 48, al);
        w64(&mut b, h + 56, entsize);
    }
    b
}

/// Where each part of a [`shared_object`] lies.
struct Parts {
    hash_at: u64,
    hash_size: u64,
    nsyms: u64,
    dynsym_at: u64,
    dynstr_at: u64,
    dynstr_size: u64,
    text_at: u64,
    text_size: u64,
    rodata_at: u64,
    rodata_size: u64,
    dynamic_at: u64,
    dynamic_size: u64,
    shstrtab_at: u64,
}

/// A section header: name, type, flags, offset, size, link, info, align,
/// entsize.
type SectionRow = (&'static str, u32, u64, u64, u64, u32, u32, u64, u64);

/// The section headers of a [`shared_object`] after the null one.
fn section_rows(p: &Parts) -> [SectionRow; 7] {
    let alloc = 2u64;
    [
        (".hash", SHT_HASH, alloc, p.hash_at, p.hash_size, 2, 0, 4, 4),
        (
            ".dynsym",
            SHT_DYNSYM,
            alloc,
            p.dynsym_at,
            24 * p.nsyms,
            3,
            1,
            8,
            24,
        ),
        (
            ".dynstr",
            SHT_STRTAB,
            alloc,
            p.dynstr_at,
            p.dynstr_size,
            0,
            0,
            1,
            0,
        ),
        (
            ".text",
            SHT_PROGBITS,
            alloc | 4,
            p.text_at,
            p.text_size,
            0,
            0,
            256,
            0,
        ),
        (
            ".rodata",
            SHT_PROGBITS,
            alloc,
            p.rodata_at,
            p.rodata_size,
            0,
            0,
            64,
            0,
        ),
        (
            ".dynamic",
            SHT_DYNAMIC,
            alloc,
            p.dynamic_at,
            p.dynamic_size,
            3,
            0,
            8,
            16,
        ),
        (
            ".shstrtab",
            SHT_STRTAB,
            0,
            p.shstrtab_at,
            SHSTRTAB.len() as u64,
            0,
            0,
            1,
            0,
        ),
    ]
}

/// The rules an image of [`write`]'s can break one at a time (spec/
/// code-object.md, the ELF a loader maps).
pub(crate) const IMAGE_RULES: &[crate::rules::Rule] = &[
    crate::rules::CO_2,
    crate::rules::CO_3,
    crate::rules::CO_4,
    crate::rules::CO_5,
];

/// Break `rule` in `img`, an ELF image [`write`] made (sections: 1 `.hash`,
/// 2 `.dynsym`, 3 `.dynstr`, …, 7 `.shstrtab`); `cut`: the image may get
/// shorter. Returns where the strict reader reports it, within the image,
/// and what was done; `None` for an image that is no ELF file.
pub(crate) fn break_image(
    img: &mut Vec<u8>,
    rule: crate::rules::Rule,
    rng: &mut Rng,
    cut: bool,
) -> Option<(usize, String)> {
    use crate::rules::{CO_2, CO_3, CO_4, CO_5};
    if img.len() < 64 || !img.starts_with(b"\x7fELF") {
        return None;
    }
    let len = img.len() as u64;
    let r64 = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    // The image may be anything a mutator made of one: every place is
    // checked against it, nothing assumed from `write`'s layout.
    let shoff = usize::try_from(r64(img, 40)).ok()?;
    img.get(shoff.checked_add(64 * 8)? - 1)?;
    let sh = |i: usize| shoff + 64 * i;
    fn put(img: &mut [u8], at: usize, bytes: &[u8]) -> Option<()> {
        img.get_mut(at..at.checked_add(bytes.len())?)?
            .copy_from_slice(bytes);
        Some(())
    }
    Some(match rule {
        CO_2 => match rng.below(if cut { 6 } else { 5 }) {
            0 => {
                put(img, 20, &2u32.to_le_bytes())?;
                (20, "e_version 2".into())
            }
            1 => {
                put(img, 6, &[0])?;
                (6, "EI_VERSION 0".into())
            }
            2 => {
                put(img, 52, &60u16.to_le_bytes())?;
                (52, "e_ehsize 60".into())
            }
            3 => {
                put(img, 54, &55u16.to_le_bytes())?;
                (54, "e_phentsize 55".into())
            }
            4 => {
                put(img, 58, &40u16.to_le_bytes())?;
                (58, "e_shentsize 40".into())
            }
            _ => {
                let k = 8 + rng.below(56);
                img.truncate(k);
                (k, format!("cut to {k} bytes, inside the ELF header"))
            }
        },
        CO_3 => match rng.below(3) {
            0 => {
                put(img, 32, &(len - 56).to_le_bytes())?;
                (
                    32,
                    "the program header table moved to the last 56 bytes".into(),
                )
            }
            1 => {
                let at = len.checked_sub(64 * (1 + rng.below(7) as u64))?;
                put(img, 40, &at.to_le_bytes())?;
                (40, format!("e_shoff {at}: the table runs past the end"))
            }
            _ => {
                let n = 8 + rng.below(0xfe00) as u16;
                put(img, 62, &n.to_le_bytes())?;
                (62, format!("e_shstrndx {n}"))
            }
        },
        CO_4 => {
            let i = 1 + rng.below(7);
            match rng.below(3) {
                0 => {
                    let off = len + 1 + rng.below(4096) as u64;
                    put(img, sh(i) + 24, &off.to_le_bytes())?;
                    (
                        sh(i) + 24,
                        format!("section {i}'s offset {off}, past the end"),
                    )
                }
                1 => {
                    put(img, sh(i) + 32, &len.to_le_bytes())?;
                    (
                        sh(i) + 32,
                        format!("section {i}'s size {len}, past the end"),
                    )
                }
                _ => {
                    put(img, 64 + 32, &(len + 1).to_le_bytes())?;
                    (
                        64 + 32,
                        "the PT_LOAD segment's file size past the end".into(),
                    )
                }
            }
        }
        CO_5 => {
            let (s3, s7) = (sh(3), sh(7));
            let dynstr = (
                usize::try_from(r64(img, s3 + 24)).ok()?,
                usize::try_from(r64(img, s3 + 32)).ok()?,
            );
            let shstrtab = usize::try_from(r64(img, s7 + 24)).ok()?;
            match rng.below(3) {
                0 => {
                    let (off, size) = dynstr;
                    let last = off.checked_add(size)?.checked_sub(1)?;
                    put(img, last, b"x")?;
                    (last, ".dynstr ends without a NUL".into())
                }
                1 => {
                    let off = shstrtab;
                    put(img, off, b".")?;
                    (off, ".shstrtab begins without a NUL".into())
                }
                _ => {
                    put(img, sh(2) + 40, &4u32.to_le_bytes())?;
                    (sh(2) + 40, ".dynsym links .text as its string table".into())
                }
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::code_object::{identify, CodeObject};

    #[test]
    fn amdgpu_objects_say_what_their_target_id_says() {
        for (arch, want) in [
            ("gfx906", "gfx906"),
            ("gfx908:xnack+", "gfx908:xnack+"),
            ("gfx90a:sramecc-:xnack+", "gfx90a:sramecc-:xnack+"),
            ("gfx1100", "gfx1100"),
            ("gfx942:sramecc+:xnack-", "gfx942:sramecc+:xnack-"),
            ("gfx9-generic", "gfx9-generic"),
        ] {
            for seed in 0..6 {
                let co = for_target("amdgcn-amd-amdhsa", arch, seed).unwrap();
                let CodeObject::Amdgpu(o) = identify(&co) else {
                    panic!("{arch}: not an AMDGPU object")
                };
                assert_eq!(o.target_id(), want, "{arch} seed {seed}");
                assert_eq!(o.kernel_count, Some(1));
                assert!(o.code_object_version.unwrap() >= 4);
            }
        }
    }

    #[test]
    fn cubins_carry_their_sm_and_hosts_their_machine() {
        let c = for_target("nvptx64-nvidia-cuda", "sm_90", 3).unwrap();
        let CodeObject::Cubin(o) = identify(&c) else {
            panic!()
        };
        assert_eq!(o.sm, 90);
        let h = for_target("aarch64-unknown-linux-gnu", "", 3).unwrap();
        assert!(matches!(identify(&h), CodeObject::Host(h) if h.machine == 183));
        let s = for_target("spirv64-amd-amdhsa", "amdgcnspirv", 3).unwrap();
        assert!(matches!(identify(&s), CodeObject::SpirV(_)));
    }

    #[test]
    fn impossible_targets_are_refused_with_a_reason() {
        for (t, a) in [
            ("amdgcn-amd-amdhsa", "gfx1100:xnack+"),
            ("amdgcn-amd-amdhsa", "nope"),
            ("nvptx64-nvidia-cuda", "gfx906"),
            ("wasm32-unknown-unknown", ""),
        ] {
            let e = for_target(t, a, 0).unwrap_err();
            assert!(!e.0.is_empty());
        }
    }

    #[test]
    fn generated_images_pass_the_image_rules_and_each_cut_is_found() {
        for (t, a) in [
            ("amdgcn-amd-amdhsa", "gfx906"),
            ("nvptx64-nvidia-cuda", "sm_80"),
            ("x86_64-unknown-linux-gnu", ""),
        ] {
            let img = for_target(t, a, 2).unwrap();
            assert!(crate::inspect::image::check(&img, 0).is_empty(), "{t}");
            for cut in [10, 63, 200, img.len() - 1] {
                let errs = crate::inspect::image::check(&img[..cut], 0);
                assert!(!errs.is_empty(), "{t} cut at {cut}");
            }
        }
    }
}
