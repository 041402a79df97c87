//! `offload-kit man`: the manual pages, generated from the clap definitions
//! (clap_mangen) with two sections clap does not know: EXAMPLES and EXIT
//! STATUS, written here once per command.

use offload_kit_format::Error;
use offload_kit_io::output;
use std::path::Path;

/// What a page shows beyond the options: examples (what it does, the
/// command line) and the meaning of each exit status.
#[derive(Clone, Copy)]
struct Extra {
    examples: &'static [(&'static str, &'static str)],
    exit: &'static [(&'static str, &'static str)],
}

/// Exit 1 on bad input with a clear error, 2 on a usage error: every
/// command (CLI-2).
const USAGE: (&str, &str) = (
    "2",
    "The command line is wrong (an unknown option, a missing value).",
);

/// Exit statuses of a command that reads and lists.
const LISTED: &[(&str, &str)] = &[
    ("0", "The input was read and listed."),
    ("1", "The input is not a container, or breaks a rule the reader cannot read past (the message names the rule and byte offset)."),
    USAGE,
];

/// Exit statuses of a command that writes outputs.
const WRITTEN: &[(&str, &str)] = &[
    ("0", "Done: every output was written."),
    ("1", "Bad input or an output that cannot be written (the message names the rule and byte offset); nothing was written."),
    USAGE,
];

