//! Code object URIs, as ROCm's loader, debugger and tools name a code
//! object inside a file or a process (AMDGPUUsage, "Loaded Code Object Path
//! Uniform Resource Identifier (URI)", LLVM 22):
//!
//! ```text
//! code_object_uri ::= file_uri | memory_uri
//! file_uri        ::= "file://" file_path [ range_specifier ]
//! memory_uri      ::= "memory://" process_id range_specifier
//! range_specifier ::= ( "#" | "?" ) "offset=" number "&" "size=" number
//! ```
//!
//! The rules are spec/uri.md's (URI-1 … URI-4); errors cite them, at the
//! byte position in the URI text. `file_path` is percent-encoded: every
//! byte outside `[a-zA-Z0-9/_.~-]` is `%` and two uppercase hex digits, so
//! a path holding `#`, `&` or `%` survives (LLVM 22's `OffloadBundleURI` reads the path up to the first
//! `#` or `?` and decodes nothing: such paths are its trap). A `number` is a
//! C literal: `0x` hex, a leading `0` octal, else decimal.
//!
//! # Example
//!
//! ```
//! use offload_kit_format::uri::{self, CodeObjectUri};
//! use std::path::Path;
//!
//! let text = uri::file_uri(Path::new("/opt/my libs/a&b.so"), 4096, 1200);
//! assert_eq!(text, "file:///opt/my%20libs/a%26b.so#offset=4096&size=1200");
//! let parsed = uri::parse(&text).unwrap();
//! assert_eq!(
//!     parsed,
//!     CodeObjectUri::File { path: "/opt/my libs/a&b.so".into(), offset: 4096, size: Some(1200) }
//! );
//! assert!(matches!(
//!     uri::parse("memory://1234#offset=0x20000&size=3000"),
//!     Ok(CodeObjectUri::Memory { pid: 1234, offset: 0x20000, size: 3000 })
//! ));
//! assert!(uri::parse("file://a.so#offset=9x&size=1").is_err());
//! ```

use crate::error::Error;
use crate::rules::{self, Rule};
use std::path::{Path, PathBuf};

/// A parsed code object URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeObjectUri {
    /// Bytes of a file: `offset` defaults to 0, `size` to the rest of it.
    File {
        /// The decoded path.
        path: PathBuf,
        /// Byte offset in the file.
        offset: u64,
        /// Bytes, when given.
        size: Option<u64>,
    },
    /// Bytes of a running process's memory.
    Memory {
        /// The process.
        pid: u64,
        /// The address.
        offset: u64,
        /// Bytes.
        size: u64,
    },
}

/// The `file://` URI of `size` bytes at `offset` of `path`.
pub fn file_uri(path: &Path, offset: u64, size: u64) -> String {
    format!(
        "file://{}#offset={offset}&size={size}",
        encode_path(path.as_os_str().as_encoded_bytes())
    )
}

