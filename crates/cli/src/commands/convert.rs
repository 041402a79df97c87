//! `offload-kit convert`: between uncompressed and compressed bundles, a
//! fat binary to kpack archives and a HIPK host, and back.

use crate::Settings;
use offload_kit_format::Error;
use std::path::PathBuf;

/// What `convert --to` takes: `none` (uncompressed), or `v` and a CCOB
/// version.
fn ccob_forms() -> clap::builder::PossibleValuesParser {
    let versions = offload_kit_format::raw::ccob::VERSIONS.map(|v| format!("v{v}"));
    let kpack = ["kpack".to_string(), "bundle".to_string()];
    let forms = std::iter::once("none".to_string())
        .chain(versions)
        .chain(kpack);
    clap::builder::PossibleValuesParser::new(forms)
}

/// `offload-kit convert`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Input bundle, CCOB file, fat binary or kpack archive.
    pub(crate) file: PathBuf,
    /// Target form.
    #[arg(long, value_parser = ccob_forms())]
    pub(crate) to: String,
    /// Output file (a directory with --to kpack).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// With --to kpack: the kernel name the archives file code objects under
    /// (`<name>#<wrapper index>`; default the input's file name), as the host's
    /// `.rocm_kpack_ref` names it.
    #[arg(long = "kernel-name")]
    pub(crate) kernel_name: Option<String>,
    /// With --to kpack: archives are named `<prefix>_<target ID>.kpack` (default the
    /// input's file name up to its first '.').
    #[arg(long)]
    pub(crate) prefix: Option<String>,
    #[command(flatten)]
    pub(crate) how: super::compress::Compression,
}

/// Run it: the exit status, or the errors that make it exit 1.
pub(crate) fn run(a: Args, settings: Settings) -> Result<i32, Vec<Error>> {
    let budget = settings.budget;
    let Args {
        file,
        to,
        output,
        how,
        kernel_name,
        prefix,
    } = a;
    match to.as_str() {
        "none" => super::decompress::decompress(&file, &output),
        "kpack" => {
            let storage = how.kpack_storage().map_err(|e| vec![e])?;
            let (kernel, prefix) = (kernel_name.as_deref(), prefix.as_deref());
            crate::kpack::split(&file, &output, kernel, prefix, storage, budget)
        }
        "bundle" if how.method.is_some() || how.level.is_some() || how.threads > 0 => {
            Err(vec![Error::other(
                "convert --to bundle writes an uncompressed fat binary: --method, --level and --threads do not apply",
            )])
        }
        "bundle" => crate::kpack::join(&file, &output, budget),
        v => {
            let version = v[1..].parse().expect("v1|v2|v3");
            super::compress::compress(&file, &output, version, &how)
        }
    }
}
