//! The drop-ins `llvm-objdump --offloading` and `llvm-readobj --offloading`
//! of LLVM 22 (spec/object-bundle.md, "LLVM 22's second reader"): the same
//! standard output, files and exit codes as the release on ELF files,
//! archives and offload binaries, under those program names or as
//! `offload-kit objdump|readobj`.
//!
//! Where LLVM 22 reads memory it does not own (an entry past the end of
//! the file: SIGSEGV, or heap bytes in the output) or dies (`llvm-readobj`
//! on an offload binary), the drop-in reports the violation instead and
//! writes nothing for that file. Outputs go next to the input (an archive
//! member's: in the working directory, under the member's name); entry IDs
//! and member names that would make an output path leave that directory
//! (`/`, NUL, `..`) are refused (CLI-5), where LLVM writes through them.
//! Only `--offloading` (and `llvm-objdump`'s
//! `--arch-name`) are modelled. `--llvm-version`, offload-kit's option as
//! every drop-in takes it, picks 22 (the default) or main (spec/object-bundle.md,
//! *LLVM main*); other releases are refused with what is modelled.

use super::Input;
use offload_kit_format::host::ar;
use offload_kit_format::host::elf::Elf;
use offload_kit_format::source::Sub;
use offload_kit_format::{rules, Error};
use offload_kit_io::output::{self, strip_os_error, OutputFile};
use offload_kit_llvm::budget::Budget;
use offload_kit_llvm::bundle::llvm_object::{self, FoundEntry};
use offload_kit_llvm::offload_binary::llvm::{self, InputKind};
use offload_kit_llvm::Release;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

mod readobj;
use readobj::{readobj_file, Summary};

/// Which tool the drop-in stands in for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `llvm-objdump --offloading`: images printed, bundle entries written.
    Objdump,
    /// `llvm-readobj --offloading`: a summary and a URI per bundle entry.
    Readobj,
}

/// `offload-kit objdump` or `offload-kit readobj`: the drop-in at its
/// default release, named by its subcommand.
pub(crate) fn native(tool: Tool, args: Vec<String>, settings: super::Settings) -> i32 {
    let prog = match tool {
        Tool::Objdump => "offload-kit objdump",
        Tool::Readobj => "offload-kit readobj",
    };
    main(prog, tool, args, Release::DEFAULT, settings)
}

/// Run the drop-in; returns the exit status.
/// `default` is the release without `--llvm-version`: 22 and main are
/// modelled, and another default is refused as `--llvm-version` would be.
/// `settings` holds the run's budget.
pub fn main(
    argv0: &str,
    tool: Tool,
    args: Vec<String>,
    default: Release,
    settings: super::Settings,
) -> i32 {
    let budget = settings.budget;
    let mut offloading = false;
    let mut release = match modelled_release(argv0, tool, &default.to_string()) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let mut arch_name: Option<String> = None;
    let mut files = Vec::new();
    let given = args.clone();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        // offload-kit's own option, as every drop-in takes it: this one
        // models LLVM 22 and main.
        if let Some(attached) = llvm_version_option(&a) {
            let Some(v) = attached.map(str::to_string).or_else(|| it.next()) else {
                elog(&format!("{argv0}: error: --llvm-version: requires a value"));
                return 1;
            };
            match modelled_release(argv0, tool, &v) {
                Ok(r) => release = r,
                Err(code) => return code,
            }
            continue;
        }
        match a.as_str() {
            "--offloading" | "-offloading" => offloading = true,
            "--arch-name" | "-arch-name" if tool == Tool::Objdump => match it.next() {
                Some(v) => arch_name = Some(v),
                None => {
                    elog(&format!("{argv0}: error: --arch-name: requires a value"));
                    return 1;
                }
            },
            _ if tool == Tool::Objdump
                && (a.starts_with("--arch-name=") || a.starts_with("-arch-name=")) =>
            {
                arch_name = a.split_once('=').map(|(_, v)| v.to_string());
            }
            "-" => files.push(a),
            // Anything else is LLVM's own tool's job (disassembly, headers):
            // handed to it whole, so that a drop-in on PATH loses nothing.
            _ if a.starts_with('-') => return hand_to_real_tool(argv0, tool, &a, &given),
            _ => files.push(a),
        }
    }
    if !offloading {
        elog(&format!(
            "{argv0}: error: offload-kit's drop-in models only --offloading (LLVM prints its --help and exits 2 without a dump option)"
        ));
        return 2;
    }
    match tool {
        Tool::Objdump => {
            if files.is_empty() {
                files.push("a.out".into());
            }
            let mut out = std::io::stdout().lock();
            for f in &files {
                if let Err(code) =
                    objdump_file(argv0, f, arch_name.as_deref(), (release, budget), &mut out)
                {
                    return code;
                }
            }
            0
        }
        Tool::Readobj => {
            if files.is_empty() {
                elog(&format!("{argv0}: error: no input files specified"));
                return 1;
            }
            let mut s = Summary::for_stdout();
            let mut code = 0;
            for f in &files {
                if let Err(c) = readobj_file(argv0, f, (release, budget), &mut s) {
                    code = c;
                    break;
                }
            }
            s.flush();
            code
        }
    }
}

