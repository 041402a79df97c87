//! Text bundles, strict reader and writer: one test per spec rule
//! (spec/text-bundle.md), property tests (entries → bytes → strict reader
//! → entries; the strict reader never panics) and the strict reader read
//! through windows. What each LLVM release reads of the same bytes, and
//! the differential tests against clang-offload-bundler and clang, are in
//! the root crate's tests/text_bundle.rs.

use offload_kit_format::source::{Source, Window};
use offload_kit_format::text::{self, TextEntry};
use offload_kit_format::Errors;
use proptest::prelude::*;

#[path = "util/text_cases.rs"]
mod text_cases;
use text_cases::*;

fn rules_of(d: &[u8], c: &str) -> Vec<&'static str> {
    match text::parse_strict(&d, 0, c) {
        Ok(_) => vec![],
        Err(es) => es.iter().filter_map(|e| e.rule_id()).collect(),
    }
}

fn errs(d: &[u8], c: &str) -> Errors {
    text::parse_strict(&d, 0, c).unwrap_err()
}

// ---------------------------------------------------------------------------
// One test per rule
// ---------------------------------------------------------------------------

#[test]
fn good_bundle_matches_llvm_bytes() {
    // What clang-offload-bundler 22 writes for these inputs with -type=s.
    let want = "\n# __CLANG_OFFLOAD_BUNDLE____START__ host-x86_64-unknown-linux-gnu-\nhost line 1\nhost line 2\n\n# __CLANG_OFFLOAD_BUNDLE____END__ host-x86_64-unknown-linux-gnu-\n\n# __CLANG_OFFLOAD_BUNDLE____START__ hip-amdgcn-amd-amdhsa--gfx906\ndev no newline\n# __CLANG_OFFLOAD_BUNDLE____END__ hip-amdgcn-amd-amdhsa--gfx906\n";
    assert_eq!(good(), want.as_bytes());
    let g = good();
    let b = text::parse_strict(&g, 0, "#").unwrap();
    assert_eq!(ids(&b.entries), [HOST, GFX906]);
    assert_eq!(b.content(&g, 0).unwrap(), b"host line 1\nhost line 2\n");
    assert_eq!(b.content(&g, 1).unwrap(), b"dev no newline");
    assert_eq!(b.entries[0].record_pos, 0);
    assert_eq!(b.entries[0].id_pos, 37);
    assert_eq!(b.find("hip-amdgcn-amd-amdhsa--gfx906"), Some(1));
}

#[test]
fn txt_1_comment_strings() {
    for (t, c) in [
        ("i", "//"),
        ("ii", "//"),
        ("cui", "//"),
        ("hipi", "//"),
        ("d", "#"),
        ("s", "#"),
        ("ll", ";"),
    ] {
        assert_eq!(text::comment(t), Some(c), "{t}");
    }
    for t in ["bc", "o", "a", "gch", "ast", "S", "c", ""] {
        assert_eq!(text::comment(t), None, "{t}");
    }
    // A bundle written for one comment is not a bundle for another.
    let d = text::write_to_vec(&[(HOST, b"x")], ";");
    assert!(text::is_text_bundle(&d, ";"));
    assert!(!text::is_text_bundle(&d, "#"));
    assert_eq!(rules_of(&d, "#"), ["TXT-3"]);
}

#[test]
fn txt_2_writer_layout() {
    let d = text::write_to_vec(&[(HOST, b""), (GFX906, b"\n")], "//");
    let want = cat(&[
        &start("//", HOST),
        &end("//", HOST),
        &start("//", GFX906),
        b"\n",
        &end("//", GFX906),
    ]);
    assert_eq!(d, want);
    assert_eq!(
        text::written_size(&[(HOST, b""), (GFX906, b"\n")], "//"),
        d.len() as u64
    );
    let mut streamed = Vec::new();
    text::write(&mut streamed, &[(HOST, b""), (GFX906, b"\n")], "//").unwrap();
    assert_eq!(streamed, d);
    assert!(text::write_to_vec(&[], "#").is_empty());
    let b = text::parse_strict(&d, 0, "//").unwrap();
    assert_eq!(contents(&d, &b.entries), [&b""[..], b"\n"]);
}

