//! The checker roles: completion and progress checker interfaces, the
//! check context every call receives, and the errors a checker reports.
//!
//! The engine never calls a checker: it hands the loop a [`CheckPacket`]
//! and a ticket, the loop runs the checker (natively or as a wasm verifier
//! in the sandbox) with a [`CheckContext`], and gives the result back to
//! the engine, which applies the stale-view and late-verdict rules.
//!
//! A check is a future, so the traits need no runtime: the loop awaits it,
//! and a checker that waits (a helper model, a sandboxed verifier) stops
//! when the context is cancelled or its deadline passes.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::cancel::{CancelHandle, Cancelled};
use crate::packet::CheckPacket;
use crate::verdict::{Verdict, VerdictError};

/// A progress key is at most this many characters (Unicode scalar values).
pub const MAX_PROGRESS_KEY_CHARS: usize = 4_000;

/// Why a checker gave no usable answer. Details stay with the host: the
/// engine records only the [`CheckerErrorKind`].
///
/// Serialized with its class as `kind` (a durable execution journals a
/// check's error and replays it as the same error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CheckerError {
    /// The check exceeded its deadline.
    #[error("checker timed out")]
    Timeout,
    /// The check used up its fuel (a deterministic compute budget, apart
    /// from the wall-clock deadline).
    #[error("checker ran out of fuel")]
    OutOfFuel,
    /// The check was cancelled.
    #[error("checker was cancelled")]
    Cancelled,
    /// The checker failed (trap, error, host refusal).
    #[error("checker failed: {0}")]
    Failed(String),
    /// The checker answered with a verdict that breaks a bound.
    #[error("checker returned an invalid verdict: {0}")]
    InvalidVerdict(#[from] VerdictError),
    /// The progress key is longer than [`MAX_PROGRESS_KEY_CHARS`].
    #[error("progress key has {chars} characters (limit {MAX_PROGRESS_KEY_CHARS})")]
    ProgressKeyTooLong {
        /// Characters found.
        chars: usize,
    },
}

/// The sanitized class of a [`CheckerError`], safe for diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CheckerErrorKind {
    /// See [`CheckerError::Timeout`].
    Timeout,
    /// See [`CheckerError::OutOfFuel`].
    OutOfFuel,
    /// See [`CheckerError::Cancelled`].
    Cancelled,
    /// See [`CheckerError::Failed`].
    Failed,
    /// See [`CheckerError::InvalidVerdict`].
    InvalidVerdict,
    /// See [`CheckerError::ProgressKeyTooLong`].
    InvalidProgressKey,
    /// The check packet could not be kept within its 1 MiB bound.
    PacketTooLarge,
}

impl CheckerError {
    /// The sanitized class of this error.
    pub fn kind(&self) -> CheckerErrorKind {
        match self {
            Self::Timeout => CheckerErrorKind::Timeout,
            Self::OutOfFuel => CheckerErrorKind::OutOfFuel,
            Self::Cancelled => CheckerErrorKind::Cancelled,
            Self::Failed(_) => CheckerErrorKind::Failed,
            Self::InvalidVerdict(_) => CheckerErrorKind::InvalidVerdict,
            Self::ProgressKeyTooLong { .. } => CheckerErrorKind::InvalidProgressKey,
        }
    }
}

/// What every checker call receives besides the packet: the deadline of
/// this call and its cancellation signal. The signal is the spec's,
/// "combining execution cancellation … and this callback's timeout":
/// [`CheckContext::is_cancelled`] and [`CheckContext::cancelled`] fire when
/// the run is cancelled and when the deadline passes, so a checker that
/// polls or awaits them stops at its deadline ([`CheckContext::interruption`]
/// tells which). Forward it into whatever the checker waits on (a helper
/// model, a sandboxed verifier); a checker that ignores it is abandoned at
/// the deadline or on cancellation, its answer unused (an answer after the
/// deadline is a timeout).
///
/// The context holds no timer. The runner of a check with a deadline fires
/// the handle there (the agent loop does, with its own timer), which wakes
/// `cancelled()`; without a runner that does, `is_cancelled` and a poll of
/// `cancelled()` still see a passed deadline, but nothing wakes a pending
/// `cancelled()` at it.
#[derive(Debug, Clone, Default)]
pub struct CheckContext {
    deadline: Option<Instant>,
    cancel: CancelHandle,
    record: Arc<OnceLock<String>>,
}

impl CheckContext {
    /// A context with no deadline and a fresh (never cancelled) handle.
    pub fn new() -> Self {
        Self::default()
    }

    /// The call ends by `deadline`.
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// The call is cancelled with `cancel`.
    pub fn with_cancel(mut self, cancel: CancelHandle) -> Self {
        self.cancel = cancel;
        self
    }

    /// When the call must have answered, if it has a deadline.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Time left until the deadline (zero once it passed), if there is one.
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// The cancellation handle: cancelled with the run, and by the runner
    /// at the deadline. Unlike [`CheckContext::is_cancelled`] it does not
    /// read the clock.
    pub fn cancel_handle(&self) -> &CancelHandle {
        &self.cancel
    }

    /// True once the deadline has passed (false without one).
    pub fn timed_out(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// True once the call is cancelled or its deadline has passed.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled() || self.timed_out()
    }

