//! Scenario tests of the managed loop with the in-process scripted model:
//! one per outcome of the spec's "Bounds and recovery" and "Diagnostics
//! and lifecycle" sections.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::{
    agent_on, any_object, assert_protocol_whole, calls, completion, counting_tool, scripted,
    user_texts,
};
use serde_json::json;
use verdict_agent::{
    Checkers, PermissionPolicy, PermissionRule, RunOptions, RunStatus, Tool, ToolError, ToolOutcome,
};
use verdict_policy::{
    CheckerError, CheckerErrorKind, Effect, FailureKind, LoopPolicy, OutcomeStatus, Phase,
    StopReason, Verdict, WorkflowStatus,
};
use verdict_providers::Message;
use verdict_providers::fake::ScriptedTurn;

const LABEL: &str = "[host feedback]";

/// The spec's feedback agent: premature prose is rejected by the completion
/// checker with feedback, one failed read is recovered, the artifact is
/// verified, and the workflow completes.
#[tokio::test]
async fn feedback_agent_story_completes_after_two_recoveries() {
    let model = scripted(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call("r1", "read_artifact", json!({})),
        ScriptedTurn::tool_call("r2", "read_artifact", json!({})),
        ScriptedTurn::text("Verified: A42 is ready."),
    ]);
    let verified = Arc::new(AtomicBool::new(false));
    let attempts = Arc::new(AtomicUsize::new(0));
    let (flag, tries) = (verified.clone(), attempts.clone());
    let read = Tool::new(
        "read_artifact",
        json!({"type": "object", "additionalProperties": false}),
        move |_, _| {
            let first = tries.fetch_add(1, Ordering::SeqCst) == 0;
            let flag = flag.clone();
            async move {
                if first {
                    return Err(ToolError::new("artifact store unavailable"));
                }
                flag.store(true, Ordering::SeqCst);
                Ok(json!({"id": "A42", "ready": true}))
            }
        },
    )
    .unwrap()
    .with_effect(Effect::Read);
    let seen = verified.clone();
    let policy = LoopPolicy {
        max_recovery_attempts: 2,
        ..LoopPolicy::default()
    };
    let checkers = Checkers::new().with_completion(completion(move |packet| {
        let read_ok = packet.observations.iter().any(|o| {
            o.tool_name == "read_artifact"
                && o.outcome.as_ref().map(|x| x.status) == Some(OutcomeStatus::Succeeded)
        });
        Ok(Verdict::new(
            seen.load(Ordering::SeqCst) && read_ok,
            None,
            Some("Read and verify artifact A42 before finishing.".into()),
        )
        .unwrap())
    }));
    let agent = agent_on(&model)
        .max_iterations(6)
        .tool(read)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();

    let response = agent
        .run("Verify artifact A42.", RunOptions::default())
        .await
        .unwrap();

    assert_eq!(response.status, RunStatus::Completed);
    assert_eq!(response.output_text, "Verified: A42 is ready.");
    let diag = response.loop_diagnostics.clone().unwrap();
    assert_eq!(diag.status, Some(WorkflowStatus::Completed));
    assert_eq!(diag.reason, Some(StopReason::Completed));
    assert_eq!(diag.phase, Phase::Complete);
    assert_eq!(diag.recovery_attempts_used, 2);
    assert_eq!(diag.last_verdict.as_ref().map(|v| v.complete), Some(true));
    assert_eq!(agent.loop_diagnostics(), Some(diag));

    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    // The user's input is never replaced; feedback is appended after it.
    for request in &requests {
        assert_eq!(
            request.messages.first(),
            Some(&Message::user("Verify artifact A42."))
        );
    }
    let second = user_texts(&requests[1]);
    assert_eq!(second.len(), 2);
    assert!(second[1].starts_with(LABEL));
    assert!(second[1].contains("Read and verify artifact A42"));
    // The failed read's feedback comes after its tool result.
    let third = &requests[2].messages;
    assert!(
        matches!(&third[third.len() - 2], Message::ToolResult(r) if r.call_id == "r1" && r.is_error)
    );
    assert!(matches!(third.last(), Some(Message::User { text }) if text.starts_with(LABEL)));
    // Both calls ran, so both carry an execution receipt: the first failed
    // inside the tool itself (an execution failure, which ran), the second
    // succeeded. Only a call that never ran (a permission or argument
    // failure, a skip) has none.
    assert_eq!(response.tool_calls.len(), 2);
    assert!(matches!(
        response.tool_calls[0].outcome,
        ToolOutcome::Failed {
            kind: FailureKind::Execution,
            ..
        }
    ));
    assert!(matches!(
        response.tool_calls[1].outcome,
        ToolOutcome::Succeeded { .. }
    ));
    assert!(response.tool_calls.iter().all(|c| c.receipt.is_some()));
    assert_protocol_whole(&agent.conversation());
}