/// Each command's examples and exit statuses.
const EXTRAS: &[(&str, Extra)] = &[
    (
        "offload-kit",
        Extra {
            examples: &[
                ("A built-in example: bundle, list, validate, extract.", "offload-kit demo"),
                ("What a library holds, down to each code object.", "offload-kit inspect /opt/rocm/lib/librocsparse.so"),
                ("Whether it runs on a GPU.", "offload-kit check /opt/rocm/lib/librocsparse.so --gpu gfx90a:xnack-"),
                ("Every entry into a directory.", "offload-kit extract k.o --all --dir out"),
            ],
            exit: &[
                ("0", "Success, as each command defines it."),
                ("1", "Bad input, a check that failed, or an output that could not be written: see each command's page."),
                USAGE,
            ],
        },
    ),
    (
        "list",
        Extra {
            examples: &[
                ("The entries of an object, a fat binary, a text bundle or an archive.", "offload-kit list k.o"),
                ("As LLVM 14 lists it.", "offload-kit list k.o --llvm-version 14"),
                ("Code object URIs, one per entry.", "offload-kit list k.o --uri"),
            ],
            exit: LISTED,
        },
    ),
    (
        "extract",
        Extra {
            examples: &[
                ("One entry.", "offload-kit extract k.o --id hipv4-amdgcn-amd-amdhsa--gfx906 -o gfx906.co"),
                ("That target ID from every bundle of a library.", "offload-kit extract librocsparse.so --id gfx90a:xnack+ --dir out"),
                ("What the HIP runtime would load on a GPU.", "offload-kit extract k.o --gpu gfx90a:sramecc+:xnack- -o k.co"),
                ("The bytes a code object URI names.", "offload-kit extract 'file://k.o#offset=8192&size=3160' -o k.co"),
            ],
            exit: WRITTEN,
        },
    ),
    (
        "inspect",
        Extra {
            examples: &[
                ("A file, or every file under a directory.", "offload-kit inspect /opt/rocm/lib"),
                ("One JSON document (schema offload-kit-inspect/1).", "offload-kit inspect k.o --json"),
                ("Refuse what clang 14-16 wrote (ID-5, BIN-10) instead of warning.", "offload-kit inspect rdc14.o --strict"),
            ],
            exit: &[
                ("0", "Every file was read and no entry's ID disagrees with its code object (warnings do not count)."),
                ("1", "A file could not be read, or a finding (CO-1 to CO-5, or an entry not read within the memory budget)."),
                USAGE,
            ],
        },
    ),
    (
        "check",
        Extra {
            examples: &[
                ("On one GPU, named as amdgpu-arch or rocminfo prints it.", "offload-kit check libfoo.so --gpu gfx90a:sramecc+:xnack-"),
                ("In each xnack/sramecc mode of an agent name.", "offload-kit check libfoo.so --gpu gfx90a"),
                ("On this machine's GPUs (KFD topology).", "offload-kit check libfoo.so --gpu auto"),
            ],
            exit: &[
                ("0", "Every file runs on every GPU (for a GPU named without its settings: in some mode)."),
                ("1", "A file does not run on some GPU, or could not be read, or --gpu auto found no GPU."),
                USAGE,
            ],
        },
    ),
    (
        "validate",
        Extra {
            examples: &[
                ("Every rule of spec/.", "offload-kit validate k.o"),
                ("As JSON (schema offload-kit-validate/1).", "offload-kit validate k.o --json"),
            ],
            exit: &[
                ("0", "The input conforms to every rule."),
                ("1", "It breaks a rule: each violation with its rule ID and byte offset."),
                USAGE,
            ],
        },
    ),
    (
        "compress",
        Extra {
            examples: &[
                ("As LLVM 22 compresses (CCOB v3, zstd level 3).", "offload-kit compress k.fatbin -o k.ccob"),
                ("Version 2, zlib.", "offload-kit compress k.fatbin -o k.ccob --format-version 2 --method zlib"),
            ],
            exit: WRITTEN,
        },
    ),
    (
        "decompress",
        Extra {
            examples: &[("The bundle a CCOB holds.", "offload-kit decompress k.ccob -o k.fatbin")],
            exit: WRITTEN,
        },
    ),
    (
        "convert",
        Extra {
            examples: &[("A CCOB v2 blob as v3.", "offload-kit convert k.ccob --to v3 -o k3.ccob")],
            exit: WRITTEN,
        },
    ),
    (
        "verify",
        Extra {
            examples: &[("Sizes and hashes of every compressed bundle in a library.", "offload-kit verify libfoo.so")],
            exit: &[
                ("0", "Every compressed bundle checks out (or there is nothing compressed, which is said)."),
                ("1", "A size or hash does not match, or the input cannot be read."),
                USAGE,
            ],
        },
    ),
    (
        "generate",
        Extra {
            examples: &[
                ("Valid binary bundles.", "offload-kit generate --kind binary --count 100 --out corpus"),
                ("Each breaking one rule, with a .json sidecar naming it.", "offload-kit generate --kind binary --malformed all --count 50 --out bad"),
            ],
            exit: WRITTEN,
        },
    ),
    (
        "completions",
        Extra {
            examples: &[("Bash completion for this shell.", "source <(offload-kit completions bash)")],
            exit: &[
                ("0", "The script was printed."),
                ("1", "Standard output could not be written."),
                USAGE,
            ],
        },
    ),
    (
        "man",
        Extra {
            examples: &[("Every page into a directory for man(1).", "offload-kit man --dir ~/.local/share/man/man1")],
            exit: WRITTEN,
        },
    ),
    (
        "demo",
        Extra {
            examples: &[("Bundle, list, validate and extract a built-in example.", "offload-kit demo")],
            exit: WRITTEN,
        },
    ),
    (
        "conformance",
        Extra {
            examples: &[
                ("The corpus against offload-kit and every installed LLVM.", "offload-kit conformance"),
                ("An HTML dashboard too.", "offload-kit conformance --html out"),
            ],
            exit: &[
                ("0", "No new divergence of offload-kit or of an LLVM column (implementations not installed are skipped; third-party divergences are findings)."),
                ("1", "A new divergence, or the corpus could not be read."),
                USAGE,
            ],
        },
    ),
    (
        "packager",
        Extra {
            examples: &[("An offload binary, as clang-offload-packager 22 writes it.", "offload-kit packager -o out.bin --image=file=k.co,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip")],
            exit: &[("0", "Done."), ("1", "An error, as the release reports it."), USAGE],
        },
    ),
    (
        "objdump",
        Extra {
            examples: &[("Offload images and bundle entries, extracted next to the input.", "offload-kit objdump --offloading k.o")],
            exit: &[
                ("0", "Done (options it does not model are handed to the real llvm-objdump)."),
                ("1", "An error, as LLVM 22 reports it."),
                USAGE,
            ],
        },
    ),
    (
        "readobj",
        Extra {
            examples: &[("A code object URI per bundle entry.", "offload-kit readobj --offloading k.o")],
            exit: &[("0", "Done."), ("1", "An error, as LLVM 22 reports it."), USAGE],
        },
    ),
    (
        "dropins",
        Extra {
            examples: &[
                ("clang 19 building through offload-kit as LLVM 19's offload tools.", "offload-kit dropins --llvm-version 19 ~/ok-19 && clang-19 -B ~/ok-19 -x hip --offload-arch=gfx906 -c k.hip"),
                ("In place of a toolchain's own tools (keep a copy of them first).", "offload-kit dropins --llvm-version 22 --force /opt/llvm-22/bin"),
            ],
            exit: &[
                ("0", "The links and offload-kit-dropins.conf were written."),
                ("1", "DIR holds a file under a tool's name that is not offload-kit (without --force), or could not be written."),
                USAGE,
            ],
        },
    ),
    (
        "bundler",
        Extra {
            examples: &[
                ("List, as clang-offload-bundler 22 does.", "offload-kit bundler -list -type=o -input=k.o"),
                ("Unbundle a -fgpu-rdc object as LLVM 14 does.", "offload-kit bundler --llvm-version=14 -unbundle -type=o -input=rdc14.o -targets=hip-amdgcn-amd-amdhsa-gfx906 -output=k.bc"),
            ],
            exit: &[("0", "Done."), ("1", "An error, with the release's own message."), USAGE],
        },
    ),
];