/// Whether `a` is offload-kit's `--llvm-version` option (one or two
/// dashes): `Some(Some(v))` with its value attached (`=v`), `Some(None)`
/// when the value is the next argument.
fn llvm_version_option(a: &str) -> Option<Option<&str>> {
    let rest = a
        .strip_prefix("--llvm-version")
        .or_else(|| a.strip_prefix("-llvm-version"))?;
    match rest {
        "" => Some(None),
        _ => rest.strip_prefix('=').map(Some),
    }
}

/// The release `--llvm-version=v` names when this drop-in models it (22
/// and main); else an error saying what is modelled, and exit status 1.
fn modelled_release(argv0: &str, tool: Tool, v: &str) -> Result<Release, i32> {
    let name = match tool {
        Tool::Objdump => "llvm-objdump",
        Tool::Readobj => "llvm-readobj",
    };
    match v.parse::<Release>() {
        Ok(r) if r.quirks().offloading_dropins => Ok(r),
        Ok(r) => {
            elog(&format!(
                "{argv0}: error: --llvm-version={r}: the drop-in models {name} --offloading of LLVM 22 and main only (earlier releases' are not modelled)"
            ));
            Err(1)
        }
        Err(e) => {
            elog(&format!("{argv0}: error: --llvm-version: {e}"));
            Err(1)
        }
    }
}

/// Set in the environment of LLVM's tool when a command is handed to it.
const HANDED_ON: &str = "OFFLOAD_KIT_HANDED_ON";

