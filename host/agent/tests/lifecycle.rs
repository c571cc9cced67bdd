//! Lifecycle: call budget, cancellation, the execution lease, the
//! conversation, and the stale-view guard.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::{agent_on, any_object, assert_protocol_whole, completion, counting_tool, scripted};
use serde_json::json;
use verdict_agent::{
    AgentError, BuildError, CallBudget, Checkers, CompletionFn, HostContext, ProgressFn,
    RunOptions, RunStatus, Tool, ToolError,
};
use verdict_policy::{
    CancelHandle, CheckerErrorKind, Effect, FailureKind, HostScope, LoopPolicy, StopReason, Verdict,
};
use verdict_providers::fake::{Fault, Script, ScriptedModel, ScriptedTurn};
use verdict_providers::{Message, Model, RetryPolicy};

#[tokio::test]
async fn call_budget_counts_every_attempt_including_retries() {
    let model = Arc::new(
        ScriptedModel::new(Script::new(vec![
            ScriptedTurn::fault(Fault::Status {
                status: 500,
                message: "overloaded".into(),
                retry_after_secs: None,
            }),
            ScriptedTurn::tool_call("a", "step", json!({"n": 1})),
            ScriptedTurn::tool_call("b", "step", json!({"n": 2})),
            ScriptedTurn::text("done"),
        ]))
        .with_retry(RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
        }),
    );
    let (tool, runs) = counting_tool("step", Effect::Read, json!({}));
    let dyn_model: Arc<dyn Model> = model.clone();
    let agent = verdict_agent::Agent::builder()
        .model(dyn_model)
        .tool(tool)
        .build()
        .unwrap();
    let budget = CallBudget::new(3);
    let error = agent
        .run("go", RunOptions::default().with_budget(budget.clone()))
        .await
        .unwrap_err();
    // Attempt 1 failed with 500, attempt 2 (the retry) answered, attempt 3
    // answered; the 4th attempt is refused.
    assert_eq!(error, AgentError::BudgetExhausted { max_calls: 3 });
    assert_eq!(budget.used(), 3);
    assert!(budget.is_spent());
    assert_eq!(model.requests().len(), 3);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    // Settled results are committed even though the run failed.
    assert_protocol_whole(&agent.conversation());
    assert_eq!(agent.conversation().len(), 5);
}

#[tokio::test]
async fn cancellation_mid_tool_commits_the_result_and_marks_the_write_uncertain() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("w", "deploy", json!({"env": "prod"})),
        ScriptedTurn::text("never"),
    ]);
    let cancel = CancelHandle::new();
    let trigger = cancel.clone();
    let deploy = Tool::new("deploy", any_object(), move |_, ctx| {
        let trigger = trigger.clone();
        async move {
            trigger.cancel();
            ctx.cancel.cancelled().await;
            Err::<serde_json::Value, _>(ToolError::new("interrupted"))
        }
    })
    .unwrap()
    .with_effect(Effect::Write);
    let agent = agent_on(&model)
        .tool(deploy)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let error = agent
        .run("Deploy.", RunOptions::default().with_cancel(cancel))
        .await
        .unwrap_err();
    assert_eq!(error, AgentError::Cancelled);
    assert_eq!(model.requests().len(), 1);
    let conversation = agent.conversation();
    assert_protocol_whole(&conversation);
    assert!(matches!(conversation.last(), Some(Message::ToolResult(r)) if r.is_error));
    let diag = agent.loop_diagnostics().unwrap();
    assert_eq!(diag.reason, Some(StopReason::UncertainEffect));
    // The lease is released: the agent runs again.
    let again = agent.run("Status?", RunOptions::default()).await;
    assert!(again.is_ok());
}

#[tokio::test]
async fn overlapping_runs_get_a_busy_error() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("s", "slow", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let started = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Notify::new());
    let (s, r) = (started.clone(), release.clone());
    let slow = Tool::new("slow", any_object(), move |_, _| {
        let (s, r) = (s.clone(), r.clone());
        async move {
            s.notify_one();
            r.notified().await;
            Ok::<_, ToolError>(json!({}))
        }
    })
    .unwrap()
    .with_effect(Effect::Read);
    let agent = agent_on(&model).tool(slow).build().unwrap();
    let first = tokio::spawn({
        let agent = agent.clone();
        async move { agent.run("one", RunOptions::default()).await }
    });
    tokio::time::timeout(Duration::from_secs(5), started.notified())
        .await
        .unwrap();
    let overlap = agent.run("two", RunOptions::default()).await;
    assert_eq!(overlap.unwrap_err(), AgentError::Busy);
    release.notify_one();
    let done = tokio::time::timeout(Duration::from_secs(5), first)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.unwrap().status, RunStatus::Completed);
}