#[tokio::test]
async fn repeated_identical_read_gets_feedback_then_stops() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("a", "status", json!({"job": 7})),
        ScriptedTurn::tool_call("b", "status", json!({"job": 7})),
        ScriptedTurn::tool_call("c", "status", json!({"job": 7})),
        ScriptedTurn::text("never reached"),
    ]);
    let (tool, runs) = counting_tool("status", Effect::Read, json!({"state": "pending"}));
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();

    let response = agent
        .run("Wait for job 7.", RunOptions::default())
        .await
        .unwrap();

    assert_eq!(
        response.status,
        RunStatus::Stopped(StopReason::RepeatedRead)
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2, "the third read never ran");
    let requests = model.requests();
    assert_eq!(requests.len(), 3, "no model call after the stop");
    assert!(user_texts(&requests[2]).last().unwrap().starts_with(LABEL));
    // The refused call is still answered: the protocol stays whole.
    let conversation = agent.conversation();
    assert_protocol_whole(&conversation);
    assert!(matches!(conversation.last(), Some(Message::ToolResult(r)) if r.call_id == "c"));
    assert_eq!(response.tool_calls[2].receipt, None);
}

#[tokio::test]
async fn changed_read_argument_proceeds_after_feedback() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("a", "status", json!({"job": 7})),
        ScriptedTurn::tool_call("b", "status", json!({"job": 7})),
        ScriptedTurn::tool_call("c", "status", json!({"job": 8})),
        ScriptedTurn::text("done"),
    ]);
    let (tool, runs) = counting_tool("status", Effect::Read, json!({"state": "pending"}));
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let response = agent
        .run("Check jobs.", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(response.status, RunStatus::Completed);
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    assert_eq!(
        response.loop_diagnostics.unwrap().reason,
        Some(StopReason::AnswerReturned)
    );
}

#[tokio::test]
async fn duplicate_write_in_one_response_runs_once() {
    let model = scripted(vec![
        calls(&[
            ("w1", "send", json!({"to": "x", "body": "hi"})),
            ("w2", "send", json!({"body": "hi", "to": "x"})),
        ]),
        ScriptedTurn::text("sent"),
    ]);
    let (tool, runs) = counting_tool("send", Effect::Write, json!({"sent": true}));
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();

    let response = agent
        .run("Send hi to x.", RunOptions::default())
        .await
        .unwrap();

    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(response.status, RunStatus::Completed);
    let skipped = &response.tool_calls[1];
    assert_eq!(skipped.receipt, None);
    assert!(
        matches!(&skipped.outcome, ToolOutcome::NotStarted { message } if message.starts_with(LABEL))
    );
    let diag = response.loop_diagnostics.unwrap();
    assert_eq!(diag.counters.skipped_calls, 1);
    assert_eq!(diag.recovery_attempts_used, 1);
}

#[tokio::test]
async fn duplicate_write_without_policy_runs_twice() {
    let model = scripted(vec![
        calls(&[
            ("w1", "send", json!({"to": "x"})),
            ("w2", "send", json!({"to": "x"})),
        ]),
        ScriptedTurn::text("sent"),
    ]);
    let (tool, runs) = counting_tool("send", Effect::Write, json!({"sent": true}));
    let agent = agent_on(&model).tool(tool).build().unwrap();
    let response = agent.run("Send.", RunOptions::default()).await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(response.loop_diagnostics, None);
}

