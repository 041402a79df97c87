//! `offload-kit list`: the entries of a container, as text, JSON or code
//! object URIs.

use crate::Input;
use crate::Settings;
use offload_kit_format::Error;
use offload_kit_inspect::list_doc;
use offload_kit_llvm::budget::Budget;
use offload_kit_llvm::detect::{self, Listing};
use offload_kit_llvm::Release;
use std::path::{Path, PathBuf};

/// `offload-kit list`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Input file.
    pub(crate) file: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
    /// Read as this LLVM release does (its -list order, its leniency) instead of strictly.
    #[arg(long = "llvm-version")]
    pub(crate) llvm: Option<Release>,
    /// Print each entry as `<id>TAB<code object URI>` (file://PATH#offset=N&size=M),
    /// as ROCm's tools and llvm-readobj-22 --offloading name code objects.
    #[arg(long, conflicts_with_all = ["json", "llvm"])]
    pub(crate) uri: bool,
}

/// Run it: the exit status, or the errors that make it exit 1.
pub(crate) fn run(a: Args, settings: Settings) -> Result<i32, Vec<Error>> {
    let budget = settings.budget;
    if a.uri {
        return list_uris(&a.file, budget);
    }
    if a.llvm == Some(Release::Main) {
        return Err(vec![Error::other(format!(
            "list --llvm-version takes {}: LLVM main is modelled for the drop-in bundler (offload-kit bundler --llvm-version=main -list)",
            Release::listed(", ", " or ")
        ))]);
    }
    list(&a.file, a.json, a.llvm, budget)
}

/// `s` with control characters escaped (`\n`, `\u{1b}`): untrusted names
/// and IDs must not forge lines or terminal escapes (OB-25).
fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().any(char::is_control) {
        s.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect::<String>()
            .into()
    } else {
        s.into()
    }
}

/// `l` as `list` prints it: a line per entry.
pub(crate) fn print_listing(l: &Listing) {
    let several_bundles = l.entries.iter().any(|x| x.bundle != 0);
    for e in &l.entries {
        let mut place = String::new();
        if let Some(m) = &e.member {
            let k = e.member_index.unwrap_or(0);
            place.push_str(&format!(" member #{k} {}", m.escape_debug()));
        }
        if let Some(sec) = &e.section {
            place.push_str(&format!(" in {}", shown(sec)));
        }
        if several_bundles {
            place.push_str(&format!(" bundle {}", e.bundle));
        }
        if let Some(c) = e.ccob_offset {
            place.push_str(&format!(
                " (compressed at 0x{c:x}; offset within the decompressed bundle)"
            ));
        }
        outln!(
            "{:<48} offset 0x{:x} size {}{place}",
            shown(&e.id),
            e.offset,
            e.size
        );
    }
}

/// `list --uri`: an entry per line, `<id>TAB<file URI>`; an entry inside a
/// compressed bundle has no range of the file, and shows `-`.
fn list_uris(file: &Path, budget: Budget) -> Result<i32, Vec<Error>> {
    let input = Input::open(file).map_err(|e| vec![e])?;
    let l = detect::list(&input, detect::ListOptions::new(None, budget))?;
    let mut inside_ccob = 0;
    for e in &l.entries {
        let compressed = e.ccob_offset.is_some() || e.image.as_ref().is_some_and(|i| i.compressed);
        if compressed {
            inside_ccob += 1;
            outln!("{}\t-", shown(&e.id));
        } else {
            outln!(
                "{}\t{}",
                shown(&e.id),
                offload_kit_format::uri::file_uri(file, e.offset, e.size)
            );
        }
    }
    if inside_ccob > 0 {
        eprintln!(
            "offload-kit: note: {inside_ccob} entries lie inside compressed bundles: no range of the file holds them ('-'); extract them with --bundle and --id"
        );
    }
    Ok(0)
}

fn list(file: &Path, json: bool, llvm: Option<Release>, budget: Budget) -> Result<i32, Vec<Error>> {
    let input = Input::open(file).map_err(|e| vec![e])?;
    let archive = crate::kpack::is_kpack(&input);
    // A split host's code objects are in its archives: listed after its
    // own entries, each at its blob in the archive named.
    let filed = match archive {
        true => Vec::new(),
        false => crate::kpack::host_entries(file, &input)?,
    };
    if json {
        let shown = file.to_string_lossy();
        let opts = detect::ListOptions::new(llvm, budget);
        let mut doc = list_doc::list_document(input.bytes(), opts, Some(&shown))?;
        doc.add_filed(&filed);
        // Through a value: its keys sorted, as every --json document's.
        let doc = serde_json::to_value(&doc).expect("serialisable");
        outln!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("serialisable")
        );
        return Ok(0);
    }
    if archive {
        return crate::kpack::list(&input);
    }
    let l = detect::list(&input, detect::ListOptions::new(llvm, budget))?;
    print_listing(&l);
    if let Some(note) = crate::kpack::host_note(&input) {
        outln!("{}", note.map_err(|e| vec![e])?);
        for f in &filed {
            outln!(
                "{}",
                crate::kpack::entry_line(&f.kernel, f.blob, Some(&f.archive))
            );
        }
    }
    Ok(0)
}
