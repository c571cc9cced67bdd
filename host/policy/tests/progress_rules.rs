//! Progress keys sampled after tool batches.

use crate::common;

use common::{start, turn, view, with_progress};
use verdict_policy::{
    BatchDecision, CheckDecision, CheckRequest, CheckerErrorKind, LoopPolicy, PolicyExecution,
    RecoveryTrigger, StopReason,
};

fn sample(exec: &mut PolicyExecution) -> CheckRequest {
    match exec.after_batch(&view(), None) {
        BatchDecision::SampleProgress(request) => request,
        other => panic!("expected a sample, got {other:?}"),
    }
}

fn key(exec: &mut PolicyExecution, key: &str) -> CheckDecision {
    let request = sample(exec);
    exec.progress_key(request.ticket, &view(), Ok(key.to_owned()))
}

#[test]
fn unchanged_key_triggers_feedback() {
    let mut exec = start(&with_progress(LoopPolicy {
        unchanged_progress_limit: 2,
        ..LoopPolicy::default()
    }));
    assert_eq!(key(&mut exec, "rev-1"), CheckDecision::Continue);
    assert_eq!(key(&mut exec, "rev-1"), CheckDecision::Continue);
    assert_eq!(turn(&mut exec), None);
    assert_eq!(key(&mut exec, "rev-1"), CheckDecision::Continue);
    let feedback = turn(&mut exec).expect("progress feedback");
    assert!(feedback.starts_with("[host feedback]") && feedback.contains("progress"));
    let diag = exec.diagnostics();
    assert_eq!(diag.last_trigger, Some(RecoveryTrigger::UnchangedProgress));
    assert_eq!(diag.counters.progress_samples, 3);
    // Without a progress checker nothing is sampled.
    let mut plain = start(&LoopPolicy::default());
    assert_eq!(plain.after_batch(&view(), None), BatchDecision::Continue);
}

#[test]
fn changing_key_does_not_intervene() {
    let mut exec = start(&with_progress(LoopPolicy {
        unchanged_progress_limit: 1,
        ..LoopPolicy::default()
    }));
    for rev in ["rev-1", "rev-2", "rev-3", "rev-4"] {
        assert_eq!(key(&mut exec, rev), CheckDecision::Continue);
    }
    assert_eq!(turn(&mut exec), None);
    assert_eq!(key(&mut exec, "rev-4"), CheckDecision::Continue);
    assert!(turn(&mut exec).is_some());
    // A change in between resets the count of unchanged samples.
    let mut exec = start(&with_progress(LoopPolicy {
        unchanged_progress_limit: 2,
        ..LoopPolicy::default()
    }));
    for rev in ["a", "a", "b", "b", "c", "c"] {
        assert_eq!(key(&mut exec, rev), CheckDecision::Continue);
    }
    assert_eq!(turn(&mut exec), None);
}

#[test]
fn oversized_key_is_a_checker_error() {
    let mut exec = start(&with_progress(LoopPolicy::default()));
    assert_eq!(key(&mut exec, &"k".repeat(4000)), CheckDecision::Continue);
    assert_eq!(
        key(&mut exec, &"k".repeat(4001)),
        CheckDecision::Stop {
            reason: StopReason::CheckerError
        }
    );
    assert_eq!(
        exec.diagnostics().checker_error,
        Some(CheckerErrorKind::InvalidProgressKey)
    );
}
