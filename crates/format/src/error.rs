//! Errors: what went wrong, at which absolute byte offset, under which spec rule.
//!
//! Modelled on `wasmparser::BinaryReaderError`: a boxed inner value so that
//! `Result<T, Error>` stays one pointer wide, and a `Display` that ends with
//! the offset and the rule.

use crate::rules::Rule;
use std::fmt;

/// An error found while reading, validating or writing a container.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Clone, PartialEq, Eq, Debug)]
struct Inner {
    rule: Option<&'static str>,
    offset: Option<u64>,
    message: String,
    context: Vec<String>,
}

impl Error {
    /// An error that violates `rule` at absolute byte `offset`.
    pub fn at(rule: Rule, offset: u64, message: impl Into<String>) -> Self {
        Error {
            inner: Box::new(Inner {
                rule: Some(rule.id),
                offset: Some(offset),
                message: message.into(),
                context: Vec::new(),
            }),
        }
    }

    /// An error that violates `rule` but has no byte position (a command-line value, say).
    pub fn rule(rule: Rule, message: impl Into<String>) -> Self {
        Error {
            inner: Box::new(Inner {
                rule: Some(rule.id),
                offset: None,
                message: message.into(),
                context: Vec::new(),
            }),
        }
    }

    /// An error outside the spec (I/O, usage).
    pub fn other(message: impl Into<String>) -> Self {
        Error {
            inner: Box::new(Inner {
                rule: None,
                offset: None,
                message: message.into(),
                context: Vec::new(),
            }),
        }
    }

    /// The spec rule ID this error cites, if any.
    pub fn rule_id(&self) -> Option<&'static str> {
        self.inner.rule
    }

    /// The absolute byte offset, if the error has a position.
    pub fn offset(&self) -> Option<u64> {
        self.inner.offset
    }

    /// The message without offset and rule.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// Shift the offset by `base`: used when a container is nested inside another one.
    pub fn rebase(mut self, base: u64) -> Self {
        if let Some(o) = self.inner.offset.as_mut() {
            *o = o.saturating_add(base);
        }
        self
    }

    /// Give a rule to an error that has none (an inner failure seen from an outer container).
    pub fn with_rule_if_none(mut self, rule: Rule) -> Self {
        if self.inner.rule.is_none() {
            self.inner.rule = Some(rule.id);
        }
        self
    }

    /// Add a line of context ("in section .hip_fatbin", "in bundle 2").
    pub fn context(mut self, what: impl Into<String>) -> Self {
        self.inner.context.push(what.into());
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.message)?;
        for c in &self.inner.context {
            write!(f, ", {c}")?;
        }
        match (self.inner.offset, self.inner.rule) {
            (Some(o), Some(r)) => write!(f, " (at offset 0x{o:x}, rule {r})"),
            (None, Some(r)) => write!(f, " (rule {r})"),
            (Some(o), None) => write!(f, " (at offset 0x{o:x})"),
            (None, None) => Ok(()),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({self})")
    }
}

impl std::error::Error for Error {}

/// A violation as the `--json` documents print it: `{"rule", "offset",
/// "message"}` (the message without context, offset and rule).
impl serde::Serialize for Error {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut v = s.serialize_struct("Violation", 3)?;
        v.serialize_field("rule", &self.inner.rule)?;
        v.serialize_field("offset", &self.inner.offset)?;
        v.serialize_field("message", &self.inner.message)?;
        v.end()
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::other(e.to_string())
    }
}

/// Every violation a strict reader or validator found, in input order.
///
/// A strict reader keeps going after a violation where it can, so one input
/// may break several rules; `Errors` carries them all and is one
/// `std::error::Error` for `?`. It dereferences to the `Vec<Error>`.
///
/// ```
/// use offload_kit_format::error::{Error, Errors};
/// use offload_kit_format::rules;
/// let mut all = Errors::default();
/// all.push(Error::at(rules::BIN_1, 0, "not a bundle"));
/// assert_eq!(all.len(), 1);
/// assert_eq!(all.first().and_then(|e| e.rule_id()), Some("BIN-1"));
/// let dynamic: Box<dyn std::error::Error> = Box::new(all);
/// assert!(dynamic.to_string().contains("rule BIN-1"));
/// ```
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Errors(Vec<Error>);

impl Errors {
    /// No errors yet.
    pub fn new() -> Self {
        Errors(Vec::new())
    }

    /// The errors as a vector.
    pub fn into_vec(self) -> Vec<Error> {
        self.0
    }

    /// Shift every offset by `base` (see [`Error::rebase`]).
    pub fn rebase(self, base: u64) -> Self {
        self.0.into_iter().map(|e| e.rebase(base)).collect()
    }
}

impl std::ops::Deref for Errors {
    type Target = Vec<Error>;
    fn deref(&self) -> &Vec<Error> {
        &self.0
    }
}

impl std::ops::DerefMut for Errors {
    fn deref_mut(&mut self) -> &mut Vec<Error> {
        &mut self.0
    }
}

impl From<Vec<Error>> for Errors {
    fn from(v: Vec<Error>) -> Self {
        Errors(v)
    }
}

impl From<Error> for Errors {
    fn from(e: Error) -> Self {
        Errors(vec![e])
    }
}

impl From<Errors> for Vec<Error> {
    fn from(e: Errors) -> Self {
        e.0
    }
}

impl From<std::io::Error> for Errors {
    fn from(e: std::io::Error) -> Self {
        Errors(vec![e.into()])
    }
}

impl FromIterator<Error> for Errors {
    fn from_iter<I: IntoIterator<Item = Error>>(iter: I) -> Self {
        Errors(iter.into_iter().collect())
    }
}

impl IntoIterator for Errors {
    type Item = Error;
    type IntoIter = std::vec::IntoIter<Error>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Errors {
    type Item = &'a Error;
    type IntoIter = std::slice::Iter<'a, Error>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// One error a line.
impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.0).finish()
    }
}

impl std::error::Error for Errors {}

/// A failure reported the way an LLVM release reports it (its message,
/// without the `<argv0>: error: ` prefix), with offload-kit's detail (the
/// rule and offset) where there is one: what the drop-in tools print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlvmError {
    /// The release's message.
    pub message: String,
    /// The rule and offset offload-kit adds.
    pub detail: Option<Error>,
}

impl LlvmError {
    /// The release's message alone.
    pub fn llvm(message: impl Into<String>) -> Self {
        LlvmError {
            message: message.into(),
            detail: None,
        }
    }

    /// The release's message with offload-kit's detail.
    pub fn with(message: impl Into<String>, detail: Error) -> Self {
        LlvmError {
            message: message.into(),
            detail: Some(detail),
        }
    }

    /// The same failure with the detail's offset shifted by `base` (a
    /// failure in a part of the input that starts at `base`).
    pub fn rebased(self, base: u64) -> Self {
        LlvmError {
            message: self.message,
            detail: self.detail.map(|d| d.rebase(base)),
        }
    }
}

impl fmt::Display for LlvmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(d) = &self.detail {
            write!(f, " [{d}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for LlvmError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.detail.as_ref().map(|d| d as _)
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