#[tokio::test]
async fn application_failure_data_is_a_successful_execution() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("s", "submit", json!({"form": 1})),
        ScriptedTurn::text("submitted"),
    ]);
    let (tool, _) = counting_tool("submit", Effect::Write, json!({"success": false}));
    // With no recovery allowed, a counted failure would stop the run.
    let policy = LoopPolicy {
        max_recovery_attempts: 0,
        ..LoopPolicy::default()
    };
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(policy)
        .build()
        .unwrap();
    let response = agent.run("Submit.", RunOptions::default()).await.unwrap();
    assert_eq!(response.status, RunStatus::Completed);
    let diag = response.loop_diagnostics.unwrap();
    assert_eq!(diag.counters.failures, 0);
    assert!(matches!(
        response.tool_calls[0].outcome,
        ToolOutcome::Succeeded { .. }
    ));
    assert!(response.tool_calls[0].receipt.is_some());
}

#[tokio::test]
async fn permission_denial_counts_toward_recovery_without_a_receipt() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("d1", "delete", json!({"path": "a"})),
        ScriptedTurn::tool_call("d2", "delete", json!({"path": "b"})),
        ScriptedTurn::text("never reached"),
    ]);
    let (tool, runs) = counting_tool("delete", Effect::Write, json!({}));
    let policy = LoopPolicy {
        max_recovery_attempts: 1,
        ..LoopPolicy::default()
    };
    let agent = agent_on(&model)
        .tool(tool)
        .permissions(PermissionPolicy::default().with_rule("delete", PermissionRule::Deny))
        .loop_policy(policy)
        .build()
        .unwrap();

    let response = agent.run("Clean up.", RunOptions::default()).await.unwrap();

    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(
        response.status,
        RunStatus::Stopped(StopReason::RecoveryExhausted)
    );
    for call in &response.tool_calls {
        assert_eq!(call.receipt, None);
        assert!(matches!(
            call.outcome,
            ToolOutcome::Failed {
                kind: FailureKind::Permission,
                ..
            }
        ));
    }
    let diag = response.loop_diagnostics.unwrap();
    assert_eq!(diag.counters.failures, 2);
    assert_eq!(diag.recovery_attempts_used, 1);
    assert_eq!(diag.phase, Phase::Stopped);
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn recovery_exhausted_after_false_verdicts_needs_input() {
    let model = scripted(vec![
        ScriptedTurn::text("done"),
        ScriptedTurn::text("really done"),
        ScriptedTurn::text("truly done"),
    ]);
    let policy = LoopPolicy {
        max_recovery_attempts: 1,
        ..LoopPolicy::default()
    };
    let checkers = Checkers::new().with_completion(completion(|_| {
        Ok(Verdict::new(
            false,
            Some("no artifact".into()),
            Some("Produce the artifact first.".into()),
        )
        .unwrap())
    }));
    let agent = agent_on(&model)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let response = agent.run("Make it.", RunOptions::default()).await.unwrap();
    assert_eq!(
        response.status,
        RunStatus::Stopped(StopReason::RecoveryExhausted)
    );
    let diag = response.loop_diagnostics.unwrap();
    assert_eq!(diag.phase, Phase::InputNeeded);
    assert_eq!(diag.status, None);
    assert_eq!(diag.last_verdict.map(|v| v.complete), Some(false));
    assert_eq!(model.requests().len(), 2);
    assert_eq!(response.output_text, "really done");
}

#[tokio::test]
async fn iteration_bound_stops_without_an_extra_model_call() {
    for policy in [Some(LoopPolicy::default()), None] {
        let model = scripted(vec![
            ScriptedTurn::tool_call("a", "step", json!({"n": 1})),
            ScriptedTurn::tool_call("b", "step", json!({"n": 2})),
            ScriptedTurn::tool_call("c", "step", json!({"n": 3})),
            ScriptedTurn::text("wrap-up that must not be requested"),
        ]);
        let (tool, runs) = counting_tool("step", Effect::Read, json!({"ok": true}));
        let mut builder = agent_on(&model).tool(tool).max_iterations(2);
        if let Some(policy) = policy.clone() {
            builder = builder.loop_policy(policy);
        }
        let agent = builder.build().unwrap();
        let response = agent.run("Step.", RunOptions::default()).await.unwrap();
        assert_eq!(response.status, RunStatus::MaxIterations);
        assert_eq!(model.requests().len(), 2);
        assert_eq!(model.remaining_turns(), 2);
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        assert_eq!(response.iterations, 2);
        if policy.is_some() {
            let diag = response.loop_diagnostics.unwrap();
            assert_eq!(diag.reason, Some(StopReason::MaxIterations));
        }
        // The last batch's results are committed.
        assert_protocol_whole(&agent.conversation());
        assert!(
            matches!(agent.conversation().last(), Some(Message::ToolResult(r)) if r.call_id == "b")
        );
    }
}

