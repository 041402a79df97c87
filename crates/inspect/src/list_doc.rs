//! `offload-kit list --json`'s document (schema offload-kit-list/1,
//! docs/schema/offload-kit-list-1.schema.json), made once for the CLI and
//! the C ABI: a container's entries, a kpack archive's code objects, and
//! a split host's code objects in its archives.

use crate::hipk::Filed;
use crate::kpack_archive::scheme_name;
use offload_kit_format::kpack;
use offload_kit_format::Errors;
use offload_kit_llvm::detect;
use serde_json::{json, Value};
use std::path::Path;

/// The document's schema name and version.
pub const SCHEMA: &str = "offload-kit-list/1";

/// The document for `data`: a kpack archive's code objects (`file`, its
/// path as given, in `kpack.file` when known), else a container's entries
/// as `opts` reads them. A split host's code objects are added by
/// [`add_filed`], once its archives are found from its path.
pub fn list_document(
    data: &[u8],
    opts: detect::ListOptions,
    file: Option<&str>,
) -> Result<Value, Errors> {
    if kpack::is_kpack(data) {
        let a = kpack::parse(data).map_err(|e| Errors::from(vec![e]))?;
        let entries: Vec<Value> = (a.kernels.iter())
            .map(|k| kpack_entry(k, a.blob(k), None))
            .collect();
        let mut about = json!({"compression_scheme": scheme_name(&a), "group_name": a.group_name,
            "gfx_arch_family": a.gfx_arch_family, "gfx_arches": a.gfx_arches});
        if let Some(f) = file {
            about["file"] = f.into();
        }
        return Ok(
            json!({"schema": SCHEMA, "container": "kpack", "mode": "strict",
            "entries": entries, "kpack": about}),
        );
    }
    let listing = detect::list(&data, opts)?;
    let mut doc = serde_json::to_value(&listing)
        .map_err(|e| Errors::from(vec![offload_kit_format::Error::other(e.to_string())]))?;
    doc["schema"] = SCHEMA.into();
    Ok(doc)
}

/// A kpack entry: the kernel's record at its blob (`id` the kernel name),
/// and for a split host's the archive holding it (offsets are that
/// archive's).
pub fn kpack_entry(k: &kpack::Kernel, (offset, size): (u64, u64), archive: Option<&Path>) -> Value {
    let mut record = json!({"arch": k.arch, "ordinal": k.ordinal,
        "original_size": k.original_size, "type": k.kind, "target": k.target});
    if let Some(p) = archive {
        record["archive"] = p.to_string_lossy().into();
    }
    json!({"id": k.name, "offset": offset, "size": size, "bundle": 0,
        "container": "kpack", "kpack": record})
}

/// Add a split host's code objects, as its archives file them
/// ([`crate::hipk::filed`]), after its own entries.
pub fn add_filed(doc: &mut Value, filed: &[Filed]) {
    if let Some(Value::Array(list)) = doc.get_mut("entries") {
        list.extend((filed.iter()).map(|f| kpack_entry(&f.kernel, f.blob, Some(&f.archive))));
    }
}
