//! The check packet's bounds.

mod common;

use common::{call, failed, start, view, with_completion};
use serde_json::json;
use verdict_policy::packet::{MAX_OBSERVATIONS, MAX_OUTPUT_CHARS, MAX_PACKET_BYTES};
use verdict_policy::{
    Admission, CheckPacket, CheckerErrorKind, Effect, FailureKind, FinalDecision, LoopPolicy,
    PolicyExecution, StopReason, TaskStateSnapshot,
};

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
