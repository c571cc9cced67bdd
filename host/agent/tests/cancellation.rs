//! Run cancellation while a checker runs: the run ends on the cancellation
//! error path, never as a `checker_error` (the spec keeps that for checker
//! errors and timeouts), and the latest diagnostics stay available. The
//! checker's context carries the cancellation: a wasm verifier sleeping or
//! spinning is stopped by the sandbox, which answers `cancelled`, and its
//! guest is gone (its store dropped), not left running to its own bounds.
//! The agent serves the next run.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{agent_on, any_object, scripted};
use serde_json::json;
use verdict_agent::{AgentError, Checkers, CompletionFn, ProgressFn, RunOptions, RunStatus, Tool};
use verdict_policy::{
    CancelHandle, CheckContext, CheckFuture, CheckPacket, CheckerError, CompletionChecker, Effect,
    LoopPolicy, Phase, Verdict, WorkflowStatus,
};
use verdict_providers::fake::ScriptedTurn;
use verdict_sandbox::{ArtifactData, ArtifactError, ArtifactStore, Limits, Tenant, WasmChecker};

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
    let model = scripted(vec![
        ScriptedTurn::text("Done."),
        ScriptedTurn::text("Done again."),
    ]);
    let (gate, started, release) = gate();
    let policy = LoopPolicy::default();
    // The first check waits at the gate (and is cancelled there); later
    // checks answer at once.
    let first = Arc::new(AtomicBool::new(true));
    let checkers =
        Checkers::new().with_completion(Arc::new(CompletionFn::new(move |_: &_, _: &_| {
            if first.swap(false, Ordering::SeqCst) {
                gate.pass();
            }
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
    assert_eq!(model.requests().len(), 1);

    // The agent serves the next run: a fresh execution, checked and
    // completed (not `Busy`, not cancelled by the earlier token).
    let next = agent
        .run("Finish again.", RunOptions::default())
        .await
        .expect("the next run is served");
    assert_eq!(next.status, RunStatus::Completed);
    assert_eq!(next.output_text, "Done again.");
    let next_diag = next.loop_diagnostics.expect("the next run's diagnostics");
    assert_ne!(next_diag.execution_id, diag.execution_id);
    assert_eq!(next_diag.status, Some(WorkflowStatus::Completed));
    assert_eq!(next_diag.counters.completion_checks, 1);
    assert_eq!(model.requests().len(), 2);
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

/// A tenant's artifact store that counts reads (it holds nothing). Every
/// running call holds a reference to its tenant's store until the guest's
/// wasmtime store is dropped, so the references left show whether a guest
/// still exists.
#[derive(Debug, Default)]
struct Probe {
    reads: AtomicUsize,
}

impl ArtifactStore for Probe {
    fn read(&self, _id: &str, _max_bytes: u64) -> Result<ArtifactData, ArtifactError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        Err(ArtifactError::NotFound)
    }

    fn list(&self, _prefix: &str, _max_entries: usize) -> Result<Vec<String>, ArtifactError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        Ok(Vec::new())
    }
}

/// What cancelling a slow wasm check showed.
struct Cancelled {
    /// The run's result.
    result: Result<verdict_agent::AgentResponse, verdict_agent::RunError>,
    /// What the sandbox answered the checker.
    answered: Option<Result<Verdict, CheckerError>>,
    /// The run's latest diagnostics.
    diagnostics: Option<verdict_policy::LoopDiagnostics>,
    /// References to the tenant's store while the guest ran, beyond the
    /// agent's own.
    held_while_running: usize,
    /// The probe, once no guest holds it any more (or after 20 s).
    probe: Arc<Probe>,
    /// References beyond the agent's own once the wait ended: 0 when the
    /// guest's store was dropped.
    held_after: usize,
}

/// Cancels a run while the wasm verifier `guest` works on the final answer
/// `text`, with every other bound far away (a 120 s checker deadline and
/// tenant timeout, fuel for far longer): the guest is stopped by the
/// cancellation or not at all within the 20 s this waits for its store to
/// go away. Returns what the run, the sandbox and the probe showed.
async fn cancel_a_slow_wasm_check(guest: &str, text: &str) -> Cancelled {
    let model = scripted(vec![ScriptedTurn::text(text)]);
    let limits = Limits {
        timeout_ms: 120_000,
        fuel: u64::MAX / 2,
        ..Limits::default()
    };
    let probe = Arc::new(Probe::default());
    let store: Arc<dyn ArtifactStore> = probe.clone();
    // No ready instances: a store held by the probe then means a guest
    // that runs (a ready one would hold it while it waits).
    let tenant = Tenant::new("slow", limits, store).with_ready_instances(0);
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
    // The probe's references with no call running: ours and the tenant's.
    let baseline = Arc::strong_count(&probe);
    let cancel = CancelHandle::new();
    let options = RunOptions::default()
        .with_cancel(cancel.clone())
        .with_checker_timeout(Duration::from_secs(120));
    let canceller = async {
        started.recv().await.expect("the check starts");
        // Let the guest get going (into its sleep or its loop).
        tokio::time::sleep(Duration::from_millis(50)).await;
        let held = Arc::strong_count(&probe) - baseline;
        cancel.cancel();
        held
    };
    let (result, held_while_running) = tokio::join!(agent.run("Finish.", options), canceller);
    let answered = answered.lock().unwrap().clone();
    let diagnostics = agent.loop_diagnostics();
    // The run returned; the guest's store goes away once the guest stops.
    // Not a timing: a guest the cancellation missed lives on until its
    // 120 s bounds, far past this wait.
    let waited = tokio::time::timeout(Duration::from_secs(20), async {
        while Arc::strong_count(&probe) > baseline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let held_after = Arc::strong_count(&probe) - baseline;
    assert_eq!(waited.is_ok(), held_after == 0);
    drop(agent);
    Cancelled {
        result,
        answered,
        diagnostics,
        held_while_running,
        probe,
        held_after,
    }
}

/// What every cancelled wasm check must show: the run ends cancelled, the
/// sandbox answered `cancelled` (its own account, not a timeout or a
/// checker error), and the guest, which held the tenant's store while it
/// ran, is gone.
fn assert_stopped_by_the_cancellation(run: &Cancelled) {
    assert_eq!(run.result.as_ref().unwrap_err(), &AgentError::Cancelled);
    assert_eq!(run.answered, Some(Err(CheckerError::Cancelled)));
    let diag = run.diagnostics.as_ref().expect("the latest diagnostics");
    assert_eq!(diag.checker_error, None, "{diag:?}");
    assert_eq!(diag.reason, None, "{diag:?}");
    assert_eq!(diag.counters.completion_checks, 1);
    assert!(
        run.held_while_running > 0,
        "the running guest holds its tenant's store"
    );
    assert_eq!(
        run.held_after, 0,
        "the guest is still running after the cancellation"
    );
}

#[tokio::test]
async fn cancelling_a_run_stops_a_sleeping_wasm_check() {
    // Sleeps 60 s, then reads an artifact: the read must never happen.
    let run = cancel_a_slow_wasm_check(
        verdict_test_support::guests::HOSTILE_HOST_CALLS,
        "sleep-then-read 60000",
    )
    .await;
    assert_stopped_by_the_cancellation(&run);
    assert_eq!(run.probe.reads.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn cancelling_a_run_stops_a_spinning_wasm_check() {
    let run = cancel_a_slow_wasm_check(verdict_test_support::guests::HOSTILE_SPIN, "Done.").await;
    assert_stopped_by_the_cancellation(&run);
}
