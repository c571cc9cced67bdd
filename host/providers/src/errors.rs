//! Typed errors of model calls. No variant ever holds an API key.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TimeoutPhase {
    /// Opening a connection: DNS, TCP connect and TLS handshake. Nothing was
    /// sent, so it is retried like a refused connection.
    Connect,
    /// Waiting for the response headers after the request was sent (the
    /// clock starts before connecting).
    FirstByte,
    /// Waiting for the next chunk of a streamed or buffered body.
    Idle,
    /// The whole call took longer than its total bound.
    Total,
}

impl std::fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Connect => "connecting",
            Self::FirstByte => "waiting for the first byte",
            Self::Idle => "waiting for the next chunk",
            Self::Total => "for the whole call",
        })
    }
}

/// Why a model call failed. Serialized with its class as `kind` (a
/// durable execution journals a failed call and replays it as the same
/// error).
#[derive(Debug, Clone, PartialEq, Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProviderError {
    /// The credential is missing, wrong or not allowed (401/403).
    #[error("authentication failed (HTTP {status}): {message}")]
    Authentication {
        /// HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// No API key was found where the connector was told to look.
    #[error("no API key: environment variable {env_var} is not set")]
    MissingCredential {
        /// The variable that was read.
        env_var: String,
    },
    /// HTTP 429 (or a rate-limit error event).
    #[error("rate limited{}: {message}", fmt_retry_after(*.retry_after))]
    RateLimited {
        /// How long the provider asked us to wait, if it said.
        retry_after: Option<Duration>,
        /// The provider's message.
        message: String,
    },
    /// HTTP 5xx, or an overload/server error event mid-stream.
    #[error("provider server error (HTTP {status}): {message}")]
    Server {
        /// HTTP status (529 for Anthropic's overloaded error event).
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// HTTP 4xx other than auth and rate limits: the request was refused.
    #[error("bad request (HTTP {status}): {message}")]
    BadRequest {
        /// HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The body or an event did not parse as the protocol says it must.
    #[error("malformed provider response: {detail}")]
    MalformedResponse {
        /// What was wrong.
        detail: String,
    },
    /// The stream ended before the provider's end marker.
    #[error("stream truncated: {detail}")]
    TruncatedStream {
        /// What was missing.
        detail: String,
    },
    /// A bounded wait ran out.
    #[error("timed out {phase} after {after:?}")]
    Timeout {
        /// Which wait.
        phase: TimeoutPhase,
        /// The bound that was exceeded.
        after: Duration,
    },
    /// The caller cancelled the call.
    #[error("cancelled")]
    Cancelled,
    /// The connection failed before any HTTP status (refused, reset, DNS).
    #[error("transport error: {detail}")]
    Transport {
        /// The client's description (URLs only, never headers).
        detail: String,
    },
    /// The caller's attempt hook refused another attempt.
    #[error("attempt refused: {reason}")]
    AttemptRefused {
        /// Why.
        reason: AttemptRefusal,
    },
    /// The connector configuration is unusable.
    #[error("invalid connector configuration: {detail}")]
    Config {
        /// What is wrong.
        detail: String,
    },
}

/// Why an attempt hook refused an attempt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AttemptRefusal {
    /// The caller's model-call budget is spent.
    #[error("the model-call budget of {max_calls} calls is spent")]
    BudgetSpent {
        /// The budget.
        max_calls: u32,
    },
    /// Another reason, in the caller's words.
    #[error("{0}")]
    Other(String),
}

fn fmt_retry_after(retry_after: Option<Duration>) -> String {
    match retry_after {
        Some(d) => format!(" (retry after {d:?})"),
        None => String::new(),
    }
}

impl ProviderError {
    /// Whether a retry may succeed: rate limits, server errors, and
    /// connection failures before any response (a connect timeout among
    /// them).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. }
                | Self::Server { .. }
                | Self::Transport { .. }
                | Self::Timeout {
                    phase: TimeoutPhase::Connect,
                    ..
                }
        )
    }

    /// A malformed-response error.
    pub(crate) fn malformed(detail: impl Into<String>) -> Self {
        Self::MalformedResponse {
            detail: detail.into(),
        }
    }

    /// A truncated-stream error.
    pub(crate) fn truncated(detail: impl Into<String>) -> Self {
        Self::TruncatedStream {
            detail: detail.into(),
        }
    }

    /// Classify an HTTP error status and the provider's message.
    pub(crate) fn from_status(status: u16, message: String, retry_after: Option<Duration>) -> Self {
        match status {
            401 | 403 => Self::Authentication { status, message },
            429 => Self::RateLimited {
                retry_after,
                message,
            },
            500..=599 => Self::Server { status, message },
            _ => Self::BadRequest { status, message },
        }
    }
}
