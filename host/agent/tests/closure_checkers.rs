//! Closure checkers: `CompletionFn::new` / `ProgressFn::new` run a blocking
//! closure on the blocking pool; `::inline` runs a quick one on the
//! checking task. Both answer the same.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use common::{agent_on, scripted};
use serde_json::json;
use verdict_agent::{Checkers, CompletionFn, ProgressFn, RunOptions, RunStatus};
use verdict_policy::{CheckerError, LoopPolicy, Verdict};
use verdict_providers::fake::ScriptedTurn;

/// Runs a two-turn execution (one tool call, then a final answer) whose
/// checkers record the thread they ran on; returns the threads of the
/// progress sample and of the completion check, and the checked output.
async fn check_threads(inline: bool) -> (ThreadId, ThreadId, String) {
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "peek", json!({})),
        ScriptedTurn::text("A42 is ready."),
    ]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (on_check, on_sample) = (seen.clone(), seen.clone());
    let check = move |packet: &verdict_policy::CheckPacket, _: &_| {
        let output = packet.output_text.clone();
        on_check
            .lock()
            .unwrap()
            .push((std::thread::current().id(), output));
        Ok::<_, CheckerError>(Verdict::bare(true))
    };
    let sample = move |_: &_, _: &_| {
        on_sample
            .lock()
            .unwrap()
            .push((std::thread::current().id(), String::new()));
        Ok::<_, CheckerError>("same".to_owned())
    };
    let checkers = if inline {
        Checkers::new()
            .with_completion(Arc::new(CompletionFn::inline(check)))
            .with_progress(Arc::new(ProgressFn::inline(sample)))
    } else {
        Checkers::new()
            .with_completion(Arc::new(CompletionFn::new(check)))
            .with_progress(Arc::new(ProgressFn::new(sample)))
    };
    let agent = agent_on(&model)
        .tool(
            verdict_agent::Tool::new("peek", common::any_object(), |_, _| async {
                Ok(json!({"ready": true}))
            })
            .unwrap(),
        )
        .loop_policy(LoopPolicy::default())
        .checkers(checkers)
        .build()
        .unwrap();
    let response = agent
        .run("Verify A42.", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(response.status, RunStatus::Completed);
    let diag = response
        .loop_diagnostics
        .expect("a policy run has diagnostics");
    assert_eq!(diag.counters.completion_checks, 1);
    assert_eq!(diag.counters.progress_samples, 1);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    (seen[0].0, seen[1].0, seen[1].1.clone())
}

#[tokio::test]
async fn an_inline_closure_runs_on_the_checking_task() {
    let here = std::thread::current().id();
    let (sampled_on, checked_on, output) = check_threads(true).await;
    // A current-thread runtime: the checking task runs on this thread.
    assert_eq!(sampled_on, here);
    assert_eq!(checked_on, here);
    assert_eq!(output, "A42 is ready.");
}

#[tokio::test]
async fn a_blocking_closure_runs_on_the_blocking_pool() {
    let here = std::thread::current().id();
    let (sampled_on, checked_on, output) = check_threads(false).await;
    assert_ne!(sampled_on, here);
    assert_ne!(checked_on, here);
    assert_eq!(output, "A42 is ready.");
}

/// A closure that answers 50 ms into a 20 ms deadline.
fn late_check(
    _: &verdict_policy::CheckPacket,
    _: &verdict_policy::CheckContext,
) -> Result<Verdict, CheckerError> {
    std::thread::sleep(std::time::Duration::from_millis(50));
    Ok(Verdict::bare(true))
}

#[tokio::test]
async fn an_inline_closure_that_overruns_its_deadline_does_not_confirm() {
    // Nothing can interrupt an inline closure: it returns its verdict after
    // the deadline, and that late verdict must not complete the run.
    let model = scripted(vec![ScriptedTurn::text("done")]);
    let agent = agent_on(&model)
        .loop_policy(LoopPolicy::default())
        .checkers(Checkers::new().with_completion(Arc::new(CompletionFn::inline(late_check))))
        .build()
        .unwrap();
    let options = RunOptions::default().with_checker_timeout(std::time::Duration::from_millis(20));
    let response = agent.run("Finish.", options).await.unwrap();
    assert_eq!(
        response.status,
        RunStatus::Stopped(verdict_policy::StopReason::CheckerError)
    );
    assert_eq!(
        response.loop_diagnostics.unwrap().checker_error,
        Some(verdict_policy::CheckerErrorKind::Timeout)
    );
}

