//! The command lines: llvm::cl option forms of the drop-in bundler, its
//! check order and messages, the native commands' exit codes, and a
//! property that no argument vector makes either CLI panic.

use proptest::prelude::*;
use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_offload-kit"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn bundler(args: &[&str]) -> (i32, String, String) {
    let mut a = vec!["bundler"];
    a.extend_from_slice(args);
    run(&a)
}

#[test]
fn option_spellings_are_equivalent() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    std::fs::write(p("h"), b"HOST").unwrap();
    std::fs::write(p("dv"), b"DEV").unwrap();
    let t = "host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906";
    let forms: Vec<Vec<String>> = vec![
        vec![
            "-type=bc".into(),
            format!("-targets={t}"),
            format!("-input={}", p("h")),
            format!("-input={}", p("dv")),
            format!("-output={}", p("o1")),
        ],
        vec![
            "--type".into(),
            "bc".into(),
            "--targets".into(),
            t.into(),
            format!("--inputs={},{}", p("h"), p("dv")),
            "-outputs".into(),
            p("o2"),
        ],
        vec![
            "-type".into(),
            "bc".into(),
            "-targets=host-x86_64-unknown-linux-gnu".into(),
            "-targets=hip-amdgcn-amd-amdhsa--gfx906".into(),
            "-input".into(),
            p("h"),
            "-input".into(),
            p("dv"),
            format!("--output={}", p("o3")),
        ],
    ];
    for f in &forms {
        let a: Vec<&str> = f.iter().map(String::as_str).collect();
        let (code, _, err) = bundler(&a);
        assert_eq!(code, 0, "{a:?}: {err}");
    }
    // Response file.
    std::fs::write(
        p("rsp"),
        format!(
            "-type=bc -targets={t} -input={} -input={} -output={}",
            p("h"),
            p("dv"),
            p("o4")
        ),
    )
    .unwrap();
    let (code, _, err) = bundler(&[&format!("@{}", p("rsp"))]);
    assert_eq!(code, 0, "{err}");
    let o1 = std::fs::read(p("o1")).unwrap();
    for o in ["o2", "o3", "o4"] {
        assert_eq!(std::fs::read(p(o)).unwrap(), o1, "{o}");
    }
    // 16+ warn about the deprecated comma forms; 14 does not.
    let (_, _, err) = bundler(&[
        "-type=bc",
        &format!("-targets={t}"),
        &format!("-inputs={},{}", p("h"), p("dv")),
        &format!("-outputs={}", p("o5")),
    ]);
    assert!(
        err.contains("warning: -inputs is deprecated, use -input instead"),
        "{err}"
    );
    let (_, _, err) = bundler(&[
        "--llvm-version=14",
        "-type=bc",
        &format!("-targets={t}"),
        &format!("-inputs={},{}", p("h"), p("dv")),
        &format!("-outputs={}", p("o6")),
    ]);
    assert!(!err.contains("deprecated"), "{err}");
}

#[test]
fn llvm_messages_and_exit_codes() {
    let cases: &[(&[&str], &str)] = &[
        (&["-targets=a"], "clang-offload-bundler: for the --type option: must be specified at least once!"),
        (&["-type=bc", "-list", "-unbundle", "-input=x"], "error: -unbundle and -list cannot be used together"),
        (&["-type=bc", "-list", "-input=a", "-input=b"], "error: only one input file supported for -list"),
        (&["-type=bc", "-list", "-input=a", "-targets=x"], "error: -targets option is invalid for -list"),
        (&["-type=bc", "-targets=host-x86_64-unknown-linux-gnu", "-input=a"], "error: no output file specified!"),
        (&["-type=bc", "-input=a", "-output=o"], "error: for the --targets option: must be specified at least once!"),
        (&["-type=bc", "-targets=host-x86_64-unknown-linux-gnu,host-x86_64-unknown-linux-gnu", "-input=a", "-input=a", "-output=o"], "error: Duplicate targets are not allowed"),
        (&["-type=bc", "-targets=openmp-nvptx64-nvidia-cuda--sm_70", "-input=a", "-output=o"], "error: expecting exactly one host target but got 0"),
        (&["-type=a", "-targets=host-x86_64-unknown-linux-gnu", "-input=a", "-output=o"], "error: Archive files are only supported for unbundling"),
        (&["-type=bc", "-targets=cuda-nvptx64-nvidia-cuda--sm_70", "-input=a", "-output=o"], "error: invalid target 'cuda-nvptx64-nvidia-cuda--sm_70', unknown offloading kind 'cuda'"),
        (&["-type=bc", "-bundle-align=-1", "-targets=x"], "clang-offload-bundler: for the --bundle-align option: '-1' value invalid for uint argument!"),
        (&["-typo=bc"], "clang-offload-bundler: Unknown command line argument '-typo=bc'."),
    ];
    for (args, want) in cases {
        let (code, _, err) = bundler(args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: want {want:?}, got {err:?}");
    }
}

#[test]
fn bundle_align_zero_is_an_error_not_sigfpe() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path().join("h");
    std::fs::write(&h, b"x").unwrap();
    let o = d.path().join("o");
    let (code, _, err) = bundler(&[
        "-type=bc",
        "-bundle-align=0",
        "-targets=host-x86_64-unknown-linux-gnu",
        &format!("-input={}", h.display()),
        &format!("-output={}", o.display()),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("rule BIN-11"), "{err}");
    assert!(!o.exists(), "no output on failure");
}

#[test]
fn native_exit_codes() {
    let (code, _, _) = run(&["list", "/nonexistent/file"]);
    assert_eq!(code, 1);
    let (code, _, _) = run(&["no-such-command"]);
    assert_eq!(code, 2);
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, 0);
    assert!(out.contains("offload-kit"));
}

