//! Run cancellation while a checker runs: the run ends on the cancellation
//! error path, never as a `checker_error` (the spec keeps that for checker
//! errors and timeouts), and the latest diagnostics stay available.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod common;

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{agent_on, any_object, scripted};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use verdict_agent::{AgentError, RunOptions, Tool};
use verdict_policy::{CheckerError, CompletionFn, Effect, LoopPolicy, Phase, ProgressFn, Verdict};
use verdict_providers::fake::ScriptedTurn;

/// A checker gate: the checker says it started, then waits to be released
/// (at most 10 s, so an abandoned check ends).
#[derive(Clone)]
struct Gate {
    started: Arc<Mutex<mpsc::Sender<()>>>,
    release: Arc<Mutex<mpsc::Receiver<()>>>,
}

fn gate() -> (Gate, mpsc::Receiver<()>, mpsc::Sender<()>) {
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    let gate = Gate {
        started: Arc::new(Mutex::new(started_tx)),
        release: Arc::new(Mutex::new(release_rx)),
    };
    (gate, started_rx, release_tx)
}

impl Gate {
    fn pass(&self) {
        let _ = self.started.lock().unwrap().send(());
        let _ = self
            .release
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(10));
    }
}

/// Cancels `cancel` once the checker behind `started` runs.
async fn cancel_when_started(started: mpsc::Receiver<()>, cancel: CancellationToken) {
    tokio::task::spawn_blocking(move || started.recv_timeout(Duration::from_secs(20)))
        .await
        .unwrap()
        .unwrap();
    cancel.cancel();
}

#[tokio::test]
async fn cancelling_during_a_completion_check_is_not_a_checker_error() {
    let model = scripted(vec![ScriptedTurn::text("Done.")]);
    let (gate, started, release) = gate();
    let policy = LoopPolicy::default().with_completion(Arc::new(CompletionFn(move |_: &_| {
        gate.pass();
        Ok::<_, CheckerError>(Verdict {
            complete: true,
            reason: None,
            feedback: None,
        })
    })));
    let agent = agent_on(&model).loop_policy(policy).build().unwrap();
    let cancel = CancellationToken::new();
    let (result, ()) = tokio::join!(
        agent.run("Finish.", RunOptions::default().with_cancel(cancel.clone())),
        cancel_when_started(started, cancel.clone()),
    );
    let _ = release.send(());
    assert_eq!(result.unwrap_err(), AgentError::Cancelled);
    let diag = agent.loop_diagnostics().expect("the latest diagnostics");
    assert_eq!(diag.checker_error, None, "{diag:?}");
    assert_eq!(diag.reason, None, "{diag:?}");
    assert_eq!(diag.phase, Phase::Running);
    assert_eq!(diag.counters.completion_checks, 1);
    // The agent serves the next run.
    let model_calls = model.requests().len();
    assert_eq!(model_calls, 1);
}

#[tokio::test]
async fn cancelling_during_a_progress_sample_is_not_a_checker_error() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("r1", "peek", json!({})),
        ScriptedTurn::text("never"),
    ]);
    let (gate, started, release) = gate();
    let policy = LoopPolicy::default().with_progress(Arc::new(ProgressFn(move |_: &_| {
        gate.pass();
        Ok::<_, CheckerError>("rev-1".to_owned())
    })));
    let peek = Tool::new("peek", any_object(), |_, _| async { Ok(json!({})) })
        .unwrap()
        .with_effect(Effect::Read);
    let agent = agent_on(&model)
        .tool(peek)
        .loop_policy(policy)
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    let (result, ()) = tokio::join!(
        agent.run("Peek.", RunOptions::default().with_cancel(cancel.clone())),
        cancel_when_started(started, cancel.clone()),
    );
    let _ = release.send(());
    assert_eq!(result.unwrap_err(), AgentError::Cancelled);
    let diag = agent.loop_diagnostics().expect("the latest diagnostics");
    assert_eq!(diag.checker_error, None, "{diag:?}");
    assert_eq!(diag.reason, None, "{diag:?}");
    assert_eq!(diag.counters.progress_samples, 1);
    assert_eq!(diag.counters.observations, 1);
    assert_eq!(model.requests().len(), 1, "no model call after it");
}
