//! A small emulation of `llvm::cl` option parsing: `-name=value`,
//! `--name=value`, `-name value`, boolean flags with optional `=true|false|1|0`,
//! comma-separated lists, repeated options, positional arguments, options
//! that exist only from a given release on, `@file` response files, and
//! LLVM's messages for unknown options and bad values.

use offload_kit_llvm::Release;
use std::collections::BTreeMap;

/// How an option takes values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A boolean flag.
    Flag,
    /// One value; a later occurrence replaces it.
    Value,
    /// Values accumulate over occurrences.
    Multi,
    /// Comma-separated values that accumulate over occurrences.
    CommaList,
    /// An unsigned integer.
    Uint,
}

/// One option the tool accepts.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Name without dashes.
    pub name: &'static str,
    /// How it takes values.
    pub kind: Kind,
}

impl Spec {
    /// A boolean flag.
    pub const fn flag(name: &'static str) -> Spec {
        Spec::new(name, Kind::Flag)
    }
    /// An option with one value.
    pub const fn value(name: &'static str) -> Spec {
        Spec::new(name, Kind::Value)
    }
    /// An option whose values accumulate.
    pub const fn multi(name: &'static str) -> Spec {
        Spec::new(name, Kind::Multi)
    }
    /// An option of comma-separated values that accumulate.
    pub const fn comma_list(name: &'static str) -> Spec {
        Spec::new(name, Kind::CommaList)
    }
    /// An unsigned integer option.
    pub const fn uint(name: &'static str) -> Spec {
        Spec::new(name, Kind::Uint)
    }
    const fn new(name: &'static str, kind: Kind) -> Spec {
        Spec { name, kind }
    }
}

/// Parsed options: name → values in order (flags hold "true"/"false").
#[derive(Debug, Default, Clone)]
pub struct Parsed {
    values: BTreeMap<&'static str, Vec<String>>,
    positionals: Vec<String>,
}

impl Parsed {
    /// Whether a flag is set (last occurrence wins).
    pub fn flag(&self, name: &str) -> bool {
        self.values
            .get(name)
            .and_then(|v| v.last())
            .is_some_and(|v| v == "true")
    }
    /// Whether the option occurred at all.
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }
    /// All values of a list option.
    pub fn list(&self, name: &str) -> Vec<String> {
        self.values.get(name).cloned().unwrap_or_default()
    }
    /// Whether any occurrence of a flag set it (for options such as
    /// `--help` that an occurrence can only turn on).
    pub fn any_flag(&self, name: &str) -> bool {
        self.values
            .get(name)
            .is_some_and(|v| v.iter().any(|v| v == "true"))
    }
    /// The positional arguments in order (at most [`Config::positionals`]).
    pub fn positionals(&self) -> &[String] {
        &self.positionals
    }
    /// The last value of a single-valued option.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values
            .get(name)
            .and_then(|v| v.last())
            .map(String::as_str)
    }
}

/// Expand `@file` response files (GNU tokenisation: whitespace, quotes, backslash).
pub fn expand_response_files(args: Vec<String>) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for (depth, a) in args.into_iter().enumerate() {
        if let Some(path) = a.strip_prefix('@') {
            if depth > 64 {
                return Err("response files nested too deeply".into());
            }
            match std::fs::read_to_string(path) {
                Ok(text) => out.extend(expand_response_files(tokenize_gnu(&text))?),
                Err(_) => out.push(a),
            }
        } else {
            out.push(a);
        }
    }
    Ok(out)
}

fn tokenize_gnu(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_tok = false;
    let mut chars = s.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), '\\') | (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                in_tok = true;
            }
            (Some(_), c) => cur.push(c),
            (None, '"') | (None, '\'') => {
                quote = Some(c);
                in_tok = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_tok {
                    out.push(std::mem::take(&mut cur));
                    in_tok = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_tok = true;
            }
        }
    }
    if in_tok {
        out.push(cur);
    }
    out
}

/// Levenshtein distance, for LLVM's "Did you mean" suggestions.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let v = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
            cur.push(v);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// How option names are suggested for an unknown argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suggest {
    /// The first option in table order within edit distance 2, written
    /// `'--name=value'` (the argument's value kept).
    WithinTwo,
    /// The nearest suggested option at any distance (on a tie the longer
    /// name, then the alphabetically first), written as options are named
    /// in messages, without the value.
    Nearest,
}

/// A tool's command line as its `llvm::cl` sees it: which options exist in
/// the selected release, how many positional arguments it takes, and how
/// its messages name things.
#[derive(Debug, Clone, Copy)]
pub struct Config<'a> {
    /// Program name that starts every message line.
    pub prog: &'a str,
    /// Program named in `Try: '<help_prog> --help'` and `See: <help_prog> --help`.
    pub help_prog: &'a str,
    /// The release whose options are available.
    pub release: Release,
    /// Options that appeared after the tool's first release: an option
    /// listed here is unknown before its release.
    pub since: &'a [(&'static str, Release)],
    /// Options never offered as "Did you mean" suggestions.
    pub unsuggested: &'a [&'static str],
    /// How many positional arguments the tool takes; with none, a stray
    /// one is an unknown command line argument.
    pub positionals: usize,
    /// Name one-letter options `-o` in messages (all others `--name`);
    /// otherwise every option is `--name`.
    pub short_single_dash: bool,
    /// How an unknown option's nearest match is suggested.
    pub suggest: Suggest,
}

