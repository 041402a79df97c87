//! Drop-in `clang-offload-bundler`: LLVM's options and messages, the
//! behaviour of the release chosen with `--llvm-version` (default 22).

use super::cl::{self, Spec};
use super::{copy_range, Input};
use offload_kit_format::source::{Prefix, Source};
use offload_kit_io::output::strip_os_error;
use offload_kit_io::output::OutputFile;
use offload_kit_llvm::bundle::{archive, ccob, object, text};
use offload_kit_llvm::bundler::{FileType, Job, Piece};
use offload_kit_llvm::Release;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The options, in `llvm::cl`'s order (suggestions take the first nearest).
pub(super) const SPECS: &[Spec] = &[
    Spec::value("type"),
    Spec::comma_list("targets"),
    Spec::multi("input"),
    Spec::multi("output"),
    Spec::comma_list("inputs"),
    Spec::comma_list("outputs"),
    Spec::flag("unbundle"),
    Spec::flag("list"),
    Spec::flag("allow-missing-bundles"),
    Spec::uint("bundle-align"),
    Spec::flag("hip-openmp-compatible"),
    Spec::flag("check-input-archive"),
    Spec::flag("verbose"),
    Spec::flag("compress"),
    Spec::value("compression-level"),
    Spec::flag("###"),
    Spec::flag("help"),
    Spec::flag("h"),
    Spec::flag("version"),
    Spec::value("llvm-version"),
];

/// `--help` of each release, as its `clang-offload-bundler` prints it
/// (13 = 14, 19 = 22 = main; captured from Debian's builds): a newer
/// release prints 19's until it is captured.
fn release_help(release: Release) -> &'static str {
    match release.quirks().bundler_help {
        13 => include_str!("help/clang-offload-bundler-13.txt"),
        15 => include_str!("help/clang-offload-bundler-15.txt"),
        16 => include_str!("help/clang-offload-bundler-16.txt"),
        _ => include_str!("help/clang-offload-bundler-19.txt"),
    }
}

/// offload-kit's own option, listed by `offload-kit bundler --help` only:
/// under LLVM's name the help is the release's, line for line.
fn own_options() -> String {
    let option = format!("  --llvm-version=<{}|main>", Release::listed("|", "|"));
    let indent = " ".repeat(option.len() + 3);
    format!(
        "\noffload-kit options:\n\n{option} - LLVM release whose behaviour is reproduced (default 22);\n\
         {indent}main is modelled from llvm-project source at {}\n",
        offload_kit_llvm::profile::MAIN_COMMIT
    )
}

/// `--help` for `prog`: the release's text with LLVM's program name
/// (the basename it was invoked as), plus offload-kit's option when it
/// was invoked as `offload-kit bundler`.
fn help(prog: &str, release: Release) -> String {
    let native = prog == "offload-kit bundler";
    let name = if native {
        prog.to_string()
    } else {
        Path::new(prog)
            .file_name()
            .map_or_else(|| prog.to_string(), |n| n.to_string_lossy().into_owned())
    };
    let mut text = release_help(release).replacen(
        "USAGE: clang-offload-bundler [options]",
        &format!("USAGE: {name} [options]"),
        1,
    );
    if native {
        text.push_str(&own_options());
    }
    text
}

