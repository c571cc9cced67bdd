//! The engine's answers: what the loop does after each event it reports.
//!
//! Every decision is plain data; the loop matches on it and acts.

use serde::{Deserialize, Serialize};

use crate::diagnostics::StopReason;
use crate::packet::CheckPacket;

/// What to do before a model call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnDecision {
    /// Call the model; append `feedback` (already labelled) as host
    /// feedback when present, leaving user input and the tool-call/result
    /// protocol untouched.
    Proceed {
        /// Labelled host feedback for this turn.
        feedback: Option<String>,
    },
    /// Do not call the model.
    Stop {
        /// Why.
        reason: StopReason,
    },
}

/// The engine's answer to an event that may end the execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Go on (any feedback is delivered by the next [`crate::PolicyExecution::begin_turn`]).
    Continue,
    /// The execution has ended.
    Stop {
        /// Why.
        reason: StopReason,
    },
}

/// The decision before a tool dispatch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// Dispatch the call.
    Run,
    /// Do not dispatch; answer the call with this labelled feedback as its
    /// result so the tool-call/result protocol stays whole.
    Skip {
        /// Labelled host feedback.
        feedback: String,
    },
    /// Do not dispatch; the execution has ended.
    Stop {
        /// Why.
        reason: StopReason,
    },
}

/// Which checker a ticket is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// The completion checker.
    Completion,
    /// The progress checker.
    Progress,
}

/// Identifies one requested check; its answer must come back with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CheckTicket {
    /// Unique within the execution.
    pub id: u64,
    /// The checker to run.
    pub kind: CheckKind,
}

/// A check for the loop to run: call the captured checker on `packet`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRequest {
    /// Hand back with the answer.
    pub ticket: CheckTicket,
    /// The detached, bounded packet.
    pub packet: CheckPacket,
}

/// The decision on a final candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinalDecision {
    /// No completion checker: return the answer (reason `answer_returned`,
    /// no workflow status).
    Answer,
    /// Run the completion checker, then call
    /// [`crate::PolicyExecution::completion_verdict`].
    Check(CheckRequest),
    /// The execution has ended.
    Stop {
        /// Why.
        reason: StopReason,
    },
}

/// The decision after a tool batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchDecision {
    /// Nothing to sample.
    Continue,
    /// Run the progress checker, then call [`crate::PolicyExecution::progress_key`].
    SampleProgress(CheckRequest),
    /// The execution has ended.
    Stop {
        /// Why.
        reason: StopReason,
    },
}

/// The decision on a checker's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckDecision {
    /// A true verdict: the workflow is complete.
    Complete,
    /// Go on; labelled feedback (if any) comes with the next turn.
    Continue,
    /// The host scope changed: run the check again under the new scope.
    Restart(CheckRequest),
    /// The answer was for a finished or cancelled check: it confirms nothing.
    Ignored,
    /// The execution has ended.
    Stop {
        /// Why.
        reason: StopReason,
    },
}
