//! The agent's side of the journal: every effect of an execution (model
//! call, tool run, check) is handed to the handler as a [`Step`] and its
//! result awaited. The handler ([`crate::pump`]) performs each step inside
//! a journaled `ctx.run`, or takes its result from the journal on replay.
//!
//! The loop runs as one future in the handler, and a step is sent when its
//! future is first polled: the steps arrive in the order the loop asks for
//! them, the same on every replay, so journal entries line up.

use std::time::Instant;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use verdict_agent::{ToolContext, ToolError, ToolReturn, ToolRun};
use verdict_policy::{CheckerError, Effect};
use verdict_providers::{ModelResponse, ProviderError};

use crate::entry::{CheckAnswer, CheckRole};

/// One effect of an execution, with the way to answer it.
pub(crate) enum Step {
    /// A model call: `call` makes it; `request_sha256` is the request's
    /// fingerprint (a replay must ask the same).
    Model {
        request_sha256: String,
        call: BoxFuture<'static, Result<ModelResponse, ProviderError>>,
        reply: oneshot::Sender<Result<ModelResponse, ProviderError>>,
    },
    /// A tool run.
    Tool {
        call: ToolStep,
        reply: oneshot::Sender<Result<ToolReturn, ToolError>>,
    },
    /// A completion check or a progress sample.
    Check {
        call: CheckStep,
        reply: oneshot::Sender<CheckOutcome>,
    },
}

/// A check as the handler needs it.
pub(crate) struct CheckStep {
    pub role: CheckRole,
    /// The checker's identity (a wasm verifier's digest).
    pub checker: String,
    /// The packet's fingerprint.
    pub packet_sha256: String,
    /// The check's deadline: an answer at or after it is a timeout.
    pub deadline: Option<Instant>,
    /// Runs the check: its answer (a verdict as JSON, or a key) and the id
    /// of the record the checker wrote.
    pub run: BoxFuture<'static, CheckOutcome>,
}

/// A check's journaled outcome.
#[derive(Debug, Clone)]
pub(crate) struct CheckOutcome {
    pub answer: CheckAnswer,
    pub record: Option<String>,
}

/// A tool run as the handler needs it.
pub(crate) struct ToolStep {
    pub tool: String,
    pub effect: Effect,
    pub idempotent: bool,
    pub deadline: std::time::Duration,
    pub arguments: Value,
    pub ctx: ToolContext,
    pub run: ToolRun,
}

/// The sending side, cloned into every journaled effect of one execution.
#[derive(Clone)]
pub(crate) struct Journal {
    steps: mpsc::UnboundedSender<Step>,
}

/// What an effect answers when the handler is gone (the invocation ended
/// while the loop still ran: it never reaches a user).
const GONE: &str = "the durable execution ended";

impl Journal {
    /// A journal and the receiver the handler pumps.
    pub(crate) fn channel() -> (Self, mpsc::UnboundedReceiver<Step>) {
        let (steps, rx) = mpsc::unbounded_channel();
        (Self { steps }, rx)
    }

    /// Sends a step and awaits its answer; `None` when the handler is gone.
    async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Step) -> Option<T> {
        let (reply, answer) = oneshot::channel();
        self.steps.send(make(reply)).ok()?;
        answer.await.ok()
    }

    pub(crate) async fn model(
        &self,
        request_sha256: String,
        call: BoxFuture<'static, Result<ModelResponse, ProviderError>>,
    ) -> Result<ModelResponse, ProviderError> {
        self.ask(|reply| Step::Model {
            request_sha256,
            call,
            reply,
        })
        .await
        .unwrap_or(Err(ProviderError::Cancelled))
    }

    pub(crate) async fn tool(&self, call: ToolStep) -> Result<ToolReturn, ToolError> {
        self.ask(|reply| Step::Tool { call, reply })
            .await
            .unwrap_or_else(|| Err(ToolError::new(GONE)))
    }

    pub(crate) async fn check(&self, call: CheckStep) -> CheckOutcome {
        self.ask(|reply| Step::Check { call, reply })
            .await
            .unwrap_or(CheckOutcome {
                answer: Err(CheckerError::Cancelled),
                record: None,
            })
    }
}

impl Step {
    /// Whether this is a model call.
    pub(crate) fn is_model(&self) -> bool {
        matches!(self, Self::Model { .. })
    }
}
