//! A worker killed at each kind of point in the feedback-agent story with
//! a write: after the write's result was journaled, inside the write, and
//! inside a check; a new worker process takes over.

use verdict_policy::{Phase, StopReason};

use crate::support::*;

/// Killed after the write completed and its result was journaled (at the
/// next model call, before it reaches the provider): the next worker
/// finishes the execution, the write ran once, the model was called once
/// per turn, and the diagnostics go on from where they were.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_killed_after_a_journaled_write_completes_without_repeating_it() {
    let Some(mut s) = Scenario::start(vec![story("A42")], &["--pause-model", "3:{paused}"]).await
    else {
        return;
    };
    let execution = s.submit("conv-1", "Verify A42 and write the report.").await;
    s.paused().await;

    // Before the crash: one recovery (the premature answer), one admission
    // (the write), the write done once.
    let before = status(&s.client, &execution).await;
    let diagnostics = before.diagnostics.expect("diagnostics");
    assert_eq!(diagnostics.recovery_attempts_used, 1);
    assert_eq!(diagnostics.counters.admissions, 1);
    assert_eq!(s.lines("writes.log").len(), 1);

    s.take_over(&[]);
    let record = s.finished(&execution).await;

    let diagnostics = record.diagnostics.clone().expect("diagnostics");
    assert_eq!(diagnostics.phase, Phase::Complete, "{record:?}");
    assert_eq!(diagnostics.reason, Some(StopReason::Completed));
    assert_eq!(diagnostics.recovery_attempts_used, 1);
    assert_eq!(diagnostics.counters.admissions, 2);
    assert_eq!(diagnostics.execution_id, execution.to_string());
    assert_eq!(record.output, "A42 is ready and the report is written.");
    // The write ran exactly once, with the key of call 1.
    assert_eq!(s.lines("writes.log"), vec![format!("{execution}:1")]);
    // One model request per turn in total, across both processes.
    assert_eq!(s.fake.requests().len(), 4);
    assert_eq!(record.model_calls, 4);
    assert_eq!((record.tool_calls, record.checks), (2, 2));
    assert!(record.uncertain.is_none());
}

/// Killed inside the write (its effect done, its result not journaled):
/// on resume the execution stops with `uncertain_effect` naming the call,
/// and the write does not run again.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_killed_inside_a_write_stops_with_uncertain_effect_and_never_repeats_it() {
    let Some(mut s) = Scenario::start(vec![story("A42")], &["--pause-write", "{paused}"]).await
    else {
        return;
    };
    let execution = s.submit("conv-1", "Verify A42 and write the report.").await;
    s.paused().await;
    s.take_over(&[]);
    let record = s.finished(&execution).await;

    let diagnostics = record.diagnostics.clone().expect("diagnostics");
    assert_eq!(diagnostics.phase, Phase::Stopped, "{record:?}");
    assert_eq!(diagnostics.reason, Some(StopReason::UncertainEffect));
    let uncertain = record.uncertain.clone().expect("the uncertain call");
    assert_eq!(uncertain.tool, "write_artifact");
    assert_eq!(uncertain.sequence, 1);
    assert_eq!(uncertain.idempotency_key, format!("{execution}:1"));
    // Started once, never again.
    assert_eq!(s.lines("attempts.log").len(), 1);
    assert_eq!(s.lines("writes.log").len(), 1);
    // No turn after the stop.
    assert_eq!(s.fake.requests().len(), 2);
}