/// A path's bytes percent-encoded as URI-2 writes them: every byte outside
/// `[A-Za-z0-9/_.~-]` as `%XX` (upper-case hex).
pub fn encode_path(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"/_.~-".contains(&b) {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// Parse a code object URI. Errors name the byte position in `text`.
pub fn parse(text: &str) -> Result<CodeObjectUri, Error> {
    let bad = |rule: Rule, at: usize, what: &str| {
        Error::rule(
            rule,
            format!(
                "'{}' is not a code object URI: {what} at byte {at}",
                text.escape_debug()
            ),
        )
    };
    if let Some(rest) = text.strip_prefix("file://") {
        let start = text.len() - rest.len();
        let end = rest.find(['#', '?']).unwrap_or(rest.len());
        let path =
            decode(&rest[..end]).map_err(|i| bad(rules::URI_2, start + i, "a bad %-escape"))?;
        if path.is_empty() {
            return Err(bad(rules::URI_1, start, "no file path"));
        }
        let (offset, size) = if end == rest.len() {
            (0, None)
        } else {
            let (o, s) = range(&rest[end + 1..], start + end + 1, &bad)?;
            (o, Some(s))
        };
        return Ok(CodeObjectUri::File {
            path: path_of(path),
            offset,
            size,
        });
    }
    if let Some(rest) = text.strip_prefix("memory://") {
        let start = text.len() - rest.len();
        let end = rest
            .find(['#', '?'])
            .ok_or_else(|| bad(rules::URI_1, text.len(), "no range (#offset=N&size=M)"))?;
        let digits = &rest[..end];
        let pid = Some(digits)
            .filter(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()))
            .and_then(|d| d.parse::<u64>().ok())
            .ok_or_else(|| bad(rules::URI_1, start, "no decimal process ID"))?;
        let (offset, size) = range(&rest[end + 1..], start + end + 1, &bad)?;
        return Ok(CodeObjectUri::Memory { pid, offset, size });
    }
    Err(bad(rules::URI_1, 0, "neither file:// nor memory://"))
}

/// `offset=N&size=M` at byte `at` of the URI.
fn range(
    text: &str,
    at: usize,
    bad: &dyn Fn(Rule, usize, &str) -> Error,
) -> Result<(u64, u64), Error> {
    let bad = |at: usize, what: &str| bad(rules::URI_3, at, what);
    let rest = text
        .strip_prefix("offset=")
        .ok_or_else(|| bad(at, "no 'offset='"))?;
    let amp = rest.find('&').ok_or_else(|| bad(at, "no '&size='"))?;
    let offset = number(&rest[..amp]).ok_or_else(|| bad(at + 7, "a bad number"))?;
    let size_at = at + 7 + amp + 1;
    let size_text = rest[amp + 1..]
        .strip_prefix("size=")
        .ok_or_else(|| bad(size_at, "no 'size='"))?;
    let size = number(size_text).ok_or_else(|| bad(size_at + 5, "a bad number"))?;
    Ok((offset, size))
}

/// A C integral literal: `0x`/`0X` hex, a leading `0` octal, else decimal.
fn number(s: &str) -> Option<u64> {
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None if s.len() > 1 && s.starts_with('0') => (&s[1..], 8),
        None => (s, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// Percent-decoding; the error is the position of a bad escape.
fn decode(s: &str) -> Result<Vec<u8>, usize> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3).ok_or(i)?;
            // Two hex digits exactly (`from_str_radix` alone takes "+1").
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return Err(i);
            }
            let hex = std::str::from_utf8(hex).map_err(|_| i)?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| i)?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

#[cfg(unix)]
fn path_of(bytes: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(bytes))
}

#[cfg(not(unix))]
fn path_of(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_c_literals() {
        assert_eq!(number("0x1F"), Some(31));
        assert_eq!(number("0X1f"), Some(31));
        assert_eq!(number("017"), Some(15));
        assert_eq!(number("0"), Some(0));
        assert_eq!(number("133"), Some(133));
        assert_eq!(number("08"), None);
        assert_eq!(number("0x"), None);
        assert_eq!(number("18446744073709551616"), None);
    }

    #[test]
    fn paths_round_trip_through_the_encoding() {
        for p in ["/a b/c#d?e&f%g", "rel/ü.so", "/x"] {
            let u = file_uri(Path::new(p), 1, 2);
            assert!(!u["file://".len()..u.find('#').unwrap()].contains(['#', '?', '&', ' ']));
            assert_eq!(
                parse(&u).unwrap(),
                CodeObjectUri::File {
                    path: p.into(),
                    offset: 1,
                    size: Some(2)
                }
            );
        }
    }

    #[test]
    fn bad_uris_name_the_byte() {
        let e = parse("file://a%G1.so").unwrap_err().to_string();
        assert!(e.contains("byte 8"), "{e}");
        assert!(parse("file://a.so#offset=1").is_err());
        assert!(parse("file://a.so#size=1&offset=1").is_err());
        assert!(parse("memory://12").is_err());
        assert!(parse("http://x").is_err());
        // A sign is neither a hex digit nor a decimal one.
        assert!(parse("file://a%+1.so").is_err());
        assert!(parse("memory://+5#offset=0&size=1").is_err());
        assert_eq!(
            parse("file://a.so").unwrap(),
            CodeObjectUri::File {
                path: "a.so".into(),
                offset: 0,
                size: None
            }
        );
        assert!(matches!(
            parse("file://a.so?offset=010&size=0x10"),
            Ok(CodeObjectUri::File {
                offset: 8,
                size: Some(16),
                ..
            })
        ));
    }
}