#[test]
fn txt_3_starts_with_the_first_start_line() {
    let g = good();
    // No leading "\n": no START line at the start of the input.
    let es = errs(&g[1..], "#");
    assert_eq!(es[0].rule_id(), Some("TXT-3"));
    assert_eq!(es[0].offset(), Some(0));
    assert!(es[0].to_string().contains("line 1:"), "{}", es[0]);
    // Text before the first START line.
    let d = cat(&[b"junk\n", &g]);
    let es = errs(&d, "#");
    assert_eq!(es.len(), 1);
    assert_eq!(es[0].rule_id(), Some("TXT-3"));
    assert!(es[0].message().contains("5 bytes"), "{}", es[0]);
    // Empty input, and text that is no bundle at all.
    assert_eq!(rules_of(b"", "#"), ["TXT-3"]);
    assert_eq!(rules_of(b"int main() {}\n", "#"), ["TXT-3"]);
    assert!(text::check_entries(&[], "#").is_err());
    // base shifts offsets.
    let es = text::parse_strict(&&g[1..], 1000, "#").unwrap_err();
    assert_eq!(es[0].offset(), Some(1000));
}

#[test]
fn txt_4_start_line_needs_a_newline() {
    let d = cat(&[&good(), &text::start_marker("#"), GFX90A]);
    let es = errs(&d, "#");
    assert_eq!(es.len(), 1);
    assert_eq!(es[0].rule_id(), Some("TXT-4"));
    assert_eq!(es[0].offset(), Some(d.len() as u64));
    let e = text::check_entries(&[(b"host-x86_64-unknown-linux-gnu\nx", b"")], "#").unwrap_err();
    assert!(e.iter().any(|e| e.rule_id() == Some("TXT-4")));
}

#[test]
fn txt_5_valid_ids() {
    let d = text::write_to_vec(&[(b"", b"A")], "#");
    let es = errs(&d, "#");
    assert_eq!(es[0].rule_id(), Some("TXT-5"));
    assert_eq!(es[0].offset(), Some(37));
    assert!(es[0].to_string().contains("line 2:"));
    let d = text::write_to_vec(&[(b"bogus", b"A")], "#");
    assert_eq!(rules_of(&d, "#"), ["ID-1"]);
    let d = text::write_to_vec(&[(b"hip-amdgcn-amd-amdhsa-gfx906", b"A")], "#");
    let es = errs(&d, "#");
    assert_eq!(es[0].rule_id(), Some("ID-5"));
    assert_eq!(es[0].offset(), Some(37 + 22));
    let d = text::write_to_vec(&[(b"host-x86_64-unknown-linux-gnu-\xff", b"A")], "#");
    assert_eq!(rules_of(&d, "#"), ["ID-1"]);
}

#[test]
fn txt_6_no_cr_in_marker_lines() {
    let crlf: Vec<u8> = good()
        .split(|&b| b == b'\n')
        .collect::<Vec<_>>()
        .join(&b"\r\n"[..]);
    let es = errs(&crlf, "#");
    // START and END line of both bundles.
    let cr: Vec<_> = es.iter().filter(|e| e.rule_id() == Some("TXT-6")).collect();
    assert_eq!(cr.len(), 4, "{es:?}");
    assert_eq!(crlf[cr[0].offset().unwrap() as usize], b'\r');
    let e = text::check_entries(&[(b"host-x86_64-unknown-linux-gnu-\r", b"")], "#").unwrap_err();
    assert_eq!(e[0].rule_id(), Some("TXT-6"));
}

