//! The agent's typed errors.

use verdict_policy::PolicyError;
use verdict_providers::{AttemptRefusal, ProviderError};

use crate::tools::ToolDefinitionError;

/// Why a run could not produce a response.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
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

/// A failed model call as the run's error: a spent budget and a
/// cancellation keep their own class.
impl From<ProviderError> for AgentError {
    fn from(error: ProviderError) -> Self {
        match error {
            ProviderError::AttemptRefused {
                reason: AttemptRefusal::BudgetSpent { max_calls },
            } => Self::BudgetExhausted { max_calls },
            ProviderError::Cancelled => Self::Cancelled,
            error => Self::Provider(error),
        }
    }
}

/// Why an agent could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
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
    /// A completion or progress checker was configured without a loop
    /// policy, under which alone checkers run.
    #[error("checkers are configured but no loop policy runs them")]
    CheckersWithoutPolicy,
}
