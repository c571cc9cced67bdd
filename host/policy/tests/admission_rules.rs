//! Admission and observation rules: reads, writes, outcomes.

use crate::common;

use common::{call, failed, read, start, status, succeeded, turn};
use serde_json::{Value, json};
use verdict_policy::{
    Admission, Decision, Effect, FailureKind, FinalDecision, LoopPolicy, OutcomeStatus, StopReason,
    ToolCallRequest,
};

fn big_string(bytes: usize) -> Value {
    Value::String("x".repeat(bytes))
}

#[test]
fn unfingerprintable_arguments_stop_before_dispatch() {
    let mut exec = start(&LoopPolicy::default());
    let args = json!({ "body": big_string(70 * 1024) });
    assert_eq!(
        exec.admit(&call("a", "upload", Effect::Write, &args)),
        Admission::Stop {
            reason: StopReason::Unfingerprintable
        }
    );
    assert_eq!(exec.diagnostics().counters.admissions, 0);
    // Also for reads, and the execution stays stopped.
    let small = json!({});
    assert!(matches!(
        exec.admit(&call("b", "get", Effect::Read, &small)),
        Admission::Stop { .. }
    ));
}

#[test]
fn repeated_read_gets_feedback_then_stops() {
    let mut exec = start(&LoopPolicy::default());
    let args = json!({"id": "A42"});
    let result = json!({"ready": false});
    turn(&mut exec);
    read(&mut exec, "r1", "read_artifact", &args, &result);
    assert_eq!(turn(&mut exec), None);
    read(&mut exec, "r2", "read_artifact", &args, &result);
    let feedback = turn(&mut exec).expect("repeated read feedback");
    assert!(feedback.starts_with("[host feedback]"));
    assert!(feedback.contains("read_artifact"));
    assert_eq!(exec.diagnostics().counters.repeated_reads, 1);
    // The same unproductive read again, even after feedback: stop.
    assert_eq!(
        exec.admit(&call("r3", "read_artifact", Effect::Read, &args)),
        Admission::Stop {
            reason: StopReason::RepeatedRead
        }
    );
}

#[test]
fn changed_argument_proceeds_after_feedback() {
    let mut exec = start(&LoopPolicy::default());
    let args = json!({"id": "A42"});
    let result = json!({"ready": false});
    read(&mut exec, "r1", "read_artifact", &args, &result);
    read(&mut exec, "r2", "read_artifact", &args, &result);
    assert!(turn(&mut exec).is_some());
    // Same tool, changed argument: runs. Different tool, same argument: runs.
    let other = json!({"id": "A43"});
    assert_eq!(
        exec.admit(&call("r3", "read_artifact", Effect::Read, &other)),
        Admission::Run
    );
    assert_eq!(
        exec.admit(&call("r4", "read_status", Effect::Read, &args)),
        Admission::Run
    );
}

