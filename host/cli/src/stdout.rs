//! Writing to stdout without ever panicking: a closed pipe (`verdict … |
//! head -1`) or a full disk is an [`OutputError`], which `main` reports as
//! one `error:` line and exit code 7 ([`crate::exit::Exit::OutputFailed`]).
//!
//! The process ignores SIGPIPE (Rust's default), so a write to a closed
//! pipe fails with `EPIPE` instead of killing the process; every print path
//! of the CLI goes through [`outln!`](crate::outln) or a [`Watched`] writer.

use std::fmt;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

/// Standard output could not be written; what was being printed is lost.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to standard output: {error}{}", lost.as_deref().map(|l| format!(" ({l})")).unwrap_or_default())]
pub struct OutputError {
    /// The write error (part of the message, so not a `source`).
    pub error: io::Error,
    /// What the lost output would have said, when worth telling on stderr.
    pub lost: Option<String>,
}

impl From<io::Error> for OutputError {
    fn from(error: io::Error) -> Self {
        Self { error, lost: None }
    }
}

impl OutputError {
    /// The same error, telling what the lost output would have said.
    pub fn losing(mut self, what: impl Into<String>) -> Self {
        self.lost = Some(what.into());
        self
    }
}

/// Writes one line to stdout and flushes it.
pub fn write_line(args: fmt::Arguments<'_>) -> Result<(), OutputError> {
    let mut out = io::stdout().lock();
    out.write_fmt(args)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// `println!` that returns a [`Result<(), OutputError>`] instead of
/// panicking.
#[macro_export]
macro_rules! outln {
    () => { $crate::stdout::write_line(format_args!("")) };
    ($($arg:tt)*) => { $crate::stdout::write_line(format_args!($($arg)*)) };
}

/// Writes one line to stderr; a failure is ignored (there is nowhere left
/// to report it), never a panic.
pub fn note_line(args: fmt::Arguments<'_>) {
    let mut err = io::stderr().lock();
    let _ = err.write_fmt(args);
    let _ = err.write_all(b"\n");
    let _ = err.flush();
}

/// The first write error a [`Watched`] writer met, shared with its owner.
#[derive(Debug, Clone, Default)]
pub struct FirstError(Arc<Mutex<Option<io::Error>>>);

impl FirstError {
    /// Takes the recorded error, if any.
    pub fn take(&self) -> Option<io::Error> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    fn record(&self, error: &io::Error) -> bool {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let first = slot.is_none();
        if first {
            *slot = Some(io::Error::new(error.kind(), error.to_string()));
        }
        first
    }

    /// Whether a write has failed.
    pub fn failed(&self) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }
}

/// A writer that remembers its first error (for writers whose callers
/// ignore errors, like the narrator) and calls `on_error` once when it
/// happens. Every later write fails at once.
pub struct Watched<W, F: FnMut()> {
    inner: W,
    errors: FirstError,
    on_error: Option<F>,
}

impl<W: Write, F: FnMut()> Watched<W, F> {
    /// Watches `inner`; `on_error` runs at the first failed write.
    pub fn new(inner: W, errors: FirstError, on_error: F) -> Self {
        Self {
            inner,
            errors,
            on_error: Some(on_error),
        }
    }

    fn check<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &result
            && self.errors.record(e)
            && let Some(mut on_error) = self.on_error.take()
        {
            on_error();
        }
        result
    }

    fn refuse(&self) -> io::Result<()> {
        if self.errors.failed() {
            return Err(io::Error::other("standard output already failed"));
        }
        Ok(())
    }
}

impl<W: Write, F: FnMut()> Write for Watched<W, F> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.refuse()?;
        let result = self.inner.write(buf);
        self.check(result)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.refuse()?;
        let result = self.inner.flush();
        self.check(result)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(io::ErrorKind::StorageFull))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_first_error_is_kept_and_reported_once() {
        let errors = FirstError::default();
        let mut calls = 0;
        let mut w = Watched::new(Full, errors.clone(), || calls += 1);
        assert!(w.write_all(b"a").is_err());
        assert!(w.write_all(b"b").is_err());
        drop(w);
        assert_eq!(calls, 1);
        assert_eq!(errors.take().unwrap().kind(), io::ErrorKind::StorageFull);
    }

    #[test]
    fn a_lost_result_is_named_in_the_message() {
        let e = OutputError::from(io::Error::from(io::ErrorKind::BrokenPipe))
            .losing("outcome: completed, exit 0");
        assert_eq!(
            e.to_string(),
            "cannot write to standard output: broken pipe (outcome: completed, exit 0)"
        );
    }
}
