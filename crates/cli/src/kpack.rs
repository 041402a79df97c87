//! `list`, `validate` and `extract --all` of a kpack archive (spec/kpack.md).

use super::Input;
use offload_kit_format::kpack::{self, Archive};
use offload_kit_format::Error;
use offload_kit_inspect::kpack_archive::{scheme_name, target_for};
use offload_kit_inspect::kpack_split;
use offload_kit_io::output::{self, commit_all, OutputFile};
use offload_kit_llvm::budget::Budget;
use std::path::{Path, PathBuf};

/// Whether `input` is a kpack archive (it starts with `KPAK`).
pub(super) fn is_kpack(input: &Input) -> bool {
    kpack::is_kpack(input.bytes())
}

/// `list` (text; `--json` is the library's document): one line per
/// (kernel name, architecture) with its blob.
pub(super) fn list(input: &Input) -> Result<i32, Vec<Error>> {
    let a = kpack::parse(input.bytes()).map_err(|e| vec![e])?;
    for k in &a.kernels {
        outln!("{}", entry_line(k, a.blob(k), None));
    }
    Ok(0)
}

/// A kpack entry as `list` prints it.
pub(super) fn entry_line(
    k: &kpack::Kernel,
    (offset, size): (u64, u64),
    archive: Option<&Path>,
) -> String {
    let name = offload_kit_format::escape::escape_controls(&k.name);
    let arch = offload_kit_format::escape::escape_controls(&k.arch);
    let within = archive.map_or(String::new(), |p| {
        format!(
            " in '{}'",
            offload_kit_format::escape::escape_controls(&p.to_string_lossy())
        )
    });
    format!(
        "{name} {arch:<12} offset 0x{offset:x} size {size} (code object {} bytes){within}",
        k.original_size
    )
}

