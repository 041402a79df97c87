//! What `llvm-objdump --offloading` prints of offload binaries, and the
//! names LLVM gives ELF files and their architectures in that output.

use super::*;

/// The `OFFLOADING IMAGE` blocks `llvm-objdump --offloading` of `release`
/// prints for `images` of the file `file`, numbered from 0 (LLVM main's
/// nested images and warnings included: [`ObjdumpRun`]).
pub fn objdump_images(images: &[LlvmImage<'_>], file: &str, release: Release) -> ObjdumpRun {
    let mut run = ObjdumpRun::default();
    print_images(&mut run, images, file, release);
    run
}

/// LLVM's words for an ELF file whose section header table does not hold
/// (`ELFFile::sections`, llvm/include/llvm/Object/ELF.h, LLVM 22), its
/// checks in its order; `None` when these checks pass.
pub fn llvm_elf_error(data: &[u8]) -> Option<String> {
    let e = elf_ident(data)?.encoding;
    let (shoff, shentsize, shnum) = match e.is64 {
        true => (e.u64(data, 0x28)?, e.u16(data, 0x3a)?, e.u16(data, 0x3c)?),
        false => (
            u64::from(e.u32(data, 0x20)?),
            e.u16(data, 0x2e)?,
            e.u16(data, 0x30)?,
        ),
    };
    let (shentsize, shnum) = (u64::from(shentsize), u64::from(shnum));
    let (shdr, align, size_at) = if e.is64 { (64u64, 8, 32) } else { (40, 4, 20) };
    if shoff == 0 {
        return None;
    }
    if shentsize != shdr {
        return Some(format!("invalid e_shentsize in ELF header: {shentsize}"));
    }
    if shoff
        .checked_add(shdr)
        .is_none_or(|e| e > data.len() as u64)
    {
        return Some(format!(
            "section header table goes past the end of the file: e_shoff = 0x{shoff:x}"
        ));
    }
    if shoff % align != 0 {
        return Some("invalid alignment of section headers".into());
    }
    // e_shnum 0: the count is the first header's sh_size.
    let count = if shnum == 0 {
        e.word(data, shoff + size_at)?
    } else {
        shnum
    };
    if count > u64::MAX / shdr {
        return Some(format!(
            "invalid number of sections specified in the NULL section's sh_size field ({count})"
        ));
    }
    match shoff.checked_add(count * shdr) {
        None => Some(format!(
            "invalid section header table offset (e_shoff = 0x{shoff:x}) or invalid number of sections specified in the first section header's sh_size field (0x{count:x})"
        )),
        Some(end) if end > data.len() as u64 => {
            Some("section table goes past the end of file".into())
        }
        Some(_) => None,
    }
}

/// `Triple::getArchTypeName` of an ELF file's architecture, as
/// `ELFObjectFile::getArch` derives it from `e_machine`, the class, the
/// byte order and, for AMDGPU, the processor in `e_flags`
/// (llvm/include/llvm/Object/ELFObjectFile.h, LLVM 22): `llvm-readobj`'s
/// `Arch:`.
pub fn elf_arch_name_of(machine: u16, is64: bool, big_endian: bool, e_flags: u32) -> &'static str {
    let le = !big_endian;
    match machine {
        4 => "m68k",
        3 | 6 => "i386",
        62 => "x86_64",
        183 if le => "aarch64",
        183 => "aarch64_be",
        40 => "arm",
        83 => "avr",
        164 => "hexagon",
        244 => "lanai",
        8 => match (is64, le) {
            (false, true) => "mipsel",
            (false, false) => "mips",
            (true, true) => "mips64el",
            (true, false) => "mips64",
        },
        105 => "msp430",
        20 if le => "powerpcle",
        20 => "powerpc",
        21 if le => "powerpc64le",
        21 => "powerpc64",
        243 => match (is64, le) {
            (false, true) => "riscv32",
            (false, false) => "riscv32be",
            (true, true) => "riscv64",
            (true, false) => "riscv64be",
        },
        22 => "s390x",
        2 | 18 if le => "sparcel",
        2 | 18 => "sparc",
        43 => "sparcv9",
        224 if le => match e_flags & 0xff {
            0x01..=0x10 => "r600",
            0x20..=0x5f => "amdgcn",
            _ => "unknown",
        },
        190 if !is64 => "nvptx",
        190 => "nvptx64",
        247 if le => "bpfel",
        247 => "bpfeb",
        251 => "ve",
        252 => "csky",
        258 if is64 => "loongarch64",
        258 => "loongarch32",
        94 => "xtensa",
        _ => "unknown",
    }
}

