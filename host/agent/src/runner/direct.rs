//! `Agent::run_direct` and `Agent::stream_direct`: one model call outside
//! the loop and the policy.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use verdict_providers::{
    CallContext, EventStream, Message, ModelRequest, ModelResponse, ProviderError, StreamEvent,
};

use super::Agent;
use super::lease::Lease;
use super::options::RunOptions;
use crate::cancel::{CancelOnDrop, provider_cancel};
use crate::error::AgentError;

impl Agent {
    /// Like [`Agent::run_direct`] but streamed: the provider's events as
    /// they come. Nothing is committed to the conversation; the lease is
    /// held until the stream is dropped.
    pub async fn stream_direct(
        &self,
        input: impl Into<String>,
        options: RunOptions,
    ) -> Result<DirectStream, AgentError> {
        let lease = Lease::take(&self.inner.lease)?;
        let request = self.direct_request(input.into());
        let (cancel, guard) = provider_cancel(&options.cancel);
        let ctx = CallContext {
            cancel,
            on_attempt: options.budget.as_ref().map(|b| b.hook()),
        };
        let events = self
            .inner
            .model
            .stream(&request, &ctx)
            .await
            .map_err(AgentError::from)?;
        Ok(DirectStream {
            events,
            _provider_cancel: guard,
            _lease: lease,
        })
    }

    fn direct_request(&self, input: String) -> ModelRequest {
        let inner = &self.inner;
        let mut messages = self.conversation();
        messages.push(Message::user(input));
        ModelRequest {
            model: inner.model_name.clone(),
            instructions: inner.instructions.clone(),
            messages,
            tools: inner.tools.definitions(),
            tool_choice: Default::default(),
            output_schema: None,
            max_tokens: inner.max_tokens,
        }
    }

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
        let request = self.direct_request(input.into());
        let (cancel, _provider_cancel) = provider_cancel(&options.cancel);
        let ctx = CallContext {
            cancel,
            on_attempt: options.budget.as_ref().map(|b| b.hook()),
        };
        let response = inner
            .model
            .complete(&request, &ctx)
            .await
            .map_err(AgentError::from)?;
        if response.tool_calls.is_empty() {
            let mut messages = request.messages;
            messages.push(Message::from_response(&response));
            self.state().conversation = messages;
        }
        Ok(response)
    }
}

/// The provider events of [`Agent::stream_direct`]; holds the agent's
/// execution lease until dropped.
pub struct DirectStream {
    events: EventStream,
    _provider_cancel: CancelOnDrop,
    _lease: Lease,
}

impl std::fmt::Debug for DirectStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectStream").finish_non_exhaustive()
    }
}

impl Stream for DirectStream {
    type Item = Result<StreamEvent, ProviderError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.as_mut().poll_next(cx)
    }
}
