//! `offload-kit extract`: entries by ID, index or GPU, into a directory or
//! standard output, from bundles, archives and code object URIs.

use crate::{copy_range, Input};
use offload_kit_format::kpack::HostRef;
use offload_kit_format::{rules, Error};
use offload_kit_io::output::{self, commit_all, OutputFile};
use offload_kit_llvm::budget::Budget;
use offload_kit_llvm::bundle::{ccob, object};
use offload_kit_llvm::detect;
use std::path::{Path, PathBuf};

/// Where an entry is: archive member index, bundle number, ID.
type EntryPlace = (Option<usize>, usize, String);

/// The entries `check --gpu` picks in `input`, as (member index, bundle,
/// ID); an error naming the bundles where none fits.
fn picked_for(input: &Input, gpu: &str, budget: Budget) -> Result<Vec<EntryPlace>, Vec<Error>> {
    use offload_kit_inspect::{self as inspect, check};
    let g =
        check::Gpu::parse(gpu).map_err(|e| vec![Error::other(format!("--gpu '{gpu}': {e}"))])?;
    let opts = inspect::Options {
        strict: true,
        budget,
    };
    let report = inspect::inspect_with(input, opts)?;
    let v = check::check(&report, &g);
    let missing: Vec<String> = v
        .bundles
        .iter()
        .filter_map(|b| Some(format!("bundle {}: {}", b.bundle, b.trouble()?)))
        .collect();
    if !missing.is_empty() || v.bundles.is_empty() {
        let why = if v.bundles.is_empty() {
            "no device code object at all".to_string()
        } else {
            missing.join("; ")
        };
        return Err(vec![Error::other(format!(
            "no code object for {gpu} in every bundle ({why}); nothing was written"
        ))]);
    }
    Ok(v.bundles
        .into_iter()
        .filter_map(|b| Some((b.member_index, b.bundle, b.entry?)))
        .collect())
}

/// `offload-kit extract`'s options.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct Args {
    /// Input file, or a code object URI.
    pub(crate) file: PathBuf,
    /// Entry ID to extract, or a target ID alone (gfx90a:xnack+: the entries whose
    /// target ID is exactly it); with --dir, from every bundle.
    #[arg(long, conflicts_with = "gpu")]
    pub(crate) id: Option<String>,
    /// Output file (with --id, or --gpu on a file of one bundle).
    #[arg(short, long, required_unless_present_any = ["all", "dir"])]
    pub(crate) output: Option<PathBuf>,
    /// Extract every entry into --dir, one file per entry ID (with the
    /// bundle's number first, `<k>.<id>`, when the file holds several).
    #[arg(long, requires = "dir")]
    pub(crate) all: bool,
    /// Directory for --all or --gpu.
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
    /// The code object the HIP runtime would load on this GPU, from each
    /// bundle (as `check --gpu` picks it), or from a kpack archive the
    /// code objects of the target it would take: into --dir, or -o for one.
    #[arg(long, conflicts_with = "all")]
    pub(crate) gpu: Option<String>,
    /// For a HIPK host (ROCm kpack split): the archives to search, `:`-separated, in place
    /// of the host's search paths (as ROCM_KPACK_PATH, which is read when this is absent).
    #[arg(long = "kpack-path", requires = "gpu")]
    pub(crate) kpack_path: Option<String>,
    /// Only entries of the k-th bundle (as `list` numbers them; a
    /// `.hip_fatbin` holds several).
    #[arg(long)]
    pub(crate) bundle: Option<usize>,
    /// Only entries of this archive member (as `list` names it).
    #[arg(long)]
    pub(crate) member: Option<String>,
    /// Only entries of the archive member at this position (from 0, as
    /// `list` numbers them): reaches each of several members of one name.
    #[arg(long = "member-index")]
    pub(crate) member_index: Option<usize>,
}

