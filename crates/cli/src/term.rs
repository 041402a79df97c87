//! What the CLI shows only on a terminal: colours and a progress line.
//!
//! Colour follows `--color auto|always|never` (default `auto`): `auto`
//! colours a stream only when it is a terminal, `NO_COLOR` (any non-empty
//! value, <https://no-color.org>) is unset and `TERM` is not `dumb`. The
//! colour only repeats what the words say ("error", "runs", "DOES NOT
//! RUN"), so nothing is lost without it. The progress line goes to stderr
//! only when stderr is a terminal, and only once work has taken a second.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `--color`: when to colour output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set or `TERM` is `dumb`.
    Auto,
    /// Always, also into pipes and files.
    Always,
    /// Never.
    Never,
}

/// Which stream a piece of text goes to.
#[derive(Clone, Copy)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl ColorChoice {
    /// Whether text for `stream` gets colours.
    pub fn colors(self, stream: Stream) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => auto_colors(stream),
        }
    }

    /// `text` in bold `color` when `stream` is coloured, else as it is.
    pub fn paint(self, stream: Stream, color: Color, text: &str) -> String {
        if !self.colors(stream) {
            return text.to_string();
        }
        let code = match color {
            Color::Red => "1;31",
            Color::Green => "1;32",
            Color::Yellow => "1;33",
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }
}

/// `--color auto`: a terminal, `NO_COLOR` unset or empty, `TERM` not `dumb`.
fn auto_colors(stream: Stream) -> bool {
    let tty = match stream {
        Stream::Stdout => std::io::stdout().is_terminal(),
        Stream::Stderr => std::io::stderr().is_terminal(),
    };
    tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// `raw` as it goes to `stream`: as it is into a pipe or file (the drop-ins
/// print what LLVM prints), with control bytes escaped on a terminal.
pub fn for_terminal(stream: Stream, raw: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let tty = match stream {
        Stream::Stdout => std::io::stdout().is_terminal(),
        Stream::Stderr => std::io::stderr().is_terminal(),
    };
    match tty {
        true => offload_kit_io::output::escape_control_bytes(raw),
        false => std::borrow::Cow::Borrowed(raw),
    }
}

/// A colour of the few the CLI uses.
#[derive(Clone, Copy)]
pub enum Color {
    /// Errors and failed verdicts.
    Red,
    /// Passed verdicts.
    Green,
    /// Findings that are not errors of the file itself.
    Yellow,
}

/// A count of finished items shown on stderr as `what: done/total` once
/// the work has taken a second, at most ten times a second, and erased
/// when dropped. Safe to advance from several threads.
pub struct Progress {
    what: &'static str,
    total: usize,
    done: AtomicUsize,
    start: Instant,
    /// When the line was last drawn (`None`: never), behind a lock so one
    /// thread draws at a time.
    drawn: Mutex<Option<Instant>>,
    enabled: bool,
}

impl Progress {
    /// Progress over `total` items, shown only when stderr is a terminal.
    pub fn new(what: &'static str, total: usize) -> Progress {
        Progress {
            what,
            total,
            done: AtomicUsize::new(0),
            start: Instant::now(),
            drawn: Mutex::new(None),
            enabled: std::io::stderr().is_terminal() && total > 1,
        }
    }

    /// One more item done.
    pub fn advance(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if !self.enabled || self.start.elapsed() < show_after() {
            return;
        }
        let Ok(mut drawn) = self.drawn.try_lock() else {
            return; // another thread is drawing
        };
        if drawn.is_some_and(|t| t.elapsed() < Duration::from_millis(100)) && done < self.total {
            return;
        }
        *drawn = Some(Instant::now());
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r\x1b[2K{}: {done}/{}", self.what, self.total);
        let _ = e.flush();
    }
}

/// How long work runs before the progress line shows: a second, or
/// `OFFLOAD_KIT_PROGRESS_AFTER_MS` (for tests and slow terminals).
fn show_after() -> Duration {
    static AFTER: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *AFTER.get_or_init(|| {
        std::env::var("OFFLOAD_KIT_PROGRESS_AFTER_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(Duration::from_secs(1), Duration::from_millis)
    })
}

impl Drop for Progress {
    fn drop(&mut self) {
        if self.drawn.get_mut().is_ok_and(|d| d.is_some()) {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\r\x1b[2K");
            let _ = e.flush();
        }
    }
}
