//! The ELF reader and writers of the spec core on ELF files built here
//! byte by byte, in every class and byte order (spec/object-bundle.md):
//! broken headers (OBJ-2), `remove_sections` renumbering every reference
//! and refusing what `llvm-objcopy` refuses, extended section numbering,
//! and property tests (add_sections then remove_sections gives back the
//! original sections). Bundles in ELF files, and the writers compared with
//! LLVM's, are tested in the root crate's tests/object_bundle.rs.

#[path = "util/elf_builder.rs"]
mod elf_builder;

use elf_builder::{mini, mini64, sections_view, symbols_view, SecView, ENCODINGS};
use offload_kit_format::host::elf::{self, Elf};
use offload_kit_format::host::strtab::StrTab;
use offload_kit_format::raw::bundle::MAGIC;
use proptest::prelude::*;

const E: u64 = elf::SHF_EXCLUDE;

#[test]
fn obj_2_broken_headers() {
    let good = mini64();
    let e = Elf::parse(&good).unwrap();
    assert_eq!(e.sections.len(), 11);
    assert_eq!(e.shstrndx, 10);
    // Truncated file header.
    let err = Elf::parse(&good[..40]).unwrap_err();
    assert_eq!((err.rule_id(), err.offset()), (Some("OBJ-2"), Some(40)));
    // Section header table past the end.
    let mut d = good.clone();
    d[40..48].copy_from_slice(&(good.len() as u64).to_le_bytes());
    let err = Elf::parse(&d).unwrap_err();
    assert_eq!((err.rule_id(), err.offset()), (Some("OBJ-2"), Some(40)));
    // Name-table index out of range.
    let mut d = good.clone();
    d[62..64].copy_from_slice(&11u16.to_le_bytes());
    let err = Elf::parse(&d).unwrap_err();
    assert_eq!((err.rule_id(), err.offset()), (Some("OBJ-2"), Some(62)));
    // Name table of the wrong type.
    let mut d = good.clone();
    d[62..64].copy_from_slice(&1u16.to_le_bytes());
    let err = Elf::parse(&d).unwrap_err();
    assert_eq!(err.rule_id(), Some("OBJ-2"));
    assert_eq!(err.offset(), Some(e.sections[1].header_pos + 4));
    // A name offset past the name table.
    let mut d = good.clone();
    let at = e.sections[3].header_pos as usize;
    d[at..at + 4].copy_from_slice(&0x7fffu32.to_le_bytes());
    let err = Elf::parse(&d).unwrap_err();
    assert_eq!(
        (err.rule_id(), err.offset()),
        (Some("OBJ-2"), Some(at as u64))
    );
    // Bad class byte, bad e_shentsize.
    let mut d = good.clone();
    d[4] = 9;
    assert_eq!(Elf::parse(&d).unwrap_err().offset(), Some(4));
    let mut d = good;
    d[58] = 63;
    assert_eq!(Elf::parse(&d).unwrap_err().offset(), Some(58));
}

#[test]
fn remove_sections_renumbers_every_reference() {
    for enc in ENCODINGS {
        let d = mini(enc);
        let out =
            elf::remove_sections(&d, |s| s.name == b".comment" || s.name == b".note.a").unwrap();
        let e = Elf::parse(&out).unwrap();
        assert!(e.check().is_empty(), "{enc:?}: {:?}", e.check());
        let names: Vec<String> = e
            .sections
            .iter()
            .map(|s| s.name_str().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "",
                ".text",
                ".rela.text",
                ".group",
                ".data",
                ".bss",
                ".symtab",
                ".strtab",
                ".shstrtab"
            ]
        );
        assert_eq!(e.shstrndx, 8);
        let want: Vec<SecView> = sections_view(&d)
            .into_iter()
            .filter(|s| s.0 != ".comment" && s.0 != ".note.a")
            .collect();
        assert_eq!(sections_view(&out), want, "{enc:?}");
        assert_eq!(symbols_view(&out), symbols_view(&d), "{enc:?}");
        // The dedicated name table was rebuilt without the removed names,
        // as LLVM's StringTableBuilder lays it out (".text" shares the
        // tail of ".rela.text").
        let table = StrTab::build(names.iter().map(|n| n.as_bytes()));
        assert_eq!(e.sections[8].size, table.len());
        assert_eq!(
            table.len() as usize,
            1 + names[1..].iter().map(|n| n.len() + 1).sum::<usize>() - ".text\0".len()
        );
    }
}