impl Args {
    /// Whether `--bundle`, `--member` and `--member-index` admit `e`.
    fn admits(&self, e: &detect::ListedEntry) -> bool {
        self.bundle.is_none_or(|k| e.bundle == k)
            && self
                .member
                .as_deref()
                .is_none_or(|m| e.member.as_deref() == Some(m))
            && self.member_index.is_none_or(|k| e.member_index == Some(k))
    }
}

/// Run `extract`: a code object URI, else entries of the file.
pub(crate) fn run(a: Args, settings: crate::Settings) -> Result<i32, Vec<Error>> {
    if is_uri(&a.file) {
        let Some(out) = &a.output else {
            return Err(vec![Error::other(
                "extracting a code object URI needs -o FILE",
            )]);
        };
        return extract_uri(&a.file.to_string_lossy(), out);
    }
    if a.id.is_none() && !a.all && a.gpu.is_none() {
        // Nothing to choose by: clap's usage error, exit 2.
        use clap::Args as _;
        Args::augment_args(clap::Command::new("offload-kit extract"))
            .error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "extract needs --id ID -o FILE, --all --dir DIR, --gpu G, or a code object URI with -o FILE",
            )
            .exit();
    }
    extract(&a, settings.budget)
}

/// A `scheme://` argument that is not an existing file is read as a code
/// object URI (an unknown scheme then fails URI-1).
fn is_uri(file: &Path) -> bool {
    let f = file.to_string_lossy();
    f.starts_with("file://")
        || f.starts_with("memory://")
        || (!file.exists()
            && f.split_once("://").is_some_and(|(scheme, _)| {
                !scheme.is_empty()
                    && scheme
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
            }))
}

/// `extract URI -o F`: the bytes a `file://` URI names.
fn extract_uri(text: &str, out: &Path) -> Result<i32, Vec<Error>> {
    use offload_kit_format::uri::{self, CodeObjectUri};
    match uri::parse(text).map_err(|e| vec![e])? {
        CodeObjectUri::Memory { pid, .. } => Err(vec![Error::other(format!(
            "'{text}' names memory of process {pid}: read it with a debugger (rocgdb), not from a file"
        ))]),
        CodeObjectUri::File { path, offset, size } => {
            let input = Input::open(&path).map_err(|e| vec![e])?;
            let len = input.bytes().len() as u64;
            let size = size.unwrap_or(len.saturating_sub(offset));
            if offset.checked_add(size).is_none_or(|end| end > len) {
                return Err(vec![Error::rule(
                    offload_kit_format::rules::URI_4,
                    format!(
                        "'{text}': bytes {offset}..{} lie past the end of '{}' ({len} bytes)",
                        offset.saturating_add(size),
                        path.display()
                    ),
                )]);
            }
            let mut o = OutputFile::create(out).map_err(|e| vec![e])?;
            copy_range(&input, offset, size, &mut o).map_err(|e| vec![e])?;
            o.commit().map_err(|e| vec![e])?;
            Ok(0)
        }
    }
}