/// Run LLVM's own tool with `args` in place of this process: the one
/// `OFFLOAD_KIT_REAL_LLVM_OBJDUMP` / `OFFLOAD_KIT_REAL_LLVM_READOBJ`
/// names, else the first of that name on `PATH` that is not offload-kit
/// itself. Without one, say what to do (exit 1).
fn hand_to_real_tool(argv0: &str, tool: Tool, option: &str, args: &[String]) -> i32 {
    let (var, names): (&str, &[&str]) = match tool {
        Tool::Objdump => ("OFFLOAD_KIT_REAL_LLVM_OBJDUMP", &["llvm-objdump"]),
        Tool::Readobj => (
            "OFFLOAD_KIT_REAL_LLVM_READOBJ",
            &["llvm-readobj", "llvm-readelf"],
        ),
    };
    // A tool that handed this command on and got offload-kit again (a
    // wrapper script on PATH that runs offload-kit, say) would hand it on
    // for ever: the guard set below stops the second hand-off.
    if std::env::var_os(HANDED_ON).is_some() {
        elog(&format!(
            "{argv0}: error: '{option}': offload-kit handed this command to LLVM's {} and was run again ({HANDED_ON} is set): what runs under that name is offload-kit, through a link or a script; set {var}=/path/to/LLVM's/{}",
            names[0], names[0]
        ));
        return 1;
    }
    let own = Path::new(argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let me = std::env::current_exe().ok();
    // Not offload-kit by any name: symbolic and hard links are the same file.
    let not_me = |p: &Path| {
        p.is_file()
            && !me
                .as_deref()
                .is_some_and(|me| crate::dropins::runs_offload_kit(p, me))
    };
    let named = std::env::var_os(var).map(std::path::PathBuf::from);
    let found = named.clone().filter(|p| not_me(p)).or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).find_map(|dir| {
            own.iter()
                .map(String::as_str)
                .chain(names.iter().copied())
                .map(|n| dir.join(n))
                .find(|p| not_me(p))
        })
    });
    let Some(real) = found else {
        let named = named
            .map(|p| format!(" ({var}={} is offload-kit or not a file)", p.display()))
            .unwrap_or_default();
        elog(&format!(
            "{argv0}: error: '{option}': offload-kit's drop-in models only --offloading{} of LLVM 22, and no other {} was found on PATH{named}: set {var}=/path/to/{} to hand such commands to LLVM's own tool",
            if tool == Tool::Objdump { " and --arch-name" } else { "" },
            names[0],
            names[0]
        ));
        return 1;
    };
    // offload-kit's own option stays here: LLVM's tool does not know it.
    let mut passed = Vec::with_capacity(args.len());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match llvm_version_option(a) {
            Some(None) => {
                it.next();
            }
            Some(Some(_)) => {}
            None => passed.push(a),
        }
    }
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new(&real)
        .args(passed)
        .env(HANDED_ON, &real)
        .exec();
    elog(&format!(
        "{argv0}: error: cannot run {}: {e}",
        real.display()
    ));
    1
}

fn elog(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// An input as LLVM names it, and its bytes.
struct Opened {
    name: String,
    input: Input,
}

/// Open `f` as LLVM 22 does (`-` is standard input, named `<stdin>`);
/// the error line on failure.
fn open(argv0: &str, f: &str, budget: Budget) -> Result<Opened, String> {
    let name = if f == "-" { "<stdin>" } else { f }.to_string();
    if f != "-" && Path::new(f).is_dir() {
        return Err(format!("{argv0}: error: '{name}': Is a directory"));
    }
    match Input::open_as_llvm(Path::new(f), budget) {
        Ok(input) => Ok(Opened { name, input }),
        Err(e) => {
            let m = e.message();
            let m = match m.rfind("': ") {
                Some(p) if m.starts_with('\'') => &m[p + 3..],
                _ => m,
            };
            Err(format!("{argv0}: error: '{name}': {}", strip_os_error(m)))
        }
    }
}

const NOT_AN_OBJECT: &str = "The file was not recognized as a valid object file";

/// An ELF member of an archive (or the file itself): its bytes, where they
/// start in the file, the name LLVM prints and the name its outputs and
/// URIs start with.
struct Object<'a> {
    data: &'a [u8],
    /// The whole input: read through windows, copied from by the kernel.
    file: &'a Input,
    /// An archive member: `stem` is its untrusted name.
    member: bool,
    base: u64,
    shown: String,
    stem: String,
}

/// The ELF objects of an archive, or why LLVM stops on it (an offload
/// binary member: the release's own error).
fn archive_objects<'a>(
    data: &'a [u8],
    file: &'a Input,
    archive: &str,
) -> Result<Vec<Object<'a>>, Error> {
    let mut v = Vec::new();
    for m in ar::members(data, 0)? {
        let body = &data[m.data_offset as usize..][..m.size as usize];
        match llvm::input_kind(body) {
            InputKind::Elf => v.push(Object {
                data: body,
                file,
                member: true,
                base: m.data_offset,
                shown: format!("{archive}({})", m.name),
                stem: m.name.clone(),
            }),
            InputKind::OffloadBinary => {
                return Err(Error::at(
                    rules::OB_21,
                    m.data_offset,
                    format!(
                        "member '{}' is an offload binary: LLVM 22 reads it as an object file and fails",
                        m.name
                    ),
                ))
            }
            // Text, bitcode and other members are passed over silently.
            _ => {}
        }
    }
    Ok(v)
}