/// What LLVM 22's tools name an ELF file by, from its header alone (the
/// section table need not hold): `e_machine`, class and byte order, and
/// `e_flags` (0 when the header is cut before it). `None` before
/// `e_machine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElfIdent {
    /// `e_machine`.
    pub machine: u16,
    /// Class and byte order.
    pub encoding: crate::host::elf::Encoding,
    /// `e_flags`.
    pub flags: u32,
}

/// The [`ElfIdent`] of `data`, an ELF file or its first bytes.
pub fn elf_ident(data: &[u8]) -> Option<ElfIdent> {
    let encoding = crate::host::elf::Encoding {
        is64: *data.get(4)? == 2,
        big_endian: *data.get(5)? == 2,
    };
    Some(ElfIdent {
        machine: encoding.u16(data, 18)?,
        encoding,
        flags: encoding
            .u32(data, if encoding.is64 { 0x30 } else { 0x24 })
            .unwrap_or(0),
    })
}

/// The file format name `llvm-objdump` prints for an ELF file.
pub fn elf_format_name(elf: &Elf<'_>) -> String {
    elf_format_name_of(elf.machine, elf.encoding.is64, elf.encoding.big_endian).to_string()
}

/// [`elf_format_name`] from the ELF header's fields alone (`e_machine`,
/// the class and the byte order), for a file whose sections do not parse.
pub fn elf_format_name_of(m: u16, is64: bool, big_endian: bool) -> &'static str {
    let le = !big_endian;
    if is64 {
        match m {
            3 => "elf64-i386",
            62 => "elf64-x86-64",
            183 if le => "elf64-littleaarch64",
            183 => "elf64-bigaarch64",
            21 if le => "elf64-powerpcle",
            21 => "elf64-powerpc",
            243 => "elf64-littleriscv",
            22 => "elf64-s390",
            43 => "elf64-sparc",
            8 => "elf64-mips",
            224 => "elf64-amdgpu",
            247 => "elf64-bpf",
            251 => "elf64-ve",
            258 => "elf64-loongarch",
            _ => "elf64-unknown",
        }
    } else {
        match m {
            4 => "elf32-m68k",
            3 => "elf32-i386",
            6 => "elf32-iamcu",
            62 => "elf32-x86-64",
            40 if le => "elf32-littlearm",
            40 => "elf32-bigarm",
            83 => "elf32-avr",
            164 => "elf32-hexagon",
            244 => "elf32-lanai",
            8 => "elf32-mips",
            105 => "elf32-msp430",
            20 if le => "elf32-powerpcle",
            20 => "elf32-powerpc",
            243 => "elf32-littleriscv",
            252 => "elf32-csky",
            2 | 18 => "elf32-sparc",
            224 => "elf32-amdgpu",
            258 => "elf32-loongarch",
            94 => "elf32-xtensa",
            _ => "elf32-unknown",
        }
    }
}

/// What `llvm-objdump --offloading <file>` of a release does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ObjdumpRun {
    /// Standard output.
    pub stdout: String,
    /// The error line after `llvm-objdump: error: ` (the program prefix
    /// depends on argv\[0\]), if it fails; the exit status is then 1.
    pub error: Option<String>,
    /// Set when the release would read memory it does not own: the
    /// rule and offset; `stdout` and `error` are then what precedes it.
    pub unsafe_read: Option<Error>,
    /// The rule and absolute offset behind `error` (offload-kit's detail,
    /// printed after LLVM's message).
    pub detail: Option<Error>,
    /// Warnings after `llvm-objdump: warning: `, in order (LLVM main: a
    /// nested offload binary it cannot read); they do not fail the run.
    pub warnings: Vec<String>,
}

/// Nested offload binaries LLVM main's objdump follows before offload-kit
/// stops (it recurses without a bound).
const MAX_NESTING: usize = 16;
/// Image blocks printed at most: nested binaries may name one inner binary
/// from many entries, so the blocks can grow exponentially with the depth.
const MAX_BLOCKS: usize = 1 << 16;