#[test]
fn a_late_answer_is_a_timeout_on_every_path() {
    // Outside a runtime both kinds run the closure on the calling thread;
    // a verdict given after the context's deadline is a timeout there too,
    // and one given in time stands.
    use verdict_policy::{CheckContext, CompletionChecker as _};
    let packet = verdict_test_support::read_packet();
    for checker in [
        CompletionFn::new(late_check),
        CompletionFn::inline(late_check),
    ] {
        let short = CheckContext::new()
            .with_deadline(std::time::Instant::now() + std::time::Duration::from_millis(20));
        let answer = futures::executor::block_on(checker.check(&packet, &short));
        assert_eq!(answer, Err(CheckerError::Timeout));
        let ample = CheckContext::new()
            .with_deadline(std::time::Instant::now() + std::time::Duration::from_secs(30));
        let answer = futures::executor::block_on(checker.check(&packet, &ample));
        assert!(answer.is_ok_and(|v| v.complete));
    }
}

/// What a closure checker that watches its context saw: how often it went
/// round its loop, and whether it returned because its context told it to.
struct Watcher {
    rounds: Arc<std::sync::atomic::AtomicU64>,
    saw_signal: std::sync::mpsc::Receiver<()>,
    /// Cancelled by the test when the closure never saw its signal, so it
    /// stops (the test has failed by then).
    give_up: verdict_policy::CancelHandle,
}

impl Watcher {
    /// Waits (bounded) for the closure to report that it saw its signal,
    /// then checks that it stopped: its loop no longer turns.
    async fn assert_stopped(self) {
        use std::sync::atomic::Ordering;
        let saw = self.saw_signal;
        let seen = tokio::task::spawn_blocking(move || {
            saw.recv_timeout(std::time::Duration::from_secs(30))
        })
        .await
        .unwrap();
        if seen.is_err() {
            self.give_up.cancel();
            panic!("the closure never saw its signal: it ran on after the deadline");
        }
        // It returned: its counter is frozen.
        let rounds = self.rounds.load(Ordering::SeqCst);
        assert!(rounds > 0, "it ran before the deadline");
        tokio::task::yield_now().await;
        assert_eq!(self.rounds.load(Ordering::SeqCst), rounds);
    }
}

/// A blocking closure checker that waits for its context's signal, either
/// polling `is_cancelled` or blocking on the `cancelled()` future.
fn watching_checker(polls: bool) -> (Checkers, Watcher) {
    use std::sync::atomic::{AtomicU64, Ordering};
    let rounds = Arc::new(AtomicU64::new(0));
    let give_up = verdict_policy::CancelHandle::new();
    let (tell, saw_signal) = std::sync::mpsc::channel();
    let (count, stop) = (rounds.clone(), give_up.clone());
    let check = move |_: &verdict_policy::CheckPacket, ctx: &verdict_policy::CheckContext| {
        count.fetch_add(1, Ordering::SeqCst);
        if polls {
            while !ctx.is_cancelled() {
                if stop.is_cancelled() {
                    return Err(CheckerError::Failed("gave up".into()));
                }
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        } else {
            // Parks this (blocking-pool) thread until a signal wakes it.
            let _ = futures::executor::block_on(futures::future::select(
                ctx.cancelled(),
                stop.cancelled(),
            ));
            if stop.is_cancelled() {
                return Err(CheckerError::Failed("gave up".into()));
            }
        }
        tell.send(()).unwrap_or(());
        Err(CheckerError::Cancelled)
    };
    let checkers = Checkers::new().with_completion(Arc::new(CompletionFn::new(check)));
    let watcher = Watcher {
        rounds,
        saw_signal,
        give_up,
    };
    (checkers, watcher)
}

async fn a_closure_sees_its_signal_at_the_deadline(polls: bool) {
    let model = scripted(vec![ScriptedTurn::text("done")]);
    let (checkers, watcher) = watching_checker(polls);
    let agent = agent_on(&model)
        .loop_policy(LoopPolicy::default())
        .checkers(checkers)
        .build()
        .unwrap();
    let options = RunOptions::default().with_checker_timeout(std::time::Duration::from_millis(200));
    let response = agent.run("Finish.", options).await.unwrap();
    assert_eq!(
        response.status,
        RunStatus::Stopped(verdict_policy::StopReason::CheckerError)
    );
    assert_eq!(
        response.loop_diagnostics.unwrap().checker_error,
        Some(verdict_policy::CheckerErrorKind::Timeout)
    );
    // The run returned at the deadline; the closure, still running on the
    // blocking pool, is told by its context and stops.
    watcher.assert_stopped().await;
}

#[tokio::test]
async fn a_closure_polling_its_context_stops_at_the_deadline() {
    a_closure_sees_its_signal_at_the_deadline(true).await;
}

#[tokio::test]
async fn a_closure_awaiting_its_signal_stops_at_the_deadline() {
    a_closure_sees_its_signal_at_the_deadline(false).await;
}

/// A custom async checker whose verdict becomes ready only once its
/// deadline has passed (it wakes itself until then), ignoring its signal:
/// the verdict arrives late by construction, whatever the scheduling.
struct ReadyJustAfterTheDeadline;

impl verdict_policy::CompletionChecker for ReadyJustAfterTheDeadline {
    fn check<'a>(
        &'a self,
        _: &'a verdict_policy::CheckPacket,
        ctx: &'a verdict_policy::CheckContext,
    ) -> verdict_policy::CheckFuture<'a, Verdict> {
        let deadline = ctx
            .deadline()
            .expect("the loop gives every check a deadline");
        Box::pin(std::future::poll_fn(move |cx| {
            if std::time::Instant::now() >= deadline {
                return std::task::Poll::Ready(Ok(Verdict::bare(true)));
            }
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }))
    }
}