/// Run the drop-in bundler. `prog` is argv[0] as invoked (LLVM prefixes its
/// errors with it). Returns the exit status.
/// `default` is the release without `--llvm-version` (22, or what the
/// drop-in directory names); `settings` the run's budget.
pub fn main(prog: &str, args: Vec<String>, default: Release, settings: super::Settings) -> i32 {
    let args = match cl::expand_response_files(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{prog}: error: {e}");
            return 1;
        }
    };
    let p = match cl::parse("clang-offload-bundler", SPECS, &args) {
        Ok(p) => p,
        Err(lines) => {
            for l in lines {
                eprintln!("{l}");
            }
            return 1;
        }
    };
    let release: Release = match p.value("llvm-version").map_or(Ok(default), str::parse) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{prog}: error: {e}");
            return 1;
        }
    };
    // `-h` is a hidden option of every release that does nothing.
    if p.flag("help") {
        outln!("{}", help(prog, release).trim_end_matches('\n'));
        return 0;
    }
    if p.flag("version") {
        outln!(
            "offload-kit clang-offload-bundler (reproducing LLVM {release}) version {}",
            env!("CARGO_PKG_VERSION")
        );
        return 0;
    }
    let err = |m: &str| {
        eprintln!("{prog}: error: {m}");
        1
    };
    // Required options are checked by LLVM's option parser, before anything
    // else; 14 also requires -inputs.
    let no_inputs = release.quirks().bundler_plural_io_only && !p.has("inputs") && !p.has("input");
    if no_inputs {
        eprintln!(
            "clang-offload-bundler: for the --inputs option: must be specified at least once!"
        );
    }
    let Some(file_type) = p.value("type") else {
        eprintln!("clang-offload-bundler: for the --type option: must be specified at least once!");
        return 1;
    };
    if no_inputs {
        return 1;
    }
    if p.has("inputs") && p.has("input") {
        return err("-inputs and -input cannot be used together, use only -input instead");
    }
    if p.has("outputs") && p.has("output") {
        return err("-outputs and -output cannot be used together, use only -output instead");
    }
    if release.quirks().bundler_warns_plural_io {
        if p.has("inputs") {
            eprintln!("{prog}: warning: -inputs is deprecated, use -input instead");
        }
        if p.has("outputs") {
            eprintln!("{prog}: warning: -outputs is deprecated, use -output instead");
        }
    }
    let mut inputs = p.list("input");
    inputs.extend(p.list("inputs"));
    let mut outputs = p.list("output");
    outputs.extend(p.list("outputs"));
    let align = p
        .value("bundle-align")
        .and_then(cl::parse_uint)
        .map_or(1, u64::from);
    let comp = match compression_config(release, &p, prog) {
        Ok(c) => c,
        Err(m) => return err(&m),
    };
    let job = Job {
        release,
        file_type: file_type.to_string(),
        targets: p.list("targets"),
        inputs: inputs.into_iter().map(PathBuf::from).collect(),
        outputs: outputs.into_iter().map(PathBuf::from).collect(),
        unbundle: p.flag("unbundle"),
        list: p.flag("list"),
        allow_missing: p.flag("allow-missing-bundles"),
        align,
        hip_openmp: p.flag("hip-openmp-compatible"),
        check_input_archive: p.flag("check-input-archive"),
        budget: settings.budget,
    };
    let dry_run = p.flag("###");
    match run(&job, &comp, prog, dry_run) {
        Ok(()) => 0,
        Err(m) => err(&m),
    }
}

/// Compression settings after LLVM's environment variables and options.
struct Compression {
    compress: bool,
    verbose: bool,
    level: Option<i32>,
    version: u16,
}

/// `OffloadBundlerConfig`'s environment handling (19, 22), then the
/// command line, which wins.
fn compression_config(r: Release, p: &cl::Parsed, _prog: &str) -> Result<Compression, String> {
    let mut c = Compression {
        compress: false,
        verbose: false,
        level: None,
        version: r.ccob_default_version(),
    };
    if r.quirks().bundler_reads_env
        && std::env::var("OFFLOAD_BUNDLER_IGNORE_ENV_VAR").as_deref() != Ok("1")
    {
        if let Ok(v) = std::env::var("OFFLOAD_BUNDLER_VERBOSE") {
            c.verbose = v == "1";
        }
        if let Ok(v) = std::env::var("OFFLOAD_BUNDLER_COMPRESS") {
            c.compress = v == "1";
        }
        if let Ok(v) = std::env::var("OFFLOAD_BUNDLER_COMPRESSION_LEVEL") {
            match v.parse::<i32>() {
                Ok(l) => c.level = Some(l),
                Err(_) => eprintln!("Warning: Invalid value for OFFLOAD_BUNDLER_COMPRESSION_LEVEL: {v}. Ignoring it."),
            }
        }
        if r.quirks().ccob_version_from_env {
            if let Ok(v) = std::env::var("COMPRESSED_BUNDLE_FORMAT_VERSION") {
                match v.parse::<u16>() {
                    Ok(n @ 2..=3) => c.version = n,
                    Ok(_) => eprintln!("Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: {v}. Valid values are 2 or 3. Using default version 3."),
                    Err(_) => eprintln!("Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: {v}. Using default version 3."),
                }
            }
        }
    }
    if p.has("compress") {
        c.compress = p.flag("compress");
    }
    if p.has("verbose") {
        c.verbose = p.flag("verbose");
    }
    if let Some(l) = p.value("compression-level") {
        c.level = Some(l.parse().map_err(|_| {
            format!("for the --compression-level option: '{l}' value invalid for integer argument!")
        })?);
    }
    if c.compress && r.ccob_versions_written().is_empty() {
        return Err(format!(
            "-compress: LLVM {r} has no compressed bundles (select --llvm-version=19 or 22)"
        ));
    }
    Ok(c)
}

