//! What each release does differently, as data (as wasmparser's
//! `WasmFeatures`): one [`Quirks`] row per release, each written as the
//! row before it plus what changed, and [`Release::quirks`] matching every
//! release. Code asks for the quirk, never compares release numbers, so a
//! new release is a row here plus the code that truly differs.
//!
//! ```
//! use offload_kit_llvm::Release;
//!
//! assert!(!Release::L16.quirks().checks_input_archives);
//! assert!(Release::L19.quirks().checks_input_archives);
//! // Every numbered release inherits what it does not change.
//! for r in Release::WITH_BINARY {
//!     assert_eq!(r.quirks().release, r);
//! }
//! ```

use super::Release;

/// The order in which a packager writes an image's string entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StringOrder {
    /// No packager (LLVM 14 and before).
    NoPackager,
    /// `StringMap` bucket order (LLVM 15 and 16).
    StringMap,
    /// `DenseMap` order, as the keys were hashed (LLVM 19 on).
    DenseMap,
}

/// One release's behaviour where releases differ. Each field says what
/// the release does; the rows below say which release does it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quirks {
    /// The release this row describes.
    pub release: Release,

    // --- clang-offload-bundler: options and messages ---
    /// Which recorded `-help` text the bundler prints (13, 15, 16 or 19:
    /// `crates/cli/src/help/clang-offload-bundler-N.txt`).
    pub bundler_help: u32,
    /// Only `-inputs`/`-outputs` exist and `-inputs` is required (14 and
    /// before; its messages name `--inputs`/`--outputs`).
    pub bundler_plural_io_only: bool,
    /// `-inputs`/`-outputs` warn that they are deprecated (15 on).
    pub bundler_warns_plural_io: bool,
    /// `OFFLOAD_BUNDLER_VERBOSE` and friends are read (19 on).
    pub bundler_reads_env: bool,
    /// `COMPRESSED_BUNDLE_FORMAT_VERSION` picks the CCOB version (22 on).
    pub ccob_version_from_env: bool,
    /// `-list` goes on after the first bundle of a file (main, BIN-10).
    pub list_walks_every_bundle: bool,
    /// An empty input payload is skipped, not padded to (16 and before).
    pub skips_empty_payloads: bool,
    /// Each payload is written by seeking to its offset (16 and before).
    pub seeks_to_payloads: bool,
    /// An object input is read whole, never as its bundle sections (16
    /// and before).
    pub reads_inputs_whole: bool,
    /// Malformed bundle entry IDs are refused when read (22 on).
    pub refuses_malformed_ids: bool,
    /// `-allow-missing-bundles` excuses a missing host entry (16 on).
    pub allow_missing_exempts_host: bool,
    /// `-check-input-archive` exists and checks archives (19 on).
    pub checks_input_archives: bool,
    /// Unbundling an archive skips host entries (16 and before; AR-3).
    pub archive_skips_host_entries: bool,
    /// The archive message says "heterogenous" (13's spelling).
    pub heterogenous_typo: bool,
    /// `-allow-missing-bundles` writes no empty archive (13).
    pub writes_no_empty_archive: bool,
    /// Targets that conflict are refused (16 on).
    pub checks_conflicting_targets: bool,
    /// Conflicts are judged on the IDs as written, not as given (19 on).
    pub conflicts_of_written_ids: bool,
    /// main's target IDs through `llvm::AMDGPU::TargetID::parse`
    /// (llvm#209845): its compatibility and its rules for conflicting
    /// targets.
    pub main_target_conflicts: bool,
    /// Triples know `amdgpu<subarch>` architectures and compare AMDGPU
    /// triples by subarch (llvm#206480: 23 on).
    pub amdgpu_subarch_triples: bool,
    /// `-hip-openmp-compatible` exists (15 on).
    pub hip_openmp_compatible_option: bool,
    /// Archive members get a file extension (14 on).
    pub archive_member_extension: bool,
    /// Archive entries match targets as the bundler does (16 on; before,
    /// by whole strings).
    pub archive_uses_bundler_compatibility: bool,
    /// An unterminated text bundle aborts (14 and before).
    pub text_unterminated_aborts: bool,
    /// `-type=hipi` (preprocessed HIP) is a text type (16 on).
    pub hipi_file_type: bool,
    /// Bundle sections with an empty ID are dropped from lists (19 on).
    pub drops_empty_object_ids: bool,
    /// Unbundling a fat object's host entry runs `llvm-objcopy` (19 on).
    pub strips_host_with_objcopy: bool,

    // --- compressed bundles (CCOB) ---
    /// The CCOB versions the bundler writes (none before 19).
    pub ccob_versions_written: &'static [u16],
    /// The CCOB versions the readers take (none before 19).
    pub ccob_versions_read: &'static [u16],
    /// The shortest buffer `decompress` looks at (`None`: no CCOB).
    pub ccob_min_len: Option<usize>,
    /// Headers are read as version 1's (20 bytes) below version 2 and as
    /// version 2's (24 bytes) from it, whatever the version says: 19 knows
    /// no version 3 and reads a v3 header as v2's.
    pub ccob_header_v1_or_v2: bool,
    /// main's CCOB reader: its payload bounds, messages and v1 sizes.
    pub main_ccob_reader: bool,

    // --- llvm-objdump / llvm-readobj --offloading ---
    /// `llvm-objdump --offloading` exists (15 on).
    pub objdump_offloading: bool,
    /// offload-kit's objdump/readobj drop-ins reproduce this release.
    pub offloading_dropins: bool,
    /// COFF objects' `.llvm.offloading` images are listed (main).
    pub offloading_coff_images: bool,
    /// `--arch-name=X` keeps the entries naming X (main; 22 skips them).
    pub arch_name_keeps_matches: bool,
    /// Code object URIs read compressed entries decompressed, with main's
    /// bounds messages (main).
    pub main_code_object_uris: bool,

    // --- offload binaries and the packager ---
    /// The offload binary versions the readers take (none before 15).
    pub offload_binary_versions_read: &'static [u32],
    /// main's offload binary reader (versions 2 and 3, inflating).
    pub main_offload_binary_reader: bool,
    /// The reader of version 2 binaries (llvm#169425: 23 on): every entry
    /// of a binary, nested binaries; 23's with its 32-byte header, main's
    /// with [`Quirks::main_offload_binary_reader`]'s 40.
    pub offload_binary_v2_reader: bool,
    /// An entry shorter than its fixed size is an end of file (19 on).
    pub checks_short_entries: bool,
    /// A string key offset past the end kills the reader (16: SIGSEGV).
    pub key_offset_past_end_segfaults: bool,
    /// The packager's name (`llvm-offload-binary` from 22).
    pub packager_name: &'static str,
    /// `--archive` exists (19 on).
    pub packager_archive_option: bool,
    /// Run as `clang-offload-packager`, it warns of its new name (22 on).
    pub packager_deprecation_warning: bool,
    /// Run with nothing to do, it prints its help (22 on).
    pub packager_help_without_args: bool,
    /// main's packager: compression options and its writer.
    pub packager_main_writer: bool,
    /// `-o` writes one binary of every image (llvm#197456: 23 on), not
    /// one binary per image.
    pub packager_writes_one_binary: bool,
    /// `--image` needs only `file` (22 on; before, `file` and `triple`).
    pub image_requires_file_only: bool,
    /// `file=` takes a comma-separated list (19 on).
    pub image_file_lists: bool,
    /// `--image=member=NAME` selects by member name (main).
    pub extract_by_member: bool,
    /// Extraction with no `--image` writes every image (main).
    pub extract_all_without_filter: bool,
    /// Each match is written as it is found (16 and before).
    pub extract_writes_as_found: bool,
    /// The order the packager writes string entries in.
    pub string_order: StringOrder,
    /// SPIR-V is an image kind (22 on).
    pub spirv_image_kind: bool,
    /// SPIR-V images are named (`spv`, `spir-v`: main).
    pub names_spirv: bool,
    /// 22's offload kind values (HIP 4, SYCL 8; before, HIP 3, no SYCL).
    pub offload_kinds_22: bool,
}

