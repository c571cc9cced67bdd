//! What a run returns: the response, or the error with what had settled,
//! and the outcome that classifies either.

use serde::{Deserialize, Serialize};
use verdict_policy::{LoopDiagnostics, StopReason, WorkflowStatus};
use verdict_providers::Usage;

use super::routing::RouteDiagnostics;
use crate::error::AgentError;
use crate::tools::SettledCall;

/// How a run finished (the provider-level status; the host workflow status
/// is in [`AgentResponse::loop_diagnostics`], and [`AgentResponse::outcome`]
/// combines the two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunStatus {
    /// The model gave a final answer that was accepted.
    Completed,
    /// The iteration bound was reached (no extra model call was made).
    MaxIterations,
    /// The loop policy stopped the run.
    Stopped(StopReason),
}

impl RunStatus {
    /// The status of a run the policy ended with `reason`.
    pub(crate) fn from_stop(reason: StopReason) -> Self {
        match reason {
            StopReason::Completed | StopReason::AnswerReturned => Self::Completed,
            StopReason::MaxIterations => Self::MaxIterations,
            other => Self::Stopped(other),
        }
    }
}

/// The result of [`crate::Agent::run`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentResponse {
    /// The final answer: the last final candidate judged (the text the
    /// completion checker saw, uncut), or, when the run stopped before one,
    /// the last text the model produced.
    pub output_text: String,
    /// Every tool call of the run, settled, in order.
    pub tool_calls: Vec<SettledCall>,
    /// Token usage summed over the run's model calls.
    pub usage: Usage,
    /// How the run finished.
    pub status: RunStatus,
    /// Model turns taken.
    pub iterations: u32,
    /// The policy execution's diagnostics, when the run had a policy
    /// (`loop` in JSON).
    #[serde(rename = "loop", default, skip_serializing_if = "Option::is_none")]
    pub loop_diagnostics: Option<LoopDiagnostics>,
    /// How the execution was routed, when the agent has a router (kept
    /// apart from the loop diagnostics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<RouteDiagnostics>,
    /// Set when a tool suspended the execution: the output is the
    /// tool-free wrap-up, and no completion check ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspension: Option<SuspendedRun>,
    /// The final answer parsed as JSON, when the run required an output
    /// schema and the answer matches it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<serde_json::Value>,
    /// The execution's id: the origin of its async results
    /// ([`crate::AsyncDelivery::execution_id`]).
    #[serde(default)]
    pub execution_id: String,
}

/// What a run came to, verified or not: the one classification a host acts
/// on (the CLI's outcome and exit code come from it). It reads the
/// provider-level [`RunStatus`] and the loop diagnostics; no new status is
/// invented (the spec keeps workflow status in the diagnostics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunOutcome {
    /// The completion checker confirmed the work: a true verdict, so the
    /// loop's reason and workflow status are both `completed`.
    Verified,
    /// A final answer came back unverified: no policy, no completion
    /// checker, or a suspension's wrap-up (no check runs then).
    AnswerReturned,
    /// The loop policy or the iteration bound stopped the run.
    Stopped {
        /// Why.
        reason: StopReason,
    },
    /// The run failed ([`crate::RunError`]).
    Failed,
}

impl RunOutcome {
    /// The outcome of a run's result.
    pub fn of(result: &Result<AgentResponse, RunError>) -> Self {
        match result {
            Ok(response) => response.outcome(),
            Err(_) => Self::Failed,
        }
    }
}

impl AgentResponse {
    /// What the run came to (never [`RunOutcome::Failed`]: a failed run
    /// returns a [`RunError`]).
    pub fn outcome(&self) -> RunOutcome {
        match self.status {
            RunStatus::Completed => {
                let verified = self.loop_diagnostics.as_ref().is_some_and(|d| {
                    d.reason == Some(StopReason::Completed)
                        && d.status == Some(WorkflowStatus::Completed)
                });
                if verified {
                    RunOutcome::Verified
                } else {
                    RunOutcome::AnswerReturned
                }
            }
            RunStatus::MaxIterations => RunOutcome::Stopped {
                reason: StopReason::MaxIterations,
            },
            RunStatus::Stopped(reason) => RunOutcome::Stopped { reason },
        }
    }
}

/// A suspended execution's checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuspendedRun {
    /// The tool's correlation id.
    pub correlation_id: String,
    /// The tool's reason, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The conversation at the suspension (as `Agent::save_conversation`
    /// writes it), before the wrap-up; `Agent::load_conversation` restores it.
    pub checkpoint: String,
}

/// Why a managed run ([`crate::Agent::run`], [`crate::Agent::stream`],
/// [`crate::Agent::continue_with_async_results`]) failed, with what had
/// settled by then. Compares equal to its [`AgentError`]
/// (`assert_eq!(error, AgentError::Cancelled)`).
///
/// The agent's errors follow one rule: a method that starts a managed
/// execution returns `RunError`, because a failed execution has settled
/// something worth reporting (writes that ran, usage, diagnostics); a
/// method that settles nothing ([`crate::Agent::run_direct`],
/// [`crate::Agent::stream_direct`], [`crate::Agent::load_conversation`],
/// [`crate::Agent::clear_conversation`]) returns the bare [`AgentError`].
/// The two convert both ways, so `?` works across them.
#[derive(Debug, Clone, PartialEq)]
pub struct RunError {
    /// Why it failed.
    pub error: AgentError,
    /// What settled before the failure (tool calls that ran, usage, turns,
    /// the loop diagnostics); `None` when the execution never started
    /// (busy, invalid policy or output schema).
    pub settled: Option<Box<SettledRun>>,
}

impl RunError {
    /// The reason alone.
    pub fn into_error(self) -> AgentError {
        self.error
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

impl From<AgentError> for RunError {
    fn from(error: AgentError) -> Self {
        Self {
            error,
            settled: None,
        }
    }
}

/// The reason alone ([`RunError::into_error`]), so `?` works in a function
/// returning [`AgentError`].
impl From<RunError> for AgentError {
    fn from(error: RunError) -> Self {
        error.error
    }
}

impl PartialEq<AgentError> for RunError {
    fn eq(&self, other: &AgentError) -> bool {
        self.error == *other
    }
}

/// What a failed run had settled: the parts of an [`AgentResponse`] that
/// exist without a final status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettledRun {
    /// The last text the model produced.
    pub output_text: String,
    /// Every tool call that settled, in order (writes that ran included).
    pub tool_calls: Vec<SettledCall>,
    /// Token usage of the model calls that answered.
    pub usage: Usage,
    /// Model turns begun (the failed one included).
    pub iterations: u32,
    /// The policy diagnostics when it failed (phase and counters as they
    /// were; no stop reason unless the policy had already decided); `loop`
    /// in JSON.
    #[serde(rename = "loop", default, skip_serializing_if = "Option::is_none")]
    pub loop_diagnostics: Option<LoopDiagnostics>,
    /// How the execution was routed, when the agent has a router.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<RouteDiagnostics>,
    /// The checkpoint, when a tool suspended the execution first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspension: Option<SuspendedRun>,
    /// The execution's id.
    pub execution_id: String,
}
