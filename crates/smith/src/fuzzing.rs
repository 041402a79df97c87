//! Fuzz target bodies, shared by `fuzz/fuzz_targets/*` (cargo-fuzz,
//! libFuzzer) and the stable smoke tests in `tests/fuzz_smoke.rs`.
//! Each function must never panic, whatever the input.

use crate::bundle::binary::{self, Extent, LlvmView};
use crate::id::BundleEntryId;
use arbitrary::{Arbitrary, Unstructured};
use offload_kit_llvm::bundler::{Job, Piece};
use offload_kit_llvm::profile::Release;

/// Every binary-bundle reader and every profile on raw bytes; a strictly
/// valid bundle must re-serialise to the same entries.
pub fn bundle_read(data: &[u8]) {
    if let Ok(b) = binary::parse_strict(data, 0, Extent::Embedded) {
        let back: Vec<(&[u8], &[u8])> = (0..b.entries.len())
            .map(|i| (b.entries[i].id, b.payload(i)))
            .collect();
        let bytes = binary::write_to_vec(&back, 1).expect("valid layout");
        let again = binary::parse_strict(&bytes, 0, Extent::Standalone).expect("round trip");
        assert_eq!(again.entries.len(), b.entries.len());
    }
    for r in Release::MODELLED {
        if let LlvmView::Entries(e) = binary::llvm_read(data, 0, r) {
            for entry in e {
                let _ = entry.payload(data);
            }
        }
    }
}

/// The ID grammar, canonical form and every profile's parsing and matching.
pub fn id_parse(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (a, b) = text
        .split_once('\n')
        .unwrap_or((&text, "hip-amdgcn-amd-amdhsa--gfx906"));
    if let Ok(id) = BundleEntryId::parse_strict(a) {
        let c = id.canonical();
        let again = BundleEntryId::parse_strict(&c).expect("canonical form parses");
        assert_eq!(again.canonical(), c, "canonical form is a fixed point");
    }
    for r in Release::MODELLED {
        let _ = r.written_id(a);
        let _ = r.validate_target(a);
        let _ = r.compatible(a, b, true);
        let _ = r.compatible(b, a, false);
    }
}

/// A structured bundler run: arbitrary targets and a bundle, every release.
#[derive(Debug, Arbitrary)]
pub struct BundlerInput {
    targets: Vec<String>,
    entries: Vec<(String, Vec<u8>)>,
    align: u8,
    allow_missing: bool,
    hip_openmp: bool,
}

/// Plan unbundling and listing for arbitrary targets and bundles.
pub fn bundler_plan(data: &[u8]) {
    let Ok(inp) = BundlerInput::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    let refs: Vec<(&[u8], &[u8])> = inp
        .entries
        .iter()
        .map(|(i, p)| (i.as_bytes(), &p[..]))
        .collect();
    let Ok(bundle) = binary::write_to_vec(&refs, u64::from(inp.align.max(1))) else {
        return;
    };
    for r in Release::MODELLED {
        let job = Job {
            release: r,
            file_type: "bc".into(),
            targets: inp.targets.clone(),
            inputs: vec!["in".into()],
            outputs: vec!["out".into(); inp.targets.len()],
            unbundle: true,
            list: false,
            allow_missing: inp.allow_missing,
            align: 1,
            hip_openmp: inp.hip_openmp,
            check_input_archive: false,
            budget: Default::default(),
        };
        if let Ok(v) = job.validate() {
            if let Ok(pieces) = job.plan_unbundle(&v, &bundle) {
                assert_eq!(pieces.len(), inp.targets.len());
            }
        }
        let _ = job.plan_list(&bundle);
    }
}

