//! Scenario tests of async tools: pending handles, `pending_async`,
//! continuations, queued results, deduplication, admitted effects, legacy
//! deliveries and conservative blocking.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{agent_on, any_object, assert_protocol_whole, completion, scripted, user_texts};
use serde_json::json;
use verdict_agent::{
    AsyncDelivery, AsyncSettler, Checkers, ExecutionReceipt, PendingResult, RunOptions, RunStatus,
    Tool, ToolError, ToolOutcome, ToolReturn,
};
use verdict_policy::{Effect, LoopPolicy, OutcomeStatus, StopReason, Verdict};
use verdict_providers::fake::ScriptedTurn;

type Settlers = Arc<Mutex<Vec<AsyncSettler>>>;

/// An async tool answering pending; its settlers are kept in the returned
/// list, its starts counted. With `settle_now`, it settles before returning
/// the handle (a same-run settlement).
fn async_tool(name: &str, effect: Effect, settle_now: bool) -> (Tool, Settlers, Arc<AtomicUsize>) {
    let settlers: Settlers = Arc::default();
    let starts = Arc::new(AtomicUsize::new(0));
    let (keep, count) = (settlers.clone(), starts.clone());
    let tool = Tool::new_async(name, any_object(), move |_, _| {
        count.fetch_add(1, Ordering::SeqCst);
        let (handle, settler) = PendingResult::new();
        if settle_now {
            settler.settle(Ok(json!("settled at once")));
        } else {
            keep.lock().unwrap().push(settler);
        }
        async move { Ok::<_, ToolError>(ToolReturn::Pending(handle)) }
    })
    .unwrap()
    .with_effect(effect);
    (tool, settlers, starts)
}

/// A completion checker accepting once `tool` succeeded; counts its calls.
fn needs_success(tool: &'static str) -> (Checkers, Arc<AtomicUsize>) {
    let checks = Arc::new(AtomicUsize::new(0));
    let counter = checks.clone();
    let checkers = Checkers::new().with_completion(completion(move |packet| {
        counter.fetch_add(1, Ordering::SeqCst);
        let ok = packet.observations.iter().any(|o| {
            o.tool_name == tool
                && o.outcome.as_ref().map(|x| x.status) == Some(OutcomeStatus::Succeeded)
        });
        Ok(Verdict::new(ok, None, Some(format!("Wait for {tool}."))).unwrap())
    }));
    (checkers, checks)
}

fn delivery(id: &str, tool: &str) -> AsyncDelivery {
    AsyncDelivery {
        call_id: id.into(),
        execution_id: None,
        tool_name: tool.into(),
        admitted_effect: None,
        receipt: None,
        arguments: None,
        outcome: None,
    }
}

fn receipt(id: &str, tool: &str, effect: Effect) -> ExecutionReceipt {
    ExecutionReceipt {
        call_id: id.into(),
        tool_name: tool.into(),
        effect,
        duration_ms: 1,
        result_fingerprint: None,
    }
}

#[tokio::test]
async fn pending_async_then_continuation_completes() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("j1", "start_job", json!({"job": 7})),
        ScriptedTurn::text("The job is done."),
        ScriptedTurn::text("The job finished: ok."),
    ]);
    let (tool, settlers, starts) = async_tool("start_job", Effect::Write, false);
    let (checkers, checks) = needs_success("start_job");
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(LoopPolicy::default())
        .checkers(checkers)
        .build()
        .unwrap();

    let first = agent
        .run("Run job 7.", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(first.status, RunStatus::Stopped(StopReason::PendingAsync));
    assert!(first.tool_calls[0].pending);
    assert_eq!(checks.load(Ordering::SeqCst), 0, "no check while pending");
    assert_eq!(agent.pending_async_calls(), vec!["j1".to_owned()]);
    assert_protocol_whole(&agent.conversation());

    // The result arrives; the continuation imports it and completes.
    let model_calls = model.requests().len();
    settlers
        .lock()
        .unwrap()
        .pop()
        .unwrap()
        .settle(Ok(json!("ok")));
    let second = agent
        .continue_with_async_results(RunOptions::default())
        .await
        .unwrap();
    assert_eq!(second.status, RunStatus::Completed);
    assert_eq!(second.output_text, "The job finished: ok.");
    assert_eq!(starts.load(Ordering::SeqCst), 1, "never repeated");
    assert_eq!(checks.load(Ordering::SeqCst), 1);
    assert!(agent.pending_async_calls().is_empty());
    // The result reached the model before its next dispatch.
    let request = &model.requests()[model_calls];
    assert_eq!(
        user_texts(request).last().unwrap(),
        "[async result] start_job (call j1): ok"
    );
    // A new execution with fresh admission counters that observed it.
    let diag = second.loop_diagnostics.unwrap();
    assert_eq!(diag.counters.admissions, 0);
    assert_eq!(diag.counters.observations, 1);
    assert_protocol_whole(&agent.conversation());
}

