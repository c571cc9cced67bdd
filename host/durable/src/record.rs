//! What an execution keeps in its conversation object's state, and what a
//! submission carries.

use serde::{Deserialize, Serialize};
use verdict_policy::{Effect, LoopDiagnostics, Phase, StopReason};

use crate::error::DurableError;

/// The state key of the conversation (the agent's saved messages).
pub(crate) const CONVERSATION_KEY: &str = "conversation";

/// The state key of the conversation's tenant (set by its first execution).
pub(crate) const TENANT_KEY: &str = "tenant";

/// The state key of an execution's record.
pub(crate) fn execution_key(execution_id: &str) -> String {
    format!("execution:{execution_id}")
}

/// Whether `id` is a usable conversation or execution id.
pub(crate) fn check_id(what: &'static str, id: &str) -> Result<(), DurableError> {
    let valid = (1..=128).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if valid {
        Ok(())
    } else {
        Err(DurableError::InvalidId {
            what,
            value: id.to_owned(),
        })
    }
}

/// One execution asked of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Submission {
    /// The execution's id (chosen by the submitter; the first part of
    /// every idempotency key of its tool calls).
    pub execution_id: String,
    /// The user input.
    pub prompt: String,
    /// The tenant whose verifiers decide completion (default: the
    /// conversation's, else the worker's only one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
}

/// Where an execution is, as `verdict status` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ExecutionState {
    /// Running (or waiting to resume after a crash).
    Running,
    /// Finished: the record's diagnostics say how.
    Finished,
    /// The run ended with an error (the record's `error` says which).
    Failed,
}

/// A write (or unknown effect) that was started and whose result was never
/// journaled: it may have taken effect, so it is not run again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UncertainCall {
    /// The call's sequence number in the execution.
    pub sequence: u64,
    /// The call id (unique in the execution).
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// Its declared effect.
    pub effect: Effect,
    /// The idempotency key it was started with.
    pub idempotency_key: String,
}

/// An execution as kept in its conversation object's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionRecord {
    /// The execution's id.
    pub execution_id: String,
    /// The conversation (the virtual object's key).
    pub conversation: String,
    /// The tenant whose verifiers decided, when the worker names tenants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Running, finished or failed.
    pub state: ExecutionState,
    /// The policy's diagnostics (phase, reason, recovery, verdict), when
    /// the agent has a loop policy; the execution id in them is this
    /// record's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<LoopDiagnostics>,
    /// The final candidate's text.
    #[serde(default)]
    pub output: String,
    /// The host feedback notices given to the model, in order.
    #[serde(default)]
    pub notices: Vec<String>,
    /// Model calls journaled (each made once, whatever the replays).
    pub model_calls: u64,
    /// Tool calls journaled.
    pub tool_calls: u64,
    /// Verdicts and progress keys journaled.
    pub checks: u64,
    /// The call that stopped the execution with `uncertain_effect`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncertain: Option<UncertainCall>,
    /// Tool calls started before a crash and run again (reads, and tools
    /// declared idempotent), by idempotency key.
    #[serde(default)]
    pub reruns: Vec<String>,
    /// The run's error, when it ended with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ExecutionRecord {
    /// A record of an execution that has just started.
    pub(crate) fn start(execution_id: &str, conversation: &str) -> Self {
        Self {
            execution_id: execution_id.to_owned(),
            conversation: conversation.to_owned(),
            tenant: None,
            state: ExecutionState::Running,
            diagnostics: None,
            output: String::new(),
            notices: Vec::new(),
            model_calls: 0,
            tool_calls: 0,
            checks: 0,
            uncertain: None,
            reruns: Vec::new(),
            error: None,
        }
    }

    /// The policy phase, when there is a policy.
    pub fn phase(&self) -> Option<Phase> {
        self.diagnostics.as_ref().map(|d| d.phase)
    }

    /// Why the execution stopped, once it has.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.diagnostics.as_ref().and_then(|d| d.reason)
    }
}
