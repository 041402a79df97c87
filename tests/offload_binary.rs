//! Offload binaries (spec/offload-binary.md): rule tests for the strict
//! reader, property tests (model → bytes → model, canonical bytes → model
//! → bytes, no panic on mutations), the malformed corpus, and differential
//! tests against the real `clang-offload-packager` 16 and 19,
//! `llvm-offload-binary` 22 and `llvm-objdump --offloading` 16, 19 and 22.
//!
//! A missing LLVM fails the differential tests ("LLVM N not installed: run
//! tools/setup"); set `OFFLOAD_KIT_NO_LLVM=1` to skip the releases that are
//! not installed.

mod common;

use common::{llvm_tool, Out};
use offload_kit::host::ar as archive;
use offload_kit::offload_binary::llvm::{self, Failure};
use offload_kit::offload_binary::packager::ImageArgs;
use offload_kit::offload_binary::{
    self as ob, container, parse_strict, Compression, OwnedImage, ReadOptions,
};
use offload_kit::Release;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const KIT: &str = env!("CARGO_BIN_EXE_offload-kit");
const RELEASES: [u32; 3] = [16, 19, 22];
const MALFORMED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/malformed");

// ---------------------------------------------------------------------------
// Fixtures

/// `pk.22` (spec/offload-binary.md, *Worked example*): nvptx sm_70 openmp,
/// amdgcn gfx90a openmp, as LLVM 19 and 22 write it.
fn pk22() -> Vec<u8> {
    let a = image(
        0,
        1,
        &[("arch", "sm_70"), ("triple", "nvptx64-nvidia-cuda")],
        b"NVPTX-IMAGE-SM70",
    );
    let b = image(
        0,
        1,
        &[("arch", "gfx90a"), ("triple", "amdgcn-amd-amdhsa")],
        b"AMDGCN-IMG-GFX90A!",
    );
    ob::write_v1_all(&[a, b]).unwrap()
}

/// An unflagged image of `image_kind` and `offload_kind` with `strings`.
fn image(image_kind: u16, offload_kind: u16, strings: &[(&str, &str)], bytes: &[u8]) -> OwnedImage {
    OwnedImage {
        image_kind,
        offload_kind,
        flags: 0,
        strings: strings
            .iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect(),
        image: bytes.to_vec(),
    }
}

/// The first binary of `pk.22` (160 bytes), the base of the malformed corpus.
fn one() -> Vec<u8> {
    pk22()[..160].to_vec()
}

fn put64(d: &mut [u8], at: usize, v: u64) {
    d[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn strict(d: &[u8]) -> Result<Vec<ob::Binary<'_>>, offload_kit::Errors> {
    parse_strict(d, 0, ReadOptions::default())
}

/// The rules of the strict errors of `d` (sorted, deduplicated).
fn rules_of(d: &[u8]) -> Vec<&'static str> {
    let mut r: Vec<&'static str> = match strict(d) {
        Ok(_) => Vec::new(),
        Err(es) => es.iter().filter_map(|e| e.rule_id()).collect(),
    };
    r.sort_unstable();
    r.dedup();
    r
}

fn first_error(d: &[u8]) -> offload_kit::Error {
    strict(d).expect_err("strict reader must reject")[0].clone()
}

// ---------------------------------------------------------------------------
// Rule tests (strict reader)

#[test]
fn ob_1_magic() {
    assert_eq!(strict(&pk22()).unwrap().len(), 2);
    let mut d = one();
    d[2] = 0x11;
    let e = first_error(&d);
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-1"), Some(2)));
    assert_eq!(rules_of(b""), ["OB-1"]);
    assert_eq!(rules_of(b"\x10\xff"), ["OB-1"]);
}

#[test]
fn ob_2_version() {
    for v in [0u32, 4, 99] {
        let mut d = one();
        d[4..8].copy_from_slice(&v.to_le_bytes());
        let e = first_error(&d);
        assert_eq!((e.rule_id(), e.offset()), (Some("OB-2"), Some(4)), "v{v}");
    }
}

#[test]
fn ob_3_header_present() {
    for cut in [4usize, 8, 16, 31] {
        let e = first_error(&one()[..cut]);
        assert_eq!(e.rule_id(), Some("OB-3"), "cut {cut}");
        assert_eq!(e.offset(), Some(cut as u64));
    }
    // A v3 header is 40 bytes.
    let mut d = one()[..36].to_vec();
    d[4] = 3;
    assert_eq!(first_error(&d).rule_id(), Some("OB-3"));
}

#[test]
fn ob_4_size_bounds() {
    let mut d = one();
    put64(&mut d, 8, 10000);
    let e = first_error(&d);
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-4"), Some(8)));
    put64(&mut d, 8, 0);
    assert_eq!(first_error(&d).rule_id(), Some("OB-4"));
    // Truncated after the header: the size runs past the data.
    assert!(rules_of(&one()[..100]).contains(&"OB-4"));
}

#[test]
fn ob_5_size_aligned() {
    let mut d = pk22();
    put64(&mut d, 8, 157);
    assert!(rules_of(&d).contains(&"OB-5"));
    // The unpadded last binary that fills the data exactly (accepted by LLVM) is still flagged.
    let mut last = one()[..157].to_vec();
    put64(&mut last, 8, 157);
    put64(&mut last, 64, 13);
    assert_eq!(rules_of(&last), ["OB-5"]);
}

#[test]
fn ob_6_entry_table() {
    let mut d = one();
    put64(&mut d, 16, 150);
    let e = first_error(&d);
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-6"), Some(16)));
    let mut d = one();
    put64(&mut d, 24, 0);
    assert_eq!(rules_of(&d), ["OB-6"]);
    let mut d = one();
    put64(&mut d, 16, 8);
    assert!(rules_of(&d).contains(&"OB-6"));
}

#[test]
fn ob_7_string_entries_bounded() {
    let d = std::fs::read(format!("{MALFORMED}/nstr_huge.pk")).unwrap();
    let e = first_error(&d);
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-7"), Some(48)));
}

#[test]
fn ob_8_strings_inside() {
    let d = std::fs::read(format!("{MALFORMED}/keyoff_big.pk")).unwrap();
    let e = first_error(&d);
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-8"), Some(72)));
    // A value offset at the very end: no NUL before the end.
    let mut d = one();
    put64(&mut d, 80, 159);
    assert_eq!(rules_of(&d), ["OB-8"]);
}

#[test]
fn ob_9_image_inside() {
    let d = std::fs::read(format!("{MALFORMED}/imgsize_big.pk")).unwrap();
    let e = first_error(&d);
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-9"), Some(64)));
    let mut d = one();
    put64(&mut d, 64, u64::MAX - 99);
    assert_eq!(rules_of(&d), ["OB-9"]);
}

#[test]
fn ob_10_no_overlap() {
    // The image placed over the string table.
    let mut d = one();
    put64(&mut d, 56, 104);
    assert!(rules_of(&d).contains(&"OB-10"));
    // A key pointing into the header.
    let mut d = one();
    put64(&mut d, 72, 0);
    assert!(rules_of(&d).contains(&"OB-8") || rules_of(&d).contains(&"OB-10"));
    // Strings may share bytes (tail merging): the canonical file is clean.
    let t = image(
        1,
        1,
        &[("triple", "nvptx64-nvidia-cuda"), ("x", "cuda")],
        &[1],
    );
    assert!(strict(&ob::write_v1(&t).unwrap()).is_ok());
}

#[test]
fn ob_11_unique_keys() {
    let mut d = one();
    // Make string entry 1 use the key of string entry 0.
    let k0 = d[72..80].to_vec();
    d[88..96].copy_from_slice(&k0);
    let e = first_error(&d);
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-11"), Some(88)));
}

#[test]
fn ob_12_image_kind_per_release() {
    let mut d = one();
    d[32] = 99;
    assert_eq!(rules_of(&d), ["OB-12"]);
    d[32] = 6; // SPIR-V: 22 only
    assert!(strict(&d).is_ok());
    let r16 = parse_strict(
        &d,
        0,
        ReadOptions {
            release: Some(Release::L16),
            ..Default::default()
        },
    );
    assert_eq!(r16.unwrap_err()[0].rule_id(), Some("OB-12"));
}

#[test]
fn ob_13_offload_kind_per_release() {
    let mut d = one();
    d[34] = 3; // HIP in 16/19, undefined in 22
    let e = first_error(&d);
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-13"), Some(34)));
    assert!(e.message().contains("LLVM 22's table"), "{e}");
    assert!(parse_strict(
        &d,
        0,
        ReadOptions {
            release: Some(Release::L19),
            ..Default::default()
        }
    )
    .is_ok());
    d[34] = 4; // HIP in 22, undefined in 16/19
    assert!(strict(&d).is_ok());
    assert!(parse_strict(
        &d,
        0,
        ReadOptions {
            release: Some(Release::L16),
            ..Default::default()
        }
    )
    .is_err());
}

#[test]
fn ob_14_flags() {
    let mut d = one();
    d[36] = 1;
    let e = first_error(&d);
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-14"), Some(36)));
}

#[test]
fn ob_15_sequence() {
    let mut d = one();
    d.extend_from_slice(b"JUNK");
    let e = first_error(&d);
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-15"), Some(160)));
    let mut z = one();
    z.extend_from_slice(&[0; 8]);
    z.extend_from_slice(&one());
    let e = first_error(&z);
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-15"), Some(160)));
    assert!(e.message().contains("zero bytes"), "{e}");
}

#[test]
fn ob_16_zero_padding() {
    let mut d = one();
    d[143] = 1; // padding between the string table and the image
    let e = first_error(&d);
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-16"), Some(143)));
}

