//! Drop-in `clang-offload-packager` (LLVM 16, 19) and `llvm-offload-binary`
//! (LLVM 22, also installed as `clang-offload-packager`): LLVM's options,
//! messages, outputs and exit statuses for the release chosen with
//! `--llvm-version` (default 22).
//!
//! At `--llvm-version=main`, packaging writes one multi-entry version 3
//! binary (`--compress`: compressed), the proposed llvm#222774 as stored.
//!
//! offload-kit additions: `--llvm-version=16|19|22|main`, and
//! `--objdump-offloading <file>`, which prints what `llvm-objdump
//! --offloading <file>` of the release prints.

use super::cl::{self, Spec};
use super::Input;
use offload_kit_format::host::symtab::{self, SymbolError};
use offload_kit_io::output::{self, OutputFile};
use offload_kit_io::output::{io_text, strip_os_error};
use offload_kit_llvm::budget::Budget;
use offload_kit_llvm::offload_binary::llvm::{self, Failure, LlvmImage};
use offload_kit_llvm::offload_binary::packager::{self, Action, ImageArgs};
use offload_kit_llvm::offload_binary::Compression;
use offload_kit_llvm::Release;
use std::io::{Read, Write};
use std::path::Path;

/// Write a line to standard error; a failed write is ignored (never panics).
macro_rules! elog {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stderr().lock(), $($t)*);
    }};
}

/// Write a line to standard output; a failed write is ignored (never panics).
macro_rules! olog {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

/// Write text to standard output; a failed write is ignored (never panics).
fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes()).and_then(|()| o.flush());
}

/// The options of every release (`--archive` appeared in LLVM 19) and
/// offload-kit's own, which are never suggested.
const SPECS: &[Spec] = &[
    Spec::value("o"),
    Spec::multi("image"),
    Spec::flag("archive"),
    Spec::flag("h"),
    Spec::flag("help"),
    Spec::flag("help-list"),
    Spec::flag("help-hidden"),
    Spec::flag("help-list-hidden"),
    Spec::flag("version"),
    Spec::value("llvm-version"),
    Spec::flag("objdump-offloading"),
    Spec::flag("compress"),
    Spec::value("compression-format"),
    Spec::value("compression-level"),
];

/// Options newer than LLVM 16, the first release modelled (main's
/// compression: the proposed llvm#222774 as stored).
const SINCE: &[(&str, Release)] = &[
    ("archive", Release::L19),
    ("compress", Release::Main),
    ("compression-format", Release::Main),
    ("compression-level", Release::Main),
];

/// offload-kit's additions: accepted, never suggested.
const UNSUGGESTED: &[&str] = &["llvm-version", "objdump-offloading"];

#[derive(Debug, Default)]
struct Args {
    output: Option<String>,
    images: Vec<String>,
    archive: bool,
    h: bool,
    help: bool,
    version: bool,
    objdump: bool,
    input: Option<String>,
    compress: bool,
    compression_format: Option<String>,
    compression_level: Option<String>,
}

/// Parse as `llvm::cl` does for this tool. Errors are complete lines.
fn parse(tool: &str, argv0: &str, release: Release, argv: &[String]) -> Result<Args, Vec<String>> {
    let config = cl::Config {
        prog: tool,
        help_prog: argv0,
        release,
        since: SINCE,
        unsuggested: UNSUGGESTED,
        positionals: 1,
        short_single_dash: true,
        suggest: cl::Suggest::Nearest,
    };
    let p = config.parse(SPECS, argv)?;
    Ok(Args {
        output: p.value("o").map(str::to_string),
        images: p.list("image"),
        archive: p.flag("archive"),
        h: p.flag("h"),
        help: ["help", "help-list", "help-hidden", "help-list-hidden"]
            .iter()
            .any(|n| p.any_flag(n)),
        version: p.flag("version"),
        objdump: p.flag("objdump-offloading"),
        input: p.positionals().last().cloned(),
        compress: p.flag("compress"),
        compression_format: p.value("compression-format").map(str::to_string),
        compression_level: p.value("compression-level").map(str::to_string),
    })
}