impl<'a> Config<'a> {
    /// A tool without positional arguments whose options exist in every
    /// release, named `--name` in messages (clang-offload-bundler).
    pub fn tool(prog: &'a str) -> Self {
        Config {
            prog,
            help_prog: prog,
            release: Release::DEFAULT,
            since: &[],
            unsuggested: &[],
            positionals: 0,
            short_single_dash: false,
            suggest: Suggest::WithinTwo,
        }
    }

    /// Whether the option `name` exists in the selected release.
    fn available(&self, name: &str) -> bool {
        self.since
            .iter()
            .all(|&(n, r)| n != name || self.release >= r)
    }

    /// The option `name` as messages write it.
    fn dashed(&self, name: &str) -> String {
        if self.short_single_dash && name.len() == 1 {
            format!("-{name}")
        } else {
            format!("--{name}")
        }
    }

    /// The "Did you mean" line for the unknown option `name` (with its
    /// inline value), if any option is near enough.
    fn suggestion(&self, specs: &[Spec], name: &str, inline: Option<&str>) -> Option<String> {
        let best = match self.suggest {
            Suggest::WithinTwo => specs
                .iter()
                .filter(|s| self.available(s.name))
                .map(|s| (edit_distance(name, s.name), s))
                .filter(|(d, _)| *d <= 2)
                .min_by_key(|(d, _)| *d)
                .map(|(_, s)| {
                    let val = inline.map(|v| format!("={v}")).unwrap_or_default();
                    format!("{}{val}", self.dashed(s.name))
                }),
            Suggest::Nearest => specs
                .iter()
                .filter(|s| self.available(s.name) && !self.unsuggested.contains(&s.name))
                .map(|s| {
                    (
                        edit_distance(name, s.name),
                        std::cmp::Reverse(s.name.len()),
                        s.name,
                    )
                })
                .min()
                .map(|(_, _, n)| self.dashed(n)),
        }?;
        Some(format!("{}: Did you mean '{best}'?", self.prog))
    }

    /// The unknown-argument line for `arg`.
    fn unknown(&self, arg: &str) -> String {
        format!(
            "{}: Unknown command line argument '{arg}'.  Try: '{} --help'",
            self.prog, self.help_prog
        )
    }

    /// Parse `args` (without argv\[0\]) against `specs` as the tool's
    /// `llvm::cl` does: `-name=value`, `--name=value`, `-name value`,
    /// flags with an optional boolean value, repeated options, `--` ending
    /// the options. Errors are complete lines as LLVM prints them; the
    /// first problem in argument order is reported.
    pub fn parse(&self, specs: &[Spec], args: &[String]) -> Result<Parsed, Vec<String>> {
        let prog = self.prog;
        let mut p = Parsed::default();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            i += 1;
            if a == "--" {
                p.positionals.extend(args[i..].iter().cloned());
                break;
            }
            if !a.starts_with('-') || a == "-" {
                p.positionals.push(a.clone());
                continue;
            }
            let body = a.strip_prefix("--").unwrap_or(&a[1..]);
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let Some(spec) = specs
                .iter()
                .find(|s| s.name == name && self.available(s.name))
            else {
                let mut lines = vec![self.unknown(a)];
                lines.extend(self.suggestion(specs, name, inline.as_deref()));
                return Err(lines);
            };
            let opt = self.dashed(spec.name);
            let entry = p.values.entry(spec.name).or_default();
            match spec.kind {
                Kind::Flag => {
                    let v = match inline.as_deref() {
                        None | Some("true") | Some("1") | Some("TRUE") | Some("True") => "true",
                        Some("false") | Some("0") | Some("FALSE") | Some("False") => "false",
                        Some(v) => {
                            return Err(vec![format!(
                                "{prog}: for the {opt} option: '{v}' is invalid value for boolean argument! Try 0 or 1"
                            )])
                        }
                    };
                    entry.push(v.to_string());
                }
                Kind::Value | Kind::Multi | Kind::CommaList | Kind::Uint => {
                    let v = match inline {
                        Some(v) => v,
                        None if i < args.len() => {
                            i += 1;
                            args[i - 1].clone()
                        }
                        None => {
                            return Err(vec![format!(
                                "{prog}: for the {opt} option: requires a value!"
                            )])
                        }
                    };
                    match spec.kind {
                        Kind::CommaList => entry.extend(v.split(',').map(str::to_string)),
                        Kind::Uint => {
                            if parse_uint(&v).is_none() {
                                return Err(vec![format!(
                                    "{prog}: for the {opt} option: '{v}' value invalid for uint argument!"
                                )]);
                            }
                            entry.push(v);
                        }
                        _ => entry.push(v),
                    }
                }
            }
        }
        if self.positionals == 0 {
            if let Some(a) = p.positionals.first() {
                // A tool without positional options reports a stray argument as unknown.
                return Err(vec![self.unknown(a)]);
            }
        } else if p.positionals.len() > self.positionals {
            return Err(vec![format!(
                "{prog}: Too many positional arguments specified!\nCan specify at most {} positional arguments: See: {} --help",
                self.positionals, self.help_prog
            )]);
        }
        Ok(p)
    }
}

