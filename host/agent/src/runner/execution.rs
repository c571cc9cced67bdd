//! One execution of the managed loop as an object: what its steps share —
//! the progress so far, the model it is bound to, the model-call context,
//! the run's options and mode, the event sink and the managed policy.
//!
//! [`Execution::start`] sets it up, the steps (`steps.rs`, `finish.rs`,
//! `continuation.rs`) move it on, and [`Execution::finish`] commits what
//! settled to the agent and turns it into the run's result.

use futures::StreamExt;
use verdict_policy::{PolicyExecution, StopReason};
use verdict_providers::{
    CallContext, Message, ModelRequest, ModelResponse, ProviderError, StreamEvent, ToolDefinition,
    Usage,
};

use super::Agent;
use super::call_ids::CallIds;
use super::events::{AgentEvent, Events};
use super::managed::{Identity, Managed};
use super::options::{PolicyChoice, RunOptions};
use super::response::{AgentResponse, RunError, RunStatus, SettledRun, SuspendedRun};
use super::routing::{Binding, RouteDiagnostics};
use super::structured::structured;
use crate::cancel::{CancelOnDrop, provider_cancel};
use crate::error::AgentError;
use crate::tools::SettledCall;

/// How an execution was entered: the choices `run` and `stream` make
/// differently, stated, not inferred from the event sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Mode {
    /// Model calls are streamed (text deltas become events).
    pub stream_model: bool,
    /// A final candidate off the output schema gets one repair call (the
    /// spec keeps this to `run`).
    pub repair_output: bool,
}

impl Mode {
    /// `run` and `continue_with_async_results`.
    pub(super) const RUN: Self = Self {
        stream_model: false,
        repair_output: true,
    };

    /// `stream`.
    pub(super) const STREAM: Self = Self {
        stream_model: true,
        repair_output: false,
    };
}

/// What an execution accumulates (what its response or error reports).
pub(super) struct Accumulated {
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

impl Accumulated {
    /// Adds one model call's token usage.
    pub(super) fn add_usage(&mut self, call: &Usage) {
        add_usage(&mut self.usage, call);
    }
}

/// Adds one model call's token usage to `total`.
pub(super) fn add_usage(total: &mut Usage, call: &Usage) {
    total.input_tokens = total.input_tokens.saturating_add(call.input_tokens);
    total.output_tokens = total.output_tokens.saturating_add(call.output_tokens);
    total.cached_input_tokens = total
        .cached_input_tokens
        .saturating_add(call.cached_input_tokens);
    total.reasoning_tokens = total.reasoning_tokens.saturating_add(call.reasoning_tokens);
}

/// How a turn starts.
pub(super) enum TurnStart {
    /// Call the model, with this host feedback first (if any).
    Proceed(Option<Message>),
    /// The execution ended before the call.
    Stop(RunStatus),
}

/// What a step decided.
pub(super) enum Next {
    /// Take another turn.
    Turn,
    /// The execution ended.
    Done(RunStatus),
}

/// One execution.
pub(super) struct Execution<'a> {
    pub(super) agent: &'a Agent,
    pub(super) options: RunOptions,
    pub(super) mode: Mode,
    pub(super) events: &'a Events,
    /// The model the execution is bound to.
    pub(super) binding: Binding,
    /// Cancellation and the call budget of every model call.
    pub(super) ctx: CallContext,
    /// Cancels `ctx`'s handle (a child of the run's) when the execution
    /// is dropped.
    pub(super) _provider_cancel: CancelOnDrop,
    /// The compiled output schema, when the run requires one.
    pub(super) schema: Option<jsonschema::Validator>,
    /// The policy execution, when the run has a policy.
    pub(super) managed: Option<Managed>,
    pub(super) progress: Accumulated,
    /// The tool definitions offered to the model, made once per execution
    /// (lent to each request with the conversation).
    pub(super) tools: Vec<ToolDefinition>,
}