/// LLVM main's `--compress`, `--compression-format=zstd|zlib` (default
/// zstd) and `--compression-level=N` (default: the format's), checked in
/// its order and words (`llvm-offload-binary.cpp` at `55aa5c55968252d5`,
/// the proposed llvm#222774).
fn main_compression(a: &Args) -> Result<Option<Compression>, String> {
    if a.compression_level.is_some() && a.compression_format.is_none() {
        return Err("--compression-level requires --compression-format".into());
    }
    let zlib = match a.compression_format.as_deref() {
        None | Some("zstd") => false,
        Some("zlib") => true,
        Some(v) => {
            return Err(format!(
                "for the --compression-format option: Cannot find option named '{v}'!"
            ))
        }
    };
    let level = match a.compression_level.as_deref() {
        None => None,
        Some(v) => Some(v.parse::<i64>().map_err(|_| {
            format!("for the --compression-level option: '{v}' value invalid for integer argument!")
        })?),
    };
    let (name, lo, hi) = if zlib {
        ("zlib", 0, 9)
    } else {
        ("zstd", -5, 22)
    };
    if let Some(l) = level.filter(|&l| l != -1 && !(lo..=hi).contains(&l)) {
        return Err(format!(
            "invalid {name} compression level {l}; expected a value in [{lo}, {hi}]"
        ));
    }
    if !a.compress {
        return Ok(None);
    }
    Ok(Some(match (zlib, level.filter(|&l| l != -1)) {
        (true, l) => Compression::Zlib(l.map_or(6, |l| l as u32)),
        (false, l) => Compression::Zstd(l.map_or(5, |l| l as i32)),
    }))
}

fn help(tool: &str, release: Release) -> String {
    let category = release.quirks().packager_name;
    let archive = if release.quirks().packager_archive_option {
        "  --archive                   - Write extracted files to a static archive\n"
    } else {
        ""
    };
    format!(
        "OVERVIEW: A utility for bundling several object files into a single binary.
The output binary can then be embedded into the host section table
to create a fatbinary containing offloading code.

USAGE: {tool} [options] Extract from <file>.

OPTIONS:

Generic Options:

  --help                      - Display available options (--help-hidden for more)
  --help-list                 - Display list of available options (--help-list-hidden for more)
  --version                   - Display the version of this program

{category} options:

{archive}  --image=<<key>=<value>,...> - List of key and value arguments. Required keywords are 'file' and 'triple'.
  -o <file>                   - Write output to <file>.
"
    )
}

