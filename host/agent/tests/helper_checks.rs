//! Scenario tests of helper checks: a native checker calls a model only
//! through an explicitly configured helper with an explicit shared budget.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod common;

use std::sync::Arc;

use common::{agent_on, calls, completion, counting_tool, scripted};
use serde_json::json;
use verdict_agent::{CallBudget, HelperError, HelperModel, RunOptions, RunStatus};
use verdict_policy::{
    CheckerError, Effect, LoopPolicy, ProgressChecker, ProgressFn, StopReason, Verdict,
};
use verdict_providers::Model;
use verdict_providers::fake::ScriptedTurn;

fn judge(helper: HelperModel) -> Arc<dyn verdict_policy::CompletionChecker> {
    completion(move |packet| {
        let answer = helper.ask(&format!("Is this done? {}", packet.output_text))?;
        Ok(Verdict {
            complete: answer == "yes",
            reason: None,
            feedback: Some("The judge says not yet.".into()),
        })
    })
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
    let progress: Arc<dyn ProgressChecker> = Arc::new(ProgressFn(move |_: &_| {
        for_progress
            .ask("progress key?")
            .map_err(CheckerError::from)
    }));
    let policy = LoopPolicy {
        max_recovery_attempts: 3,
        ..LoopPolicy::default()
    }
    .with_completion(judge(for_completion))
    .with_progress(progress);
    let (read, _) = counting_tool("read_notes", Effect::Read, json!("notes"));
    let agent = agent_on(&main)
        .tool(read)
        .loop_policy(policy)
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
    let policy = LoopPolicy::default().with_completion(completion(|_| {
        Ok(Verdict {
            complete: true,
            reason: None,
            feedback: None,
        })
    }));
    let agent = agent_on(&main).loop_policy(policy).build().unwrap();
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
    let policy = LoopPolicy::default().with_completion(judge(HelperModel::new(
        dyn_helper,
        "judge",
        budget.clone(),
    )));
    let agent = agent_on(&main).loop_policy(policy).build().unwrap();
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
    let asked = tokio::task::spawn_blocking(move || helper.ask("anything"))
        .await
        .unwrap();
    assert_eq!(asked, Err(HelperError::BudgetExhausted { max_calls: 0 }));
    assert!(helper_model.requests().is_empty());
}

#[test]
fn outside_a_runtime_the_helper_refuses_instead_of_panicking() {
    let helper_model = scripted(vec![ScriptedTurn::text("yes")]);
    let dyn_helper: Arc<dyn Model> = helper_model.clone();
    let helper = HelperModel::new(dyn_helper, "judge", CallBudget::new(3));
    assert_eq!(helper.ask("anything"), Err(HelperError::NoRuntime));
    assert_eq!(helper.budget().used(), 0);
}

#[tokio::test]
async fn a_cancelled_helper_call_ends() {
    let helper_model = scripted(vec![ScriptedTurn::text("yes")]);
    let dyn_helper: Arc<dyn Model> = helper_model.clone();
    let cancel = tokio_util::sync::CancellationToken::new();
    cancel.cancel();
    let helper = HelperModel::new(dyn_helper, "judge", CallBudget::new(3)).with_cancel(cancel);
    let asked = tokio::task::spawn_blocking(move || helper.ask("anything"))
        .await
        .unwrap();
    assert_eq!(asked, Err(HelperError::Cancelled));
    assert!(helper_model.requests().is_empty());
}
