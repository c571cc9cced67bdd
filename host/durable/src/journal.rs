//! The agent's side of the journal: every effect of an execution (model
//! call, tool run, check) is handed to the handler as a [`Step`] and its
//! result awaited. The handler ([`crate::pump`]) performs each step inside
//! a journaled `ctx.run`, or takes its result from the journal on replay.
//!
//! The loop runs as one future in the handler, and a step is sent when its
//! future is first polled: the steps arrive in the order the loop asks for
//! them, the same on every replay, so journal entries line up.

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use verdict_agent::{ToolContext, ToolError, ToolReturn, ToolRun};
use verdict_policy::{CheckerError, Effect, Verdict};
use verdict_providers::{ModelResponse, ProviderError};

/// One effect of an execution, with the way to answer it.
pub(crate) enum Step {
    /// A model call: `call` makes it.
    Model {
        call: BoxFuture<'static, Result<ModelResponse, ProviderError>>,
        reply: oneshot::Sender<Result<ModelResponse, ProviderError>>,
    },
    /// A tool run.
    Tool {
        call: ToolStep,
        reply: oneshot::Sender<Result<ToolReturn, ToolError>>,
    },
    /// A completion check.
    Verdict {
        call: BoxFuture<'static, Result<Verdict, CheckerError>>,
        reply: oneshot::Sender<Result<Verdict, CheckerError>>,
    },
    /// A progress sample.
    Progress {
        call: BoxFuture<'static, Result<String, CheckerError>>,
        reply: oneshot::Sender<Result<String, CheckerError>>,
    },
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
        call: BoxFuture<'static, Result<ModelResponse, ProviderError>>,
    ) -> Result<ModelResponse, ProviderError> {
        self.ask(|reply| Step::Model { call, reply })
            .await
            .unwrap_or(Err(ProviderError::Cancelled))
    }

    pub(crate) async fn tool(&self, call: ToolStep) -> Result<ToolReturn, ToolError> {
        self.ask(|reply| Step::Tool { call, reply })
            .await
            .unwrap_or_else(|| Err(ToolError::new(GONE)))
    }

    pub(crate) async fn verdict(
        &self,
        call: BoxFuture<'static, Result<Verdict, CheckerError>>,
    ) -> Result<Verdict, CheckerError> {
        self.ask(|reply| Step::Verdict { call, reply })
            .await
            .unwrap_or(Err(CheckerError::Cancelled))
    }

    pub(crate) async fn progress(
        &self,
        call: BoxFuture<'static, Result<String, CheckerError>>,
    ) -> Result<String, CheckerError> {
        self.ask(|reply| Step::Progress { call, reply })
            .await
            .unwrap_or(Err(CheckerError::Cancelled))
    }
}

impl Step {
    /// Whether this is a model call.
    pub(crate) fn is_model(&self) -> bool {
        matches!(self, Self::Model { .. })
    }
}
