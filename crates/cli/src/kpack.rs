//! `list`, `validate` and `extract --all` of a kpack archive (spec/kpack.md).

use super::Input;
use offload_kit_format::kpack::{self, Archive, Scheme};
use offload_kit_format::Error;
use offload_kit_io::output::{self, commit_all, OutputFile};
use std::path::{Path, PathBuf};

/// Whether `input` is a kpack archive (it starts with `KPAK`).
pub(super) fn is_kpack(input: &Input) -> bool {
    kpack::is_kpack(input.bytes())
}

fn scheme_name(a: &Archive) -> &'static str {
    match a.scheme {
        Scheme::Plain(_) => "none",
        Scheme::ZstdPerKernel(_) => "zstd-per-kernel",
    }
}

/// `list`: one line per (kernel name, architecture) with its blob.
pub(super) fn list(file: &Path, input: &Input, json: bool) -> Result<i32, Vec<Error>> {
    let a = kpack::parse(input.bytes()).map_err(|e| vec![e])?;
    if json {
        // offload-kit-list/1: an entry per (kernel, architecture), at its blob.
        let entries: Vec<_> = (a.kernels.iter())
            .map(|k| {
                let (offset, size) = a.blob(k);
                serde_json::json!({"id": k.name, "offset": offset, "size": size, "bundle": 0,
                    "container": "kpack", "kpack": {"arch": k.arch, "ordinal": k.ordinal,
                    "original_size": k.original_size, "type": k.kind, "target": k.target}})
            })
            .collect();
        let doc = serde_json::json!({"schema": "offload-kit-list/1", "container": "kpack",
            "mode": "strict", "entries": entries, "kpack": {"file": file.to_string_lossy(),
            "compression_scheme": scheme_name(&a), "group_name": a.group_name,
            "gfx_arch_family": a.gfx_arch_family, "gfx_arches": a.gfx_arches}});
        outln!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("serialisable")
        );
        return Ok(0);
    }
    for k in &a.kernels {
        let (offset, size) = a.blob(k);
        let name = offload_kit_format::escape::escape_controls(&k.name);
        let arch = offload_kit_format::escape::escape_controls(&k.arch);
        outln!(
            "{name} {arch:<12} offset 0x{offset:x} size {size} (code object {} bytes)",
            k.original_size
        );
    }
    Ok(0)
}

/// For a HIPK host (spec/kpack.md HIPK-1), the line saying where its device
/// code went; `None` for any other input.
pub(super) fn host_note(input: &Input) -> Option<Result<String, Error>> {
    let data = input.bytes();
    let elf = offload_kit_format::host::elf::Elf::parse(data).ok()?;
    let r = offload_kit_llvm::bundle::fatbin::kpack_ref(&elf, data)?;
    Some(r.map(|r| {
        let paths: Vec<String> = (r.search_paths.iter())
            .map(|p| format!("'{}'", offload_kit_format::escape::escape_controls(p)))
            .collect();
        format!(
            "device code split into kpack archives (HIPK host): kernel '{}', searched in {} (@GFXARCH@: the GPU's architecture)",
            offload_kit_format::escape::escape_controls(&r.kernel_name),
            paths.join(", ")
        )
    }))
}

/// Keys the ROCm runtime does not find: it looks up `<name>#<index>`.
fn unindexed(a: &Archive) -> Vec<&str> {
    let mut names: Vec<&str> = (a.kernels.iter())
        .map(|k| k.name.as_str())
        .filter(|n| {
            n.rsplit_once('#')
                .is_none_or(|(_, i)| i.parse::<u32>().is_err())
        })
        .collect();
    names.dedup();
    names
}

/// The archive checked (KPAK-1 … 5), every code object decoded.
pub(super) fn check(input: &Input) -> Result<Archive, Vec<Error>> {
    offload_kit_inspect::validate_kpack(input.bytes()).map_err(|es| es.into_iter().collect())
}

/// `validate`: [`check`], and a warning for names the runtime cannot find.
pub(super) fn validate(file: &Path, input: &Input) -> Result<i32, Vec<Error>> {
    let a = check(input)?;
    for name in unindexed(&a) {
        eprintln!(
            "offload-kit: warning: {}: kernel name '{}' has no '#<index>': ROCm's runtime looks code objects up as '<name>#<index>' and will not find it (spec/kpack.md KPAK-5)",
            file.display(),
            offload_kit_format::escape::escape_controls(name)
        );
    }
    outln!(
        "{}: valid kpack archive ({}) with {} code object(s) for {}",
        file.display(),
        scheme_name(&a),
        a.kernels.len(),
        offload_kit_format::escape::escape_controls(&a.gfx_arches.join(", "))
    );
    Ok(0)
}

/// `extract --all --dir DIR`: each code object as `<name>.<arch>.hsaco`.
pub(super) fn extract_all(input: &Input, dir: &Path) -> Result<i32, Vec<Error>> {
    let data = input.bytes();
    let a = kpack::parse(data).map_err(|e| vec![e])?;
    let limit = offload_kit_llvm::budget::get();
    super::create_out_dir(dir)?;
    let mut outs = Vec::new();
    for k in &a.kernels {
        let code = a.code_object(data, k, limit).map_err(|e| vec![e])?;
        let name = format!("{}.{}.hsaco", k.name, k.arch);
        let path = output::contained_path(dir, &name).map_err(|e| vec![e])?;
        // Two kernels whose names differ only where a path cannot (`a/b`,
        // `a_b`) would write one file: refused, nothing is lost silently.
        if outs.iter().any(|(p, _): &(PathBuf, OutputFile)| *p == path) {
            return Err(vec![Error::rule(
                offload_kit_format::rules::CLI_5,
                format!("two kernels would both be written to '{}'", path.display()),
            )]);
        }
        let mut o = OutputFile::create_replacing(&path).map_err(|e| vec![e])?;
        std::io::Write::write_all(&mut o, &code).map_err(|e| vec![e.into()])?;
        outs.push((path, o));
    }
    for (path, _) in &outs {
        outln!("{}", path.display());
    }
    commit_all(outs.into_iter().map(|o| o.1).collect()).map_err(|e| vec![e])?;
    Ok(0)
}
