//! Run cancellation while a checker runs: the run ends on the cancellation
//! error path, never as a `checker_error` (the spec keeps that for checker
//! errors and timeouts), and the latest diagnostics stay available. The
//! checker's context carries the cancellation: a wasm verifier sleeping or
//! spinning is stopped by the sandbox at once, which reports it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{agent_on, any_object, scripted};
use serde_json::json;
use verdict_agent::{AgentError, Checkers, CompletionFn, ProgressFn, RunOptions, Tool};
use verdict_policy::{
    CancelHandle, CheckContext, CheckFuture, CheckPacket, CheckerError, CompletionChecker, Effect,
    LoopPolicy, Phase, Verdict,
};
use verdict_providers::fake::ScriptedTurn;
use verdict_sandbox::{Limits, MemoryStore, Tenant, WasmChecker};

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
async fn cancel_when_started(started: mpsc::Receiver<()>, cancel: CancelHandle) {
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
    let policy = LoopPolicy::default();
    let checkers =
        Checkers::new().with_completion(Arc::new(CompletionFn::new(move |_: &_, _: &_| {
            gate.pass();
            Ok::<_, CheckerError>(Verdict::bare(true))
        })));
    let agent = agent_on(&model)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let cancel = CancelHandle::new();
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
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_progress(Arc::new(ProgressFn::new(move |_: &_, _: &_| {
        gate.pass();
        Ok::<_, CheckerError>("rev-1".to_owned())
    })));
    let peek = Tool::new("peek", any_object(), |_, _| async { Ok(json!({})) })
        .unwrap()
        .with_effect(Effect::Read);
    let agent = agent_on(&model)
        .tool(peek)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let cancel = CancelHandle::new();
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

/// A checker that reports when it starts and records what the checker it
/// wraps answered (for a wasm verifier: the sandbox's own account).
struct Recording {
    inner: Arc<dyn CompletionChecker>,
    started: tokio::sync::mpsc::UnboundedSender<()>,
    answered: Arc<Mutex<Option<Result<Verdict, CheckerError>>>>,
}

impl CompletionChecker for Recording {
    fn check<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, Verdict> {
        Box::pin(async move {
            let _ = self.started.send(());
            let answer = self.inner.check(packet, ctx).await;
            *self.answered.lock().unwrap() = Some(answer.clone());
            answer
        })
    }
}

/// Cancels a run while the wasm verifier `guest` works on the final answer
/// `text` under a 10 s checker deadline (and a 60 s tenant timeout, fuel
/// for far longer): returns the run's result, what the sandbox answered,
/// and the time from the cancellation to the run's return.
async fn cancel_a_slow_wasm_check(
    guest: &str,
    text: &str,
) -> (
    Result<verdict_agent::AgentResponse, verdict_agent::RunError>,
    Option<Result<Verdict, CheckerError>>,
    Duration,
) {
    let model = scripted(vec![ScriptedTurn::text(text)]);
    let limits = Limits {
        timeout_ms: 60_000,
        fuel: u64::MAX / 2,
        ..Limits::default()
    };
    let tenant = Tenant::new("slow", limits, Arc::new(MemoryStore::new()));
    let (started_tx, mut started) = tokio::sync::mpsc::unbounded_channel();
    let answered = Arc::new(Mutex::new(None));
    let checker = Recording {
        inner: Arc::new(WasmChecker::new(verdict_test_support::load(guest), tenant)),
        started: started_tx,
        answered: answered.clone(),
    };
    let agent = agent_on(&model)
        .loop_policy(LoopPolicy::default())
        .completion_checker(Arc::new(checker))
        .build()
        .unwrap();
    let cancel = CancelHandle::new();
    let options = RunOptions::default()
        .with_cancel(cancel.clone())
        .with_checker_timeout(Duration::from_secs(10));
    let canceller = async {
        started.recv().await.expect("the check starts");
        // Let the guest get going (into its sleep or its loop).
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
        Instant::now()
    };
    let (result, cancelled_at) = tokio::join!(
        async {
            let result = agent.run("Finish.", options).await;
            (result, Instant::now())
        },
        canceller,
    );
    let (result, returned_at) = result;
    let answered = answered.lock().unwrap().clone();
    (result, answered, returned_at - cancelled_at)
}

#[tokio::test]
async fn cancelling_a_run_stops_a_sleeping_wasm_check_at_once() {
    let (result, answered, latency) = cancel_a_slow_wasm_check(
        verdict_test_support::guests::HOSTILE_HOST_CALLS,
        "sleep-ms 20000",
    )
    .await;
    // Reported, not asserted (machines are noisy): the target is < 50 ms.
    eprintln!("cancel -> return, sleeping guest: {latency:?}");
    assert_eq!(result.unwrap_err(), AgentError::Cancelled);
    assert_eq!(answered, Some(Err(CheckerError::Cancelled)));
}

#[tokio::test]
async fn cancelling_a_run_stops_a_spinning_wasm_check_at_once() {
    let (result, answered, latency) =
        cancel_a_slow_wasm_check(verdict_test_support::guests::HOSTILE_SPIN, "Done.").await;
    eprintln!("cancel -> return, spinning guest: {latency:?}");
    assert_eq!(result.unwrap_err(), AgentError::Cancelled);
    assert_eq!(answered, Some(Err(CheckerError::Cancelled)));
}