#[tokio::test]
async fn checker_error_stops_sanitized_and_the_agent_serves_the_next_run() {
    let model = scripted(vec![
        ScriptedTurn::text("done"),
        ScriptedTurn::text("done again"),
    ]);
    let calls_seen = Arc::new(AtomicUsize::new(0));
    let seen = calls_seen.clone();
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |_| {
        if seen.fetch_add(1, Ordering::SeqCst) == 0 {
            Err(CheckerError::Failed("db password=hunter2 rejected".into()))
        } else {
            Ok(Verdict::bare(true))
        }
    }));
    let agent = agent_on(&model)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();

    let first = agent.run("Finish.", RunOptions::default()).await.unwrap();
    assert_eq!(first.status, RunStatus::Stopped(StopReason::CheckerError));
    let diag = first.loop_diagnostics.unwrap();
    assert_eq!(diag.checker_error, Some(CheckerErrorKind::Failed));
    assert!(!diag.to_json().contains("hunter2"));

    let second = agent.run("Finish.", RunOptions::default()).await.unwrap();
    assert_eq!(second.status, RunStatus::Completed);
    let next = second.loop_diagnostics.unwrap();
    assert_ne!(next.execution_id, diag.execution_id);
    assert_eq!(next.counters.completion_checks, 1, "a fresh execution");
}

#[tokio::test]
async fn checker_timeout_is_a_checker_error() {
    let model = scripted(vec![ScriptedTurn::text("done")]);
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(|_| {
        std::thread::sleep(Duration::from_millis(500));
        Ok(Verdict::bare(true))
    }));
    let agent = agent_on(&model)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let options = RunOptions::default().with_checker_timeout(Duration::from_millis(20));
    let response = agent.run("Finish.", options).await.unwrap();
    assert_eq!(
        response.status,
        RunStatus::Stopped(StopReason::CheckerError)
    );
    assert_eq!(
        response.loop_diagnostics.unwrap().checker_error,
        Some(CheckerErrorKind::Timeout)
    );
}

#[tokio::test]
async fn execution_failures_exhaust_recovery_with_their_reason() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("a", "fetch", json!({"n": 1})),
        ScriptedTurn::tool_call("b", "fetch", json!({"n": 2})),
        ScriptedTurn::tool_call("c", "fetch", json!({"n": 3})),
        ScriptedTurn::text("never"),
    ]);
    let fetch = Tool::new("fetch", any_object(), |_, _| async {
        Err::<serde_json::Value, _>(ToolError::new("upstream 503"))
    })
    .unwrap()
    .with_effect(Effect::Read);
    let agent = agent_on(&model)
        .tool(fetch)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let response = agent.run("Fetch.", RunOptions::default()).await.unwrap();
    assert_eq!(
        response.status,
        RunStatus::Stopped(StopReason::RecoveryExhausted)
    );
    let diag = response.loop_diagnostics.unwrap();
    assert_eq!(diag.recovery_attempts_used, 2);
    assert_eq!(diag.counters.failures, 3);
    assert_eq!(model.requests().len(), 3);
    assert_protocol_whole(&agent.conversation());
}