/// Run the drop-in packager. `argv0` is the program as invoked (errors
/// start with it); `direct` is set when offload-kit was invoked under the
/// tool's own name (then the name decides LLVM 22's deprecation warning).
/// `default` is the release without `--llvm-version`; `settings` the run's
/// budget.
pub fn main(
    argv0: &str,
    args: Vec<String>,
    direct: bool,
    default: Release,
    settings: super::Settings,
) -> i32 {
    let budget = settings.budget;
    let args = match cl::expand_response_files(args) {
        Ok(a) => a,
        Err(e) => {
            elog!("{argv0}: error: {e}");
            return 1;
        }
    };
    // The release decides which options exist: read it first.
    let mut release = default;
    for (i, a) in args.iter().enumerate() {
        let v = match a.trim_start_matches('-').split_once('=') {
            Some(("llvm-version", v)) => Some(v.to_string()),
            None if a.trim_start_matches('-') == "llvm-version" => args.get(i + 1).cloned(),
            _ => None,
        };
        if let Some(v) = v {
            match v.parse::<Release>() {
                Ok(r) => release = r,
                Err(e) => {
                    elog!("{argv0}: error: {e}");
                    return 1;
                }
            }
        }
    }
    if release.packager_modelled().is_none() {
        elog!(
            "{argv0}: error: LLVM {release} has no clang-offload-packager (it appeared in LLVM 15)"
        );
        return 1;
    }
    if release.packager_modelled() == Some(false) {
        elog!("{argv0}: error: offload-kit's packager reproduces LLVM 16, 19 and 22, not LLVM 15's first packager");
        return 1;
    }
    let base = if direct {
        packager::path_filename(argv0).to_string()
    } else {
        release.quirks().packager_name.to_string()
    };
    let a = match parse(&base, argv0, release, &args) {
        Ok(a) => a,
        Err(lines) => {
            for l in lines {
                elog!("{l}");
            }
            return 1;
        }
    };
    if a.help {
        out(&help(&base, release));
        return 0;
    }
    if a.version {
        olog!(
            "offload-kit {base} (reproducing LLVM {release}) version {}",
            env!("CARGO_PKG_VERSION")
        );
        return 0;
    }
    if release.quirks().packager_deprecation_warning
        && direct
        && packager::path_stem(argv0).ends_with("clang-offload-packager")
    {
        elog!(
            "warning: 'clang-offload-packager' is deprecated. Use 'llvm-offload-binary' instead."
        );
    }
    let output = a.output.clone().filter(|o| !o.is_empty());
    let input = a.input.clone().filter(|i| !i.is_empty());
    if a.h
        || (release.quirks().packager_help_without_args
            && output.is_none()
            && input.is_none()
            && !a.objdump)
    {
        out(&help(&base, release));
        return 0;
    }
    let err = |m: &str| {
        elog!("{argv0}: error: {m}");
        1
    };
    if a.objdump {
        let Some(inp) = input else {
            return err("--objdump-offloading needs an input file");
        };
        return objdump(argv0, &inp, release, budget);
    }
    if input.is_some() && output.is_some() {
        return err(
            "Packaging to an output file and extracting from an input file are mutually exclusive.",
        );
    }
    if let Some(out) = output {
        let compression =
            match (release.quirks().packager_main_writer).then(|| main_compression(&a)) {
                Some(Err(m)) => return err(&m),
                Some(Ok(c)) => c,
                None => None,
            };
        return bundle(argv0, &out, &a.images, (release, budget), compression);
    }
    if let Some(inp) = input {
        return unbundle(argv0, &inp, &a.images, (release, budget), a.archive);
    }
    0
}

/// An image to package, held whole (it is copied into the output): read up
/// to half the memory budget, the other half being the output (CLI-6), so
/// that `/dev/zero` or a FIFO fed for ever stops at the budget.
fn read_file(path: &str, budget: Budget) -> Result<Vec<u8>, String> {
    let room = budget.bytes() / 2;
    let mut b = Vec::new();
    let n = if path == "-" {
        std::io::stdin().lock().take(room + 1).read_to_end(&mut b)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(room + 1).read_to_end(&mut b))
    }
    .map_err(|e| io_text(&e))?;
    if n as u64 > room {
        return Err(format!(
            "'{path}': larger than {room} bytes, half the memory budget (--max-memory or OFFLOAD_KIT_MAX_MEMORY; rule CLI-6)"
        ));
    }
    Ok(b)
}

fn write_output(path: &str, bytes: &[u8]) -> Result<(), String> {
    staged_output(path, bytes)?
        .commit()
        .map_err(|e| llvm_io(&e))
}

/// `bytes` written to a temporary file that becomes `path` on commit (and
/// is removed when dropped uncommitted).
fn staged_output(path: &str, bytes: &[u8]) -> Result<OutputFile, String> {
    let mut o = OutputFile::create(Path::new(path)).map_err(|e| llvm_io(&e))?;
    o.write_all(bytes).map_err(|e| io_text(&e))?;
    // At most output::KEEP_OPEN files held open, however many outputs (ulimit -n).
    o.close().map_err(|e| llvm_io(&e))?;
    Ok(o)
}

/// LLVM prints I/O errors without the path ("No such file or directory").
fn llvm_io(e: &offload_kit_format::Error) -> String {
    let m = e.message();
    match m.rfind("': ") {
        Some(p) if m.starts_with('\'') => strip_os_error(&m[p + 3..]).to_string(),
        _ => strip_os_error(m).to_string(),
    }
}