/// The same crash with the write declared idempotent: it runs again with
/// the same idempotency key (its effect happens once) and the execution
/// completes.
#[tokio::test(flavor = "multi_thread")]
async fn an_idempotent_write_killed_inside_runs_again_with_the_same_key() {
    let Some(mut s) = Scenario::start(
        vec![story("A42")],
        &["--idempotent", "--pause-write", "{paused}"],
    )
    .await
    else {
        return;
    };
    let execution = s.submit("conv-1", "Verify A42 and write the report.").await;
    s.paused().await;
    s.take_over(&["--idempotent"]);
    let record = s.finished(&execution).await;

    let diagnostics = record.diagnostics.clone().expect("diagnostics");
    assert_eq!(
        diagnostics.reason,
        Some(StopReason::Completed),
        "{record:?}"
    );
    let key = format!("{execution}:1");
    assert_eq!(s.lines("attempts.log"), vec![key.clone(), key.clone()]);
    assert_eq!(s.lines("writes.log"), vec![key.clone()]);
    assert_eq!(record.reruns, vec![key]);
    assert!(record.uncertain.is_none());
    assert_eq!(s.fake.requests().len(), 4);
}

/// Killed during the confirming check: no verdict was journaled, so the
/// check runs again on resume and the run completes.
#[tokio::test(flavor = "multi_thread")]
async fn a_check_cut_off_by_a_crash_runs_again() {
    let Some(mut s) = Scenario::start(vec![story("A42")], &["--pause-check", "2:{paused}"]).await
    else {
        return;
    };
    let execution = s.submit("conv-1", "Verify A42 and write the report.").await;
    s.paused().await;
    s.take_over(&[]);
    let record = s.finished(&execution).await;

    let diagnostics = record.diagnostics.clone().expect("diagnostics");
    assert_eq!(
        diagnostics.reason,
        Some(StopReason::Completed),
        "{record:?}"
    );
    assert!(diagnostics.last_verdict.is_some_and(|v| v.complete));
    // Three check calls (the refusal, the cut-off one, its rerun), two
    // verdicts journaled; the first verdict was not asked again.
    assert_eq!(s.lines("checks.log").len(), 3);
    assert_eq!(record.checks, 2);
    // The read's result was journaled before the crash: not read again.
    assert_eq!(s.lines("reads.log").len(), 1);
    assert_eq!(s.lines("writes.log").len(), 1);
    assert_eq!(s.fake.requests().len(), 4);
}

/// Killed inside the read (its result not journaled): a read may run
/// again, so it does, and the run completes; the write before it is not
/// repeated.
#[tokio::test(flavor = "multi_thread")]
async fn a_read_cut_off_by_a_crash_runs_again() {
    let Some(mut s) = Scenario::start(vec![story("A42")], &["--pause-read", "{paused}"]).await
    else {
        return;
    };
    let execution = s.submit("conv-1", "Verify A42 and write the report.").await;
    s.paused().await;
    s.take_over(&[]);
    let record = s.finished(&execution).await;

    let diagnostics = record.diagnostics.clone().expect("diagnostics");
    assert_eq!(
        diagnostics.reason,
        Some(StopReason::Completed),
        "{record:?}"
    );
    assert_eq!(s.lines("reads.log").len(), 2);
    assert_eq!(s.lines("writes.log").len(), 1);
    assert!(record.uncertain.is_none());
    assert_eq!(record.reruns, vec![format!("{execution}:2")]);
    assert_eq!(s.fake.requests().len(), 4);
}

/// The Restate server itself is killed (SIGKILL) mid-execution, after the
/// write was journaled, and started again on its data; the worker dies
/// too. The execution resumes from the server's journal: the write ran
/// once, the model was called once per turn.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_survives_a_crash_of_the_restate_server_itself() {
    let Some(mut s) = Scenario::start(vec![story("A42")], &["--pause-model", "3:{paused}"]).await
    else {
        return;
    };
    let execution = s.submit("conv-1", "Verify A42 and write the report.").await;
    s.paused().await;
    s.restate.crash_and_restart();
    s.take_over(&[]);
    let record = s.finished(&execution).await;

    let diagnostics = record.diagnostics.clone().expect("diagnostics");
    assert_eq!(
        diagnostics.reason,
        Some(StopReason::Completed),
        "{record:?}"
    );
    assert_eq!(diagnostics.recovery_attempts_used, 1);
    assert_eq!(s.lines("writes.log").len(), 1);
    assert_eq!(s.fake.requests().len(), 4);
}
