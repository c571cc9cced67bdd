//! Typed events of [`crate::Agent::stream`], and the sink the shared loop
//! emits them into (a no-op for `run`).

use tokio::sync::mpsc::Sender;
use verdict_policy::LoopDiagnostics;

use super::response::{AgentResponse, RunError};
use crate::tools::SettledCall;

/// One event of a streamed run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// A piece of model text. Provisional: it may belong to a candidate the
    /// completion check later rejects.
    TextDelta(String),
    /// A tool call passed its hooks (and admission, with a policy) and is
    /// about to run.
    ToolCallAdmitted {
        /// The call id.
        call_id: String,
        /// The tool.
        name: String,
    },
    /// A tool call settled (ran, failed, or was skipped / not started).
    ToolCallSettled(SettledCall),
    /// Host feedback was appended for the next model turn.
    LoopNotice {
        /// The labelled feedback text.
        feedback: String,
    },
    /// A model turn and its tool batch are done.
    IterationComplete {
        /// The turn number, from 1.
        iteration: u32,
        /// The policy diagnostics now, when the run has a policy.
        loop_diagnostics: Option<LoopDiagnostics>,
    },
    /// The run finished; always the last event.
    ResponseComplete(Box<AgentResponse>),
    /// The run failed (with what had settled); always the last event.
    Failed(RunError),
}

/// Where the loop sends events: a bounded channel the loop waits on, so it
/// runs at most [`EVENTS_AHEAD`] events ahead of its consumer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Events(Option<Sender<AgentEvent>>);

/// The events a streamed run may have sent that its consumer has not taken
/// yet (the loop waits to send the next one).
pub(crate) const EVENTS_AHEAD: usize = 1;

impl Events {
    /// Events go nowhere (`run`).
    pub(crate) fn none() -> Self {
        Self(None)
    }

    /// Events go to `sender` (`stream`).
    pub(crate) fn to(sender: Sender<AgentEvent>) -> Self {
        Self(Some(sender))
    }

    /// Sends `event`, waiting while the consumer has not taken the
    /// previous one; a dropped consumer is handled by cancellation.
    pub(crate) async fn emit(&self, event: impl FnOnce() -> AgentEvent) {
        if let Some(sender) = &self.0 {
            let _ = sender.send(event()).await;
        }
    }

    /// Waits until the consumer has taken every event sent so far (or is
    /// gone): whatever it does on an event — such as cancelling the run on
    /// a failed write — it has done for every earlier one.
    pub(crate) async fn taken(&self) {
        if let Some(sender) = &self.0 {
            // EVENTS_AHEAD is 1: a free slot means the last event was taken.
            drop(sender.reserve().await);
        }
    }
}
