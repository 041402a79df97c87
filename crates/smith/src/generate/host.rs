//! Containers in host files: ELF objects with bundle sections or a
//! `.hip_fatbin`, and device archives; violations of their own rules and of
//! the bundles nested in them (offsets absolute in the file).

use super::{binary, ccob, pick, Cx, Draft, Violation};
use crate::bundle::fatbin::{FATBIN_ALIGN, HIP_FATBIN};
use crate::bundle::object::{self, SECTION_PREFIX};
use crate::host::ar;
use crate::host::elf::{self, Elf, SHF_ALLOC, SHF_EXCLUDE};
use crate::rules::{self, Rule};

/// Rules an object-file bundle can break one at a time.
pub(crate) const OBJECT_RULES: &[Rule] = &[
    rules::OBJ_4,
    rules::OBJ_5,
    rules::OBJ_6,
    rules::OBJ_7,
    rules::OBJ_8,
    rules::ID_2,
    rules::TID_3,
];

/// Rules a `.hip_fatbin` can break one at a time (its own, and those of a
/// bundle inside it).
pub(crate) const FATBIN_RULES: &[Rule] = &[
    rules::FAT_2,
    rules::FAT_3,
    rules::FAT_4,
    rules::BIN_7,
    rules::BIN_8,
    rules::BIN_9,
    rules::BIN_13,
    rules::ID_2,
    rules::TID_3,
];

/// Rules a device archive can break one at a time (its own, and those of
/// a bundle in a member).
pub(crate) const ARCHIVE_RULES: &[Rule] = &[
    rules::OB_21,
    rules::BIN_5,
    rules::BIN_7,
    rules::BIN_8,
    rules::BIN_10,
    rules::ID_2,
    rules::TID_3,
];

/// A minimal relocatable x86-64 ELF object: `.text` (one `ret`) and the
/// section name table. Bundle sections are appended to it.
pub(crate) fn host_object() -> Vec<u8> {
    const SHSTRTAB: &[u8] = b"\0.text\0.shstrtab\0";
    let text_at = 64usize;
    let names_at = text_at + 16;
    let shoff = (names_at + SHSTRTAB.len()).div_ceil(8) * 8;
    let mut b = vec![0u8; shoff + 3 * 64];
    b[..8].copy_from_slice(b"\x7fELF\x02\x01\x01\x00");
    let le16 = |b: &mut Vec<u8>, at: usize, v: u16| b[at..at + 2].copy_from_slice(&v.to_le_bytes());
    let le32 = |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let le64 = |b: &mut Vec<u8>, at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    le16(&mut b, 16, 1); // ET_REL
    le16(&mut b, 18, 62); // EM_X86_64
    le32(&mut b, 20, 1);
    le64(&mut b, 40, shoff as u64);
    le16(&mut b, 52, 64); // e_ehsize
    le16(&mut b, 58, 64); // e_shentsize
    le16(&mut b, 60, 3); // e_shnum
    le16(&mut b, 62, 2); // e_shstrndx
    b[text_at] = 0xc3;
    b[names_at..names_at + SHSTRTAB.len()].copy_from_slice(SHSTRTAB);
    // (name, type, flags, offset, size, align)
    let sections = [
        (1u32, elf::SHT_PROGBITS, 0x6u64, text_at, 16usize, 16u64),
        (7, elf::SHT_STRTAB, 0, names_at, SHSTRTAB.len(), 1),
    ];
    for (i, (name, ty, flags, off, size, align)) in sections.into_iter().enumerate() {
        let h = shoff + 64 * (i + 1);
        le32(&mut b, h, name);
        le32(&mut b, h + 4, ty);
        le64(&mut b, h + 8, flags);
        le64(&mut b, h + 24, off as u64);
        le64(&mut b, h + 32, size as u64);
        le64(&mut b, h + 48, align);
    }
    b
}

