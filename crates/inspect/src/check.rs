//! Which code object the HIP runtime would load on a given GPU, per bundle,
//! or why none fits: the library side of `offload-kit check --gpu`.
//!
//! The runtime looks at entry IDs, not at the objects (CLR's
//! `hip_fatbin.cpp` through comgr's `amd_comgr_lookup_code_object`): in
//! each bundle it takes a `hip`/`hipv4` entry for `amdgcn-amd-amdhsa` whose
//! target ID is the GPU's (exact), else one compatible with it (COMPAT-3:
//! same processor, each feature the entry sets set the same way on the
//! GPU), else, from ROCm 6.2, one built for the generic processor of the
//! GPU's family (AMDGPUUsage, "AMDGPU Generic Processors", LLVM 22). A
//! bundle with no device entry at all is not counted. Entries whose
//! triple is LLVM main's `amdgpu<subarch>` (spec/bundle-id.md ID-7) are
//! never picked: the runtime's lookup knows only `amdgcn`, and `check`
//! says so.
//!
//! # Example
//!
//! ```
//! use offload_kit_format::binary;
//! use offload_kit_inspect::{self as inspect, check};
//!
//! let bundle = binary::write_to_vec(
//!     &[
//!         (b"host-x86_64-unknown-linux-gnu-", b""),
//!         (b"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", b"code"),
//!         (b"hipv4-amdgcn-amd-amdhsa--gfx9-generic", b"code"),
//!     ],
//!     8,
//! )
//! .unwrap();
//! let report = inspect::inspect(&bundle).unwrap();
//! let on = |gpu: &str| check::check(&report, &check::Gpu::parse(gpu).unwrap());
//! assert_eq!(on("gfx90a:sramecc+:xnack+").bundles[0].pick, Some(check::Pick::Compatible));
//! assert_eq!(on("gfx906:xnack-").bundles[0].pick, Some(check::Pick::Generic));
//! let none = on("gfx90a:xnack-");
//! assert!(!none.runs);
//! assert!(none.bundles[0].why_not.as_deref().unwrap().contains("needs xnack+"));
//! ```

use super::Report;
use crate::error::Error;
use crate::id::compat::{kinds_compatible, strict_id, triples_compatible};
use crate::id::subarch::Subarch;
use crate::id::target_id::{canonical_processor, features_compatible, Feature, TargetId};
use crate::id::BundleEntryId;
use serde::Serialize;

/// A GPU, named by its target ID as `amdgpu-arch` prints it
/// (`gfx90a:sramecc+:xnack-`), by its agent name (`gfx90a`) or by the ISA
/// name `rocminfo` prints (`amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`).
/// A feature the processor supports but the name leaves out is a setting
/// not known: [`check`] answers for each mode it may run in.
#[derive(Debug, Clone)]
pub struct Gpu {
    /// As given.
    pub text: String,
    id: BundleEntryId,
}

/// The prefix of the ISA names `rocminfo` prints for AMD GPUs.
const ISA_PREFIX: &str = "amdgcn-amd-amdhsa--";

impl Gpu {
    /// Parse a target ID, agent name or ISA name for `amdgcn-amd-amdhsa`
    /// (TID-1 … TID-3).
    pub fn parse(text: &str) -> Result<Gpu, Error> {
        let target = text.strip_prefix(ISA_PREFIX).unwrap_or(text);
        let id = strict_id(&format!("hipv4-{ISA_PREFIX}{target}"))?;
        if id.parsed_target_id.is_none() {
            return Err(Error::other(format!("'{text}' names no processor")));
        }
        Ok(Gpu {
            text: text.to_string(),
            id,
        })
    }

    /// The settings the GPU may run with: itself when its name sets every
    /// feature its processor supports, else one GPU per combination of the
    /// settings left out (`gfx90a` → `gfx90a:sramecc+:xnack+`, …).
    pub fn modes(&self) -> Vec<Gpu> {
        let tid = self.target_id();
        let processor = self.processor();
        let set = tid.feature_map();
        let mut names = vec![processor.clone()];
        for f in crate::id::processor::amdgpu_features(&processor) {
            names = match set.get(f) {
                Some(Feature::On) => names.iter().map(|n| format!("{n}:{f}+")).collect(),
                Some(Feature::Off) => names.iter().map(|n| format!("{n}:{f}-")).collect(),
                _ => names
                    .iter()
                    .flat_map(|n| [format!("{n}:{f}+"), format!("{n}:{f}-")])
                    .collect(),
            };
        }
        if names.len() <= 1 {
            return vec![self.clone()];
        }
        names.iter().filter_map(|n| Gpu::parse(n).ok()).collect()
    }

