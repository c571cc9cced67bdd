//! The steps of one turn of the loop, as methods of the [`Execution`]:
//! begin the turn (async imports, the policy's turn decision), call the
//! model, then either judge the final answer or run the response's tool
//! calls as a batch.

use verdict_policy::{StopReason, TurnDecision};
use verdict_providers::{Message, ModelRequest, ModelResponse, ProviderError, ToolCall, Usage};

use super::batch::run_batch;
use super::events::AgentEvent;
use super::execution::{Execution, Next, TurnStart, add_usage};
use super::managed::Judgement;
use super::response::RunStatus;
use super::structured::{format_instruction, repair_instruction, schema_error};
use crate::error::AgentError;

/// Retries of an empty model answer (no text, no tool calls) per turn.
const EMPTY_RESPONSE_RETRIES: u32 = 1;

/// True for an answer with nothing in it (and nothing cut by the token
/// limit).
fn is_empty(response: &ModelResponse) -> bool {
    response.tool_calls.is_empty()
        && response.dropped_tool_calls == 0
        && response.text.as_deref().is_none_or(|t| t.trim().is_empty())
}

impl Execution<'_> {
    /// Before a model call: cancellation, the async results that arrived,
    /// then the policy's turn decision (its feedback for the turn), or the
    /// iteration bound without a policy.
    pub(super) async fn begin_turn(&mut self) -> Result<TurnStart, AgentError> {
        self.check_cancelled()?;
        if let Some(reason) = self.import_async().await {
            return Ok(TurnStart::Stop(RunStatus::from_stop(reason)));
        }
        let mut feedback = None;
        match self.managed.as_mut() {
            Some(managed) => match managed.begin_turn() {
                TurnDecision::Stop { reason } => {
                    return Ok(TurnStart::Stop(RunStatus::from_stop(reason)));
                }
                TurnDecision::Proceed { feedback: text } => {
                    if let Some(text) = text {
                        self.events
                            .emit(|| AgentEvent::LoopNotice {
                                feedback: text.clone(),
                            })
                            .await;
                        feedback = Some(Message::user(text));
                    }
                }
            },
            None if self.progress.iterations >= self.agent.inner.max_iterations => {
                return Ok(TurnStart::Stop(RunStatus::MaxIterations));
            }
            None => {}
        }
        self.progress.iterations += 1;
        Ok(TurnStart::Proceed(feedback))
    }

    /// The turn's model call on the conversation plus the host feedback;
    /// an empty answer is retried once with the same request (a separate
    /// attempt for the budget, not a new turn). The answer's calls get ids
    /// unique in the execution, and the exchange is recorded: the feedback
    /// is committed with the model's reply, never alone (a failed call
    /// would leave it to the next run as if it were input).
    pub(super) async fn model_turn(
        &mut self,
        feedback: Option<Message>,
    ) -> Result<ModelResponse, AgentError> {
        // A streamed run's consumer has taken every event so far: a
        // cancellation it made on one of them is seen here, before the call.
        self.events.taken().await;
        self.check_cancelled()?;
        self.refresh_tools().await;
        let lent = feedback.is_some();
        let request = self.lend_request(feedback);
        let (response, usage) = self.call_model_retrying_empty(&request).await;
        let feedback = self.give_back(request, lent);
        self.progress.add_usage(&usage);
        let mut response = response?;
        self.progress.add_usage(&response.usage);
        // From here on a call is known by an id unique in the execution,
        // on both sides of its call/result pair.
        self.progress.call_ids.assign(&mut response.tool_calls);
        self.progress.messages.extend(feedback);
        self.progress
            .messages
            .push(Message::from_response(&response));
        if let Some(text) = response.text.as_deref().filter(|t| !t.is_empty()) {
            text.clone_into(&mut self.progress.output);
        }
        Ok(response)
    }

    /// A model call, retried once when the answer is empty (the same
    /// request: a separate attempt for the budget, not a new turn). Returns
    /// the last answer and the usage of the empty ones before it.
    async fn call_model_retrying_empty(
        &self,
        request: &ModelRequest,
    ) -> (Result<ModelResponse, ProviderError>, Usage) {
        let mut usage = Usage::default();
        let mut response = self.call_model(request).await;
        for _ in 0..EMPTY_RESPONSE_RETRIES {
            match &response {
                Ok(answer) if is_empty(answer) => add_usage(&mut usage, &answer.usage),
                _ => break,
            }
            response = self.call_model(request).await;
        }
        (response, usage)
    }

    /// An answer without tool calls is a final candidate: with an output
    /// schema and [`super::execution::Mode::repair_output`], one counted
    /// repair of a candidate off the schema first (the check sees the
    /// repaired one); then it is judged.
    pub(super) async fn final_answer(&mut self, mut text: String) -> Result<Next, AgentError> {
        if self.mode.repair_output
            && let Some(validator) = &self.schema
            && let Some(error) = schema_error(validator, &text)
        {
            text = self.reformat(repair_instruction(&error)).await?;
        }
        self.judge_final(&text).await
    }

    /// Runs a response's tool calls as one batch and records their results;
    /// then ends the execution on a policy stop, a suspension (after the
    /// wrap-up) or a tool-induced stop (whose result is judged as the final
    /// candidate), or samples progress and takes another turn.
    pub(super) async fn tool_batch(&mut self, calls: &[ToolCall]) -> Result<Next, AgentError> {
        let inner = &self.agent.inner;
        let batch = run_batch(
            &inner.tools,
            calls,
            self.managed.as_mut(),
            &self.options.cancel,
            self.events,
        )
        .await;
        let ended = batch
            .ended_by
            .and_then(|i| batch.settled.get(i))
            .map(|s| (s.call.name.clone(), s.to_result().content));
        self.progress.messages.extend(
            batch
                .settled
                .iter()
                .map(|s| Message::ToolResult(s.to_result())),
        );
        self.progress.tool_calls.extend(batch.settled);
        {
            let mut queue = self.agent.async_queue();
            for (settled, handle) in batch.pending {
                queue.await_handle(&self.progress.execution_id, &settled, handle);
            }
        }
        self.check_cancelled()?;
        if let Some(reason) = batch.stop {
            return Ok(Self::stopped(reason));
        }
        if let Some(signal) = batch.suspend {
            return Ok(Next::Done(self.wrap_up(signal).await?));
        }
        if let Some((tool, result)) = ended {
            return self.tool_induced_stop(&tool, result).await;
        }
        if let Some(managed) = self.managed.as_mut() {
            let stop = managed.after_batch(&self.options.cancel).await;
            self.check_cancelled()?;
            if let Some(reason) = stop {
                return Ok(Self::stopped(reason));
            }
        }
        self.turn_complete().await;
        Ok(Next::Turn)
    }

    /// A tool ended the run: its result is the final candidate; with an
    /// output schema, one formatting call appends a separate final answer
    /// (repaired once more when the mode repairs).
    async fn tool_induced_stop(&mut self, tool: &str, result: String) -> Result<Next, AgentError> {
        let mut text = result;
        match &self.schema {
            Some(_) => {
                text = self.reformat(format_instruction(tool)).await?;
                if self.mode.repair_output
                    && let Some(validator) = &self.schema
                    && let Some(error) = schema_error(validator, &text)
                {
                    text = self.reformat(repair_instruction(&error)).await?;
                }
            }
            None => self.progress.output.clone_from(&text),
        }
        self.judge_final(&text).await
    }

    /// A final candidate: imports the async results that arrived, then asks
    /// the policy (when configured), which runs the completion check.
    async fn judge_final(&mut self, text: &str) -> Result<Next, AgentError> {
        // The response reports the candidate judged here, whatever text an
        // earlier turn had.
        text.clone_into(&mut self.progress.output);
        if let Some(reason) = self.import_async().await {
            return Ok(Self::stopped(reason));
        }
        let Some(managed) = self.managed.as_mut() else {
            if !self.agent.pending_async_calls().is_empty() {
                return Ok(Self::stopped(StopReason::PendingAsync));
            }
            return Ok(Next::Done(RunStatus::Completed));
        };
        let judgement = managed.final_candidate(text, &self.options.cancel).await;
        self.check_cancelled()?;
        match judgement {
            Judgement::Accept => Ok(Next::Done(RunStatus::Completed)),
            Judgement::Stop(reason) => Ok(Self::stopped(reason)),
            Judgement::Continue => {
                self.turn_complete().await;
                Ok(Next::Turn)
            }
        }
    }
}
