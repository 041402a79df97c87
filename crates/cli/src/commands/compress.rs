//! `offload-kit compress`: a bundle into a compressed bundle (CCOB).

use crate::Input;
use crate::Settings;
use offload_kit_format::Error;
use offload_kit_io::output;
use offload_kit_llvm::bundle::ccob;
use offload_kit_llvm::detect;
use std::path::{Path, PathBuf};

/// `offload-kit compress`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Input bundle.
    pub(crate) file: PathBuf,
    /// Output file.
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// CCOB format version (1, 2 or 3).
    #[arg(long = "format-version", default_value_t = 3)]
    pub(crate) version: u16,
    #[command(flatten)]
    pub(crate) how: Compression,
}

/// Run it: the exit status, or the errors that make it exit 1.
pub(crate) fn run(a: Args, _: Settings) -> Result<i32, Vec<Error>> {
    compress(&a.file, &a.output, a.version, &a.how)
}

/// How `compress` and `convert` compress.
#[derive(clap::Args, Debug)]
pub(crate) struct Compression {
    /// Compression method (default zstd; with --to kpack: zstd per code object, as ROCm's
    /// pack_tree writes; without it, uncompressed as split_artifacts writes).
    #[arg(long, value_parser = ["zstd", "zlib"])]
    pub(crate) method: Option<String>,
    /// Compression level (default: 3 for zstd, 6 for zlib).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) level: Option<i32>,
    /// zstd worker threads (opt-in, faster; the bytes then differ from LLVM's).
    #[arg(long, default_value_t = 0)]
    pub(crate) threads: u32,
}

impl Compression {
    /// The method, zstd unless given.
    pub(crate) fn method(&self) -> &str {
        self.method.as_deref().unwrap_or("zstd")
    }

    /// How `convert --to kpack` stores code objects: zstd frames when a
    /// method or level is given (zlib and threads are refused by name),
    /// else uncompressed.
    pub(crate) fn kpack_storage(&self) -> Result<offload_kit_format::kpack::Storage, Error> {
        use offload_kit_format::kpack::Storage;
        if self.threads > 0 {
            return Err(Error::other(
                "convert --to kpack: --threads does not apply (each code object is one zstd frame)",
            ));
        }
        match (self.method.as_deref(), self.level) {
            (Some("zlib"), _) => Err(Error::other(
                "convert --to kpack: kpack archives are uncompressed or zstd-per-kernel; --method zlib is not a scheme ROCm reads",
            )),
            (None, None) => Ok(Storage::Plain),
            (_, level) => {
                let level = level.unwrap_or(3);
                if !(1..=22).contains(&level) {
                    return Err(Error::other(format!("convert --to kpack: zstd level {level} is not 1..22")));
                }
                Ok(Storage::Zstd(level))
            }
        }
    }
}

/// The compression method named on the command line (zstd unless zlib).
fn method_of(m: &str) -> ccob::Method {
    if m == "zlib" {
        ccob::Method::Zlib
    } else {
        ccob::Method::Zstd
    }
}

/// `file`, a bundle (or a compressed bundle, decompressed first), as a
/// compressed bundle of `version` into `output`, compressed as `how` says.
pub(crate) fn compress(
    file: &Path,
    output: &Path,
    version: u16,
    how: &Compression,
) -> Result<i32, Vec<Error>> {
    let (method, level, threads) = (how.method(), how.level, how.threads);
    let input = Input::open(file).map_err(|e| vec![e])?;
    let bundle = super::decompress::uncompressed(input.bytes())?;
    if !detect::is_bundle(&bundle) {
        use detect::Container as C;
        let what = match detect::detect(&bundle) {
            Some(C::Elf) => "an ELF file",
            Some(C::Coff) => "a COFF object or PE image",
            Some(C::OffloadBinary) => "an offload binary",
            Some(C::Archive) => "an archive",
            Some(C::CompressedBundle) => "already a compressed bundle",
            Some(C::OtherObject) => "an object file",
            _ => "no container",
        };
        eprintln!(
            "offload-kit: warning: the input is {what}, not a bundle (rule CCOB-9): what it compresses to breaks CCOB-9, and LLVM 22 lists nothing in it and cannot unbundle it; compressing it anyway"
        );
    }
    let m = method_of(method);
    let opts = ccob::WriteOptions {
        version,
        method: m,
        level: level.unwrap_or(m.default_level()),
    };
    let (header, payload) = ccob::compress_parts(&bundle, opts, threads).map_err(|e| vec![e])?;
    let mut o = output::OutputFile::create(output).map_err(|e| vec![e])?;
    std::io::Write::write_all(&mut o, &header)
        .and_then(|()| std::io::Write::write_all(&mut o, &payload))
        .map_err(|e| vec![Error::from(e)])?;
    o.commit().map_err(|e| vec![e])?;
    Ok(0)
}