/// Every container reader through auto-detection, strictly and as every
/// release reads it, plus the text, CCOB, ELF and kpack readers directly.
pub fn any_container(data: &[u8]) {
    let _ = crate::detect::list(&data, None);
    for r in Release::MODELLED {
        let _ = crate::detect::list(&data, Some(r));
        for c in ["//", "#", ";"] {
            let _ = crate::bundle::text::llvm_entries(&data, 0, c, r);
            let _ = crate::bundle::text::llvm_list(&data, 0, c, r);
        }
        let _ = crate::bundle::ccob::llvm_decompress(data, r);
    }
    for c in ["//", "#", ";"] {
        let _ = crate::bundle::text::parse_strict(&data, 0, c);
    }
    // LLVM main's walks over every blob of the input, for each handler.
    for file_type in ["bc", "o", "i"] {
        let job = unbundle_job(Release::Main, file_type, 3);
        let _ = job.plan_list_main(&data, &mut |_, _, _| {});
        if let Ok(v) = job.validate() {
            if let Ok(pieces) = job.plan_unbundle_main(&v, &data, &mut |_, _, _| {}) {
                assert_eq!(pieces.len(), 3);
            }
        }
    }
    let _ = crate::bundle::ccob::decompress_strict(data, 0);
    let _ = crate::bundle::fatbin::inspect(&data);
    let _ = crate::bundle::object::parse_strict(data);
    // ROCm kpack archives and HIPK references (spec/kpack.md); code
    // objects decoded within a small limit, as a loader holding little.
    if let Ok(a) = offload_kit_format::kpack::parse(data) {
        for k in &a.kernels {
            let _ = a.code_object(data, k, 1 << 20);
        }
    }
    let _ = offload_kit_format::kpack::parse_host_ref(data, 0);
    // A host rewritten for a split (HIPK-3): a bad host is refused, a
    // rewritten one reads back as split and is made whole again.
    use offload_kit_format::host::elf::hipk;
    let r = offload_kit_format::kpack::HostRef {
        search_paths: vec!["k_@GFXARCH@.kpack".into()],
        kernel_name: "k".into(),
    };
    if let Ok(split) = hipk::rewrite(data, &r) {
        let w = hipk::split_wrappers(&split).expect("a rewritten host reads back as split");
        let _ = hipk::restore(&split, b"__CLANG_OFFLOAD_BUNDLE__", &vec![0; w.len()]);
    }
    let _ = hipk::split_wrappers(data);
    // The library's split and join (convert --to kpack/bundle, Python's
    // split_kpack/join_kpack), every file made in memory within 4 MiB.
    let budget = offload_kit_llvm::budget::Budget::new(4 << 20);
    let opts = crate::inspect::kpack_split::SplitOptions {
        name: "libk.so",
        kernel: None,
        prefix: None,
        storage: offload_kit_format::kpack::Storage::Zstd(1),
        budget,
    };
    if let Ok(files) = crate::inspect::kpack_split::split(data, &opts).and_then(|s| s.files()) {
        for (_, archive) in files.iter().filter(|(n, _)| n.ends_with(".kpack")) {
            // An archive the split wrote joins, but where one bundle cannot
            // hold it: two code objects for a target (from two bundles), or
            // more than half the budget (the join holds them and the bundle).
            if let Err(es) = crate::inspect::kpack_split::join_archive(archive, budget) {
                let known = |e: &offload_kit_format::Error| {
                    e.rule_id() == Some("CLI-6") || e.message().starts_with("two code objects for")
                };
                assert!(
                    es.iter().all(known),
                    "an archive the split wrote does not join: {es:?}"
                );
            }
        }
    }
    let _ = crate::inspect::kpack_split::join_archive(data, budget);
    // In-memory unbundling, as every release does it.
    for release in Release::MODELLED {
        let opts = offload_kit_llvm::bundler::UnbundleOptions {
            release,
            file_type: "o",
            allow_missing: true,
            budget,
        };
        let _ = offload_kit_llvm::bundler::unbundle_in_memory(
            data,
            &[
                "hip-amdgcn-amd-amdhsa--gfx906",
                "host-x86_64-unknown-linux-gnu-",
            ],
            opts,
        );
    }
    // LLVM main's view of compressed version 3 offload binaries, inflated.
    if let Ok(v) = crate::offload_binary::llvm::main_inflated(data, Default::default()) {
        let _ = crate::offload_binary::llvm::extract_offload_binaries(&v, "f", Release::Main);
    }
}

