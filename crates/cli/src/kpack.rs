//! `list`, `validate` and `extract --all` of a kpack archive (spec/kpack.md).

use super::Input;
use offload_kit_format::host::elf::{hipk, Elf};
use offload_kit_format::kpack::{self, Archive, HostRef};
use offload_kit_format::{rules, Error};
use offload_kit_inspect::kpack_archive::{scheme_name, target_for};
use offload_kit_io::output::{self, commit_all, OutputFile};
use offload_kit_llvm::budget::Budget;
use std::path::{Path, PathBuf};

/// Whether `input` is a kpack archive (it starts with `KPAK`).
pub(super) fn is_kpack(input: &Input) -> bool {
    kpack::is_kpack(input.bytes())
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

/// The key an archive files a code object under, and the code object's
/// listing entry (read when its archive is written: never all at once).
type Filed = (String, usize);

/// `convert --to kpack`: the code objects of a fat binary's device entries
/// as ROCm's `split_artifacts` files them (spec/kpack.md): one plain
/// archive per target ID, `<prefix>_<target ID>.kpack` in `dir`, each code
/// object under `<kernel>#<index>` (the runtime's key). A host (a
/// shared object with HIP wrappers) is rewritten beside
/// them as a HIPK host finding them there (HIPK-3), the index being the
/// wrapper's that registers the code object's bundle; for anything else
/// the index is the bundle's number.
pub(super) fn split(
    file: &Path,
    dir: &Path,
    kernel: Option<&str>,
    prefix: Option<&str>,
    storage: kpack::Storage,
    budget: Budget,
) -> Result<i32, Vec<Error>> {
    use offload_kit_format::id::BundleEntryId;
    let input = Input::open(file).map_err(|e| vec![e])?;
    let data = input.bytes();
    let l = offload_kit_inspect::validate(&input, budget).map_err(Vec::from)?;
    let name = file
        .file_name()
        .map_or("a.out".into(), |n| n.to_string_lossy().into_owned());
    let kernel = kernel.map_or(name.clone(), str::to_string);
    let stem = name.split('.').next().unwrap_or("kpack").to_string();
    let prefix = prefix.map_or(stem, str::to_string);
    let wrappers = host_wrappers(data).map_err(|e| vec![e])?;
    // A wrapper registers the fat binary it points at: one pointing inside
    // a bundle would find nothing after the split (KERNEL_NOT_FOUND).
    for w in wrappers.iter().flatten() {
        let at = usize::try_from(w.target_offset).unwrap_or(usize::MAX);
        let starts = |m: &[u8]| data.get(at..).is_some_and(|d| d.starts_with(m));
        if !starts(offload_kit_format::raw::bundle::MAGIC)
            && !starts(offload_kit_format::raw::ccob::MAGIC)
        {
            return Err(vec![Error::at(
                rules::HIPK_3,
                w.target_offset,
                format!(
                    "wrapper {} points at 0x{:x}, which starts no bundle: the split would leave it without code objects",
                    w.index, w.target_offset
                ),
            )]);
        }
    }
    // Per target ID, its (kernel key, code object)s, in listing order.
    let mut by_arch: Vec<(String, Vec<Filed>)> = Vec::new();
    for (entry, e) in l.entries.iter().enumerate() {
        let Ok(id) = BundleEntryId::parse_strict(&e.id) else {
            continue;
        };
        let Some(arch) = id
            .parsed_target_id
            .as_ref()
            .map(|_| id.target_id.clone())
            .filter(|_| id.triple.is_amdgpu() || id.triple.arch == "amdgcn")
        else {
            continue;
        };
        let indices = match &wrappers {
            Some(ws) => wrappers_of(ws, e.ccob_offset.unwrap_or(e.offset)),
            None => vec![e.bundle as u64],
        };
        if indices.is_empty() {
            return Err(vec![Error::at(
                rules::HIPK_3,
                e.offset,
                format!("no wrapper registers the bundle of entry '{}'", e.id),
            )]);
        }
        let slot = match by_arch.iter().position(|(a, _)| *a == arch) {
            Some(i) => i,
            None => {
                by_arch.push((arch, Vec::new()));
                by_arch.len() - 1
            }
        };
        // Filed under each wrapper registering the bundle (a runtime asks
        // with any of their indices).
        for index in indices {
            by_arch[slot]
                .1
                .push((kpack::lookup_key(&kernel, index), entry));
        }
    }
    if by_arch.is_empty() {
        return Err(vec![Error::other(format!(
            "{}: no AMDGPU code object to split (a fat binary's device entries go to kpack archives)",
            file.display()
        ))]);
    }
    let _out_dir = super::create_out_dir(dir)?;
    let mut outs = Vec::new();
    for (arch, kernels) in &by_arch {
        let path =
            output::contained_path(dir, &format!("{prefix}_{arch}.kpack")).map_err(|e| vec![e])?;
        let mut f = OutputFile::create_replacing(&path).map_err(|e| vec![e])?;
        let code = |entry| offload_kit_llvm::detect::payload(data, &l.entries[entry], budget);
        write_archive(&mut f, (storage, budget), (&prefix, arch), kernels, code)?;
        f.close().map_err(|e| vec![e])?;
        outs.push((f, path, arch.clone(), kernels.len()));
    }
    let mut lines: Vec<String> = (outs.iter())
        .map(|(_, p, a, n)| format!("{}: {n} code object(s) for {a}", p.display()))
        .collect();
    let mut files: Vec<OutputFile> = outs.into_iter().map(|(f, ..)| f).collect();
    if wrappers.is_some() {
        let reference = HostRef {
            search_paths: vec![format!("{prefix}_@GFXARCH@.kpack")],
            kernel_name: kernel.clone(),
        };
        let host = hipk::rewrite(data, &reference).map_err(|e| vec![e])?;
        let path = output::contained_path(dir, &name).map_err(|e| vec![e])?;
        let mut f = OutputFile::create_replacing(&path).map_err(|e| vec![e])?;
        std::io::Write::write_all(&mut f, &host).map_err(|e| vec![Error::from(e)])?;
        lines.push(format!(
            "{}: HIPK host ({} of {} bytes), kernel '{kernel}', archives '{}'",
            path.display(),
            host.len(),
            data.len(),
            reference.search_paths[0]
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

/// Write the archive of `(group, arch)` holding `kernels` into `out`,
/// reading each code object with `code` as it is written (consecutive
/// keys filing one code object, as wrappers sharing a bundle do, read it
/// once), then check what was written: it must pass the strict check
/// (two entries under one key, say, would break KPAK-5).
fn write_archive<'d>(
    out: &mut OutputFile,
    (storage, budget): (kpack::Storage, Budget),
    (group, arch): (&str, &str),
    kernels: &[Filed],
    mut code: impl FnMut(usize) -> Result<std::borrow::Cow<'d, [u8]>, Error>,
) -> Result<(), Vec<Error>> {
    let one = |e: Error| vec![e];
    let io = |e: std::io::Error| vec![Error::from(e)];
    let shown = out.path().display().to_string();
    let file = out.file().ok_or_else(|| {
        one(Error::other(format!(
            "'{shown}': an archive is written to a file"
        )))
    })?;
    let mut w = kpack::Writer::new(std::io::BufWriter::new(&mut *file), storage, kernels.len())
        .map_err(io)?;
    let mut last: Option<(usize, std::borrow::Cow<'d, [u8]>)> = None;
    for (key, entry) in kernels {
        if last.as_ref().is_none_or(|(e, _)| e != entry) {
            drop(last.take()); // the previous code object goes before the next is read
            last = Some((*entry, code(*entry).map_err(one)?));
        }
        let bytes = last.as_ref().map_or(&[][..], |(_, c)| c.as_ref());
        w.add(key, arch, bytes).map_err(io)?;
    }
    drop(last);
    let written = w.finish(group, arch).map_err(io)?;
    written.into_inner().map_err(|e| io(e.into_error()))?;
    let len = file.metadata().map_err(io)?.len();
    let copy = file.try_clone().map_err(io)?;
    let archive = Input::mapped(copy, len, Path::new(&shown)).map_err(one)?;
    offload_kit_inspect::validate_kpack(archive.bytes(), budget).map_err(Vec::from)?;
    Ok(())
}

/// `convert --to bundle` of a HIPK host: the host made whole again
/// (HIPK-3, [`hipk::restore_layout`]), each wrapper registering a bundle
/// of its code objects from every archive its search paths name (an empty
/// host entry, then one `hipv4-amdgcn-amd-amdhsa--<arch>` entry per
/// architecture, in archive order). The bundles are laid out from the
/// archives' sizes and streamed to the output one code object at a time,
/// so a split library of any size takes one code object's memory.
fn join_host(
    file: &Path,
    input: &Input,
    r: &HostRef,
    output_path: &Path,
    budget: Budget,
) -> Result<i32, Vec<Error>> {
    let data = input.bytes();
    let wrappers = hipk::split_wrappers(data).map_err(|e| vec![e])?;
    let paths = super::hipk::archives(file, r, super::hipk::override_paths(None).as_deref());
    let mut archives = Vec::new();
    for p in &paths {
        let input = Input::open(p).map_err(|e| vec![e])?;
        let a = check(&input, budget)?;
        archives.push((input, a));
    }
    let host_id: &[u8] = match offload_kit_format::host::elf::Elf::parse(data).map(|e| e.machine) {
        Ok(183) => b"host-aarch64-unknown-linux-gnu-",
        _ => b"host-x86_64-unknown-linux-gnu-",
    };
    // Per wrapper, its bundle's layout and the (archive, kernel) of each
    // device entry; the fat binaries laid out as restore() lays them out.
    let (mut bundles, mut targets, mut payload_len) = (Vec::new(), Vec::new(), 0u64);
    for w in &wrappers {
        let key = kpack::lookup_key(&r.kernel_name, w.index);
        let mut ids: Vec<Vec<u8>> = Vec::new();
        let mut sources = Vec::new();
        for (ai, (_, a)) in archives.iter().enumerate() {
            for k in a.kernels.iter().filter(|k| k.name == key) {
                let id = format!("hipv4-amdgcn-amd-amdhsa--{}", k.arch).into_bytes();
                if ids.contains(&id) {
                    return Err(vec![Error::other(format!(
                        "a second code object for {} under '{key}'",
                        k.arch
                    ))]);
                }
                ids.push(id);
                sources.push((ai, k, k.original_size));
            }
        }
        if sources.is_empty() {
            return Err(vec![Error::at(
                rules::HIPK_2,
                0,
                format!("no archive of {} holds '{key}'", archives.len()),
            )]);
        }
        let mut sized: Vec<(&[u8], u64)> = vec![(host_id, 0)];
        sized.extend(ids.iter().zip(&sources).map(|(i, s)| (i.as_slice(), s.2)));
        let layout = offload_kit_format::binary::layout(&sized, 4096).map_err(|e| vec![e])?;
        let at = payload_len.next_multiple_of(hipk::FATBIN_ALIGN);
        payload_len = at.checked_add(layout.total).ok_or_else(|| {
            vec![Error::rule(
                rules::BIN_11,
                "the fat binaries exceed 2^64 bytes",
            )]
        })?;
        targets.push(at);
        bundles.push((at, layout, sources));
    }
    let host = hipk::restore_layout(data, payload_len, &targets).map_err(|e| vec![e])?;
    let limit = budget.bytes();
    let mut out = OutputFile::create(output_path).map_err(|e| vec![e])?;
    let io = |e: std::io::Error| vec![Error::from(e)];
    std::io::Write::write_all(&mut out, &host.head).map_err(io)?;
    let (mut pos, mut objects) = (0u64, 0);
    // A code object that cannot be read stops the copy; its error, not
    // the I/O error that carries it out of the writer, is the answer.
    let mut failed: Option<Error> = None;
    for (at, layout, sources) in &bundles {
        output::write_zeros(&mut out, at - pos).map_err(io)?;
        let written = layout.write(&mut out, |i, w| {
            if i == 0 {
                return Ok(());
            }
            let (ai, k, _) = sources[i - 1];
            let (input, a) = &archives[ai];
            match a.code_object(input.bytes(), k, limit) {
                Ok(code) => std::io::Write::write_all(w, &code),
                Err(e) => {
                    failed = Some(e);
                    Err(std::io::Error::other("code object"))
                }
            }
        });
        if let Some(e) = failed.take() {
            return Err(vec![e]);
        }
        written.map_err(io)?;
        objects += sources.len();
        pos = at + layout.total;
    }
    std::io::Write::write_all(&mut out, &host.tail).map_err(io)?;
    out.commit().map_err(|e| vec![e])?;
    outln!(
        "{}: the host with {} bundle(s) of {objects} code object(s) from {} archive(s)",
        output_path.display(),
        targets.len(),
        archives.len()
    );
    Ok(0)
}

/// The wrappers of `data` if it is a HIP host to rewrite (an executable or
/// shared object with a `.hipFatBinSegment`); `None` for other inputs.
fn host_wrappers(data: &[u8]) -> Result<Option<Vec<hipk::Wrapper>>, Error> {
    let Ok(elf) = Elf::parse(data) else {
        return Ok(None);
    };
    if !matches!(elf.e_type, 2 | 3) || elf.section_by_name(kpack::WRAPPER_SECTION).is_none() {
        return Ok(None);
    }
    hipk::wrappers(data).map(Some)
}

/// The indices of the wrappers registering the bundle that holds file
/// position `at`: those whose fat binary starts last at or before it.
fn wrappers_of(wrappers: &[hipk::Wrapper], at: u64) -> Vec<u64> {
    let start = (wrappers.iter())
        .map(|w| w.target_offset)
        .filter(|&t| t <= at)
        .max();
    (wrappers.iter())
        .filter(|w| Some(w.target_offset) == start)
        .map(|w| w.index)
        .collect()
}

/// `convert --to bundle` of a kpack archive: a binary bundle (alignment
/// 4096, as clang writes `.hip_fatbin` bundles) of an empty host entry and
/// one `hipv4-amdgcn-amd-amdhsa--<arch>` entry per code object, the code
/// objects byte for byte as the archive holds them.
pub(super) fn join(file: &Path, output_path: &Path, budget: Budget) -> Result<i32, Vec<Error>> {
    let input = Input::open(file).map_err(|e| vec![e])?;
    if let Some(host) = super::hipk::host_ref(input.bytes()) {
        let (r, _) = host?;
        return join_host(file, &input, &r, output_path, budget);
    }
    let a = check(&input, budget)?;
    let data = input.bytes();
    // The code objects are held, and the bundle made of them: half the
    // budget each, counted over every code object, not per frame (a 50 KB
    // archive of frames claiming 128 MiB each once took 1.6 GB).
    let room = budget.bytes() / 2;
    let mut held = 0u64;
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> =
        vec![(b"host-x86_64-unknown-linux-gnu-".to_vec(), Vec::new())];
    for k in &a.kernels {
        let id = format!("hipv4-amdgcn-amd-amdhsa--{}", k.arch).into_bytes();
        if entries.iter().any(|(i, _)| *i == id) {
            return Err(vec![Error::other(format!(
                "two code objects for {} (kernels filed under several names): one bundle holds one per target",
                k.arch
            ))]);
        }
        if held.saturating_add(k.original_size) > room {
            return Err(vec![Error::rule(
                offload_kit_format::rules::CLI_6,
                format!(
                    "the code objects up to '{}' {} hold over {room} bytes, half the memory budget (--max-memory)",
                    k.name.escape_debug(),
                    k.arch.escape_debug()
                ),
            )]);
        }
        let code = a
            .code_object(
                data,
                k,
                room - held + offload_kit_format::kpack::ZSTD_WINDOW,
            )
            .map_err(|e| vec![e])?;
        held += code.len() as u64;
        entries.push((id, code.into_owned()));
    }
    let refs: Vec<(&[u8], &[u8])> = entries
        .iter()
        .map(|(i, c)| (i.as_slice(), c.as_slice()))
        .collect();
    let bundle = offload_kit_format::binary::write_to_vec(&refs, 4096).map_err(|e| vec![e])?;
    output::write_file(output_path, &bundle).map_err(|e| vec![e])?;
    outln!(
        "{}: a bundle of {} code object(s)",
        output_path.display(),
        entries.len() - 1
    );
    Ok(0)
}