    /// The feature settings of the target ID (`sramecc+:xnack-`), empty
    /// when it sets none.
    fn settings(&self) -> String {
        let canonical = self.target_id().canonical(&self.id.triple);
        canonical
            .split_once(':')
            .map_or(String::new(), |(_, f)| f.to_string())
    }

    fn target_id(&self) -> &TargetId {
        self.id
            .parsed_target_id
            .as_ref()
            .expect("checked by Gpu::parse")
    }

    fn processor(&self) -> String {
        canonical_processor(&self.id.triple, &self.target_id().processor)
            .unwrap_or_else(|| self.target_id().processor.clone())
    }
}

/// Where the kernel driver lists the machine's GPUs, one directory per node
/// with a `properties` file (`OFFLOAD_KIT_KFD_TOPOLOGY` names another).
pub const KFD_TOPOLOGY: &str = "/sys/class/kfd/kfd/topology/nodes";

/// The GPUs of this machine as the ROCm runtime sees them, from the KFD
/// topology under `nodes` (each `*/properties`): the processor from
/// `gfx_target_version` (major × 10000 + minor × 100 + stepping, so 90010
/// is gfx90a), sramecc from the capability bit `HSA_CAP_SRAM_EDCSUPPORTED`
/// (0x04000000, `kfd_topology.h`), xnack from `HSA_XNACK` (`hsa_xnack`,
/// 1 on, 0 off) or else left open (both modes). CPU nodes (version 0) are
/// skipped; the order is the nodes'.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::create_dir_all(dir.path().join("1")).unwrap();
/// std::fs::write(dir.path().join("1/properties"), "gfx_target_version 90010\ncapability 67117184\n").unwrap();
/// let gpus = offload_kit_inspect::check::machine_gpus(dir.path(), None).unwrap();
/// assert_eq!(gpus, ["gfx90a:sramecc+"]);
/// ```
pub fn machine_gpus(
    nodes: &std::path::Path,
    hsa_xnack: Option<&str>,
) -> Result<Vec<String>, String> {
    let dir = std::fs::read_dir(nodes).map_err(|e| {
        format!(
            "no KFD topology at {} ({e}): this machine has no AMD GPU the ROCm driver knows; name one with --gpu, e.g. --gpu gfx90a",
            nodes.display()
        )
    })?;
    let mut found: Vec<(u64, String)> = Vec::new();
    for node in dir.flatten() {
        let index: u64 = node
            .file_name()
            .to_string_lossy()
            .parse()
            .unwrap_or(u64::MAX);
        // sysfs files are a page; a made-up tree may hold a FIFO or
        // /dev/zero there: never waited on, never read past 64 KiB.
        let Ok(text) =
            offload_kit_io::input::read_regular_text(&node.path().join("properties"), 64 << 10)
        else {
            continue;
        };
        let field = |name: &str| {
            text.lines()
                .filter_map(|l| l.split_once(' '))
                .find(|(k, _)| *k == name)
                .and_then(|(_, v)| v.trim().parse::<u64>().ok())
        };
        let version = field("gfx_target_version").unwrap_or(0);
        if version == 0 {
            continue;
        }
        let (major, minor, stepping) = (version / 10000, version / 100 % 100, version % 100);
        let processor = format!("gfx{major}{minor}{stepping:x}");
        let features = crate::id::processor::amdgpu_features(&processor);
        let mut name = processor.clone();
        if features.contains(&"sramecc") {
            let on = field("capability").unwrap_or(0) & 0x0400_0000 != 0;
            name.push_str(if on { ":sramecc+" } else { ":sramecc-" });
        }
        if features.contains(&"xnack") {
            match hsa_xnack {
                Some("1") => name.push_str(":xnack+"),
                Some("0") => name.push_str(":xnack-"),
                _ => {}
            }
        }
        found.push((index, name));
    }
    found.sort();
    if found.is_empty() {
        return Err(format!(
            "the KFD topology at {} lists no GPU: name one with --gpu, e.g. --gpu gfx90a",
            nodes.display()
        ));
    }
    Ok(found.into_iter().map(|(_, n)| n).collect())
}

