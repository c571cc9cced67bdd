//! Async results in the loop: continuing with them, delivering them, and
//! importing them into an execution before its next model dispatch or
//! completion check.

use verdict_policy::{Decision, StopReason};
use verdict_providers::Message;

use super::Agent;
use super::async_results::AsyncDelivery;
use super::events::{AgentEvent, Events};
use super::execution::{Execution, Mode};
use super::lease::Lease;
use super::options::RunOptions;
use super::response::{AgentResponse, RunError};

impl Agent {
    /// Continues after a `pending_async` stop (or any time async results
    /// are queued): a new execution — under the configured policy, with
    /// fresh admission counters — that imports the delivered results
    /// (labelled `[async result]` user messages, observed by the policy)
    /// before its first model dispatch, without new user input. Results
    /// still awaited stay outstanding: a final answer before they arrive
    /// stops with `pending_async` again, never cancelling or repeating them.
    /// It keeps the previous execution's route and, when `options` has no
    /// budget, its call budget (the same allowance, not a fresh one).
    pub async fn continue_with_async_results(
        &self,
        mut options: RunOptions,
    ) -> Result<AgentResponse, RunError> {
        let lease = Lease::take(&self.inner.lease)?;
        if options.budget.is_none() {
            options.budget = self.state().budget.clone();
        }
        self.execute(lease, None, options, Mode::RUN, &Events::none())
            .await
    }

    /// Delivers an async tool result (from a settler elsewhere, or a saved
    /// queue) to the agent; the next execution imports it. Returns false
    /// when a result with this identity (origin execution and call id) was
    /// already delivered (repeated deliveries are ignored).
    pub fn deliver_async_result(&self, delivery: AsyncDelivery) -> bool {
        self.async_queue().deliver(delivery)
    }

    /// The ids of the async calls whose results are still awaited.
    pub fn pending_async_calls(&self) -> Vec<String> {
        self.async_queue().awaited_ids()
    }
}

impl Execution<'_> {
    /// Imports the async results that arrived (a labelled user message and
    /// a policy observation each) and registers the ones still awaited as
    /// outstanding. Under a policy, importing stops once the execution has
    /// ended or reached a tracking bound: the deliveries not imported stay
    /// queued, in order, for a later execution. Returns the stop an import
    /// caused.
    pub(super) async fn import_async(&mut self) -> Option<StopReason> {
        let (arrived, awaited) = {
            let mut queue = self.agent.async_queue();
            (queue.take_arrived(), queue.awaited())
        };
        let mut stop = None;
        let mut arrived = arrived.into_iter();
        while let Some(delivery) = arrived.next() {
            if let Some(managed) = self.managed.as_mut()
                && let Some(reason) = managed.before_import()
            {
                stop.get_or_insert(reason);
                self.agent
                    .async_queue()
                    .requeue(std::iter::once(delivery).chain(arrived));
                break;
            }
            self.progress
                .messages
                .push(Message::user(delivery.message()));
            let settled = delivery.to_settled();
            self.events
                .emit(|| AgentEvent::ToolCallSettled(settled.clone()))
                .await;
            self.progress.tool_calls.push(settled);
            if let Some(managed) = self.managed.as_mut()
                && let Decision::Stop { reason } = managed.import(&delivery)
            {
                stop.get_or_insert(reason);
            }
        }
        if let Some(managed) = self.managed.as_mut() {
            for delivery in &awaited {
                managed.expect(delivery);
            }
        }
        stop
    }
}
