//! Recovery accounting across a feedback turn: one feedback turn is one
//! attempt, and feedback that was charged reaches the model, also when a
//! final candidate is judged between the trigger and the next turn (a
//! tool-induced stop after a failed call, an async failure imported just
//! before the completion check).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{agent_on, any_object, calls, completion, scripted, user_texts};
use futures::future::BoxFuture;
use serde_json::json;
use verdict_agent::{
    AsyncSettler, Checkers, PendingResult, RunOptions, RunStatus, Tool, ToolError, ToolReturn,
};
use verdict_policy::{Effect, LoopPolicy, OutcomeStatus, Phase, StopReason, Verdict};
use verdict_providers::fake::{ScriptedModel, ScriptedTurn};
use verdict_providers::{
    CallContext, EventStream, Model, ModelRequest, ModelResponse, ProviderError,
};

/// A policy allowing `attempts` recovery attempts.
fn attempts(attempts: u32) -> LoopPolicy {
    LoopPolicy {
        max_recovery_attempts: attempts,
        ..LoopPolicy::default()
    }
}

/// Complete once `tool` succeeded.
fn needs(tool: &'static str) -> Checkers {
    Checkers::new().with_completion(completion(move |packet| {
        let ok = packet.observations.iter().any(|o| {
            o.tool_name == tool
                && o.outcome.as_ref().map(|x| x.status) == Some(OutcomeStatus::Succeeded)
        });
        Ok(Verdict::new(ok, None, Some(format!("Get {tool} to succeed first."))).unwrap())
    }))
}

#[tokio::test]
async fn a_tool_induced_stop_after_a_failed_call_charges_one_attempt() {
    let model = scripted(vec![
        calls(&[("r1", "read_rows", json!({})), ("s1", "submit", json!({}))]),
        ScriptedTurn::tool_call("r2", "read_rows", json!({"again": true})),
        ScriptedTurn::text("Done."),
    ]);
    let tries = Arc::new(AtomicUsize::new(0));
    let read = Tool::new("read_rows", any_object(), move |_, _| {
        let first = tries.fetch_add(1, Ordering::SeqCst) == 0;
        async move {
            if first {
                return Err(ToolError::new("rows unavailable"));
            }
            Ok(json!({"rows": 3}))
        }
    })
    .unwrap()
    .with_effect(Effect::Read);
    let submit = Tool::new("submit", any_object(), |_, _| async {
        Ok(json!({"accepted": true}))
    })
    .unwrap()
    .with_effect(Effect::Write)
    .ends_run();
    let agent = agent_on(&model)
        .tool(read)
        .tool(submit)
        .loop_policy(attempts(1))
        .checkers(needs("read_rows"))
        .build()
        .unwrap();
    let run = agent.run("Submit.", RunOptions::default()).await.unwrap();
    // The failed read and the false verdict share one feedback turn.
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    let diag = run.loop_diagnostics.unwrap();
    assert_eq!(diag.recovery_attempts_used, 1);
    assert_eq!(diag.counters.completion_checks, 2);
    let second = user_texts(&model.requests()[1]);
    let feedback = second.last().unwrap();
    assert!(feedback.starts_with("[host feedback]"), "{feedback}");
    assert!(
        feedback.contains("read_rows"),
        "the charged failure: {feedback}"
    );
    assert!(
        feedback.contains("Get read_rows to succeed first."),
        "the verdict: {feedback}"
    );
}

/// A model that settles an async job with a failure while it answers its
/// `settle_on`th call (so the failure arrives right before the check of
/// that answer).
struct SettlingModel {
    inner: Arc<ScriptedModel>,
    settlers: Arc<Mutex<Vec<AsyncSettler>>>,
    calls: AtomicUsize,
    settle_on: usize,
}

impl Model for SettlingModel {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        if self.calls.fetch_add(1, Ordering::SeqCst) + 1 == self.settle_on {
            for settler in self.settlers.lock().unwrap().drain(..) {
                settler.settle(Err(ToolError::new("the job crashed")));
            }
        }
        self.inner.complete(request, ctx)
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<EventStream, ProviderError>> {
        self.inner.stream(request, ctx)
    }
}

#[tokio::test]
async fn an_async_failure_imported_right_before_a_check_charges_one_attempt() {
    let inner = scripted(vec![
        ScriptedTurn::tool_call("j1", "start_job", json!({})),
        ScriptedTurn::text("The job is done."),
        ScriptedTurn::text("Still done."),
    ]);
    let settlers: Arc<Mutex<Vec<AsyncSettler>>> = Arc::default();
    let keep = settlers.clone();
    let job = Tool::new_async("start_job", any_object(), move |_, _| {
        let (handle, settler) = PendingResult::new();
        keep.lock().unwrap().push(settler);
        async move { Ok::<_, ToolError>(ToolReturn::Pending(handle)) }
    })
    .unwrap()
    .with_effect(Effect::Read);
    let model = Arc::new(SettlingModel {
        inner: inner.clone(),
        settlers,
        calls: AtomicUsize::new(0),
        settle_on: 2,
    });
    let agent = verdict_agent::Agent::builder()
        .model(model)
        .model_name("scripted")
        .tool(job)
        .loop_policy(attempts(1))
        .checkers(needs("start_job"))
        .build()
        .unwrap();
    let run = agent
        .run("Run the job.", RunOptions::default())
        .await
        .unwrap();
    // The imported failure and the false verdict share the one attempt, and
    // both reach the model; the next false verdict finds none left.
    let requests = inner.requests();
    assert_eq!(requests.len(), 3, "{run:?}");
    let feedback = user_texts(&requests[2]).pop().unwrap();
    assert!(feedback.starts_with("[host feedback]"), "{feedback}");
    assert!(
        feedback.contains("start_job"),
        "the charged failure: {feedback}"
    );
    assert!(
        feedback.contains("Get start_job to succeed first."),
        "the verdict: {feedback}"
    );
    assert_eq!(
        run.status,
        RunStatus::Stopped(StopReason::RecoveryExhausted)
    );
    let diag = run.loop_diagnostics.unwrap();
    assert_eq!(diag.recovery_attempts_used, 1);
    assert_eq!(diag.phase, Phase::InputNeeded);
    assert_eq!(diag.counters.completion_checks, 2);
    assert_eq!(diag.counters.failures, 1);
}
