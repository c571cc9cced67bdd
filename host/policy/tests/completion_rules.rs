//! Completion: verdicts, `answer_returned`, checker errors, late verdicts.

use crate::common;

use common::{call, start, turn, view, with_completion};
use serde_json::json;
use verdict_policy::{
    Admission, CheckDecision, CheckRequest, CheckerError, CheckerErrorKind, Effect, FinalDecision,
    LoopPolicy, Phase, PolicyExecution, RecoveryTrigger, StopReason, Verdict, VerdictParts,
    WorkflowStatus,
};

fn verdict(complete: bool, feedback: Option<&str>) -> Verdict {
    Verdict::new(complete, None, feedback.map(str::to_owned))
        .unwrap_or_else(|e| panic!("the test's verdict is within bounds: {e}"))
}

fn check(exec: &mut PolicyExecution, output: &str) -> CheckRequest {
    match exec.final_candidate(output, &view(), None) {
        FinalDecision::Check(request) => request,
        other => panic!("expected a check, got {other:?}"),
    }
}

#[test]
fn no_checker_answer_returned_without_status() {
    let mut exec = start(&LoopPolicy::default());
    turn(&mut exec);
    assert_eq!(
        exec.final_candidate("All done.", &view(), None),
        FinalDecision::Answer
    );
    let diag = exec.diagnostics();
    assert_eq!(diag.reason, Some(StopReason::AnswerReturned));
    assert_eq!(diag.status, None);
    assert_eq!(diag.phase, Phase::Complete);
    assert_eq!(diag.counters.completion_checks, 0);
}

#[test]
fn only_true_verdict_completes() {
    let mut exec = start(&with_completion(LoopPolicy::default()));
    turn(&mut exec);
    let request = check(&mut exec, "Artifact A42 is ready.");
    // A plausible final text alone is not completion.
    assert_eq!(exec.diagnostics().status, None);
    assert_eq!(exec.diagnostics().phase, Phase::Running);
    assert_eq!(
        exec.completion_verdict(request.ticket, &view(), Ok(verdict(true, None))),
        CheckDecision::Complete
    );
    let diag = exec.diagnostics();
    assert_eq!(diag.status, Some(WorkflowStatus::Completed));
    assert_eq!(diag.reason, Some(StopReason::Completed));
    assert_eq!(diag.phase, Phase::Complete);
}

#[test]
fn false_verdicts_recover_then_need_input() {
    let mut exec = start(&with_completion(LoopPolicy {
        max_recovery_attempts: 1,
        ..LoopPolicy::default()
    }));
    turn(&mut exec);
    let request = check(&mut exec, "Done, trust me.");
    let decision = exec.completion_verdict(
        request.ticket,
        &view(),
        Ok(verdict(
            false,
            Some("Read and verify artifact A42 before finishing."),
        )),
    );
    assert_eq!(decision, CheckDecision::Continue);
    assert_eq!(exec.diagnostics().status, None);
    let feedback = turn(&mut exec).expect("verdict feedback");
    assert!(feedback.starts_with("[host feedback]"));
    assert!(feedback.contains("Read and verify artifact A42"));
    let request = check(&mut exec, "Really done.");
    assert_eq!(
        exec.completion_verdict(request.ticket, &view(), Ok(verdict(false, None))),
        CheckDecision::Stop {
            reason: StopReason::RecoveryExhausted
        }
    );
    let diag = exec.diagnostics();
    assert_eq!(diag.phase, Phase::InputNeeded);
    assert_eq!(diag.last_trigger, Some(RecoveryTrigger::IncompleteVerdict));
    assert_eq!(diag.last_verdict, Some(verdict(false, None)));
    assert_eq!(diag.status, None);
}

#[test]
fn later_bound_keeps_earlier_false_verdict() {
    let mut exec = common::start_bounded(&with_completion(LoopPolicy::default()), Some(1));
    turn(&mut exec);
    let request = check(&mut exec, "done");
    let refused = verdict(false, Some("missing receipt"));
    exec.completion_verdict(request.ticket, &view(), Ok(refused.clone()));
    assert!(matches!(
        exec.begin_turn(),
        verdict_policy::TurnDecision::Stop {
            reason: StopReason::MaxIterations
        }
    ));
    let diag = exec.diagnostics();
    assert_eq!(diag.reason, Some(StopReason::MaxIterations));
    assert_eq!(diag.last_verdict, Some(refused));
}

