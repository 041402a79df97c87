//! A small ELF builder (relocatable objects in any class and byte order)
//! and semantic views of an ELF file through the spec core's reader, for
//! the ELF tests of the spec core (crates/format/tests/elf.rs) and the
//! object-bundle tests of the root crate (tests/object_bundle.rs, which
//! includes this file with `#[path]`). Each includer uses part of it.

#![allow(dead_code)]

use offload_kit_format::host::elf::{self, Elf};

#[derive(Clone)]
pub struct Sec {
    pub name: String,
    pub ty: u32,
    pub flags: u64,
    pub data: Vec<u8>,
    pub link: u32,
    pub info: u32,
    pub align: u64,
    pub entsize: u64,
    /// sh_size of a NOBITS section.
    pub nobits: u64,
}

pub fn sec(name: &str, ty: u32, flags: u64, data: Vec<u8>) -> Sec {
    Sec {
        name: name.into(),
        ty,
        flags,
        data,
        link: 0,
        info: 0,
        align: 1,
        entsize: 0,
        nobits: 0,
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Enc {
    pub is64: bool,
    pub be: bool,
}

pub const ENCODINGS: [Enc; 4] = [
    Enc {
        is64: true,
        be: false,
    },
    Enc {
        is64: false,
        be: false,
    },
    Enc {
        is64: true,
        be: true,
    },
    Enc {
        is64: false,
        be: true,
    },
];

impl Enc {
    pub fn put(self, out: &mut Vec<u8>, v: u64, n: usize) {
        let le = v.to_le_bytes();
        for i in 0..n {
            out.push(if self.be { le[n - 1 - i] } else { le[i] });
        }
    }
    pub fn word(self, out: &mut Vec<u8>, v: u64) {
        self.put(out, v, if self.is64 { 8 } else { 4 });
    }
    pub fn machine(self) -> u64 {
        match (self.is64, self.be) {
            (true, false) => 62, // x86-64
            (false, false) => 3, // i386
            (true, true) => 21,  // PPC64
            (false, true) => 20, // PPC
        }
    }
    pub fn sym(self, out: &mut Vec<u8>, name: u64, value: u64, size: u64, info: u8, shndx: u64) {
        self.put(out, name, 4);
        if self.is64 {
            out.push(info);
            out.push(0);
            self.put(out, shndx, 2);
            self.put(out, value, 8);
            self.put(out, size, 8);
        } else {
            self.put(out, value, 4);
            self.put(out, size, 4);
            out.push(info);
            out.push(0);
            self.put(out, shndx, 2);
        }
    }
}

/// Lay out an ET_REL file: header, section data (aligned), `.shstrtab`
/// last, then the section header table.
pub fn build_elf(enc: Enc, secs: &[Sec]) -> Vec<u8> {
    let mut shstr = vec![0u8];
    let mut name_off = Vec::new();
    for s in secs.iter().map(|s| s.name.as_str()).chain([".shstrtab"]) {
        name_off.push(shstr.len() as u64);
        shstr.extend_from_slice(s.as_bytes());
        shstr.push(0);
    }
    let mut all: Vec<Sec> = secs.to_vec();
    all.push(sec(".shstrtab", 3, 0, shstr));
    let ehsize = if enc.is64 { 64 } else { 52 };
    let mut body = vec![0u8; ehsize];
    let mut offsets = Vec::new();
    for s in &all {
        let a = s.align.max(1) as usize;
        while body.len() % a != 0 {
            body.push(0);
        }
        offsets.push(body.len() as u64);
        if s.ty != elf::SHT_NOBITS {
            body.extend_from_slice(&s.data);
        }
    }
    while body.len() % 8 != 0 {
        body.push(0);
    }
    let shoff = body.len() as u64;
    let mut sh = Vec::new();
    let shentsize = if enc.is64 { 64 } else { 40 };
    sh.resize(shentsize, 0); // section 0
    for (i, s) in all.iter().enumerate() {
        enc.put(&mut sh, name_off[i], 4);
        enc.put(&mut sh, u64::from(s.ty), 4);
        enc.word(&mut sh, s.flags);
        enc.word(&mut sh, 0);
        enc.word(&mut sh, offsets[i]);
        let size = if s.ty == elf::SHT_NOBITS {
            s.nobits
        } else {
            s.data.len() as u64
        };
        enc.word(&mut sh, size);
        enc.put(&mut sh, u64::from(s.link), 4);
        enc.put(&mut sh, u64::from(s.info), 4);
        enc.word(&mut sh, s.align);
        enc.word(&mut sh, s.entsize);
    }
    let mut h = vec![0x7f, b'E', b'L', b'F'];
    h.push(if enc.is64 { 2 } else { 1 });
    h.push(if enc.be { 2 } else { 1 });
    h.push(1);
    h.resize(16, 0);
    enc.put(&mut h, 1, 2); // ET_REL
    enc.put(&mut h, enc.machine(), 2);
    enc.put(&mut h, 1, 4);
    enc.word(&mut h, 0); // entry
    enc.word(&mut h, 0); // phoff
    enc.word(&mut h, shoff);
    enc.put(&mut h, 0, 4); // flags
    enc.put(&mut h, ehsize as u64, 2);
    enc.put(&mut h, 0, 2);
    enc.put(&mut h, 0, 2);
    enc.put(&mut h, shentsize as u64, 2);
    enc.put(&mut h, all.len() as u64 + 1, 2);
    enc.put(&mut h, all.len() as u64, 2);
    body[..ehsize].copy_from_slice(&h);
    body.extend_from_slice(&sh);
    body
}

/// Sections of the mini object (index = position + 1):
/// 1 .text, 2 .rela.text, 3 .comment, 4 .note.a, 5 .group, 6 .data,
/// 7 .bss, 8 .symtab, 9 .strtab, 10 .shstrtab.
pub fn mini_sections(enc: Enc) -> Vec<Sec> {
    let mut text = sec(".text", 1, 0x6, vec![0x90; 16]);
    text.align = 16;
    let mut rela = Vec::new();
    if enc.is64 {
        enc.put(&mut rela, 4, 8);
        enc.put(&mut rela, (3 << 32) | 1, 8);
        enc.put(&mut rela, 0, 8);
    } else {
        enc.put(&mut rela, 4, 4);
        enc.put(&mut rela, (3 << 8) | 1, 4);
        enc.put(&mut rela, 0, 4);
    }
    let mut rela = sec(".rela.text", 4, 0x40, rela);
    rela.link = 8;
    rela.info = 1;
    rela.align = if enc.is64 { 8 } else { 4 };
    rela.entsize = if enc.is64 { 24 } else { 12 };
    let mut comment = sec(".comment", 1, 0x30, b"mini\0".to_vec());
    comment.entsize = 1;
    let note = sec(".note.a", 1, 0, b"NOTE-A".to_vec());
    let mut group = Vec::new();
    enc.put(&mut group, 1, 4);
    enc.put(&mut group, 6, 4);
    let mut group = sec(".group", 17, 0, group);
    group.link = 8;
    group.info = 2;
    group.align = 4;
    group.entsize = 4;
    let mut data = sec(".data", 1, 0x3 | 0x200, vec![1, 2, 3, 4, 5, 6, 7, 8]);
    data.align = 8;
    let mut bss = sec(".bss", 8, 0x3, vec![]);
    bss.nobits = 32;
    bss.align = 8;
    let strtab = b"\0sig\0g\0d\0b\0u\0".to_vec();
    let mut syms = Vec::new();
    enc.sym(&mut syms, 0, 0, 0, 0, 0);
    enc.sym(&mut syms, 0, 0, 0, 3, 1); // section symbol .text
    enc.sym(&mut syms, 1, 0, 8, 0x11, 6); // global "sig" in .data: the group signature
    enc.sym(&mut syms, 5, 0, 16, 0x12, 1); // global "g" in .text
    enc.sym(&mut syms, 7, 0, 8, 0x11, 6); // global "d" in .data
    enc.sym(&mut syms, 9, 0, 32, 0x11, 7); // global "b" in .bss
    enc.sym(&mut syms, 11, 0, 0, 0x10, 0); // undefined "u"
    let mut symtab = sec(".symtab", 2, 0, syms);
    symtab.link = 9;
    symtab.info = 2;
    symtab.align = if enc.is64 { 8 } else { 4 };
    symtab.entsize = if enc.is64 { 24 } else { 16 };
    let strtab = sec(".strtab", 3, 0, strtab);
    vec![text, rela, comment, note, group, data, bss, symtab, strtab]
}

pub fn mini(enc: Enc) -> Vec<u8> {
    build_elf(enc, &mini_sections(enc))
}

pub fn mini64() -> Vec<u8> {
    mini(ENCODINGS[0])
}

// ---------------------------------------------------------------------------
// Semantic views of an ELF file, through the spec core's reader.
// ---------------------------------------------------------------------------

/// (name, type, flags, contents or NOBITS size, link name, info, align, entsize)
pub type SecView = (String, u32, u64, Vec<u8>, String, String, u64, u64);

pub fn sections_view(data: &[u8]) -> Vec<SecView> {
    let e = Elf::parse(data).unwrap();
    let name_of = |i: u32| {
        e.sections
            .get(i as usize)
            .map_or(format!("#{i}"), |s| s.name_str().into_owned())
    };
    e.sections
        .iter()
        .filter(|s| s.index != 0)
        .map(|s| {
            let contents = if s.sh_type == elf::SHT_STRTAB {
                vec![] // string tables are compared through the names they hold
            } else if s.sh_type == elf::SHT_GROUP {
                let d = s.data(data).unwrap();
                let mut v = d[..4].to_vec();
                for m in d[4..].chunks(4) {
                    let idx = if e.encoding.big_endian {
                        u32::from_be_bytes(m.try_into().unwrap())
                    } else {
                        u32::from_le_bytes(m.try_into().unwrap())
                    };
                    v.extend_from_slice(name_of(idx).as_bytes());
                    v.push(b'|');
                }
                v
            } else if s.sh_type == elf::SHT_SYMTAB {
                vec![]
            } else if s.sh_type == elf::SHT_NOBITS {
                s.size.to_le_bytes().to_vec()
            } else {
                s.data(data).unwrap().to_vec()
            };
            let info = if s.info_is_section() {
                name_of(s.info)
            } else {
                s.info.to_string()
            };
            (
                s.name_str().into_owned(),
                s.sh_type,
                s.flags,
                contents,
                if s.link == 0 {
                    String::new()
                } else {
                    name_of(s.link)
                },
                info,
                s.align,
                s.entsize,
            )
        })
        .collect()
}

/// Symbols as (name, value, size, info, section name).
pub fn symbols_view(data: &[u8]) -> Vec<(String, u64, u64, u8, String)> {
    let e = Elf::parse(data).unwrap();
    let enc = e.encoding;
    let rd = |b: &[u8]| -> u64 {
        let mut v = 0u64;
        if enc.big_endian {
            for &x in b {
                v = (v << 8) | u64::from(x);
            }
        } else {
            for &x in b.iter().rev() {
                v = (v << 8) | u64::from(x);
            }
        }
        v
    };
    let mut out = Vec::new();
    for s in e.sections.iter().filter(|s| s.sh_type == elf::SHT_SYMTAB) {
        let strtab = e.sections[s.link as usize].data(data).unwrap();
        for sym in s.data(data).unwrap().chunks(enc.sym_size() as usize) {
            let (name, value, size, info, shndx) = if enc.is64 {
                (
                    rd(&sym[0..4]),
                    rd(&sym[8..16]),
                    rd(&sym[16..24]),
                    sym[4],
                    rd(&sym[6..8]),
                )
            } else {
                (
                    rd(&sym[0..4]),
                    rd(&sym[4..8]),
                    rd(&sym[8..12]),
                    sym[12],
                    rd(&sym[14..16]),
                )
            };
            let n = &strtab[name as usize..];
            let n = String::from_utf8_lossy(&n[..n.iter().position(|&b| b == 0).unwrap()]);
            let sec = if shndx == 0 || shndx >= 0xff00 {
                format!("special {shndx}")
            } else {
                e.sections[shndx as usize].name_str().into_owned()
            };
            out.push((n.into_owned(), value, size, info, sec));
        }
    }
    out
}