#[tokio::test]
async fn continuation_before_the_result_stops_pending_again() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("j1", "start_job", json!({})),
        ScriptedTurn::text("Done."),
        ScriptedTurn::text("Still done."),
    ]);
    let (tool, settlers, starts) = async_tool("start_job", Effect::Write, false);
    let (checkers, checks) = needs_success("start_job");
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(LoopPolicy::default())
        .checkers(checkers)
        .build()
        .unwrap();
    agent.run("Run it.", RunOptions::default()).await.unwrap();
    let again = agent
        .continue_with_async_results(RunOptions::default())
        .await
        .unwrap();
    assert_eq!(again.status, RunStatus::Stopped(StopReason::PendingAsync));
    assert_eq!(starts.load(Ordering::SeqCst), 1);
    assert_eq!(checks.load(Ordering::SeqCst), 0);
    assert_eq!(settlers.lock().unwrap().len(), 1, "still awaited");
    assert_eq!(agent.pending_async_calls(), vec!["j1".to_owned()]);
}

#[tokio::test]
async fn normal_run_injects_queued_results_before_dispatch() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("j1", "start_job", json!({})),
        ScriptedTurn::text("Started."),
        ScriptedTurn::text("Thanks, all done."),
    ]);
    let (tool, settlers, _) = async_tool("start_job", Effect::Write, false);
    let (checkers, _) = needs_success("start_job");
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(LoopPolicy::default())
        .checkers(checkers)
        .build()
        .unwrap();
    agent.run("Run it.", RunOptions::default()).await.unwrap();
    settlers
        .lock()
        .unwrap()
        .pop()
        .unwrap()
        .settle(Ok(json!({"rows": 3})));
    let next = agent
        .run("Anything else?", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(next.status, RunStatus::Completed);
    let texts = user_texts(model.requests().last().unwrap());
    assert_eq!(
        texts[texts.len() - 2..],
        [
            "Anything else?".to_owned(),
            "[async result] start_job (call j1): {\"rows\":3}".to_owned()
        ]
    );
    assert_eq!(next.loop_diagnostics.unwrap().counters.observations, 1);
}