#[test]
fn changed_result_is_not_a_repeat() {
    let mut exec = start(&LoopPolicy::default());
    let args = json!({"id": "A42"});
    read(&mut exec, "r1", "read_artifact", &args, &json!({"rev": 1}));
    read(&mut exec, "r2", "read_artifact", &args, &json!({"rev": 2}));
    read(&mut exec, "r3", "read_artifact", &args, &json!({"rev": 3}));
    assert_eq!(turn(&mut exec), None);
    assert_eq!(exec.diagnostics().counters.repeated_reads, 0);
    // Key order in the result does not make it a different result.
    read(
        &mut exec,
        "r4",
        "read_artifact",
        &args,
        &json!({"a": 1, "b": 2}),
    );
    let reordered: Value = serde_json::from_str(r#"{"b": 2, "a": 1}"#).unwrap();
    read(&mut exec, "r5", "read_artifact", &args, &reordered);
    assert_eq!(exec.diagnostics().counters.repeated_reads, 1);
}

#[test]
fn unfingerprintable_results_never_repeat() {
    let mut exec = start(&LoopPolicy::default());
    let args = json!({"path": "/big"});
    let huge = big_string(100 * 1024);
    for id in ["r1", "r2", "r3", "r4"] {
        read(&mut exec, id, "read_file", &args, &huge);
    }
    assert_eq!(turn(&mut exec), None);
    assert_eq!(exec.diagnostics().counters.repeated_reads, 0);
    assert!(!exec.is_finished());
}

#[test]
fn allowlisted_reads_may_repeat() {
    let policy = LoopPolicy {
        read_allowlist: vec!["poll_status".into()],
        ..LoopPolicy::default()
    };
    let mut exec = start(&policy);
    let args = json!({"job": 7});
    let result = json!({"state": "running"});
    for id in ["p1", "p2", "p3", "p4", "p5"] {
        read(&mut exec, id, "poll_status", &args, &result);
    }
    assert_eq!(turn(&mut exec), None);
    assert_eq!(exec.diagnostics().counters.repeated_reads, 0);
    // A tool not on the list is still accounted.
    read(&mut exec, "q1", "read_job", &args, &result);
    read(&mut exec, "q2", "read_job", &args, &result);
    assert_eq!(exec.diagnostics().counters.repeated_reads, 1);
}

#[test]
fn allowlist_never_exempts_a_write() {
    let policy = LoopPolicy {
        read_allowlist: vec!["poll_status".into()],
        ..LoopPolicy::default()
    };
    let mut exec = start(&policy);
    let args = json!({"job": 7});
    assert_eq!(
        exec.admit(&call("w1", "poll_status", Effect::Write, &args)),
        Admission::Run
    );
    exec.observe(common::seq("w1"), Some(succeeded()), None);
    assert!(matches!(
        exec.admit(&call("w2", "poll_status", Effect::Write, &args)),
        Admission::Skip { .. }
    ));
}

#[test]
fn duplicate_write_in_one_response_is_skipped() {
    for effect in [Effect::Write, Effect::Unknown] {
        let mut exec = start(&LoopPolicy::default());
        let args = json!({"to": "a@b.c", "body": "hi"});
        let reordered = json!({"body": "hi", "to": "a@b.c"});
        // Both calls of one model response are admitted before either runs.
        assert_eq!(
            exec.admit(&call("c1", "send_mail", effect, &args)),
            Admission::Run
        );
        let second = exec.admit(&call("c2", "send_mail", effect, &reordered));
        let Admission::Skip { feedback } = second else {
            panic!("duplicate admitted: {second:?}");
        };
        assert!(feedback.starts_with("[host feedback]"));
        assert_eq!(exec.diagnostics().counters.admissions, 1);
        assert_eq!(exec.diagnostics().counters.skipped_calls, 1);
        // A different action still runs.
        let other = json!({"to": "x@y.z", "body": "hi"});
        assert_eq!(
            exec.admit(&call("c3", "send_mail", effect, &other)),
            Admission::Run
        );
    }
}

#[test]
fn duplicate_write_requested_again_stops() {
    let mut exec = start(&LoopPolicy::default());
    let args = json!({"amount": 10});
    assert_eq!(
        exec.admit(&call("c1", "pay", Effect::Write, &args)),
        Admission::Run
    );
    exec.observe(common::seq("c1"), Some(succeeded()), None);
    assert!(matches!(
        exec.admit(&call("c2", "pay", Effect::Write, &args)),
        Admission::Skip { .. }
    ));
    assert!(turn(&mut exec).is_some());
    assert_eq!(
        exec.admit(&call("c3", "pay", Effect::Write, &args)),
        Admission::Stop {
            reason: StopReason::DuplicateAction
        }
    );
}

#[test]
fn not_started_releases_the_admission() {
    let mut exec = start(&LoopPolicy::default());
    let args = json!({"amount": 10});
    assert_eq!(
        exec.admit(&call("c1", "pay", Effect::Write, &args)),
        Admission::Run
    );
    assert_eq!(
        exec.observe(
            common::seq("c1"),
            Some(status(OutcomeStatus::NotStarted)),
            None
        ),
        Decision::Continue
    );
    assert_eq!(
        exec.admit(&call("c2", "pay", Effect::Write, &args)),
        Admission::Run
    );
    // Other outcomes keep it: a failed write cannot be repeated.
    exec.observe(
        common::seq("c2"),
        Some(failed(FailureKind::Execution, true)),
        None,
    );
    assert!(matches!(
        exec.admit(&call("c3", "pay", Effect::Write, &args)),
        Admission::Skip { .. }
    ));
}

#[test]
fn absent_outcome_of_a_write_is_uncertain() {
    let mut exec = start(&LoopPolicy::default());
    let args = json!({"amount": 10});
    assert_eq!(
        exec.admit(&call("c1", "pay", Effect::Write, &args)),
        Admission::Run
    );
    assert_eq!(
        exec.observe(common::seq("c1"), None, None),
        Decision::Stop {
            reason: StopReason::UncertainEffect
        }
    );
    assert_eq!(exec.diagnostics().reason, Some(StopReason::UncertainEffect));
    // A read with no outcome is a failure to recover from, not a stop.
    let mut exec = start(&LoopPolicy::default());
    assert_eq!(
        exec.admit(&call("r1", "get", Effect::Read, &args)),
        Admission::Run
    );
    assert_eq!(
        exec.observe(common::seq("r1"), None, None),
        Decision::Continue
    );
    assert_eq!(exec.diagnostics().counters.failures, 1);
}

#[test]
fn unknown_outcome_of_unknown_effect_is_uncertain() {
    let stops = |effect: Effect, outcome| {
        let mut exec = start(&LoopPolicy::default());
        let args = json!({});
        exec.admit(&call("c1", "tool", effect, &args));
        exec.observe(common::seq("c1"), Some(outcome), None)
            == Decision::Stop {
                reason: StopReason::UncertainEffect,
            }
    };
    assert!(stops(Effect::Unknown, status(OutcomeStatus::Unknown)));
    assert!(stops(Effect::Write, status(OutcomeStatus::Unknown)));
    assert!(stops(Effect::Write, failed(FailureKind::Timeout, true)));
    assert!(stops(Effect::Unknown, failed(FailureKind::Cancelled, true)));
    assert!(!stops(Effect::Write, failed(FailureKind::Cancelled, false)));
    assert!(!stops(Effect::Write, failed(FailureKind::Execution, true)));
    assert!(!stops(Effect::Read, status(OutcomeStatus::Unknown)));
    assert!(!stops(Effect::Read, failed(FailureKind::Timeout, true)));
}

#[test]
fn application_failure_data_is_success() {
    let mut exec = start(&LoopPolicy {
        max_recovery_attempts: 0,
        ..LoopPolicy::default()
    });
    let args = json!({"id": 1});
    assert_eq!(
        exec.admit(&call("c1", "charge", Effect::Write, &args)),
        Admission::Run
    );
    let data = json!({"success": false, "error": "card declined"});
    assert_eq!(
        exec.observe(common::seq("c1"), Some(succeeded()), Some(&data)),
        Decision::Continue
    );
    let diag = exec.diagnostics();
    assert_eq!(diag.counters.failures, 0);
    assert_eq!(diag.reason, None);
    assert_eq!(turn(&mut exec), None);
}

#[test]
fn permission_failure_recovers_without_receipt() {
    for kind in [FailureKind::Permission, FailureKind::Arguments] {
        let mut exec = start(&LoopPolicy::default());
        let args = json!({"path": "/etc"});
        exec.admit(&call("c1", "delete", Effect::Write, &args));
        // Even if the reporter claims a receipt, none is recorded.
        assert_eq!(
            exec.observe(common::seq("c1"), Some(failed(kind, true)), None),
            Decision::Continue
        );
        let diag = exec.diagnostics();
        assert_eq!(diag.counters.failures, 1);
        assert_eq!(diag.recovery_attempts_used, 1);
        let feedback = turn(&mut exec).expect("failure feedback");
        assert!(feedback.starts_with("[host feedback]"));
        let request = match exec.final_candidate("done", &common::view(), None) {
            verdict_policy::FinalDecision::Answer => None,
            other => Some(other),
        };
        assert_eq!(request, None);
        let mut with_checker = start(&common::with_completion(LoopPolicy::default()));
        with_checker.admit(&call("c1", "delete", Effect::Write, &args));
        with_checker.observe(common::seq("c1"), Some(failed(kind, true)), None);
        let verdict_policy::FinalDecision::Check(request) =
            with_checker.final_candidate("done", &common::view(), None)
        else {
            panic!("expected a check");
        };
        let outcome = request.packet.observations[0].outcome.clone().unwrap();
        assert!(!outcome.executed);
        assert_eq!(outcome.failure, Some(kind));
    }
}

#[test]
fn call_ids_are_not_action_identity() {
    let mut exec = start(&common::with_completion(LoopPolicy::default()));
    let list = json!({});
    let read = json!({"id": "A42"});
    let write = json!({"amount": 10});
    let other_write = json!({"amount": 20});
    // Providers send no id, an empty one, or the same one in every
    // response: different actions under one id all run.
    let requests = [
        (1, "list_artifacts", Effect::Read, &list),
        (2, "read_artifact", Effect::Read, &read),
        (3, "pay", Effect::Write, &write),
        (4, "pay", Effect::Write, &other_write),
    ];
    for (sequence, tool, effect, args) in requests {
        let request = ToolCallRequest {
            sequence,
            call_id: "gemini_call_0",
            tool_name: tool,
            effect,
            arguments: args,
        };
        assert_eq!(exec.admit(&request), Admission::Run, "{tool} {args}");
        assert_eq!(
            exec.observe(sequence, Some(succeeded()), Some(&json!(sequence))),
            Decision::Continue
        );
    }
    let diag = exec.diagnostics();
    assert_eq!(diag.counters.admissions, 4);
    assert_eq!(diag.counters.observations, 4);
    assert_eq!(diag.counters.skipped_calls, 0);
    assert_eq!(diag.recovery_attempts_used, 0);
    // A sequence number is one call: admitting it again is a replay.
    let again = ToolCallRequest {
        sequence: 2,
        call_id: "other",
        tool_name: "read_artifact",
        effect: Effect::Read,
        arguments: &json!({"id": "A43"}),
    };
    assert!(matches!(exec.admit(&again), Admission::Skip { .. }));
    // Observations carry the ids the loop gave.
    let FinalDecision::Check(request) = exec.final_candidate("done", &common::view(), None) else {
        panic!("expected a check");
    };
    assert!(
        request
            .packet
            .observations
            .iter()
            .all(|o| o.call_id == "gemini_call_0")
    );
}
