//! `Agent::run`: model call → tool calls → results → next call, with the
//! loop policy (when configured) at every decision point. The loop itself
//! is [`Execution::drive`], a short loop over the execution's steps.

use super::Agent;
use super::events::Events;
use super::execution::{Execution, Mode, Next, TurnStart};
use super::lease::Lease;
use super::options::RunOptions;
use super::response::{AgentResponse, RunError, RunStatus};
use crate::error::AgentError;

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
        self.execute(
            lease,
            Some(input.into()),
            options,
            Mode::RUN,
            &Events::none(),
        )
        .await
    }

    /// The one implementation behind `run`, `stream` and
    /// `continue_with_async_results`.
    pub(super) async fn execute(
        &self,
        _lease: Lease,
        input: Option<String>,
        options: RunOptions,
        mode: Mode,
        events: &Events,
    ) -> Result<AgentResponse, RunError> {
        let mut execution = Execution::start(self, input, options, mode, events)?;
        let status = execution.drive().await;
        execution.finish(status)
    }
}

impl Execution<'_> {
    /// The loop: begin a turn, call the model, then judge a final answer
    /// or run the tool calls, until a step ends the execution.
    async fn drive(&mut self) -> Result<RunStatus, AgentError> {
        loop {
            let feedback = match self.begin_turn().await? {
                TurnStart::Stop(status) => return Ok(status),
                TurnStart::Proceed(feedback) => feedback,
            };
            let response = self.model_turn(feedback).await?;
            let next = if response.tool_calls.is_empty() {
                self.final_answer(response.text.unwrap_or_default()).await?
            } else {
                self.tool_batch(&response.tool_calls).await?
            };
            if let Next::Done(status) = next {
                return Ok(status);
            }
        }
    }
}