/// For a HIPK host, the code objects its archives file under its keys
/// (the archives its search paths name, else those of
/// `ROCM_KPACK_PATH`), listed, not decoded; empty for any other input.
pub(super) fn host_entries(
    file: &Path,
    input: &Input,
) -> Result<Vec<offload_kit_inspect::hipk::Filed>, Vec<Error>> {
    let Some(host) = super::hipk::host_ref(input.bytes()) else {
        return Ok(Vec::new());
    };
    // A malformed reference lists nothing more (the note says why).
    let Ok((r, indices)) = host else {
        return Ok(Vec::new());
    };
    let found = super::hipk::archives(file, &r, super::hipk::override_paths(None).as_deref());
    offload_kit_inspect::hipk::filed(&found, &r, &indices, &super::hipk::open)
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
pub(super) fn check(input: &Input, budget: Budget) -> Result<Archive, Vec<Error>> {
    offload_kit_inspect::validate_kpack(input.bytes(), budget)
        .map_err(|es| es.into_iter().collect())
}

/// `validate`: [`check`], and a warning for names the runtime cannot find.
pub(super) fn validate(file: &Path, input: &Input, budget: Budget) -> Result<i32, Vec<Error>> {
    let a = check(input, budget)?;
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
pub(super) fn extract_all(input: &Input, dir: &Path, budget: Budget) -> Result<i32, Vec<Error>> {
    let a = kpack::parse(input.bytes()).map_err(|e| vec![e])?;
    extract_kernels(input, &a, (None, dir), budget)
}

/// `extract --gpu G ARCHIVE`: the code objects the runtime would load for
/// G from this archive (the first target G takes that the archive holds,
/// in the runtime's order, HIPK-2), into `--dir`, or into `-o` when there
/// is one.
pub(super) fn extract_gpu(
    input: &Input,
    gpu: &str,
    output: Option<PathBuf>,
    dir: Option<PathBuf>,
    budget: Budget,
) -> Result<i32, Vec<Error>> {
    let g = offload_kit_inspect::check::Gpu::parse(gpu)
        .map_err(|e| vec![Error::other(format!("--gpu '{gpu}': {e}"))])?;
    let a = kpack::parse(input.bytes()).map_err(|e| vec![e])?;
    let Some(arch) = target_for(&g, |t| a.kernels.iter().any(|k| k.arch == t)) else {
        let mut archs: Vec<&str> = a.kernels.iter().map(|k| k.arch.as_str()).collect();
        archs.sort_unstable();
        archs.dedup();
        return Err(vec![Error::other(format!(
            "no code object for {gpu} in this kpack archive (it holds {}); nothing was written",
            archs.join(", ")
        ))]);
    };
    match (dir, output) {
        (Some(dir), _) => extract_kernels(input, &a, (Some(&arch), &dir), budget),
        (None, Some(out)) => {
            let picked: Vec<&kpack::Kernel> = a.kernels.iter().filter(|k| k.arch == arch).collect();
            let [k] = picked[..] else {
                return Err(vec![Error::other(format!(
                    "{} code objects for {arch} in this archive: give --dir to extract them all",
                    picked.len()
                ))]);
            };
            let code = a
                .code_object(input.bytes(), k, budget.bytes())
                .map_err(|e| vec![e])?;
            let mut o = OutputFile::create(&out).map_err(|e| vec![e])?;
            std::io::Write::write_all(&mut o, &code).map_err(|e| vec![e.into()])?;
            o.commit().map_err(|e| vec![e])?;
            Ok(0)
        }
        (None, None) => Err(vec![Error::other(
            "extract --gpu of a kpack archive writes into --dir or -o".to_string(),
        )]),
    }
}

/// Every code object of `a` (those of `arch` only, when given) into `dir`.
fn extract_kernels(
    input: &Input,
    a: &Archive,
    (arch, dir): (Option<&str>, &Path),
    budget: Budget,
) -> Result<i32, Vec<Error>> {
    let data = input.bytes();
    let limit = budget.bytes();
    let _out_dir = super::create_out_dir(dir)?;
    let mut outs = Vec::new();
    for (i, k) in a.kernels.iter().enumerate() {
        if arch.is_some_and(|want| k.arch != want) {
            continue;
        }
        let code = a.code_object(data, k, limit).map_err(|e| vec![e])?;
        // A name too long for a file system is cut and numbered.
        let name = super::fit_name(&format!("{}.{}.hsaco", k.name, k.arch), i);
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
        o.close().map_err(|e| vec![e])?;
        outs.push((path, o));
    }
    for (path, _) in &outs {
        outln!("{}", path.display());
    }
    commit_all(outs.into_iter().map(|o| o.1).collect()).map_err(|e| vec![e])?;
    Ok(0)
}

/// `convert --to kpack`: the code objects of a fat binary's device entries
/// as ROCm's `split_artifacts` files them (the library's
/// [`offload_kit_inspect::kpack_split`]): one archive per target ID,
/// `<prefix>_<target ID>.kpack` in `dir`, and for a host (a shared object
/// with HIP wrappers) the host rewritten beside them to find them there
/// (HIPK-3). Each archive is streamed to its file, then checked.
pub(super) fn split(
    file: &Path,
    dir: &Path,
    kernel: Option<&str>,
    prefix: Option<&str>,
    storage: kpack::Storage,
    budget: Budget,
) -> Result<i32, Vec<Error>> {
    let input = Input::open(file).map_err(|e| vec![e])?;
    let name = file
        .file_name()
        .map_or("a.out".into(), |n| n.to_string_lossy().into_owned());
    let opts = kpack_split::SplitOptions {
        name: &name,
        kernel,
        prefix,
        storage,
        budget,
    };
    // An error without a place in the file names the file.
    let shown = file.display().to_string();
    let plan = kpack_split::split(input.bytes(), &opts).map_err(|es| {
        (es.into_iter())
            .map(|e| match e.offset() {
                None => e.context(format!("in '{shown}'")),
                Some(_) => e,
            })
            .collect::<Vec<_>>()
    })?;
    let _out_dir = super::create_out_dir(dir)?;
    let mut files = Vec::new();
    let mut lines = Vec::new();
    for (i, a) in plan.archives().iter().enumerate() {
        let path = output::contained_path(dir, &a.name).map_err(|e| vec![e])?;
        let mut f = OutputFile::create_replacing(&path).map_err(|e| vec![e])?;
        write_archive(&mut f, &plan, i, budget)?;
        f.close().map_err(|e| vec![e])?;
        lines.push(format!(
            "{}: {} code object(s) for {}",
            path.display(),
            a.count(),
            a.arch
        ));
        files.push(f);
    }
    if let Some(host) = plan.host() {
        let host = host?;
        let path = output::contained_path(dir, &host.name).map_err(|e| vec![e])?;
        let mut f = OutputFile::create_replacing(&path).map_err(|e| vec![e])?;
        std::io::Write::write_all(&mut f, &host.bytes).map_err(|e| vec![Error::from(e)])?;
        lines.push(format!(
            "{}: HIPK host ({} of {} bytes), kernel '{}', archives '{}'",
            path.display(),
            host.bytes.len(),
            input.bytes().len(),
            host.reference.kernel_name,
            host.reference.search_paths[0]
        ));
        f.close().map_err(|e| vec![e])?;
        files.push(f);
    }
    commit_all(files).map_err(|e| vec![e])?;
    for l in lines {
        outln!("{l}");
    }
    Ok(0)
}

/// Write archive `i` of `plan` into `out`, then check what was written:
/// it must pass the strict check (two entries under one key, say, would
/// break KPAK-5).
fn write_archive(
    out: &mut OutputFile,
    plan: &kpack_split::Split<'_>,
    i: usize,
    budget: Budget,
) -> Result<(), Vec<Error>> {
    let one = |e: Error| vec![e];
    let io = |e: std::io::Error| vec![Error::from(e)];
    let shown = out.path().display().to_string();
    let file = out.file().ok_or_else(|| {
        one(Error::other(format!(
            "'{shown}': an archive is written to a file"
        )))
    })?;
    let written = plan.write_archive(i, std::io::BufWriter::new(&mut *file))?;
    written.into_inner().map_err(|e| io(e.into_error()))?;
    let len = file.metadata().map_err(io)?.len();
    let copy = file.try_clone().map_err(io)?;
    let archive = Input::mapped(copy, len, Path::new(&shown)).map_err(one)?;
    offload_kit_inspect::validate_kpack(archive.bytes(), budget).map_err(Vec::from)?;
    Ok(())
}

/// `convert --to bundle`: a kpack archive as one binary bundle
/// ([`kpack_split::join_archive`]), or a HIPK host made whole again
/// ([`kpack_split::join_host`]: each wrapper registering a bundle of its
/// code objects from every archive its search paths name), streamed to
/// the output one code object at a time.
pub(super) fn join(file: &Path, output_path: &Path, budget: Budget) -> Result<i32, Vec<Error>> {
    let input = Input::open(file).map_err(|e| vec![e])?;
    if let Some(host) = super::hipk::host_ref(input.bytes()) {
        let (r, _) = host?;
        let given = super::hipk::override_paths(None);
        let open = (
            &super::hipk::open as offload_kit_inspect::hipk::Open<'_>,
            budget,
        );
        let plan = kpack_split::join_host(file, input.bytes(), &r, given.as_deref(), open)?;
        let mut out = OutputFile::create(output_path).map_err(|e| vec![e])?;
        let done = plan.write(&mut out)?;
        out.commit().map_err(|e| vec![e])?;
        outln!(
            "{}: the host with {} bundle(s) of {} code object(s) from {} archive(s)",
            output_path.display(),
            done.bundles,
            done.code_objects,
            done.archives
        );
        return Ok(0);
    }
    let (bundle, count) = kpack_split::join_archive(input.bytes(), budget)?;
    output::write_file(output_path, &bundle).map_err(|e| vec![e])?;
    outln!(
        "{}: a bundle of {count} code object(s)",
        output_path.display(),
    );
    Ok(0)
}