/// Group digits by three, as LLVM's verbose output does.
fn commas(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Decompress a compressed input as the release does (19/22), else keep it.
fn maybe_decompress(job: &Job, input: Input, comp: &Compression) -> Result<Input, String> {
    Ok(match decompressed(job, input.bytes(), comp)? {
        None => input,
        Some(d) => Input::from_vec(d),
    })
}

/// What the release decompresses `input` to (`None`: it is not
/// compressed), with `-verbose`'s report and the CCOB-7 warning.
fn decompressed(job: &Job, input: &[u8], comp: &Compression) -> Result<Option<Vec<u8>>, String> {
    let started = std::time::Instant::now();
    let decompressed = job.decompress_input(input).map_err(|e| e.to_string())?;
    let decompress_secs = started.elapsed().as_secs_f64();
    match &decompressed {
        Some(d) => report_decompressed(job, input, d, comp, decompress_secs),
        None => report_uncompressed(job, input, comp),
    }
    Ok(decompressed)
}

/// `-verbose`'s line for an input the release keeps as it is.
fn report_uncompressed(job: &Job, input: &[u8], comp: &Compression) {
    if let Some(note) = ccob::llvm_uncompressed_note(input, job.release).filter(|_| comp.verbose) {
        eprintln!("{note}");
    }
}

/// The CCOB-7 warning and `-verbose`'s report for a compressed `input`
/// that decompressed to `d` in `decompress_secs`.
fn report_decompressed(
    job: &Job,
    input: &[u8],
    d: &[u8],
    comp: &Compression,
    decompress_secs: f64,
) {
    let Ok(h) = ccob::parse_header(input, 0) else {
        return;
    };
    // One hash of the decompressed bundle, which may be large, for both.
    let digest = ccob::truncated_md5(d);
    if digest != h.hash {
        eprintln!(
            "offload-kit: warning: the compressed bundle's hash does not match its contents (rule CCOB-7); LLVM {} does not check it, so the output may be corrupt",
            job.release
        );
    }
    if comp.verbose {
        let stored = h.hash_u64();
        let recalc = u64::from_le_bytes(digest);
        eprintln!("Compressed bundle format version: {}", h.version);
        if let Some(t) = h.total_size {
            eprintln!("Total file size (from header): {} bytes", commas(t));
        }
        eprintln!(
            "Decompression method: {}",
            if h.method() == Some(ccob::Method::Zlib) {
                "zlib"
            } else {
                "zstd"
            }
        );
        eprintln!(
            "Size before decompression: {} bytes",
            commas(input.len() as u64 - h.header_size)
        );
        eprintln!("Size after decompression: {} bytes", commas(d.len() as u64));
        let before = (input.len() as u64 - h.header_size) as f64;
        let after = d.len() as f64;
        eprintln!("Compression rate: {:.2}", after / before.max(1.0));
        eprintln!("Compression ratio: {:.2}%", 100.0 * before / after.max(1.0));
        eprintln!(
            "Decompression speed: {:.2} MB/s",
            after / 1e6 / decompress_secs.max(1e-9)
        );
        // LLVM's format_hex(v, 16) counts the "0x" in the width.
        eprintln!("Stored hash: {stored:#016x}");
        eprintln!("Recalculated hash: {recalc:#016x}");
        eprintln!(
            "Hashes match: {}",
            if stored == recalc { "Yes" } else { "No" }
        );
    }
}

/// Where LLVM finds `llvm-objcopy`: in the directory of `argv[0]` when
/// that names an existing file (symbolic links not followed), else in the
/// directory of the running executable (`getMainExecutable`, links
/// followed), else on `PATH`.
fn objcopy_path(prog: &str) -> Result<String, String> {
    let beside = if Path::new(prog).exists() {
        Path::new(prog).parent().map(Path::to_path_buf)
    } else {
        std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(Path::to_path_buf))
    };
    let path_dirs = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    beside
        .into_iter()
        .chain(path_dirs)
        .map(|d| d.join("llvm-objcopy"))
        .find(|c| c.is_file())
        .map(|c| c.display().to_string())
        .ok_or_else(|| "unable to find 'llvm-objcopy' in path".to_string())
}

