//! Async tools: a tool may answer with a pending handle and settle later.

use serde_json::Value;
use tokio::sync::oneshot;

use super::tool::ToolError;

/// What an async tool returns: a value now, or a handle settled later.
#[derive(Debug)]
pub enum ToolReturn {
    /// The result, now.
    Ready(Value),
    /// The work goes on; its result is delivered through the paired
    /// [`AsyncSettler`].
    Pending(PendingResult),
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