fn token() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "-type=bc",
        "-type=o",
        "-type=s",
        "-type=a",
        "-type",
        "bc",
        "-list",
        "-unbundle",
        "-targets=host-x86_64-unknown-linux-gnu",
        "-targets=hip-amdgcn-amd-amdhsa--gfx906,x",
        "-targets=",
        "-input=/dev/null",
        "-input",
        "-inputs=,",
        "-output=/dev/null/x",
        "-outputs=",
        "-allow-missing-bundles",
        "-bundle-align=0",
        "-bundle-align=4096",
        "-bundle-align=x",
        "-hip-openmp-compatible",
        "-compress",
        "-compress=false",
        "-compression-level=99",
        "--llvm-version=14",
        "--llvm-version=19",
        "--llvm-version=99",
        "-check-input-archive",
        "-verbose",
        "@/nonexistent",
        "--",
        "x",
        "-",
        "-h",
    ])
    .prop_map(String::from)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn bundler_never_panics(args in prop::collection::vec(token(), 0..8)) {
        let mut a = vec!["bundler".to_string()];
        a.extend(args);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let (code, _, err) = run(&refs);
        prop_assert!(code == 0 || code == 1, "{refs:?}: exit {code}: {err}");
    }
}

/// Outputs the user names are opened as LLVM opens them: a symbolic link is
/// written through, a device stays a device; names made from entry IDs
/// never follow a link planted in the output directory (CLI-5).
#[test]
fn outputs_follow_links_the_user_named_only() {
    use std::os::unix::fs::symlink;
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n);
    let s = |n: &str| p(n).to_str().unwrap().to_string();
    std::fs::write(p("h"), b"HOSTDATA").unwrap();
    std::fs::write(p("dv"), b"DEV").unwrap();
    let t = "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906";
    let (c, _, e) = bundler(&[
        "-type=bc",
        t,
        &format!("-input={}", s("h")),
        &format!("-input={}", s("dv")),
        &format!("-output={}", s("b")),
    ]);
    assert_eq!(c, 0, "{e}");
    // -output=link: the file the link names receives the entry.
    std::fs::write(p("real"), b"old").unwrap();
    symlink("real", p("link")).unwrap();
    let dev = "-targets=hip-amdgcn-amd-amdhsa--gfx906";
    let unb = |out: &str| {
        bundler(&[
            "-unbundle",
            "-type=bc",
            dev,
            &format!("-input={}", s("b")),
            &format!("-output={out}"),
        ])
    };
    let (c, _, e) = unb(&s("link"));
    assert_eq!(c, 0, "{e}");
    assert!(std::fs::symlink_metadata(p("link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(p("real")).unwrap(), b"DEV");
    // A dangling link into a missing directory: LLVM's message, with the name given.
    symlink("missing/new", p("dangling")).unwrap();
    let (c, _, e) = unb(&s("dangling"));
    assert_eq!(c, 1);
    assert!(
        e.contains("'") && e.contains("dangling': No such file or directory"),
        "{e}"
    );
    // /dev/null is written in place, not replaced by a regular file.
    let (c, _, e) = unb("/dev/null");
    assert_eq!(c, 0, "{e}");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    // extract --all: a link planted under an entry's name is replaced, and
    // the file outside the directory it points to is left alone.
    std::fs::create_dir(p("out")).unwrap();
    std::fs::write(p("victim"), b"keep").unwrap();
    symlink(p("victim"), p("out").join("hip-amdgcn-amd-amdhsa--gfx906")).unwrap();
    let (c, _, e) = run(&["extract", &s("b"), "--all", "--dir", &s("out")]);
    assert_eq!(c, 0, "{e}");
    assert_eq!(std::fs::read(p("victim")).unwrap(), b"keep");
    let planted = p("out").join("hip-amdgcn-amd-amdhsa--gfx906");
    assert!(!std::fs::symlink_metadata(&planted)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(planted).unwrap(), b"DEV");
}

/// The subcommands `offload-kit --help` lists (clap's help, two spaces
/// before each name).
fn subcommands() -> Vec<String> {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    let after = out.split("Commands:").nth(1).expect("a Commands: section");
    let names: Vec<String> = after
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect();
    assert!(
        names.len() >= 10,
        "too few subcommands in --help: {names:?}"
    );
    names
}

#[test]
fn completions_for_every_shell() {
    let subs = subcommands();
    for (shell, marker) in [
        ("bash", "complete -F _offload__kit"),
        ("zsh", "#compdef offload-kit"),
        ("fish", "complete -c offload-kit"),
        ("elvish", "edit:completion:arg-completer[offload-kit]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let (code, out, err) = run(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains(marker), "{shell}: no '{marker}'");
        for s in &subs {
            assert!(out.contains(s.as_str()), "{shell}: no completion for '{s}'");
        }
        if shell == "bash" {
            let d = tempfile::tempdir().unwrap();
            let f = d.path().join("c.bash");
            std::fs::write(&f, &out).unwrap();
            let o = Command::new("bash").arg("-n").arg(&f).output().unwrap();
            assert!(
                o.status.success(),
                "bash -n: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            // What bash offers for `offload-kit ins<TAB>`.
            let tab = format!(
                "source '{}'; COMP_WORDS=(offload-kit ins); COMP_CWORD=1; \
                 COMP_LINE='offload-kit ins'; COMP_POINT=15; \
                 _offload__kit offload-kit ins offload-kit; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                f.display()
            );
            let o = Command::new("bash").args(["-c", &tab]).output().unwrap();
            assert_eq!(String::from_utf8_lossy(&o.stdout), "inspect\n");
        }
    }
    let (code, _, err) = run(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    assert!(err.contains("tcsh"), "{err}");
}

#[test]
fn man_pages_for_every_command() {
    let groff = std::path::Path::new("/usr/bin/groff");
    assert!(
        groff.exists(),
        "groff is missing: run tools/setup (groff-base)"
    );
    let lint = |page: &std::path::Path| {
        // -ww: every warning; -z: no output. A page groff warns about is broken.
        let o = Command::new(groff)
            .args(["-man", "-ww", "-z"])
            .arg(page)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() && err.is_empty(),
            "{}: {err}",
            page.display()
        );
    };
    let (code, top, _) = run(&["man"]);
    assert_eq!(code, 0);
    assert!(
        top.contains(".TH offload-kit 1"),
        "{}",
        &top[..top.len().min(300)]
    );
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("man1");
    let (code, _, err) = run(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let top_file = dir.join("offload-kit.1");
    assert_eq!(std::fs::read_to_string(&top_file).unwrap(), top);
    lint(&top_file);
    for s in subcommands() {
        let page = dir.join(format!("offload-kit-{s}.1"));
        let text = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert!(text.contains(&format!(".TH offload-kit-{s} 1")), "{s}");
        // Issue 28 item 11: every page says what its exit statuses mean,
        // and every command's page shows it at work.
        assert!(
            text.contains(".SH \"EXIT STATUS\"\n.TP\n0\n"),
            "{s}: {text}"
        );
        assert!(text.contains("\n.TP\n1\n"), "{s}");
        if s != "help" {
            let examples = text.split_once(".SH EXAMPLES\n").map(|p| p.1);
            assert!(
                examples.is_some_and(|e| e.contains(&format!("offload\\-kit {s}"))),
                "{s}: {text}"
            );
        }
        lint(&page);
    }
    // A file in the way of --dir: an error naming it, nothing written.
    let blocked = d.path().join("blocked");
    std::fs::write(&blocked, b"x").unwrap();
    let (code, _, err) = run(&["man", "--dir", blocked.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("blocked"), "{err}");
}

/// Runs `offload-kit args` on a pseudo-terminal (util-linux `script`) and
/// returns what it printed there.
fn on_a_terminal(env: &[(&str, &str)], args: &[&str]) -> String {
    let cmd = std::iter::once(env!("CARGO_BIN_EXE_offload-kit"))
        .chain(args.iter().copied())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let script = std::path::Path::new("/usr/bin/script");
    assert!(script.exists(), "util-linux's script is missing");
    let mut c = Command::new(script);
    c.args(["-qec", &cmd, "/dev/null"]).env_remove("NO_COLOR");
    c.env("TERM", "xterm");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn colour_only_on_a_terminal() {
    let missing = ["list", "/nonexistent/offload-kit-input"];
    let red = "\x1b[1;31merror\x1b[0m";
    // Into a pipe: plain, unless asked.
    let (code, _, err) = run(&missing);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("offload-kit: error: ") && !err.contains('\x1b'),
        "{err:?}"
    );
    let (_, _, err) = run(&["--color", "always", "list", missing[1]]);
    assert!(err.contains(red), "{err:?}");
    // On a terminal: coloured, unless NO_COLOR, TERM=dumb or --color never.
    assert!(on_a_terminal(&[], &missing).contains(red));
    for (env, args) in [
        (&[("NO_COLOR", "1")][..], &missing[..]),
        (&[("TERM", "dumb")][..], &missing[..]),
        (&[][..], &["--color", "never", "list", missing[1]][..]),
    ] {
        let text = on_a_terminal(env, args);
        assert!(
            text.contains("offload-kit: error: "),
            "{env:?} {args:?}: {text:?}"
        );
        assert!(!text.contains('\x1b'), "{env:?} {args:?}: {text:?}");
    }
    // An empty NO_COLOR does not count (no-color.org).
    assert!(on_a_terminal(&[("NO_COLOR", "")], &missing).contains(red));
}

#[test]
fn progress_line_only_on_a_terminal() {
    let d = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&["demo", "--dir", d.path().join("demo").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let bundle = std::fs::read(d.path().join("demo/demo.bundle")).unwrap();
    let tree = d.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    for i in 0..40 {
        std::fs::write(tree.join(format!("b{i}.bundle")), &bundle).unwrap();
    }
    let args = ["inspect", tree.to_str().unwrap()];
    let shown = on_a_terminal(&[("OFFLOAD_KIT_PROGRESS_AFTER_MS", "0")], &args);
    assert!(shown.contains("files read: "), "{shown:?}");
    // Erased before the summary: the last progress text is followed by the
    // erase sequence.
    assert!(shown.contains("\r\x1b[2K"), "{shown:?}");
    // Not into a pipe, nor on a terminal before the threshold.
    let o = Command::new(env!("CARGO_BIN_EXE_offload-kit"))
        .args(args)
        .env("OFFLOAD_KIT_PROGRESS_AFTER_MS", "0")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("files read"));
    assert!(!on_a_terminal(&[], &args).contains("files read: "));
}

/// Every command `offload-kit --help` lists answers `--help` with its own
/// text: a native command with the line the list gives it, a drop-in (and
/// the corpus runner) with the help of the tool it stands in for, never
/// clap's refusal of `--help` as an argument.
#[test]
fn every_command_answers_help_with_its_own_text() {
    let (code, top, _) = run(&["--help"]);
    assert_eq!(code, 0);
    let listed: Vec<(String, String)> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| {
            let (name, about) = l.trim().split_once(' ')?;
            Some((name.to_string(), about.trim().to_string()))
        })
        .filter(|(name, _)| name != "help")
        .collect();
    assert!(listed.len() >= 19, "{top}");
    let own_help = [
        ("bundler", "OVERVIEW: A tool to bundle several input files"),
        (
            "packager",
            "OVERVIEW: A utility for bundling several object files",
        ),
        ("objdump", "OVERVIEW: llvm object file dumper"),
        ("readobj", "OVERVIEW: LLVM Object Reader"),
        ("conformance", "usage: offload-kit conformance"),
    ];
    for (name, about) in &listed {
        let (code, out, err) = run(&[name, "--help"]);
        assert_eq!(code, 0, "{name} --help: {err}");
        match own_help.iter().find(|(n, _)| n == name) {
            Some((_, start)) => assert!(out.starts_with(start), "{name} --help: {out}"),
            None => assert!(
                out.starts_with(about.trim_end_matches('.')),
                "{name} --help does not start with its line in the list ({about}): {out}"
            ),
        }
    }
}