#[tokio::test]
async fn conversation_round_trips_through_json_without_installing_a_policy() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("a", "lookup", json!({"q": 1})),
        ScriptedTurn::text("found"),
        ScriptedTurn::text("second answer"),
    ]);
    let (tool, _) = counting_tool("lookup", Effect::Read, json!({"v": 1}));
    let agent = agent_on(&model).tool(tool).build().unwrap();
    agent.run("find", RunOptions::default()).await.unwrap();
    let saved = agent.save_conversation();
    assert!(!saved.contains("policy"));

    let fresh_model = scripted(vec![ScriptedTurn::text("second answer")]);
    let fresh = agent_on(&fresh_model).build().unwrap();
    fresh.load_conversation(&saved).unwrap();
    assert_eq!(fresh.conversation(), agent.conversation());
    let response = fresh.run("again", RunOptions::default()).await.unwrap();
    assert_eq!(response.loop_diagnostics, None);
    assert_eq!(fresh.loop_diagnostics(), None);
    // The loaded history is what the next request carries.
    let request = &fresh_model.requests()[0];
    assert_eq!(request.messages.len(), 5);
    assert_eq!(request.messages[4], Message::user("again"));
}

/// A host whose scope changes while a check is in flight.
struct ShiftingHost {
    reads: AtomicU64,
    generation: AtomicU64,
}

impl HostContext for ShiftingHost {
    fn scope(&self) -> HostScope {
        let n = self.reads.fetch_add(1, Ordering::SeqCst);
        HostScope {
            account: "acct".into(),
            // Changes between the first check's start and its verdict.
            session: if n == 0 { "s1".into() } else { "s2".into() },
            ..HostScope::default()
        }
    }

    fn task_generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }
}

#[tokio::test]
async fn a_scope_change_during_the_check_restarts_it_under_the_new_scope() {
    let model = scripted(vec![ScriptedTurn::text("done")]);
    let checks = Arc::new(AtomicU64::new(0));
    let counted = checks.clone();
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        Ok(Verdict::bare(true))
    }));
    let host = Arc::new(ShiftingHost {
        reads: AtomicU64::new(0),
        generation: AtomicU64::new(0),
    });
    let agent = agent_on(&model)
        .host(host)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let response = agent.run("Finish.", RunOptions::default()).await.unwrap();
    assert_eq!(response.status, RunStatus::Completed);
    assert_eq!(
        checks.load(Ordering::SeqCst),
        2,
        "checked again under the new scope"
    );
    assert_eq!(
        response.loop_diagnostics.unwrap().counters.scope_restarts,
        1
    );
}

#[tokio::test]
async fn a_task_generation_change_during_the_check_stops_with_state_changed() {
    let model = scripted(vec![ScriptedTurn::text("done")]);
    let host = Arc::new(ShiftingHost {
        reads: AtomicU64::new(1),
        generation: AtomicU64::new(0),
    });
    let bump = host.clone();
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |_| {
        bump.generation.fetch_add(1, Ordering::SeqCst);
        Ok(Verdict::bare(true))
    }));
    let agent = agent_on(&model)
        .host(host)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let response = agent.run("Finish.", RunOptions::default()).await.unwrap();
    assert_eq!(
        response.status,
        RunStatus::Stopped(StopReason::StateChanged)
    );
    let diag = response.loop_diagnostics.unwrap();
    assert_eq!(diag.status, None);
    assert_eq!(diag.checker_error, None::<CheckerErrorKind>);
}