    /// Completes once the call is cancelled or its deadline has passed (see
    /// the type's note on timers).
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled::with_deadline(&self.cancel, self.deadline)
    }

    /// A checker that recorded this check leaves the record's id here (the
    /// first id given stays); the loop lists it in the diagnostics.
    pub fn note_record(&self, id: String) {
        let _ = self.record.set(id);
    }

    /// The id of this check's record, when the checker wrote one.
    pub fn record_id(&self) -> Option<&str> {
        self.record.get().map(String::as_str)
    }

    /// Why the call should stop now, if it should: a
    /// [`CheckerError::Timeout`] once the deadline has passed (even if the
    /// handle was fired too), else a [`CheckerError::Cancelled`] once the
    /// handle is cancelled.
    pub fn interruption(&self) -> Option<CheckerError> {
        if self.timed_out() {
            Some(CheckerError::Timeout)
        } else if self.cancel.is_cancelled() {
            Some(CheckerError::Cancelled)
        } else {
            None
        }
    }
}

/// The future a checker call returns.
pub type CheckFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, CheckerError>> + Send + 'a>>;

/// Decides whether the host's required completion evidence is present.
pub trait CompletionChecker: Send + Sync {
    /// Checks one detached packet within `ctx`. Must not change task state
    /// or dispatch effects.
    fn check<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, Verdict>;

    /// Identifies the checker (for a wasm verifier: the component digest).
    /// The engine keeps the identity an execution starts with; a verdict
    /// reported under another one stops with `state_changed`.
    fn identity(&self) -> String {
        String::new()
    }

    /// True when this checker applies the context's deadline itself and
    /// its answer, whenever it is delivered, already says whether it came
    /// in time (a timeout is then its answer). The runner then waits for
    /// the answer (still honouring cancellation) instead of timing it. A
    /// durable execution's journaled checker does this: the decision is
    /// journaled once, so every attempt of the execution agrees on it, even
    /// when the journal's acknowledgement arrives after the deadline.
    fn decides_deadline(&self) -> bool {
        false
    }
}

/// Samples a host progress key (an artifact revision, a task-state key).
pub trait ProgressChecker: Send + Sync {
    /// Returns the key for the state seen in `packet`, at most
    /// [`MAX_PROGRESS_KEY_CHARS`] characters, within `ctx`.
    fn progress_key<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, String>;

    /// Identifies the checker (for a wasm verifier: the component digest).
    fn identity(&self) -> String {
        String::new()
    }

    /// As [`CompletionChecker::decides_deadline`].
    fn decides_deadline(&self) -> bool {
        false
    }
}

/// The identities of an execution's checkers: `Some` for each role it
/// has. This is all the engine keeps of a checker (for the stale-view
/// guard); the loop holds the checkers themselves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckerIdentities {
    /// The completion checker's identity; `None` without one (a final
    /// answer is then returned unverified).
    pub completion: Option<String>,
    /// The progress checker's identity; `None` without one.
    pub progress: Option<String>,
}

/// Validates a progress key's bound.
pub(crate) fn validate_progress_key(key: &str) -> Result<(), CheckerError> {
    let chars = key.chars().count();
    if chars > MAX_PROGRESS_KEY_CHARS {
        return Err(CheckerError::ProgressKeyTooLong { chars });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::{Context, Poll, Waker};

    fn ready(ctx: &CheckContext) -> bool {
        let mut waiting = std::pin::pin!(ctx.cancelled());
        waiting
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
            .is_ready()
    }

    #[test]
    fn the_signal_fires_at_the_deadline() {
        let handle = CancelHandle::new();
        let passed = CheckContext::new()
            .with_cancel(handle.clone())
            .with_deadline(Instant::now());
        assert!(passed.timed_out());
        assert!(passed.is_cancelled());
        assert!(ready(&passed));
        assert_eq!(passed.interruption(), Some(CheckerError::Timeout));
        // The deadline is the check's own: the handle (the run's) is not
        // cancelled by it.
        assert!(!handle.is_cancelled());
        // Fired at the deadline too, it is still a timeout.
        handle.cancel();
        assert_eq!(passed.interruption(), Some(CheckerError::Timeout));
    }

    #[test]
    fn before_the_deadline_only_cancellation_fires_it() {
        let handle = CancelHandle::new();
        let ample = CheckContext::new()
            .with_cancel(handle.clone())
            .with_deadline(Instant::now() + Duration::from_secs(3600));
        assert!(!ample.is_cancelled());
        assert!(!ready(&ample));
        assert_eq!(ample.interruption(), None);
        handle.cancel();
        assert!(ample.is_cancelled());
        assert!(ready(&ample));
        assert_eq!(ample.interruption(), Some(CheckerError::Cancelled));
        // Without a deadline there is no timeout.
        let open = CheckContext::new();
        assert!(!open.timed_out() && !open.is_cancelled());
        assert_eq!(open.interruption(), None);
    }

    #[test]
    fn a_pending_wait_is_woken_when_the_runner_fires_the_handle() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::task::Wake;
        struct Count(AtomicUsize);
        impl Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let handle = CancelHandle::new();
        let ctx = CheckContext::new()
            .with_cancel(handle.clone())
            .with_deadline(Instant::now() + Duration::from_secs(3600));
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut waiting = std::pin::pin!(ctx.cancelled());
        let mut cx = Context::from_waker(&waker);
        assert_eq!(waiting.as_mut().poll(&mut cx), Poll::Pending);
        handle.cancel();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(waiting.as_mut().poll(&mut cx), Poll::Ready(()));
    }
}