impl<'a> Object<'a> {
    /// The opened file itself as the object.
    fn whole(o: &'a Opened) -> Object<'a> {
        Object {
            data: o.input.bytes(),
            file: &o.input,
            member: false,
            base: 0,
            shown: o.name.clone(),
            stem: o.name.clone(),
        }
    }

    /// The object's bytes as a source of their own, windows of the input.
    fn contents(&self) -> Sub<'_> {
        Sub::new(self.file, self.base, self.data.len() as u64).expect("the object lies in its file")
    }
}

// ---------------------------------------------------------------------------
// llvm-objdump --offloading

fn objdump_file(
    argv0: &str,
    f: &str,
    arch_name: Option<&str>,
    (release, budget): (Release, Budget),
    out: &mut impl Write,
) -> Result<(), i32> {
    let o = open(argv0, f, budget).map_err(|line| {
        elog(&line);
        1
    })?;
    let data = o.input.bytes();
    match llvm::input_kind(data) {
        InputKind::OffloadBinary => {
            // Images only, as the packager's --objdump-offloading prints them.
            let run =
                llvm::objdump_offloading(data, &o.name, (release, budget)).expect("22 has it");
            emit(out, &run.stdout);
            image_failure(argv0, &run)
        }
        InputKind::Elf => {
            objdump_object(argv0, &Object::whole(&o), arch_name, (release, budget), out)
        }
        InputKind::Archive => {
            let objects = match archive_objects(data, &o.input, &o.name) {
                Ok(v) => v,
                Err(_) => {
                    // LLVM's own error for the archive (its images model).
                    let run = llvm::objdump_offloading(data, &o.name, (release, budget))
                        .expect("22 has it");
                    emit(out, &run.stdout);
                    return image_failure(argv0, &run);
                }
            };
            for obj in &objects {
                objdump_object(argv0, obj, arch_name, (release, budget), out)?;
            }
            Ok(())
        }
        _ => match coff_object(data) {
            Some(c) if release.quirks().offloading_coff_images => {
                // main: the images of `.llvm.offloading`, then the bundles.
                let _ = write!(out, "\n{}:\tfile format {}\n", o.name, c.objdump_format);
                let images = llvm::extract_offload_binaries(data, &o.name, release);
                coff_images(argv0, &o.name, images, release, out)?;
                let found =
                    llvm_object::find_in_sections_as(&data, coff_sections(&c), release, budget);
                write_entries(argv0, &Object::whole(&o), found, arch_name, release, out)
            }
            Some(c) => {
                let _ = write!(out, "\n{}:\tfile format {}\n", o.name, c.objdump_format);
                coff_offloading(&c, data).map_err(|m| {
                    let _ = out.flush();
                    elog(&format!(
                        "{argv0}: error: '{}': while extracting offload FatBin bundles: {m}",
                        o.name
                    ));
                    1
                })?;
                // Then the offload binaries of its `.llvm.offloading` sections.
                let images = llvm::extract_offload_binaries(data, &o.name, release);
                coff_images(argv0, &o.name, images, release, out)
            }
            None => match macho(data) {
                // LLVM 22 names the file, warns, and goes on (exit 0).
                Some((format, _, _)) => {
                    let format = format.to_lowercase();
                    let _ = write!(out, "\n{}:\tfile format {format}\n", o.name);
                    let _ = out.flush();
                    elog(&format!(
                        "{argv0}: warning: '{}': --offloading is currently only supported for COFF and ELF targets",
                        o.name
                    ));
                    Ok(())
                }
                None => {
                    elog(&format!("{argv0}: error: '{}': {NOT_AN_OBJECT}", o.name));
                    Err(1)
                }
            },
        },
    }
}

