//! `Agent::run`: model call → tool calls → results → next call, with the
//! loop policy (when configured) at every decision point.

use std::sync::Arc;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use verdict_policy::{PolicyExecution, StopReason, Turn};
use verdict_providers::{
    CallContext, Message, Model, ModelRequest, ModelResponse, ProviderError, StreamEvent, Usage,
};

use super::Agent;
use super::batch::run_batch;
use super::call_ids::CallIds;
use super::events::{AgentEvent, Events};
use super::finish::{format_instruction, repair_instruction, schema_error, structured};
use super::lease::Lease;
use super::managed::{FinalOutcome, Identity, Managed};
use super::options::{BUDGET_SPENT, PolicyChoice, RunOptions};
use super::response::{AgentResponse, RunStatus, SuspendedRun};
use super::routing::{Binding, RouteDiagnostics};
use crate::error::{AgentError, RunError, SettledRun};
use crate::tools::SettledCall;

/// Retries of an empty model answer (no text, no tool calls) per turn.
const EMPTY_RESPONSE_RETRIES: u32 = 1;

/// True for an answer with nothing in it (and nothing cut by the token
/// limit).
fn is_empty(response: &ModelResponse) -> bool {
    response.tool_calls.is_empty()
        && response.dropped_tool_calls == 0
        && response.text.as_deref().is_none_or(|t| t.trim().is_empty())
}

/// What a run accumulates.
pub(super) struct Progress {
    pub(super) messages: Vec<Message>,
    pub(super) tool_calls: Vec<SettledCall>,
    pub(super) usage: Usage,
    pub(super) iterations: u32,
    pub(super) output: String,
    pub(super) suspension: Option<SuspendedRun>,
    /// The execution's id (the origin of its async results).
    pub(super) execution_id: String,
    /// The call ids given so far (unique within the execution).
    pub(super) call_ids: CallIds,
}

impl Agent {
    /// Runs the managed loop on `input`.
    ///
    /// Without a policy, the loop calls the model, runs the tool calls of
    /// each response as a batch, sends the results back, and returns the
    /// first answer without tool calls, or stops at `max_iterations`
    /// without an extra call. With a policy the same loop also asks the
    /// engine before every model call and tool dispatch, reports every
    /// settled call, samples the progress key after every batch, checks
    /// every final candidate, and appends host feedback as a labelled user
    /// message after the tool results. On every return (errors included)
    /// the settled conversation, tool results included, is committed to the
    /// agent's conversation.
    ///
    /// A failed run ([`RunError`]) still carries what settled before the
    /// failure: tool calls that ran, usage, turns and the diagnostics.
    pub async fn run(
        &self,
        input: impl Into<String>,
        options: RunOptions,
    ) -> Result<AgentResponse, RunError> {
        let lease = Lease::take(&self.inner.lease)?;
        self.execute(lease, Some(input.into()), options, &Events::none())
            .await
    }