fn print_images(run: &mut ObjdumpRun, images: &[LlvmImage<'_>], file: &str, release: Release) {
    let mut blocks = 0;
    for (i, img) in images.iter().enumerate() {
        if print_image(run, img, &i.to_string(), 0, file, release, &mut blocks).is_err() {
            return;
        }
    }
}

/// One image block at nesting `level` (LLVM main indents each level by
/// two spaces and numbers inner images `<outer>.<inner>`), then, on main,
/// its size and the images of an offload binary it holds. `Err` when the
/// run stopped (`run.unsafe_read`).
fn print_image(
    run: &mut ObjdumpRun,
    img: &LlvmImage<'_>,
    index: &str,
    level: usize,
    file: &str,
    release: Release,
    blocks: &mut usize,
) -> Result<(), ()> {
    use std::fmt::Write as _;
    *blocks += 1;
    if *blocks > MAX_BLOCKS {
        run.unsafe_read = Some(Error::at(
            rules::CLI_6,
            img.image_offset,
            format!("more than {MAX_BLOCKS} nested images (inner binaries named from many entries): past what offload-kit prints"),
        ));
        return Err(());
    }
    let pad = "  ".repeat(level);
    let _ = write!(
        run.stdout,
        "\n{pad}OFFLOADING IMAGE [{index}]:\n{pad}{:<16}{}\n{pad}{:<16}{}\n{pad}{:<16}{}\n{pad}{:<16}{}\n",
        "kind",
        image_kind_objdump_name(img.image_kind, release),
        "arch",
        img.arch(),
        "triple",
        img.triple(),
        "producer",
        offload_kind_name(img.offload_kind, release)
    );
    // The image size and nested binaries: llvm#185425 (23 on).
    if !release.quirks().offload_binary_v2_reader {
        return Ok(());
    }
    let _ = writeln!(
        run.stdout,
        "{pad}{:<16}{} bytes",
        "image size", img.image_size
    );
    // `identify_magic` reads the image's first bytes: past the binary,
    // memory main does not own.
    let bytes = match &img.image {
        Ok(b) => *b,
        Err(_) if img.image_size < 4 => return Ok(()),
        Err(e) => {
            run.unsafe_read = Some(e.clone());
            return Err(());
        }
    };
    if !bytes.starts_with(&crate::format::offload_binary::MAGIC) {
        return Ok(());
    }
    if level >= MAX_NESTING {
        run.unsafe_read = Some(Error::at(
            rules::OB_21,
            img.image_offset,
            format!("offload binaries nested more than {MAX_NESTING} deep: LLVM main recurses without a bound"),
        ));
        return Err(());
    }
    // The binary holding this image is the input at level 0, the inner
    // buffer LLVM names `inner-offload-binary` below.
    let holder = if level == 0 { file } else { INNER_BINARY };
    match extract_offload_files(bytes, img.image_offset, INNER_BINARY, release) {
        Ok(inner) => {
            let _ = writeln!(run.stdout, "{pad}{:<16}{}", "nested images", inner.len());
            for (j, x) in inner.iter().enumerate() {
                print_image(
                    run,
                    x,
                    &format!("{index}.{j}"),
                    level + 1,
                    file,
                    release,
                    blocks,
                )?;
            }
            Ok(())
        }
        Err(Failure::Error { message, error }) => {
            run.warnings.push(format!(
                "'{holder}': failed to extract nested OffloadBinary: {message} [{error}]"
            ));
            Ok(())
        }
        Err(Failure::Unsafe { error }) => {
            run.unsafe_read = Some(error);
            Err(())
        }
    }
}

/// The buffer name LLVM main's objdump gives a nested offload binary.
const INNER_BINARY: &str = "inner-offload-binary";

/// `llvm-objdump --offloading` of `release` on `data` named `file` (as
/// given on the command line), what it inflates held within `budget`.
/// `None` for LLVM 14, which has no `--offloading`.
pub fn objdump_offloading(
    data: &[u8],
    file: &str,
    (release, budget): (Release, crate::budget::Budget),
) -> Option<ObjdumpRun> {
    if !release.quirks().objdump_offloading {
        return None;
    }
    let mut run = ObjdumpRun::default();
    let fail = |run: &mut ObjdumpRun, f: Failure, prefix: &str| match f {
        Failure::Error { message, error } => {
            run.error = Some(format!("{prefix}{message}"));
            run.detail = Some(error);
        }
        Failure::Unsafe { error } => run.unsafe_read = Some(error),
    };
    match input_kind(data) {
        InputKind::OffloadBinary => {
            // main reads compressed version 3 binaries inflated.
            let inflated = match release.quirks().main_offload_binary_reader {
                true => main_inflated(data, budget),
                false => Ok(std::borrow::Cow::Borrowed(data)),
            };
            let data: &[u8] = match &inflated {
                Ok(d) => d,
                Err(f) => {
                    fail(&mut run, f.clone(), &format!("'{file}': "));
                    return Some(run);
                }
            };
            // createBinary: OffloadBinary::create on the whole file.
            if let Err(f) = create_binary(data, 0, release) {
                fail(&mut run, f, &format!("'{file}': "));
                return Some(run);
            }
            match extract_offload_files(data, 0, file, release) {
                Ok(imgs) => print_images(&mut run, &imgs, file, release),
                Err(f) => fail(
                    &mut run,
                    f,
                    &format!("'{file}': while extracting offloading files: "),
                ),
            }
        }
        InputKind::Elf => objdump_elf(data, 0, file, file, release, &mut run),
        InputKind::Archive => match archive::members(data, 0) {
            Ok(members) => {
                for m in members {
                    let body = &data[m.data_offset as usize..][..m.size as usize];
                    if input_kind(body) == InputKind::OffloadBinary {
                        // `getAsBinary` reads the member in place: a member
                        // that is not 8-aligned in the file fails, one that
                        // parses is "not an object file".
                        let r = if m.data_offset % 8 != 0 {
                            Err(Failure::parse(rules::OB_21, m.data_offset, "misaligned"))
                        } else {
                            create_binary(body, m.data_offset, release)
                        };
                        run.error = Some(match r {
                            Err(Failure::Error { message, error }) => {
                                run.detail = Some(if m.data_offset % 8 != 0 {
                                    Error::at(
                                        rules::OB_21,
                                        m.data_offset,
                                        format!(
                                            "member '{}' holds an offload binary at an offset that is not a multiple of 8: llvm-objdump reads members in place",
                                            m.name
                                        ),
                                    )
                                } else {
                                    error
                                });
                                format!("{file}({}): {message}", m.name)
                            }
                            Err(Failure::Unsafe { error }) => {
                                run.unsafe_read = Some(error);
                                break;
                            }
                            Ok(()) => {
                                run.detail = Some(Error::at(
                                    rules::OB_21,
                                    m.header_offset,
                                    format!(
                                        "member '{}' is a raw offload binary, which llvm-objdump does not read as an archive member (the packager does)",
                                        m.name
                                    ),
                                ));
                                format!("'{file}': {NOT_OBJECT}")
                            }
                        });
                        break;
                    }
                    if input_kind(body) != InputKind::Elf {
                        continue;
                    }
                    let shown = format!("{file}({})", m.name);
                    objdump_elf(body, m.data_offset, &shown, &m.name, release, &mut run);
                    if run.error.is_some() || run.unsafe_read.is_some() {
                        break;
                    }
                }
            }
            Err(e) => {
                run.error = Some(format!("'{file}': {}", llvm_archive_message(data, 0, &e)));
                run.detail = Some(e);
            }
        },
        // A COFF object (AMD64 or i386): its `.llvm.offloading` sections.
        InputKind::Other if coff_format(data).is_some() => {
            let format = coff_format(data).unwrap_or_default();
            run.stdout
                .push_str(&format!("\n{file}:\tfile format {format}\n"));
            match extract_offload_binaries(data, file, release) {
                Ok(imgs) => print_images(&mut run, &imgs, file, release),
                Err(f) => fail(
                    &mut run,
                    f,
                    &format!("'{file}': while extracting offloading files: "),
                ),
            }
        }
        _ => {
            run.error = Some(format!("'{file}': {NOT_OBJECT}"));
            run.detail = Some(super::super::magic_near_miss(data).unwrap_or_else(|| {
                Error::at(
                    rules::OB_1,
                    0,
                    "neither an offload binary (magic 10 FF 10 AD), an ELF file nor an archive",
                )
            }));
        }
    }
    Some(run)
}

fn objdump_elf(
    data: &[u8],
    base: u64,
    shown: &str,
    identifier: &str,
    release: Release,
    run: &mut ObjdumpRun,
) {
    let elf = match Elf::parse(data) {
        Ok(e) => e,
        Err(e) => {
            let m = llvm_elf_error(data).unwrap_or_else(|| e.message().to_string());
            run.error = Some(format!("'{shown}': {m}"));
            run.detail = Some(e.rebase(base));
            return;
        }
    };
    run.stdout.push_str(&format!(
        "\n{shown}:\tfile format {}\n",
        elf_format_name(&elf)
    ));
    let mut imgs = Vec::new();
    if let Err(f) = extract_into(data, base, identifier, release, 1, &mut imgs) {
        match f {
            Failure::Error { message, error } => {
                run.error = Some(format!(
                    "'{shown}': while extracting offloading files: {message}"
                ));
                run.detail = Some(error);
            }
            Failure::Unsafe { error } => run.unsafe_read = Some(error),
        }
        return;
    }
    print_images(run, &imgs, identifier, release);
}
