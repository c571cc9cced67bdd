//! The check packet's bounds.

use crate::common;

use common::{call, failed, start, view, with_completion};
use serde_json::json;
use verdict_policy::{
    Admission, CheckPacket, CheckerErrorKind, Effect, FailureKind, FinalDecision, LoopPolicy,
    Observation, PacketError, PacketParts, PolicyExecution, StopReason, TaskStateSnapshot,
};
use verdict_policy::{MAX_OBSERVATIONS, MAX_OUTPUT_CHARS, MAX_PACKET_BYTES};

fn packet(
    exec: &mut PolicyExecution,
    output: &str,
    state: Option<TaskStateSnapshot>,
) -> CheckPacket {
    match exec.final_candidate(output, &view(), state) {
        FinalDecision::Check(request) => request.packet,
        other => panic!("expected a check, got {other:?}"),
    }
}

#[test]
fn output_is_bounded_and_flagged() {
    let mut exec = start(&with_completion(LoopPolicy::default()));
    // Multi-byte characters: the bound is in characters.
    let long = "é".repeat(MAX_OUTPUT_CHARS + 5);
    let p = packet(&mut exec, &long, None);
    assert_eq!(p.output_text.chars().count(), MAX_OUTPUT_CHARS);
    assert!(p.output_truncated);
    let mut exec = start(&with_completion(LoopPolicy::default()));
    let exact = "a".repeat(MAX_OUTPUT_CHARS);
    let p = packet(&mut exec, &exact, None);
    assert_eq!(p.output_text, exact);
    assert!(!p.output_truncated);
}

#[test]
fn last_hundred_observations_without_arguments() {
    let mut exec = start(&with_completion(LoopPolicy {
        max_recovery_attempts: 1000,
        ..LoopPolicy::default()
    }));
    let total = MAX_OBSERVATIONS + 20;
    for i in 0..total {
        let args = json!({ "secret-argument": format!("arg-{i}") });
        let id = format!("call-{i}");
        assert_eq!(
            exec.admit(&call(&id, "fetch", Effect::Read, &args)),
            Admission::Run
        );
        if i % 2 == 0 {
            exec.observe(
                common::seq(&id),
                Some(common::succeeded()),
                Some(&json!({"body": format!("result-{i}")})),
            );
        } else {
            exec.observe(
                common::seq(&id),
                Some(failed(FailureKind::Execution, true)),
                None,
            );
        }
    }
    let p = packet(&mut exec, "done", None);
    assert_eq!(p.observations.len(), MAX_OBSERVATIONS);
    assert_eq!(p.observed_tool_calls as usize, total);
    assert!(p.observations_truncated);
    // The most recent, oldest first.
    assert_eq!(p.observations[0].call_id, "call-20");
    assert_eq!(
        p.observations[MAX_OBSERVATIONS - 1].call_id,
        format!("call-{}", total - 1)
    );
    let json = serde_json::to_string(&p).unwrap();
    assert!(!json.contains("secret-argument") && !json.contains("arg-"));
    assert!(!json.contains("result-"));
    assert!(json.contains("\"observedToolCalls\":120"));
    // Failed outcomes carry their kind only.
    assert_eq!(
        p.observations[1].outcome.as_ref().unwrap().failure,
        Some(FailureKind::Execution)
    );
}

#[test]
fn task_state_is_carried() {
    let mut exec = start(&with_completion(LoopPolicy::default()));
    let state = TaskStateSnapshot {
        host_scope: "tenant-a".into(),
        revision: 7,
        generation: 2,
        payload: json!({"artifact": {"id": "A42", "ready": true}}),
    };
    let p = packet(&mut exec, "done", Some(state.clone()));
    assert_eq!(p.task_state, Some(state));
    assert_eq!(p.execution_id, "exec-1");
}