#[tokio::test]
async fn same_run_settlement_and_duplicate_deliveries_are_imported_once() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("j1", "start_job", json!({})),
        ScriptedTurn::text("Done."),
        ScriptedTurn::text("Done again."),
    ]);
    let (tool, _, _) = async_tool("start_job", Effect::Write, true);
    let (checkers, _) = needs_success("start_job");
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(LoopPolicy::default())
        .checkers(checkers)
        .build()
        .unwrap();
    let run = agent.run("Run it.", RunOptions::default()).await.unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(
        run.loop_diagnostics.clone().unwrap().counters.observations,
        1
    );
    // A redelivery of the same call (same execution identity) is ignored,
    // as is a second one.
    let mut again = delivery("j1", "start_job");
    again.execution_id = Some(run.execution_id.clone());
    again.outcome = Some(ToolOutcome::Succeeded { value: json!("x") });
    assert!(!agent.deliver_async_result(again.clone()));
    again.call_id = "j2".into();
    assert!(agent.deliver_async_result(again.clone()));
    assert!(!agent.deliver_async_result(again));
    let next = agent.run("More?", RunOptions::default()).await.unwrap();
    let injected: Vec<String> = agent
        .conversation()
        .iter()
        .filter_map(|m| match m {
            verdict_providers::Message::User { text } if text.starts_with("[async result]") => {
                Some(text.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(injected.len(), 2, "{injected:?}");
    assert_eq!(next.loop_diagnostics.unwrap().counters.observations, 1);
}

#[tokio::test]
async fn delivery_keeps_the_admitted_effect_over_the_current_registration() {
    // `send_report` is registered as a read now; the delivery was admitted
    // as a write and has no outcome: it blocks before any model call.
    let model = scripted(vec![ScriptedTurn::text("Sent.")]);
    let read = Tool::new("send_report", any_object(), |_, _| async { Ok(json!(1)) })
        .unwrap()
        .with_effect(Effect::Read);
    let agent = agent_on(&model)
        .tool(read)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let mut admitted = delivery("s1", "send_report");
    admitted.admitted_effect = Some(Effect::Write);
    admitted.receipt = Some(receipt("s1", "send_report", Effect::Read));
    assert!(agent.deliver_async_result(admitted));
    let run = agent.run("Report?", RunOptions::default()).await.unwrap();
    assert_eq!(run.status, RunStatus::Stopped(StopReason::UncertainEffect));
    assert!(model.requests().is_empty());
}

#[tokio::test]
async fn legacy_deliveries_use_the_receipt_effect_or_unknown() {
    // Receipt says read: a missing outcome is a recoverable failure.
    let model = scripted(vec![ScriptedTurn::text("ok")]);
    let agent = agent_on(&model)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let mut legacy = delivery("l1", "fetch_rows");
    legacy.receipt = Some(receipt("l1", "fetch_rows", Effect::Read));
    agent.deliver_async_result(legacy);
    let run = agent.run("Go.", RunOptions::default()).await.unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.loop_diagnostics.unwrap().counters.failures, 1);
    // No metadata and an unregistered tool: unknown, blocked.
    let model = scripted(vec![ScriptedTurn::text("ok")]);
    let agent = agent_on(&model)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    agent.deliver_async_result(delivery("l2", "gone_tool"));
    let run = agent.run("Go.", RunOptions::default()).await.unwrap();
    assert_eq!(run.status, RunStatus::Stopped(StopReason::UncertainEffect));
    assert!(model.requests().is_empty());
}

#[tokio::test]
async fn abandoned_handle_of_a_write_blocks_conservatively() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("w1", "charge_card", json!({})),
        ScriptedTurn::text("Charged."),
        ScriptedTurn::text("unreachable"),
    ]);
    let (tool, settlers, _) = async_tool("charge_card", Effect::Write, false);
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let first = agent.run("Charge.", RunOptions::default()).await.unwrap();
    assert_eq!(first.status, RunStatus::Stopped(StopReason::PendingAsync));
    settlers.lock().unwrap().clear(); // the settler is dropped unsettled
    let calls = model.requests().len();
    let next = agent
        .continue_with_async_results(RunOptions::default())
        .await
        .unwrap();
    assert_eq!(next.status, RunStatus::Stopped(StopReason::UncertainEffect));
    assert_eq!(model.requests().len(), calls, "no model call after it");
}

#[tokio::test]
async fn imported_failures_count_toward_recovery() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("j1", "start_job", json!({})),
        ScriptedTurn::text("Started."),
        ScriptedTurn::text("unreachable"),
    ]);
    let (tool, settlers, _) = async_tool("start_job", Effect::Read, false);
    let policy = LoopPolicy {
        max_recovery_attempts: 0,
        ..LoopPolicy::default()
    };
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(policy)
        .build()
        .unwrap();
    agent.run("Run.", RunOptions::default()).await.unwrap();
    settlers
        .lock()
        .unwrap()
        .pop()
        .unwrap()
        .settle(Err(ToolError::new("job crashed")));
    let calls = model.requests().len();
    let next = agent
        .continue_with_async_results(RunOptions::default())
        .await
        .unwrap();
    assert_eq!(
        next.status,
        RunStatus::Stopped(StopReason::RecoveryExhausted)
    );
    assert_eq!(model.requests().len(), calls);
    assert_eq!(next.loop_diagnostics.unwrap().counters.failures, 1);
}

