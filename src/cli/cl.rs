//! A small emulation of `llvm::cl` option parsing: `-name=value`,
//! `--name=value`, `-name value`, boolean flags with optional `=true|false|1|0`,
//! comma-separated lists, repeated options, `@file` response files, and
//! LLVM's messages for unknown options and bad values.

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

/// Parsed options: name → values in order (flags hold "true"/"false").
#[derive(Debug, Default, Clone)]
pub struct Parsed {
    values: BTreeMap<&'static str, Vec<String>>,
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

/// Parse `args` (without argv[0]) against `specs`. `prog` is the program
/// name used in messages. Errors are complete lines as LLVM prints them.
pub fn parse(prog: &str, specs: &[Spec], args: &[String]) -> Result<Parsed, Vec<String>> {
    let mut p = Parsed::default();
    let mut i = 0;
    let mut positional = Vec::new();
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            positional.extend(args[i..].iter().cloned());
            break;
        }
        if !a.starts_with('-') || a == "-" {
            positional.push(a.clone());
            continue;
        }
        let body = a.strip_prefix("--").unwrap_or(&a[1..]);
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let Some(spec) = specs.iter().find(|s| s.name == name) else {
            let mut lines = vec![format!(
                "{prog}: Unknown command line argument '{a}'.  Try: '{prog} --help'"
            )];
            if let Some(best) = specs
                .iter()
                .map(|s| (edit_distance(name, s.name), s))
                .filter(|(d, _)| *d <= 2)
                .min_by_key(|(d, _)| *d)
            {
                let val = inline.map(|v| format!("={v}")).unwrap_or_default();
                lines.push(format!("{prog}: Did you mean '--{}{val}'?", best.1.name));
            }
            return Err(lines);
        };
        let entry = p.values.entry(spec.name).or_default();
        match spec.kind {
            Kind::Flag => {
                let v = match inline.as_deref() {
                    None | Some("true") | Some("1") | Some("TRUE") | Some("True") => "true",
                    Some("false") | Some("0") | Some("FALSE") | Some("False") => "false",
                    Some(v) => {
                        return Err(vec![format!(
                            "{prog}: for the --{} option: '{v}' is invalid value for boolean argument! Try 0 or 1",
                            spec.name
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
                            "{prog}: for the --{} option: requires a value!",
                            spec.name
                        )])
                    }
                };
                match spec.kind {
                    Kind::CommaList => entry.extend(v.split(',').map(str::to_string)),
                    Kind::Uint => {
                        if parse_uint(&v).is_none() {
                            return Err(vec![format!(
                                "{prog}: for the --{} option: '{v}' value invalid for uint argument!",
                                spec.name
                            )]);
                        }
                        entry.push(v);
                    }
                    _ => entry.push(v),
                }
            }
        }
    }
    if let Some(a) = positional.first() {
        // A tool without positional options reports a stray argument as unknown.
        return Err(vec![format!(
            "{prog}: Unknown command line argument '{a}'.  Try: '{prog} --help'"
        )]);
    }
    Ok(p)
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

    const SPECS: &[Spec] = &[
        Spec {
            name: "type",
            kind: Kind::Value,
        },
        Spec {
            name: "targets",
            kind: Kind::CommaList,
        },
        Spec {
            name: "input",
            kind: Kind::Multi,
        },
        Spec {
            name: "list",
            kind: Kind::Flag,
        },
        Spec {
            name: "bundle-align",
            kind: Kind::Uint,
        },
    ];

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
    fn uints() {
        assert_eq!(parse_uint("4096"), Some(4096));
        assert_eq!(parse_uint("0x10"), Some(16));
        assert_eq!(parse_uint("010"), Some(8));
        assert_eq!(parse_uint("0"), Some(0));
        assert_eq!(parse_uint("-1"), None);
        assert_eq!(parse_uint("4294967296"), None);
    }
}