#[test]
fn packet_never_exceeds_one_mib() {
    // 100 observations with long call ids and a large task state: older
    // observations are dropped to fit.
    let mut exec = start(&with_completion(LoopPolicy::default()));
    for i in 0..MAX_OBSERVATIONS {
        let args = json!({ "n": i });
        let id = format!("{i}-{}", "c".repeat(8 * 1024));
        exec.admit(&call(&id, "fetch", Effect::Read, &args));
        exec.observe(common::seq(&id), Some(common::succeeded()), Some(&json!(i)));
    }
    let state = TaskStateSnapshot {
        host_scope: "t".into(),
        revision: 1,
        generation: 0,
        payload: json!("s".repeat(600 * 1024)),
    };
    let p = packet(&mut exec, &"o".repeat(MAX_OUTPUT_CHARS), Some(state));
    let size = serde_json::to_vec(&p).unwrap().len();
    assert!(size <= MAX_PACKET_BYTES, "{size}");
    assert!(p.observations.len() < MAX_OBSERVATIONS && !p.observations.is_empty());
    assert!(p.observations_truncated);
    assert_eq!(p.observed_tool_calls as usize, MAX_OBSERVATIONS);
    // A task state that alone exceeds the bound cannot be checked.
    let mut exec = start(&with_completion(LoopPolicy::default()));
    let state = TaskStateSnapshot {
        host_scope: "t".into(),
        revision: 1,
        generation: 0,
        payload: json!("s".repeat(MAX_PACKET_BYTES)),
    };
    assert_eq!(
        exec.final_candidate("done", &view(), Some(state)),
        FinalDecision::Stop {
            reason: StopReason::CheckerError
        }
    );
    assert_eq!(
        exec.diagnostics().checker_error,
        Some(CheckerErrorKind::PacketTooLarge)
    );
}

/// A packet that did not come from the engine (a file, another host) is
/// accepted only within the same bounds, and refused rather than cut.
#[test]
fn packets_from_outside_are_refused_not_cut() {
    let base = || PacketParts {
        execution_id: "e".into(),
        iteration: 1,
        output_text: "done".into(),
        output_truncated: false,
        observations: Vec::new(),
        observed_tool_calls: 0,
        observations_truncated: false,
        task_state: None,
    };
    let observation = |i: usize| Observation {
        tool_name: "t".into(),
        call_id: format!("c{i}"),
        effect: Effect::Read,
        outcome: None,
    };
    assert!(CheckPacket::from_parts(base()).is_ok());

    let mut long = base();
    long.output_text = "é".repeat(MAX_OUTPUT_CHARS + 1);
    assert_eq!(
        CheckPacket::from_parts(long),
        Err(PacketError::OutputTooLong {
            chars: MAX_OUTPUT_CHARS + 1
        })
    );
    let mut many = base();
    many.observations = (0..=MAX_OBSERVATIONS).map(observation).collect();
    many.observed_tool_calls = 500;
    many.observations_truncated = true;
    assert_eq!(
        CheckPacket::from_parts(many),
        Err(PacketError::TooManyObservations {
            count: MAX_OBSERVATIONS + 1
        })
    );
    let mut undercounted = base();
    undercounted.observations = vec![observation(0), observation(1)];
    undercounted.observed_tool_calls = 1;
    assert!(matches!(
        CheckPacket::from_parts(undercounted),
        Err(PacketError::ObservedBelowCarried { .. })
    ));
    let mut unflagged = base();
    unflagged.observations = vec![observation(0)];
    unflagged.observed_tool_calls = 3;
    assert!(matches!(
        CheckPacket::from_parts(unflagged),
        Err(PacketError::TruncationMismatch { flag: false, .. })
    ));
    let mut large = base();
    large.task_state = Some(TaskStateSnapshot {
        host_scope: "t".into(),
        revision: 1,
        generation: 0,
        payload: json!("s".repeat(MAX_PACKET_BYTES)),
    });
    assert!(matches!(
        CheckPacket::from_parts(large),
        Err(PacketError::TooLarge { .. })
    ));

    // Parsing JSON applies the same rules; an accepted packet round-trips.
    let text = serde_json::to_string(&base()).unwrap();
    let parsed: CheckPacket = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed.clone().into_parts(), base());
    assert_eq!(serde_json::to_string(&parsed).unwrap(), text);
    let mut bad = base();
    bad.output_text = "x".repeat(MAX_OUTPUT_CHARS + 1);
    let text = serde_json::to_string(&bad).unwrap();
    assert!(serde_json::from_str::<CheckPacket>(&text).is_err());
    assert!(matches!(
        CheckPacket::from_json(&text),
        Err(PacketError::OutputTooLong { .. })
    ));
    assert!(matches!(
        CheckPacket::from_json("{\"executionId\": 1}"),
        Err(PacketError::Malformed(_))
    ));
}