/// One object-file bundle, valid or breaking `rule`.
pub(crate) fn build_object(mut cx: Cx<'_>, rule: Option<Rule>) -> Option<Draft> {
    let max = if cx.small { 2 } else { 4 };
    let host = cx.ids.host_or_builtin(cx.rng);
    let mut devices = cx.ids.devices(cx.rng, max);
    if devices.is_empty() {
        return None;
    }
    let mut datas: Vec<Vec<u8>> = Vec::with_capacity(devices.len());
    for id in &devices {
        datas.push(pick::payload_for(&mut cx, id));
    }
    let mut flags = vec![SHF_EXCLUDE; devices.len() + 1];
    let mut host_data = object::HOST_MARKER.to_vec();
    let i = cx.rng.below(devices.len());
    // What the chosen section `i` (device) must be found as: (position kind, extra).
    let mut id_pos_extra = None;
    let what = match rule {
        None => String::new(),
        Some(rules::OBJ_4) => {
            devices[i] = String::new();
            id_pos_extra = Some(0);
            format!("device section {i} named with the bare prefix")
        }
        Some(rules::ID_2 | rules::TID_3) => {
            let (id, pos, what) = binary::bad_id(&mut cx, rule?)?;
            devices[i] = id;
            id_pos_extra = Some(pos);
            what
        }
        Some(rules::OBJ_5) => {
            devices.insert(i + 1, devices[i].clone());
            datas.insert(i + 1, pick::payload(cx.rng, cx.small));
            flags.push(SHF_EXCLUDE);
            "a device ID twice".into()
        }
        Some(rules::OBJ_6) => {
            host_data = vec![0, 0];
            "the host section holds two bytes".into()
        }
        Some(rules::OBJ_7) => {
            datas[i] = object::HOST_MARKER.to_vec();
            format!("device section {i} holds the host marker")
        }
        Some(rules::OBJ_8) => {
            flags[i + 1] |= SHF_ALLOC;
            format!("device section {i} has SHF_ALLOC")
        }
        Some(_) => return None,
    };
    let mut names = vec![format!("{SECTION_PREFIX}{host}")];
    names.extend(devices.iter().map(|d| format!("{SECTION_PREFIX}{d}")));
    let mut contents = vec![host_data];
    contents.extend(datas);
    let new: Vec<(&str, &[u8], u64)> = names
        .iter()
        .zip(&contents)
        .zip(&flags)
        .map(|((n, d), f)| (n.as_str(), d.as_slice(), *f))
        .collect();
    let bytes = elf::add_sections(&host_object(), &new).ok()?;
    let description = format!("object-file bundle, sections [{}]", names.join(", "));
    let Some(rule) = rule else {
        return Some(Draft {
            bytes,
            description,
            violation: None,
        });
    };
    let parsed = Elf::parse(&bytes).ok()?;
    let entries = object::scan(&parsed);
    // entries[0] is the host; device i is entries[i + 1]; a repeat is i + 2.
    let e = match rule {
        rules::OBJ_5 => entries[i + 2],
        rules::OBJ_6 => entries[0],
        _ => entries[i + 1],
    };
    let at = match rule {
        rules::OBJ_5 => e.id_pos,
        rules::OBJ_6 | rules::OBJ_7 => e.offset,
        rules::OBJ_8 => e.record_pos + 8,
        _ => e.id_pos + id_pos_extra? as u64,
    };
    Some(Draft {
        bytes,
        description,
        violation: Some(Violation::new(rule, at, what)),
    })
}

/// Set `sh_addralign` of section `index` and lay the file out again.
fn set_align(bytes: &[u8], index: usize, align: u64) -> Option<Vec<u8>> {
    let e = Elf::parse(bytes).ok()?;
    let h = e.sections.get(index)?.header_pos as usize;
    let mut out = bytes.to_vec();
    out[h + 48..h + 56].copy_from_slice(&align.to_le_bytes());
    elf::add_sections(&out, &[]).ok()
}

/// One host object with a `.hip_fatbin`, valid or breaking `rule`.
pub(crate) fn build_fatbin(mut cx: Cx<'_>, rule: Option<Rule>) -> Option<Draft> {
    let count = 1 + cx.rng.below(if cx.small { 2 } else { 3 });
    let bad = cx.rng.below(count);
    let mut sec = Vec::new();
    let mut parts = Vec::new();
    // (offset in the section, violation relative to the bundle)
    let mut inner: Option<(usize, Violation)> = None;
    let mut pad_spans = Vec::new();
    for k in 0..count {
        if k > 0 {
            let start = sec.len();
            sec.resize(
                sec.len().div_ceil(FATBIN_ALIGN as usize) * FATBIN_ALIGN as usize,
                0,
            );
            if sec.len() > start {
                pad_spans.push((start, sec.len()));
            }
        }
        let entries = binary::entries(&mut cx, 50);
        let align = binary::align(&mut cx);
        let at = sec.len();
        let plain_rule = rule.filter(|r| k == bad && binary::RULES.contains(r));
        if let Some(r) = plain_rule {
            let (b, v) = binary::malform(&mut cx, r, entries, align, false)?;
            sec.extend_from_slice(&b);
            inner = Some((at, v));
            parts.push("binary bundle (malformed)".to_string());
        } else if let Some(versions) =
            fatbin_ccob_versions(&mut cx, rule == Some(rules::FAT_3) && k == bad)
        {
            let b = binary::write(&entries, align).bytes;
            let (blob, o) = ccob::compress(&mut cx, &b, &versions);
            if rule == Some(rules::FAT_3) && k == bad {
                inner = Some((
                    at,
                    Violation::new(rules::FAT_3, 4, "a CCOB v1 in .hip_fatbin"),
                ));
            }
            sec.extend_from_slice(&blob);
            parts.push(format!(
                "CCOB v{} {:?}: {}",
                o.version,
                o.method,
                binary::describe(&entries, align)
            ));
        } else {
            sec.extend_from_slice(&binary::write(&entries, align).bytes);
            parts.push(format!(
                "binary bundle, {}",
                binary::describe(&entries, align)
            ));
        }
    }
    if rule == Some(rules::FAT_2) {
        // Pad the last bundle too, so there is always padding to dirty.
        let start = sec.len();
        sec.resize(
            sec.len().div_ceil(FATBIN_ALIGN as usize) * FATBIN_ALIGN as usize,
            0,
        );
        if sec.len() > start {
            pad_spans.push((start, sec.len()));
        }
    }
    let obj = elf::add_sections(&host_object(), &[(HIP_FATBIN, &sec, SHF_ALLOC)]).ok()?;
    let index = Elf::parse(&obj).ok()?.sections.len() - 1;
    let align = if rule == Some(rules::FAT_4) {
        *cx.rng.pick(&[1u64, 8, 16, 256, 2048])
    } else {
        FATBIN_ALIGN
    };
    let mut bytes = set_align(&obj, index, align)?;
    let e = Elf::parse(&bytes).ok()?;
    let s = &e.sections[index];
    let (sec_at, header) = (s.offset as usize, s.header_pos);
    let description = format!(".hip_fatbin (align {align}) of [{}]", parts.join("; "));
    let violation = match rule {
        None => None,
        Some(rules::FAT_4) =>
        // Type and alignment are one check, reported at the type.
        {
            Some(Violation::new(
                rules::FAT_4,
                header + 4,
                format!("alignment {align}"),
            ))
        }
        Some(rules::FAT_2) => {
            if pad_spans.is_empty() {
                return None; // every bundle ends at a multiple of 4096
            }
            let &(s0, e0) = cx.rng.pick(&pad_spans);
            let at = s0 + cx.rng.below(e0 - s0);
            bytes[sec_at + at] = 1 + cx.rng.below(255) as u8;
            Some(Violation::new(
                rules::FAT_2,
                (sec_at + at) as u64,
                "a padding byte set",
            ))
        }
        Some(_) => {
            let (at, mut v) = inner?;
            v.offset += (sec_at + at) as u64;
            Some(v)
        }
    };
    Some(Draft {
        bytes,
        description,
        violation,
    })
}

