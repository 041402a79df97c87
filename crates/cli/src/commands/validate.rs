//! `offload-kit validate`: a file against every rule of spec/.

use crate::Input;
use crate::Settings;
use offload_kit_format::Error;
use offload_kit_llvm::budget::Budget;
use std::path::{Path, PathBuf};

/// `offload-kit validate`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Input file.
    pub(crate) file: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Run it: the exit status, or the errors that make it exit 1.
pub(crate) fn run(a: Args, settings: Settings) -> Result<i32, Vec<Error>> {
    validate(&a.file, a.json, settings.budget)
}

/// The `validate --json` document's schema name and version
/// (docs/schema/offload-kit-validate-1.schema.json).
const VALIDATE_SCHEMA: &str = "offload-kit-validate/1";

/// `validate FILE`: the file's listing, or every violation; with `json`,
/// one JSON document either way.
pub(crate) fn validate(file: &Path, json: bool, budget: Budget) -> Result<i32, Vec<Error>> {
    let input = Input::open(file).map_err(|e| vec![e])?;
    let kpack = crate::kpack::is_kpack(&input);
    if kpack && !json {
        return crate::kpack::validate(file, &input, budget);
    }
    let res = if kpack {
        crate::kpack::check(&input, budget).map(|_| None)
    } else {
        offload_kit_inspect::validate(&input, budget)
            .map(Some)
            .map_err(Vec::from)
    };
    if json {
        let v = match &res {
            Ok(l) => {
                let container = l.as_ref().map_or(serde_json::json!("kpack"), |l| {
                    serde_json::json!(l.container)
                });
                serde_json::json!({"schema": VALIDATE_SCHEMA, "file": file.to_string_lossy(), "valid": true, "container": container, "violations": []})
            }
            Err(es) => serde_json::json!({
                "schema": VALIDATE_SCHEMA,
                "file": file.to_string_lossy(),
                "valid": false,
                "violations": &es[..]
            }),
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&v).expect("serialisable")
        );
        return Ok(i32::from(res.is_err()));
    }
    match res {
        Ok(l) => {
            // A kpack archive was answered above; `l` is a listing here.
            if let Some(l) = l {
                outln!(
                    "{}: valid {} with {} entries",
                    file.display(),
                    l.container,
                    l.entries.len()
                );
            }
            Ok(0)
        }
        Err(es) => Err(es),
    }
}