fn bundle(
    argv0: &str,
    out: &str,
    images: &[String],
    (release, budget): (Release, Budget),
    compression: Option<Compression>,
) -> i32 {
    let mut read_file = |path: &str| read_file(path, budget);
    let parsed: Vec<ImageArgs> = images.iter().map(|i| ImageArgs::parse(i)).collect();
    let packaged = match release.quirks().packager_writes_one_binary {
        true => packager::package_one_binary(&parsed, release, compression, &mut read_file),
        false => packager::package(&parsed, release, &mut read_file),
    };
    let bytes = match packaged {
        Ok(b) => b,
        Err(e) => {
            elog!("{argv0}: error: {}", e.message);
            return 1;
        }
    };
    match write_output(out, &bytes) {
        Ok(()) => 0,
        Err(m) => {
            elog!("{argv0}: error: {m}");
            1
        }
    }
}

fn failure(argv0: &str, f: Failure) -> i32 {
    match f {
        Failure::Error { message, error } => {
            elog!("{argv0}: error: {message} [{error}]");
        }
        Failure::Unsafe { error } => {
            elog!("{argv0}: error: {error}");
        }
    }
    1
}

fn unbundle(
    argv0: &str,
    input: &str,
    filters: &[String],
    (release, budget): (Release, Budget),
    archive: bool,
) -> i32 {
    let file = match Input::open_as_llvm(Path::new(input), budget) {
        Ok(f) => f,
        Err(e) => {
            elog!("{argv0}: error: '{input}': {}", llvm_io(&e));
            return 1;
        }
    };
    let identifier = if input == "-" { "<stdin>" } else { input };
    // main reads compressed version 3 binaries inflated; image offsets are
    // offsets in this view.
    let view = match release.quirks().main_offload_binary_reader {
        true if llvm::input_kind(file.bytes()) == llvm::InputKind::OffloadBinary => {
            match llvm::main_inflated(file.bytes(), budget) {
                Ok(b) => b,
                Err(f) => return failure(argv0, f),
            }
        }
        _ => std::borrow::Cow::Borrowed(file.bytes()),
    };
    let images: Vec<LlvmImage<'_>> =
        match llvm::extract_offload_binaries(&view, identifier, release) {
            Ok(i) => i,
            Err(f) => return failure(argv0, f),
        };
    let filters: Vec<ImageArgs> = filters.iter().map(|f| ImageArgs::parse(f)).collect();
    let (actions, tail_error) =
        packager::plan_extraction(&images, input, &filters, (release, budget), archive);
    // Refuse before writing anything when a step would read an image that
    // lies past its binary (LLVM reads memory it does not own there).
    for act in &actions {
        let used: &[usize] = match act {
            Action::WriteFile { image, .. } => std::slice::from_ref(image),
            Action::WriteArchive { members, .. } => members,
            Action::Warn(_) | Action::Extract { .. } => &[],
        };
        for &i in used {
            if let Some(Err(e)) = images.get(i).map(|img| &img.image) {
                elog!("{argv0}: error: {e}");
                return 1;
            }
        }
    }
    // All or nothing (output::commit_all): every file is written whole to a
    // temporary file, and none takes its name until every step succeeded.
    let mut staged: Vec<OutputFile> = Vec::new();
    let mut extracted: Vec<String> = Vec::new();
    for act in actions {
        let r: Result<Option<(OutputFile, Option<String>)>, String> = match act {
            Action::Warn(w) => {
                elog!("{argv0}: warning: {w}");
                Ok(None)
            }
            Action::WriteFile {
                path,
                image,
                generated,
            } => {
                let bytes = images[image].image.as_ref().map_or(&[][..], |b| *b);
                let target = if generated {
                    match output::contained_path(Path::new("."), &path) {
                        Ok(p) => p.to_string_lossy().into_owned(),
                        Err(e) => {
                            elog!("{argv0}: error: {e}");
                            return 1;
                        }
                    }
                } else {
                    path
                };
                staged_output(&target, bytes).map(|o| Some((o, None)))
            }
            Action::Extract { path, offset, size } => {
                let target = match output::contained_path(Path::new("."), &path) {
                    Ok(p) => p.to_string_lossy().into_owned(),
                    Err(e) => {
                        elog!("{argv0}: error: {e}");
                        return 1;
                    }
                };
                let bytes = &view[offset as usize..(offset + size) as usize];
                // The name written: untrusted bytes made safe.
                let shown = Path::new(&target)
                    .strip_prefix(".")
                    .map_or_else(|_| target.clone(), |p| p.display().to_string());
                staged_output(&target, bytes).map(|o| Some((o, Some(shown))))
            }
            Action::WriteArchive { path, members } => {
                match packager::archive_members(&images, &members) {
                    Some(ms) => {
                        let refs: Vec<(&str, &[u8])> =
                            ms.iter().map(|(n, d)| (n.as_ref(), *d)).collect();
                        match archive_bytes(&images, &members, &refs) {
                            Ok(bytes) => staged_output(&path, &bytes).map(|o| Some((o, None))),
                            Err(line) => {
                                elog!("{argv0}: error: {line}");
                                return 1;
                            }
                        }
                    }
                    None => Err("image outside its binary".into()),
                }
            }
        };
        match r {
            Ok(Some((o, shown))) => {
                staged.push(o);
                extracted.extend(shown);
            }
            Ok(None) => {}
            Err(m) => {
                elog!("{argv0}: error: {m}");
                return 1;
            }
        }
    }
    if let Some(m) = tail_error {
        elog!("{argv0}: error: {m}");
        return 1;
    }
    if let Err(e) = output::commit_all(staged) {
        elog!("{argv0}: error: {}", llvm_io(&e));
        return 1;
    }
    for shown in extracted {
        olog!("Extracted: {shown}");
    }
    0
}