/// One device archive, valid or breaking `rule`.
pub(crate) fn build_archive(mut cx: Cx<'_>, rule: Option<Rule>) -> Option<Draft> {
    let count = 1 + cx.rng.below(if cx.small { 2 } else { 3 });
    let bad = cx.rng.below(count);
    let mut members = Vec::new();
    let mut parts = Vec::new();
    let mut inner = None;
    for k in 0..count {
        let entries = binary::entries_of(&mut cx, 30, pick::member_payload_for);
        let align = binary::align(&mut cx);
        let name = format!("k{k}-{}.o", cx.rng.below(100));
        let data = match rule.filter(|r| k == bad && binary::RULES.contains(r)) {
            Some(r) => {
                let (b, v) = binary::malform(&mut cx, r, entries.clone(), align, true)?;
                inner = Some(v);
                b
            }
            None if cx.rng.chance(30) && !cx.ccob_versions(&[2, 3]).is_empty() => {
                let b = binary::write(&entries, align).bytes;
                let versions = cx.ccob_versions(&[2, 3]);
                ccob::compress(&mut cx, &b, &versions).0
            }
            None => binary::write(&entries, align).bytes,
        };
        parts.push(format!("{name}: {}", binary::describe(&entries, align)));
        members.push((name, data));
    }
    let refs: Vec<(&str, &[u8])> = members
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_slice()))
        .collect();
    let mut bytes = ar::write_gnu(&refs);
    let description = format!("device archive of [{}]", parts.join("; "));
    let found = ar::members_raw(&bytes, 0, rules::OB_21).ok()?;
    let m = found.get(bad)?;
    let (header, data_at) = (m.header_offset as usize, m.data_offset);
    let violation = match rule {
        None => None,
        Some(rules::OB_21) => {
            // The member's size field runs past the end of the archive.
            let size = bytes.len() as u64 + 1 + cx.rng.below(1 << 20) as u64;
            let field = format!("{size:<10}");
            bytes[header + 48..header + 58].copy_from_slice(field.as_bytes());
            Some(Violation::new(
                rules::OB_21,
                header as u64 + 48,
                format!("member {bad}: size {size} past the end"),
            ))
        }
        Some(_) => {
            let mut v = inner?;
            v.offset += data_at;
            Some(v)
        }
    };
    Some(Draft {
        bytes,
        description,
        violation,
    })
}

/// The compressed bundle versions a `.hip_fatbin` bundle is drawn in, 30%
/// of the time: 2 and 3 (what clang writes there) of those the release
/// reads; version 1 when it must break FAT-3. `None`: left uncompressed.
fn fatbin_ccob_versions(cx: &mut Cx<'_>, fat_3: bool) -> Option<Vec<u16>> {
    if fat_3 {
        return Some(vec![1]);
    }
    let versions = cx.ccob_versions(&[2, 3]);
    (cx.rng.chance(30) && !versions.is_empty()).then_some(versions)
}
