//! Scenario tests of helper checks: a native checker calls a model only
//! through an explicitly configured helper with an explicit shared budget,
//! within the check's context (cancelled with it, before or during the
//! helper's call).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{agent_on, calls, completion, counting_tool, scripted};
use futures::future::BoxFuture;
use serde_json::json;
use verdict_agent::{
    AgentError, CallBudget, Checkers, HelperError, HelperModel, RunOptions, RunStatus,
};
use verdict_policy::{
    CancelHandle, CheckContext, CheckFuture, CheckPacket, CheckerError, CompletionChecker, Effect,
    LoopPolicy, ProgressChecker, StopReason, Verdict,
};
use verdict_providers::fake::ScriptedTurn;
use verdict_providers::{
    CallContext, EventStream, Model, ModelRequest, ModelResponse, ProviderError,
};

/// A completion checker that asks a helper model whether the work is done:
/// an async checker, the helper call made within the check's context.
struct Judge(HelperModel);

impl CompletionChecker for Judge {
    fn check<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, Verdict> {
        Box::pin(async move {
            let prompt = format!("Is this done? {}", packet.output_text);
            let answer = self.0.ask(&prompt, ctx).await?;
            Ok(Verdict::new(
                answer == "yes",
                None,
                Some("The judge says not yet.".into()),
            )
            .unwrap())
        })
    }
}

/// A progress checker whose key is the helper's answer.
struct AskForKey(HelperModel);

impl ProgressChecker for AskForKey {
    fn progress_key<'a>(
        &'a self,
        _packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, String> {
        Box::pin(async move { Ok(self.0.ask("progress key?", ctx).await?) })
    }
}

fn judge(helper: HelperModel) -> Arc<dyn CompletionChecker> {
    Arc::new(Judge(helper))
}

#[tokio::test]
async fn helper_budget_is_shared_across_checkers_and_exhausts() {
    let main = scripted(vec![
        calls(&[("r1", "read_notes", json!({}))]),
        ScriptedTurn::text("Draft."),
        ScriptedTurn::text("Final."),
    ]);
    let helper_model = scripted(vec![
        ScriptedTurn::text("progress-1"),
        ScriptedTurn::text("no"),
    ]);
    let dyn_helper: Arc<dyn Model> = helper_model.clone();
    // One explicit budget of two calls shared by both checkers.
    let shared = CallBudget::new(2);
    let for_progress = HelperModel::new(dyn_helper.clone(), "judge", shared.clone());
    let for_completion = HelperModel::new(dyn_helper, "judge", shared.clone());
    let progress: Arc<dyn ProgressChecker> = Arc::new(AskForKey(for_progress));
    let policy = LoopPolicy {
        max_recovery_attempts: 3,
        ..LoopPolicy::default()
    };
    let checkers = Checkers::new()
        .with_completion(judge(for_completion))
        .with_progress(progress);
    let (read, _) = counting_tool("read_notes", Effect::Read, json!("notes"));
    let agent = agent_on(&main)
        .tool(read)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let run_budget = CallBudget::new(10);
    let run = agent
        .run(
            "Write it.",
            RunOptions::default().with_budget(run_budget.clone()),
        )
        .await
        .unwrap();
    // Progress sample (1), first completion check "no" (2), then the second
    // completion check finds the shared budget spent.
    assert_eq!(run.status, RunStatus::Stopped(StopReason::CheckerError));
    assert_eq!(helper_model.requests().len(), 2);
    assert!(shared.is_spent());
    // Helper calls never touch the run's budget (no implicit inheritance).
    assert_eq!(run_budget.used(), 3);
    assert_eq!(main.requests().len(), 3);
}