/// The images of a COFF object's `.llvm.offloading` sections, printed,
/// or the release's error.
fn coff_images(
    argv0: &str,
    name: &str,
    images: Result<Vec<llvm::LlvmImage<'_>>, llvm::Failure>,
    release: Release,
    out: &mut impl Write,
) -> Result<(), i32> {
    match images {
        Ok(images) => {
            let run = llvm::objdump_images(&images, name, release);
            emit(out, &run.stdout);
            image_failure(argv0, &run)
        }
        Err(llvm::Failure::Error { message, error }) => {
            let _ = out.flush();
            elog(&format!(
                "{argv0}: error: '{name}': while extracting offloading files: {message} [{error}]"
            ));
            Err(1)
        }
        Err(llvm::Failure::Unsafe { error }) => {
            let _ = out.flush();
            elog(&format!("{argv0}: error: '{name}': {error}"));
            Err(1)
        }
    }
}

/// A Mach-O object as LLVM 22's tools name it
/// (`MachOObjectFile::getFileFormatName` and `getArch`): format (objdump
/// prints it lower-cased), architecture and address size. `None` for
/// anything but Mach-O.
fn macho(data: &[u8]) -> Option<(&'static str, &'static str, u32)> {
    let magic = u32::from_le_bytes(data.get(..4)?.try_into().ok()?);
    let cpu = u32::from_le_bytes(data.get(4..8)?.try_into().ok()?);
    Some(match (magic, cpu) {
        (0xfeed_facf, 0x0100_0007) => ("Mach-O 64-bit x86-64", "x86_64", 64),
        (0xfeed_facf, 0x0100_000c) => ("Mach-O arm64", "aarch64", 64),
        (0xfeed_facf, 0x0100_0012) => ("Mach-O 64-bit ppc64", "powerpc64", 64),
        (0xfeed_facf, _) => ("Mach-O 64-bit unknown", "unknown", 64),
        (0xfeed_face, 7) => ("Mach-O 32-bit i386", "i386", 32),
        (0xfeed_face, 12) => ("Mach-O arm", "arm", 32),
        (0xfeed_face, 18) => ("Mach-O 32-bit ppc", "powerpc", 32),
        (0xfeed_face, _) => ("Mach-O 32-bit unknown", "unknown", 32),
        _ => return None,
    })
}

/// A COFF object as LLVM 22's tools name it.
struct CoffObject<'a> {
    objdump_format: &'static str,
    readobj_format: &'static str,
    arch: &'static str,
    bits: u32,
    coff: offload_kit_format::host::coff::Coff<'a>,
}

/// A COFF object (not a PE image) of a machine whose names are modelled:
/// AMD64 and i386, what clang's Windows HIP builds produce.
fn coff_object(data: &[u8]) -> Option<CoffObject<'_>> {
    let machine = u16::from_le_bytes([*data.first()?, *data.get(1)?]);
    let (objdump_format, readobj_format, arch, bits) = match machine {
        0x8664 => ("coff-x86-64", "COFF-x86-64", "x86_64", 64),
        0x14c => ("coff-i386", "COFF-i386", "i386", 32),
        _ => return None,
    };
    let coff = offload_kit_format::host::coff::parse(data)
        .ok()
        .filter(|c| !c.image)?;
    Some(CoffObject {
        objdump_format,
        readobj_format,
        arch,
        bits,
        coff,
    })
}