#[test]
fn ob_17_writer_layout() {
    assert_eq!(
        &pk22()[..160],
        &hex("10ff10ad01000000a0000000000000002000000000000000280000000000000000000100000000004800000000000000020000000000000090000000000000001000000000000000690000000000000089000000000000006e000000000000007500000000000000006172636800747269706c65006e7670747836342d6e76696469612d6375646100736d5f373000004e565054582d494d4147452d534d3730")[..]
    );
    // Empty image: the image offset is also the size.
    let e = image(0, 0, &[], &[]);
    assert_eq!(ob::write_v1(&e).unwrap().len(), 80);
}

#[test]
fn ob_18_string_order_per_release() {
    let a = ImageArgs::parse("file=a.o,triple=t,arch=x,kind=openmp,foo=y");
    assert_eq!(
        a.string_entries(Release::L16),
        [("triple", "t"), ("foo", "y"), ("arch", "x")]
    );
    assert_eq!(
        a.string_entries(Release::L22),
        [("arch", "x"), ("triple", "t"), ("foo", "y")]
    );
}

#[test]
fn ob_19_compressed() {
    let imgs = vec![image(2, 8, &[("triple", "spirv64")], &[0x55; 1000])];
    let mut d = ob::write_multi(&imgs, 3, Some(Compression::Zstd(5))).unwrap();
    assert!(strict(&d).is_ok());
    // Inflated size one too large.
    let inflated = u64::from_le_bytes(d[32..40].try_into().unwrap());
    put64(&mut d, 32, inflated + 1);
    assert_eq!(rules_of(&d), ["OB-19"]);
}

#[test]
fn ob_20_elf_section_type() {
    let elf = elf_with_section(&pk22(), 0x6fff_4c0b);
    let l = ob::list(&elf).unwrap();
    assert_eq!(l.len(), 2);
    assert_eq!(l[0].section.as_deref(), Some(".llvm.offloading"));
    let progbits = elf_with_section(&pk22(), 1);
    let e = ob::list(&progbits).unwrap_err();
    assert_eq!(e[0].rule_id(), Some("OB-20"));
    // LLVM skips it silently.
    for r in [Release::L16, Release::L19, Release::L22] {
        assert!(llvm::extract_offload_binaries(&progbits, "f", r)
            .unwrap()
            .is_empty());
    }
}

#[test]
fn ob_21_archives() {
    let elf = elf_with_section(&pk22(), 0x6fff_4c0b);
    let a = archive::write_gnu(&[("a.o", &elf), ("raw.bin", &pk22()), ("notes.txt", b"hello")]);
    let l = ob::list(&a).unwrap();
    assert_eq!(l.len(), 4);
    assert_eq!(l[0].member.as_deref(), Some("a.o"));
    assert_eq!(l[3].member.as_deref(), Some("raw.bin"));
    let mut bad = a.clone();
    bad.truncate(bad.len() - 3);
    assert_eq!(ob::list(&bad).unwrap_err()[0].rule_id(), Some("OB-21"));
}

#[test]
fn ob_22_packaging_arguments() {
    use offload_kit::offload_binary::packager::{package, PackageError};
    let mut read = |_: &str| Ok::<_, String>(b"X".to_vec());
    let no_triple = [ImageArgs::parse("file=a.o")];
    assert_eq!(
        package(&no_triple, Release::L16, &mut read),
        Err(PackageError::llvm(
            "'file' and 'triple' are required image arguments"
        ))
    );
    assert!(package(&no_triple, Release::L22, &mut read).is_ok());
    let no_file = [ImageArgs::parse("triple=t")];
    assert_eq!(
        package(&no_file, Release::L22, &mut read),
        Err(PackageError::llvm("'file' is a required image arguments"))
    );
    let two = [ImageArgs::parse("file=a.o,file=b.o,triple=t")];
    let d = package(&two, Release::L19, &mut read).unwrap();
    assert_eq!(strict(&d).unwrap().len(), 2);
}

