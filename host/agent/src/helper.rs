//! Helper models for native checkers: a checker may call a model only
//! through a [`HelperModel`] configured explicitly, with its own explicit
//! call budget.

use std::sync::Arc;

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

    /// The helper's budget.
    pub fn budget(&self) -> &CallBudget {
        &self.budget
    }

    /// Asks the helper `prompt` (one user message, no tools) and returns
    /// its text. Blocks the calling thread: call it from a checker (which
    /// runs on a blocking thread), not from async code.
    pub fn ask(&self, prompt: &str) -> Result<String, HelperError> {
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
            cancel: Default::default(),
            on_attempt: Some(self.budget.hook()),
        };
        let response =
            futures::executor::block_on(self.model.complete(&request, &ctx)).map_err(|error| {
                match error {
                    ProviderError::AttemptRefused { reason } if reason == BUDGET_SPENT => {
                        HelperError::BudgetExhausted {
                            max_calls: self.budget.max_calls(),
                        }
                    }
                    other => HelperError::Provider(other),
                }
            })?;
        Ok(response.text.unwrap_or_default())
    }
}