/// Parse `args` (without argv\[0\]) against `specs` for a tool without
/// positional arguments (see [`Config::tool`]). `prog` is the program name
/// used in messages. Errors are complete lines as LLVM prints them.
pub fn parse(prog: &str, specs: &[Spec], args: &[String]) -> Result<Parsed, Vec<String>> {
    Config::tool(prog).parse(specs, args)
}

/// LLVM's unsigned parsing (`getAsInteger` with radix auto-detection), 32-bit.
pub fn parse_uint(v: &str) -> Option<u32> {
    let (digits, radix) = if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = v.strip_prefix("0b").or_else(|| v.strip_prefix("0B")) {
        (b, 2)
    } else if v.len() > 1 && v.starts_with('0') {
        (&v[1..], 8)
    } else {
        (v, 10)
    };
    if digits.is_empty() {
        return None;
    }
    u32::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    // The drop-in bundler's options: every kind of option, in LLVM's order.
    use crate::bundler::SPECS;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn forms() {
        let p = parse(
            "b",
            SPECS,
            &s(&[
                "-type=bc",
                "--targets",
                "a,b",
                "-targets=c",
                "-input",
                "x",
                "--input=y",
                "-list=false",
            ]),
        )
        .unwrap();
        assert_eq!(p.value("type"), Some("bc"));
        assert_eq!(p.list("targets"), ["a", "b", "c"]);
        assert_eq!(p.list("input"), ["x", "y"]);
        assert!(!p.flag("list"));
    }

    #[test]
    fn errors() {
        let e = parse("b", SPECS, &s(&["-typo=bc"])).unwrap_err();
        assert_eq!(
            e[0],
            "b: Unknown command line argument '-typo=bc'.  Try: 'b --help'"
        );
        assert_eq!(e[1], "b: Did you mean '--type=bc'?");
        let e = parse("b", SPECS, &s(&["-bundle-align=-1"])).unwrap_err();
        assert_eq!(
            e[0],
            "b: for the --bundle-align option: '-1' value invalid for uint argument!"
        );
        assert!(parse("b", SPECS, &s(&["-type"])).is_err());
    }

    #[test]
    fn packager_config() {
        let specs = &[
            Spec::value("o"),
            Spec::flag("archive"),
            Spec::flag("help"),
            Spec::value("llvm-version"),
        ];
        let config = |release| Config {
            prog: "pk",
            help_prog: "./pk",
            release,
            since: &[("archive", Release::L19)],
            unsuggested: &["llvm-version"],
            positionals: 1,
            short_single_dash: true,
            suggest: Suggest::Nearest,
        };
        // An option newer than the release is unknown; nothing is too far
        // to be suggested, except the unsuggested options.
        let e = config(Release::L16)
            .parse(specs, &s(&["--archive"]))
            .unwrap_err();
        assert_eq!(
            e,
            [
                "pk: Unknown command line argument '--archive'.  Try: './pk --help'",
                "pk: Did you mean '--help'?"
            ]
        );
        let p = config(Release::L19)
            .parse(specs, &s(&["--archive", "in", "-o", "a", "-o=b"]))
            .unwrap();
        assert!(p.flag("archive"));
        assert_eq!(p.value("o"), Some("b"));
        assert_eq!(p.positionals(), ["in"]);
        let e = config(Release::L19)
            .parse(specs, &s(&["-llvm-versio=1"]))
            .unwrap_err();
        assert_eq!(e[1], "pk: Did you mean '--archive'?");
        // One-letter options are named with one dash.
        let e = config(Release::L19).parse(specs, &s(&["-o"])).unwrap_err();
        assert_eq!(e, ["pk: for the -o option: requires a value!"]);
        // `--` ends the options; a second positional is one too many.
        let p = config(Release::L22)
            .parse(specs, &s(&["--", "-o"]))
            .unwrap();
        assert_eq!(p.positionals(), ["-o"]);
        let e = config(Release::L22)
            .parse(specs, &s(&["x", "--", "y"]))
            .unwrap_err();
        assert_eq!(
            e,
            ["pk: Too many positional arguments specified!\nCan specify at most 1 positional arguments: See: ./pk --help"]
        );
        // Help can only be turned on.
        let p = config(Release::L22)
            .parse(specs, &s(&["--help", "--help=false"]))
            .unwrap();
        assert!(p.any_flag("help") && !p.flag("help"));
    }

    #[test]
    fn uints() {
        assert_eq!(parse_uint("4096"), Some(4096));
        assert_eq!(parse_uint("0x10"), Some(16));
        assert_eq!(parse_uint("010"), Some(8));
        assert_eq!(parse_uint("0"), Some(0));
        assert_eq!(parse_uint("-1"), None);
        assert_eq!(parse_uint("4294967296"), None);
    }
}