#[test]
fn txt_7_start_without_end() {
    let d = cat(&[&good(), &start("#", GFX90A), b"no end\n"]);
    let es = errs(&d, "#");
    assert_eq!(es.len(), 1);
    assert_eq!(es[0].rule_id(), Some("TXT-7"));
    let lp = good().len() as u64 + 1;
    assert_eq!(es[0].offset(), Some(lp));
    // A single START without END at offset 0 (text_start_no_end.s).
    let one = include_bytes!("../../../tests/data/malformed/text_start_no_end.s");
    assert_eq!(rules_of(one, "#"), ["TXT-7"]);
    // A START before the END of the bundle before it: that bundle has no END.
    let d = cat(&[
        &start("#", HOST),
        b"h\n",
        &start("#", GFX906),
        b"d",
        &end("#", GFX906),
    ]);
    let es = errs(&d, "#");
    assert_eq!(
        es.iter().map(|e| e.rule_id().unwrap()).collect::<Vec<_>>(),
        ["TXT-7"]
    );
    assert_eq!(es[0].offset(), Some(1));
}

#[test]
fn txt_8_end_line() {
    // END names another ID.
    let d = cat(&[&start("#", HOST), b"h", &end("#", GFX906)]);
    let es = errs(&d, "#");
    assert_eq!(es.len(), 1);
    assert_eq!(es[0].rule_id(), Some("TXT-8"));
    let eid = d.len() - 1 - GFX906.len();
    assert_eq!(es[0].offset(), Some(eid as u64));
    // END line without "\n" at the end of the file.
    let g = good();
    let d = &g[..g.len() - 1];
    let es = errs(d, "#");
    assert_eq!(es.len(), 1);
    assert_eq!(es[0].rule_id(), Some("TXT-8"));
    assert_eq!(es[0].offset(), Some(d.len() as u64));
}

#[test]
fn txt_9_no_start_marker_in_content() {
    let d = cat(&[
        &start("#", GFX906),
        b"d1",
        &start("#", HOST),
        b"inner",
        &end("#", HOST),
        b"d2",
        &end("#", GFX906),
    ]);
    let es = errs(&d, "#");
    assert_eq!(rules_of(&d, "#"), ["TXT-9", "TXT-10"], "{es:?}");
    assert_eq!(
        es[0].offset(),
        Some(1 + start("#", GFX906).len() as u64 + 2)
    );
    let e = text::check_entries(&[(GFX906, &start("#", HOST))], "#").unwrap_err();
    assert_eq!(e[0].rule_id(), Some("TXT-9"));
    // Repeated START line of the same bundle.
    let d = cat(&[&start("#", HOST), &start("#", HOST), b"x", &end("#", HOST)]);
    assert_eq!(rules_of(&d, "#"), ["TXT-9"]);
}

#[test]
fn txt_10_no_end_marker_in_content() {
    let content = cat(&[b"a", &end("#", HOST), b"b"]);
    let entries: [(&[u8], &[u8]); 2] = [(HOST, &content), (GFX906, b"d")];
    let d = text::write_to_vec(&entries, "#");
    let es = errs(&d, "#");
    assert_eq!(rules_of(&d, "#"), ["TXT-10"], "{es:?}");
    assert_eq!(es[0].offset(), Some(2 + start("#", HOST).len() as u64));
    let e = text::check_entries(&entries, "#").unwrap_err();
    assert_eq!(e[0].rule_id(), Some("TXT-10"));
    // Own END marker as the last bytes of the content.
    let content = cat(&[b"a", &text::end_marker("#"), HOST]);
    let d = text::write_to_vec(&[(HOST, &content)], "#");
    assert_eq!(rules_of(&d, "#"), ["TXT-10"]);
    // An END marker naming another ID inside the content.
    let content = cat(&[b"a", &end("#", GFX906), b"b"]);
    let d = text::write_to_vec(&[(HOST, &content)], "#");
    assert_eq!(rules_of(&d, "#"), ["TXT-10"]);
}