/// `extract` of the entries `a` names, holding at most `budget`.
pub(crate) fn extract(a: &Args, budget: Budget) -> Result<i32, Vec<Error>> {
    let (file, id, output, all, dir) = (&a.file, &a.id, a.output.clone(), a.all, a.dir.clone());
    let gpu = a.gpu.as_deref();
    let input = Input::open(file).map_err(|e| vec![e])?;
    // A HIPK host: the code object ROCm's runtime finds in its archives.
    if let Some(host) = crate::hipk::host_ref(input.bytes()) {
        let given = crate::hipk::override_paths(a.kpack_path.as_deref());
        if let Some(g) = gpu {
            let (r, indices) = host?;
            return hipk_gpu(
                file,
                (&r, &indices),
                (g, given.as_deref()),
                (output, dir),
                budget,
            );
        }
        if let (true, Some(dir)) = (all, dir.as_deref()) {
            let (r, indices) = host?;
            return hipk_all(file, (&r, &indices), given.as_deref(), dir, budget);
        }
    }
    if let (true, Some(dir)) = (
        crate::kpack::is_kpack(&input),
        dir.as_deref().filter(|_| all),
    ) {
        return crate::kpack::extract_all(&input, dir, budget);
    }
    if let (true, Some(g)) = (crate::kpack::is_kpack(&input), gpu) {
        return crate::kpack::extract_gpu(&input, g, output, dir, budget);
    }
    // A file that is one compressed bundle: every entry lies in it, and
    // extracting one verifies the whole stream (sizes, hash) as it goes, so
    // the listing need not decode and verify it first.
    let one_blob =
        ccob::is_ccob(input.bytes()) && ccob::blobs(input.bytes(), 0).is_ok_and(|b| b.len() == 1);
    let opts = detect::ListOptions {
        release: None,
        defer_ccob_verification: one_blob,
        budget,
    };
    let mut l = detect::list(&input, opts)?;
    let several_bundles = l.entries.iter().any(|e| e.bundle != 0);
    l.entries.retain(|e| a.admits(e));
    if let Some(g) = gpu {
        let chosen = picked_for(&input, g, budget)?;
        l.entries
            .retain(|e| chosen.contains(&(e.member_index, e.bundle, e.id.clone())));
    }
    // --id: an entry ID, or a target ID alone (`gfx90a:xnack+`: the entries
    // whose target ID is exactly it, of any offload kind).
    // Whether `--id` is a whole entry ID (only equal IDs match), told once.
    let whole_id = id
        .as_deref()
        .is_some_and(|i| offload_kit_format::id::BundleEntryId::parse_strict(i).is_ok());
    let wanted = |e: &detect::ListedEntry| {
        id.as_deref()
            .is_none_or(|i| e.id == i || (!whole_id && has_target_id(&e.id, i)))
    };
    if let Some(i) = id.as_deref() {
        if !l.entries.iter().any(&wanted) {
            let mut seen = std::collections::HashSet::new();
            let known: Vec<&str> = l
                .entries
                .iter()
                .map(|e| e.id.as_str())
                .filter(|k| seen.insert(*k))
                .collect();
            return Err(vec![Error::other(format!(
                "no entry with ID or target ID '{i}' (entries: {})",
                known.join(", ")
            ))]);
        }
    }
    if id.is_some() && dir.is_some() {
        l.entries.retain(|e| wanted(e));
    }
    let mut jobs = Vec::new();
    let mut _out_dir = None;
    // Names made from entry IDs go into a directory: never through a link.
    let into_dir = all || dir.is_some();
    if let (Some(_), Some(out), true) = (gpu, &output, dir.is_none()) {
        // One bundle's pick to the file named.
        if l.entries.len() != 1 {
            return Err(vec![Error::other(format!(
                "{} bundles hold a code object for {}: give --dir to extract them all",
                l.entries.len(),
                gpu.unwrap_or_default()
            ))]);
        }
        jobs.push((l.entries[0].clone(), out.clone()));
    } else if into_dir {
        let dir = dir.clone().expect("clap requires --dir");
        let (made, j) = jobs_into_dir(&l.entries, &dir, several_bundles)?;
        // Held until the outputs are committed: a failed run takes it back.
        _out_dir = Some(made);
        jobs = j;
    } else {
        let id = id.clone().expect("clap requires --id");
        jobs.push(one_entry_job(&l, &id, &wanted, output)?);
    }
    let mut staged = Vec::new();
    for (e, path) in jobs {
        // Names made from entry IDs never follow a link planted in the
        // directory; an output the user named is written as LLVM would.
        let o = if into_dir {
            OutputFile::create_replacing(&path)
        } else {
            OutputFile::create(&path)
        };
        let mut o = o.map_err(|e| vec![e.with_rule_if_none(offload_kit_format::rules::CLI_5)])?;
        write_entry(&input, &e, &mut o, budget)?;
        // At most output::KEEP_OPEN files held open, however many entries (ulimit -n).
        o.close().map_err(|e| vec![e])?;
        staged.push(o);
    }
    let written = staged.len();
    output::commit_all(staged)
        .map_err(|e| vec![e.with_rule_if_none(offload_kit_format::rules::CLI_5)])?;
    if let (true, Some(d)) = (into_dir, &dir) {
        eprintln!(
            "offload-kit: wrote {written} file(s) into '{}'",
            output::escape_controls(&d.display().to_string())
        );
    }
    Ok(0)
}