    /// The one implementation behind `run` and `stream`.
    pub(super) async fn execute(
        &self,
        _lease: Lease,
        input: Option<String>,
        options: RunOptions,
        events: &Events,
    ) -> Result<AgentResponse, RunError> {
        let inner = &self.inner;
        let policy = match &options.policy {
            PolicyChoice::Inherit => inner.policy.as_ref(),
            PolicyChoice::Replace(policy) => Some(policy),
            PolicyChoice::Disabled => None,
        };
        let (messages, generation, execution, previous) = {
            let mut state = self.state();
            state.executions += 1;
            (
                state.conversation.clone(),
                state.conversation_generation,
                state.executions,
                state.binding.clone(),
            )
        };
        let schema = match &options.output_schema {
            Some(schema) => Some(
                jsonschema::validator_for(&schema.schema)
                    .map_err(|e| AgentError::OutputSchema(e.to_string()))?,
            ),
            None => None,
        };
        let binding = self.bind(input.as_deref(), previous);
        let execution_id = format!("{}-exec-{execution}", inner.id);
        let mut managed = match policy {
            Some(policy) => {
                let exec = PolicyExecution::start(
                    policy,
                    execution_id.clone(),
                    Some(inner.max_iterations),
                )
                .map_err(AgentError::Policy)?;
                let identity = Identity {
                    owner: inner.id.clone(),
                    conversation: format!("{}-conversation-{generation}", inner.id),
                };
                Some(Managed::new(
                    exec,
                    inner.host.clone(),
                    identity,
                    options.checker_timeout,
                    inner.diagnostics.clone(),
                ))
            }
            None => {
                *inner.diagnostics.lock().unwrap_or_else(|p| p.into_inner()) = None;
                None
            }
        };
        let mut progress = Progress {
            messages,
            tool_calls: Vec::new(),
            usage: Usage::default(),
            iterations: 0,
            output: String::new(),
            suspension: None,
            execution_id,
            call_ids: CallIds::default(),
        };
        if let Some(input) = input {
            progress.messages.push(Message::user(input));
        }
        let status = self
            .drive(
                &mut progress,
                managed.as_mut(),
                &binding,
                schema.as_ref(),
                &options,
                events,
            )
            .await;
        let route = inner.routing.as_ref().map(|_| binding.diagnostics.clone());
        {
            let mut state = self.state();
            state.conversation = progress.messages;
            if inner.routing.is_some() {
                state.binding = Some(binding);
            }
            state.budget.clone_from(&options.budget);
        }
        let r#loop = managed.map(|m| m.diagnostics());
        let status = match status {
            Ok(status) => status,
            Err(error) => {
                return Err(RunError {
                    error,
                    settled: Some(Box::new(SettledRun {
                        output_text: progress.output,
                        tool_calls: progress.tool_calls,
                        usage: progress.usage,
                        iterations: progress.iterations,
                        r#loop,
                        route,
                        suspension: progress.suspension,
                        execution_id: progress.execution_id,
                    })),
                });
            }
        };
        let structured_output = schema.and_then(|s| structured(&s, &progress.output));
        Ok(AgentResponse {
            output_text: progress.output,
            tool_calls: progress.tool_calls,
            usage: progress.usage,
            status,
            iterations: progress.iterations,
            r#loop,
            route,
            suspension: progress.suspension,
            structured_output,
            execution_id: progress.execution_id,
        })
    }

    /// The model of a new execution: routed once for new input, the
    /// previous route kept by a continuation, the agent's own otherwise.
    fn bind(&self, input: Option<&str>, previous: Option<Binding>) -> Binding {
        let inner = &self.inner;
        let default = Binding {
            model: inner.model.clone(),
            model_name: inner.model_name.clone(),
            diagnostics: RouteDiagnostics {
                route: None,
                error: None,
                continued: false,
            },
        };
        match (&inner.routing, input, previous) {
            (None, _, _) => default,
            (Some(_), None, Some(mut previous)) => {
                previous.diagnostics.continued = true;
                previous
            }
            (Some(routing), input, _) => routing.bind(input.unwrap_or_default(), default),
        }
    }

