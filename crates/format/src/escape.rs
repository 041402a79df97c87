//! Text from an untrusted input (an entry ID, a member name, a file name)
//! escaped before it reaches a terminal, so that it can neither move the
//! cursor, recolour the terminal nor forge a line of output. Error messages,
//! listings and reports print such text through these functions.

/// `text` with every control character (newline, ESC, NUL, DEL, …)
/// written as an escape (`\n`, `\u{1b}`): how a name or message taken from
/// an input or the file system is printed, so that it can neither move the
/// cursor, recolour a terminal nor forge a line of output.
///
/// ```
/// use offload_kit_format::escape::escape_controls;
/// assert_eq!(escape_controls("gfx906"), "gfx906");
/// assert_eq!(escape_controls("a\nb: runs\x1b[31m"), "a\\nb: runs\\u{1b}[31m");
/// ```
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The bytes of `raw` (an ID or name LLVM prints as it is), with control
/// bytes written `\xNN`: for a terminal.
pub fn escape_control_bytes(raw: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if !raw.iter().any(|&b| b < 0x20 || b == 0x7f) {
        return std::borrow::Cow::Borrowed(raw);
    }
    let mut out = Vec::with_capacity(raw.len() + 8);
    for &b in raw {
        if b < 0x20 || b == 0x7f {
            out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
        } else {
            out.push(b);
        }
    }
    std::borrow::Cow::Owned(out)
}
