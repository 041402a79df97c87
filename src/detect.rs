//! Container detection and listing for the native CLI.
//!
//! `offload-kit list` and `extract` recognise the container by its magic
//! and list what is inside with absolute offsets.

use crate::bundle::binary::{self, Extent, LlvmView};
use crate::error::Error;
use crate::profile::Release;
use crate::rules;
use serde::Serialize;

/// The kind of container found at the start of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Container {
    /// `__CLANG_OFFLOAD_BUNDLE__` binary bundle.
    BinaryBundle,
}

impl Container {
    /// Stable name used in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Container::BinaryBundle => "binary-bundle",
        }
    }
}

/// Identify the container at the start of `data`.
pub fn detect(data: &[u8]) -> Option<Container> {
    if binary::is_binary_bundle(data) {
        return Some(Container::BinaryBundle);
    }
    None
}

/// One listed entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListedEntry {
    /// Bundle entry ID.
    pub id: String,
    /// Absolute offset of the payload in the input.
    pub offset: u64,
    /// Payload size.
    pub size: u64,
    /// Which bundle of the input holds it (0 for a single bundle).
    pub bundle: usize,
    /// The container holding the entry.
    pub container: &'static str,
}

/// A listing of an input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listing {
    /// The outer container.
    pub container: &'static str,
    /// How the input was read: `strict` or `llvm-N`.
    pub mode: String,
    /// Entries in the order the mode presents them.
    pub entries: Vec<ListedEntry>,
}

/// List `data`. With `release = None` the strict reader is used and every
/// violation is returned; with a release, entries appear as that release
/// sees them (its `-list` order), and only what it cannot read is an error.
pub fn list(data: &[u8], release: Option<Release>) -> Result<Listing, Vec<Error>> {
    let Some(c) = detect(data) else {
        return Err(vec![unknown_container(data)]);
    };
    match c {
        Container::BinaryBundle => {
            let entries: Vec<binary::Entry> = match release {
                None => binary::parse_strict(data, 0, Extent::Standalone)?.entries,
                Some(r) => match binary::llvm_read(data, 0, r) {
                    LlvmView::NoBundles => vec![],
                    LlvmView::Entries(e) => e,
                    LlvmView::Crash(e) => return Err(vec![e]),
                },
            };
            Ok(Listing {
                container: c.name(),
                mode: release.map_or("strict".into(), |r| format!("llvm-{r}")),
                entries: entries
                    .iter()
                    .map(|e| ListedEntry {
                        id: e.id_str().into_owned(),
                        offset: e.offset,
                        size: e.size,
                        bundle: 0,
                        container: c.name(),
                    })
                    .collect(),
            })
        }
    }
}

/// The error for an input no reader recognises.
pub fn unknown_container(data: &[u8]) -> Error {
    let head: String = data.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Error::at(
        rules::BIN_1,
        0,
        format!("no offload container recognised (first bytes: {head})"),
    )
}