/// `--id ID -o FILE`: the one entry `wanted` admits; when several bundles
/// or archive members hold it, an error that says which and how to choose.
fn one_entry_job(
    l: &detect::Listing,
    id: &str,
    wanted: &dyn Fn(&detect::ListedEntry) -> bool,
    output: Option<PathBuf>,
) -> Result<(detect::ListedEntry, PathBuf), Vec<Error>> {
    let matching: Vec<usize> = l
        .entries
        .iter()
        .filter(|e| wanted(e))
        .map(|e| e.bundle)
        .collect();
    if matching.len() > 1 && l.container == detect::Container::Archive {
        let places: Vec<String> = l
            .entries
            .iter()
            .filter(|e| wanted(e))
            .map(|e| {
                format!(
                    "member #{} '{}' bundle {}",
                    e.member_index.unwrap_or(0),
                    e.member.as_deref().unwrap_or("").escape_debug(),
                    e.bundle
                )
            })
            .collect();
        return Err(vec![Error::other(format!(
            "'{id}' is in {}: choose one with --member-index (or --member) and --bundle",
            places.join(", ")
        ))]);
    }
    if matching.len() > 1 {
        let bundles = if matching.windows(2).all(|w| w[0] == w[1]) {
            format!("{} entries of bundle {}", matching.len(), matching[0])
        } else if matching.len() > 8 {
            format!(
                "{} bundles ({}, {}, ... {})",
                matching.len(),
                matching[0],
                matching[1],
                matching[matching.len() - 1]
            )
        } else {
            format!("bundles {matching:?}")
        };
        return Err(vec![Error::other(format!(
            "'{id}' is in {bundles}: give --dir DIR to extract them all, or choose one with --bundle"
        ))]);
    }
    let Some(e) = l.entries.iter().find(|e| wanted(e)) else {
        unreachable!("an entry matches: checked above");
    };
    let Some(out) = output else {
        return Err(vec![Error::other(
            "--id needs -o FILE (or use --all --dir)",
        )]);
    };
    Ok((e.clone(), out))
}

/// `--all --dir DIR`: a file in `dir` per entry, named after it (its
/// member's name first in an archive, its bundle's number first in a file
/// of several bundles), each name unique and inside `dir` (CLI-5).
type Jobs = Vec<(detect::ListedEntry, PathBuf)>;

fn jobs_into_dir(
    entries: &[detect::ListedEntry],
    dir: &Path,
    several_bundles: bool,
) -> Result<(crate::OutDir, Jobs), Vec<Error>> {
    let mut jobs = Vec::new();
    if dir.exists() && !dir.is_dir() {
        return Err(vec![Error::rule(
            offload_kit_format::rules::CLI_5,
            format!("'{}': not a directory (--dir)", dir.display()),
        )]);
    }
    let out_dir = crate::create_out_dir(dir)?;
    // Names stay unique, also on case-insensitive file systems: a name
    // already taken (two archive members of one name, `sm_70` and
    // `SM_70`) gets the entry's number appended, and a name too long for
    // a file system (255 bytes) is cut and numbered.
    let mut seen = std::collections::BTreeSet::new();
    for (i, e) in entries.iter().enumerate() {
        // In an archive: the member's name, then the entry ID; in a
        // file of several bundles, the bundle's number first, as LLVM
        // 22's `llvm-objdump --offloading` names its files.
        let name = match &e.member {
            Some(m) => format!("{m}-{}", e.id),
            None if several_bundles => format!("{}.{}", e.bundle, e.id),
            None => e.id.clone(),
        };
        let mut path =
            output::contained_path(dir, &crate::fit_name(&name, i)).map_err(|e| vec![e])?;
        if !seen.insert(path.to_string_lossy().to_lowercase()) {
            path = output::contained_path(dir, &crate::fit_name(&format!("{name}-{i}"), i))
                .map_err(|e| vec![e])?;
            if !seen.insert(path.to_string_lossy().to_lowercase()) {
                return Err(vec![Error::rule(
                    offload_kit_format::rules::CLI_5,
                    format!("entry {i} would be written to '{}' twice", path.display()),
                )]);
            }
        }
        jobs.push((e.clone(), path));
    }
    Ok((out_dir, jobs))
}