/// LLVM 13.0.1.
pub const L13: Quirks = Quirks {
    release: Release::L13,
    bundler_help: 13,
    bundler_plural_io_only: true,
    bundler_warns_plural_io: false,
    bundler_reads_env: false,
    ccob_version_from_env: false,
    list_walks_every_bundle: false,
    skips_empty_payloads: true,
    seeks_to_payloads: true,
    reads_inputs_whole: true,
    refuses_malformed_ids: false,
    allow_missing_exempts_host: false,
    checks_input_archives: false,
    archive_skips_host_entries: true,
    heterogenous_typo: true,
    writes_no_empty_archive: true,
    checks_conflicting_targets: false,
    conflicts_of_written_ids: false,
    main_target_conflicts: false,
    amdgpu_subarch_triples: false,
    hip_openmp_compatible_option: false,
    archive_member_extension: false,
    archive_uses_bundler_compatibility: false,
    text_unterminated_aborts: true,
    hipi_file_type: false,
    drops_empty_object_ids: false,
    strips_host_with_objcopy: false,
    ccob_versions_written: &[],
    ccob_versions_read: &[],
    ccob_min_len: None,
    ccob_header_v1_or_v2: false,
    main_ccob_reader: false,
    objdump_offloading: false,
    offloading_dropins: false,
    offloading_coff_images: false,
    arch_name_keeps_matches: false,
    main_code_object_uris: false,
    offload_binary_versions_read: &[],
    main_offload_binary_reader: false,
    offload_binary_v2_reader: false,
    checks_short_entries: false,
    key_offset_past_end_segfaults: false,
    packager_name: "clang-offload-packager",
    packager_archive_option: false,
    packager_deprecation_warning: false,
    packager_help_without_args: false,
    packager_main_writer: false,
    packager_writes_one_binary: false,
    image_requires_file_only: false,
    image_file_lists: false,
    extract_by_member: false,
    extract_all_without_filter: false,
    extract_writes_as_found: true,
    string_order: StringOrder::NoPackager,
    spirv_image_kind: false,
    names_spirv: false,
    offload_kinds_22: false,
};

