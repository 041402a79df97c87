//! The catalogue of spec rules.
//!
//! Every normative rule of `spec/` has a stable ID. Errors, tests and
//! conformance cases cite these IDs; `tests/spec_rules.rs` (this crate's) checks that this
//! table and the spec chapters agree.
//!
//! # Example
//!
//! Look a rule up and see it cited by an error.
//!
//! ```
//! use offload_kit_format::{rules, Error};
//!
//! let r = rules::by_id("BIN-10").unwrap();
//! assert_eq!((*r, r.chapter), (rules::BIN_10, "binary-bundle.md"));
//! assert!(rules::by_id("BIN-99").is_none());
//! assert!(rules::ALL.iter().all(|r| rules::by_id(r.id) == Some(r))); // IDs are unique
//! let e = Error::at(rules::BIN_10, 0x40, "trailing bytes");
//! assert_eq!(e.to_string(), "trailing bytes (at offset 0x40, rule BIN-10)");
//! ```

/// A spec rule: its stable ID, the chapter that defines it and a one-line title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Stable ID, e.g. `BIN-6`.
    pub id: &'static str,
    /// Spec chapter file under `spec/`.
    pub chapter: &'static str,
    /// One-line summary of the rule.
    pub title: &'static str,
}

macro_rules! rules {
    ($( $konst:ident = $id:literal, $chapter:literal, $title:literal; )*) => {
        $(
            #[doc = concat!("`", $id, "`: ", $title)]
            pub const $konst: Rule = Rule { id: $id, chapter: $chapter, title: $title };
        )*
        /// All rules, in spec order.
        pub const ALL: &[Rule] = &[$($konst),*];
    };
}