/// The bytes of entry `e` of `input` into `o`: decoded from a compressed
/// image, stripped of its bundle sections for a fat object's host entry,
/// streamed from a compressed bundle, or copied.
fn write_entry(
    input: &Input,
    e: &detect::ListedEntry,
    o: &mut OutputFile,
    budget: Budget,
) -> Result<(), Vec<Error>> {
    if let Some(img) = e.image.as_ref().filter(|i| i.compressed) {
        let bytes = detect::image_bytes(input.bytes(), img, budget)?;
        std::io::Write::write_all(o, &bytes).map_err(|e| vec![e.into()])?;
    } else if e.container == detect::EntryContainer::ObjectBundle && e.id.starts_with("host-") {
        // The host entry of a fat object is the object without its
        // bundle sections (OBJ-11), as LLVM 19/22 unbundle it; its
        // section only holds the one-byte host marker.
        let data = input.bytes();
        let (start, len) =
            detect::archive_member_at(data, e.offset).unwrap_or((0, data.len() as u64));
        let elf = &data[start as usize..(start + len) as usize];
        let host = object::strip(elf).map_err(|err| vec![err])?;
        std::io::Write::write_all(o, &host).map_err(|e| vec![e.into()])?;
    } else if let Some(at) = e.ccob_offset {
        // Streamed: verified as a whole, only the entry's bytes kept.
        let blob = detect::ccob_blob(input, at).map_err(|e| vec![e])?;
        ccob::extract_range(&blob, at, e.offset, e.size, o).map_err(|e| vec![e])?;
    } else {
        copy_range(input, e.offset, e.size, o).map_err(|e| vec![e])?;
    }
    Ok(())
}

/// Whether the entry ID `entry` has exactly the target ID `target`.
fn has_target_id(entry: &str, target: &str) -> bool {
    offload_kit_format::id::BundleEntryId::parse_strict(entry)
        .is_ok_and(|id| !id.target_id.is_empty() && id.target_id == target)
}