impl<'a> Execution<'a> {
    /// Starts an execution on the agent's conversation (plus `input`, when
    /// there is new input): binds its model, compiles the output schema,
    /// and starts the policy execution with the run's checkers.
    pub(super) fn start(
        agent: &'a Agent,
        input: Option<String>,
        options: RunOptions,
        mode: Mode,
        events: &'a Events,
    ) -> Result<Self, AgentError> {
        let inner = &agent.inner;
        let (messages, generation, execution, previous) = {
            let mut state = agent.state();
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
        let binding = agent.bind(input.as_deref(), previous);
        let execution_id = options
            .execution_id
            .clone()
            .unwrap_or_else(|| format!("{}-exec-{execution}", inner.id));
        let policy = match &options.policy {
            PolicyChoice::Inherit => inner.policy.as_ref(),
            PolicyChoice::Replace(policy) => Some(policy),
            PolicyChoice::Disabled => None,
        };
        let managed = match policy {
            Some(policy) => {
                let checkers = options
                    .checkers
                    .clone()
                    .unwrap_or_else(|| inner.checkers.clone());
                let policy_exec = PolicyExecution::start(
                    policy,
                    &checkers.identities(),
                    execution_id.clone(),
                    Some(inner.max_iterations),
                )
                .map_err(AgentError::Policy)?;
                let identity = Identity {
                    owner: inner.id.clone(),
                    conversation: format!("{}-conversation-{generation}", inner.id),
                };
                Some(Managed::new(
                    policy_exec,
                    checkers,
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
        let (cancel, guard) = provider_cancel(&options.cancel);
        let ctx = CallContext {
            cancel,
            on_attempt: options.budget.as_ref().map(|b| b.hook()),
        };
        let mut progress = Accumulated {
            messages,
            tool_calls: Vec::new(),
            usage: Usage::default(),
            iterations: 0,
            output: String::new(),
            suspension: None,
            execution_id,
            call_ids: CallIds::default(),
        };
        progress.messages.extend(input.map(Message::user));
        Ok(Self {
            agent,
            options,
            mode,
            events,
            binding,
            ctx,
            _provider_cancel: guard,
            schema,
            managed,
            progress,
            tools: inner.tools.definitions(),
        })
    }

    /// Commits the settled conversation (and the binding and budget a
    /// continuation keeps) to the agent, and returns the run's result:
    /// the response, or the error with what had settled.
    pub(super) fn finish(
        self,
        status: Result<RunStatus, AgentError>,
    ) -> Result<AgentResponse, RunError> {
        let inner = &self.agent.inner;
        let route = inner
            .routing
            .as_ref()
            .map(|_| self.binding.diagnostics.clone());
        let mut progress = self.progress;
        {
            let mut state = self.agent.state();
            state.conversation = std::mem::take(&mut progress.messages);
            if inner.routing.is_some() {
                state.binding = Some(self.binding);
            }
            state.budget.clone_from(&self.options.budget);
        }
        let loop_diagnostics = self.managed.map(|m| m.diagnostics());
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
                        loop_diagnostics,
                        route,
                        suspension: progress.suspension,
                        execution_id: progress.execution_id,
                    })),
                });
            }
        };
        let structured_output = self.schema.and_then(|s| structured(&s, &progress.output));
        Ok(AgentResponse {
            output_text: progress.output,
            tool_calls: progress.tool_calls,
            usage: progress.usage,
            status,
            iterations: progress.iterations,
            loop_diagnostics,
            route,
            suspension: progress.suspension,
            structured_output,
            execution_id: progress.execution_id,
        })
    }

    /// `Err(Cancelled)` once the run is cancelled.
    pub(super) fn check_cancelled(&self) -> Result<(), AgentError> {
        if self.options.cancel.is_cancelled() {
            return Err(AgentError::Cancelled);
        }
        Ok(())
    }

    /// A stop the policy (or the loop without one) decided, as the run's
    /// status.
    pub(super) fn stopped(reason: StopReason) -> Next {
        Next::Done(RunStatus::from_stop(reason))
    }

    /// Reports the end of a turn that takes another.
    pub(super) async fn turn_complete(&self) {
        self.events
            .emit(|| AgentEvent::IterationComplete {
                iteration: self.progress.iterations,
                loop_diagnostics: self.managed.as_ref().map(Managed::diagnostics),
            })
            .await;
    }

    /// One model call on the bound model: whole, or streamed with its text
    /// deltas as events.
    pub(super) async fn call_model(
        &self,
        request: &ModelRequest,
    ) -> Result<ModelResponse, ProviderError> {
        let model = &self.binding.model;
        if !self.mode.stream_model {
            return model.complete(request, &self.ctx).await;
        }
        let mut stream = model.stream(request, &self.ctx).await?;
        while let Some(event) = stream.next().await {
            match event? {
                StreamEvent::TextDelta(text) => {
                    self.events.emit(|| AgentEvent::TextDelta(text)).await;
                }
                StreamEvent::Completed(response) => return Ok(response),
                // Tool calls arrive again in the completed response.
                _ => {}
            }
        }
        Err(ProviderError::TruncatedStream {
            detail: "the model stream ended without a final response".to_owned(),
        })
    }

    /// Refreshes the agent's tool sources before a model call (between
    /// batches, never during one) and, when a list changed, the
    /// definitions the next request offers.
    pub(super) async fn refresh_tools(&mut self) {
        let tools = &self.agent.inner.tools;
        if tools.refresh().await {
            self.tools = tools.definitions();
        }
    }

    /// The request of a model call on the conversation so far plus
    /// `extra`: it holds the execution's own conversation and tool
    /// definitions while the call is out (nothing is copied), so it must go
    /// back with [`Execution::give_back`] before the conversation is used
    /// again.
    pub(super) fn lend_request(&mut self, extra: Option<Message>) -> ModelRequest {
        let inner = &self.agent.inner;
        let mut messages = std::mem::take(&mut self.progress.messages);
        messages.extend(extra);
        ModelRequest {
            model: self.binding.model_name.clone(),
            instructions: inner.instructions.clone(),
            messages,
            tools: std::mem::take(&mut self.tools),
            tool_choice: Default::default(),
            output_schema: self.options.output_schema.clone(),
            max_tokens: inner.max_tokens,
        }
    }

    /// Takes back a request from [`Execution::lend_request`]: its
    /// conversation without the `extra` message lent with it, which is
    /// returned (to commit with the model's reply, or to drop).
    pub(super) fn give_back(&mut self, request: ModelRequest, extra: bool) -> Option<Message> {
        let ModelRequest {
            mut messages,
            tools,
            ..
        } = request;
        let extra = if extra { messages.pop() } else { None };
        self.progress.messages = messages;
        self.tools = tools;
        extra
    }
}

impl Agent {
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
}
