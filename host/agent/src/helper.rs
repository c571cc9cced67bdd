//! Helper models for native checkers: a checker may call a model only
//! through a [`HelperModel`] configured explicitly, with its own explicit
//! call budget.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use verdict_policy::CheckerError;
use verdict_providers::{CallContext, Message, Model, ModelRequest, ProviderError};

use crate::agent::{BUDGET_SPENT, CallBudget};

/// A helper call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HelperError {
    /// The helper's call budget is spent.
    #[error("the helper call budget of {max_calls} calls is spent")]
    BudgetExhausted {
        /// The budget.
        max_calls: u32,
    },
    /// Called outside a tokio runtime (checkers run on the runtime's
    /// blocking threads, where this cannot happen).
    #[error("the helper was called outside a tokio runtime")]
    NoRuntime,
    /// The helper's cancellation token was cancelled.
    #[error("the helper call was cancelled")]
    Cancelled,
    /// The helper model call failed.
    #[error("helper model call failed: {0}")]
    Provider(ProviderError),
}

impl From<HelperError> for CheckerError {
    fn from(error: HelperError) -> Self {
        CheckerError::Failed(error.to_string())
    }
}

/// A model a native checker may consult. The loop never calls it by itself;
/// every attempt (retries included) counts against the budget given here —
/// never the run's budget, unless the same [`CallBudget`] is passed
/// explicitly. Clones, and helpers built on one budget, share the count.
#[derive(Clone)]
pub struct HelperModel {
    model: Arc<dyn Model>,
    model_name: String,
    instructions: Option<String>,
    max_tokens: Option<u32>,
    budget: CallBudget,
    cancel: CancellationToken,
}

impl std::fmt::Debug for HelperModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HelperModel")
            .field("model", &self.model_name)
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

impl HelperModel {
    /// A helper calling `model` as `model_name`, within `budget`.
    pub fn new(model: Arc<dyn Model>, model_name: impl Into<String>, budget: CallBudget) -> Self {
        Self {
            model,
            model_name: model_name.into(),
            instructions: None,
            max_tokens: None,
            budget,
            cancel: CancellationToken::new(),
        }
    }

    /// System instructions for every helper call.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Upper bound on generated tokens per helper call.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Cancelling `cancel` ends helper calls (pass the run's token so a
    /// cancelled or timed-out check does not leave a call running).
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// The helper's budget.
    pub fn budget(&self) -> &CallBudget {
        &self.budget
    }

    /// Asks the helper `prompt` (one user message, no tools) and returns
    /// its text. Blocks the calling thread: call it from a checker (which
    /// runs on a blocking thread), not from async code.
    pub fn ask(&self, prompt: &str) -> Result<String, HelperError> {
        // Connectors need the runtime's IO and timer drivers.
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| HelperError::NoRuntime)?;
        let _entered = runtime.enter();
        let request = ModelRequest {
            model: self.model_name.clone(),
            instructions: self.instructions.clone(),
            messages: vec![Message::user(prompt)],
            tools: Vec::new(),
            tool_choice: Default::default(),
            output_schema: None,
            max_tokens: self.max_tokens,
        };
        let ctx = CallContext {
            cancel: self.cancel.clone(),
            on_attempt: Some(self.budget.hook()),
        };
        let call = async {
            tokio::select! {
                biased;
                () = self.cancel.cancelled() => Err(HelperError::Cancelled),
                answered = self.model.complete(&request, &ctx) => answered.map_err(|error| {
                    match error {
                        ProviderError::AttemptRefused { reason } if reason == BUDGET_SPENT => {
                            HelperError::BudgetExhausted {
                                max_calls: self.budget.max_calls(),
                            }
                        }
                        ProviderError::Cancelled => HelperError::Cancelled,
                        other => HelperError::Provider(other),
                    }
                }),
            }
        };
        let response = futures::executor::block_on(call)?;
        Ok(response.text.unwrap_or_default())
    }
}