#[tokio::test]
async fn the_loop_never_calls_a_helper_by_itself() {
    let main = scripted(vec![ScriptedTurn::text("Done.")]);
    let helper_model = scripted(vec![ScriptedTurn::text("yes")]);
    let dyn_helper: Arc<dyn Model> = helper_model.clone();
    let helper = HelperModel::new(dyn_helper, "judge", CallBudget::new(5));
    // The helper is configured but this checker does not consult it.
    let _unused = helper.clone();
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(|_| Ok(Verdict::bare(true))));
    let agent = agent_on(&main)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let run = agent.run("Go.", RunOptions::default()).await.unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert!(helper_model.requests().is_empty());
    assert_eq!(helper.budget().used(), 0);
}

#[tokio::test]
async fn a_helper_verdict_completes_within_budget() {
    let main = scripted(vec![ScriptedTurn::text("Done.")]);
    let helper_model = scripted(vec![ScriptedTurn::text("yes")]);
    let dyn_helper: Arc<dyn Model> = helper_model.clone();
    let budget = CallBudget::new(1);
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(judge(HelperModel::new(
        dyn_helper,
        "judge",
        budget.clone(),
    )));
    let agent = agent_on(&main)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let run = agent.run("Go.", RunOptions::default()).await.unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(budget.used(), 1);
    let asked = &helper_model.requests()[0];
    assert_eq!(asked.model, "judge");
    assert!(asked.tools.is_empty());
}

#[tokio::test]
async fn a_spent_helper_budget_is_a_typed_error() {
    let helper_model = scripted(vec![ScriptedTurn::text("yes")]);
    let dyn_helper: Arc<dyn Model> = helper_model.clone();
    let helper = HelperModel::new(dyn_helper, "judge", CallBudget::new(0));
    let asked = helper.ask("anything", &CheckContext::new()).await;
    assert_eq!(asked, Err(HelperError::BudgetExhausted { max_calls: 0 }));
    assert!(helper_model.requests().is_empty());
}

#[test]
fn outside_a_runtime_the_helper_refuses_instead_of_panicking() {
    let helper_model = scripted(vec![ScriptedTurn::text("yes")]);
    let dyn_helper: Arc<dyn Model> = helper_model.clone();
    let helper = HelperModel::new(dyn_helper, "judge", CallBudget::new(3));
    let asked = futures::executor::block_on(helper.ask("anything", &CheckContext::new()));
    assert_eq!(asked, Err(HelperError::NoRuntime));
    assert_eq!(helper.budget().used(), 0);
}

#[tokio::test]
async fn a_cancelled_helper_call_ends() {
    let helper_model = scripted(vec![ScriptedTurn::text("yes")]);
    let dyn_helper: Arc<dyn Model> = helper_model.clone();
    let cancel = CancelHandle::new();
    cancel.cancel();
    let ctx = CheckContext::new().with_cancel(cancel);
    let helper = HelperModel::new(dyn_helper, "judge", CallBudget::new(3));
    let asked = helper.ask("anything", &ctx).await;
    assert_eq!(asked, Err(HelperError::Cancelled));
    assert!(helper_model.requests().is_empty());
    assert_eq!(
        CheckerError::from(HelperError::Cancelled),
        CheckerError::Cancelled
    );
}

#[tokio::test]
async fn a_helper_call_ends_at_the_checks_deadline() {
    // The helper model answers only after 10 s; the check's deadline is 50 ms.
    let helper_model = scripted(vec![ScriptedTurn::text("yes").delayed(10_000)]);
    let dyn_helper: Arc<dyn Model> = helper_model.clone();
    let helper = HelperModel::new(dyn_helper, "judge", CallBudget::new(3));
    let ctx = CheckContext::new().with_deadline(Instant::now() + Duration::from_millis(50));
    let asked = tokio::time::timeout(Duration::from_secs(5), helper.ask("anything", &ctx))
        .await
        .expect("the helper call ends at the check's deadline, not after the model");
    assert_eq!(asked, Err(HelperError::Timeout));
    assert_eq!(
        CheckerError::from(HelperError::Timeout),
        CheckerError::Timeout
    );
}

