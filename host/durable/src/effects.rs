//! The loop's effects, journaled: a model, tools and checkers that hand
//! each call to the execution's [`Journal`] instead of making it inline.
//! The loop itself is unchanged; only what it calls through is wrapped.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use verdict_agent::{Checkers, Tool};
use verdict_policy::{
    CheckContext, CheckFuture, CheckPacket, CheckerError, CompletionChecker, ProgressChecker,
    Verdict,
};
use verdict_providers::{
    CallContext, EventStream, Model, ModelRequest, ModelResponse, ProviderError, StreamEvent,
};

use crate::entry::{CheckRole, fingerprint};
use crate::journal::{CheckOutcome, CheckStep, Journal, ToolStep};

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
        let request_sha256 = fingerprint(request);
        let request = request.clone();
        let ctx = ctx.clone();
        let call = async move { inner.complete(&request, &ctx).await }.boxed();
        self.journal.model(request_sha256, call).boxed()
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
        let step = check_step(CheckRole::Completion, self.inner.identity(), packet, ctx, {
            let (packet, ctx) = (packet.clone(), ctx.clone());
            async move {
                let answer = inner.check(&packet, &ctx).await;
                CheckOutcome {
                    answer: answer.and_then(|v| {
                        serde_json::to_string(&v)
                            .map_err(|e| CheckerError::Failed(format!("the verdict: {e}")))
                    }),
                    record: ctx.record_id().map(str::to_owned),
                }
            }
        });
        async move {
            let outcome = self.journal.check(step).await;
            noted(ctx, &outcome);
            outcome
                .answer
                .and_then(|text| Verdict::from_json(&text).map_err(CheckerError::InvalidVerdict))
        }
        .boxed()
    }

    fn identity(&self) -> String {
        self.inner.identity()
    }

    /// The timeout is decided in the journal ([`crate::pump`]).
    fn decides_deadline(&self) -> bool {
        true
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
        let step = check_step(CheckRole::Progress, self.inner.identity(), packet, ctx, {
            let (packet, ctx) = (packet.clone(), ctx.clone());
            async move {
                let answer = inner.progress_key(&packet, &ctx).await;
                CheckOutcome {
                    answer,
                    record: ctx.record_id().map(str::to_owned),
                }
            }
        });
        async move {
            let outcome = self.journal.check(step).await;
            noted(ctx, &outcome);
            outcome.answer
        }
        .boxed()
    }

    fn identity(&self) -> String {
        self.inner.identity()
    }

    /// The timeout is decided in the journal ([`crate::pump`]).
    fn decides_deadline(&self) -> bool {
        true
    }
}

/// A check as the handler performs it.
fn check_step(
    role: CheckRole,
    checker: String,
    packet: &CheckPacket,
    ctx: &CheckContext,
    run: impl Future<Output = CheckOutcome> + Send + 'static,
) -> CheckStep {
    CheckStep {
        role,
        checker,
        packet_sha256: fingerprint(packet),
        deadline: ctx.deadline(),
        run: run.boxed(),
    }
}

/// The record id of a journaled check reaches the loop on every attempt
/// (on the first, the checker noted it already; the same id again is
/// ignored).
fn noted(ctx: &CheckContext, outcome: &CheckOutcome) {
    if let Some(id) = &outcome.record {
        ctx.note_record(id.clone());
    }
}
