//! What a tool may return besides a value: a pending handle settled later
//! (async tools), or a suspend signal.

use serde_json::Value;
use tokio::sync::oneshot;

use super::error::ToolError;

/// What an async tool returns: a value now, or a handle settled later.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolReturn {
    /// The result, now.
    Ready(Value),
    /// The work goes on; its result is delivered through the paired
    /// [`AsyncSettler`].
    Pending(PendingResult),
    /// Suspend the execution: it checkpoints the conversation under the
    /// correlation id and makes one graceful tool-free wrap-up call
    /// (counted in the budget); the completion check is not run.
    Suspend(Suspension),
    /// The tool cannot tell whether its effect took place (it was started
    /// and its result was lost, e.g. by a crash before it was recorded).
    /// The outcome is `unknown`: for a write or unknown effect the policy
    /// stops with `uncertain_effect`; the call is never repeated.
    Unknown(String),
}

/// A tool's suspend signal.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Suspension {
    /// Correlates the checkpoint with whatever resumes the work later.
    pub correlation_id: String,
    /// Why, for the wrap-up and the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What the loop keeps from an execution besides the settled call.
#[derive(Debug)]
pub(crate) enum Deferred {
    /// The result arrives later.
    Pending(PendingResult),
    /// The tool asked to suspend.
    Suspend(Suspension),
}

/// The loop's side of a pending tool result.
#[derive(Debug)]
pub struct PendingResult {
    pub(crate) receiver: oneshot::Receiver<Result<Value, ToolError>>,
}

/// The tool's side: settle it once. Dropping it unsettled delivers a
/// missing outcome (which blocks a possible action conservatively).
#[derive(Debug)]
pub struct AsyncSettler {
    sender: oneshot::Sender<Result<Value, ToolError>>,
}

impl PendingResult {
    /// A pending result and the settler that completes it.
    pub fn new() -> (Self, AsyncSettler) {
        let (sender, receiver) = oneshot::channel();
        (Self { receiver }, AsyncSettler { sender })
    }
}

impl AsyncSettler {
    /// Delivers the result. Returns false when nobody awaits it any more.
    pub fn settle(self, result: Result<Value, ToolError>) -> bool {
        self.sender.send(result).is_ok()
    }
}

/// A pending handle polled without waiting.
pub(crate) enum Poll {
    /// Not settled yet.
    Waiting,
    /// Settled with this result.
    Settled(Result<Value, ToolError>),
    /// The settler was dropped unsettled: no outcome.
    Lost,
}

impl PendingResult {
    pub(crate) fn poll(&mut self) -> Poll {
        match self.receiver.try_recv() {
            Ok(result) => Poll::Settled(result),
            Err(oneshot::error::TryRecvError::Empty) => Poll::Waiting,
            Err(oneshot::error::TryRecvError::Closed) => Poll::Lost,
        }
    }
}
