//! The loop's effects, journaled: a model, tools and checkers that hand
//! each call to the execution's [`Journal`] instead of making it inline.
//! The loop itself is unchanged; only what it calls through is wrapped.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use verdict_agent::{Checkers, Tool};
use verdict_policy::{
    CheckContext, CheckFuture, CheckPacket, CompletionChecker, ProgressChecker, Verdict,
};
use verdict_providers::{
    CallContext, EventStream, Model, ModelRequest, ModelResponse, ProviderError, StreamEvent,
};

use crate::journal::{Journal, ToolStep};

/// A model whose calls are journaled.
pub(crate) struct JournaledModel {
    pub inner: Arc<dyn Model>,
    pub journal: Journal,
}

impl Model for JournaledModel {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        let inner = Arc::clone(&self.inner);
        let request = request.clone();
        let ctx = ctx.clone();
        let call = async move { inner.complete(&request, &ctx).await }.boxed();
        self.journal.model(call).boxed()
    }

    /// A durable execution does not stream: the whole turn is journaled
    /// and given as one completed event.
    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<EventStream, ProviderError>> {
        async move {
            let response = self.complete(request, ctx).await?;
            let events: EventStream = Box::pin(futures::stream::iter([Ok(
                StreamEvent::Completed(response),
            )]));
            Ok(events)
        }
        .boxed()
    }
}

/// `tool` with its runs journaled.
pub(crate) fn journaled_tool(tool: &Tool, journal: &Journal) -> Tool {
    let journal = journal.clone();
    let name = tool.name().to_owned();
    let effect = tool.effect();
    let idempotent = tool.is_idempotent();
    let deadline = tool.deadline();
    tool.layered(move |arguments, ctx, run| {
        let journal = journal.clone();
        let step = ToolStep {
            tool: name.clone(),
            effect,
            idempotent,
            deadline,
            arguments,
            ctx,
            run,
        };
        async move { journal.tool(step).await }.boxed()
    })
}

/// `checkers` with their answers journaled.
pub(crate) fn journaled_checkers(checkers: &Checkers, journal: &Journal) -> Checkers {
    Checkers {
        completion: checkers.completion.as_ref().map(|inner| {
            Arc::new(JournaledCompletion {
                inner: Arc::clone(inner),
                journal: journal.clone(),
            }) as Arc<dyn CompletionChecker>
        }),
        progress: checkers.progress.as_ref().map(|inner| {
            Arc::new(JournaledProgress {
                inner: Arc::clone(inner),
                journal: journal.clone(),
            }) as Arc<dyn ProgressChecker>
        }),
    }
}

struct JournaledCompletion {
    inner: Arc<dyn CompletionChecker>,
    journal: Journal,
}

impl CompletionChecker for JournaledCompletion {
    fn check<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, Verdict> {
        let inner = Arc::clone(&self.inner);
        let packet = packet.clone();
        let ctx = ctx.clone();
        let call = async move { within_deadline(&ctx, inner.check(&packet, &ctx)).await }.boxed();
        self.journal.verdict(call).boxed()
    }

    fn identity(&self) -> String {
        self.inner.identity()
    }
}

struct JournaledProgress {
    inner: Arc<dyn ProgressChecker>,
    journal: Journal,
}

impl ProgressChecker for JournaledProgress {
    fn progress_key<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, String> {
        let inner = Arc::clone(&self.inner);
        let packet = packet.clone();
        let ctx = ctx.clone();
        let call =
            async move { within_deadline(&ctx, inner.progress_key(&packet, &ctx)).await }.boxed();
        self.journal.progress(call).boxed()
    }

    fn identity(&self) -> String {
        self.inner.identity()
    }
}

/// How long before the check's deadline the handler stops waiting: the
/// loop takes an answer given at or after the deadline for a timeout, so a
/// journaled verdict must leave it time to see the answer in time (or a
/// replay, answered at once, would decide otherwise).
const CHECK_MARGIN: std::time::Duration = std::time::Duration::from_millis(100);

/// A check bounded by its context's deadline: the handler performs it
/// while the loop waits, so the loop's own timer cannot cut it short, and
/// a timeout must be an answer the journal keeps.
async fn within_deadline<T>(
    ctx: &CheckContext,
    call: CheckFuture<'_, T>,
) -> Result<T, verdict_policy::CheckerError> {
    match ctx.deadline() {
        Some(deadline) => tokio::time::timeout_at(
            deadline
                .checked_sub(CHECK_MARGIN)
                .unwrap_or(deadline)
                .into(),
            call,
        )
        .await
        .unwrap_or(Err(verdict_policy::CheckerError::Timeout)),
        None => call.await,
    }
}
