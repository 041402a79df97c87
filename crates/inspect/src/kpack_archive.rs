//! ROCm kpack archives as `inspect` and `check` answer for them, in the
//! library so that every front end (the CLI, Python, the C ABI) gives the
//! same answer for the same archive.
//!
//! ```
//! use offload_kit_format::kpack;
//! use offload_kit_inspect::{check::Gpu, kpack_archive as kp};
//!
//! let bytes = kpack::write_plain("g", "gfx9", &[("lib/k.so#0", "gfx90a", b"not an ELF image")]);
//! let report = kp::inspect_kpack(&bytes, Default::default()).unwrap();
//! assert_eq!(report.code_objects[0].key, "lib/k.so#0");
//! let v = kp::check_kpack(&report.gfx_arches, &Gpu::parse("gfx90a:xnack+").unwrap());
//! assert_eq!((v.runs, v.found.as_deref()), (true, Some("gfx90a")));
//! assert!(!kp::check_kpack(&report.gfx_arches, &Gpu::parse("gfx906").unwrap()).runs);
//! ```

use crate::budget::Budget;
use crate::check::Gpu;
use crate::code_object::{self, CodeObject};
use offload_kit_format::kpack::{self, Scheme};
use offload_kit_format::Errors;

/// A kpack archive as `inspect` reports it (`--json`: `kpack_archive`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct KpackReport {
    /// `group_name`.
    pub group_name: String,
    /// `gfx_arch_family`.
    pub gfx_arch_family: String,
    /// `gfx_arches`, as the TOC lists them.
    pub gfx_arches: Vec<String>,
    /// `none` or `zstd-per-kernel`.
    pub compression_scheme: &'static str,
    /// Every code object the archive files, in TOC order.
    pub code_objects: Vec<FiledCodeObject>,
}

/// One code object an archive files.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FiledCodeObject {
    /// The kernel name it is filed under (`<kernel_name>#<index>`).
    pub key: String,
    /// The architecture it is filed for.
    pub arch: String,
    /// Its size decoded.
    pub size: u64,
    /// What it is.
    pub code_object: CodeObject,
}

/// Whether a GPU can load code from an archive (`check`'s answer for it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KpackVerdict {
    /// The GPU as given.
    pub gpu: String,
    /// Whether the archive holds a target the GPU takes.
    pub runs: bool,
    /// That target: the first the runtime tries that the archive holds.
    pub found: Option<String>,
}

/// The name of an archive's compression scheme, as its TOC spells it.
pub fn scheme_name(a: &kpack::Archive) -> &'static str {
    match a.scheme {
        Scheme::Plain(_) => "none",
        Scheme::ZstdPerKernel(_) => "zstd-per-kernel",
    }
}

/// Read an archive strictly ([`crate::validate_kpack`]) and say what each
/// code object is; one code object decoded at a time, within `budget`.
pub fn inspect_kpack(data: &[u8], budget: Budget) -> Result<KpackReport, Errors> {
    let a = crate::validate_kpack(data, budget)?;
    let limit = budget.bytes();
    let mut code_objects = Vec::with_capacity(a.kernels.len());
    for k in &a.kernels {
        let code = a
            .code_object(data, k, limit)
            .map_err(|e| Errors::from(vec![e]))?;
        code_objects.push(FiledCodeObject {
            key: k.name.clone(),
            arch: k.arch.clone(),
            size: code.len() as u64,
            code_object: code_object::identify(&code),
        });
    }
    Ok(KpackReport {
        group_name: a.group_name.clone(),
        gfx_arch_family: a.gfx_arch_family.clone(),
        compression_scheme: scheme_name(&a),
        gfx_arches: a.gfx_arches.clone(),
        code_objects,
    })
}

/// The target the runtime takes for `gpu` from an archive that `holds`
/// some (HIPK-2): for each mode the GPU may run in, its compatible
/// targets in the runtime's order; the first one held.
pub fn target_for(gpu: &Gpu, holds: impl Fn(&str) -> bool) -> Option<String> {
    gpu.modes().iter().find_map(|m| {
        kpack::compatible_targets(&m.text)
            .into_iter()
            .find(|t| holds(t))
    })
}

/// `check` of an archive named by itself, from its TOC's `gfx_arches`
/// ([`KpackReport::gfx_arches`]): whether it holds a target `gpu` takes
/// (the runtime loads it only through its host).
pub fn check_kpack(gfx_arches: &[String], gpu: &Gpu) -> KpackVerdict {
    let found = target_for(gpu, |t| gfx_arches.iter().any(|a| a == t));
    KpackVerdict {
        gpu: gpu.text.clone(),
        runs: found.is_some(),
        found,
    }
}
