//! `offload-kit list --json`'s document (schema offload-kit-list/1,
//! docs/schema/offload-kit-list-1.schema.json), made once for the CLI and
//! the C ABI: a container's entries, a kpack archive's code objects, and
//! a split host's code objects in its archives. Serialised with serde by
//! the front end (which sorts its keys through a JSON value).

use crate::hipk::Filed;
use crate::kpack_archive::scheme_name;
use offload_kit_format::kpack;
use offload_kit_format::Errors;
use offload_kit_llvm::detect;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use std::path::Path;

/// The document's schema name and version.
pub const SCHEMA: &str = "offload-kit-list/1";

/// The document: `schema`, `container`, `mode`, `entries` (the container's
/// own, then code objects in kpack archives) and, for a kpack archive,
/// `kpack` (what its table says of the whole archive).
pub struct ListDocument {
    container: String,
    mode: String,
    own: Vec<detect::ListedEntry>,
    filed: Vec<KpackEntry>,
    about: Option<KpackAbout>,
}

/// A code object in a kpack archive as an entry: the kernel's record at
/// its blob (`id` the kernel name).
#[derive(Serialize)]
pub struct KpackEntry {
    id: String,
    offset: u64,
    size: u64,
    bundle: usize,
    container: &'static str,
    kpack: KpackRecord,
}

#[derive(Serialize)]
struct KpackRecord {
    arch: String,
    ordinal: u64,
    original_size: u64,
    #[serde(rename = "type")]
    kind: String,
    target: Option<String>,
    /// For a split host's entry: the archive holding it (offsets are that
    /// archive's).
    #[serde(skip_serializing_if = "Option::is_none")]
    archive: Option<String>,
}

/// What a kpack archive's table says of the whole archive.
#[derive(Serialize)]
struct KpackAbout {
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    compression_scheme: &'static str,
    group_name: String,
    gfx_arch_family: String,
    gfx_arches: Vec<String>,
}

/// The document for `data`: a kpack archive's code objects (`file`, its
/// path as given, in `kpack.file` when known), else a container's entries
/// as `opts` reads them. A split host's code objects are added by
/// [`ListDocument::add_filed`], once its archives are found from its path.
pub fn list_document(
    data: &[u8],
    opts: detect::ListOptions,
    file: Option<&str>,
) -> Result<ListDocument, Errors> {
    if kpack::is_kpack(data) {
        let a = kpack::parse(data).map_err(|e| Errors::from(vec![e]))?;
        return Ok(ListDocument {
            container: "kpack".into(),
            mode: "strict".into(),
            own: Vec::new(),
            filed: (a.kernels.iter())
                .map(|k| kpack_entry(k, a.blob(k), None))
                .collect(),
            about: Some(KpackAbout {
                file: file.map(str::to_string),
                compression_scheme: scheme_name(&a),
                group_name: a.group_name.clone(),
                gfx_arch_family: a.gfx_arch_family.clone(),
                gfx_arches: a.gfx_arches.clone(),
            }),
        });
    }
    let listing = detect::list(&data, opts)?;
    Ok(ListDocument {
        container: listing.container.to_string(),
        mode: listing.mode,
        own: listing.entries,
        filed: Vec::new(),
        about: None,
    })
}

impl ListDocument {
    /// Add a split host's code objects, as its archives file them
    /// ([`crate::hipk::filed`]), after its own entries.
    pub fn add_filed(&mut self, filed: &[Filed]) {
        (self.filed)
            .extend((filed.iter()).map(|f| kpack_entry(&f.kernel, f.blob, Some(&f.archive))));
    }
}

fn kpack_entry(
    k: &kpack::Kernel,
    (offset, size): (u64, u64),
    archive: Option<&Path>,
) -> KpackEntry {
    KpackEntry {
        id: k.name.clone(),
        offset,
        size,
        bundle: 0,
        container: "kpack",
        kpack: KpackRecord {
            arch: k.arch.clone(),
            ordinal: k.ordinal,
            original_size: k.original_size,
            kind: k.kind.clone(),
            target: k.target.clone(),
            archive: archive.map(|p| p.to_string_lossy().into_owned()),
        },
    }
}

impl Serialize for ListDocument {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("schema", SCHEMA)?;
        m.serialize_entry("container", &self.container)?;
        m.serialize_entry("mode", &self.mode)?;
        m.serialize_entry("entries", &Entries(self))?;
        if let Some(about) = &self.about {
            m.serialize_entry("kpack", about)?;
        }
        m.end()
    }
}

/// The container's own entries, then those in kpack archives.
struct Entries<'a>(&'a ListDocument);

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.0;
        let mut seq = s.serialize_seq(Some(d.own.len() + d.filed.len()))?;
        for e in &d.own {
            seq.serialize_element(e)?;
        }
        for e in &d.filed {
            seq.serialize_element(e)?;
        }
        seq.end()
    }
}
