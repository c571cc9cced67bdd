//! The agent's typed errors.

use serde::{Deserialize, Serialize};
use verdict_policy::{LoopDiagnostics, PolicyError};
use verdict_providers::{ProviderError, Usage};

use crate::agent::{RouteDiagnostics, SuspendedRun};
use crate::tools::{SettledCall, ToolDefinitionError};

/// Why a run could not produce a response.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgentError {
    /// Another run holds this agent's execution lease.
    #[error("the agent is busy: another execution is running")]
    Busy,
    /// The loop policy is invalid; nothing was dispatched.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// A model call failed.
    #[error("model call failed: {0}")]
    Provider(ProviderError),
    /// The model-call budget was spent before the run finished.
    #[error("the model-call budget of {max_calls} calls is spent")]
    BudgetExhausted {
        /// The budget.
        max_calls: u32,
    },
    /// The run was cancelled.
    #[error("the run was cancelled")]
    Cancelled,
    /// The run's output schema does not compile; nothing was dispatched.
    #[error("the output schema is invalid: {0}")]
    OutputSchema(String),
    /// A saved conversation could not be loaded.
    #[error("the conversation JSON is invalid: {0}")]
    Conversation(String),
}

/// Why a managed run ([`crate::Agent::run`], [`crate::Agent::stream`],
/// [`crate::Agent::continue_with_async_results`]) failed, with what had
/// settled by then. Compares equal to its [`AgentError`]
/// (`assert_eq!(error, AgentError::Cancelled)`).
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

impl PartialEq<AgentError> for RunError {
    fn eq(&self, other: &AgentError) -> bool {
        self.error == *other
    }
}

/// What a failed run had settled: the parts of an [`AgentResponse`] that
/// exist without a final status.
///
/// [`AgentResponse`]: crate::AgentResponse
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

/// Why an agent could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// No model was given.
    #[error("the agent has no model")]
    NoModel,
    /// The named connector is not in the registry.
    #[error("no connector named {0:?} is registered")]
    UnknownConnector(String),
    /// A tool could not be registered.
    #[error(transparent)]
    Tool(#[from] ToolDefinitionError),
    /// The default loop policy is invalid.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// `max_iterations` must be at least 1.
    #[error("max_iterations must be at least 1")]
    ZeroIterations,
}