/// A name like the temporary files LLVM hands to `llvm-objcopy`
/// (`createTemporaryFile("clang-offload-bundler", "tmp")`); `-###` only
/// prints it.
fn temp_name() -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
        ^ std::process::id();
    std::env::temp_dir()
        .join(format!("clang-offload-bundler-{:06x}.tmp", n & 0xff_ffff))
        .display()
        .to_string()
}

/// `-###`: print a command line as LLVM does (every argument in double
/// quotes, unescaped) on standard error.
fn print_command(args: &[String]) {
    let line: Vec<String> = args.iter().map(|a| format!("\"{a}\"")).collect();
    eprintln!("{}", line.join(" "));
}

/// An empty output file, as LLVM leaves the file `llvm-objcopy` would
/// have written under `-###`.
fn write_empty(path: &Path) -> Result<(), String> {
    let o = OutputFile::create(path).map_err(|e| e.to_string())?;
    o.commit().map_err(|e| e.to_string())
}

/// The IDs a release's `-list` prints for the input: from its bundle
/// header alone when it is a compressed bundle whose outcome that settles
/// (spec/ccob.md, "Listing a compressed bundle"), else from the bundle the
/// release decompresses it to, or from the input as it is.
fn list_input(
    job: &Job,
    comp: &Compression,
    header_only: bool,
    input: &dyn Source,
) -> Result<Vec<String>, String> {
    if header_only {
        if let Some(prefix) = ccob::llvm_list_prefix(input, job.release) {
            return job.plan_list(&prefix).map_err(|e| e.to_string());
        }
    }
    match decompressed(job, input.bytes(), comp)? {
        Some(d) => job.plan_list(&d),
        None => job.plan_list(input),
    }
    .map_err(|e| e.to_string())
}

/// What `-verbose` and the CCOB-7 warning say of each buffer the release
/// decompresses, for the library's walks that report them.
fn reporter<'a>(job: &'a Job, comp: &'a Compression) -> impl FnMut(&[u8], Option<&[u8]>, f64) + 'a {
    move |buf, d, secs| match d {
        Some(d) => report_decompressed(job, buf, d, comp, secs),
        None => report_uncompressed(job, buf, comp),
    }
}

fn run(job: &Job, comp: &Compression, prog: &str, dry_run: bool) -> Result<(), String> {
    let v = job.validate().map_err(|e| e.to_string())?;
    let header_only = !comp.verbose && matches!(v.file_type, FileType::Binary | FileType::Object);
    if job.list {
        return run_list(job, comp, header_only);
    }
    if job.unbundle && v.file_type == FileType::Archive {
        return unbundle_archive(job, &v, comp);
    }
    if job.unbundle {
        return run_unbundle(job, &v, comp, header_only, prog, dry_run);
    }
    run_bundle(job, &v, comp, prog, dry_run)
}

/// `-list`: the IDs of the input's entries, in the release's order.
fn run_list(job: &Job, comp: &Compression, header_only: bool) -> Result<(), String> {
    // `-list -type=a` lists the input as -type=o does: an archive is
    // neither an object nor a bundle, so nothing is printed.
    let raw = open(&job.inputs[0], job.budget)?;
    // main lists every blob of the input in turn, each as if it were a
    // file of its own (CCOB-4, *LLVM main*), and prints what it listed
    // before a blob fails.
    let (ids, failed) = if job.release.quirks().list_walks_every_bundle {
        job.plan_list_main(&raw, &mut reporter(job, comp))
    } else {
        match list_input(job, comp, header_only, &raw) {
            Ok(ids) => (ids, None),
            Err(e) => return Err(e),
        }
    };
    let mut out = std::io::stdout().lock();
    for id in ids {
        writeln!(out, "{id}").map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())?;
    if let Some(e) = failed {
        return Err(e.to_string());
    }
    Ok(())
}