rules! {
    BIN_1 = "BIN-1", "binary-bundle.md", "A binary bundle starts with the 24-byte magic `__CLANG_OFFLOAD_BUNDLE__`";
    BIN_2 = "BIN-2", "binary-bundle.md", "The entry count and every entry record lie inside the bundle";
    BIN_3 = "BIN-3", "binary-bundle.md", "A binary bundle has at least one entry";
    BIN_4 = "BIN-4", "binary-bundle.md", "An entry ID is not empty and is a valid bundle entry ID";
    BIN_5 = "BIN-5", "binary-bundle.md", "Every entry payload lies inside the bundle (offset + size does not overflow and is <= the bundle size)";
    BIN_6 = "BIN-6", "binary-bundle.md", "No payload overlaps the header";
    BIN_7 = "BIN-7", "binary-bundle.md", "No two non-empty payloads overlap";
    BIN_8 = "BIN-8", "binary-bundle.md", "Entry IDs are unique within a bundle";
    BIN_9 = "BIN-9", "binary-bundle.md", "Bytes between the header and the payloads, and between payloads, are zero padding";
    BIN_10 = "BIN-10", "binary-bundle.md", "A standalone bundle ends with its last payload: no trailing bytes";
    BIN_11 = "BIN-11", "binary-bundle.md", "Writer layout: header, then payloads in entry order, each at the next multiple of the alignment (>= 1)";
    BIN_12 = "BIN-12", "binary-bundle.md", "Readers present entries in header order";
    BIN_13 = "BIN-13", "binary-bundle.md", "A bundle holds at most one host entry";
    ID_1 = "ID-1", "bundle-id.md", "Bundle entry ID syntax: kind-arch-vendor-os[-env[-target-id]], printable ASCII";
    ID_2 = "ID-2", "bundle-id.md", "The offload kind is one of host, hip, hipv4, openmp (case-sensitive)";
    ID_3 = "ID-3", "bundle-id.md", "The triple's components are known";
    ID_4 = "ID-4", "bundle-id.md", "Canonical spelling: six fields, 4-field triple, normalized components";
    ID_5 = "ID-5", "bundle-id.md", "A five-field ID whose fifth field names a processor is ambiguous";
    ID_6 = "ID-6", "bundle-id.md", "A host entry has no target ID";
    ID_7 = "ID-7", "bundle-id.md", "An amdgpu triple names its subarch, and the entry's processor agrees with it";
    TID_1 = "TID-1", "bundle-id.md", "Target ID syntax: processor (':' feature ('+'|'-'))*";
    TID_2 = "TID-2", "bundle-id.md", "A target feature appears at most once";
    TID_3 = "TID-3", "bundle-id.md", "The processor is known for the triple and each feature is supported by it";
    TID_4 = "TID-4", "bundle-id.md", "Canonical target ID: primary processor name, features in alphabetical order";
    COMPAT_1 = "COMPAT-1", "bundle-id.md", "Offload kinds are compatible: equal, hip~hipv4, and hip*~openmp when requested";
    COMPAT_2 = "COMPAT-2", "bundle-id.md", "Target triples are compatible: equal components, an empty environment equals unknown";
    COMPAT_3 = "COMPAT-3", "bundle-id.md", "Target IDs are compatible: same processor, every feature of the code object set the same way in the target";
    COMPAT_4 = "COMPAT-4", "bundle-id.md", "AMDGPU subarches are compatible: the same, or the code object's is the major of the target's family";
    COMPOSE_1 = "COMPOSE-1", "bundle-id.md", "Entries for one processor either all leave a feature Any or none does";
    CCOB_1 = "CCOB-1", "ccob.md", "A compressed bundle starts with the magic `CCOB`";
    CCOB_2 = "CCOB-2", "ccob.md", "The version is 1, 2 or 3 and the whole header of that version is present";
    CCOB_3 = "CCOB-3", "ccob.md", "The method is 0 (zlib) or 1 (zstd)";
    CCOB_4 = "CCOB-4", "ccob.md", "The total size (v2, v3) covers the header and lies inside the data; it bounds the blob";
    CCOB_5 = "CCOB-5", "ccob.md", "The compressed data is one complete stream that ends exactly at the end of the blob";
    CCOB_6 = "CCOB-6", "ccob.md", "The stream yields exactly the uncompressed size the header gives";
    CCOB_7 = "CCOB-7", "ccob.md", "The hash is the first 8 bytes of the MD5 of the uncompressed bundle";
    CCOB_8 = "CCOB-8", "ccob.md", "Writer: version 3 (default) or 2 or 1, sizes within the version's field widths, zstd level 3 with long-distance matching by default";
    CCOB_9 = "CCOB-9", "ccob.md", "The uncompressed data is a bundle (binary or text); anything else is reported as such";
    CLI_1 = "CLI-1", "cli.md", "Bundling needs one input per target and exactly one output";
    CLI_2 = "CLI-2", "cli.md", "Unbundling needs one input and one output per target";
    CLI_3 = "CLI-3", "cli.md", "Targets are distinct and bundles (except HIP-only ones) have exactly one host target";
    CLI_4 = "CLI-4", "cli.md", "Every requested target is found unless missing bundles are allowed";
    CLI_5 = "CLI-5", "cli.md", "Outputs are written to a temporary file renamed on success and never escape the chosen directory";
    CLI_6 = "CLI-6", "cli.md", "A command holds at most its memory budget of decoded data beyond the outputs it writes";
    OBJ_1 = "OBJ-1", "object-bundle.md", "An object-file bundle is an ELF file (32- or 64-bit, either byte order); other object formats are not supported";
    OBJ_2 = "OBJ-2", "object-bundle.md", "The ELF header, the section header table and the section name string table lie inside the file and are well formed";
    OBJ_3 = "OBJ-3", "object-bundle.md", "Every section's contents lie inside the file and every section index a section holds is in range";
    OBJ_4 = "OBJ-4", "object-bundle.md", "A bundle section is named `__CLANG_OFFLOAD_BUNDLE__` followed by a non-empty, valid bundle entry ID";
    OBJ_5 = "OBJ-5", "object-bundle.md", "Entry IDs are unique among the bundle sections";
    OBJ_6 = "OBJ-6", "object-bundle.md", "An object-file bundle has exactly one host entry and its section holds exactly one 0x00 byte";
    OBJ_7 = "OBJ-7", "object-bundle.md", "No device entry's section holds exactly one 0x00 byte";
    OBJ_8 = "OBJ-8", "object-bundle.md", "A bundle section is SHT_PROGBITS with SHF_EXCLUDE set and SHF_ALLOC and SHF_WRITE clear";
    OBJ_9 = "OBJ-9", "object-bundle.md", "Readers present entries in section header order";
    OBJ_10 = "OBJ-10", "object-bundle.md", "Writer: bundle sections are appended after the host object's sections, in target order, with alignment 1 and IDs as the release writes them";
    OBJ_11 = "OBJ-11", "object-bundle.md", "The host entry unbundles to the fat object without its bundle sections, section indices renumbered";
    FAT_1 = "FAT-1", "object-bundle.md", "Bundles in `.hip_fatbin` start at multiples of 4096 from the section start, the first at 0, each a binary or compressed bundle bounded by its own header";
    FAT_2 = "FAT-2", "object-bundle.md", "Bytes after a bundle in `.hip_fatbin`, up to the next multiple of 4096 or the section end, are zero";
    FAT_3 = "FAT-3", "object-bundle.md", "A compressed bundle in `.hip_fatbin` has version 2 or 3 and a total size that covers its header and lies inside the section";
    FAT_4 = "FAT-4", "object-bundle.md", "A `.hip_fatbin` section is SHT_PROGBITS with an alignment that is a multiple of 4096";
    TXT_1 = "TXT-1", "text-bundle.md", "Text bundle types and their comment strings: i, ii, cui, hipi use `//`; d, s use `#`; ll uses `;`";
    TXT_2 = "TXT-2", "text-bundle.md", "Writer: per entry, in order, the START line, the content verbatim, the END line";
    TXT_3 = "TXT-3", "text-bundle.md", "A text bundle holds at least one bundle and starts at byte 0 with the `\\n` that opens its first START line";
    TXT_4 = "TXT-4", "text-bundle.md", "A START line is `\\n` C ` __CLANG_OFFLOAD_BUNDLE____START__ ` ID `\\n`";
    TXT_5 = "TXT-5", "text-bundle.md", "An entry ID is not empty and is a valid bundle entry ID";
    TXT_6 = "TXT-6", "text-bundle.md", "Marker lines end with a bare `\\n`: no CR in front of it";
    TXT_7 = "TXT-7", "text-bundle.md", "Every START line is closed by an END line before the next START line and before the end of the file";
    TXT_8 = "TXT-8", "text-bundle.md", "An END line is `\\n` C ` __CLANG_OFFLOAD_BUNDLE____END__ ` ID `\\n` and names the ID of its START line";
    TXT_9 = "TXT-9", "text-bundle.md", "A content holds no START marker";
    TXT_10 = "TXT-10", "text-bundle.md", "A content holds no END marker";
    TXT_11 = "TXT-11", "text-bundle.md", "After an END line comes the next START line (whose `\\n` makes a blank line) or the end of the file";
    TXT_12 = "TXT-12", "text-bundle.md", "Entry IDs are unique within a text bundle";
    TXT_13 = "TXT-13", "text-bundle.md", "Readers present entries in file order";
    OB_1 = "OB-1", "offload-binary.md", "An offload binary starts with the magic bytes 10 FF 10 AD";
    OB_2 = "OB-2", "offload-binary.md", "The version is 1, 2 or 3";
    OB_3 = "OB-3", "offload-binary.md", "The whole header of the version lies inside the data";
    OB_4 = "OB-4", "offload-binary.md", "The size covers the header and lies inside the data";
    OB_5 = "OB-5", "offload-binary.md", "The size of an uncompressed binary is a multiple of 8";
    OB_6 = "OB-6", "offload-binary.md", "The entries lie inside the binary after the header: one entry of 40 bytes in v1, at least one in v2 and v3";
    OB_7 = "OB-7", "offload-binary.md", "The string entries of every entry lie inside the binary";
    OB_8 = "OB-8", "offload-binary.md", "Every key and value lies inside the binary: keys and v1 values NUL-terminated, v2 and v3 values within their size";
    OB_9 = "OB-9", "offload-binary.md", "Every image lies inside the binary: offset + size does not overflow and is at most the size";
    OB_10 = "OB-10", "offload-binary.md", "Header, entries, string entries, strings and images do not overlap; strings may share bytes";
    OB_11 = "OB-11", "offload-binary.md", "Keys are unique within an entry";
    OB_12 = "OB-12", "offload-binary.md", "The image kind is defined in the release's table";
    OB_13 = "OB-13", "offload-binary.md", "The offload kind is defined in the release's table";
    OB_14 = "OB-14", "offload-binary.md", "Flags set no undefined bit: none in v1, OIF_Metadata in v2 and v3";
    OB_15 = "OB-15", "offload-binary.md", "Binaries follow one another without gaps and the data ends with the last one";
    OB_16 = "OB-16", "offload-binary.md", "Bytes outside the header, entries, string entries, strings and images are zero";
    OB_17 = "OB-17", "offload-binary.md", "Writer layout: header, entries, string entries, the optimized string table, images at the next multiple of 8, size padded to 8";
    OB_18 = "OB-18", "offload-binary.md", "Writer: string entries in the release's map order, without `file` and `kind`, repeated keys joined with ','";
    OB_19 = "OB-19", "offload-binary.md", "A compressed v3 binary inflates to exactly its inflated size and is padded with zeros to a multiple of 8";
    OB_20 = "OB-20", "offload-binary.md", "In ELF files, offload binaries are read from sections of type SHT_LLVM_OFFLOADING";
    OB_21 = "OB-21", "offload-binary.md", "Archives are read member by member; a member is a raw binary, an ELF file or an archive";
    OB_22 = "OB-22", "offload-binary.md", "Packaging: every image names a `file`, and in 16 and 19 a `triple`; 19 and 22 package one binary per comma-separated file";
    OB_23 = "OB-23", "offload-binary.md", "Extraction: an image matches when every filter key equals its string, `kind` compared as an enumeration; outputs are named and written as the release does, inside the current directory";
    OB_24 = "OB-24", "offload-binary.md", "Archive writer: a `/` symbol table of the global defined symbols of ELF and bitcode members precedes the `//` name table";
    OB_25 = "OB-25", "offload-binary.md", "String keys and values hold no control characters";
    AR_1 = "AR-1", "archive.md", "An archive input is a GNU or BSD `ar` archive whose member headers and data lie inside the file; thin archives are not read";
    AR_2 = "AR-2", "archive.md", "Members are read in archive order; a member that is not a bundle (after CCOB decompression on 19 and 22) holds no code object and is skipped";
    AR_3 = "AR-3", "archive.md", "Every entry of a member goes to every requested target it is compatible with, by the release's archive rule";
    AR_4 = "AR-4", "archive.md", "Output member name: stem, '-', the entry ID, stem, extension (`.bc` for gfx, `.cubin` for sm_, else the member's own), every ':' replaced by '_'";
    AR_5 = "AR-5", "archive.md", "One output archive per target, written as LLVM's `writeArchive` K_GNU deterministic, with the symbol table of its members";
    AR_6 = "AR-6", "archive.md", "A target without a compatible code object is an error, or an empty archive with -allow-missing-bundles; archives of earlier targets stay";
    AR_7 = "AR-7", "archive.md", "Within one member, the entry IDs of one kind, triple and processor either all set a feature or none does";
    CO_1 = "CO-1", "code-object.md", "An AMDGPU code object's processor and xnack/sramecc settings agree with its entry ID's target ID";
    CO_2 = "CO-2", "code-object.md", "An ELF image has a whole ELF header of a known class and byte order, version 1, and the class's header and table entry sizes";
    CO_3 = "CO-3", "code-object.md", "An ELF image's program and section header tables lie inside it, and e_shstrndx names one of its sections";
    CO_4 = "CO-4", "code-object.md", "The file contents of every segment and section of an ELF image lie inside it";
    CO_5 = "CO-5", "code-object.md", "An ELF image's string tables begin and end with NUL, and its symbol tables link a string table";
    URI_1 = "URI-1", "uri.md", "A code object URI is `file://` with a path and an optional range, or `memory://` with a process ID and a range";
    URI_2 = "URI-2", "uri.md", "The path is percent-encoded: every byte outside `A-Z a-z 0-9 / _ . ~ -` is written `%XX`";
    URI_3 = "URI-3", "uri.md", "A range specifier is `offset=N&size=M` after `#` or `?`; numbers are C literals";
    URI_4 = "URI-4", "uri.md", "A file range lies inside the file";
    KPAK_1 = "KPAK-1", "kpack.md", "A kpack archive starts with `KPAK`, format version 1 and a TOC offset after the 0x40-byte header area";
    KPAK_2 = "KPAK-2", "kpack.md", "The TOC is one MessagePack map from the TOC offset to the end of the file, with the keys of its format version";
    KPAK_3 = "KPAK-3", "kpack.md", "Every blob lies between the header area and the TOC";
    KPAK_4 = "KPAK-4", "kpack.md", "zstd-per-kernel blobs are size-prefixed frames within the zstd region, each decoding to its original size";
    KPAK_5 = "KPAK-5", "kpack.md", "The TOC maps each kernel name and architecture to an existing blob";
    HIPK_1 = "HIPK-1", "kpack.md", "A HIPK host names its archives in `.rocm_kpack_ref`, and its `.hip_fatbin` may hold nothing";
    HIPK_2 = "HIPK-2", "kpack.md", "A HIPK host's code object is the one ROCm's runtime finds: `<kernel_name>#<index>` in the first archive holding a compatible architecture";
    HIPK_3 = "HIPK-3", "kpack.md", "A host rewritten for a split keeps every address: its `.hip_fatbin` pages leave the file, its wrappers say HIPK, carry their index and point at `.rocm_kpack_ref` in a new load segment";
    HIPK_4 = "HIPK-4", "kpack.md", "A HIPK host's load segments are ones glibc maps: each `PT_LOAD` at an address congruent to its offset modulo the page";
}

/// Look a rule up by its ID.
pub fn by_id(id: &str) -> Option<&'static Rule> {
    ALL.iter().find(|r| r.id == id)
}
