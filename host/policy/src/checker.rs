//! Completion and progress checker interfaces, with closure adapters.
//!
//! The engine never calls a checker: it hands the loop a [`CheckPacket`]
//! and a ticket, the loop runs the checker (natively or in the wasm
//! sandbox, with its own deadline), and gives the result back to the engine,
//! which applies the stale-view and late-verdict rules.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::packet::CheckPacket;
use crate::verdict::{Verdict, VerdictError};

/// A progress key is at most this many characters (Unicode scalar values).
pub const MAX_PROGRESS_KEY_CHARS: usize = 4_000;

/// Why a checker gave no usable answer. Details stay with the host: the
/// engine records only the [`CheckerErrorKind`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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

/// Decides whether the host's required completion evidence is present.
pub trait CompletionChecker: Send + Sync {
    /// Checks one detached packet. Must not change task state or dispatch
    /// effects.
    fn check(&self, packet: &CheckPacket) -> Result<Verdict, CheckerError>;

    /// Identifies the checker (for wasm: the component digest). A change
    /// between a check and its verdict stops with `state_changed`.
    fn identity(&self) -> String {
        String::new()
    }
}

/// Samples a host progress key (an artifact revision, a task-state key).
pub trait ProgressChecker: Send + Sync {
    /// Returns the key for the state seen in `packet`, at most
    /// [`MAX_PROGRESS_KEY_CHARS`] characters.
    fn progress_key(&self, packet: &CheckPacket) -> Result<String, CheckerError>;

    /// Identifies the checker (for wasm: the component digest).
    fn identity(&self) -> String {
        String::new()
    }
}

/// A [`CompletionChecker`] made from a closure.
pub struct CompletionFn<F>(pub F);

impl<F> CompletionChecker for CompletionFn<F>
where
    F: Fn(&CheckPacket) -> Result<Verdict, CheckerError> + Send + Sync,
{
    fn check(&self, packet: &CheckPacket) -> Result<Verdict, CheckerError> {
        (self.0)(packet)
    }
}

impl<F> fmt::Debug for CompletionFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CompletionFn")
    }
}

/// A [`ProgressChecker`] made from a closure.
pub struct ProgressFn<F>(pub F);

impl<F> ProgressChecker for ProgressFn<F>
where
    F: Fn(&CheckPacket) -> Result<String, CheckerError> + Send + Sync,
{
    fn progress_key(&self, packet: &CheckPacket) -> Result<String, CheckerError> {
        (self.0)(packet)
    }
}

impl<F> fmt::Debug for ProgressFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressFn")
    }
}

/// Validates a progress key's bound.
pub fn validate_progress_key(key: &str) -> Result<(), CheckerError> {
    let chars = key.chars().count();
    if chars > MAX_PROGRESS_KEY_CHARS {
        return Err(CheckerError::ProgressKeyTooLong { chars });
    }
    Ok(())
}
