//! `Agent::run_direct`: one model call outside the loop and the policy.

use verdict_providers::{CallContext, Message, ModelRequest, ModelResponse};

use super::Agent;
use super::lease::Lease;
use super::options::RunOptions;
use crate::error::AgentError;

impl Agent {
    /// Makes one model call on the conversation plus `input`, outside the
    /// managed loop: no tool runs, no policy execution starts, and the
    /// diagnostics of the latest managed execution stay as they are. The
    /// exchange is committed to the conversation only when the answer has
    /// no tool calls (unanswered calls would break the tool-call/result
    /// protocol of the next request). Takes the execution lease like `run`.
    pub async fn run_direct(
        &self,
        input: impl Into<String>,
        options: RunOptions,
    ) -> Result<ModelResponse, AgentError> {
        let _lease = Lease::take(&self.inner.lease)?;
        let inner = &self.inner;
        let mut messages = self.conversation();
        messages.push(Message::user(input));
        let request = ModelRequest {
            model: inner.model_name.clone(),
            instructions: inner.instructions.clone(),
            messages,
            tools: inner.tools.definitions(),
            tool_choice: Default::default(),
            output_schema: None,
            max_tokens: inner.max_tokens,
        };
        let ctx = CallContext {
            cancel: options.cancel.clone(),
            on_attempt: options.budget.as_ref().map(|b| b.hook()),
        };
        let response = inner
            .model
            .complete(&request, &ctx)
            .await
            .map_err(|e| super::run::provider_error(e, &options))?;
        if response.tool_calls.is_empty() {
            let mut messages = request.messages;
            messages.push(Message::from_response(&response));
            self.state().conversation = messages;
        }
        Ok(response)
    }
}