#[test]
fn txt_11_nothing_between_bundles() {
    // END line directly followed by the next START line.
    let d = cat(&[
        &start("#", GFX906),
        b"d1",
        &end("#", GFX906),
        &start("#", HOST)[1..],
        b"h1",
        &end("#", HOST),
    ]);
    let es = errs(&d, "#");
    assert_eq!(es.len(), 1, "{es:?}");
    assert_eq!(es[0].rule_id(), Some("TXT-11"));
    // Text between bundles and after the last one.
    let g = good();
    let split = start("#", HOST).len() + 24 + end("#", HOST).len();
    let d = cat(&[&g[..split], b"junk\n", &g[split..], b"tail"]);
    let es = errs(&d, "#");
    assert_eq!(
        es.iter().map(|e| e.rule_id().unwrap()).collect::<Vec<_>>(),
        ["TXT-11", "TXT-11"]
    );
    assert_eq!(es[0].offset(), Some(split as u64));
    assert!(es[1].message().contains("4 bytes"));
}

#[test]
fn txt_12_unique_ids() {
    let d = text::write_to_vec(&[(GFX906, b"a"), (HOST, b"h"), (GFX906, b"b")], "#");
    let es = errs(&d, "#");
    assert_eq!(es.len(), 1);
    assert_eq!(es[0].rule_id(), Some("TXT-12"));
    assert!(es[0].message().contains("line 2"), "{}", es[0]);
    assert!(text::check_entries(&[(GFX906, b"a"), (GFX906, b"b")], "#").is_err());
}

#[test]
fn txt_13_file_order() {
    let entries: [(&[u8], &[u8]); 3] = [(GFX90A, b"3"), (HOST, b"1"), (GFX906, b"2")];
    let d = text::write_to_vec(&entries, ";");
    let b = text::parse_strict(&d, 0, ";").unwrap();
    assert_eq!(ids(&b.entries), [GFX90A, HOST, GFX906]);
}

#[test]
fn every_violation_is_reported() {
    let d = cat(&[
        b"junk",
        &start("#", b""),
        b"x",
        &end("#", b"other"),
        b"gap",
        &start("#", b"bogus"),
        b"y",
        &end("#", b"bogus"),
    ]);
    let got = rules_of(&d, "#");
    assert_eq!(
        got,
        ["TXT-3", "TXT-5", "TXT-8", "TXT-11", "ID-1"],
        "{:?}",
        errs(&d, "#")
    );
    let es = errs(&d, "#");
    assert!(es.windows(2).all(|w| w[0].offset() <= w[1].offset()));
    assert!(es.iter().all(|e| e.message().starts_with("line ")));
}

// ---------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn entries_bytes_entries(es in entries(), c in comment_s()) {
        let refs: Vec<(&[u8], &[u8])> = es.iter().map(|(i, p)| (&i[..], &p[..])).collect();
        let d = text::write_to_vec(&refs, c);
        let checked = text::check_entries(&refs, c);
        let parsed = text::parse_strict(&d, 7, c);
        prop_assert_eq!(checked.is_ok(), parsed.is_ok(), "check {:?} vs parse {:?}", checked, parsed);
        if let Ok(b) = parsed {
            let got: Vec<(&[u8], &[u8])> = b.entries.iter().map(|e| (&e.id[..], e.payload(&d).unwrap())).collect();
            prop_assert_eq!(&got, &refs);
        }
    }

    #[test]
    fn readers_never_panic_on_bytes(d in prop::collection::vec(any::<u8>(), 0..300), c in comment_s()) {
        let _ = text::parse_strict(&d, 0, c);
    }

    #[test]
    fn readers_never_panic_on_mutations(
        es in entries(),
        c in comment_s(),
        cut in any::<prop::sample::Index>(),
        pos in any::<prop::sample::Index>(),
        v in any::<u8>(),
        insert in content(),
    ) {
        let refs: Vec<(&[u8], &[u8])> = es.iter().map(|(i, p)| (&i[..], &p[..])).collect();
        let mut d = text::write_to_vec(&refs, c);
        if !d.is_empty() {
            let p = pos.index(d.len());
            d[p] = v;
            let k = cut.index(d.len() + 1);
            let tail = d.split_off(k);
            d.extend_from_slice(&insert);
            d.extend_from_slice(&tail);
        }
        let strict = text::parse_strict(&d, 0, c);
        if let Err(errs) = &strict {
            prop_assert!(!errs.is_empty());
            for e in errs {
                prop_assert!(e.rule_id().is_some() && e.offset().unwrap() <= d.len() as u64, "{}", e);
            }
        }
    }
}

