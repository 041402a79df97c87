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

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::other(e.to_string())
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