/// A helper model whose call stays in flight until it is cancelled (or
/// 30 s pass: then it answers "yes"). It keeps the call's cancel handle,
/// says when the call started, and marks when the call's future ended.
struct InFlightModel {
    started: tokio::sync::mpsc::UnboundedSender<()>,
    token: Mutex<Option<CancelHandle>>,
    ended: Arc<AtomicBool>,
}

/// Sets its flag when dropped.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl Model for InFlightModel {
    fn complete<'a>(
        &'a self,
        _request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        Box::pin(async move {
            *self.token.lock().unwrap() = Some(ctx.cancel.clone());
            let _ended = SetOnDrop(self.ended.clone());
            let _ = self.started.send(());
            tokio::select! {
                () = ctx.cancel.cancelled() => Err(ProviderError::Cancelled),
                () = tokio::time::sleep(Duration::from_secs(30)) => Ok(ModelResponse {
                    text: Some("yes".into()),
                    ..ModelResponse::default()
                }),
            }
        })
    }

    fn stream<'a>(
        &'a self,
        _request: &'a ModelRequest,
        _ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<EventStream, ProviderError>> {
        panic!("a helper never streams")
    }
}

/// [`Judge`], recording what its helper call answered.
struct RecordingJudge {
    helper: HelperModel,
    answered: Arc<Mutex<Option<Result<String, HelperError>>>>,
}

impl CompletionChecker for RecordingJudge {
    fn check<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, Verdict> {
        Box::pin(async move {
            let prompt = format!("Is this done? {}", packet.output_text);
            let answer = self.helper.ask(&prompt, ctx).await;
            *self.answered.lock().unwrap() = Some(answer.clone());
            Ok(Verdict::bare(answer? == "yes"))
        })
    }
}

#[tokio::test]
async fn cancelling_the_run_during_a_helper_call_cancels_the_call() {
    let main = scripted(vec![ScriptedTurn::text("Done.")]);
    let (started_tx, mut started) = tokio::sync::mpsc::unbounded_channel();
    let ended = Arc::new(AtomicBool::new(false));
    let helper_model = Arc::new(InFlightModel {
        started: started_tx,
        token: Mutex::new(None),
        ended: ended.clone(),
    });
    let dyn_helper: Arc<dyn Model> = helper_model.clone();
    let answered = Arc::new(Mutex::new(None));
    let judge = RecordingJudge {
        helper: HelperModel::new(dyn_helper, "judge", CallBudget::new(3)),
        answered: answered.clone(),
    };
    let agent = agent_on(&main)
        .loop_policy(LoopPolicy::default())
        .completion_checker(Arc::new(judge))
        .build()
        .unwrap();
    let cancel = CancelHandle::new();
    let (result, ()) = tokio::join!(
        agent.run("Go.", RunOptions::default().with_cancel(cancel.clone())),
        async {
            // The helper's request is in flight: cancel the run now.
            started.recv().await.expect("the helper is called");
            cancel.cancel();
        },
    );
    // The run ends on its cancellation path, not as a checker error, and
    // not with the helper's "yes" (which would have completed it).
    assert_eq!(result.unwrap_err(), AgentError::Cancelled);
    let diag = agent.loop_diagnostics().expect("the latest diagnostics");
    assert_eq!(diag.reason, None, "{diag:?}");
    assert_eq!(diag.checker_error, None, "{diag:?}");
    assert_eq!(diag.counters.completion_checks, 1);
    assert_eq!(main.requests().len(), 1, "no model call after it");
    // The helper call itself was cancelled: the helper answered
    // `Cancelled`, the model call's own token fired, and its future ended.
    assert_eq!(*answered.lock().unwrap(), Some(Err(HelperError::Cancelled)));
    let token = helper_model.token.lock().unwrap().clone();
    assert!(token.expect("the model was called").is_cancelled());
    assert!(ended.load(Ordering::SeqCst), "the model call still runs");
}