#[tokio::test]
async fn tool_deadline_on_a_write_is_an_uncertain_effect() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("w", "upload", json!({})),
        ScriptedTurn::text("never"),
    ]);
    let upload = Tool::new("upload", any_object(), |_, _| async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok::<_, ToolError>(json!({}))
    })
    .unwrap()
    .with_effect(Effect::Write)
    .with_deadline(Duration::from_millis(20));
    let agent = agent_on(&model)
        .tool(upload)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let response = agent.run("Upload.", RunOptions::default()).await.unwrap();
    assert_eq!(
        response.status,
        RunStatus::Stopped(StopReason::UncertainEffect)
    );
    let call = &response.tool_calls[0];
    assert!(matches!(
        call.outcome,
        verdict_agent::ToolOutcome::Failed {
            kind: FailureKind::Timeout,
            ..
        }
    ));
    assert!(call.receipt.is_some(), "it started, so it has a receipt");
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn run_direct_makes_one_call_outside_the_policy() {
    let model = scripted(vec![
        ScriptedTurn::text("managed"),
        ScriptedTurn::text("direct"),
    ]);
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(|_| Ok(Verdict::bare(true))));
    let agent = agent_on(&model)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    agent.run("first", RunOptions::default()).await.unwrap();
    let managed = agent.loop_diagnostics().unwrap();
    let direct = agent
        .run_direct("second", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(direct.text.as_deref(), Some("direct"));
    // The direct call leaves the managed snapshot as it was.
    assert_eq!(agent.loop_diagnostics(), Some(managed));
    assert_eq!(agent.conversation().len(), 4);
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn the_conversation_cannot_be_replaced_during_an_execution() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("s", "slow", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let started = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Notify::new());
    let (s, r) = (started.clone(), release.clone());
    let slow = Tool::new("slow", any_object(), move |_, _| {
        let (s, r) = (s.clone(), r.clone());
        async move {
            s.notify_one();
            r.notified().await;
            Ok::<_, ToolError>(json!({}))
        }
    })
    .unwrap()
    .with_effect(Effect::Read);
    let agent = agent_on(&model).tool(slow).build().unwrap();
    let first = tokio::spawn({
        let agent = agent.clone();
        async move { agent.run("one", RunOptions::default()).await }
    });
    tokio::time::timeout(Duration::from_secs(5), started.notified())
        .await
        .unwrap();
    assert_eq!(agent.load_conversation("[]"), Err(AgentError::Busy));
    assert_eq!(agent.clear_conversation(), Err(AgentError::Busy));
    release.notify_one();
    tokio::time::timeout(Duration::from_secs(5), first)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(matches!(
        agent.load_conversation("{"),
        Err(AgentError::Conversation(_))
    ));
    assert_eq!(agent.clear_conversation(), Ok(()));
    assert!(agent.conversation().is_empty());
}

#[tokio::test]
async fn an_empty_answer_is_retried_once_as_a_separate_budgeted_call() {
    let empty = || ScriptedTurn::reply(verdict_providers::fake::Reply::default());
    let model = scripted(vec![empty(), ScriptedTurn::text("hello")]);
    let agent = agent_on(&model)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let budget = CallBudget::new(5);
    let response = agent
        .run("hi", RunOptions::default().with_budget(budget.clone()))
        .await
        .unwrap();
    assert_eq!(response.output_text, "hello");
    assert_eq!(response.iterations, 1);
    assert_eq!(budget.used(), 2);
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0], requests[1], "the same request is retried");
    assert_eq!(response.loop_diagnostics.unwrap().counters.iterations, 1);

    // The retry needs budget like any other attempt.
    let model = scripted(vec![empty(), ScriptedTurn::text("hello")]);
    let agent = agent_on(&model).build().unwrap();
    let error = agent
        .run("hi", RunOptions::default().with_budget(CallBudget::new(1)))
        .await
        .unwrap_err();
    assert_eq!(error, AgentError::BudgetExhausted { max_calls: 1 });

    // A second empty answer is the final (empty) answer.
    let model = scripted(vec![empty(), empty(), ScriptedTurn::text("unused")]);
    let agent = agent_on(&model).build().unwrap();
    let response = agent.run("hi", RunOptions::default()).await.unwrap();
    assert_eq!(response.status, RunStatus::Completed);
    assert_eq!(response.output_text, "");
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn loop_diagnostics_describe_the_active_execution_while_it_runs() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("a", "peek", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let slot: Arc<std::sync::OnceLock<verdict_agent::Agent>> = Arc::default();
    let seen = Arc::new(std::sync::Mutex::new(None));
    let (agent_slot, record) = (slot.clone(), seen.clone());
    let peek = Tool::new("peek", any_object(), move |_, _| {
        let snapshot = agent_slot.get().and_then(|a| a.loop_diagnostics());
        *record.lock().unwrap() = snapshot;
        async { Ok::<_, ToolError>(json!({})) }
    })
    .unwrap()
    .with_effect(Effect::Read);
    let agent = agent_on(&model)
        .tool(peek)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    slot.set(agent.clone()).unwrap();
    let response = agent.run("Peek.", RunOptions::default()).await.unwrap();
    let during = seen
        .lock()
        .unwrap()
        .clone()
        .expect("a snapshot during the run");
    assert_eq!(during.phase, verdict_policy::Phase::Running);
    assert_eq!(during.reason, None);
    assert_eq!(during.counters.admissions, 1);
    assert_eq!(
        during.counters.observations, 0,
        "taken before the call settled"
    );
    let after = response.loop_diagnostics.unwrap();
    assert_eq!(during.execution_id, after.execution_id);
    assert_eq!(after.counters.observations, 1);
}