#[tokio::test]
async fn without_a_policy_a_final_answer_while_pending_is_pending_async() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("j1", "start_job", json!({})),
        ScriptedTurn::text("Done."),
    ]);
    let (tool, _settlers, _) = async_tool("start_job", Effect::Write, false);
    let agent = agent_on(&model).tool(tool).build().unwrap();
    let run = agent.run("Run.", RunOptions::default()).await.unwrap();
    assert_eq!(run.status, RunStatus::Stopped(StopReason::PendingAsync));
}

#[tokio::test]
async fn a_call_id_reused_by_a_later_execution_is_a_different_call() {
    // Providers may reuse call ids across responses; the identity includes
    // the execution, so the second job's result is not taken as a repeat.
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "start_job", json!({"n": 1})),
        ScriptedTurn::text("First started."),
        ScriptedTurn::tool_call("c1", "start_job", json!({"n": 2})),
        ScriptedTurn::text("Second started."),
        ScriptedTurn::text("Both done."),
    ]);
    let (tool, settlers, starts) = async_tool("start_job", Effect::Write, false);
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    agent.run("One.", RunOptions::default()).await.unwrap();
    settlers
        .lock()
        .unwrap()
        .pop()
        .unwrap()
        .settle(Ok(json!("one")));
    let second = agent.run("Two.", RunOptions::default()).await.unwrap();
    assert_eq!(second.status, RunStatus::Stopped(StopReason::PendingAsync));
    assert_eq!(starts.load(Ordering::SeqCst), 2);
    settlers
        .lock()
        .unwrap()
        .pop()
        .unwrap()
        .settle(Ok(json!("two")));
    let done = agent
        .continue_with_async_results(RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(done.loop_diagnostics.unwrap().counters.observations, 1);
    let texts = user_texts(model.requests().last().unwrap());
    assert_eq!(
        texts.last().unwrap(),
        "[async result] start_job (call c1): two"
    );
}

#[tokio::test]
async fn a_continuation_keeps_the_previous_budget() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("j1", "start_job", json!({})),
        ScriptedTurn::text("Started."),
        ScriptedTurn::text("unreachable"),
    ]);
    let (tool, settlers, _) = async_tool("start_job", Effect::Write, false);
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let budget = verdict_agent::CallBudget::new(2);
    let first = agent
        .run("Run.", RunOptions::default().with_budget(budget.clone()))
        .await
        .unwrap();
    assert_eq!(first.status, RunStatus::Stopped(StopReason::PendingAsync));
    settlers
        .lock()
        .unwrap()
        .pop()
        .unwrap()
        .settle(Ok(json!("ok")));
    // No budget given: the continuation spends the same allowance.
    let result = agent
        .continue_with_async_results(RunOptions::default())
        .await;
    assert_eq!(
        result.map_err(verdict_agent::RunError::into_error),
        Err(verdict_agent::AgentError::BudgetExhausted { max_calls: 2 })
    );
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn stream_reports_an_imported_result_as_a_settled_call() {
    use futures::StreamExt;
    use verdict_agent::AgentEvent;
    let model = scripted(vec![
        ScriptedTurn::tool_call("j1", "start_job", json!({})),
        ScriptedTurn::text("Started."),
        ScriptedTurn::text("Done."),
    ]);
    let (tool, settlers, _) = async_tool("start_job", Effect::Write, false);
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    agent.run("Run.", RunOptions::default()).await.unwrap();
    settlers
        .lock()
        .unwrap()
        .pop()
        .unwrap()
        .settle(Ok(json!("ok")));
    let events: Vec<AgentEvent> = agent.stream("Next.", RunOptions::default()).collect().await;
    let delivered: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallSettled(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(delivered.len(), 1);
    assert_eq!(delivered[0].call.id, "j1");
    assert!(!delivered[0].pending);
    assert_eq!(
        delivered[0].outcome,
        ToolOutcome::Succeeded { value: json!("ok") }
    );
}

#[tokio::test]
async fn a_legacy_delivery_of_an_awaited_call_is_imported_once() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("j1", "start_job", json!({})),
        ScriptedTurn::text("Started."),
        ScriptedTurn::text("Done."),
    ]);
    let (tool, settlers, _) = async_tool("start_job", Effect::Write, false);
    let (checkers, _) = needs_success("start_job");
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(LoopPolicy::default())
        .checkers(checkers)
        .build()
        .unwrap();
    let first = agent.run("Run.", RunOptions::default()).await.unwrap();
    assert_eq!(first.status, RunStatus::Stopped(StopReason::PendingAsync));
    // A legacy result (no origin execution, no admission metadata) for the
    // call still awaited is that call's result...
    let mut legacy = delivery("j1", "start_job");
    legacy.outcome = Some(ToolOutcome::Succeeded { value: json!("ok") });
    assert!(agent.deliver_async_result(legacy.clone()));
    assert!(agent.pending_async_calls().is_empty(), "no longer awaited");
    // ...so neither its handle settling later nor a repeat imports it again.
    settlers
        .lock()
        .unwrap()
        .pop()
        .unwrap()
        .settle(Ok(json!("ok")));
    assert!(!agent.deliver_async_result(legacy));
    let done = agent
        .continue_with_async_results(RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    let diag = done.loop_diagnostics.unwrap();
    assert_eq!(diag.counters.observations, 1);
    let imported = agent
        .conversation()
        .iter()
        .filter(|m| matches!(m, verdict_providers::Message::User { text } if text.starts_with("[async result]")))
        .count();
    assert_eq!(imported, 1);
}