/// LLVM 22 reads no bundle of a COFF object: the first section whose
/// contents start with a bundle's magic fails with these words (`TODO: add
/// COFF Support` in OffloadBundle.cpp). Its `.llvm.offloading` images are
/// read apart (`llvm::extract_offload_binaries`).
fn coff_offloading(c: &CoffObject, data: &[u8]) -> Result<(), String> {
    use offload_kit_format::raw::{bundle::MAGIC, ccob::MAGIC as CCOB_MAGIC};
    for s in &c.coff.sections {
        let contents = usize::try_from(s.offset)
            .ok()
            .zip(usize::try_from(s.size).ok())
            .and_then(|(o, n)| data.get(o..o.checked_add(n)?))
            .ok_or_else(|| llvm_object::UNEXPECTED_EOF.to_string())?;
        if (contents.len() > MAGIC.as_slice().len() && contents.starts_with(MAGIC))
            || contents.starts_with(CCOB_MAGIC)
        {
            return Err(COFF_UNSUPPORTED.into());
        }
    }
    Ok(())
}

/// LLVM 22's words for a bundle in a COFF object.
const COFF_UNSUPPORTED: &str = "COFF object files not supported";

fn emit(out: &mut impl Write, text: &str) {
    let _ = out.write_all(text.as_bytes());
}

/// The exit for a finished images run: its error, if any, on stderr.
fn image_failure(argv0: &str, run: &llvm::ObjdumpRun) -> Result<(), i32> {
    for w in &run.warnings {
        elog(&format!("{argv0}: warning: {w}"));
    }
    if let Some(e) = &run.unsafe_read {
        elog(&format!("{argv0}: error: {e}"));
        return Err(1);
    }
    match (&run.error, &run.detail) {
        (Some(e), Some(d)) => elog(&format!("{argv0}: error: {e} [{d}]")),
        (Some(e), None) => elog(&format!("{argv0}: error: {e}")),
        (None, _) => return Ok(()),
    }
    Err(1)
}

/// One ELF object: the header and images, then every bundle entry
/// written to `<stem>.<bundle>.<id>` and named on stdout once written.
fn objdump_object(
    argv0: &str,
    obj: &Object<'_>,
    arch_name: Option<&str>,
    (release, budget): (Release, Budget),
    out: &mut impl Write,
) -> Result<(), i32> {
    let run = llvm::objdump_offloading(obj.data, &obj.shown, (release, budget)).expect("22 has it");
    emit(out, &run.stdout);
    let fail = |out: &mut dyn Write, line: String| {
        let _ = out.flush();
        elog(&format!("{argv0}: error: '{}': {line}", obj.shown));
        Err(1)
    };
    let _ = out.flush();
    image_failure(argv0, &run)?;
    let elf = match Elf::parse(obj.data) {
        Ok(e) => e,
        Err(e) => return fail(out, e.rebase(obj.base).to_string()),
    };
    let found = llvm_object::find_bundles_as(&elf, &obj.contents(), release, budget);
    write_entries(argv0, obj, found, arch_name, release, out)
}

/// The COFF sections as the bundle reader walks them (LLVM main reads
/// bundles in COFF objects, llvm#199574; 22 refuses them).
fn coff_sections(c: &CoffObject<'_>) -> Vec<llvm_object::SectionRange> {
    (c.coff.sections.iter())
        .map(|s| llvm_object::SectionRange {
            index: s.index,
            header_pos: s.header_pos,
            offset: s.offset,
            size: s.size,
            nobits: false,
        })
        .collect()
}

