//! The catalogue of spec rules.
//!
//! Every normative rule of `spec/` has a stable ID. Errors, tests and
//! conformance cases cite these IDs; `tests/spec_rules.rs` checks that this
//! table and the spec chapters agree.

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
    ID_3 = "ID-3", "bundle-id.md", "The triple's architecture is known";
    ID_4 = "ID-4", "bundle-id.md", "Canonical spelling: six fields, 4-field triple, normalized components";
    ID_5 = "ID-5", "bundle-id.md", "A five-field ID whose fifth field names a processor is ambiguous";
    ID_6 = "ID-6", "bundle-id.md", "A host entry has no target ID";
    TID_1 = "TID-1", "bundle-id.md", "Target ID syntax: processor (':' feature ('+'|'-'))*";
    TID_2 = "TID-2", "bundle-id.md", "A target feature appears at most once";
    TID_3 = "TID-3", "bundle-id.md", "The processor is known for the triple and each feature is supported by it";
    TID_4 = "TID-4", "bundle-id.md", "Canonical target ID: primary processor name, features in alphabetical order";
    COMPAT_1 = "COMPAT-1", "bundle-id.md", "Offload kinds are compatible: equal, hip~hipv4, and hip*~openmp when requested";
    COMPAT_2 = "COMPAT-2", "bundle-id.md", "Target triples are compatible: equal components, an empty environment equals unknown";
    COMPAT_3 = "COMPAT-3", "bundle-id.md", "Target IDs are compatible: same processor, every feature of the code object set the same way in the target";
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
}

/// Look a rule up by its ID.
pub fn by_id(id: &str) -> Option<&'static Rule> {
    ALL.iter().find(|r| r.id == id)
}