#[tokio::test]
async fn stream_direct_holds_the_lease_until_dropped_and_commits_nothing() {
    use futures::StreamExt;
    let model = scripted(vec![
        ScriptedTurn::text("streamed direct"),
        ScriptedTurn::text("managed"),
    ]);
    let agent = agent_on(&model)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let mut stream = agent
        .stream_direct("hi", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(
        agent
            .run("overlap", RunOptions::default())
            .await
            .unwrap_err(),
        AgentError::Busy
    );
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        if let verdict_providers::StreamEvent::TextDelta(t) = event.unwrap() {
            text.push_str(&t);
        }
    }
    drop(stream);
    assert_eq!(text, "streamed direct");
    assert!(agent.conversation().is_empty());
    assert_eq!(agent.loop_diagnostics(), None);
    let response = agent.run("now", RunOptions::default()).await.unwrap();
    assert_eq!(response.output_text, "managed");
}

struct TaskHost;

impl HostContext for TaskHost {
    fn scope(&self) -> HostScope {
        HostScope::default()
    }

    fn task_state(&self) -> Option<verdict_policy::TaskStateSnapshot> {
        Some(verdict_policy::TaskStateSnapshot {
            host_scope: "tenant-a".into(),
            revision: 7,
            generation: 0,
            payload: json!({"artifact": "A42", "ready": true}),
        })
    }
}

#[tokio::test]
async fn checkers_receive_the_hosts_task_state_snapshot() {
    let model = scripted(vec![ScriptedTurn::text("done")]);
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(|packet| {
        let ready = packet
            .task_state
            .as_ref()
            .is_some_and(|s| s.revision == 7 && s.payload["ready"] == true);
        Ok(Verdict::new(ready, None, Some("no task state".into())).unwrap())
    }));
    let agent = agent_on(&model)
        .host(Arc::new(TaskHost))
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let response = agent.run("Finish.", RunOptions::default()).await.unwrap();
    assert_eq!(response.status, RunStatus::Completed);
}