/// How an entry fits a GPU, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pick {
    /// The entry's target ID is the GPU's.
    Exact,
    /// Compatible by COMPAT-3 (the entry leaves a feature to "any").
    Compatible,
    /// Built for the generic processor of the GPU's family.
    Generic,
}

/// The outcome for one bundle.
#[derive(Debug, Clone, Serialize)]
pub struct BundleChoice {
    /// The bundle's number, as `list` shows it.
    pub bundle: usize,
    /// The archive member holding it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// That member's position in the archive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member_index: Option<usize>,
    /// The chosen entry's ID, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// How it fits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pick: Option<Pick>,
    /// Why no entry fits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
    /// The chosen entry's code object disagrees with its ID (CO-1): the
    /// runtime would choose it and the loader refuse it.
    pub refused_by_loader: bool,
    /// The chosen entry's image is broken (CO-2 … CO-5): the loader would
    /// map it, and a broken table is where loaders crash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broken_image: Option<String>,
    /// What the chosen entry holds when no runtime loads it (LLVM IR or
    /// bitcode, assembly, source, a device archive's members): its target
    /// fits, but nothing there runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_loadable: Option<String>,
    /// Why the chosen entry's bytes were not read (more than the memory
    /// budget lets a compressed bundle's entry be held): whether the
    /// loader accepts it is not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_read: Option<String>,
}

impl BundleChoice {
    /// Why the GPU gets no code object it can load from this bundle: no
    /// entry fits, or the one chosen breaks CO-1. `None` when it runs.
    pub fn trouble(&self) -> Option<String> {
        match (&self.why_not, &self.entry) {
            (Some(why), _) => Some(why.clone()),
            (None, Some(e)) if self.refused_by_loader => Some(format!(
                "{} is chosen by its ID, but its code object is for another target (CO-1): the loader refuses it",
                e.escape_debug()
            )),
            (None, Some(e)) if self.not_loadable.is_some() => Some(format!(
                "{} fits, but {}",
                e.escape_debug(),
                self.not_loadable.as_deref().unwrap_or_default()
            )),
            (None, Some(e)) if self.not_read.is_some() => Some(format!(
                "{} is chosen, but it was not read, so whether it loads is not known: {}",
                e.escape_debug(),
                self.not_read.as_deref().unwrap_or_default()
            )),
            (None, Some(e)) if self.broken_image.is_some() => Some(format!(
                "{} is chosen, but the loader would map a broken image: {}",
                e.escape_debug(),
                self.broken_image.as_deref().unwrap_or_default()
            )),
            _ => None,
        }
    }
}

/// The outcome for one input and one GPU.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// The GPU as given.
    pub gpu: String,
    /// Whether every counted bundle has an entry the loader accepts (for a
    /// GPU whose settings are not all given: in some mode).
    pub runs: bool,
    /// Per bundle holding device entries, in input order (for a GPU whose
    /// settings are not all given: in the first mode it runs in, else in
    /// the first mode).
    pub bundles: Vec<BundleChoice>,
    /// For a GPU whose name leaves out settings its processor has (xnack,
    /// sramecc): whether it runs in each mode; empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub modes: Vec<ModeVerdict>,
}

impl Verdict {
    /// For a GPU that runs in some of its modes but not all: the settings
    /// it needs (`xnack-`: those every mode it runs in shares, or the
    /// modes themselves joined by "or"). `None` when it runs in every mode
    /// or in none.
    pub fn needs(&self) -> Option<String> {
        let running: Vec<&ModeVerdict> = self.modes.iter().filter(|m| m.runs).collect();
        if running.is_empty() || running.len() == self.modes.len() {
            return None;
        }
        let common: Vec<&str> = running[0]
            .settings
            .split(':')
            .filter(|f| {
                running
                    .iter()
                    .all(|m| m.settings.split(':').any(|g| g == *f))
            })
            .collect();
        Some(match common.is_empty() {
            false => common.join(":"),
            true => running
                .iter()
                .map(|m| m.settings.as_str())
                .collect::<Vec<_>>()
                .join(" or "),
        })
    }
}