/// Every bundle entry `found` in `obj` written to `<stem>.<bundle>.<id>`
/// and named on stdout once written, as `release`'s objdump does.
fn write_entries(
    argv0: &str,
    obj: &Object<'_>,
    mut found: llvm_object::Found,
    arch_name: Option<&str>,
    release: Release,
    out: &mut impl Write,
) -> Result<(), i32> {
    let fail = |out: &mut dyn Write, line: String| {
        let _ = out.flush();
        elog(&format!("{argv0}: error: '{}': {line}", obj.shown));
        Err(1)
    };
    // Taken, not copied: the decompressed bundles can be large.
    let decompressed = std::mem::take(&mut found.decompressed);
    let entries = match found.into_result() {
        Ok(v) => v,
        Err((m, d)) => {
            return fail(
                out,
                format!(
                    "while extracting offload FatBin bundles: {m} [{}]",
                    d.rebase(obj.base)
                ),
            )
        }
    };
    // --arch-name=X: LLVM 22 skips the entries whose ID contains X; main
    // (llvm#216161) keeps only those, an empty X keeping all.
    let wanted = |e: &&FoundEntry| match arch_name {
        None => true,
        Some(a) if release.quirks().arch_name_keeps_matches => {
            a.is_empty() || contains(&e.id, a.as_bytes())
        }
        Some(a) => !contains(&e.id, a.as_bytes()),
    };
    let entries: Vec<&FoundEntry> = entries.iter().filter(wanted).collect();
    // An archive member's name starts its outputs' names in the working
    // directory: an untrusted name must stay one file name there (CLI-5).
    if obj.member
        && (obj.stem.is_empty()
            || obj.stem == "."
            || obj.stem == ".."
            || obj.stem.contains(['/', '\0']))
    {
        let d = Error::at(
            rules::CLI_5,
            obj.base,
            format!(
                "archive member name '{}' would put its outputs outside the working directory; LLVM {release} writes through it",
                obj.stem.escape_debug()
            ),
        );
        return fail(out, format!("while extracting offload Bundle Entries: {d}"));
    }
    let mut planned = Vec::new();
    // LLVM main's refusal of an entry past its source, after the entries
    // before it were written (22 reads on: offload-kit refuses first).
    let mut stop = None;
    for e in &entries {
        let id = String::from_utf8_lossy(&e.id);
        let source = match entry_source(e, obj, &decompressed, release) {
            Ok(s) => s,
            Err(Stop::Unsafe(d)) => {
                return fail(out, format!("while extracting offload Bundle Entries: {d}"))
            }
            Err(Stop::Llvm(m, d)) => {
                stop = Some(format!(
                    "while extracting offload Bundle Entries: {m} [{d}]"
                ));
                break;
            }
        };
        if e.id.contains(&b'/') || e.id.contains(&0) {
            let d = e.error(
                rules::CLI_5,
                obj.base,
                format!(
                    "entry ID '{}' would put its file outside the input's directory; LLVM {release} writes through it",
                    id.escape_debug()
                ),
            );
            return fail(out, format!("while extracting offload Bundle Entries: {d}"));
        }
        // The name as LLVM makes it, byte for byte (an ID need not be UTF-8).
        let mut name = format!("{}.{}.", obj.stem, e.bundle).into_bytes();
        name.extend_from_slice(&e.id);
        planned.push((name, source));
    }
    // Every file of the object, then the lines (LLVM prints each once written).
    let mut files = Vec::new();
    for (name, source) in &planned {
        let path = Path::new(std::ffi::OsStr::from_bytes(name));
        let written = OutputFile::create_replacing(path).and_then(|mut f| {
            match source {
                Source::File(at, len) => super::copy_range(obj.file, *at, *len, &mut f)?,
                Source::Bytes(b) => f.write_all(b)?,
            }
            // At most output::KEEP_OPEN files held open, however many entries (ulimit -n).
            f.close()?;
            Ok(f)
        });
        match written {
            Ok(f) => files.push(f),
            Err(e) => {
                return fail(
                    out,
                    format!(
                        "while extracting offload Bundle Entries: {}",
                        io_message(&e)
                    ),
                )
            }
        }
    }
    if let Err(e) = output::commit_all(files) {
        return fail(
            out,
            format!(
                "while extracting offload Bundle Entries: {}",
                io_message(&e)
            ),
        );
    }
    for (name, ..) in &planned {
        let _ = out.write_all(b"Extracting offload bundle: ");
        let _ = out.write_all(&super::term::for_terminal(
            super::term::Stream::Stdout,
            name,
        ));
        let _ = out.write_all(b"\n");
    }
    match stop {
        Some(line) => fail(out, line),
        None => Ok(()),
    }
}