#[test]
fn invalid_verdict_is_a_checker_error() {
    let mut exec = start(&with_completion(LoopPolicy::default()));
    let request = check(&mut exec, "done");
    let oversized = VerdictParts {
        complete: true,
        reason: Some("r".repeat(401)),
        feedback: None,
    };
    let answer = Verdict::from_parts(oversized).map_err(CheckerError::from);
    assert_eq!(
        exec.completion_verdict(request.ticket, &view(), answer),
        CheckDecision::Stop {
            reason: StopReason::CheckerError
        }
    );
    let diag = exec.diagnostics();
    assert_eq!(diag.status, None);
    assert_eq!(diag.checker_error, Some(CheckerErrorKind::InvalidVerdict));
    assert_eq!(diag.last_verdict, None);
}

#[test]
fn checker_timeout_stops_sanitized() {
    for (error, kind) in [
        (CheckerError::Timeout, CheckerErrorKind::Timeout),
        (CheckerError::OutOfFuel, CheckerErrorKind::OutOfFuel),
        (
            CheckerError::Failed("db password=hunter2".into()),
            CheckerErrorKind::Failed,
        ),
    ] {
        let mut exec = start(&with_completion(LoopPolicy::default()));
        let request = check(&mut exec, "done");
        assert_eq!(
            exec.completion_verdict(request.ticket, &view(), Err(error)),
            CheckDecision::Stop {
                reason: StopReason::CheckerError
            }
        );
        let diag = exec.diagnostics();
        assert_eq!(diag.checker_error, Some(kind));
        assert!(!diag.to_json().contains("hunter2"));
        assert_eq!(diag.phase, Phase::Stopped);
    }
}

#[test]
fn late_verdict_cannot_confirm() {
    // Cancelled check.
    let mut exec = start(&with_completion(LoopPolicy::default()));
    let request = check(&mut exec, "done");
    assert!(exec.cancel_check(request.ticket));
    assert_eq!(
        exec.completion_verdict(request.ticket, &view(), Ok(verdict(true, None))),
        CheckDecision::Ignored
    );
    assert_eq!(exec.diagnostics().status, None);
    assert_eq!(exec.diagnostics().counters.late_verdicts, 1);
    // Finished check: an earlier ticket after a newer check was issued.
    let mut exec = start(&with_completion(LoopPolicy::default()));
    let first = check(&mut exec, "done");
    exec.completion_verdict(first.ticket, &view(), Ok(verdict(false, None)));
    turn(&mut exec);
    let second = check(&mut exec, "done again");
    assert_eq!(
        exec.completion_verdict(first.ticket, &view(), Ok(verdict(true, None))),
        CheckDecision::Ignored
    );
    assert_eq!(exec.diagnostics().status, None);
    assert!(exec.cancel_check(second.ticket));
    // Execution stopped while the check was in flight.
    let args = json!({});
    let mut stopped = start(&with_completion(LoopPolicy::default()));
    let pending = check(&mut stopped, "done");
    assert_eq!(
        stopped.admit(&call("w", "send", Effect::Write, &args)),
        Admission::Run
    );
    stopped.observe(common::seq("w"), None, None);
    assert_eq!(
        stopped.completion_verdict(pending.ticket, &view(), Ok(verdict(true, None))),
        CheckDecision::Ignored
    );
    assert_eq!(
        stopped.diagnostics().reason,
        Some(StopReason::UncertainEffect)
    );
    assert_eq!(stopped.diagnostics().status, None);
}

#[test]
fn final_candidate_with_outstanding_call_is_pending_async() {
    let mut exec = start(&with_completion(LoopPolicy::default()));
    let args = json!({"job": 1});
    assert_eq!(
        exec.admit(&call("async-1", "start_job", Effect::Read, &args)),
        Admission::Run
    );
    assert_eq!(
        exec.final_candidate("done", &view(), None),
        FinalDecision::Stop {
            reason: StopReason::PendingAsync
        }
    );
    assert_eq!(exec.diagnostics().counters.completion_checks, 0);
}