/// LLVM 14.0.6.
pub const L14: Quirks = Quirks {
    release: Release::L14,
    heterogenous_typo: false,
    writes_no_empty_archive: false,
    archive_member_extension: true,
    ..L13
};

/// LLVM 15.0.6.
pub const L15: Quirks = Quirks {
    release: Release::L15,
    bundler_help: 15,
    bundler_plural_io_only: false,
    bundler_warns_plural_io: true,
    hip_openmp_compatible_option: true,
    text_unterminated_aborts: false,
    objdump_offloading: true,
    offload_binary_versions_read: &[1],
    string_order: StringOrder::StringMap,
    ..L14
};

/// LLVM 16.0.6.
pub const L16: Quirks = Quirks {
    release: Release::L16,
    bundler_help: 16,
    allow_missing_exempts_host: true,
    hipi_file_type: true,
    checks_conflicting_targets: true,
    archive_uses_bundler_compatibility: true,
    key_offset_past_end_segfaults: true,
    ..L15
};

/// LLVM 19.1.7.
pub const L19: Quirks = Quirks {
    release: Release::L19,
    bundler_help: 19,
    bundler_reads_env: true,
    skips_empty_payloads: false,
    seeks_to_payloads: false,
    reads_inputs_whole: false,
    checks_input_archives: true,
    archive_skips_host_entries: false,
    conflicts_of_written_ids: true,
    drops_empty_object_ids: true,
    strips_host_with_objcopy: true,
    ccob_versions_written: &[2],
    ccob_versions_read: &[1, 2],
    ccob_min_len: Some(20),
    ccob_header_v1_or_v2: true,
    checks_short_entries: true,
    key_offset_past_end_segfaults: false,
    packager_archive_option: true,
    image_file_lists: true,
    extract_writes_as_found: false,
    string_order: StringOrder::DenseMap,
    ..L16
};

