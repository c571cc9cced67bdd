//! Scenario tests of helper checks: a native checker calls a model only
//! through an explicitly configured helper with an explicit shared budget,
//! within the check's context.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{agent_on, calls, completion, counting_tool, scripted};
use serde_json::json;
use verdict_agent::{CallBudget, Checkers, HelperError, HelperModel, RunOptions, RunStatus};
use verdict_policy::{
    CancelHandle, CheckContext, CheckFuture, CheckPacket, CheckerError, CompletionChecker, Effect,
    LoopPolicy, ProgressChecker, StopReason, Verdict,
};
use verdict_providers::Model;
use verdict_providers::fake::ScriptedTurn;

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