    async fn drive(
        &self,
        progress: &mut Progress,
        mut managed: Option<&mut Managed>,
        binding: &Binding,
        schema: Option<&jsonschema::Validator>,
        options: &RunOptions,
        events: &Events,
    ) -> Result<RunStatus, AgentError> {
        let inner = &self.inner;
        let cancel = &options.cancel;
        let ctx = CallContext {
            cancel: cancel.clone(),
            on_attempt: options.budget.as_ref().map(|b| b.hook()),
        };
        let tools = inner.tools.definitions();
        loop {
            if cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
            if let Some(reason) = self.import_async(progress, managed.as_deref_mut(), events) {
                return Ok(status_for(reason));
            }
            // Host feedback for this turn: committed with the model's reply,
            // never alone (a failed call would leave it to the next run as
            // if it were input).
            let mut feedback = None;
            match managed.as_deref_mut() {
                Some(m) => match m.begin_turn() {
                    Turn::Stop { reason } => return Ok(status_for(reason)),
                    Turn::Proceed { feedback: text } => {
                        if let Some(text) = text {
                            events.emit(|| AgentEvent::LoopNotice {
                                feedback: text.clone(),
                            });
                            feedback = Some(Message::user(text));
                        }
                    }
                },
                None if progress.iterations >= inner.max_iterations => {
                    return Ok(RunStatus::MaxIterations);
                }
                None => {}
            }
            progress.iterations += 1;
            let mut messages = progress.messages.clone();
            messages.extend(feedback.clone());
            let request = ModelRequest {
                model: binding.model_name.clone(),
                instructions: inner.instructions.clone(),
                messages,
                tools: tools.clone(),
                tool_choice: Default::default(),
                output_schema: options.output_schema.clone(),
                max_tokens: inner.max_tokens,
            };
            let mut response = self
                .call_model(&binding.model, &request, &ctx, events)
                .await
                .map_err(|e| provider_error(e, options))?;
            // An empty answer is retried with the same request: a separate
            // model-call attempt (the budget counts it), not a new turn.
            for _ in 0..EMPTY_RESPONSE_RETRIES {
                if !is_empty(&response) {
                    break;
                }
                add_usage(&mut progress.usage, &response.usage);
                response = self
                    .call_model(&binding.model, &request, &ctx, events)
                    .await
                    .map_err(|e| provider_error(e, options))?;
            }
            add_usage(&mut progress.usage, &response.usage);
            // From here on a call is known by an id unique in the execution,
            // on both sides of its call/result pair.
            progress.call_ids.assign(&mut response.tool_calls);
            progress.messages.extend(feedback);
            progress.messages.push(Message::from_response(&response));
            let mut text = response.text.clone().unwrap_or_default();
            if !text.is_empty() {
                progress.output.clone_from(&text);
            }
            if response.tool_calls.is_empty() {
                // Structured output: one counted repair of an invalid final
                // candidate, in `run` only; the check sees the repaired one.
                if let Some(validator) = schema
                    && !events.streaming()
                    && let Some(error) = schema_error(validator, &text)
                {
                    let instruction = repair_instruction(&error);
                    text = self
                        .reformat(progress, binding, &ctx, options, events, instruction)
                        .await?;
                }
                match self
                    .judge_final(progress, managed.as_deref_mut(), &text, cancel, events)
                    .await
                {
                    Some(done) => return done,
                    None => continue,
                }
            }
            let batch = run_batch(
                &inner.tools,
                &response.tool_calls,
                managed.as_deref_mut(),
                cancel,
                events,
            )
            .await;
            let ended = batch
                .ended_by
                .and_then(|i| batch.settled.get(i))
                .map(|s| (s.call.name.clone(), s.to_result().content));
            progress.messages.extend(
                batch
                    .settled
                    .iter()
                    .map(|s| Message::ToolResult(s.to_result())),
            );
            progress.tool_calls.extend(batch.settled);
            {
                let mut queue = self.async_queue();
                for (settled, handle) in batch.pending {
                    queue.await_handle(&progress.execution_id, &settled, handle);
                }
            }
            if cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
            if let Some(reason) = batch.stop {
                return Ok(status_for(reason));
            }
            if let Some(signal) = batch.suspend {
                return self
                    .wrap_up(progress, binding, &ctx, options, events, signal)
                    .await;
            }
            if let Some((tool, result)) = ended {
                // A tool-induced stop: its result is the final candidate;
                // with an output schema, one formatting call appends a
                // separate final answer (and, in `run`, one repair).
                let mut text = result;
                match schema {
                    Some(validator) => {
                        let instruction = format_instruction(&tool);
                        text = self
                            .reformat(progress, binding, &ctx, options, events, instruction)
                            .await?;
                        if !events.streaming()
                            && let Some(error) = schema_error(validator, &text)
                        {
                            let instruction = repair_instruction(&error);
                            text = self
                                .reformat(progress, binding, &ctx, options, events, instruction)
                                .await?;
                        }
                    }
                    None => progress.output.clone_from(&text),
                }
                match self
                    .judge_final(progress, managed.as_deref_mut(), &text, cancel, events)
                    .await
                {
                    Some(done) => return done,
                    None => continue,
                }
            }
            if let Some(m) = managed.as_deref_mut() {
                let stop = m.after_batch(cancel).await;
                if cancel.is_cancelled() {
                    return Err(AgentError::Cancelled);
                }
                if let Some(reason) = stop {
                    return Ok(status_for(reason));
                }
            }
            events.emit(|| AgentEvent::IterationComplete {
                iteration: progress.iterations,
                r#loop: managed.as_deref().map(Managed::diagnostics),
            });
        }
    }