/// LLVM 22.1.8.
pub const L22: Quirks = Quirks {
    release: Release::L22,
    ccob_version_from_env: true,
    refuses_malformed_ids: true,
    ccob_versions_written: &[2, 3],
    ccob_versions_read: &[1, 2, 3],
    ccob_min_len: Some(8),
    ccob_header_v1_or_v2: false,
    offloading_dropins: true,
    packager_name: "llvm-offload-binary",
    packager_deprecation_warning: true,
    packager_help_without_args: true,
    image_requires_file_only: true,
    spirv_image_kind: true,
    offload_kinds_22: true,
    ..L19
};

/// LLVM 23 (release/23.x), as modelled from the sources around its
/// branch of 2026-07-14: each row cites its pull request and where it
/// was read in docs/llvm-23.md (A1-C4 there).
pub const L23: Quirks = Quirks {
    release: Release::L23,
    // A1: llvm#182579, in the newest pre-branch OffloadBundler.cpp read.
    list_walks_every_bundle: true,
    // A2-A6: llvm#205587, #206745, #206741 (merged before the branch).
    main_ccob_reader: true,
    // A7/A8: llvm#206480.
    amdgpu_subarch_triples: true,
    // B6: llvm#199574.
    offloading_coff_images: true,
    // B7: llvm#192729.
    main_code_object_uris: true,
    // B1: llvm#169425 (version 2); version 3 is llvm#222774, after 23.
    offload_binary_versions_read: &[1, 2],
    offload_binary_v2_reader: true,
    // C1: llvm#197456, one multi-entry binary of version 2.
    packager_writes_one_binary: true,
    // C3: llvm#205170; C2: llvm#184774.
    extract_by_member: true,
    extract_all_without_filter: true,
    // B4: llvm#180269.
    names_spirv: true,
    ..L22
};

/// LLVM main after the 23 branch, as modelled from its source: 23 plus
/// what landed since (llvm#209845's target IDs, #216161's `--arch-name`,
/// #222774's version 3 binaries).
pub const MAIN: Quirks = Quirks {
    release: Release::Main,
    main_target_conflicts: true,
    arch_name_keeps_matches: true,
    offload_binary_versions_read: &[1, 2, 3],
    main_offload_binary_reader: true,
    packager_main_writer: true,
    ..L23
};