#[tokio::test]
async fn unchanged_progress_key_intervenes() {
    for allowed in [1, 0] {
        let model = scripted(vec![
            ScriptedTurn::tool_call("a", "step", json!({"n": 1})),
            ScriptedTurn::tool_call("b", "step", json!({"n": 2})),
            ScriptedTurn::tool_call("c", "step", json!({"n": 3})),
            ScriptedTurn::text("finished"),
        ]);
        let (tool, _) = counting_tool("step", Effect::Read, json!({"ok": true}));
        let samples = Arc::new(AtomicUsize::new(0));
        let counted = samples.clone();
        let policy = LoopPolicy {
            max_recovery_attempts: allowed,
            ..LoopPolicy::default()
        };
        let checkers = Checkers::new().with_progress(Arc::new(verdict_agent::ProgressFn::new(
            move |_: &verdict_policy::CheckPacket, _: &_| {
                counted.fetch_add(1, Ordering::SeqCst);
                Ok("revision-1".to_owned())
            },
        )));
        let agent = agent_on(&model)
            .tool(tool)
            .loop_policy(policy)
            .checkers(checkers)
            .build()
            .unwrap();
        let response = agent
            .run("Make progress.", RunOptions::default())
            .await
            .unwrap();
        // Sample 1 sets the key; samples 2 and 3 are unchanged (limit 2).
        assert_eq!(samples.load(Ordering::SeqCst), 3);
        let diag = response.loop_diagnostics.unwrap();
        assert_eq!(
            diag.last_trigger,
            Some(verdict_policy::RecoveryTrigger::UnchangedProgress)
        );
        let requests = model.requests();
        if allowed == 1 {
            assert_eq!(requests.len(), 4);
            assert!(
                user_texts(&requests[3])
                    .last()
                    .unwrap()
                    .contains("progress key")
            );
            assert_eq!(response.status, RunStatus::Completed);
        } else {
            assert_eq!(requests.len(), 3);
            assert_eq!(
                response.status,
                RunStatus::Stopped(StopReason::RecoveryExhausted)
            );
        }
    }
}

#[tokio::test]
async fn reaching_a_tracking_bound_stops_before_the_next_dispatch() {
    let model = scripted(vec![
        calls(&[
            ("a", "lookup", json!({"q": 1})),
            ("b", "lookup", json!({"q": 2})),
            ("c", "lookup", json!({"q": 3})),
        ]),
        ScriptedTurn::text("never"),
    ]);
    let (tool, runs) = counting_tool("lookup", Effect::Read, json!({"hit": true}));
    let policy = LoopPolicy {
        max_admissions: 2,
        ..LoopPolicy::default()
    };
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(policy)
        .build()
        .unwrap();
    let response = agent.run("Look up.", RunOptions::default()).await.unwrap();
    assert_eq!(
        response.status,
        RunStatus::Stopped(StopReason::TrackingBound)
    );
    // As one at a time: the two admitted reads run, the third is refused
    // before dispatch and answered as not started.
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    let outcomes: Vec<bool> = response
        .tool_calls
        .iter()
        .map(|c| matches!(c.outcome, ToolOutcome::Succeeded { .. }))
        .collect();
    assert_eq!(outcomes, [true, true, false]);
    assert!(matches!(
        response.tool_calls[2].outcome,
        ToolOutcome::NotStarted { .. }
    ));
    assert_eq!(model.requests().len(), 1);
    assert_protocol_whole(&agent.conversation());
}

// Agents and their runs cross threads (a server spawns runs on a
// multi-thread runtime): a compile-time fact, asserted as one. The closure
// is type-checked, never called.
const _: fn() = || {
    fn send_sync<T: Send + Sync + 'static>() {}
    fn send<T: Send>(_: &T) {}
    send_sync::<verdict_agent::Agent>();
    fn send_static<T: Send + 'static>() {}
    send_static::<verdict_agent::AgentStream>();
    let _ = |agent: &verdict_agent::Agent| {
        send(&agent.run("x", RunOptions::default()));
        send(&agent.continue_with_async_results(RunOptions::default()));
    };
};

#[tokio::test]
async fn identical_reads_in_one_response_decide_as_one_at_a_time() {
    // Three identical reads in one response: the second repeats the first
    // (feedback), and the third is a request for a flagged read (stop) —
    // exactly as if they had been sent one per response.
    let model = scripted(vec![
        calls(&[
            ("a", "status", json!({"job": 1})),
            ("b", "status", json!({"job": 1})),
            ("c", "status", json!({"job": 1})),
        ]),
        ScriptedTurn::text("never"),
    ]);
    let (tool, runs) = counting_tool("status", Effect::Read, json!({"state": "pending"}));
    let agent = agent_on(&model)
        .tool(tool)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let response = agent.run("Poll.", RunOptions::default()).await.unwrap();
    assert_eq!(
        response.status,
        RunStatus::Stopped(StopReason::RepeatedRead)
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert!(matches!(
        response.tool_calls[2].outcome,
        ToolOutcome::NotStarted { .. }
    ));
}
