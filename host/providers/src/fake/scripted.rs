//! The scripted model in-process, without HTTP: the same [`Script`] and the
//! same error classification as the fake server, for fast unit tests of the
//! agent loop.

use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::errors::ProviderError;
use crate::fake::engine::ScriptEngine;
use crate::fake::script::{Action, Fault, Reply, Script};
use crate::model::{
    CallContext, EventStream, FinishReason, Model, ModelRequest, ModelResponse, StreamEvent,
};
use crate::protocols::split_chunks;
use crate::retry::{RetryPolicy, retryable_before_first_event, with_retries};
use crate::sse::closing_events;

/// A [`Model`] that answers from a script.
pub struct ScriptedModel {
    engine: ScriptEngine,
    retry: RetryPolicy,
    /// Every request, unless made [`ScriptedModel::without_records`].
    requests: Option<Mutex<Vec<ModelRequest>>>,
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("remaining_turns", &self.engine.remaining())
            .finish()
    }
}

/// What one attempt produced, before it becomes a response or a stream.
enum Outcome {
    Reply(ModelResponse, usize),
    /// Events to yield, then this error.
    Broken(Vec<StreamEvent>, ProviderError),
}

impl ScriptedModel {
    /// Follow `script`; no retries unless [`ScriptedModel::with_retry`].
    pub fn new(script: Script) -> Self {
        Self {
            engine: ScriptEngine::new(script),
            retry: RetryPolicy::none(),
            requests: Some(Mutex::new(Vec::new())),
        }
    }

    /// Keeps no copy of the requests ([`ScriptedModel::requests`] is then
    /// empty): for benchmarks, where copying each request would be counted
    /// as the host's overhead.
    pub fn without_records(mut self) -> Self {
        self.requests = None;
        self
    }

    /// Retry 429/5xx faults like a connector would.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Every request received, in order (one per attempt).
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.as_ref().map_or_else(Vec::new, |requests| {
            requests.lock().unwrap_or_else(|p| p.into_inner()).clone()
        })
    }

    /// Turns not served yet.
    pub fn remaining_turns(&self) -> usize {
        self.engine.remaining()
    }

    async fn attempt(
        &self,
        request: &ModelRequest,
        ctx: &CallContext,
    ) -> Result<Outcome, ProviderError> {
        if let Some(requests) = &self.requests {
            requests
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(request.clone());
        }
        let (turn, number) =
            self.engine
                .next_turn(request)
                .map_err(|miss| ProviderError::BadRequest {
                    status: 400,
                    message: miss.to_string(),
                })?;
        if turn.first_byte_delay_ms > 0 {
            tokio::select! {
                () = ctx.cancel.cancelled() => return Err(ProviderError::Cancelled),
                () = tokio::time::sleep(Duration::from_millis(turn.first_byte_delay_ms)) => {}
            }
        }
        let reply = match turn.action {
            Action::Reply(reply) => reply,
            Action::Fault(fault) => return fault_outcome(&fault, number),
        };
        Ok(Outcome::Reply(
            finalize(reply.to_response(number)),
            reply.chunk(),
        ))
    }
}

/// Apply the connector rule: a turn cut by the token limit runs no tool.
fn finalize(mut response: ModelResponse) -> ModelResponse {
    if response.finish_reason == FinishReason::MaxTokens {
        response.dropped_tool_calls = response.tool_calls.len();
        response.tool_calls.clear();
    }
    response
}

fn text_deltas(reply: &Reply, chunk: usize) -> Vec<StreamEvent> {
    split_chunks(reply.text.as_deref().unwrap_or(""), chunk)
        .into_iter()
        .map(StreamEvent::TextDelta)
        .collect()
}

fn fault_outcome(fault: &Fault, _number: usize) -> Result<Outcome, ProviderError> {
    match fault {
        Fault::Status {
            status,
            message,
            retry_after_secs,
        } => Err(ProviderError::from_status(
            *status,
            message.clone(),
            retry_after_secs.map(Duration::from_secs),
        )),
        Fault::CutStream {
            after_frames,
            reply,
        } => {
            let mut events = text_deltas(reply, reply.chunk());
            events.truncate(*after_frames);
            Ok(Outcome::Broken(
                events,
                ProviderError::truncated("fake provider cut the stream"),
            ))
        }
        Fault::StallStream { stall_ms, .. } => Ok(Outcome::Broken(
            Vec::new(),
            ProviderError::Timeout {
                phase: crate::errors::TimeoutPhase::Idle,
                after: Duration::from_millis(*stall_ms),
            },
        )),
        Fault::MalformedJson => Ok(Outcome::Broken(
            Vec::new(),
            ProviderError::malformed("fake provider sent malformed JSON"),
        )),
        Fault::ErrorEvent {
            after_frames,
            status,
            message,
        } => Ok(Outcome::Broken(
            vec![StreamEvent::TextDelta("partial".into()); *after_frames],
            ProviderError::from_status(*status, message.clone(), None),
        )),
    }
}

impl Model for ScriptedModel {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        Box::pin(async move {
            let (outcome, attempts) =
                with_retries(&self.retry, ctx, ProviderError::is_retryable, |_| {
                    self.attempt(request, ctx)
                })
                .await?;
            match outcome {
                Outcome::Reply(mut response, _) => {
                    response.attempts = attempts;
                    Ok(response)
                }
                Outcome::Broken(_, error) => Err(error),
            }
        })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<EventStream, ProviderError>> {
        Box::pin(async move {
            // As over HTTP: a stream that breaks before its first event is
            // retried.
            let (outcome, attempts) =
                with_retries(&self.retry, ctx, retryable_before_first_event, |_| async {
                    match self.attempt(request, ctx).await? {
                        Outcome::Broken(events, error) if events.is_empty() => Err(error),
                        outcome => Ok(outcome),
                    }
                })
                .await?;
            let items: Vec<Result<StreamEvent, ProviderError>> = match outcome {
                Outcome::Reply(mut response, chunk) => {
                    response.attempts = attempts;
                    let text = response.text.clone().unwrap_or_default();
                    split_chunks(&text, chunk)
                        .into_iter()
                        .map(StreamEvent::TextDelta)
                        .chain(closing_events(&response))
                        .map(Ok)
                        .collect()
                }
                Outcome::Broken(events, error) => events
                    .into_iter()
                    .map(Ok)
                    .chain(std::iter::once(Err(error)))
                    .collect(),
            };
            let stream: EventStream = Box::pin(futures::stream::iter(items));
            Ok(stream)
        })
    }
}