#[tokio::test]
async fn a_custom_checker_ready_after_its_deadline_is_a_timeout() {
    let model = scripted(vec![ScriptedTurn::text("done")]);
    let agent = agent_on(&model)
        .loop_policy(LoopPolicy::default())
        .checkers(Checkers::new().with_completion(Arc::new(ReadyJustAfterTheDeadline)))
        .build()
        .unwrap();
    let options = RunOptions::default().with_checker_timeout(std::time::Duration::from_millis(20));
    let response = agent.run("Finish.", options).await.unwrap();
    assert_eq!(
        response.status,
        RunStatus::Stopped(verdict_policy::StopReason::CheckerError),
        "a late verdict confirmed the run"
    );
    assert_eq!(
        response.loop_diagnostics.unwrap().checker_error,
        Some(verdict_policy::CheckerErrorKind::Timeout)
    );
}

/// The same late checker, declaring that it decides its deadline itself
/// (a durable execution's journaled checker, whose timeout is decided in
/// the journal): its answer stands whenever it comes, and the execution
/// id given in the options is the packet's.
struct DecidesItsOwnDeadline(Arc<Mutex<Vec<String>>>);

impl verdict_policy::CompletionChecker for DecidesItsOwnDeadline {
    fn check<'a>(
        &'a self,
        packet: &'a verdict_policy::CheckPacket,
        ctx: &'a verdict_policy::CheckContext,
    ) -> verdict_policy::CheckFuture<'a, Verdict> {
        self.0.lock().unwrap().push(packet.execution_id.clone());
        ReadyJustAfterTheDeadline.check(packet, ctx)
    }

    fn decides_deadline(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn a_checker_that_decides_its_deadline_is_taken_at_its_word() {
    let model = scripted(vec![ScriptedTurn::text("done")]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = agent_on(&model)
        .loop_policy(LoopPolicy::default())
        .checkers(
            Checkers::new().with_completion(Arc::new(DecidesItsOwnDeadline(Arc::clone(&seen)))),
        )
        .build()
        .unwrap();
    let options = RunOptions::default()
        .with_checker_timeout(std::time::Duration::from_millis(20))
        .with_execution_id("conv-1/ex-1");
    let response = agent.run("Finish.", options).await.unwrap();
    assert_eq!(response.status, RunStatus::Completed);
    assert_eq!(*seen.lock().unwrap(), vec!["conv-1/ex-1".to_owned()]);
    assert_eq!(
        response.loop_diagnostics.unwrap().execution_id,
        "conv-1/ex-1"
    );
}