/// The inspector on anything: [`identify`](crate::inspect::code_object::identify)
/// on the raw bytes and behind an AMDGPU or CUDA ELF identification (the
/// first byte picks which, so that mutations reach the section and symbol
/// tables), [`inspect`](crate::inspect::inspect) through auto-detection,
/// and [`check`](crate::inspect::check::check) of its report for GPUs of
/// each kind of match.
pub fn inspect(data: &[u8]) {
    use crate::inspect::{self, check, code_object};
    let _ = code_object::identify(data);
    if let Some((&k, rest)) = data.split_first() {
        // e_ident (64-bit, little-endian, HSA or CUDA OS ABI), then the rest
        // from e_type on, with e_machine forced to AMDGPU or CUDA.
        let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
        elf.push(if k & 1 == 0 { 64 } else { 51 });
        elf.push(k >> 4 & 7);
        elf.resize(16, 0);
        elf.extend_from_slice(rest);
        if elf.len() >= 20 {
            let machine: u16 = if k & 1 == 0 { 224 } else { 190 };
            elf[18..20].copy_from_slice(&machine.to_le_bytes());
        }
        let _ = code_object::identify(&elf);
    }
    if let Ok(report) = inspect::inspect(&data) {
        for gpu in [
            "gfx906",
            "gfx90a:xnack+",
            "gfx90a:sramecc-:xnack-",
            "gfx1100",
        ] {
            let gpu = check::Gpu::parse(gpu).expect("a valid target ID");
            let v = check::check(&report, &gpu);
            assert!(v.bundles.len() <= report.bundles.len());
        }
        // Each finding is one entry's CO-1, or one of its image's CO-2 … CO-5.
        let co_1 = report.entries.iter().filter(|e| e.breaks_co_1).count();
        let images = report
            .findings
            .iter()
            .filter(|f| f.rule_id() != Some("CO-1"))
            .count();
        assert_eq!(report.findings.len(), co_1 + images);
        for e in &report.entries {
            assert_eq!(
                e.broken_image.is_some(),
                report
                    .findings
                    .iter()
                    .any(|f| e.broken_image.as_ref() == Some(f))
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Archives, archive symbol tables, streamed compressed bundles

use crate::bundle::archive as hda;
use crate::bundle::ccob;
use crate::host::ar;
use crate::host::symtab;
use offload_kit_format::raw::ccob::VERSIONS;
use offload_kit_format::source::{Source, Window};

/// A source whose windows are copies held apart from [`Source::bytes`], as
/// the CLI's per-window mappings are: readers must not rely on a window
/// being a subslice of the whole input.
pub struct Windowed<'a>(pub &'a [u8]);

impl Source for Windowed<'_> {
    fn bytes(&self) -> &[u8] {
        self.0
    }
    fn window(&self, offset: u64, len: u64) -> Option<Window<'_>> {
        let s = usize::try_from(offset).ok()?;
        let e = s.checked_add(usize::try_from(len).ok()?)?;
        let held: Box<Vec<u8>> = Box::new(self.0.get(s..e)?.to_vec());
        Some(Window::Held(held))
    }
}

/// Entry IDs and targets the archive bodies pick from, so that members
/// match targets often enough to reach extraction and the symbol tables.
/// An `-unbundle -allow-missing-bundles` job of `release` for the first
/// `targets` of [`IDS`].
fn unbundle_job(release: Release, file_type: &str, targets: usize) -> Job {
    Job {
        release,
        file_type: file_type.into(),
        targets: IDS[..targets].iter().map(|s| s.to_string()).collect(),
        inputs: vec!["in".into()],
        outputs: vec!["out".into(); targets],
        unbundle: true,
        list: false,
        allow_missing: true,
        align: 1,
        hip_openmp: false,
        check_input_archive: false,
        budget: Default::default(),
    }
}

const IDS: &[&str] = &[
    "host-x86_64-unknown-linux-gnu-",
    "host-x86_64-unknown-linux-gnu",
    "hip-amdgcn-amd-amdhsa--gfx906",
    "hip-amdgcn-amd-amdhsa--gfx90a",
    "hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
    "hip-amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+",
    "hipv4-amdgcn-amd-amdhsa--gfx906",
    "hipv4-amdgcn-amd-amdhsa-unknown-gfx908",
    "openmp-amdgcn-amd-amdhsa--gfx906",
    "openmp-nvptx64-nvidia-cuda--sm_70",
    "openmp-x86_64-unknown-linux-gnu",
    "cuda-nvptx64-nvidia-cuda--sm_80",
    "hip-amdgcn-amd-amdhsa--gfx9-4-generic",
];

/// An entry ID or target: one of the IDs the archive bodies pick from, or any text.
#[derive(Debug, Arbitrary)]
pub enum Id {
    /// `IDS[i % IDS.len()]`.
    Known(u8),
    /// Anything.
    Text(String),
}

impl Id {
    fn text(&self) -> String {
        match self {
            Id::Known(i) => IDS[usize::from(*i) % IDS.len()].to_string(),
            Id::Text(t) => t.clone(),
        }
    }
}

/// The contents of one archive member.
#[derive(Debug, Arbitrary)]
pub enum MemberData {
    /// Bytes as given (ELF, bitcode, garbage).
    Raw(Vec<u8>),
    /// A binary bundle of these entries.
    Bundle(Vec<(Id, Vec<u8>)>),
    /// The same, compressed (the `v`-th CCOB version, cyclically; zstd).
    Compressed(Vec<(Id, Vec<u8>)>, u8),
    /// A binary bundle with a byte changed: `(at, value)`.
    Damaged(Vec<(Id, Vec<u8>)>, u16, u8),
}

impl MemberData {
    fn bytes(&self) -> Vec<u8> {
        let bundle = |es: &[(Id, Vec<u8>)]| {
            let ids: Vec<String> = es.iter().map(|(i, _)| i.text()).collect();
            let refs: Vec<(&[u8], &[u8])> = ids
                .iter()
                .zip(es)
                .map(|(i, (_, p))| (i.as_bytes(), &p[..]))
                .collect();
            binary::write_to_vec(&refs, 1).unwrap_or_default()
        };
        match self {
            MemberData::Raw(b) => b.clone(),
            MemberData::Bundle(es) => bundle(es),
            MemberData::Compressed(es, v) => {
                let opts = ccob::WriteOptions {
                    version: VERSIONS[usize::from(*v) % VERSIONS.len()],
                    method: ccob::Method::Zstd,
                    level: 1,
                };
                ccob::compress(&bundle(es), opts).unwrap_or_default()
            }
            MemberData::Damaged(es, at, val) => {
                let mut b = bundle(es);
                if !b.is_empty() {
                    let n = b.len();
                    b[usize::from(*at) % n] = *val;
                }
                b
            }
        }
    }
}

/// A heterogeneous device archive built from arbitrary members, and an
/// unbundling job over it.
#[derive(Debug, Arbitrary)]
pub struct ArchiveInput {
    members: Vec<(Vec<u8>, MemberData)>,
    targets: Vec<Id>,
    allow_missing: bool,
    hip_openmp: bool,
    check_input_archive: bool,
    small_sym64_threshold: bool,
}

/// Names the GNU writer and reader agree on (a round trip keeps them).
fn plain_name(n: &[u8]) -> bool {
    !n.is_empty() && n.iter().all(|&b| b.is_ascii_graphic() && b != b'/')
}

/// Read back an archive [`ar::write_gnu_to`] wrote: every member whose name
/// survives the round trip, with its data, in order.
fn check_round_trip(written: &[u8], members: &[(&[u8], &[u8])]) {
    let back = ar::members_raw(written, 0, crate::rules::AR_1).expect("written archive reads");
    if members.iter().all(|(n, _)| plain_name(n)) {
        assert_eq!(back.len(), members.len(), "member count");
        for (b, (n, d)) in back.iter().zip(members) {
            assert_eq!(b.name, *n, "member name");
            assert_eq!(b.data, *d, "member data");
        }
    }
}

/// `clang-offload-bundler -unbundle -type=a` (every release): plan the
/// archives, write them with their symbol tables, and read them back. An
/// input starting with the archive magic is used as it is; anything else
/// builds an archive from arbitrary members (bundles, compressed bundles,
/// raw bytes) so that mutations get past the magic checks.
pub fn archive_unbundle(data: &[u8]) {
    let (archive, targets, allow_missing, hip_openmp, check, threshold) =
        if data.starts_with(ar::ARCHIVE_MAGIC) || data.starts_with(ar::THIN_MAGIC) {
            let t: Vec<String> = IDS.iter().map(|s| s.to_string()).collect();
            (data.to_vec(), t, true, false, true, 1u64 << 32)
        } else {
            let Ok(inp) = ArchiveInput::arbitrary(&mut Unstructured::new(data)) else {
                return;
            };
            let datas: Vec<Vec<u8>> = inp.members.iter().map(|(_, d)| d.bytes()).collect();
            let news: Vec<ar::NewMember<'_>> = inp
                .members
                .iter()
                .zip(&datas)
                .map(|((n, _), d)| ar::NewMember {
                    name: n,
                    data: d,
                    symbols: None,
                })
                .collect();
            let mut a = Vec::new();
            ar::write_gnu_to(&mut a, &news, ar::WriteOptions::default()).expect("small members");
            let pairs: Vec<(&[u8], &[u8])> = news.iter().map(|m| (m.name, m.data)).collect();
            check_round_trip(&a, &pairs);
            let threshold = if inp.small_sym64_threshold {
                8
            } else {
                1 << 32
            };
            let t = inp.targets.iter().map(Id::text).collect();
            (
                a,
                t,
                inp.allow_missing,
                inp.hip_openmp,
                inp.check_input_archive,
                threshold,
            )
        };
    let _ = ar::members(&archive, 0);
    for r in Release::MODELLED {
        let job = Job {
            release: r,
            file_type: "a".into(),
            targets: targets.clone(),
            inputs: vec!["in.a".into()],
            outputs: (0..targets.len())
                .map(|i| format!("out{i}.a").into())
                .collect(),
            unbundle: true,
            list: false,
            allow_missing,
            align: 1,
            hip_openmp,
            check_input_archive: check,
            budget: Default::default(),
        };
        let Ok(v) = job.validate() else { continue };
        let _ = job.check_archive(&archive, "in.a");
        let Ok(plan) = job.plan_archive(&v, &archive, "in.a") else {
            continue;
        };
        assert!(plan.archives.len() <= v.targets.len());
        assert_eq!(plan.archives.len(), plan.symbols.len());
        for i in 0..plan.archives.len() {
            let members = plan.members(&archive, i);
            let mut out = Vec::new();
            hda::write(&mut out, &members, &plan.symbols[i], threshold).expect("writes");
            let pairs: Vec<(&[u8], &[u8])> = members.iter().map(|m| (m.name, m.data)).collect();
            check_round_trip(&out, &pairs);
        }
    }
}

/// Wrap `rest` so that it reaches the symbol readers: `data[0] % 4` picks
/// raw bytes, raw bitcode, wrapped bitcode (header offsets from `rest`) or
/// ELF.
fn symbolic_member(data: &[u8]) -> Vec<u8> {
    let Some((&sel, rest)) = data.split_first() else {
        return Vec::new();
    };
    match sel % 4 {
        0 => rest.to_vec(),
        1 => [&b"BC\xc0\xde"[..], rest].concat(),
        2 => [&[0xde, 0xc0, 0x17, 0x0b][..], rest].concat(),
        _ => [&b"\x7fELF"[..], rest].concat(),
    }
}

/// The archive symbol table (OB-24): the symbols of one member (ELF,
/// bitcode, wrapped bitcode, anything), then an archive of it written
/// with its symbol table and read back.
pub fn symtab(data: &[u8]) {
    for m in [data.to_vec(), symbolic_member(data)] {
        let _ = symtab::member_symbols(&m, true);
        let _ = symtab::archive_symbols(&m);
        let Ok(s) = symtab::member_symbols(&m, false) else {
            continue;
        };
        let half = &m[m.len() / 2..];
        let members: [(&str, &[u8]); 3] = [
            ("member.o", &m),
            ("a-rather-long-member-name.bc", half),
            ("x", b"not symbolic"),
        ];
        if let Ok(a) = symtab::write_archive(&members) {
            let pairs: Vec<(&[u8], &[u8])> =
                members.iter().map(|(n, d)| (n.as_bytes(), *d)).collect();
            check_round_trip(&a, &pairs);
        }
        let syms = [s, symtab::Symbolic::No, symtab::Symbolic::No];
        for threshold in [0, symtab::SYM64_THRESHOLD] {
            let a = symtab::write_gnu_with_symtab(&members, &syms, threshold);
            let pairs: Vec<(&[u8], &[u8])> =
                members.iter().map(|(n, d)| (n.as_bytes(), *d)).collect();
            check_round_trip(&a, &pairs);
        }
    }
    // The GNU reader on the raw bytes too (symbol and name tables skipped).
    let _ = ar::members_raw(data, 0, crate::rules::OB_21);
}

/// Compressed bundles as `-list` and `-unbundle` stream them (header-only
/// decoding, block-header walk, windowed reads), and listing through a
/// windowed source (ELF `.hip_fatbin` walk): where
/// [`ccob::llvm_list_prefix`] answers, the stream and the one-shot
/// decompression must agree.
pub fn ccob_stream(data: &[u8]) {
    let w = Windowed(data);
    let len = data.len() as u64;
    for start in [0, 1, 8, 16, 20, 24, 32] {
        if let Some((n, total)) = ccob::zstd_frame_extent(&w, start, len) {
            assert!(start + n <= len, "frame extent inside the input");
            let _ = total;
        }
    }
    for r in Release::MODELLED {
        let prefix = ccob::llvm_list_prefix(&w, r);
        if let Some(p) = &prefix {
            let total = &p.len();
            assert!(p.bytes().len() as u64 <= *total, "prefix inside the bundle");
            let _ = binary::llvm_read(p, 0, r);
            // What -unbundle plans from the prefix, streamed as the CLI streams it.
            let job = unbundle_job(r, "bc", 4);
            if let Ok(v) = job.validate() {
                if let Ok(pieces) = job.plan_unbundle(&v, p) {
                    let mut outs: Vec<std::io::Sink> =
                        pieces.iter().map(|_| std::io::sink()).collect();
                    let mut sinks: Vec<ccob::Sink<'_>> = pieces
                        .iter()
                        .zip(outs.iter_mut())
                        .filter_map(|(piece, o)| match piece {
                            Piece::Range { offset, size } => Some(ccob::Sink {
                                start: *offset,
                                len: *size,
                                out: o,
                            }),
                            Piece::WholeInput => Some(ccob::Sink {
                                start: 0,
                                len: *total,
                                out: o,
                            }),
                            _ => None,
                        })
                        .collect();
                    let _ = ccob::llvm_stream_ranges(&w, r, &mut sinks);
                }
            }
            // The stream must agree with the one-shot call.
            let mut whole = Vec::new();
            let mut head = Vec::new();
            let mut sinks = [
                ccob::Sink {
                    start: 0,
                    len: *total,
                    out: &mut whole,
                },
                ccob::Sink {
                    start: 0,
                    len: 64,
                    out: &mut head,
                },
            ];
            let streamed = ccob::llvm_stream_ranges(&w, r, &mut sinks);
            match (ccob::llvm_decompress(data, r), &streamed) {
                (ccob::LlvmDecompress::Data(d), Ok(_)) => {
                    assert!(d == whole, "streamed bytes differ from the one-shot call");
                    assert!(head[..] == d[..d.len().min(64)]);
                    assert!(d.starts_with(p.bytes()), "prefix is the bundle's start");
                }
                (ccob::LlvmDecompress::Fails(..), Err(_)) => {}
                (one, s) => panic!(
                    "one-shot and stream disagree: {} vs {}",
                    match one {
                        ccob::LlvmDecompress::Plain => "plain",
                        ccob::LlvmDecompress::Data(_) => "data",
                        ccob::LlvmDecompress::Fails(..) => "fails",
                    },
                    if s.is_ok() { "ok" } else { "error" }
                ),
            }
        } else {
            let mut sinks = [ccob::Sink {
                start: 0,
                len: 1 << 20,
                out: &mut std::io::sink(),
            }];
            let _ = ccob::llvm_stream_ranges(&w, r, &mut sinks);
        }
    }
    let _ = ccob::verify_prefix(&w, 0, 1 << 16);
    let _ = ccob::extract_range(&w, 0, 3, 1 << 20, &mut std::io::sink());
    // A range from the input's own bytes, as an entry record would give it.
    let field = |at: usize| {
        data.get(at..at + 8)
            .map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    };
    let _ = ccob::extract_range(
        &w,
        0,
        field(len as usize / 2),
        field(0) % (1 << 24),
        &mut std::io::sink(),
    );
    // Listing through windows must list what the slice listing lists.
    for r in std::iter::once(None).chain(Release::MODELLED.into_iter().map(Some)) {
        let windowed = crate::detect::list(&w, r);
        let whole = crate::detect::list(&data, r);
        assert!(windowed == whole, "windowed listing differs");
    }
}

/// The loader-fuzzing kit fed anything: mutation chains stay within their
/// bound and every mutant is read without a panic; generated files (kind
/// and seed from the input) check out as labelled.
pub fn fuzz_kit(data: &[u8]) {
    use crate::generate::{generate, Kind, Options};
    let (&head, rest) = data.split_first().unwrap_or((&0, &[]));
    let max = 1 + usize::from(head) * 64;
    let mut cur = rest.to_vec();
    for step in 0..4u64 {
        let m = crate::mutate::mutate(&cur, max, u64::from(head) << 8 | step);
        assert!(m.bytes.len() <= max, "mutant over the bound: {}", m.what);
        let _ = crate::detect::list(&m.bytes.as_slice(), None);
        cur = m.bytes;
    }
    let kind = Kind::ALL[usize::from(head) % Kind::ALL.len()];
    let seed = rest
        .iter()
        .take(8)
        .fold(0u64, |a, &b| a << 8 | u64::from(b));
    let rules = kind.malformable();
    let malformed =
        (head & 0x80 != 0 && !rules.is_empty()).then(|| rules[usize::from(head) % rules.len()]);
    let opts = Options {
        malformed,
        ..Options::default()
    };
    if let Ok(g) = generate(kind, seed, &opts) {
        let res = crate::inspect::validate(&g.bytes.as_slice(), Default::default());
        match (&g.violation, res) {
            (None, r) => assert!(r.is_ok(), "generated {kind} seed {seed} is invalid"),
            (Some(v), r) => {
                let es = r.expect_err("a malformed file is rejected");
                assert!(es
                    .iter()
                    .any(|e| e.rule_id() == Some(v.rule.id) && e.offset() == Some(v.offset)));
            }
        }
    }
}

/// The mutator fed its own outputs (issue 41): a generated file of any
/// kind, valid or breaking one rule (kind, rule and seed from `data`), is
/// mutated 16 times in a chain, each mutant the next input, with bounds
/// from `data`. Any panic inside `mutate` is fatal here: the C ABI's
/// boundary, which catches one and hands the input back, is not in the way.
pub fn mutate_chain(data: &[u8]) {
    use crate::generate::{generate, Kind, Options};
    let (&head, rest) = data.split_first().unwrap_or((&0, &[]));
    let kind = Kind::ALL[usize::from(head) % Kind::ALL.len()];
    let word = |i: usize| {
        rest.iter()
            .skip(8 * i)
            .take(8)
            .fold(0u64, |a, &b| a << 8 | u64::from(b))
    };
    let rules = kind.malformable();
    let malformed = (head & 0x80 != 0 && !rules.is_empty())
        .then(|| rules[usize::from(head >> 3) % rules.len()]);
    let opts = Options {
        malformed,
        ..Options::default()
    };
    let Ok(g) = generate(kind, word(0), &opts) else {
        return;
    };
    let mut cur = g.bytes;
    for step in 0..16u64 {
        // Bounds from tiny to well past the input, as libFuzzer's max_len.
        let max = match word(1).rotate_left(step as u32 * 4) & 3 {
            0 => cur.len(),
            1 => cur.len() / 2 + 1,
            2 => cur.len() * 2 + 64,
            _ => 1 + (word(2) >> (step * 4) & 0xffff) as usize,
        };
        // Half the chains with the bootstrap, whose fresh files are mutated
        // on; some with an ablation's families left out.
        let options = crate::mutate::MutateOptions {
            bootstrap: head & 0x40 != 0,
            no_image: head & 0x20 != 0,
            no_structure: head & 0x18 == 0x18,
        };
        let m = crate::mutate::mutate_with(&cur, max, word(3).wrapping_add(step), options);
        assert!(m.bytes.len() <= max, "mutant over the bound: {}", m.what);
        cur = m.bytes;
    }
}

/// Arbitrary entries for [`roundtrip`]: IDs by index into a pool of
/// distinct valid IDs, payloads, an alignment, and a compressed copy.
#[derive(Debug, Arbitrary)]
pub struct RoundTripInput {
    entries: Vec<(u8, Vec<u8>)>,
    align: u8,
    ccob_version: u8,
    zlib: bool,
}

/// Model → bytes → model → bytes: a binary bundle of arbitrary entries
/// reads back as the same entries and writes back as the same bytes (the
/// writer's layout is canonical); its compressed form decompresses to it.
pub fn roundtrip(data: &[u8]) {
    use crate::bundle::ccob::{self, Method, WriteOptions};
    const IDS: &[&[u8]] = &[
        b"host-x86_64-unknown-linux-gnu-",
        b"hip-amdgcn-amd-amdhsa--gfx906",
        b"hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+",
        b"openmp-nvptx64-nvidia-cuda--sm_70",
        b"hip-amdgcn-amd-amdhsa--gfx1100",
        b"hip-spirv64-amd-amdhsa--amdgcnspirv",
    ];
    let Ok(input) = RoundTripInput::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    // One entry per pool ID (a repeated ID is a BIN-8 violation).
    let mut seen = [false; IDS.len()];
    let mut entries: Vec<(&[u8], &[u8])> = Vec::new();
    for (i, p) in &input.entries {
        let i = usize::from(*i) % IDS.len();
        if !std::mem::replace(&mut seen[i], true) {
            entries.push((IDS[i], p.as_slice()));
        }
    }
    if entries.is_empty() {
        return;
    }
    let align = u64::from(input.align).max(1);
    let bytes = binary::write_to_vec(&entries, align).expect("small bundles lay out");
    let b = binary::parse_strict(&bytes, 0, Extent::Standalone).expect("written bundles are valid");
    let back: Vec<(&[u8], &[u8])> = (0..b.entries.len())
        .map(|i| (b.entries[i].id, b.payload(i)))
        .collect();
    assert_eq!(back, entries, "entries read back differ");
    assert_eq!(binary::write_to_vec(&back, align).expect("lays out"), bytes);
    let opts = WriteOptions {
        version: VERSIONS[usize::from(input.ccob_version) % VERSIONS.len()],
        method: if input.zlib {
            Method::Zlib
        } else {
            Method::Zstd
        },
        level: 1,
    };
    let blob = ccob::compress(&bytes, opts).expect("compresses");
    let d = ccob::decompress_strict(&blob, 0).expect("decompresses");
    assert_eq!(d.data, bytes, "decompressed bundle differs");
}