/// `extract --gpu` of a HIPK host (the library's lookup, `offload_kit_inspect::hipk`): the code object the runtime finds for
/// each wrapper, to `output` (one wrapper) or into `dir` as `<arch>.hsaco`
/// (`<arch>.<index>.hsaco` for several); the runtime's error when it finds
/// none for some wrapper.
pub(crate) fn hipk_gpu(
    host: &Path,
    (r, indices): (&HostRef, &[u64]),
    (gpu, given): (&str, Option<&[PathBuf]>),
    (output, dir): (Option<PathBuf>, Option<PathBuf>),
    budget: Budget,
) -> Result<i32, Vec<Error>> {
    let parsed = offload_kit_inspect::check::Gpu::parse(gpu)
        .map_err(|e| vec![Error::other(format!("--gpu '{gpu}': {e}"))])?;
    // The first mode of the GPU in which every wrapper finds its code
    // object (a name without feature settings stands for each).
    let modes = parsed.modes();
    let isa = (modes.iter())
        .map(|m| m.text.as_str())
        .find(|m| {
            let finder = crate::hipk::Finder::new(host, r, m, given, (&crate::hipk::open, budget));
            (indices.iter()).all(|&i| matches!(finder.locate(r, i), crate::hipk::Located::At(..)))
        })
        .unwrap_or(modes[0].text.as_str());
    let finder = crate::hipk::Finder::new(host, r, isa, given, (&crate::hipk::open, budget));
    // Taken back, if still empty, when the run fails.
    let _out_dir = match &dir {
        Some(d) => Some(crate::create_out_dir(d)?),
        None => None,
    };
    let mut writes = Vec::new();
    for &index in indices {
        let found = finder.find(r, index)?;
        let crate::hipk::Outcome::Found { arch, .. } = &found else {
            return Err(vec![Error::at(
                rules::HIPK_2,
                0,
                format!("no code object for {gpu}: {}", found.describe()),
            )]);
        };
        let path = match (&output, &dir) {
            (Some(o), None) if indices.len() == 1 => o.clone(),
            (_, Some(d)) => {
                let arch = arch.replace([':', '/'], "_");
                let name = match indices.len() {
                    1 => format!("{arch}.hsaco"),
                    _ => format!("{arch}.{index}.hsaco"),
                };
                offload_kit_io::output::contained_path(d, &name).map_err(|e| vec![e])?
            }
            (Some(_), None) => {
                return Err(vec![Error::other(format!(
                    "the host has {} wrappers, each with its code object: extract --gpu needs --dir DIR",
                    indices.len()
                ))])
            }
            (None, None) => {
                return Err(vec![Error::other(
                    "extract --gpu needs -o FILE or --dir DIR",
                )])
            }
        };
        writes.push((path, found));
    }
    let mut files = Vec::new();
    for (path, found) in &writes {
        let crate::hipk::Outcome::Found { code, .. } = found else {
            continue;
        };
        let mut f = OutputFile::create_replacing(path).map_err(|e| vec![e])?;
        std::io::Write::write_all(&mut f, code).map_err(|e| vec![Error::from(e)])?;
        f.close().map_err(|e| vec![e])?;
        files.push(f);
    }
    commit_all(files).map_err(|e| vec![e])?;
    for (path, found) in &writes {
        outln!("{}: {}", path.display(), found.describe());
    }
    Ok(0)
}

/// `extract --all --dir DIR` of a HIPK host: every code object its keys
/// name in its archives (every architecture), as `<key>.<arch>.hsaco`.
pub(crate) fn hipk_all(
    host: &Path,
    (r, indices): (&HostRef, &[u64]),
    given: Option<&[PathBuf]>,
    dir: &Path,
    budget: Budget,
) -> Result<i32, Vec<Error>> {
    let found = crate::hipk::archives(host, r, given);
    if found.is_empty() {
        return Err(vec![Error::at(
            rules::HIPK_2,
            0,
            format!(
                "ARCHIVE_NOT_FOUND: no archive matches {}",
                crate::hipk::few(
                    (r.search_paths.iter())
                        .map(|p| offload_kit_format::escape::escape_controls(p).into_owned())
                )
            ),
        )]);
    }
    let _out_dir = crate::create_out_dir(dir)?;
    let mut files: Vec<(PathBuf, OutputFile)> = Vec::new();
    crate::hipk::for_each_filed(
        &found,
        r,
        indices,
        (&crate::hipk::open, budget),
        &mut |_, _, key, arch, code| {
            // A name too long for a file system is cut and numbered.
            let name = crate::fit_name(
                &format!("{}.{arch}.hsaco", key.replace('/', "_")),
                files.len(),
            );
            let path = offload_kit_io::output::contained_path(dir, &name).map_err(|e| vec![e])?;
            if files.iter().any(|(p, _)| *p == path) {
                return Err(vec![Error::rule(
                    rules::CLI_5,
                    format!(
                        "two code objects would both be written to '{}'",
                        path.display()
                    ),
                )]);
            }
            let mut f = OutputFile::create_replacing(&path).map_err(|e| vec![e])?;
            std::io::Write::write_all(&mut f, code).map_err(|e| vec![Error::from(e)])?;
            f.close().map_err(|e| vec![e])?;
            files.push((path, f));
            Ok(())
        },
    )?;
    let n = files.len();
    commit_all(files.into_iter().map(|(_, f)| f).collect()).map_err(|e| vec![e])?;
    outln!(
        "offload-kit: wrote {n} file(s) into '{}' from {} archive(s)",
        dir.display(),
        found.len()
    );
    Ok(0)
}
