//! Recovery: labelled feedback, attempts, exhaustion, the iteration bound.

use crate::common;

use common::{call, failed, start, turn};
use serde_json::json;
use verdict_policy::{
    Admission, CheckDecision, Decision, Effect, FailureKind, FinalDecision, LoopPolicy, Phase,
    PolicyExecution, RecoveryTrigger, StopReason, TurnDecision, Verdict,
};

fn fail(exec: &mut PolicyExecution, id: &str, n: u32) -> Decision {
    let args = json!({ "n": n });
    assert_eq!(
        exec.admit(&call(id, "fetch", Effect::Read, &args)),
        Admission::Run
    );
    exec.observe(
        common::seq(id),
        Some(failed(FailureKind::Execution, true)),
        None,
    )
}

#[test]
fn failure_feedback_is_labelled_and_delivered_once() {
    let mut exec = start(&LoopPolicy::default());
    assert_eq!(turn(&mut exec), None);
    // Two failures in one batch: one feedback turn, one attempt.
    fail(&mut exec, "a", 1);
    fail(&mut exec, "b", 2);
    assert_eq!(exec.diagnostics().phase, Phase::Recovering);
    let feedback = turn(&mut exec).expect("feedback");
    assert!(feedback.starts_with("[host feedback]\n"));
    assert_eq!(feedback.matches("fetch").count(), 2);
    assert!(feedback.contains("not be replayed"));
    assert_eq!(exec.diagnostics().recovery_attempts_used, 1);
    // Delivered once; nothing is replayed on the engine's own initiative.
    assert_eq!(turn(&mut exec), None);
    assert_eq!(exec.diagnostics().phase, Phase::Running);
    assert_eq!(exec.diagnostics().counters.admissions, 2);
}

#[test]
fn recovery_exhaustion_stops() {
    let mut exec = start(&LoopPolicy {
        max_recovery_attempts: 2,
        ..LoopPolicy::default()
    });
    assert_eq!(fail(&mut exec, "a", 1), Decision::Continue);
    assert!(turn(&mut exec).is_some());
    assert_eq!(fail(&mut exec, "b", 2), Decision::Continue);
    assert!(turn(&mut exec).is_some());
    assert_eq!(
        fail(&mut exec, "c", 3),
        Decision::Stop {
            reason: StopReason::RecoveryExhausted
        }
    );
    let diag = exec.diagnostics();
    assert_eq!(diag.phase, Phase::Stopped);
    assert_eq!(diag.recovery_attempts_used, 2);
    assert_eq!(diag.last_trigger, Some(RecoveryTrigger::ToolFailure));
    assert!(matches!(exec.begin_turn(), TurnDecision::Stop { .. }));
}

#[test]
fn zero_recovery_stops_at_first_failure() {
    let mut exec = start(&LoopPolicy {
        max_recovery_attempts: 0,
        ..LoopPolicy::default()
    });
    assert_eq!(
        fail(&mut exec, "a", 1),
        Decision::Stop {
            reason: StopReason::RecoveryExhausted
        }
    );
}

#[test]
fn iteration_bound_stops_before_the_extra_turn() {
    let mut exec = common::start_bounded(&LoopPolicy::default(), Some(2));
    assert!(matches!(exec.begin_turn(), TurnDecision::Proceed { .. }));
    assert!(matches!(exec.begin_turn(), TurnDecision::Proceed { .. }));
    assert_eq!(
        exec.begin_turn(),
        TurnDecision::Stop {
            reason: StopReason::MaxIterations
        }
    );
    let diag = exec.diagnostics();
    assert_eq!(diag.counters.iterations, 2);
    assert_eq!(diag.phase, Phase::Stopped);
}

#[test]
fn feedback_queued_before_a_final_candidate_shares_its_attempt() {
    let mut exec = start(&common::with_completion(LoopPolicy {
        max_recovery_attempts: 1,
        ..LoopPolicy::default()
    }));
    assert_eq!(turn(&mut exec), None);
    // A failure (e.g. in the batch that ended with a tool-induced stop)
    // charges the turn's attempt; then the final candidate is checked.
    assert_eq!(fail(&mut exec, "a", 1), Decision::Continue);
    assert_eq!(exec.diagnostics().recovery_attempts_used, 1);
    let FinalDecision::Check(request) = exec.final_candidate("done", &common::view(), None) else {
        panic!("expected a check");
    };
    let verdict = Verdict::new(false, None, Some("Fetch the rows first.".into())).unwrap();
    assert_eq!(
        exec.completion_verdict(request.ticket, &common::view(), Ok(verdict)),
        CheckDecision::Continue
    );
    assert_eq!(exec.diagnostics().recovery_attempts_used, 1);
    // One feedback turn carries both: the charged failure reaches the model.
    let feedback = turn(&mut exec).expect("feedback");
    assert!(feedback.contains("fetch"), "{feedback}");
    assert!(feedback.contains("Fetch the rows first."), "{feedback}");
    assert_eq!(exec.diagnostics().recovery_attempts_used, 1);
}