/// Whether a file runs on a GPU in one mode (one setting of each feature).
#[derive(Debug, Clone, Serialize)]
pub struct ModeVerdict {
    /// The settings (`sramecc+:xnack-`).
    pub settings: String,
    /// Whether every counted bundle has an entry the loader accepts.
    pub runs: bool,
}

/// The generic processors and their families (AMDGPUUsage, "AMDGPU Generic
/// Processors", LLVM 22.1.8).
const GENERIC: &[(&str, &[&str])] = &[
    (
        "gfx9-generic",
        &["gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"],
    ),
    ("gfx9-4-generic", &["gfx940", "gfx941", "gfx942", "gfx950"]),
    (
        "gfx10-1-generic",
        &["gfx1010", "gfx1011", "gfx1012", "gfx1013"],
    ),
    (
        "gfx10-3-generic",
        &[
            "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
        ],
    ),
    (
        "gfx11-generic",
        &[
            "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
        ],
    ),
    ("gfx12-generic", &["gfx1200", "gfx1201"]),
];

/// The generic processor whose family holds `processor`.
pub fn generic_of(processor: &str) -> Option<&'static str> {
    GENERIC
        .iter()
        .find(|(_, family)| family.contains(&processor))
        .map(|(g, _)| *g)
}

/// What the runtime would pick in each bundle of `report` for `gpu`: for a
/// GPU whose settings are not all given, in each mode it may run in
/// ([`Gpu::modes`]).
pub fn check(report: &Report, gpu: &Gpu) -> Verdict {
    let modes = gpu.modes();
    if modes.len() == 1 {
        return check_as_named(report, gpu);
    }
    let verdicts: Vec<(Gpu, Verdict)> = modes
        .into_iter()
        .map(|m| {
            let v = check_as_named(report, &m);
            (m, v)
        })
        .collect();
    let shown = verdicts
        .iter()
        .find(|(_, v)| v.runs)
        .unwrap_or(&verdicts[0]);
    Verdict {
        gpu: gpu.text.clone(),
        runs: verdicts.iter().any(|(_, v)| v.runs),
        bundles: shown.1.bundles.clone(),
        modes: verdicts
            .iter()
            .map(|(m, v)| ModeVerdict {
                settings: m.settings(),
                runs: v.runs,
            })
            .collect(),
    }
}

/// [`check`] for the GPU exactly as named: a feature its name leaves out
/// is one the GPU does not depend on, so only entries that leave it to
/// "any" fit (how comgr's lookup reads an ISA name without features).
pub fn check_as_named(report: &Report, gpu: &Gpu) -> Verdict {
    let processor = gpu.processor();
    let generic = generic_of(&processor);
    let mut bundles: Vec<BundleChoice> = Vec::new();
    // Each bundle's entries are the next `b.entries` of the report's.
    let mut rest = report.entries.iter();
    for b in &report.bundles {
        let entries = rest
            .by_ref()
            .take(b.entries)
            .filter(|e| e.entry.image.is_none());
        let mut best: Option<(Pick, usize, &super::InspectedEntry)> = None;
        let mut device = Vec::new();
        let mut near = Vec::new();
        let mut unrecognised = Vec::new();
        for e in entries {
            // An ID as clang 14–16 wrote it is read as the runtime reads it.
            let Ok((id, _)) = BundleEntryId::parse_tolerant(&e.entry.id) else {
                continue;
            };
            if id.kind == "host" {
                continue;
            }
            device.push(e.entry.id.clone());
            if Subarch::parse(&id.triple.arch).is_some() {
                unrecognised.push(e.entry.id.clone());
                continue;
            }
            let Some(tid) = &id.parsed_target_id else {
                continue;
            };
            if !kinds_compatible(&id.kind, "hipv4", false)
                || !triples_compatible(&id.triple, &gpu.id.triple)
            {
                continue;
            }
            let named = canonical_processor(&id.triple, &tid.processor).unwrap_or_default();
            let pick = if named == processor {
                if !features_compatible(tid, gpu.target_id()) {
                    near.push(feature_gap(tid, gpu.target_id()));
                    continue;
                }
                if tid.feature_map() == gpu.target_id().feature_map() {
                    Pick::Exact
                } else {
                    Pick::Compatible
                }
            } else if Some(named.as_str()) == generic && features_compatible(tid, gpu.target_id()) {
                Pick::Generic
            } else {
                continue;
            };
            // Among equals, the entry that sets more features, then the first.
            let rank = (pick, usize::MAX - tid.features.len());
            if best.is_none_or(|(p, n, _)| rank < (p, n)) {
                best = Some((pick, rank.1, e));
            }
        }
        if device.is_empty() {
            continue;
        }
        let ids: Vec<String> = device
            .iter()
            .map(|id| {
                id.rsplit_once("--")
                    .map_or(id.as_str(), |p| p.1)
                    .to_string()
            })
            .collect();
        bundles.push(match best {
            Some((pick, _, e)) => BundleChoice {
                not_loadable: not_loadable(report, e),
                bundle: b.index,
                member: b.member.clone(),
                member_index: b.member_index,
                entry: Some(e.entry.id.clone()),
                pick: Some(pick),
                why_not: None,
                refused_by_loader: e.breaks_co_1,
                broken_image: e.broken_image.as_ref().map(Error::to_string),
                not_read: e.not_read.as_ref().map(Error::to_string),
            },
            None => BundleChoice {
                bundle: b.index,
                member: b.member.clone(),
                member_index: b.member_index,
                entry: None,
                pick: None,
                why_not: Some(match near.first() {
                    Some(gap) => format!("{gap} (entries: {})", ids.join(", ")),
                    None if !unrecognised.is_empty() => unrecognised_text(&unrecognised),
                    None => format!("no entry for {processor} (entries: {})", ids.join(", ")),
                }),
                refused_by_loader: false,
                broken_image: None,
                not_loadable: None,
                not_read: None,
            },
        });
    }
    Verdict {
        gpu: gpu.text.clone(),
        runs: bundles.iter().all(|b| {
            b.pick.is_some()
                && !b.refused_by_loader
                && b.broken_image.is_none()
                && b.not_loadable.is_none()
                && b.not_read.is_none()
        }),
        bundles,
        modes: Vec::new(),
    }
}

