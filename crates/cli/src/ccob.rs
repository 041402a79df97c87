//! `offload-kit compress`, `decompress` and `verify`: compressed bundles.

use super::Input;
use offload_kit_format::source::Sub;
use offload_kit_format::{rules, Error};
use offload_kit_io::output;
use offload_kit_llvm::budget::Budget;
use offload_kit_llvm::bundle::ccob;
use offload_kit_llvm::detect;
use std::path::Path;

/// The compression method named on the command line (zstd unless zlib).
fn method_of(m: &str) -> ccob::Method {
    if m == "zlib" {
        ccob::Method::Zlib
    } else {
        ccob::Method::Zstd
    }
}

/// The uncompressed bytes of `data`: the bundle itself, or the verified
/// content of a single CCOB blob.
fn uncompressed(data: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, Vec<Error>> {
    if ccob::is_ccob(data) {
        let blobs = ccob::blobs(data, 0).map_err(|e| vec![e])?;
        if blobs.len() != 1 {
            return Err(vec![Error::other(format!(
                "the file holds {} compressed bundles; convert one at a time",
                blobs.len()
            ))]);
        }
        return Ok(ccob::decompress_strict(data, 0)
            .map_err(|e| vec![e])?
            .data
            .into());
    }
    Ok(data.into())
}

pub(super) fn compress_cmd(
    file: &Path,
    output: &Path,
    version: u16,
    method: &str,
    level: Option<i32>,
    threads: u32,
) -> Result<i32, Vec<Error>> {
    let input = Input::open(file).map_err(|e| vec![e])?;
    let bundle = uncompressed(input.bytes())?;
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

pub(super) fn decompress_cmd(file: &Path, output: &Path) -> Result<i32, Vec<Error>> {
    let input = Input::open(file).map_err(|e| vec![e])?;
    if !ccob::is_ccob(input.bytes()) {
        return Err(vec![Error::at(
            offload_kit_format::rules::CCOB_1,
            0,
            "not a compressed bundle",
        )]);
    }
    let bundle = uncompressed(input.bytes())?;
    output::write_file(output, &bundle).map_err(|e| vec![e])?;
    Ok(0)
}

pub(super) fn verify_cmd(file: &Path, budget: Budget) -> Result<i32, Vec<Error>> {
    let input = Input::open(file).map_err(|e| vec![e])?;
    let data = input.bytes();
    // A kpack archive: every blob decoded to its size (KPAK-3, KPAK-4).
    if offload_kit_format::kpack::is_kpack(data) {
        let a = offload_kit_inspect::validate_kpack(data, budget).map_err(Vec::from)?;
        let name = output::escape_controls(&file.to_string_lossy()).into_owned();
        outln!(
            "{name}: {} code object(s) of the kpack archive read to their sizes",
            a.kernels.len()
        );
        return Ok(0);
    }
    if !ccob::is_ccob(data) {
        // Compressed bundles inside (a .hip_fatbin, an archive member) are
        // verified as the strict reader lists them.
        let l = offload_kit_inspect::validate(&input, budget).map_err(Vec::from)?;
        // CCOBs, and compressed version 3 offload binaries (OB-19).
        let compressed: std::collections::BTreeSet<u64> = l
            .entries
            .iter()
            .filter_map(|e| {
                e.ccob_offset.or(e
                    .image
                    .as_ref()
                    .filter(|i| i.compressed)
                    .map(|i| i.binary_offset))
            })
            .collect();
        let name = output::escape_controls(&file.to_string_lossy()).into_owned();
        match compressed.len() {
            0 => outln!(
                "{name}: nothing to verify: nothing in it is compressed (a valid {} with {} entries)",
                l.container,
                l.entries.len()
            ),
            n => outln!(
                "{name}: {n} compressed bundle(s) or offload binaries verified (a valid {} with {} entries)",
                l.container,
                l.entries.len()
            ),
        }
        return Ok(0);
    }
    let blobs = ccob::blobs(data, 0).map_err(|e| vec![e])?;
    let mut errs = Vec::new();
    for b in &blobs {
        // Streamed: sizes and hash are checked as the stream decodes, and
        // nothing of the decompressed bundle is kept.
        let verified = Sub::new(&input, b.offset, b.len)
            .ok_or_else(|| Error::at(rules::CCOB_4, b.offset, "compressed bundle out of range"))
            .and_then(|blob| ccob::verify_prefix(&blob, b.offset, 0));
        match verified {
            Ok((h, _)) => outln!(
                "0x{:x}: CCOB v{} {:?}, {} -> {} bytes, hash 0x{:016x}: ok",
                b.offset,
                b.header.version,
                b.header.method().expect("checked"),
                b.len,
                h.uncompressed_size,
                b.header.hash_u64()
            ),
            Err(e) => errs.push(e),
        }
    }
    if errs.is_empty() {
        Ok(0)
    } else {
        Err(errs)
    }
}