#[test]
fn big_input_is_read_in_place() {
    // 64 MiB of content: read in place, never copied.
    let big = vec![b'x'; 64 << 20];
    let d = text::write_to_vec(&[(HOST, &big), (GFX906, b"d")], "#");
    let b = text::parse_strict(&d, 0, "#").unwrap();
    let c = b.content(&d, 0).unwrap();
    assert_eq!(c.len(), big.len());
    assert!(std::ptr::eq(
        c.as_ptr(),
        d[b.entries[0].offset as usize..].as_ptr()
    ));
}

// ---------------------------------------------------------------------------
// Reading through windows
// ---------------------------------------------------------------------------

/// The strict reader over `d`, as a slice and through windows of `chunk`
/// bytes: the same results; windows of at most `max_window` bytes, one held
/// at a time.
fn same_through_windows(
    d: &[u8],
    c: &str,
    chunk: u64,
    max_window: u64,
) -> Result<(), TestCaseError> {
    let src = Recorder::new(d, chunk);
    let slice = text::parse_strict(&d, 5, c);
    let windowed = text::parse_strict(&src, 5, c);
    match (&slice, &windowed) {
        (Ok(b), Ok(w)) => prop_assert_eq!(&b.entries, &w.entries),
        (Err(a), Err(b)) => prop_assert_eq!(a, b),
        _ => prop_assert!(false, "strict: {:?} vs {:?}", slice, windowed),
    }
    src.held_within(max_window)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn windowed_readers_match_slice_readers((c, d) in rich_case(), chunk in 40u64..120) {
        // Every marker fits a window of 40 bytes: none is larger than the chunk.
        same_through_windows(&d, c, chunk, chunk)?;
    }

    #[test]
    fn windowed_readers_match_with_tiny_windows((c, d) in rich_case(), chunk in 1u64..8) {
        // A search needs a window as long as its needle (a marker).
        same_through_windows(&d, c, chunk, text::start_marker(c).len() as u64)?;
    }

    #[test]
    fn windowed_readers_match_on_bundles(es in entries(), c in comment_s(), chunk in 40u64..300) {
        let refs: Vec<(&[u8], &[u8])> = es.iter().map(|(i, p)| (&i[..], &p[..])).collect();
        same_through_windows(&text::write_to_vec(&refs, c), c, chunk, chunk)?;
    }
}

#[test]
fn text_bundles_are_read_through_windows() {
    // 1 MiB of content in 64-byte lines, an error near the end (line numbers
    // count across windows), read through windows of 4 KiB.
    let big = [b"x".repeat(63).as_slice(), b"\n"].concat().repeat(1 << 14);
    let d = cat(&[
        &text::write_to_vec(&[(GFX906, b"dev"), (HOST, &big)], "//"),
        b"junk",
        &text::write_to_vec(&[(GFX90A, b"a")], "//"),
    ]);
    same_through_windows(&d, "//", 4096, 4096).unwrap();
    let es = errs(&d, "//");
    assert_eq!(es.len(), 1);
    assert!(
        es[0].message().starts_with("line 16393: 4 bytes"),
        "{}",
        es[0]
    );
    // A window that cannot be had is an error, not a panic or a short list.
    struct NoWindows(Vec<u8>);
    impl Source for NoWindows {
        fn bytes(&self) -> &[u8] {
            &self.0
        }
        fn window(&self, _: u64, _: u64) -> Option<Window<'_>> {
            None
        }
    }
    let src = NoWindows(good());
    let es = text::parse_strict(&src, 0, "#").unwrap_err();
    assert_eq!(es.len(), 1);
    assert!(es[0]
        .message()
        .contains("cannot read the input at offset 0"));
}