impl Release {
    /// This release's row of [`Quirks`].
    pub const fn quirks(self) -> &'static Quirks {
        match self {
            Release::L13 => &L13,
            Release::L14 => &L14,
            Release::L15 => &L15,
            Release::L16 => &L16,
            Release::L19 => &L19,
            Release::L22 => &L22,
            Release::L23 => &L23,
            Release::Main => &MAIN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows say what the comparisons they replace said (each quirk's
    /// first release), so moving them to data changed nothing.
    #[test]
    fn rows_match_the_releases_they_replace() {
        for r in Release::MODELLED {
            let q = r.quirks();
            let main = r == Release::Main;
            let since23 = r >= Release::L23;
            assert_eq!(q.release, r);
            assert_eq!(q.bundler_plural_io_only, r <= Release::L14, "{r}");
            assert_eq!(q.bundler_warns_plural_io, r >= Release::L15, "{r}");
            assert_eq!(q.bundler_reads_env, r >= Release::L19, "{r}");
            assert_eq!(q.ccob_version_from_env, r >= Release::L22, "{r}");
            assert_eq!(q.list_walks_every_bundle, since23, "{r}");
            assert_eq!(q.skips_empty_payloads, r <= Release::L16, "{r}");
            assert_eq!(q.seeks_to_payloads, r <= Release::L16, "{r}");
            assert_eq!(q.reads_inputs_whole, r <= Release::L16, "{r}");
            assert_eq!(q.refuses_malformed_ids, r >= Release::L22, "{r}");
            assert_eq!(q.allow_missing_exempts_host, r >= Release::L16, "{r}");
            assert_eq!(q.checks_input_archives, r >= Release::L19, "{r}");
            assert_eq!(q.archive_skips_host_entries, r <= Release::L16, "{r}");
            assert_eq!(q.heterogenous_typo, r == Release::L13, "{r}");
            assert_eq!(q.writes_no_empty_archive, r == Release::L13, "{r}");
            assert_eq!(q.checks_conflicting_targets, r >= Release::L16, "{r}");
            assert_eq!(q.conflicts_of_written_ids, r >= Release::L19, "{r}");
            assert_eq!(q.main_target_conflicts, main, "{r}");
            assert_eq!(q.hip_openmp_compatible_option, r >= Release::L15, "{r}");
            assert_eq!(q.archive_member_extension, r > Release::L13, "{r}");
            assert_eq!(
                q.archive_uses_bundler_compatibility,
                r > Release::L15,
                "{r}"
            );
            assert_eq!(q.text_unterminated_aborts, r <= Release::L14, "{r}");
            assert_eq!(q.hipi_file_type, r >= Release::L16, "{r}");
            assert_eq!(q.drops_empty_object_ids, r >= Release::L19, "{r}");
            assert_eq!(q.strips_host_with_objcopy, r >= Release::L19, "{r}");
            assert_eq!(q.ccob_versions_written.is_empty(), r <= Release::L16, "{r}");
            assert_eq!(q.ccob_versions_read.is_empty(), r <= Release::L16, "{r}");
            assert_eq!(q.main_ccob_reader, since23, "{r}");
            assert_eq!(q.ccob_header_v1_or_v2, r == Release::L19, "{r}");
            assert_eq!(q.objdump_offloading, r > Release::L14, "{r}");
            assert_eq!(q.offloading_dropins, r >= Release::L22, "{r}");
            assert_eq!(q.offloading_coff_images, since23, "{r}");
            assert_eq!(q.arch_name_keeps_matches, main, "{r}");
            assert_eq!(q.main_code_object_uris, since23, "{r}");
            assert_eq!(q.offload_binary_versions_read.is_empty(), r <= Release::L14);
            assert_eq!(q.main_offload_binary_reader, main, "{r}");
            assert_eq!(q.offload_binary_v2_reader, since23, "{r}");
            assert_eq!(q.amdgpu_subarch_triples, since23, "{r}");
            assert_eq!(q.packager_writes_one_binary, since23, "{r}");
            assert_eq!(q.checks_short_entries, r >= Release::L19, "{r}");
            assert_eq!(q.key_offset_past_end_segfaults, r == Release::L16, "{r}");
            assert_eq!(q.packager_name == "llvm-offload-binary", r >= Release::L22);
            assert_eq!(q.packager_archive_option, r >= Release::L19, "{r}");
            assert_eq!(q.packager_deprecation_warning, r >= Release::L22, "{r}");
            assert_eq!(q.packager_help_without_args, r >= Release::L22, "{r}");
            assert_eq!(q.packager_main_writer, main, "{r}");
            assert_eq!(q.image_requires_file_only, r >= Release::L22, "{r}");
            assert_eq!(q.image_file_lists, r >= Release::L19, "{r}");
            assert_eq!(q.extract_by_member, since23, "{r}");
            assert_eq!(q.extract_all_without_filter, since23, "{r}");
            assert_eq!(q.extract_writes_as_found, r <= Release::L16, "{r}");
            assert_eq!(q.spirv_image_kind, r >= Release::L22, "{r}");
            assert_eq!(q.names_spirv, since23, "{r}");
            assert_eq!(q.offload_kinds_22, r >= Release::L22, "{r}");
        }
    }
}