/// A legacy re-delivery (no origin execution, no admission metadata) of a
/// call whose handle's result was already imported, with `outcome`:
/// returns the next run's response and how many `[async result]` messages
/// the conversation holds.
async fn legacy_redelivery_after_import(
    outcome: Option<ToolOutcome>,
) -> (bool, verdict_agent::AgentResponse, usize) {
    let model = scripted(vec![
        ScriptedTurn::tool_call("j1", "start_job", json!({})),
        ScriptedTurn::text("Started."),
        ScriptedTurn::text("Done."),
        ScriptedTurn::text("Nothing more."),
    ]);
    let (tool, settlers, _) = async_tool("start_job", Effect::Write, false);
    let policy = LoopPolicy {
        max_recovery_attempts: 0,
        ..LoopPolicy::default()
    };
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(policy)
        .build()
        .unwrap();
    let first = agent.run("Run.", RunOptions::default()).await.unwrap();
    assert_eq!(first.status, RunStatus::Stopped(StopReason::PendingAsync));
    // The handle settles and the continuation imports its result...
    settlers
        .lock()
        .unwrap()
        .pop()
        .unwrap()
        .settle(Ok(json!("ok")));
    let done = agent
        .continue_with_async_results(RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(done.loop_diagnostics.unwrap().counters.observations, 1);
    // ...then a legacy delivery of the same call arrives.
    let mut legacy = delivery("j1", "start_job");
    legacy.outcome = outcome;
    let accepted = agent.deliver_async_result(legacy);
    let next = agent
        .run("Anything else?", RunOptions::default())
        .await
        .unwrap();
    let imported = agent
        .conversation()
        .iter()
        .filter(|m| matches!(m, verdict_providers::Message::User { text } if text.starts_with("[async result]")))
        .count();
    (accepted, next, imported)
}

#[tokio::test]
async fn a_legacy_redelivery_without_outcome_after_the_import_is_ignored() {
    let (accepted, next, imported) = legacy_redelivery_after_import(None).await;
    assert_eq!(next.status, RunStatus::Completed, "not uncertain_effect");
    assert!(!accepted, "a repeat of an imported call");
    assert_eq!(next.loop_diagnostics.unwrap().counters.observations, 0);
    assert_eq!(imported, 1);
}

#[tokio::test]
async fn a_legacy_redelivered_failure_after_the_import_spends_no_recovery() {
    let failure = ToolOutcome::Failed {
        kind: verdict_policy::FailureKind::Execution,
        error: "job crashed".into(),
    };
    let (accepted, next, imported) = legacy_redelivery_after_import(Some(failure)).await;
    assert_eq!(next.status, RunStatus::Completed, "not recovery_exhausted");
    assert!(!accepted, "a repeat of an imported call");
    let diag = next.loop_diagnostics.unwrap();
    assert_eq!(diag.counters.failures, 0);
    assert_eq!(diag.recovery_attempts_used, 0);
    assert_eq!(imported, 1);
}
