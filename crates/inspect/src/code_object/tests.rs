//! Unit tests of `identify` on hand-made and clang-built headers.

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
const GFX90A_XNACK_ON_V4: &str = "7f454c460201014002000000000000000100e000010000000000000000000000\
    0000000000000000f0120000000000003f07000040000000000040000b000100"; // 0x73f, gfx90a, xnack+, sramecc
const GFX90A_XNACK_ON_V5: &str = "7f454c460201014003000000000000000100e000010000000000000000000000\
    0000000000000000a8170000000000003f07000040000000000040000b000100"; // 0x73f, gfx90a, xnack+, sramecc
const GFX906_DEFAULT_V6: &str = "7f454c460201014004000000000000000100e000010000000000000000000000\
    000000000000000080130000000000002f05000040000000000040000b000100"; // 0x52f, gfx906, xnack, sramecc
const GFX90A_SRAMECC_ON_XNACK_OFF_V6: &str =
    "7f454c460201014004000000000000000100e000010000000000000000000000\
    0000000000000000b0170000000000003f0e000040000000000040000b000100"; // 0xe3f
const GFX9_GENERIC_V6: &str = "7f454c460201014004000000000000000100e000010000000000000000000000\
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
    let nvcc = "/* a\n block */ .version 8.0 // c\n.target sm_90a, texmode_independent\n.entry k()";
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