/// `-unbundle`: every output staged and renamed only when all are complete.
fn run_unbundle(
    job: &Job,
    v: &offload_kit_llvm::bundler::Validated,
    comp: &Compression,
    header_only: bool,
    prog: &str,
    dry_run: bool,
) -> Result<(), String> {
    let raw = open(&job.inputs[0], job.budget)?;
    // main walks every blob of the input (CCOB-4, *LLVM main*).
    let main = job.release.quirks().list_walks_every_bundle;
    if header_only && !main {
        if let Some(prefix) = ccob::llvm_list_prefix(&raw, job.release) {
            return unbundle_streamed(job, v, &raw, &prefix);
        }
    }
    let (input, pieces) = if main {
        let pieces = job.plan_unbundle_main(v, &raw, &mut reporter(job, comp));
        (raw, pieces)
    } else {
        let input = maybe_decompress(job, raw, comp)?;
        let pieces = job.plan_unbundle(v, &input);
        (input, pieces)
    };
    let pieces = pieces.map_err(|e| e.to_string())?;
    // All outputs are staged first and renamed only when every one is complete.
    let mut staged = Vec::new();
    for (piece, path) in pieces.iter().zip(&job.outputs) {
        if *piece == Piece::NotWritten {
            continue;
        }
        // 19 and 22 strip a fat object's host with llvm-objcopy, which
        // `-###` prints instead of running: the output stays empty.
        // (A device entry holding the host marker is stripped alike: C11.)
        let objcopy_host = matches!(piece, Piece::Owned(_))
            && v.file_type == FileType::Object
            && job.release.strips_host_with_objcopy();
        if dry_run && objcopy_host {
            let mut cmd = vec![objcopy_path(prog)?];
            cmd.extend(
                [
                    "--regex",
                    "--remove-section=__CLANG_OFFLOAD_BUNDLE__.*",
                    "--",
                ]
                .map(String::from),
            );
            cmd.push(job.inputs[0].display().to_string());
            cmd.push(temp_name());
            print_command(&cmd);
            let o = OutputFile::create(path).map_err(|e| e.to_string())?;
            staged.push(o);
            continue;
        }
        let mut o = OutputFile::create(path).map_err(|e| e.to_string())?;
        match piece {
            Piece::Range { offset, size } => {
                copy_range(&input, *offset, *size, &mut o).map_err(|e| e.to_string())?
            }
            Piece::WholeInput => {
                let len = input.bytes().len() as u64;
                copy_range(&input, 0, len, &mut o).map_err(|e| e.to_string())?
            }
            Piece::Empty | Piece::NotWritten => {}
            Piece::Owned(bytes) => o.write_all(bytes).map_err(|e| e.to_string())?,
        }
        staged.push(o);
    }
    for o in staged {
        o.commit().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Bundling: an object-file bundle through the host object, else a binary
/// or text bundle, compressed on request.
fn run_bundle(
    job: &Job,
    v: &offload_kit_llvm::bundler::Validated,
    comp: &Compression,
    prog: &str,
    dry_run: bool,
) -> Result<(), String> {
    let inputs: Vec<Input> = job
        .inputs
        .iter()
        .map(|p| open(p, job.budget))
        .collect::<Result<_, _>>()?;
    // LLVM picks the handler from the host input (the first input when a
    // HIP-only bundle has none): an object file gets an object-file bundle.
    if v.file_type == FileType::Object {
        let host = v.host_index.unwrap_or(0);
        if object::is_object_file(inputs[host].bytes()) {
            if dry_run {
                // `-###`: the llvm-objcopy command that adds the sections (the
                // host's marker from a temporary file), not run.
                let mut cmd = vec![objcopy_path(prog)?];
                for (i, id) in v.targets.iter().enumerate() {
                    let file = if i == host {
                        temp_name()
                    } else {
                        job.inputs[i].display().to_string()
                    };
                    cmd.push(format!("--add-section=__CLANG_OFFLOAD_BUNDLE__{id}={file}"));
                    cmd.push(format!(
                        "--set-section-flags=__CLANG_OFFLOAD_BUNDLE__{id}=readonly,exclude"
                    ));
                }
                cmd.push("--".into());
                cmd.push(job.inputs[host].display().to_string());
                cmd.push(job.outputs[0].display().to_string());
                print_command(&cmd);
                return write_empty(&job.outputs[0]);
            }
            let targets: Vec<&str> = job.targets.iter().map(String::as_str).collect();
            let bytes: Vec<&[u8]> = inputs.iter().map(Input::bytes).collect();
            let out = object::bundle(job.release, &targets, &bytes)
                .map_err(|e| format!("cannot write the object-file bundle [{e}]"))?;
            let mut o = OutputFile::create(&job.outputs[0]).map_err(|e| e.to_string())?;
            o.write_all(&out).map_err(|e| e.to_string())?;
            return o.commit().map_err(|e| e.to_string());
        }
    }
    let sizes: Vec<u64> = inputs.iter().map(|i| i.bytes().len() as u64).collect();
    let layout = job.plan_bundle(v, &sizes).map_err(|e| e.to_string())?;
    let mut o = OutputFile::create(&job.outputs[0]).map_err(|e| e.to_string())?;
    if let FileType::Text(c) = v.file_type {
        let entries: Vec<(&[u8], &[u8])> = v
            .targets
            .iter()
            .zip(&inputs)
            .map(|(t, i)| (t.as_bytes(), i.bytes()))
            .collect();
        if comp.compress {
            let bundle = text::write_to_vec(&entries, c);
            return write_compressed(o, &bundle, comp);
        }
        text::write(&mut o, &entries, c).map_err(|e| e.to_string())?;
        return o.commit().map_err(|e| e.to_string());
    }
    if comp.compress {
        let mut bundle = Vec::with_capacity(layout.total as usize);
        layout
            .write(&mut bundle, |i, w| w.write_all(inputs[i].bytes()))
            .map_err(|e| e.to_string())?;
        return write_compressed(o, &bundle, comp);
    }
    o.write_all(&layout.header).map_err(|e| e.to_string())?;
    let mut pos = layout.header.len() as u64;
    for (i, input) in inputs.iter().enumerate() {
        // An empty payload at the end never extends the file of a release
        // that seeks to each offset.
        if sizes[i] == 0 && job.release.seeks_to_payloads() {
            continue;
        }
        offload_kit_io::output::write_zeros(&mut o, layout.offsets[i] - pos)
            .map_err(|e| e.to_string())?;
        copy_range(input, 0, sizes[i], &mut o).map_err(|e| e.to_string())?;
        pos = layout.offsets[i] + sizes[i];
    }
    if let Some(i) = (0..sizes.len()).find(|&i| layout.offsets[i] > pos) {
        eprintln!(
            "offload-kit: warning: as LLVM {} does, entry {i} ('{}') is empty and recorded at offset {}, past the end of the file ({pos} bytes): the bundle violates BIN-5 and every LLVM release crashes reading it back",
            job.release, v.targets[i], layout.offsets[i]
        );
    }
    o.commit().map_err(|e| e.to_string())
}

/// Unbundle a compressed input in one streaming pass: the plan comes from
/// the bundle header alone, and every output receives its range while
/// the payload is decoded (the release's one-shot decompression gives the
/// same bytes and the same errors here, see `ccob::llvm_stream_ranges`).
fn unbundle_streamed(
    job: &Job,
    v: &offload_kit_llvm::bundler::Validated,
    raw: &Input,
    prefix: &Prefix,
) -> Result<(), String> {
    let total = prefix.len();
    let pieces = job.plan_unbundle(v, prefix).map_err(|e| e.to_string())?;
    let mut staged = Vec::new();
    let mut ranges = Vec::new();
    for (piece, path) in pieces.iter().zip(&job.outputs) {
        if *piece == Piece::NotWritten {
            continue;
        }
        let mut o = OutputFile::create(path).map_err(|e| e.to_string())?;
        match piece {
            Piece::Range { offset, size } => ranges.push((staged.len(), *offset, *size)),
            Piece::WholeInput => ranges.push((staged.len(), 0, total)),
            Piece::Empty | Piece::NotWritten => {}
            Piece::Owned(bytes) => o.write_all(bytes).map_err(|e| e.to_string())?,
        }
        staged.push(o);
    }
    let hash = {
        let mut outs: Vec<Option<&mut OutputFile>> = staged.iter_mut().map(Some).collect();
        let mut sinks: Vec<ccob::Sink<'_>> = ranges
            .iter()
            .map(|&(i, start, len)| ccob::Sink {
                start,
                len,
                out: outs[i].take().expect("one range per output"),
            })
            .collect();
        ccob::llvm_stream_ranges(raw, job.release, &mut sinks).map_err(|f| match f {
            ccob::StreamFailure::Llvm(m, e) => offload_kit_llvm::bundler::BundlerError {
                message: format!("Failed to decompress input: {m}"),
                detail: Some(e),
            }
            .to_string(),
            ccob::StreamFailure::Write(e) => e.to_string(),
        })?
    };
    if let Ok(h) = ccob::parse_header(raw.bytes(), 0) {
        if hash != h.hash {
            eprintln!(
                "offload-kit: warning: the compressed bundle's hash does not match its contents (rule CCOB-7); LLVM {} does not check it, so the output may be corrupt",
                job.release
            );
        }
    }
    for o in staged {
        o.commit().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Compress `bundle` as the release does and write it.
fn write_compressed(mut o: OutputFile, bundle: &[u8], comp: &Compression) -> Result<(), String> {
    let opts = ccob::WriteOptions {
        version: comp.version,
        method: ccob::Method::Zstd,
        level: comp.level.unwrap_or(3),
    };
    let started = std::time::Instant::now();
    let blob = ccob::compress(bundle, opts).map_err(|e| e.to_string())?;
    if comp.verbose {
        let secs = started.elapsed().as_secs_f64().max(1e-9);
        let hsize = blob.len() - ccob::compress_payload_len(&blob);
        let payload = (blob.len() - hsize) as f64;
        eprintln!("Compressed bundle format version: {}", opts.version);
        eprintln!(
            "Total file size (including headers): {} bytes",
            commas(blob.len() as u64)
        );
        eprintln!("Compression method used: zstd");
        eprintln!("Compression level: {}", opts.level);
        eprintln!(
            "Binary size before compression: {} bytes",
            commas(bundle.len() as u64)
        );
        eprintln!(
            "Binary size after compression: {} bytes",
            commas(payload as u64)
        );
        eprintln!("Compression rate: {:.2}", bundle.len() as f64 / payload);
        eprintln!(
            "Compression ratio: {:.2}%",
            100.0 * payload / bundle.len() as f64
        );
        eprintln!(
            "Compression speed: {:.2} MB/s",
            bundle.len() as f64 / 1e6 / secs
        );
        eprintln!(
            "Truncated MD5 hash: {:#016x}",
            u64::from_le_bytes(ccob::truncated_md5(bundle))
        );
    }
    o.write_all(&blob).map_err(|e| e.to_string())?;
    o.commit().map_err(|e| e.to_string())
}

fn open(p: &std::path::Path, budget: offload_kit_llvm::budget::Budget) -> Result<Input, String> {
    Input::open_as_llvm(p, budget).map_err(|e| {
        let m = e.message().to_string();
        if m.starts_with('\'') {
            m
        } else {
            format!("'{}': {}", p.display(), strip_os_error(&m))
        }
    })
}

/// `-unbundle -type=a` (spec/archive.md): the input archive is not
/// decompressed; each target's archive is written to a temporary file and
/// renamed when complete, in `-targets` order, and the archives before a
/// failing target stay, as LLVM leaves them (AR-6).
fn unbundle_archive(
    job: &Job,
    v: &offload_kit_llvm::bundler::Validated,
    comp: &Compression,
) -> Result<(), String> {
    let path = &job.inputs[0];
    let input = open(path, job.budget)?;
    let name = path.display().to_string();
    let plan = job
        .plan_archive_reporting(v, input.bytes(), &name, &mut reporter(job, comp))
        .map_err(|e| e.to_string())?;
    // LLVM's test hook for the 64-bit symbol table, honoured as LLVM does
    // (`getAsInteger(10)`: an invalid value keeps 2^32).
    let threshold = std::env::var("SYM64_THRESHOLD")
        .ok()
        .and_then(|t| t.parse::<u64>().ok())
        .unwrap_or(1 << 32);
    for (i, &out) in plan.outputs.iter().enumerate() {
        let out_path = &job.outputs[out];
        let members = plan.members(input.bytes(), i);
        let mut o = OutputFile::create(out_path).map_err(|e| e.to_string())?;
        let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut o);
        archive::write(&mut w, &members, &plan.symbols[i], threshold).map_err(|e| e.to_string())?;
        w.flush().map_err(|e| e.to_string())?;
        drop(w);
        o.commit().map_err(|e| e.to_string())?;
    }
    match plan.error {
        Some(e) => Err(e.to_string()),
        None => Ok(()),
    }
}