/// Why entries with LLVM main's `amdgpu<subarch>` triples (ID-7) are no
/// answer: the runtime's lookup knows `amdgcn` only.
fn unrecognised_text(ids: &[String]) -> String {
    format!(
        "the HIP runtime does not recognise amdgpu<subarch> triples as LLVM main writes them ({}): CLR matches entry IDs by the prefix 'hipv4-amdgcn-amd-amdhsa--' and comgr 5.2 parses only amdgcn ISA names (spec/bundle-id.md ID-7)",
        ids.join(", ")
    )
}

/// What `e` holds when no runtime loads it: the entries of text bundles (IR,
/// assembly, preprocessed source), of device archives (linked into
/// programs, never loaded), LLVM bitcode.
fn not_loadable(report: &Report, e: &super::InspectedEntry) -> Option<String> {
    use super::code_object::CodeObject;
    use crate::detect::Container;
    Some(
        match (report.container, &e.object) {
            (Container::TextBundle, _) => {
                "it is an entry of a text bundle (LLVM IR, assembly or source), which no runtime loads"
            }
            (Container::Archive, _) => {
                "it is in a device archive, whose code objects are linked into programs, not loaded"
            }
            (_, CodeObject::Bitcode) => "it holds LLVM bitcode, which no runtime loads",
            _ => return None,
        }
        .to_string(),
    )
}

/// Why an entry for the GPU's processor does not fit: the first feature it
/// sets otherwise than the GPU.
fn feature_gap(entry: &TargetId, gpu: &TargetId) -> String {
    let g = gpu.feature_map();
    for (name, setting) in &entry.features {
        let sign = |s: &Feature| if *s == Feature::On { '+' } else { '-' };
        match g.get(name.as_str()) {
            Some(s) if s == setting => {}
            Some(s) => {
                return format!(
                    "{} needs {name}{}, the GPU has {name}{}",
                    entry_text(entry),
                    sign(setting),
                    sign(s)
                )
            }
            None => {
                return format!(
                    "{} needs {name}{}, the GPU's {name} setting was not given",
                    entry_text(entry),
                    sign(setting)
                )
            }
        }
    }
    format!("{} does not fit", entry_text(entry))
}

fn entry_text(t: &TargetId) -> String {
    let mut s = t.processor.clone();
    for (name, f) in &t.features {
        s.push_str(&format!(
            ":{name}{}",
            if *f == Feature::On { '+' } else { '-' }
        ));
    }
    s
}
