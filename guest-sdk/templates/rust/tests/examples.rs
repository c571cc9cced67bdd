//! The shipped examples, checked natively: the same files `verdict check
//! --packet examples/… --artifacts examples/artifacts` reads (README.md), so
//! the examples and the logic cannot drift apart. `packet` reads the packet
//! JSON of `verdict check` into a `Packet`: reuse it for packets of your own.

use std::path::{Path, PathBuf};

use verdict_guest::serde_json::{self, Value};
use verdict_guest::{
    Effect, FailureKind, MemoryArtifacts, Observation, Outcome, OutcomeStatus, Packet, TaskState,
    Verdict, Verifier,
};

use {{crate_name}}::{Checker, FEEDBACK};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

#[test]
fn complete_json_is_complete() {
    let verdict = check("complete.json");
    assert!(verdict.complete, "{verdict:?}");
    assert_eq!(verdict.reason.as_deref(), Some("status.json says done"));
}

#[test]
fn not_complete_json_is_not_complete() {
    let verdict = check("not-complete.json");
    assert!(!verdict.complete, "{verdict:?}");
    assert_eq!(
        verdict.reason.as_deref(),
        Some("no successful write_artifact call")
    );
    assert_eq!(verdict.feedback.as_deref(), Some(FEEDBACK));
}

/// The checker's verdict on `examples/{name}` with `examples/artifacts`.
fn check(name: &str) -> Verdict {
    let text = std::fs::read_to_string(examples().join(name)).unwrap();
    Checker.check(&packet(&serde_json::from_str(&text).unwrap()), &artifacts())
}

/// Every file under `examples/artifacts`, by its `/`-separated relative
/// path: the artifacts `verdict check --artifacts` serves.
fn artifacts() -> MemoryArtifacts {
    let root = examples().join("artifacts");
    let mut store = MemoryArtifacts::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let id = path.strip_prefix(&root).unwrap().to_str().unwrap();
                store.insert(id.replace('\\', "/"), std::fs::read(&path).unwrap());
            }
        }
    }
    store
}

/// A packet in the JSON of `verdict check --packet` (camelCase fields).
fn packet(json: &Value) -> Packet<'static> {
    Packet {
        execution_id: text(json, "executionId"),
        iteration: count(json, "iteration"),
        output_text: text(json, "outputText"),
        output_truncated: json["outputTruncated"].as_bool().unwrap_or(false),
        observations: json["observations"]
            .as_array()
            .into_iter()
            .flatten()
            .map(observation)
            .collect(),
        observed_tool_calls: count(json, "observedToolCalls"),
        observations_truncated: json["observationsTruncated"].as_bool().unwrap_or(false),
        task_state: json.get("taskState").map(|state| TaskState {
            host_scope: text(state, "hostScope"),
            revision: state["revision"].as_u64().unwrap(),
            generation: state["generation"].as_u64().unwrap_or(0),
            payload_json: state["payload"].to_string(),
        }),
    }
}

fn observation(json: &Value) -> Observation<'static> {
    let effect = match json["effect"].as_str().unwrap() {
        "read" => Effect::Read,
        "write" => Effect::Write,
        "unknown" => Effect::Unknown,
        other => panic!("unknown effect {other}"),
    };
    let mut observation = Observation::new(text(json, "toolName"), text(json, "callId"), effect);
    observation.outcome = json.get("outcome").map(|outcome| Outcome {
        status: match outcome["status"].as_str().unwrap() {
            "succeeded" => OutcomeStatus::Succeeded,
            "failed" => OutcomeStatus::Failed,
            "not_started" => OutcomeStatus::NotStarted,
            "unknown" => OutcomeStatus::Unknown,
            other => panic!("unknown outcome status {other}"),
        },
        failure: outcome["failure"].as_str().map(|kind| match kind {
            "permission" => FailureKind::Permission,
            "arguments" => FailureKind::Arguments,
            "execution" => FailureKind::Execution,
            "timeout" => FailureKind::Timeout,
            "cancelled" => FailureKind::Cancelled,
            other => panic!("unknown failure kind {other}"),
        }),
        executed: outcome["executed"].as_bool().unwrap_or(false),
        result_fingerprint: outcome["resultFingerprint"]
            .as_str()
            .map(|hex| hex.to_owned().into()),
    });
    observation
}

fn text(json: &Value, key: &str) -> String {
    json[key].as_str().unwrap_or_default().to_owned()
}

fn count(json: &Value, key: &str) -> u32 {
    json[key].as_u64().map_or(0, |n| u32::try_from(n).unwrap())
}