/// The `--archive` output for the images `members` (named and sliced in
/// `refs`): `writeArchive` with its symbol table (OB-24). Err: the error
/// line after `<argv0>: error: ` — LLVM's `'<member>': <message>` with
/// offload-kit's detail, or the rule alone where LLVM dies or offload-kit
/// cannot compute what LLVM writes.
fn archive_bytes(
    images: &[LlvmImage<'_>],
    members: &[usize],
    refs: &[(&str, &[u8])],
) -> Result<Vec<u8>, String> {
    let mut symbols = Vec::with_capacity(refs.len());
    for (&i, (name, data)) in members.iter().zip(refs) {
        let img = &images[i];
        let odd = img.image_offset.wrapping_sub(img.binary_offset) % 2 == 1;
        match symtab::member_symbols(data, odd) {
            Ok(s) => symbols.push(s),
            Err(e) => {
                let e = e.rebase(img.image_offset);
                return Err(match e {
                    SymbolError::Llvm { message, error } => {
                        format!("'{name}': {message} [{error}]")
                    }
                    SymbolError::Fatal { error } | SymbolError::Unmodelled { error } => {
                        format!("'{name}': {error}")
                    }
                });
            }
        }
    }
    // LLVM's test hook for the 64-bit symbol table (read as it reads it).
    let threshold = std::env::var("SYM64_THRESHOLD")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(symtab::SYM64_THRESHOLD);
    Ok(symtab::write_gnu_with_symtab(refs, &symbols, threshold))
}

fn objdump(argv0: &str, input: &str, release: Release, budget: Budget) -> i32 {
    let file = match Input::open_as_llvm(Path::new(input), budget) {
        Ok(f) => f,
        Err(e) => {
            elog!("{argv0}: error: '{input}': {}", llvm_io(&e));
            return 1;
        }
    };
    let Some(run) = llvm::objdump_offloading(file.bytes(), input, (release, budget)) else {
        elog!("{argv0}: error: LLVM {release}'s llvm-objdump has no --offloading");
        return 1;
    };
    out(&run.stdout);
    for w in &run.warnings {
        elog!("{argv0}: warning: {w}");
    }
    if let Some(e) = run.unsafe_read {
        elog!("{argv0}: error: {e}");
        return 1;
    }
    if let Some(e) = run.error {
        match run.detail {
            Some(d) => elog!("{argv0}: error: {e} [{d}]"),
            None => elog!("{argv0}: error: {e}"),
        }
        return 1;
    }
    0
}
