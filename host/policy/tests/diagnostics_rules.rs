//! Diagnostics: names as the spec writes them; snapshots detached (checked
//! at compile time).

use crate::common;

use common::{start, turn, view, with_completion};
use serde_json::{Value, json};
use verdict_policy::{
    CheckDecision, CheckerError, CheckerErrorKind, FinalDecision, LoopDiagnostics, LoopPolicy,
    Phase, PolicyExecution, StopReason, Verdict,
};

#[test]
fn diagnostics_serialize_as_the_spec_names_them() {
    let names = |value: Value| value.as_str().unwrap().to_owned();
    let phases = [
        (Phase::Running, "running"),
        (Phase::Recovering, "recovering"),
        (Phase::Complete, "complete"),
        (Phase::InputNeeded, "input-needed"),
        (Phase::Stopped, "stopped"),
    ];
    for (phase, name) in phases {
        assert_eq!(names(serde_json::to_value(phase).unwrap()), name);
    }
    let reasons = [
        (StopReason::Completed, "completed"),
        (StopReason::AnswerReturned, "answer_returned"),
        (StopReason::UncertainEffect, "uncertain_effect"),
        (StopReason::CheckerError, "checker_error"),
        (StopReason::StateChanged, "state_changed"),
        (StopReason::PendingAsync, "pending_async"),
        (StopReason::MaxIterations, "max_iterations"),
        (StopReason::RecoveryExhausted, "recovery_exhausted"),
        (StopReason::RepeatedRead, "repeated_read"),
        (StopReason::TrackingBound, "tracking_bound"),
        (StopReason::DuplicateAction, "duplicate_action"),
        (StopReason::Unfingerprintable, "unfingerprintable"),
    ];
    for (reason, name) in reasons {
        assert_eq!(names(serde_json::to_value(reason).unwrap()), name);
    }
    // Checker error classes: fuel exhaustion is not a timeout.
    let kinds = [
        (CheckerErrorKind::Timeout, "timeout"),
        (CheckerErrorKind::OutOfFuel, "out_of_fuel"),
        (CheckerErrorKind::Cancelled, "cancelled"),
        (CheckerErrorKind::Failed, "failed"),
        (CheckerErrorKind::InvalidVerdict, "invalid_verdict"),
        (CheckerErrorKind::InvalidProgressKey, "invalid_progress_key"),
        (CheckerErrorKind::PacketTooLarge, "packet_too_large"),
    ];
    for (kind, name) in kinds {
        assert_eq!(names(serde_json::to_value(kind).unwrap()), name);
    }
    assert_eq!(CheckerError::OutOfFuel.kind(), CheckerErrorKind::OutOfFuel);
    // A full snapshot round-trips through JSON.
    let mut exec = start(&with_completion(LoopPolicy::default()));
    turn(&mut exec);
    let FinalDecision::Check(request) = exec.final_candidate("done", &view(), None) else {
        panic!("expected a check");
    };
    let refused = Verdict::new(false, Some("no receipt".into()), None).unwrap();
    assert_eq!(
        exec.completion_verdict(request.ticket, &view(), Ok(refused)),
        CheckDecision::Continue
    );
    let diag = exec.diagnostics();
    let value: Value = serde_json::from_str(&diag.to_json()).unwrap();
    assert_eq!(value["executionId"], json!(null));
    assert_eq!(value["execution_id"], "exec-1");
    assert_eq!(value["phase"], "recovering");
    assert_eq!(value["recovery_attempts_used"], 1);
    assert_eq!(value["recovery_attempts_allowed"], 2);
    assert_eq!(value["last_verdict"]["reason"], "no receipt");
    let back: LoopDiagnostics = serde_json::from_value(value).unwrap();
    assert_eq!(back, diag);
}

// Snapshots are detached by construction, which the compiler checks:
// `PolicyExecution::diagnostics` returns an owned `LoopDiagnostics` (plain
// data, `'static`: it borrows nothing from the execution), so no later event
// can reach a snapshot taken earlier. The path where a snapshot is taken
// through a shared handle while the execution runs (`Agent::loop_diagnostics`
// on a clone of the agent) is tested behaviourally in verdict-agent:
// `lifecycle::loop_diagnostics_describe_the_active_execution_while_it_runs`.
// The agent loop also holds an execution across await points, on any thread:
// executions, their diagnostics and policies are `Send + Sync` (no test can
// show more than the compiler does here).
const _: fn() = || {
    fn owned<T: Clone + PartialEq + Send + Sync + 'static>() {}
    owned::<LoopDiagnostics>();
    owned::<LoopPolicy>();
    // A struct field admits no elided lifetime: this stops compiling if a
    // snapshot (or an execution) ever borrows.
    #[allow(dead_code)]
    struct Held(LoopDiagnostics, PolicyExecution);
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<Held>();
    // A snapshot is returned by value, not as a view into the execution.
    let _: fn(&PolicyExecution) -> LoopDiagnostics = PolicyExecution::diagnostics;
};