#[test]
fn ob_23_extraction_names_contained() {
    // A triple with '/' and '..' must not leave the current directory.
    let img = image(
        1,
        1,
        &[("triple", "../../etc"), ("arch", "x/y")],
        b"PAYLOAD",
    );
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("work");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("in.bin"), ob::write_v1(&img).unwrap()).unwrap();
    let o = run_kit(
        &[
            "packager",
            "--llvm-version=19",
            "in.bin",
            "--image=kind=openmp",
        ],
        &sub,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let names: Vec<String> = std::fs::read_dir(&sub)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().any(|n| n.starts_with("in-.._.._etc-x_y.0.o")),
        "{names:?}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

// ---------------------------------------------------------------------------
// Property tests

fn image_strategy(v1: bool) -> impl Strategy<Value = OwnedImage> {
    // Valid strings hold no control characters (OB-25); NUL only in the
    // sized strings of v2/v3.
    let printable = || prop_oneof![0x20u8..=0x7e, 0x80u8..=0xff];
    let key = proptest::collection::vec(printable(), 0..12);
    let value = if v1 {
        proptest::collection::vec(printable(), 0..24).boxed()
    } else {
        proptest::collection::vec(prop_oneof![Just(0u8), printable()], 0..24).boxed()
    };
    (
        0u16..=6,
        prop_oneof![Just(0u16), Just(1), Just(2), Just(4), Just(8)],
        proptest::collection::vec((key, value), 0..8),
        proptest::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(ik, ok, mut strings, image)| {
            let mut seen = std::collections::HashSet::new();
            strings.retain(|(k, _)| seen.insert(k.clone()));
            OwnedImage {
                image_kind: ik,
                offload_kind: ok,
                flags: 0,
                strings,
                image,
            }
        })
}

fn mutate(mut d: Vec<u8>, muts: &[(usize, u8, u8)]) -> Vec<u8> {
    for &(pos, val, op) in muts {
        if d.is_empty() {
            break;
        }
        let p = pos % d.len();
        match op % 4 {
            0 => d[p] = val,
            1 => d.truncate(p),
            2 => d.insert(p, val),
            _ => {
                // Rewrite a whole u64 field with a boundary value.
                let at = p & !7;
                if at + 8 <= d.len() {
                    let v = [0u64, 1, 7, 8, 40, 72, 160, u64::MAX, u64::MAX - 7, 1 << 40]
                        [val as usize % 10];
                    d[at..at + 8].copy_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
    d
}

fn exercise_all_readers(d: &[u8]) {
    let _ = strict(d);
    let _ = ob::list(d);
    for r in [Release::L16, Release::L19, Release::L22] {
        let _ = parse_strict(
            d,
            0,
            ReadOptions {
                release: Some(r),
                ..Default::default()
            },
        );
        let _ = llvm::extract_offload_binaries(d, "f", r);
        let _ = llvm::objdump_offloading(d, "f", (r, Default::default()));
        if let Ok(imgs) = llvm::extract_offload_binaries(d, "f", r) {
            let f = [
                ImageArgs::parse("arch=sm_70"),
                ImageArgs::parse("kind=openmp,file=x"),
            ];
            let _ = ob::packager::plan_extraction(&imgs, "f", &f, (r, Default::default()), true);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        // OFFLOAD_KIT_PROPTEST_CASES raises the count for longer runs.
        cases: std::env::var("OFFLOAD_KIT_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
        ..ProptestConfig::default()
    })]

    /// Model → bytes → model (v1: one binary per image, concatenated).
    #[test]
    fn prop_model_bytes_model_v1(imgs in proptest::collection::vec(image_strategy(true), 1..4)) {
        let bytes = ob::write_v1_all(&imgs).unwrap();
        prop_assert_eq!(bytes.len() % 8, 0);
        let bins = strict(&bytes).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let back: Vec<OwnedImage> = bins.iter().flat_map(|b| b.entries.iter().map(OwnedImage::from_entry)).collect();
        prop_assert_eq!(back, imgs);
    }

    /// Model → bytes → model (v2, v3 uncompressed and compressed).
    #[test]
    fn prop_model_bytes_model_multi(imgs in proptest::collection::vec(image_strategy(false), 1..4), v in 2u32..=3, c in 0u8..3) {
        let comp = match (v, c) {
            (3, 1) => Some(Compression::Zstd(5)),
            (3, 2) => Some(Compression::Zlib(6)),
            _ => None,
        };
        let bytes = ob::write_multi(&imgs, v, comp).unwrap();
        let bins = strict(&bytes).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        prop_assert_eq!(bins.len(), 1);
        let back: Vec<OwnedImage> = bins[0].entries.iter().map(OwnedImage::from_entry).collect();
        prop_assert_eq!(back, imgs);
    }

    /// Canonical bytes → model → bytes.
    #[test]
    fn prop_bytes_model_bytes(imgs in proptest::collection::vec(image_strategy(true), 1..4)) {
        let bytes = ob::write_v1_all(&imgs).unwrap();
        let bins = strict(&bytes).unwrap();
        let again: Vec<OwnedImage> = bins.iter().flat_map(|b| b.entries.iter().map(OwnedImage::from_entry)).collect();
        prop_assert_eq!(ob::write_v1_all(&again).unwrap(), bytes.clone());
        // The LLVM model of every release reads the same strings and images.
        for r in [Release::L16, Release::L19, Release::L22] {
            let l = llvm::extract_offload_binaries(&bytes, "f", r).unwrap();
            prop_assert_eq!(l.len(), imgs.len());
            for (a, b) in l.iter().zip(&imgs) {
                prop_assert_eq!(a.image.as_ref().unwrap().to_vec(), b.image.clone());
                let got: Vec<(Vec<u8>, Vec<u8>)> = a.strings.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
                prop_assert_eq!(&got, &b.strings);
            }
        }
    }

    /// No reader panics on mutated binaries, raw or in an ELF section or archive.
    #[test]
    fn prop_never_panics(imgs in proptest::collection::vec(image_strategy(true), 1..3),
                         muts in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..6),
                         wrap in 0u8..3, v in 1u32..=3) {
        let bytes = if v == 1 { ob::write_v1_all(&imgs).unwrap() } else { ob::write_multi(&imgs, v, (v == 3).then_some(Compression::Zstd(3))).unwrap() };
        let d = mutate(bytes, &muts);
        let d = match wrap {
            0 => d,
            1 => elf_with_section(&d, 0x6fff_4c0b),
            _ => archive::write_gnu(&[("m.o", &d)]),
        };
        exercise_all_readers(&d);
    }
}

#[test]
fn malformed_corpus_never_panics() {
    let mut n = 0;
    for e in std::fs::read_dir(MALFORMED).unwrap() {
        let p = e.unwrap().path();
        let d = std::fs::read(&p).unwrap();
        for cut in 0..=d.len().min(400) {
            exercise_all_readers(&d[..cut]);
        }
        exercise_all_readers(&d);
        n += 1;
    }
    assert!(n > 0);
    // The .pk files: strict rule and LLVM outcome.
    let read = |n: &str| std::fs::read(format!("{MALFORMED}/{n}")).unwrap();
    for r in [Release::L16, Release::L19, Release::L22] {
        for f in ["nstr_huge.pk", "keyoff_big.pk"] {
            match llvm::extract_offload_binaries(&read(f), "f", r) {
                Err(Failure::Unsafe { error }) => assert!(error.rule_id().is_some()),
                other => panic!("{f} LLVM {r}: {other:?}"),
            }
        }
        let big = read("imgsize_big.pk");
        let img = llvm::extract_offload_binaries(&big, "f", r).unwrap();
        assert_eq!(img[0].image.as_ref().unwrap_err().rule_id(), Some("OB-9"));
        let unt = read("unterminated.pk");
        let un = llvm::extract_offload_binaries(&unt, "f", r).unwrap();
        assert!(!un.is_empty());
    }
    for f in [
        "nstr_huge.pk",
        "keyoff_big.pk",
        "imgsize_big.pk",
        "unterminated.pk",
    ] {
        assert!(strict(&read(f)).is_err(), "{f}");
    }
}

#[test]
fn cli_never_panics_on_malformed() {
    let dir = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(MALFORMED).unwrap() {
        let p = e.unwrap().path();
        let ps = p.to_str().unwrap();
        for r in ["16", "19", "22"] {
            let v = format!("--llvm-version={r}");
            for args in [
                vec!["packager", &v, ps, "--image=arch=sm_70"],
                vec!["packager", &v, ps, "--image=file=out"],
                vec!["packager", &v, "--objdump-offloading", ps],
            ] {
                let o = run_kit(&args, dir.path());
                assert!(!o.panicked(), "{args:?}: {}", o.stderr);
                assert!(o.code == Some(0) || o.code == Some(1), "{args:?}: {o:?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Helpers: ELF with one section, running programs

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A minimal ELF64 LE relocatable object with one section `.llvm.offloading`
/// of type `sh_type` holding `contents`.
fn elf_with_section(contents: &[u8], sh_type: u32) -> Vec<u8> {
    let shstr = b"\0.llvm.offloading\0.shstrtab\0";
    let data_off = 64u64;
    let shstr_off = data_off + contents.len() as u64;
    let shoff = (shstr_off + shstr.len() as u64).next_multiple_of(8);
    let mut f = vec![0u8; 64];
    f[..4].copy_from_slice(b"\x7fELF");
    f[4] = 2;
    f[5] = 1;
    f[6] = 1;
    f[16..18].copy_from_slice(&1u16.to_le_bytes());
    f[18..20].copy_from_slice(&62u16.to_le_bytes());
    f[20..24].copy_from_slice(&1u32.to_le_bytes());
    f[40..48].copy_from_slice(&shoff.to_le_bytes());
    f[52..54].copy_from_slice(&64u16.to_le_bytes());
    f[58..60].copy_from_slice(&64u16.to_le_bytes());
    f[60..62].copy_from_slice(&3u16.to_le_bytes());
    f[62..64].copy_from_slice(&2u16.to_le_bytes());
    f.extend_from_slice(contents);
    f.extend_from_slice(shstr);
    f.resize(shoff as usize, 0);
    let sh = |name: u32, ty: u32, flags: u64, off: u64, size: u64, align: u64| {
        let mut s = vec![0u8; 64];
        s[0..4].copy_from_slice(&name.to_le_bytes());
        s[4..8].copy_from_slice(&ty.to_le_bytes());
        s[8..16].copy_from_slice(&flags.to_le_bytes());
        s[24..32].copy_from_slice(&off.to_le_bytes());
        s[32..40].copy_from_slice(&size.to_le_bytes());
        s[48..56].copy_from_slice(&align.to_le_bytes());
        s
    };
    f.extend_from_slice(&[0u8; 64]);
    f.extend_from_slice(&sh(
        1,
        sh_type,
        0x8000_0000,
        data_off,
        contents.len() as u64,
        8,
    ));
    f.extend_from_slice(&sh(18, 3, 0, shstr_off, shstr.len() as u64, 1));
    f
}

impl Out {
    /// Stderr lines without the program prefix (argv\[0\] differs) and
    /// without offload-kit's "[detail (rule …)]" suffix.
    fn messages(&self) -> Vec<String> {
        self.stderr
            .lines()
            .map(|l| {
                let l = match (l.find(": error: "), l.find(": warning: ")) {
                    (Some(p), _) => format!("error: {}", &l[p + 9..]),
                    (None, Some(p)) => format!("warning: {}", &l[p + 11..]),
                    _ => l.to_string(),
                };
                let l = match l.find("Try: '") {
                    Some(p) => format!("{}Try: '<argv0> --help'", &l[..p]),
                    None => l,
                };
                match l.find(" [") {
                    Some(p) if l.ends_with(']') => l[..p].to_string(),
                    _ => l,
                }
            })
            .collect()
    }
}

fn exec(cmd: Command, dir: &Path) -> Out {
    common::exec(cmd, dir, Duration::from_secs(60))
}

fn run_kit(args: &[&str], dir: &Path) -> Out {
    let mut c = Command::new(KIT);
    c.args(args);
    exec(c, dir)
}

/// The real packager of release `n` (22: `llvm-offload-binary`).
fn real_packager(n: u32) -> Option<PathBuf> {
    llvm_tool(
        n,
        if n >= 22 {
            "llvm-offload-binary"
        } else {
            "clang-offload-packager"
        },
    )
}

fn release(n: u32) -> Release {
    n.to_string().parse().unwrap()
}

/// Run the real packager and offload-kit's with the same arguments in two
/// directories prepared by `setup`; return both outcomes and directories.
fn both(
    n: u32,
    args: &[String],
    setup: &dyn Fn(&Path),
) -> Option<(Out, Out, tempfile::TempDir, tempfile::TempDir)> {
    let real = real_packager(n)?;
    let dr = tempfile::tempdir().unwrap();
    let dk = tempfile::tempdir().unwrap();
    setup(dr.path());
    setup(dk.path());
    let mut c = Command::new(real);
    c.args(args);
    let r = exec(c, dr.path());
    let mut kargs = vec!["packager".to_string(), format!("--llvm-version={n}")];
    kargs.extend(args.iter().cloned());
    let mut c = Command::new(KIT);
    c.args(&kargs);
    let k = exec(c, dk.path());
    Some((r, k, dr, dk))
}

/// Files in `dir` (name → bytes), sorted.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect();
    v.sort();
    v
}

/// The mismatches `f` reports over `items`, on a few threads (the work is
/// spawning processes), in the order of `items`.
fn par_mismatches<T: Sync>(items: &[T], f: impl Fn(&T) -> Option<String> + Sync) -> Vec<String> {
    common::par_mismatches(6, items, f)
}

/// Inputs every differential test has available.
fn standard_inputs(d: &Path) {
    std::fs::write(d.join("a.o"), b"IMAGEDATA1").unwrap();
    std::fs::write(d.join("b.o"), b"BBBB").unwrap();
    std::fs::write(d.join("dev.bc"), b"DEVICE-BITCODE").unwrap();
    std::fs::write(
        d.join("lto.o"),
        b"BC\xc0\xde\x35\x14\x00\x00\x05\x00\x00\x00",
    )
    .unwrap();
    std::fs::write(d.join("k.cubin"), b"CUBIN").unwrap();
    std::fs::write(d.join("k.fatbin"), b"FATBIN!").unwrap();
    std::fs::write(d.join("k.s"), b".version 7.0\n").unwrap();
    std::fs::write(d.join("k.spv"), b"\x03\x02\x23\x07SPIRV").unwrap();
    std::fs::write(d.join("noext"), b"NO-EXTENSION").unwrap();
    std::fs::write(d.join(".hidden"), b"DOTFILE").unwrap();
    std::fs::write(d.join("empty.o"), b"").unwrap();
    std::fs::write(d.join("pk.22"), pk22()).unwrap();
}

// ---------------------------------------------------------------------------
// Differential: packaging

fn random_image(seed: u64) -> String {
    // A small xorshift keeps the cases reproducible without extra crates.
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let alpha = b"abcdefghijklmnopqrstuvwxyz_0123456789-+.:";
    let word = |next: &mut dyn FnMut() -> u64| {
        let n = next() % 13;
        (0..n)
            .map(|_| alpha[(next() % alpha.len() as u64) as usize] as char)
            .collect::<String>()
    };
    let counts = [1u64, 2, 3, 5, 8, 12, 13, 20, 30, 47, 48, 60, 100];
    let n = counts[(next() % counts.len() as u64) as usize];
    let fixed = ["arch", "triple", "kind", "feature", "foo"];
    let mut parts = vec!["file=a.o".to_string()];
    let mut has_triple = false;
    for _ in 0..n {
        let k = match next() % 8 {
            i @ 0..=4 => fixed[i as usize].to_string(),
            _ => word(&mut next),
        };
        has_triple |= k == "triple";
        let v = if next() % 5 == 0 {
            String::new()
        } else {
            word(&mut next)
        };
        parts.push(format!("{k}={v}"));
    }
    if !has_triple {
        parts.push("triple=t".into());
    }
    // Shuffle deterministically.
    for i in (1..parts.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        parts.swap(i, j);
    }
    parts.join(",")
}

#[test]
fn diff_packaging_byte_identical() {
    let mut cases: Vec<Vec<String>> = vec![
        vec!["--image=file=a.o,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=openmp".into()],
        vec![
            "--image=file=a.o,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=openmp".into(),
            "--image=file=a.o,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip,feature=+xnack".into(),
        ],
        vec!["--image=file=a.o,triple=t,arch=sm_70,arch=sm_80".into()],
        vec!["--image=file=a.o,triple=t,feature=+ptx80,zzz=1,aaa=2".into()],
        vec!["--image=file=a.o,triple=t,empty=,arch=".into()],
        vec!["--image=file=a.o,triple=t,foo".into()],
        vec!["--image=file=a.o,triple=t,,=v".into()],
        vec!["--image=file=dev.bc,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=openmp".into()],
        vec!["--image=file=lto.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip".into()],
        vec!["--image=file=k.cubin,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=cuda".into()],
        vec!["--image=file=k.fatbin,triple=nvptx64-nvidia-cuda,kind=cuda".into()],
        vec!["--image=file=k.s,triple=nvptx64-nvidia-cuda,arch=sm_52,kind=cuda".into()],
        vec!["--image=file=k.spv,triple=spirv64-intel,kind=sycl".into()],
        vec!["--image=file=a.o,triple=t,arch=x,file=k.spv".into()],
        vec!["--image=file=noext,triple=t,kind=bogus".into()],
        vec!["--image=file=.hidden,triple=t".into()],
        vec!["--image=file=empty.o,triple=t".into()],
        vec!["--image=file=pk.22,triple=t,arch=nested".into()],
        vec!["--image=triple=t,file=a.o,kind=openmp,kind=cuda".into()],
        vec!["--image".into(), "file=a.o,triple=t".into()],
        vec!["-image=file=a.o,triple=x-y-z".into()],
        vec![],
    ];
    for s in 0..160 {
        cases.push(vec![format!("--image={}", random_image(s))]);
    }
    let jobs: Vec<(u32, &Vec<String>)> = RELEASES
        .iter()
        .flat_map(|&n| cases.iter().map(move |c| (n, c)))
        .collect();
    let failures = par_mismatches(&jobs, |&(n, c)| {
        let mut args = vec!["-o".to_string(), "out.bin".to_string()];
        args.extend(c.iter().cloned());
        let (r, k, dr, dk) = both(n, &args, &standard_inputs)?;
        let rb = std::fs::read(dr.path().join("out.bin")).ok();
        let kb = std::fs::read(dk.path().join("out.bin")).ok();
        if r.code != k.code || rb != kb || r.messages() != k.messages() {
            return Some(format!(
                "LLVM {n} {c:?}: real {:?} {:?} vs kit {:?} {:?}; bytes equal: {}",
                r.code,
                r.messages(),
                k.code,
                k.messages(),
                rb == kb
            ));
        }
        None
    });
    common::assert_no_mismatches(&failures);
}

#[test]
fn diff_packaging_errors_and_files() {
    let cases: Vec<Vec<&str>> = vec![
        vec!["-o", "out.bin", "--image=file=a.o"],
        vec!["-o", "out.bin", "--image=triple=t"],
        vec!["-o", "out.bin", "--image=file=missing.o,triple=t"],
        vec!["-o", "out.bin", "--image=file=a.o,file=b.o,triple=t,arch=x"],
        vec![
            "-o",
            "out.bin",
            "--image=file=a.o,triple=t",
            "--image=file=b.o",
        ],
        vec!["-o", "out.bin", "pk.22"],
        vec!["-o", "nodir/out.bin", "--image=file=a.o,triple=t"],
        vec!["--bogus"],
        vec!["x", "y"],
        vec!["--image"],
        vec!["-o"],
        vec!["--archive=yes", "pk.22"],
        vec!["--archive", "pk.22", "--image=file=x.a"],
        vec!["missing.bin", "--image=file=x"],
        vec![],
    ];
    let mut failures = Vec::new();
    for n in RELEASES {
        for c in &cases {
            let args: Vec<String> = c.iter().map(|s| s.to_string()).collect();
            let Some((r, k, dr, dk)) = both(n, &args, &standard_inputs) else {
                continue;
            };
            // Compare the first line (cl's "Did you mean" depends on every
            // option libLLVM registers) and the files left behind.
            let (rm, km) = (r.messages(), k.messages());
            let same_msg = rm.first() == km.first() || (c.is_empty() && n == 22);
            if r.code != k.code || !same_msg || files(dr.path()) != files(dk.path()) {
                failures.push(format!(
                    "LLVM {n} {c:?}: real {:?} {rm:?} vs kit {:?} {km:?}",
                    r.code, k.code
                ));
            }
        }
    }
    common::assert_no_mismatches(&failures);
}

#[test]
fn diff_clang_offload_packager_name() {
    // Invoked as clang-offload-packager, 22 warns without a program prefix.
    let Some(real) = llvm_tool(22, "clang-offload-packager") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    standard_inputs(d.path());
    let link = d.path().join("clang-offload-packager");
    std::os::unix::fs::symlink(KIT, &link).unwrap();
    let mut c = Command::new(&link);
    c.args(["-o", "k.bin", "--image=file=a.o"]);
    let k = exec(c, d.path());
    let mut c = Command::new(real);
    c.args(["-o", "r.bin", "--image=file=a.o"]);
    let r = exec(c, d.path());
    assert_eq!(r.stderr, k.stderr);
    assert_eq!(
        std::fs::read(d.path().join("r.bin")).unwrap(),
        std::fs::read(d.path().join("k.bin")).unwrap()
    );
    assert!(k
        .stderr
        .starts_with("warning: 'clang-offload-packager' is deprecated"));
}

/// What of standard output a command line must share with LLVM.
#[derive(Clone, Copy)]
enum SameStdout {
    /// Every byte.
    All,
    /// The help text up to its option list (LLVM lists every option libLLVM
    /// registers, offload-kit only the tool's).
    HelpHeader,
    /// A version line (LLVM prints its distribution's).
    Version,
}

/// Odd command lines through the llvm::cl parser: unknown options, missing
/// values, repeated options, help and version, `--`, dash forms. The exit
/// status, the first message line, standard output (as `SameStdout` says)
/// and the files left behind must be LLVM's. Not covered (offload-kit
/// departs from LLVM there): `--version=0` and `--help=false` (LLVM: "does
/// not allow a value!"), `-oe.bin` (LLVM: "may not occur within a group!"),
/// and the "Did you mean" line.
#[test]
fn diff_odd_command_lines() {
    use SameStdout::*;
    let image = "--image=file=a.o,triple=t";
    let cases: Vec<(Vec<&str>, SameStdout)> = vec![
        (vec!["--bogus"], All),
        (vec!["-bogus=1"], All),
        (vec!["--imag=x"], All),
        (vec!["---o", "x.bin"], All),
        (vec!["-o"], All),
        (vec!["--image"], All),
        (vec!["-o", "i.bin", image, "--image"], All),
        (vec!["-o", "a.bin", "-o", "b.bin", image], All),
        (vec!["-o=c.bin", image], All),
        (vec!["--o", "d.bin", "-image", "file=a.o,triple=t"], All),
        (vec!["--image=", "-o", "e.bin"], All),
        (vec!["--help"], HelpHeader),
        (vec!["-h"], HelpHeader),
        (vec!["--help-list"], HelpHeader),
        (vec!["--version"], Version),
        (vec!["--", "pk.22"], All),
        (vec!["--", "-o"], All),
        (vec!["--", "x", "y"], All),
        (vec!["x", "y"], All),
        (vec!["-"], All),
        (vec!["--archive", "pk.22"], All),
        (vec!["--archive=yes", "pk.22"], All),
    ];
    let help_header = |b: &[u8]| {
        let t = String::from_utf8_lossy(b).into_owned();
        t.find("OPTIONS:").map(|p| t[..p].to_string())
    };
    let mut failures = Vec::new();
    for n in RELEASES {
        for (c, same) in &cases {
            let args: Vec<String> = c.iter().map(|s| s.to_string()).collect();
            let Some((r, k, dr, dk)) = both(n, &args, &standard_inputs) else {
                continue;
            };
            let (rm, km) = (r.messages(), k.messages());
            let stdout_ok = match same {
                All => r.stdout == k.stdout,
                HelpHeader => {
                    help_header(&r.stdout).is_some()
                        && help_header(&r.stdout) == help_header(&k.stdout)
                }
                Version => [&r.stdout, &k.stdout]
                    .iter()
                    .all(|o| String::from_utf8_lossy(o).contains(" version ")),
            };
            if r.code != k.code
                || rm.first() != km.first()
                || !stdout_ok
                || files(dr.path()) != files(dk.path())
            {
                failures.push(format!(
                    "LLVM {n} {c:?}: real {:?} {rm:?} {:?} vs kit {:?} {km:?} {:?} (stdout ok: {stdout_ok})",
                    r.code,
                    String::from_utf8_lossy(&r.stdout),
                    k.code,
                    String::from_utf8_lossy(&k.stdout),
                ));
            }
        }
    }
    common::assert_no_mismatches(&failures);
}

// ---------------------------------------------------------------------------
// Differential: extraction

/// Inputs for extraction: the package each release writes for a mixed set
/// of images (with HIP, so 16/19 and 22 disagree on the kind value).
fn extraction_inputs(d: &Path) {
    static CACHE: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(|| {
        let t = tempfile::tempdir().unwrap();
        make_extraction_inputs(t.path());
        t
    });
    for (name, bytes) in files(cache.path()) {
        std::fs::write(d.join(name), bytes).unwrap();
    }
}

fn make_extraction_inputs(d: &Path) {
    standard_inputs(d);
    for n in RELEASES {
        let Some(p) = real_packager(n) else { continue };
        let mut c = Command::new(p);
        c.args([
            "-o",
            &format!("m{n}.bin"),
            "--image=file=a.o,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=openmp",
            "--image=file=dev.bc,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip",
            "--image=file=k.cubin,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda",
            "--image=file=noext,triple=spirv64,kind=openmp",
            "--image=file=b.o,triple=amdgcn-amd-amdhsa,kind=openmp",
        ]);
        let o = exec(c, d);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
}

#[test]
fn diff_extraction() {
    let filters: Vec<Vec<&str>> = vec![
        vec!["--image=kind=openmp"],
        vec!["--image=triple=amdgcn-amd-amdhsa"],
        vec!["--image=arch=sm_70,file=one"],
        vec!["--image=kind=hip"],
        vec!["--image=kind=cuda", "--image=triple=spirv64"],
        vec!["--image=arch="],
        vec!["--image=arch=zzz,file=none"],
        vec!["--image=file=all"],
        vec!["--image=kind=openmp,kind=cuda"],
        vec![],
        vec!["--archive", "--image=file=lib.a,kind=openmp"],
        vec!["--archive", "--image=kind=openmp"],
        vec![
            "--archive",
            "--image=file=a1.a,arch=sm_70",
            "--image=file=a2.a,triple=amdgcn-amd-amdhsa",
        ],
    ];
    let mut jobs = Vec::new();
    for n in RELEASES {
        for src in RELEASES {
            for f in &filters {
                if n == 16 && f.contains(&"--archive") {
                    continue;
                }
                jobs.push((n, src, f));
            }
        }
    }
    let failures = par_mismatches(&jobs, |&(n, src, f)| {
        let mut args = vec![format!("m{src}.bin")];
        args.extend(f.iter().map(|s| s.to_string()));
        let (r, k, dr, dk) = both(n, &args, &extraction_inputs)?;
        if r.code != k.code || r.messages() != k.messages() || files(dr.path()) != files(dk.path())
        {
            let names = |d: &Path| files(d).into_iter().map(|f| f.0).collect::<Vec<_>>();
            return Some(format!(
                "LLVM {n} on m{src}.bin {f:?}: real {:?} {:?} {:?} vs kit {:?} {:?} {:?}",
                r.code,
                r.messages(),
                names(dr.path()),
                k.code,
                k.messages(),
                names(dk.path())
            ));
        }
        None
    });
    common::assert_no_mismatches(&failures);
}

// ---------------------------------------------------------------------------
// Differential: llvm-objdump --offloading and malformed inputs

/// Compare the model's `llvm-objdump --offloading` with the real one on
/// `file` (inside `dir`). Returns a mismatch description.
fn objdump_mismatch(n: u32, dir: &Path, file: &str) -> Option<String> {
    let objdump = llvm_tool(n, "llvm-objdump")?;
    let data = std::fs::read(dir.join(file)).unwrap();
    let mut c = Command::new(objdump);
    c.args(["--offloading", file]);
    let r = exec(c, dir);
    let m = llvm::objdump_offloading(&data, file, (release(n), Default::default())).unwrap();
    if r.crashed() {
        return match &m.unsafe_read {
            Some(_) => None,
            None => Some(format!(
                "LLVM {n} {file}: real crashed ({:?}), model {m:?}",
                r.signal
            )),
        };
    }
    if m.unsafe_read.is_some() {
        // The release read memory it does not own and survived: any output.
        return None;
    }
    let real_err = r
        .stderr
        .lines()
        .find_map(|l| l.find(": error: ").map(|p| l[p + 9..].to_string()));
    let real_out = String::from_utf8_lossy(&r.stdout).into_owned();
    if real_out != m.stdout || real_err != m.error || (r.code == Some(0)) != m.error.is_none() {
        return Some(format!(
            "LLVM {n} {file}: real rc {:?} out {real_out:?} err {real_err:?}; model out {:?} err {:?}",
            r.code, m.stdout, m.error
        ));
    }
    None
}

/// Malformed variants of the first binary of `pk.22` (cuts, bad sizes and
/// offsets, huge counts; what 16, 19 and 22 do with each is compared by
/// the differential tests below), with the strict rules they violate.
fn malformed_variants() -> Vec<(String, Vec<u8>, Vec<&'static str>)> {
    let base = one();
    let mut v: Vec<(String, Vec<u8>, Vec<&'static str>)> = Vec::new();
    for cut in [4usize, 8, 16, 31, 32, 71, 72, 100, 143, 144, 159] {
        v.push((format!("cut{cut}"), base[..cut].to_vec(), vec![]));
    }
    let edit = |name: &str, at: usize, val: u64| {
        let mut d = base.clone();
        put64(&mut d, at, val);
        (name.to_string(), d, vec![])
    };
    v.push(edit("size0", 8, 0));
    v.push(edit("size39", 8, 39));
    v.push(edit("size64", 8, 64));
    v.push(edit("size157", 8, 157));
    v.push(edit("size100", 8, 100));
    v.push(edit("size10000", 8, 10000));
    v.push(edit("entryoff_big", 16, 10000));
    v.push(edit("entrysize0", 24, 0));
    v.push(edit("stroff_big", 40, 10000));
    v.push(edit("stroff_edge", 40, 160));
    v.push(edit("imgoff_big", 56, 10000));
    v.push(edit("imgsize_big", 64, 10000));
    v.push(edit("imgsize_huge", 64, u64::MAX - 99));
    v.push(edit("keyoff_big", 72, 10000));
    v.push(edit("keyoff_end", 72, 160));
    v.push(edit("valoff_big", 80, 10000));
    v.push(edit("nstr_huge", 48, 1 << 40));
    v.push(edit("nstr_3", 48, 3));
    {
        let mut d = base.clone();
        d[32] = 99;
        v.push(("imgkind99".into(), d, vec![]));
        let mut d = base.clone();
        d[34] = 99;
        v.push(("offkind99".into(), d, vec![]));
        for ver in [0u32, 2, 99] {
            let mut d = base.clone();
            d[4..8].copy_from_slice(&ver.to_le_bytes());
            v.push((format!("version{ver}"), d, vec![]));
        }
        let mut d = base.clone();
        d[0] = 0;
        v.push(("badmagic".into(), d, vec![]));
        let mut d = base.clone();
        d[142] = b'X'; // the NUL after "sm_70" and the padding byte: the
        d[143] = b'Y'; // value runs into the image (unterminated.pk)
        v.push(("unterminated".into(), d, vec![]));
        let mut d = base.clone();
        d.extend_from_slice(b"JUNK");
        v.push(("trailing_junk".into(), d, vec![]));
        let mut d = base.clone();
        d.extend_from_slice(&[0; 8]);
        d.extend_from_slice(&base);
        v.push(("zero_pad".into(), d, vec![]));
        let mut d = pk22();
        d.truncate(d.len() - 9);
        v.push(("second_truncated".into(), d, vec![]));
        let mut d = b"JUNK".to_vec();
        d.extend_from_slice(&base);
        v.push(("junk_first".into(), d, vec![]));
        let mut d = base[..157].to_vec();
        put64(&mut d, 8, 157);
        put64(&mut d, 64, 13);
        v.push(("unpadded_last".into(), d, vec![]));
        v.push(("empty".into(), vec![], vec![]));
        v.push(("pk22".into(), pk22(), vec![]));
    }
    v
}

#[test]
fn diff_objdump_on_raw_and_malformed() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = vec![];
    for (name, d, _) in malformed_variants() {
        std::fs::write(dir.path().join(&name), &d).unwrap();
        inputs.push(name);
    }
    for e in std::fs::read_dir(MALFORMED).unwrap() {
        let p = e.unwrap().path();
        let name = format!("corpus-{}", p.file_name().unwrap().to_string_lossy());
        std::fs::copy(&p, dir.path().join(&name)).unwrap();
        inputs.push(name);
    }
    let mut failures = Vec::new();
    for n in RELEASES {
        for f in &inputs {
            if let Some(m) = objdump_mismatch(n, dir.path(), f) {
                failures.push(m);
            }
        }
    }
    common::assert_no_mismatches(&failures);
}

#[test]
fn diff_extraction_on_malformed() {
    // Extraction (`--image=arch=sm_70` and `--image=file=out`) of every
    // variant: same status, messages and files; where the model says the
    // release reads memory it does not own, offload-kit must exit 1 with a
    // rule and write nothing.
    let variants = malformed_variants();
    let mut jobs = Vec::new();
    for n in RELEASES {
        for v in &variants {
            for filt in ["--image=arch=sm_70", "--image=file=out"] {
                jobs.push((n, v, filt));
            }
        }
    }
    let failures = par_mismatches(&jobs, |&(n, (name, d, _), filt)| {
        let setup = |dir: &Path| std::fs::write(dir.join("in.bin"), d).unwrap();
        let args = vec!["in.bin".to_string(), filt.to_string()];
        let (r, k, dr, dk) = both(n, &args, &setup)?;
        let model = llvm::extract_offload_binaries(d, "in.bin", release(n));
        let unsafe_model = match &model {
            Err(Failure::Unsafe { .. }) => true,
            Ok(imgs) => {
                let f = [ImageArgs::parse(&filt[8..])];
                let (acts, _) = ob::packager::plan_extraction(
                    imgs,
                    "in.bin",
                    &f,
                    (release(n), Default::default()),
                    false,
                );
                acts.iter().any(|a| matches!(a, ob::packager::Action::WriteFile { image, .. } if imgs[*image].image.is_err()))
            }
            _ => false,
        };
        if unsafe_model {
            let wrote = files(dk.path()).len() > 1;
            if k.code != Some(1) || !k.stderr.contains("rule OB-") || wrote {
                return Some(format!(
                    "LLVM {n} {name} {filt}: unsafe in LLVM, kit {:?} {:?} wrote {wrote}",
                    k.code, k.stderr
                ));
            }
            return None;
        }
        if r.crashed()
            || r.code != k.code
            || r.messages() != k.messages()
            || files(dr.path()) != files(dk.path())
        {
            return Some(format!(
                "LLVM {n} {name} {filt}: real {:?}/{:?} {:?} vs kit {:?} {:?}",
                r.code,
                r.signal,
                r.messages(),
                k.code,
                k.messages()
            ));
        }
        None
    });
    common::assert_no_mismatches(&failures);
}

#[test]
fn strict_rules_of_malformed_variants() {
    let want: &[(&str, &[&str])] = &[
        ("cut4", &["OB-3"]),
        ("cut8", &["OB-3"]),
        ("cut16", &["OB-3"]),
        ("cut31", &["OB-3"]),
        ("cut32", &["OB-4", "OB-6"]),
        ("cut71", &["OB-4", "OB-6"]),
        ("cut72", &["OB-4", "OB-7", "OB-9"]),
        ("cut100", &["OB-4", "OB-7", "OB-9"]),
        ("cut143", &["OB-4", "OB-9"]),
        ("cut144", &["OB-4", "OB-9"]),
        ("cut159", &["OB-4", "OB-9"]),
        ("size0", &["OB-4"]),
        ("size39", &["OB-15", "OB-5", "OB-6"]),
        ("size64", &["OB-15", "OB-6"]),
        ("size157", &["OB-15", "OB-5", "OB-9"]),
        ("size100", &["OB-15", "OB-5", "OB-7", "OB-9"]),
        ("size10000", &["OB-4"]),
        ("entryoff_big", &["OB-6"]),
        ("entrysize0", &["OB-6"]),
        ("stroff_big", &["OB-7"]),
        ("stroff_edge", &["OB-7"]),
        ("imgoff_big", &["OB-9"]),
        ("imgsize_big", &["OB-9"]),
        ("imgsize_huge", &["OB-9"]),
        ("keyoff_big", &["OB-8"]),
        ("keyoff_end", &["OB-8"]),
        ("valoff_big", &["OB-8"]),
        ("nstr_huge", &["OB-7"]),
        ("nstr_3", &["OB-10", "OB-8"]),
        ("imgkind99", &["OB-12"]),
        ("offkind99", &["OB-13"]),
        ("version0", &["OB-2"]),
        ("version2", &["OB-6"]),
        ("version99", &["OB-2"]),
        ("badmagic", &["OB-1"]),
        ("unterminated", &["OB-8"]),
        ("trailing_junk", &["OB-15"]),
        ("zero_pad", &["OB-15"]),
        ("second_truncated", &["OB-4", "OB-9"]),
        ("junk_first", &["OB-1"]),
        ("unpadded_last", &["OB-5"]),
        ("empty", &["OB-1"]),
        ("pk22", &[]),
    ];
    assert_eq!(want.len(), malformed_variants().len());
    let vars = malformed_variants();
    let mut bad = Vec::new();
    for (name, rules) in want {
        let d = &vars.iter().find(|v| v.0 == *name).unwrap().1;
        let got = rules_of(d);
        let mut w: Vec<&str> = rules.to_vec();
        w.sort_unstable();
        if got != w {
            bad.push(format!(
                "{name}: got {got:?}, want {w:?}: {:?}",
                strict(d).err()
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn diff_objdump_on_elf_archives_and_links() {
    let mut failures = Vec::new();
    for n in RELEASES {
        let Some(clang) = llvm_tool(n, "clang") else {
            continue;
        };
        let (Some(lld), Some(ar), Some(objcopy)) = (
            llvm_tool(n, "ld.lld"),
            llvm_tool(n, "llvm-ar"),
            llvm_tool(n, "llvm-objcopy"),
        ) else {
            continue;
        };
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        standard_inputs(p);
        std::fs::write(p.join("h.c"), "int x = 1; int f(void) { return x; }\n").unwrap();
        std::fs::write(
            p.join("omp.c"),
            "int main(void) { int x = 0;\n#pragma omp target map(tofrom: x)\n x = 42;\n return x; }\n",
        )
        .unwrap();
        let sh = |prog: &Path, args: &[&str]| {
            let mut c = Command::new(prog);
            c.args(args);
            let o = exec(c, p);
            assert_eq!(o.code, Some(0), "{prog:?} {args:?}: {}", o.stderr);
        };
        sh(
            &clang,
            &[
                "-c",
                "h.c",
                "-o",
                "emb.o",
                "-Xclang",
                "-fembed-offload-object=pk.22",
            ],
        );
        sh(
            &clang,
            &[
                "-fopenmp",
                "--offload-arch=gfx906",
                "-nogpulib",
                "-c",
                "omp.c",
                "-o",
                "omp.o",
            ],
        );
        sh(&lld, &["-r", "emb.o", "omp.o", "-o", "linked.o"]);
        sh(
            &objcopy,
            &[
                "--set-section-alignment",
                ".llvm.offloading=16",
                "omp.o",
                "omp16.o",
            ],
        );
        sh(&lld, &["-r", "emb.o", "omp16.o", "-o", "padded.o"]);
        sh(&ar, &["rc", "lib.a", "emb.o", "omp.o"]);
        // A raw binary as a member: misaligned after emb.o, 8-aligned
        // after an 8-byte member (llvm-objdump reads members in place).
        std::fs::write(p.join("x8"), b"12345678").unwrap();
        sh(&ar, &["rc", "mixed.a", "emb.o", "pk.22", "a.o"]);
        sh(&ar, &["rc", "aligned.a", "x8", "pk.22"]);
        for f in [
            "emb.o",
            "omp.o",
            "linked.o",
            "padded.o",
            "lib.a",
            "mixed.a",
            "aligned.a",
            "pk.22",
        ] {
            if let Some(m) = objdump_mismatch(n, p, f) {
                failures.push(m);
            }
        }
        // The strict reader: clang's output conforms, the padded link does not.
        for f in ["emb.o", "omp.o", "linked.o", "lib.a"] {
            let data = std::fs::read(p.join(f)).unwrap();
            if let Err(e) = ob::list_with(
                &data,
                ob::ReadOptions {
                    release: Some(release(n)),
                    ..Default::default()
                },
            ) {
                failures.push(format!("LLVM {n} {f}: strict list failed: {e:?}"));
            }
        }
        let padded = std::fs::read(p.join("padded.o")).unwrap();
        match ob::list(&padded) {
            Err(e) if e.iter().any(|e| e.rule_id() == Some("OB-15")) => {}
            other => failures.push(format!("LLVM {n} padded.o: want OB-15, got {other:?}")),
        }
        // Canonical bytes → model → bytes on clang's own sections.
        let omp = std::fs::read(p.join("omp.o")).unwrap();
        for (f, bins) in container::read_all(
            &omp,
            ReadOptions {
                release: Some(release(n)),
                ..Default::default()
            },
        )
        .unwrap()
        {
            let imgs: Vec<OwnedImage> = bins
                .iter()
                .flat_map(|b| b.entries.iter().map(OwnedImage::from_entry))
                .collect();
            if ob::write_v1_all(&imgs).unwrap() != f.bytes {
                failures.push(format!("LLVM {n} omp.o: rewriting the section changes it"));
            }
        }
        // Extraction from the ELF object and the archive.
        for (input, filt) in [
            ("omp.o", "--image=arch=gfx906"),
            ("lib.a", "--image=kind=openmp"),
            ("linked.o", "--image=triple=amdgcn-amd-amdhsa,file=x"),
            ("mixed.a", "--image=kind=openmp"),
            ("aligned.a", "--image=arch=sm_70"),
        ] {
            let setup = |dir: &Path| {
                for f in ["omp.o", "lib.a", "linked.o", "mixed.a", "aligned.a"] {
                    std::fs::copy(p.join(f), dir.join(f)).unwrap();
                }
            };
            let args = vec![input.to_string(), filt.to_string()];
            let Some((r, k, dr, dk)) = both(n, &args, &setup) else {
                continue;
            };
            if r.code != k.code
                || r.messages() != k.messages()
                || files(dr.path()) != files(dk.path())
            {
                failures.push(format!(
                    "LLVM {n} extract {input} {filt}: real {:?} {:?} vs kit {:?} {:?}",
                    r.code,
                    r.messages(),
                    k.code,
                    k.messages()
                ));
            }
        }
    }
    common::assert_no_mismatches(&failures);
}

/// Hostile counts cost linear time: 200 000 string entries whose keys all
/// start inside long runs without a NUL (every key overlapping the others),
/// then the same keys split over two equal runs (every key repeated).
#[test]
fn ob_8_many_strings_linear_time() {
    fn build(n: u64, runs: &[u64], key: impl Fn(u64) -> u64) -> Vec<u8> {
        let tab = 72 + 16 * n;
        let size = (tab + runs.iter().sum::<u64>()).next_multiple_of(8);
        let mut d = vec![b'k'; size as usize];
        d[..tab as usize].fill(0);
        d[..4].copy_from_slice(&[0x10, 0xff, 0x10, 0xad]);
        d[4] = 1;
        put64(&mut d, 8, size);
        put64(&mut d, 16, 32);
        put64(&mut d, 24, 40);
        put64(&mut d, 40, 72);
        put64(&mut d, 48, n);
        put64(&mut d, 56, size);
        let mut end = tab;
        for r in runs {
            end += r;
            if end < size {
                d[end as usize - 1] = 0;
            }
        }
        for j in 0..n {
            let at = (72 + 16 * j) as usize;
            put64(&mut d, at, tab + key(j));
            put64(&mut d, at + 8, tab + key(j));
        }
        d
    }
    let t = std::time::Instant::now();
    let n = 200_000u64;
    let run = 2u64 << 20;
    // One run to the end of the binary: no key is terminated.
    let d = build(n, &[run], |j| j * 7 % run);
    match strict(&d) {
        Err(es) => assert!(es.iter().all(|e| e.rule_id() == Some("OB-8"))),
        Ok(_) => panic!("accepted"),
    }
    for r in [Release::L16, Release::L19, Release::L22] {
        let _ = llvm::extract_offload_binaries(&d, "f", r);
    }
    // Two equal runs, each key at the same place in one of them.
    let half = run / 2;
    let d = build(n, &[half, half, 8], |j| {
        (j / 2) * 5 % (half - 1) + (j % 2) * half
    });
    match strict(&d) {
        Err(es) => {
            assert!(es.iter().all(|e| e.rule_id() == Some("OB-11")));
            assert_eq!(es.len() as u64, n / 2);
        }
        Ok(_) => panic!("accepted"),
    }
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
}

// ---------------------------------------------------------------------------
// OB-24: the symbol table of `--archive` outputs

/// Build, with clang `n`, the images whose symbols `--archive` lists: ELF
/// objects of several machines, AMDGPU objects and shared objects, bitcode,
/// LTO objects, an OpenMP offloading object; plus malformed ELF members.
fn symtab_images(n: u32, d: &Path) -> Vec<String> {
    let clang = llvm_tool(n, "clang").expect("clang");
    std::fs::write(
        d.join("dev.c"),
        "int dvar = 7;\nstatic int sv = 3;\n__attribute__((weak)) int wfn(int a) { return a * 2; }\n\
         int devfn(int a) { return a + 1 + sv + dvar; }\nextern int undef_fn(int);\n\
         int caller(int a) { return undef_fn(a); }\nint common_var;\n",
    )
    .unwrap();
    std::fs::write(
        d.join("omp.c"),
        "int main(void) { int x = 0;\n#pragma omp target map(tofrom: x)\n x = 42;\n return x; }\n",
    )
    .unwrap();
    let mut made = Vec::new();
    let mut cc = |out: &str, args: &[&str]| {
        let mut c = Command::new(&clang);
        c.args(args).args(["dev.c", "-o", out]);
        let o = exec(c, d);
        assert_eq!(o.code, Some(0), "clang {n} {args:?}: {}", o.stderr);
        made.push(out.to_string());
    };
    let gpu = ["--target=amdgcn-amd-amdhsa", "-mcpu=gfx906", "-nogpulib"];
    cc("gpu.o", &[&gpu[..], &["-c"]].concat());
    cc("gpu.bc", &[&gpu[..], &["-c", "-emit-llvm"]].concat());
    cc("gpulto.o", &[&gpu[..], &["-c", "-flto"]].concat());
    cc(
        "gpu.so",
        &[
            &gpu[..],
            &[
                "-Wl,--unresolved-symbols=ignore-all",
                "-Wl,--noinhibit-exec",
            ],
        ]
        .concat(),
    );
    cc("host.o", &["-c", "-fcommon"]);
    cc("hostpic.so", &["-shared", "-fPIC"]);
    cc(
        "mac.bc",
        &["--target=x86_64-apple-macos", "-c", "-emit-llvm"],
    );
    for t in [
        "aarch64-linux-gnu",
        "armv7-linux-gnueabihf",
        "riscv64-linux-gnu",
        "powerpc-linux-gnu",
        "s390x-linux-gnu",
        "i386-linux-gnu",
    ] {
        cc(
            &format!("{t}.o"),
            &[&format!("--target={t}"), "-c", "-fcommon"],
        );
    }
    // The OpenMP offloading object itself as an image (an x86-64 ELF).
    let mut c = Command::new(&clang);
    c.args([
        "-fopenmp",
        "--offload-arch=gfx906",
        "-nogpulib",
        "-c",
        "omp.c",
        "-o",
        "omp.o",
    ]);
    assert_eq!(exec(c, d).code, Some(0));
    made.push("omp.o".into());
    // Bitcode LLVM cannot read: symbolic, no symbols.
    std::fs::write(
        d.join("future.bc"),
        b"BC\xc0\xde\x35\x14\x00\x00\x05\x00\x00\x00",
    )
    .unwrap();
    made.push("future.bc".into());
    made
}

/// Malformed ELF members made from clang's `gpu.o`: (name, bytes).
fn bad_elf_members(d: &Path) -> Vec<(String, Vec<u8>)> {
    let good = std::fs::read(d.join("gpu.o")).unwrap();
    let elf = offload_kit::host::elf::Elf::parse(&good).unwrap();
    let symtab = elf.sections.iter().find(|s| s.sh_type == 2).unwrap();
    let progbits = elf.sections.iter().find(|s| s.sh_type == 1).unwrap();
    let mut v = vec![
        ("short.o".to_string(), good[..40].to_vec()),
        ("cut.o".to_string(), good[..good.len() / 2].to_vec()),
    ];
    // sh_link of the symbol table names a PROGBITS section.
    let mut d1 = good.clone();
    let link_at = symtab.header_pos as usize + 40;
    d1[link_at..link_at + 4].copy_from_slice(&(progbits.index as u32).to_le_bytes());
    v.push(("badlink.o".into(), d1));
    // Every st_name past the string table.
    let mut d2 = good.clone();
    for i in 1..symtab.size / 24 {
        let at = (symtab.offset + i * 24) as usize;
        d2[at..at + 4].copy_from_slice(&0x00ff_ffffu32.to_le_bytes());
    }
    v.push(("badname.o".into(), d2));
    // e_shentsize wrong.
    let mut d3 = good.clone();
    d3[58] = 63;
    v.push(("shentsize.o".into(), d3));
    v
}

/// Whether the kit's stderr says what LLVM's says: line by line, without
/// the program prefix, equal or LLVM's line followed by offload-kit's
/// ` [detail (…rule …)]` (LLVM's own text may hold " [", so
/// `Out::messages` cannot cut it off).
fn same_messages(r: &Out, k: &Out) -> bool {
    let strip = |l: &str| match l.find(": error: ") {
        Some(p) => format!("error: {}", &l[p + 9..]),
        None => l.to_string(),
    };
    let (rl, kl): (Vec<String>, Vec<String>) = (
        r.stderr.lines().map(strip).collect(),
        k.stderr.lines().map(strip).collect(),
    );
    rl.len() == kl.len()
        && rl.iter().zip(&kl).all(|(a, b)| {
            a == b || (b.starts_with(&format!("{a} [")) && b.ends_with(")]") && b.contains("rule "))
        })
}

/// Run `tool args` in `dir` with `env`.
fn run_in(tool: &Path, args: &[String], dir: &Path, env: &[(&str, &str)]) -> Out {
    let mut c = Command::new(tool);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    exec(c, dir)
}

#[test]
fn ob_24_archive_symbol_table() {
    let mut failures = Vec::new();
    let mut compared = 0;
    for n in [19u32, 22] {
        let Some(real) = real_packager(n) else {
            continue;
        };
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        standard_inputs(p);
        let images = symtab_images(n, p);
        for (name, bytes) in bad_elf_members(p) {
            std::fs::write(p.join(&name), bytes).unwrap();
        }
        // One package per image, one with all of them and two non-symbolic
        // images, one per malformed member.
        let mut packages: Vec<(String, Vec<String>)> = images
            .iter()
            .map(|i| (format!("{i}.pk"), vec![i.clone()]))
            .collect();
        let mut all = vec!["a.o".to_string()];
        all.extend(images.iter().cloned());
        all.push("dev.bc".into());
        packages.push(("all.pk".into(), all));
        for (name, _) in bad_elf_members(p) {
            packages.push((format!("{name}.pk"), vec!["gpu.o".into(), name]));
        }
        for (pk, imgs) in &packages {
            let mut args = vec!["-o".to_string(), pk.clone()];
            for i in imgs {
                args.push(format!("--image=file={i},triple=t,arch=a,kind=openmp"));
            }
            let o = run_in(&real, &args, p, &[]);
            assert_eq!(o.code, Some(0), "packaging {pk}: {}", o.stderr);
        }
        // (input, image filter, environment)
        type Case<'a> = (String, String, Vec<(&'a str, &'a str)>);
        let mut inputs: Vec<Case<'_>> = packages
            .iter()
            .map(|(pk, _)| (pk.clone(), "--image=file=out.a,kind=openmp".into(), vec![]))
            .collect();
        // Extraction from the OpenMP object: its bitcode images.
        inputs.push((
            "omp.o".into(),
            "--image=file=out.a,arch=gfx906".into(),
            vec![],
        ));
        // The 64-bit table, with LLVM's test hook.
        inputs.push((
            "all.pk".into(),
            "--image=file=out.a,kind=openmp".into(),
            vec![("SYM64_THRESHOLD", "100")],
        ));
        for (input, filt, env) in &inputs {
            let args = vec![input.clone(), "--archive".into(), filt.clone()];
            let (dr, dk) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            for dir in [dr.path(), dk.path()] {
                std::fs::copy(p.join(input), dir.join(input)).unwrap();
            }
            let r = run_in(&real, &args, dr.path(), env);
            let mut kargs = vec!["packager".to_string(), format!("--llvm-version={n}")];
            kargs.extend(args.iter().cloned());
            let k = run_in(Path::new(KIT), &kargs, dk.path(), env);
            compared += 1;
            let rb = std::fs::read(dr.path().join("out.a")).ok();
            let kb = std::fs::read(dk.path().join("out.a")).ok();
            if r.code != k.code || !same_messages(&r, &k) || rb != kb {
                failures.push(format!(
                    "LLVM {n} {input} {filt} {env:?}: real {:?} {:?} vs kit {:?} {:?}; bytes equal: {}",
                    r.code,
                    r.messages(),
                    k.code,
                    k.messages(),
                    rb == kb
                ));
            }
            // A malformed member: LLVM's message, then the rule with an offset.
            if k.code == Some(1) && !k.stderr.contains("rule OB-24") {
                failures.push(format!("LLVM {n} {input}: no OB-24 detail: {}", k.stderr));
            }
            if let (Some(a), "all.pk") = (&kb, input.as_str()) {
                let want: &[u8] = if env.is_empty() {
                    b"/      "
                } else {
                    b"/SYM64/"
                };
                if &a[8..15] != want {
                    failures.push(format!(
                        "LLVM {n} {input} {env:?}: symbol table {:?}",
                        &a[8..24]
                    ));
                }
            }
        }
    }
    assert!(compared >= 40, "only {compared} comparisons");
    common::assert_no_mismatches(&failures);
}

/// Where LLVM dies (module-level inline asm in a bitcode member) or cannot
/// be modelled (bitcode without an IR symbol table), offload-kit reports
/// OB-24 and writes nothing.
#[test]
fn ob_24_unmodelled_members_refused() {
    let Some(clang) = llvm_tool(19, "clang") else {
        return;
    };
    let Some(las) = llvm_tool(19, "llvm-as") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(
        p.join("asm.c"),
        "__asm__(\".globl asmsym\\nasmsym:\\n\");\nint f(void){return 1;}\n",
    )
    .unwrap();
    let mut c = Command::new(&clang);
    c.args(["-c", "-emit-llvm", "asm.c", "-o", "asm.bc"]);
    assert_eq!(exec(c, p).code, Some(0));
    std::fs::write(p.join("nodl.ll"), "define i32 @f() {\n ret i32 1\n}\n").unwrap();
    let mut c = Command::new(&las);
    c.args(["nodl.ll", "-o", "nodl.bc"]);
    assert_eq!(exec(c, p).code, Some(0));
    for (img, what) in [
        ("asm.bc", "SIGSEGV"),
        ("nodl.bc", "without an IR symbol table"),
    ] {
        let pk = format!("{img}.pk");
        let o = run_kit(
            &[
                "packager",
                "-o",
                &pk,
                &format!("--image=file={img},triple=t"),
            ],
            p,
        );
        assert_eq!(o.code, Some(0));
        let o = run_kit(&["packager", &pk, "--archive", "--image=file=out.a"], p);
        assert_eq!(o.code, Some(1), "{img}");
        assert!(
            o.stderr.contains(what) && o.stderr.contains("rule OB-24"),
            "{}",
            o.stderr
        );
        assert!(
            o.stderr.contains("(at offset 0x68, rule OB-24)"),
            "{}",
            o.stderr
        );
        assert!(!p.join("out.a").exists());
    }
}

/// `--objdump-offloading` prints LLVM's stdout and error line, followed by
/// the rule and absolute offset behind the error; a near-miss magic is
/// OB-1 at the first differing byte; a cut archive member gives LLVM's
/// "truncated or malformed archive" message in extraction and objdump.
#[test]
fn ob_1_ob_21_errors_cite_rules_with_llvm_text() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let mut near = one();
    near[3] = 0xae;
    std::fs::write(p.join("near.bin"), &near).unwrap();
    std::fs::write(p.join("pre.bin"), b"\x10\xff").unwrap();
    std::fs::write(p.join("cut100.bin"), &one()[..100]).unwrap();
    std::fs::write(p.join("version2.bin"), {
        let mut v = one();
        v[4] = 2;
        v
    })
    .unwrap();
    // Archives: a binary member cut in its data, and the symbol table cut.
    let pk = pk22();
    let ar = offload_kit::host::symtab::write_gnu_with_symtab(
        &[("first.o", b"IMAGEDATA1"), ("pk.22", &pk)],
        &[
            offload_kit::host::symtab::Symbolic::No,
            offload_kit::host::symtab::Symbolic::No,
        ],
        offload_kit::host::symtab::SYM64_THRESHOLD,
    );
    std::fs::write(p.join("cutmember.a"), &ar[..ar.len() - 50]).unwrap();
    let lib = offload_kit::host::symtab::write_gnu_with_symtab(
        &[("x.o", b"\x7fELF\x02\x01\x01 is not really an ELF file")],
        &[offload_kit::host::symtab::Symbolic::Yes(
            vec![b"f".to_vec()],
        )],
        offload_kit::host::symtab::SYM64_THRESHOLD,
    );
    std::fs::write(p.join("cutsymtab.a"), &lib[..70]).unwrap();
    let want_rule = [
        ("near.bin", "(at offset 0x3, rule OB-1)]"),
        ("pre.bin", "(at offset 0x2, rule OB-1)]"),
        ("cut100.bin", "(at offset 0x8, rule OB-4)]"),
        ("version2.bin", "(at offset 0x4, rule OB-2)]"),
        ("cutmember.a", "rule OB-21)]"),
        ("cutsymtab.a", "(at offset 0x38, rule OB-21)]"),
    ];
    let mut failures = Vec::new();
    for n in [19u32, 22] {
        let Some(objdump) = llvm_tool(n, "llvm-objdump") else {
            continue;
        };
        let Some(real) = real_packager(n) else {
            continue;
        };
        for (f, rule) in want_rule {
            let r = run_in(&objdump, &["--offloading".into(), f.into()], p, &[]);
            let k = run_kit(
                &[
                    "packager",
                    &format!("--llvm-version={n}"),
                    "--objdump-offloading",
                    f,
                ],
                p,
            );
            // llvm-objdump reads a cut member before it fails on the next
            // one (in place, past the end of the archive): not modelled, only
            // the rule is checked there.
            let cut = f == "cutmember.a";
            if r.code != k.code
                || (!cut && (r.stdout != k.stdout || !same_messages(&r, &k)))
                || !k.stderr.contains(rule)
            {
                failures.push(format!(
                    "objdump {n} {f}: real {:?} {:?} vs kit {:?} {:?}",
                    r.code, r.stderr, k.code, k.stderr
                ));
            }
            if f.ends_with(".a") {
                let args = vec![f.to_string(), "--image=kind=openmp".to_string()];
                let r = run_in(&real, &args, p, &[]);
                let mut ka = vec!["packager".to_string(), format!("--llvm-version={n}")];
                ka.extend(args);
                let k = run_in(Path::new(KIT), &ka, p, &[]);
                if r.code != k.code
                    || !same_messages(&r, &k)
                    || !k.stderr.contains("truncated or malformed archive")
                    || !k.stderr.contains(rule)
                {
                    failures.push(format!(
                        "extract {n} {f}: real {:?} {:?} vs kit {:?} {:?}",
                        r.code, r.stderr, k.code, k.stderr
                    ));
                }
            }
        }
    }
    // The readers' own check, for detection layers.
    let e = ob::magic_near_miss(&near).unwrap();
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-1"), Some(3)));
    assert!(ob::magic_near_miss(&one()).is_none());
    assert!(ob::magic_near_miss(b"\x7fELF").is_none());
    common::assert_no_mismatches(&failures);
}

/// fuzz/findings/llvm-main M1 (and its control M0): what the reproducer
/// claims holds, the spec refuses it, and the finding names the commit the
/// `main` profile reads offload binaries from (moving the profile fails
/// here until the finding is re-read at the new commit).
#[test]
fn finding_m1_main_copies_past_its_header() {
    use std::io::Read;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/findings/llvm-main");
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let commit = offload_kit::profile::MAIN_OFFLOAD_BINARY_COMMIT;
    assert!(
        readme.contains(&format!("commit `{commit}`")),
        "fuzz/findings/llvm-main/README.md does not name MAIN_OFFLOAD_BINARY_COMMIT {commit}: re-read decompressOffloadBinary there"
    );
    let field = |d: &[u8], at: usize| u64::from_le_bytes(d[at..at + 8].try_into().unwrap());
    for (name, entries_offset) in [
        ("M1-entries-offset-past-header.offbin", 256),
        ("M0-control.offbin", 40),
    ] {
        let d = std::fs::read(dir.join(name)).unwrap();
        // Everything main checks holds: version 3, compressed, the entries
        // offset inside the size and the inflated size, and the stream at
        // the entries offset inflates to exactly the rest.
        let (size, eoff, inflated) = (field(&d, 8), field(&d, 16), field(&d, 32));
        assert_eq!(
            (&d[..4], &d[4..8]),
            (&[0x10, 0xff, 0x10, 0xad][..], &[3, 0, 0, 0][..]),
            "{name}"
        );
        assert_eq!(eoff, entries_offset, "{name}");
        assert!(
            size <= d.len() as u64 && eoff <= size && inflated > eoff,
            "{name}"
        );
        let mut body = Vec::new();
        flate2::read::ZlibDecoder::new(&d[eoff as usize..size as usize])
            .read_to_end(&mut body)
            .unwrap();
        assert_eq!(body.len() as u64, inflated - eoff, "{name}");
    }
    // The spec: a compressed binary's entries offset is 40 (OB-19, at the
    // field).
    let m1 = std::fs::read(dir.join("M1-entries-offset-past-header.offbin")).unwrap();
    let e = first_error(&m1);
    assert_eq!((e.rule_id(), e.offset()), (Some("OB-19"), Some(16)), "{e}");
}
