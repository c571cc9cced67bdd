//! Helper models for native checkers: a checker may call a model only
//! through a [`HelperModel`] configured explicitly, with its own explicit
//! call budget, and within the check's [`CheckContext`].

use std::sync::Arc;

use verdict_policy::{CancelHandle, CheckContext, CheckerError};
use verdict_providers::{
    AttemptRefusal, CallContext, Message, Model, ModelRequest, ModelResponse, ProviderError,
};

use crate::cancel::CancelOnDrop;
use crate::runner::CallBudget;

/// A helper call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HelperError {
    /// The helper's call budget is spent.
    #[error("the helper call budget of {max_calls} calls is spent")]
    BudgetExhausted {
        /// The budget.
        max_calls: u32,
    },
    /// Called outside a tokio runtime (model connectors need one).
    #[error("the helper was called outside a tokio runtime")]
    NoRuntime,
    /// The check was cancelled.
    #[error("the helper call was cancelled")]
    Cancelled,
    /// The check's deadline passed before the helper answered.
    #[error("the helper call ran past the check's deadline")]
    Timeout,
    /// The helper model call failed.
    #[error("helper model call failed: {0}")]
    Provider(ProviderError),
}

/// A helper failure as the checker's error: cancellation and the deadline
/// keep their class, anything else is a checker failure.
impl From<HelperError> for CheckerError {
    fn from(error: HelperError) -> Self {
        match error {
            HelperError::Cancelled => CheckerError::Cancelled,
            HelperError::Timeout => CheckerError::Timeout,
            other => CheckerError::Failed(other.to_string()),
        }
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

    /// Asks the helper `prompt` (one user message, no tools) within `ctx`,
    /// the context of the check that consults it: the call ends with
    /// [`HelperError::Cancelled`] when the check is cancelled and with
    /// [`HelperError::Timeout`] at the check's deadline (the model call is
    /// cancelled either way). Returns the answer's text.
    pub async fn ask(&self, prompt: &str, ctx: &CheckContext) -> Result<String, HelperError> {
        // Connectors need the runtime's IO and timer drivers.
        tokio::runtime::Handle::try_current().map_err(|_| HelperError::NoRuntime)?;
        if let Some(stop) = ctx.interruption() {
            return Err(interrupted(&stop));
        }
        let request = ModelRequest {
            model: self.model_name.clone(),
            instructions: self.instructions.clone(),
            messages: vec![Message::user(prompt)],
            tools: Vec::new(),
            tool_choice: Default::default(),
            output_schema: None,
            max_tokens: self.max_tokens,
        };
        let cancel = CancelHandle::new();
        // Whichever way this call ends, a model call still running stops.
        let _stop = CancelOnDrop(cancel.clone());
        let call_ctx = CallContext {
            cancel,
            on_attempt: Some(self.budget.hook()),
        };
        let call = self.model.complete(&request, &call_ctx);
        let deadline = async {
            match ctx.deadline() {
                Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
                None => std::future::pending().await,
            }
        };
        let answered: Result<ModelResponse, ProviderError> = tokio::select! {
            biased;
            () = ctx.cancelled() => {
                return Err(interrupted(&ctx.interruption().unwrap_or(CheckerError::Cancelled)));
            }
            () = deadline => return Err(HelperError::Timeout),
            answered = call => answered,
        };
        match answered {
            Ok(response) => Ok(response.text.unwrap_or_default()),
            Err(ProviderError::AttemptRefused {
                reason: AttemptRefusal::BudgetSpent { max_calls },
            }) => Err(HelperError::BudgetExhausted { max_calls }),
            Err(ProviderError::Cancelled) => Err(HelperError::Cancelled),
            Err(other) => Err(HelperError::Provider(other)),
        }
    }
}

/// The helper error for a check interrupted by its context: its deadline
/// passed, or it was cancelled.
fn interrupted(stop: &CheckerError) -> HelperError {
    match stop {
        CheckerError::Timeout => HelperError::Timeout,
        _ => HelperError::Cancelled,
    }
}