/// Where an entry's bytes come from.
enum Source<'a> {
    /// A range of the input file (absolute).
    File(u64, u64),
    /// A slice of a decompressed bundle (LLVM main).
    Bytes(&'a [u8]),
}

/// Why an entry is not written.
enum Stop {
    /// The release would read memory it does not own: offload-kit refuses.
    Unsafe(Error),
    /// LLVM main's own error (its message), with offload-kit's detail.
    Llvm(String, Error),
}

/// The bytes `release`'s objdump writes for `e`. 22 reads the file (also
/// for a compressed entry, at its offset within the decompressed bundle);
/// main reads a compressed entry from its decompressed bundle, without a
/// bound, and checks an uncompressed one against the object's size, in
/// the order and words of `extractCodeObject` (llvm/lib/Object/OffloadBundle.cpp).
fn entry_source<'d>(
    e: &FoundEntry,
    obj: &Object<'_>,
    decompressed: &'d [(usize, Vec<u8>)],
    release: Release,
) -> Result<Source<'d>, Stop> {
    let len = obj.data.len() as u64;
    let id = String::from_utf8_lossy(&e.id);
    let unsafe_read = |what: String| {
        Stop::Unsafe(e.error(
            rules::BIN_5,
            obj.base,
            format!(
                "entry '{}' [{:#x}, +{:#x}) does not lie inside {what}; LLVM {release} copies memory it does not own here (SIGSEGV, or heap bytes in the output)",
                id.escape_debug(),
                e.offset,
                e.size,
            ),
        ))
    };
    if release.quirks().main_code_object_uris && e.compressed {
        let bytes = decompressed
            .iter()
            .find(|(b, _)| *b == e.bundle)
            .map_or(&[][..], |(_, d)| d.as_slice());
        let end = e
            .offset
            .checked_add(e.size)
            .filter(|&x| x <= bytes.len() as u64);
        return match end {
            Some(end) => Ok(Source::Bytes(&bytes[e.offset as usize..end as usize])),
            None => Err(unsafe_read(format!(
                "the {} bytes of its decompressed bundle",
                bytes.len()
            ))),
        };
    }
    if release.quirks().main_code_object_uris {
        let (o, s) = (e.offset, e.size);
        let message = if s > len {
            Some(format!("size in URI ({s}) is larger than source ({len})"))
        } else if o > len {
            Some(format!(
                "offset in URI ({o}) is beyond the end of the source ({len})"
            ))
        } else if o + s > len {
            Some(format!(
                "offset + size ({}) in URI is beyond the end of the source ({len})",
                o + s
            ))
        } else {
            None
        };
        return match message {
            None => Ok(Source::File(obj.base + o, s)),
            Some(m) => {
                let d = e.error(
                    rules::BIN_5,
                    obj.base,
                    format!("entry '{}' [{o:#x}, +{s:#x}) does not lie inside the {len} bytes of the object", id.escape_debug()),
                );
                Err(Stop::Llvm(m, d))
            }
        };
    }
    match e.file_range(len) {
        Some((at, n)) => Ok(Source::File(obj.base + at, n)),
        None => Err(unsafe_read(format!(
            "the {len} bytes of the object{}",
            if e.compressed {
                " (the offset is within the decompressed bundle, yet LLVM 22 reads the host file)"
            } else {
                ""
            }
        ))),
    }
}

/// LLVM's text for an I/O error: the OS's words without offload-kit's
/// path prefix or " (os error N)".
fn io_message(e: &Error) -> String {
    let m = e.message();
    let m = match m.rfind("': ") {
        Some(p) => &m[p + 3..],
        None => m,
    };
    strip_os_error(m).to_string()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}