/// What a command without its own entry in [`EXTRAS`] says.
const OTHER: Extra = Extra {
    examples: &[],
    exit: &[("0", "Done."), ("1", "An error."), USAGE],
};

fn extra(command: &str) -> Extra {
    EXTRAS
        .iter()
        .find(|(name, _)| *name == command)
        .map_or(OTHER, |(_, e)| *e)
}

/// Text for roff: backslashes and hyphens escaped, and no line may start
/// with a control character.
fn roff_text(s: &str) -> String {
    let s = s.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with(['.', '\'']) {
        format!("\\&{s}")
    } else {
        s
    }
}

/// The EXAMPLES and EXIT STATUS sections of `command`'s page.
fn sections(command: &str) -> String {
    let e = extra(command);
    let mut out = String::new();
    if !e.examples.is_empty() {
        out.push_str(".SH EXAMPLES\n");
        for (what, line) in e.examples {
            out.push_str(&format!(
                ".PP\n{}\n.PP\n.RS 4\n.EX\n{}\n.EE\n.RE\n",
                roff_text(what),
                roff_text(line)
            ));
        }
    }
    out.push_str(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in e.exit {
        out.push_str(&format!(".TP\n{code}\n{}\n", roff_text(meaning)));
    }
    out
}

/// One page: clap_mangen's sections, then EXAMPLES and EXIT STATUS, then
/// the version.
fn render(cmd: clap::Command, key: &str) -> Result<Vec<u8>, Vec<Error>> {
    let err = |e: std::io::Error| vec![Error::from(e)];
    let has_args = cmd.get_arguments().any(|a| !a.is_hide_set());
    let has_subs = cmd.get_subcommands().any(|s| !s.is_hide_set());
    let has_version = cmd.get_version().or(cmd.get_long_version()).is_some();
    let man = clap_mangen::Man::new(cmd);
    let mut out = Vec::new();
    man.render_title(&mut out).map_err(err)?;
    man.render_name_section(&mut out).map_err(err)?;
    man.render_synopsis_section(&mut out).map_err(err)?;
    man.render_description_section(&mut out).map_err(err)?;
    if has_args {
        man.render_options_section(&mut out).map_err(err)?;
    }
    if has_subs {
        man.render_subcommands_section(&mut out).map_err(err)?;
    }
    out.extend_from_slice(sections(key).as_bytes());
    if has_version {
        man.render_version_section(&mut out).map_err(err)?;
    }
    Ok(out)
}

/// `man`: the command's page on stdout, or every command's page into `dir`
/// (written all or none, CLI-5).
pub fn man_pages(top: clap::Command, dir: Option<&Path>) -> Result<Vec<u8>, Vec<Error>> {
    let Some(dir) = dir else {
        return render(top, "offload-kit");
    };
    let mut pages = vec![(
        "offload-kit.1".to_string(),
        render(top.clone(), "offload-kit")?,
    )];
    for sub in top.get_subcommands() {
        let name = format!("offload-kit-{}", sub.get_name());
        let page = render(sub.clone().name(name.clone()), sub.get_name())?;
        pages.push((format!("{name}.1"), page));
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        vec![Error::other(format!(
            "'{}': {}",
            dir.display(),
            output::io_text(&e)
        ))]
    })?;
    let mut files = Vec::new();
    for (name, page) in &pages {
        let mut f = output::create_in_dir(dir, name).map_err(|e| vec![e])?;
        std::io::Write::write_all(&mut f, page).map_err(|e| vec![Error::from(e)])?;
        files.push(f);
    }
    output::commit_all(files).map_err(|e| vec![e])?;
    Ok(Vec::new())
}