#[tokio::test]
async fn a_run_policy_applies_to_that_execution_only() {
    // The agent's own policy (no allowlist) and checker (never complete);
    // the first run replaces both with edited ones, the second inherits
    // the agent's again.
    let model = scripted(vec![
        ScriptedTurn::tool_call("p1", "poll", json!({})),
        ScriptedTurn::tool_call("p2", "poll", json!({})),
        ScriptedTurn::tool_call("p3", "poll", json!({})),
        ScriptedTurn::text("first done"),
        ScriptedTurn::tool_call("q1", "poll", json!({})),
        ScriptedTurn::tool_call("q2", "poll", json!({})),
        ScriptedTurn::tool_call("q3", "poll", json!({})),
        ScriptedTurn::text("third done"),
    ]);
    let (poll, polls) = counting_tool("poll", Effect::Read, json!({"state": "pending"}));
    let agent_checks = Arc::new(AtomicU64::new(0));
    let counted = agent_checks.clone();
    let agent = agent_on(&model)
        .tool(poll)
        .loop_policy(LoopPolicy::default())
        .checkers(Checkers::new().with_completion(completion(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(Verdict::new(false, None, Some("not yet".into())).unwrap())
        })))
        .build()
        .unwrap();
    let mut edited = LoopPolicy::default();
    edited.read_allowlist.push("poll".into());
    edited.max_recovery_attempts = 0;
    let always = Checkers::new().with_completion(completion(|_| Ok(Verdict::bare(true))));
    let first = agent
        .run(
            "Poll.",
            RunOptions::default()
                .with_policy(edited)
                .with_checkers(always),
        )
        .await
        .unwrap();
    // The edited allowlist exempts the repeated polls; the edited checker
    // completes.
    assert_eq!(first.status, RunStatus::Completed);
    assert_eq!(polls.load(Ordering::SeqCst), 3);
    let first_diag = first.loop_diagnostics.unwrap();
    assert_eq!(first_diag.recovery_attempts_allowed, 0);
    assert_eq!(agent_checks.load(Ordering::SeqCst), 0);

    let second = agent
        .run("Poll again.", RunOptions::default())
        .await
        .unwrap();
    // The agent's policy again: no allowlist, so the third identical poll
    // is refused (after feedback on the second), and its recovery allowance.
    assert_eq!(second.status, RunStatus::Stopped(StopReason::RepeatedRead));
    assert_eq!(polls.load(Ordering::SeqCst), 5, "q3 never ran");
    let second_diag = second.loop_diagnostics.unwrap();
    assert_eq!(
        second_diag.recovery_attempts_allowed,
        LoopPolicy::default().max_recovery_attempts
    );
    assert_ne!(second_diag.execution_id, first_diag.execution_id);
    assert_eq!(model.requests().len(), 7);

    // And the agent's checker again, as soon as a run has a candidate to
    // check: it refuses, and with no recovery allowed the run needs input.
    let no_recovery = LoopPolicy {
        max_recovery_attempts: 0,
        ..LoopPolicy::default()
    };
    let third = agent
        .run("Finish.", RunOptions::default().with_policy(no_recovery))
        .await
        .unwrap();
    assert_eq!(agent_checks.load(Ordering::SeqCst), 1);
    assert_ne!(third.status, RunStatus::Completed);
    let third_diag = third.loop_diagnostics.unwrap();
    assert_eq!(third_diag.phase, verdict_policy::Phase::InputNeeded);
    assert_eq!(third_diag.status, None);
}

#[tokio::test]
async fn a_tool_cancelling_its_own_handle_leaves_the_run_alone() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("r", "peek", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let peek = Tool::new("peek", any_object(), |_, ctx| async move {
        // A child of the run's handle: cancelling it stops only this call's
        // own work.
        ctx.cancel.cancel();
        Ok(json!({"peeked": ctx.cancel.is_cancelled()}))
    })
    .unwrap()
    .with_effect(Effect::Read);
    let agent = agent_on(&model).tool(peek).build().unwrap();
    let cancel = CancelHandle::new();
    let response = agent
        .run("Peek.", RunOptions::default().with_cancel(cancel.clone()))
        .await
        .unwrap();
    assert_eq!(response.status, RunStatus::Completed);
    assert_eq!(response.output_text, "done");
    assert!(!cancel.is_cancelled());
}

#[test]
fn a_checker_without_a_policy_is_a_build_error() {
    let model = scripted(vec![ScriptedTurn::text("done")]);
    let checker = Arc::new(CompletionFn::new(|_, _| Ok(Verdict::bare(true))));
    let error = agent_on(&model).completion_checker(checker.clone()).build();
    assert_eq!(error.err(), Some(BuildError::CheckersWithoutPolicy));
    let progress = Arc::new(ProgressFn::new(|_, _| Ok("k".to_owned())));
    let error = agent_on(&model).progress_checker(progress).build();
    assert_eq!(error.err(), Some(BuildError::CheckersWithoutPolicy));
    // With a policy the same checker is used, so the agent builds.
    let built = agent_on(&model)
        .completion_checker(checker)
        .loop_policy(LoopPolicy::default())
        .build();
    assert!(built.is_ok());
}
