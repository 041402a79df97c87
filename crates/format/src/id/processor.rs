//! Known offload processors and the target features each supports.
//!
//! LLVM's tables (`clang::OffloadArch`, `llvm::AMDGPU::GPUKind`) grow with
//! every release; this table is their union up to LLVM 22. A processor is
//! "known" to a release profile when it appears here (spec rule TID-3).
//!
//! # Example
//!
//! Look processors, aliases and their features up.
//!
//! ```
//! use offload_kit_format::id::processor;
//!
//! assert!(processor::is_offload_arch("gfx906") && processor::is_cuda("sm_70"));
//! assert!(!processor::is_offload_arch("gfx9999"));
//! // Old AMDGPU names are aliases of a primary processor.
//! assert_eq!(processor::canonical_amdgpu("hawaii"), Some("gfx701"));
//! // The features a target ID may set, per processor.
//! assert_eq!(processor::amdgpu_features("gfx90a"), ["sramecc", "xnack"]);
//! assert!(processor::amdgpu_features("gfx1030").is_empty());
//! ```

/// xnack support.
const X: u8 = 1;
/// sramecc support.
const S: u8 = 2;

/// AMDGPU processors: (primary name, supported features).
const AMDGPU: &[(&str, u8)] = &[
    ("gfx600", 0),
    ("gfx601", 0),
    ("gfx602", 0),
    ("gfx700", 0),
    ("gfx701", 0),
    ("gfx702", 0),
    ("gfx703", 0),
    ("gfx704", 0),
    ("gfx705", 0),
    ("gfx801", X),
    ("gfx802", 0),
    ("gfx803", 0),
    ("gfx805", 0),
    ("gfx810", X),
    ("gfx900", X),
    ("gfx902", X),
    ("gfx904", X),
    ("gfx906", X | S),
    ("gfx908", X | S),
    ("gfx909", X),
    ("gfx90a", X | S),
    ("gfx90c", X),
    ("gfx940", X | S),
    ("gfx941", X | S),
    ("gfx942", X | S),
    ("gfx950", X | S),
    ("gfx1010", X),
    ("gfx1011", X),
    ("gfx1012", X),
    ("gfx1013", X),
    ("gfx1030", 0),
    ("gfx1031", 0),
    ("gfx1032", 0),
    ("gfx1033", 0),
    ("gfx1034", 0),
    ("gfx1035", 0),
    ("gfx1036", 0),
    ("gfx1100", 0),
    ("gfx1101", 0),
    ("gfx1102", 0),
    ("gfx1103", 0),
    ("gfx1150", 0),
    ("gfx1151", 0),
    ("gfx1152", 0),
    ("gfx1153", 0),
    ("gfx1200", 0),
    ("gfx1201", 0),
    ("gfx1250", 0),
    ("gfx1251", 0),
    ("gfx9-generic", X),
    ("gfx9-4-generic", X | S),
    ("gfx10-1-generic", X),
    ("gfx10-3-generic", 0),
    ("gfx11-generic", 0),
    ("gfx12-generic", 0),
];

/// Alternative AMDGPU processor names and their primary names (TID-4).
const AMDGPU_ALIASES: &[(&str, &str)] = &[
    ("tahiti", "gfx600"),
    ("pitcairn", "gfx601"),
    ("verde", "gfx601"),
    ("oland", "gfx602"),
    ("hainan", "gfx602"),
    ("kaveri", "gfx700"),
    ("hawaii", "gfx701"),
    ("kabini", "gfx703"),
    ("mullins", "gfx703"),
    ("bonaire", "gfx704"),
    ("carrizo", "gfx801"),
    ("iceland", "gfx802"),
    ("tonga", "gfx802"),
    ("fiji", "gfx803"),
    ("polaris10", "gfx803"),
    ("polaris11", "gfx803"),
    ("stoney", "gfx810"),
];

/// CUDA processors (`sm_*`).
const CUDA: &[&str] = &[
    "sm_20", "sm_21", "sm_30", "sm_32", "sm_35", "sm_37", "sm_50", "sm_52", "sm_53", "sm_60",
    "sm_61", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89",
    "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_101", "sm_101a", "sm_103", "sm_103a", "sm_110",
    "sm_110a", "sm_120", "sm_120a", "sm_121", "sm_121a",
];

/// Other names LLVM's offload-arch table holds.
const OTHER: &[&str] = &["amdgcnspirv"];

/// Every processor name of the table: AMDGPU primary names, then their
/// aliases, CUDA names and `amdgcnspirv` (a name appears once).
///
/// ```
/// use offload_kit_format::id::processor;
///
/// assert!(processor::names().any(|n| n == "gfx942"));
/// assert!(processor::names().all(|n| processor::is_offload_arch(n) || processor::canonical_amdgpu(n).is_some()));
/// ```
pub fn names() -> impl Iterator<Item = &'static str> {
    AMDGPU
        .iter()
        .map(|(n, _)| *n)
        .chain(AMDGPU_ALIASES.iter().map(|(a, _)| *a))
        .chain(CUDA.iter().copied())
        .chain(OTHER.iter().copied())
}

/// Whether `name` is in LLVM's offload-arch table (`StringToOffloadArch`
/// != Unknown): AMDGPU primary names, CUDA names, `amdgcnspirv`.
pub fn is_offload_arch(name: &str) -> bool {
    AMDGPU.iter().any(|(n, _)| *n == name) || CUDA.contains(&name) || OTHER.contains(&name)
}

/// Whether `name` is a CUDA processor (`sm_*` in the table).
pub fn is_cuda(name: &str) -> bool {
    CUDA.contains(&name)
}

/// The primary AMDGPU processor name for `name` (primary or alias), or `None`.
pub fn canonical_amdgpu(name: &str) -> Option<&'static str> {
    if let Some((n, _)) = AMDGPU.iter().find(|(n, _)| *n == name) {
        return Some(n);
    }
    AMDGPU_ALIASES
        .iter()
        .find(|(a, _)| *a == name)
        .map(|(_, p)| *p)
}

/// The target features an AMDGPU processor accepts in a target ID.
pub fn amdgpu_features(primary: &str) -> &'static [&'static str] {
    let bits = AMDGPU
        .iter()
        .find(|(n, _)| *n == primary)
        .map(|(_, b)| *b)
        .unwrap_or(0);
    match bits {
        b if b == X | S => &["sramecc", "xnack"],
        X => &["xnack"],
        S => &["sramecc"],
        _ => &[],
    }
}