#[test]
fn remove_sections_refuses_what_llvm_objcopy_refuses() {
    let d = mini64();
    // Symbols are defined in .data: offload-kit does not remove symbols.
    assert!(elf::remove_sections(&d, |s| s.name == b".data").is_err());
    // .rela.text links to .symtab.
    assert!(elf::remove_sections(&d, |s| s.name == b".symtab").is_err());
    assert!(elf::remove_sections(&d, |s| s.name == b".shstrtab").is_err());
    // Removing .text would take .rela.text with it, but symbols live in .text.
    assert!(elf::remove_sections(&d, |s| s.name == b".text").is_err());
    // Section 0 is never removed.
    let out = elf::remove_sections(&d, |s| s.index == 0).unwrap();
    assert_eq!(sections_view(&out), sections_view(&d));
}

#[test]
fn extended_section_numbering() {
    let d = mini64();
    let names: Vec<String> = (0..0xff00).map(|i| format!("s{i}")).collect();
    let new: Vec<(&str, &[u8], u64)> = names.iter().map(|n| (n.as_str(), &b""[..], 0)).collect();
    let big = elf::add_sections(&d, &new).unwrap();
    assert_eq!(
        &big[60..62],
        &[0, 0],
        "e_shnum = 0: the count is in section 0"
    );
    let e = Elf::parse(&big).unwrap();
    assert_eq!(e.sections.len(), 11 + 0xff00);
    assert_eq!(e.shstrndx, 10);
    assert_eq!(e.sections[0].size, 11 + 0xff00);
    let back = elf::remove_sections(&big, |s| s.name.starts_with(b"s")).unwrap();
    assert_eq!(sections_view(&back), sections_view(&d));
    assert_eq!(&back[60..62], &11u16.to_le_bytes());
}

fn new_sections() -> impl Strategy<Value = Vec<(String, Vec<u8>, u64)>> {
    prop::collection::vec(
        (
            "__CLANG_OFFLOAD_BUNDLE__[a-z0-9:+-]{0,20}",
            prop::collection::vec(any::<u8>(), 0..40),
            prop::sample::select(vec![0u64, E, E | elf::SHF_ALLOC, 0x30]),
        ),
        0..6,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn add_then_remove_restores_the_sections(enc in 0usize..4, new in new_sections()) {
        let d = mini(ENCODINGS[enc]);
        let refs: Vec<(&str, &[u8], u64)> = new.iter().map(|(n, c, f)| (n.as_str(), &c[..], *f)).collect();
        let added = elf::add_sections(&d, &refs).unwrap();
        let e = Elf::parse(&added).unwrap();
        prop_assert!(e.check().is_empty());
        prop_assert_eq!(e.sections.len(), 11 + new.len());
        for (s, (n, c, f)) in e.sections[11..].iter().zip(&new) {
            prop_assert_eq!(s.name, n.as_bytes());
            prop_assert_eq!(s.data(&added).unwrap(), &c[..]);
            prop_assert_eq!(s.flags, *f);
        }
        let back = elf::remove_sections(&added, |s| s.name.starts_with(MAGIC)).unwrap();
        prop_assert_eq!(sections_view(&back), sections_view(&d));
        prop_assert_eq!(symbols_view(&back), symbols_view(&d));
    }

    #[test]
    fn removing_any_free_subset_keeps_references(enc in 0usize..4, mask in 0u8..4, extra in new_sections()) {
        let d = mini(ENCODINGS[enc]);
        let refs: Vec<(&str, &[u8], u64)> = extra.iter().map(|(n, c, f)| (n.as_str(), &c[..], *f)).collect();
        let d = elf::add_sections(&d, &refs).unwrap();
        let gone = |n: &[u8]| (mask & 1 != 0 && n == b".comment") || (mask & 2 != 0 && n == b".note.a");
        let out = elf::remove_sections(&d, |s| gone(s.name)).unwrap();
        let want: Vec<SecView> = sections_view(&d).into_iter().filter(|s| !gone(s.0.as_bytes())).collect();
        prop_assert_eq!(sections_view(&out), want);
        prop_assert_eq!(symbols_view(&out), symbols_view(&d));
    }
}