    /// A final candidate: imports arrived async results, then asks the
    /// policy (when configured). `None` means take another turn.
    async fn judge_final(
        &self,
        progress: &mut Progress,
        mut managed: Option<&mut Managed>,
        text: &str,
        cancel: &CancellationToken,
        events: &Events,
    ) -> Option<Result<RunStatus, AgentError>> {
        // The response reports the candidate judged here, whatever text an
        // earlier turn had.
        progress.output = text.to_owned();
        if let Some(reason) = self.import_async(progress, managed.as_deref_mut(), events) {
            return Some(Ok(status_for(reason)));
        }
        let Some(m) = managed else {
            if !self.pending_async_calls().is_empty() {
                return Some(Ok(RunStatus::Stopped(StopReason::PendingAsync)));
            }
            return Some(Ok(RunStatus::Completed));
        };
        let outcome = m.final_candidate(text, cancel).await;
        if cancel.is_cancelled() {
            return Some(Err(AgentError::Cancelled));
        }
        match outcome {
            FinalOutcome::Accept => Some(Ok(RunStatus::Completed)),
            FinalOutcome::Continue => {
                events.emit(|| AgentEvent::IterationComplete {
                    iteration: progress.iterations,
                    r#loop: Some(m.diagnostics()),
                });
                None
            }
            FinalOutcome::Stop(reason) => Some(Ok(status_for(reason))),
        }
    }

    /// One model call: whole for `run`, streamed (text deltas forwarded)
    /// for `stream`.
    pub(super) async fn call_model(
        &self,
        model: &Arc<dyn Model>,
        request: &ModelRequest,
        ctx: &CallContext,
        events: &Events,
    ) -> Result<ModelResponse, ProviderError> {
        if !events.streaming() {
            return model.complete(request, ctx).await;
        }
        let mut stream = model.stream(request, ctx).await?;
        while let Some(event) = stream.next().await {
            match event? {
                StreamEvent::TextDelta(text) => events.emit(|| AgentEvent::TextDelta(text)),
                StreamEvent::Completed(response) => return Ok(response),
                // Tool calls arrive again in the completed response.
                _ => {}
            }
        }
        Err(ProviderError::TruncatedStream {
            detail: "the model stream ended without a final response".to_owned(),
        })
    }
}

fn status_for(reason: StopReason) -> RunStatus {
    match reason {
        StopReason::Completed | StopReason::AnswerReturned => RunStatus::Completed,
        StopReason::MaxIterations => RunStatus::MaxIterations,
        other => RunStatus::Stopped(other),
    }
}

pub(super) fn provider_error(error: ProviderError, options: &RunOptions) -> AgentError {
    match (&error, &options.budget) {
        (ProviderError::AttemptRefused { reason }, Some(budget)) if reason == BUDGET_SPENT => {
            AgentError::BudgetExhausted {
                max_calls: budget.max_calls(),
            }
        }
        (ProviderError::Cancelled, _) => AgentError::Cancelled,
        _ => AgentError::Provider(error),
    }
}

pub(super) fn add_usage(total: &mut Usage, call: &Usage) {
    total.input_tokens = total.input_tokens.saturating_add(call.input_tokens);
    total.output_tokens = total.output_tokens.saturating_add(call.output_tokens);
    total.cached_input_tokens = total
        .cached_input_tokens
        .saturating_add(call.cached_input_tokens);
    total.reasoning_tokens = total.reasoning_tokens.saturating_add(call.reasoning_tokens);
}
