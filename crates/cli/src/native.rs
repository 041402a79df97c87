//! The native commands (clap): the command table, and `list`, `validate`,
//! `demo`, `man` and the URI listing; `extract` and the compressed-bundle
//! commands have their own files.

use super::ccob::{compress_cmd, decompress_cmd, verify_cmd};
use super::term::ColorChoice;
use super::Input;
use clap::{CommandFactory, Parser, Subcommand};
use offload_kit_format::Error;
use offload_kit_io::output;
use offload_kit_llvm::budget::Budget;
use offload_kit_llvm::detect::{self, Listing};
use offload_kit_llvm::Release;
use std::path::{Path, PathBuf};

/// offload-kit: read, check and write LLVM offload containers.
#[derive(Parser, Debug)]
#[command(name = "offload-kit", version, about)]
pub struct Cli {
    /// Most bytes of decoded data a command may hold beyond its outputs
    /// (CLI-6): bytes, or with K, M or G; default 256M, or
    /// OFFLOAD_KIT_MAX_MEMORY.
    #[arg(long = "max-memory", global = true, value_parser = parse_budget)]
    max_memory: Option<Budget>,
    /// When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    #[command(subcommand)]
    cmd: Cmd,
}

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

fn parse_budget(text: &str) -> Result<Budget, String> {
    Budget::parse(text).ok_or_else(|| format!("'{text}' is not a size (bytes, or with K, M or G)"))
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// List the entries of a container (auto-detected).
    List {
        /// Input file.
        file: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// Read as this LLVM release does (its -list order, its leniency) instead of strictly.
        #[arg(long = "llvm-version")]
        llvm: Option<Release>,
        /// Print each entry as `<id>TAB<code object URI>` (file://PATH#offset=N&size=M),
        /// as ROCm's tools and llvm-readobj-22 --offloading name code objects.
        #[arg(long, conflicts_with_all = ["json", "llvm"])]
        uri: bool,
    },
    /// Extract one entry (or all entries into a directory), or the bytes a
    /// code object URI names (`extract file://PATH#offset=N&size=M -o F`).
    Extract(super::extract::Args),
    /// What files hold, down to each code object (processor, code object
    /// version, xnack/sramecc, kernels), and whether each entry's ID agrees
    /// with its code object (CO-1); directories are walked. Exit 0 when
    /// every file was read and nothing disagrees.
    Inspect {
        /// Input files and directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Print one JSON document (schema "offload-kit-inspect/1").
        #[arg(long)]
        json: bool,
        /// Refuse files that break any spec rule. Without it, what clang 14-16 wrote and
        /// LLVM 22 and the HIP runtime still read (ID-5 entry IDs such as
        /// hip-amdgcn-amd-amdhsa-gfx906, BIN-10 trailing bytes) is read and warned about.
        #[arg(long)]
        strict: bool,
    },
    /// Which code object the HIP runtime would load on each GPU, per bundle
    /// (exact target ID, compatible, generic fallback), or why none fits;
    /// exit 0 when every file runs on every GPU.
    Check {
        /// Input files and directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The GPU: its target ID (gfx90a:sramecc+:xnack-), agent name (gfx90a: each xnack/sramecc
        /// mode is checked) or ISA name as rocminfo prints it (amdgcn-amd-amdhsa--gfx90a:xnack-), or
        /// `auto` for this machine's GPUs (KFD topology; OFFLOAD_KIT_KFD_TOPOLOGY names another);
        /// repeatable.
        #[arg(long, required = true)]
        gpu: Vec<String>,
        /// Print one JSON document (schema "offload-kit-check/1").
        #[arg(long)]
        json: bool,
        /// For a HIPK host (ROCm kpack split): the archives to search, `:`-separated, in place
        /// of the host's search paths (as ROCM_KPACK_PATH, which is read when this is absent).
        #[arg(long = "kpack-path")]
        kpack_path: Option<String>,
        /// Refuse files that break any spec rule. Without it, what clang 14-16 wrote and
        /// the HIP runtime still reads (ID-5 entry IDs, BIN-10 trailing bytes) is read and
        /// warned about.
        #[arg(long)]
        strict: bool,
    },
    /// Check a container against every rule of spec/; exit 0 only when it conforms.
    Validate {
        /// Input file.
        file: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Compress a bundle into a CCOB blob (default: version 3, zstd level 3, as LLVM 22).
    Compress {
        /// Input bundle.
        file: PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
        /// CCOB format version (1, 2 or 3).
        #[arg(long = "format-version", default_value_t = 3)]
        version: u16,
        #[command(flatten)]
        how: Compression,
    },
    /// Decompress a CCOB blob (verifying sizes and hash) into the bundle it holds.
    Decompress {
        /// Input CCOB file.
        file: PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Convert between uncompressed and CCOB v1/v2/v3; a fat binary's AMDGPU code objects to
    /// kpack archives and its host to a HIPK host finding them (`--to kpack`, -o a directory);
    /// a HIPK host back to a fat binary, or a kpack archive to a bundle (`--to bundle`).
    Convert {
        /// Input bundle, CCOB file, fat binary or kpack archive.
        file: PathBuf,
        /// Target form.
        #[arg(long, value_parser = ccob_forms())]
        to: String,
        /// Output file (a directory with --to kpack).
        #[arg(short, long)]
        output: PathBuf,
        /// With --to kpack: the kernel name the archives file code objects under
        /// (`<name>#<wrapper index>`; default the input's file name), as the host's
        /// `.rocm_kpack_ref` names it.
        #[arg(long = "kernel-name")]
        kernel_name: Option<String>,
        /// With --to kpack: archives are named `<prefix>_<target ID>.kpack` (default the
        /// input's file name up to its first '.').
        #[arg(long)]
        prefix: Option<String>,
        #[command(flatten)]
        how: Compression,
    },
    /// Verify every compressed bundle in a file: sizes and hashes; exit 0 only if all check out.
    Verify {
        /// Input file.
        file: PathBuf,
    },
    /// Generate containers for fuzzing loaders: valid by default, or each breaking one rule (with a .json sidecar)
    Generate {
        /// The kind of file: binary, text, object, fatbin, ccob, offload-binary, archive or kpack
        /// (--list-kinds says what each is and which rules it can break)
        #[arg(long, required_unless_present = "list_kinds")]
        kind: Option<String>,
        /// How many files
        #[arg(long, default_value_t = 100)]
        count: u64,
        /// Seed of the first file; file n uses seed + n
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Directory to write into
        #[arg(long, required_unless_present = "list_kinds")]
        out: Option<PathBuf>,
        /// Break this rule in every file (repeatable: cycled through; `all`: every rule the kind can break)
        #[arg(long)]
        malformed: Vec<String>,
        /// Comma-separated entry IDs to draw from (default: a built-in pool)
        #[arg(long = "target-ids", value_delimiter = ',')]
        target_ids: Vec<String>,
        /// Largest file in bytes
        #[arg(long = "max-size", default_value_t = 1 << 20)]
        max_size: usize,
        /// Carry these images (a directory of .hsaco, cubins, .so, SPIR-V): IDs are drawn from their targets (default: a minimal image each loader accepts for each entry's target)
        #[arg(long, conflicts_with = "random_payloads")]
        payloads: Option<PathBuf>,
        /// Carry random bytes instead of images (what generate wrote before images)
        #[arg(long = "random-payloads")]
        random_payloads: bool,
        /// Make only what this LLVM release's readers take: offload binaries of version 1 for
        /// 15-22 (2 and 3 are main's), compressed bundles of the versions it reads (none before
        /// 19); default: every version the spec has
        #[arg(long = "llvm-version")]
        llvm: Option<Release>,
        /// Print the kinds and the rules each can break
        #[arg(long = "list-kinds")]
        list_kinds: bool,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Write the manual pages (roff) generated from these definitions: the
    /// command's page on stdout, or one page per command into --dir.
    Man {
        /// Directory for offload-kit.1 and offload-kit-<command>.1.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Build a built-in example bundle, then list, validate and extract it.
    Demo {
        /// Where to write the example files.
        #[arg(long, default_value = "offload-kit-demo")]
        dir: PathBuf,
    },
    /// Run the conformance corpus against offload-kit and LLVM releases (see conformance/README.md).
    #[command(disable_help_flag = true)]
    Conformance {
        /// Runner options (`--help` lists them).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The drop-in clang-offload-packager / llvm-offload-binary (LLVM option syntax; --llvm-version=16|19|22).
    #[command(disable_help_flag = true)]
    Packager {
        /// Options as clang-offload-packager takes them.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The drop-in `llvm-objdump --offloading` of LLVM 22 (offload images, bundle entries extracted next to the input).
    #[command(disable_help_flag = true)]
    Objdump {
        /// Options and files as llvm-objdump takes them.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The drop-in `llvm-readobj --offloading` of LLVM 22 (a code object URI per bundle entry).
    #[command(disable_help_flag = true)]
    Readobj {
        /// Options and files as llvm-readobj takes them.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The drop-in clang-offload-bundler (LLVM option syntax; --llvm-version picks the release).
    #[command(disable_help_flag = true)]
    /// Make DIR a directory of LLVM's offload tools (clang-offload-bundler,
    /// clang-offload-packager, llvm-offload-binary, as the release has them)
    /// that run offload-kit as that release: `clang-N -B DIR` then uses them.
    Dropins {
        /// The release the drop-ins reproduce.
        #[arg(long = "llvm-version")]
        llvm: Release,
        /// The directory (created if need be).
        dir: PathBuf,
        /// Replace files there that are not offload-kit (LLVM's own tools).
        #[arg(long)]
        force: bool,
    },
    Bundler {
        /// Options as clang-offload-bundler takes them.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// Run the native CLI; returns the exit status. `settings` are the run's
/// from the environment; the options given here override them.
pub(crate) fn main(args: Vec<std::ffi::OsString>, mut settings: super::Settings) -> i32 {
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    if let Some(b) = cli.max_memory {
        settings.budget = b;
    }
    settings.color = cli.color;
    match run(cli.cmd, settings) {
        Ok(code) => code,
        Err(errs) => {
            super::report_errors("", &errs, SHOWN_ERRORS, settings.color);
            1
        }
    }
}

/// `offload-kit objdump|readobj ARGS`: the drop-in at its default release.
fn offloading(
    name: &str,
    tool: super::offloading::Tool,
    args: Vec<String>,
    settings: super::Settings,
) -> i32 {
    let prog = format!("offload-kit {name}");
    super::offloading::main(&prog, tool, args, Release::DEFAULT, settings)
}

/// Run one command: its exit status, or the errors that make it exit 1.
/// The drop-ins print their own errors and give their own exit status.
fn run(cmd: Cmd, settings: super::Settings) -> Result<i32, Vec<Error>> {
    let budget = settings.budget;
    match cmd {
    Cmd::Completions { shell } => {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "offload-kit", &mut out);
        write_stdout(&out)
    }
    Cmd::Man { dir } => man_pages(dir.as_deref()),
    Cmd::Dropins { llvm, dir, force } => super::dropins::run(llvm, &dir, force),
    Cmd::Bundler { args } => Ok(super::bundler::main("offload-kit bundler", args, Release::DEFAULT, settings)),
    Cmd::Packager { args } => Ok(super::packager::main("offload-kit packager", args, false, Release::DEFAULT, settings)),
    Cmd::Conformance { args } => Ok(super::conformance::main(args, settings)),
    Cmd::Objdump { args } => Ok(offloading("objdump", super::offloading::Tool::Objdump, args, settings)),
    Cmd::Readobj { args } => Ok(offloading("readobj", super::offloading::Tool::Readobj, args, settings)),
    Cmd::List {
        file, uri: true, ..
    } => list_uris(&file, budget),
    Cmd::List {
        llvm: Some(Release::Main),
        ..
    } => Err(vec![Error::other(format!(
        "list --llvm-version takes {}: LLVM main is modelled for the drop-in bundler (offload-kit bundler --llvm-version=main -list)",
        Release::listed(", ", " or ")
    ))]),
    Cmd::List {
        file, json, llvm, ..
    } => list(&file, json, llvm, budget),
    Cmd::Inspect {
        paths,
        json,
        strict,
    } => super::inspect::run(&paths, json, strict, settings),
    Cmd::Check {
        paths,
        gpu,
        json,
        kpack_path,
        strict,
    } => {
        let how = (strict, kpack_path.as_deref());
        super::inspect::run_check(&paths, &gpu, json, how, settings)
    }
    Cmd::Extract(args) => super::extract::run(args, settings),
    Cmd::Validate { file, json } => validate(&file, json, budget),
    Cmd::Demo { dir } => demo(&dir, budget),
    Cmd::Generate {
        list_kinds: true, ..
    } => {
        super::generate::list_kinds();
        Ok(0)
    }
    Cmd::Generate {
        kind,
        count,
        seed,
        out,
        malformed,
        target_ids,
        max_size,
        payloads,
        random_payloads,
        llvm,
        ..
    } => super::generate::run(&super::generate::Request {
        kind: kind.as_deref().unwrap_or_default(),
        count,
        seed,
        out: out.as_deref().unwrap_or(Path::new(".")),
        malformed: &malformed,
        target_ids,
        max_size,
        payloads: payloads.as_deref(),
        random_payloads,
        release: llvm,
        budget,
    }),
    Cmd::Compress {
        file,
        output,
        version,
        how,
    } => compress_cmd(&file, &output, version, how.method(), how.level, how.threads),
    Cmd::Decompress { file, output } => decompress_cmd(&file, &output),
    Cmd::Convert {
        file,
        to,
        output,
        how,
        kernel_name,
        prefix,
    } => match to.as_str() {
        "none" => decompress_cmd(&file, &output),
        "kpack" => {
            let storage = how.kpack_storage().map_err(|e| vec![e])?;
            super::kpack::split(&file, &output, kernel_name.as_deref(), prefix.as_deref(), storage, budget)
        }
        "bundle" if how.method.is_some() || how.level.is_some() || how.threads > 0 => {
            Err(vec![Error::other(
                "convert --to bundle writes an uncompressed fat binary: --method, --level and --threads do not apply",
            )])
        }
        "bundle" => super::kpack::join(&file, &output, budget),
        v => {
            let version = v[1..].parse().expect("v1|v2|v3");
            compress_cmd(&file, &output, version, how.method(), how.level, how.threads)
        }
    },
    Cmd::Verify { file } => verify_cmd(&file, budget),
    }
}

/// A command given too little to act on: clap's usage error, exit 2.
pub(super) fn usage_error(message: &str) -> ! {
    Cli::command()
        .error(clap::error::ErrorKind::MissingRequiredArgument, message)
        .exit()
}

/// How `compress` and `convert` compress.
#[derive(clap::Args, Debug)]
struct Compression {
    /// Compression method (default zstd; with --to kpack: zstd per code object, as ROCm's
    /// pack_tree writes; without it, uncompressed as split_artifacts writes).
    #[arg(long, value_parser = ["zstd", "zlib"])]
    method: Option<String>,
    /// Compression level (default: 3 for zstd, 6 for zlib).
    #[arg(long, allow_hyphen_values = true)]
    level: Option<i32>,
    /// zstd worker threads (opt-in, faster; the bytes then differ from LLVM's).
    #[arg(long, default_value_t = 0)]
    threads: u32,
}

impl Compression {
    /// The method, zstd unless given.
    fn method(&self) -> &str {
        self.method.as_deref().unwrap_or("zstd")
    }

    /// How `convert --to kpack` stores code objects: zstd frames when a
    /// method or level is given (zlib and threads are refused by name),
    /// else uncompressed.
    fn kpack_storage(&self) -> Result<offload_kit_format::kpack::Storage, Error> {
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

/// At most this many errors are printed; the rest are counted. A hostile
/// file can hold a million bad entries (issue 16): a screenful tells what
/// is wrong, `validate --json` lists every one.
const SHOWN_ERRORS: usize = 100;

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

fn print_listing(l: &Listing, json: bool) {
    if json {
        let mut v = serde_json::to_value(l).expect("serialisable");
        if let Some(o) = v.as_object_mut() {
            o.insert("schema".into(), LIST_SCHEMA.into());
        }
        outln!(
            "{}",
            serde_json::to_string_pretty(&v).expect("serialisable")
        );
    } else {
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
    if super::kpack::is_kpack(&input) {
        return super::kpack::list(file, &input, json);
    }
    let l = detect::list(&input, detect::ListOptions::new(llvm, budget))?;
    print_listing(&l, json);
    if let (false, Some(note)) = (json, super::kpack::host_note(&input)) {
        outln!("{}", note.map_err(|e| vec![e])?);
    }
    Ok(0)
}

/// The `validate --json` document's schema name and version
/// (docs/schema/offload-kit-validate-1.schema.json).
const VALIDATE_SCHEMA: &str = "offload-kit-validate/1";

/// The `list --json` document's schema name and version
/// (docs/schema/offload-kit-list-1.schema.json).
const LIST_SCHEMA: &str = "offload-kit-list/1";

/// Write `bytes` to stdout; a closed pipe ends the program quietly.
pub(super) fn write_stdout(bytes: &[u8]) -> Result<i32, Vec<Error>> {
    use std::io::Write;
    match std::io::stdout().lock().write_all(bytes) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(vec![Error::other(format!(
            "cannot write to standard output: {}",
            output::io_text(&e)
        ))]),
        _ => Ok(0),
    }
}

/// `man`: the command's page on stdout, or every command's page into `dir`.
fn man_pages(dir: Option<&Path>) -> Result<i32, Vec<Error>> {
    let page = super::man::man_pages(Cli::command(), dir)?;
    if dir.is_some() {
        return Ok(0);
    }
    write_stdout(&page)
}

fn validate(file: &Path, json: bool, budget: Budget) -> Result<i32, Vec<Error>> {
    let input = Input::open(file).map_err(|e| vec![e])?;
    let kpack = super::kpack::is_kpack(&input);
    if kpack && !json {
        return super::kpack::validate(file, &input, budget);
    }
    let res = if kpack {
        super::kpack::check(&input, budget).map(|_| None)
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

fn demo(dir: &Path, budget: Budget) -> Result<i32, Vec<Error>> {
    use offload_kit_llvm::bundle::binary;
    std::fs::create_dir_all(dir).map_err(|e| vec![e.into()])?;
    let entries: [(&[u8], &[u8]); 3] = [
        (b"host-x86_64-unknown-linux-gnu-", b"host object bytes\n"),
        (b"hip-amdgcn-amd-amdhsa--gfx906", b"gfx906 code object\n"),
        (
            b"hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
            b"gfx90a:xnack+ code object\n",
        ),
    ];
    let bytes = binary::write_to_vec(&entries, 4096).map_err(|e| vec![e])?;
    let path = dir.join("demo.bundle");
    output::write_in_dir(dir, "demo.bundle", &bytes).map_err(|e| vec![e])?;
    outln!(
        "wrote {} ({} bytes, 3 entries, --bundle-align=4096)",
        path.display(),
        bytes.len()
    );
    outln!("\n$ offload-kit list {}", path.display());
    let l = detect::list(&bytes, detect::ListOptions::new(None, budget))?;
    print_listing(&l, false);
    for r in Release::WITH_BINARY {
        let l = detect::list(&bytes, detect::ListOptions::new(Some(r), budget))?;
        let ids: Vec<&str> = l.entries.iter().map(|e| e.id.as_str()).collect();
        outln!("LLVM {r} -list order: {}", ids.join(", "));
    }
    outln!("\n$ offload-kit validate {}", path.display());
    validate(&path, false, budget)?;
    let out = dir.join("gfx906.co");
    // extract writes a named output as LLVM would, through a link; the
    // demo's names are its own, so whatever is there goes first.
    if std::fs::symlink_metadata(&out).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        std::fs::remove_file(&out).map_err(|e| vec![e.into()])?;
    }
    let args = super::extract::Args {
        file: path.clone(),
        id: Some("hip-amdgcn-amd-amdhsa--gfx906".into()),
        output: Some(out.clone()),
        ..Default::default()
    };
    super::extract::extract(&args, budget)?;
    outln!(
        "\nextracted hip-amdgcn-amd-amdhsa--gfx906 to {}",
        out.display()
    );
    let mut bad = bytes.clone();
    bad[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
    let badp = dir.join("corrupt.bundle");
    output::write_in_dir(dir, "corrupt.bundle", &bad).map_err(|e| vec![e])?;
    outln!(
        "\n$ offload-kit validate {}   (payload size of entry 0 set to 2^64-1)",
        badp.display()
    );
    if let Err(es) = detect::list(&bad, detect::ListOptions::new(None, budget)) {
        for e in es {
            outln!("  {e}");
        }
    }
    Ok(0)
}
