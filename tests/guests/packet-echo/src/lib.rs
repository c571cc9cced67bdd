//! Contract test guest: echoes the packet it received, as the JSON the host's
//! policy serializes its `CheckPacket` to (camelCase keys, absent options
//! left out, the task-state payload as a JSON value). The completion role
//! answers `complete: false` with the echo as feedback; the progress role
//! returns the echo as the key. `tests/contract.rs` compares it with the
//! host's packet: policy → WIT → guest SDK, field by field. An echo longer
//! than the answer may carry is replaced by its digest (`sha256:` and the
//! hex digest of its bytes), so large packets can still be compared between
//! the standard and the packed entry points.

use sha2::{Digest, Sha256};
use verdict_guest::serde_json::{Map, Value, json};
use verdict_guest::{
    Artifacts, Effect, FailureKind, MAX_FEEDBACK_CHARS, MAX_PROGRESS_KEY_CHARS, Observation,
    Outcome, OutcomeStatus, Packet, ProgressKey, TaskState, Verdict, Verifier,
};

/// The reason of every echo verdict.
pub const REASON: &str = "echo";

/// Echoes the packet.
#[derive(Debug, Default)]
pub struct PacketEcho;

impl Verifier for PacketEcho {
    fn check(&self, packet: &Packet, _artifacts: &dyn Artifacts) -> Verdict {
        Verdict::incomplete(fit(echo(packet), MAX_FEEDBACK_CHARS)).with_reason(REASON)
    }
}

impl ProgressKey for PacketEcho {
    fn progress_key(&self, packet: &Packet, _artifacts: &dyn Artifacts) -> String {
        fit(echo(packet), MAX_PROGRESS_KEY_CHARS)
    }
}

verdict_guest::export!(completion: PacketEcho, progress: PacketEcho);

/// The prefix of a digest standing for an echo too long to answer.
pub const DIGEST_PREFIX: &str = "sha256:";

/// `echo` when it has at most `max_chars` characters, otherwise its digest.
pub fn fit(echo: String, max_chars: usize) -> String {
    if echo.chars().count() <= max_chars {
        echo
    } else {
        format!(
            "{DIGEST_PREFIX}{}",
            hex::encode(Sha256::digest(echo.as_bytes()))
        )
    }
}

/// The packet as compact JSON. Every struct is destructured whole, so a
/// field added to the SDK's packet does not compile here until it is echoed.
pub fn echo(packet: &Packet) -> String {
    let Packet {
        execution_id,
        iteration,
        output_text,
        output_truncated,
        observations,
        observed_tool_calls,
        observations_truncated,
        task_state,
    } = packet;
    let mut out = Map::new();
    out.insert("executionId".into(), json!(execution_id));
    out.insert("iteration".into(), json!(iteration));
    out.insert("outputText".into(), json!(output_text));
    out.insert("outputTruncated".into(), json!(output_truncated));
    out.insert(
        "observations".into(),
        Value::Array(observations.iter().map(observation).collect()),
    );
    out.insert("observedToolCalls".into(), json!(observed_tool_calls));
    out.insert(
        "observationsTruncated".into(),
        json!(observations_truncated),
    );
    if let Some(state) = task_state {
        out.insert("taskState".into(), self::task_state(state));
    }
    Value::Object(out).to_string()
}

fn observation(observation: &Observation) -> Value {
    let Observation {
        tool_name,
        call_id,
        effect,
        outcome,
    } = observation;
    let mut out = Map::new();
    out.insert("toolName".into(), json!(tool_name));
    out.insert("callId".into(), json!(call_id));
    out.insert("effect".into(), json!(effect_name(*effect)));
    if let Some(outcome) = outcome {
        out.insert("outcome".into(), self::outcome(outcome));
    }
    Value::Object(out)
}

fn outcome(outcome: &Outcome) -> Value {
    let Outcome {
        status,
        failure,
        executed,
        result_fingerprint,
    } = outcome;
    let mut out = Map::new();
    out.insert("status".into(), json!(status_name(*status)));
    if let Some(kind) = failure {
        out.insert("failure".into(), json!(failure_name(*kind)));
    }
    out.insert("executed".into(), json!(executed));
    if let Some(fingerprint) = result_fingerprint {
        out.insert("resultFingerprint".into(), json!(fingerprint));
    }
    Value::Object(out)
}

fn task_state(state: &TaskState) -> Value {
    let TaskState {
        host_scope,
        revision,
        generation,
        payload_json,
    } = state;
    // Text that is not JSON is echoed as a string, which the comparison
    // then shows.
    let payload = verdict_guest::serde_json::from_str(payload_json)
        .unwrap_or_else(|_| Value::String(payload_json.clone()));
    json!({
        "hostScope": host_scope,
        "revision": revision,
        "generation": generation,
        "payload": payload,
    })
}

fn effect_name(effect: Effect) -> &'static str {
    match effect {
        Effect::Read => "read",
        Effect::Write => "write",
        Effect::Unknown => "unknown",
    }
}

fn status_name(status: OutcomeStatus) -> &'static str {
    match status {
        OutcomeStatus::Succeeded => "succeeded",
        OutcomeStatus::Failed => "failed",
        OutcomeStatus::NotStarted => "not_started",
        OutcomeStatus::Unknown => "unknown",
    }
}

fn failure_name(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::Permission => "permission",
        FailureKind::Arguments => "arguments",
        FailureKind::Execution => "execution",
        FailureKind::Timeout => "timeout",
        FailureKind::Cancelled => "cancelled",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_every_field_and_leaves_absent_options_out() {
        let packet = Packet::new("e")
            .with_output("done")
            .with_observation(
                Observation::new("read", "c1", Effect::Read)
                    .with_outcome(Outcome::failed(FailureKind::Timeout).with_fingerprint("ab")),
            )
            .with_observation(Observation::new("write", "c2", Effect::Write))
            .with_task_state(TaskState {
                host_scope: "t".into(),
                revision: 3,
                generation: 1,
                payload_json: r#"{"a":[1,2]}"#.into(),
            });
        let echoed: Value = verdict_guest::serde_json::from_str(&echo(&packet))
            .unwrap_or_else(|e| panic!("echo is JSON: {e}"));
        assert_eq!(
            echoed,
            json!({
                "executionId": "e",
                "iteration": 0,
                "outputText": "done",
                "outputTruncated": false,
                "observations": [
                    {"toolName": "read", "callId": "c1", "effect": "read", "outcome": {
                        "status": "failed", "failure": "timeout", "executed": true,
                        "resultFingerprint": "ab"}},
                    {"toolName": "write", "callId": "c2", "effect": "write"},
                ],
                "observedToolCalls": 2,
                "observationsTruncated": false,
                "taskState": {"hostScope": "t", "revision": 3, "generation": 1,
                    "payload": {"a": [1, 2]}},
            })
        );
    }
}
