//! `artifact-ready`: the spec's example completion checker.
//!
//! Complete only when a `read_artifact` call succeeded and artifact `A42` is
//! JSON with `"ready": true`; otherwise not complete, with the feedback
//! [`FEEDBACK`] and a reason naming what is missing.

use verdict_guest::{ArtifactError, Artifacts, JsonReadError, Packet, Verdict, Verifier};

/// The artifact that must be ready.
pub const ARTIFACT_ID: &str = "A42";
/// The tool whose successful call proves the model read the artifact.
pub const READ_TOOL: &str = "read_artifact";
/// Feedback returned whenever the execution is not complete.
pub const FEEDBACK: &str = "Read and verify artifact A42 before finishing.";

/// The completion checker.
#[derive(Debug, Default)]
pub struct ArtifactReady;

impl Verifier for ArtifactReady {
    fn check(&self, packet: &Packet, artifacts: &dyn Artifacts) -> Verdict {
        if !packet.succeeded(READ_TOOL) {
            return not_complete("no successful read_artifact call");
        }
        match artifacts.read_json(ARTIFACT_ID) {
            Ok(value) if value.get("ready") == Some(&true.into()) => {
                Verdict::complete().with_reason("artifact A42 is ready")
            }
            Ok(_) => not_complete("artifact A42 is not ready"),
            Err(JsonReadError::InvalidJson(_)) => not_complete("artifact A42 is not JSON"),
            Err(JsonReadError::Artifact(ArtifactError::NotFound)) => {
                not_complete("artifact A42 does not exist")
            }
            Err(JsonReadError::Artifact(error)) => {
                not_complete(format!("artifact A42 unreadable: {}", error.code()))
            }
        }
    }
}

fn not_complete(reason: impl Into<String>) -> Verdict {
    Verdict::incomplete(FEEDBACK).with_reason(reason)
}

verdict_guest::export!(completion: ArtifactReady);

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_guest::{Effect, FailureKind, MemoryArtifacts, Observation, Outcome};

    fn read_call(outcome: Outcome) -> Packet {
        Packet::new("exec").with_observation(
            Observation::new(READ_TOOL, "call-1", Effect::Read).with_outcome(outcome),
        )
    }

    fn ready_store(json: &str) -> MemoryArtifacts {
        MemoryArtifacts::new().with(ARTIFACT_ID, json)
    }

    fn check(packet: &Packet, artifacts: &MemoryArtifacts) -> Verdict {
        ArtifactReady.check(packet, artifacts)
    }

    #[test]
    fn complete_when_read_succeeded_and_artifact_ready() {
        let verdict = check(
            &read_call(Outcome::succeeded()),
            &ready_store(r#"{"ready":true}"#),
        );
        assert!(verdict.complete);
        assert_eq!(verdict.feedback, None);
        assert!(verdict.within_bounds());
    }

    #[test]
    fn not_complete_without_a_successful_read() {
        let store = ready_store(r#"{"ready":true}"#);
        for packet in [
            Packet::new("exec"),
            read_call(Outcome::failed(FailureKind::Execution)),
            Packet::new("exec").with_observation(Observation::new(READ_TOOL, "c", Effect::Read)),
        ] {
            let verdict = check(&packet, &store);
            assert!(!verdict.complete);
            assert_eq!(verdict.feedback.as_deref(), Some(FEEDBACK));
            assert_eq!(
                verdict.reason.as_deref(),
                Some("no successful read_artifact call")
            );
        }
    }

    #[test]
    fn not_complete_unless_ready_is_exactly_true() {
        let packet = read_call(Outcome::succeeded());
        for json in [
            r#"{"ready":false}"#,
            r#"{"ready":"true"}"#,
            r#"{}"#,
            "[true]",
        ] {
            let verdict = check(&packet, &ready_store(json));
            assert!(!verdict.complete, "{json}");
            assert_eq!(verdict.feedback.as_deref(), Some(FEEDBACK));
            assert_eq!(verdict.reason.as_deref(), Some("artifact A42 is not ready"));
        }
    }

    #[test]
    fn missing_unreadable_or_invalid_artifact_is_not_complete() {
        let packet = read_call(Outcome::succeeded());
        let cases = [
            (MemoryArtifacts::new(), "artifact A42 does not exist"),
            (ready_store("{ready"), "artifact A42 is not JSON"),
            (
                ready_store(r#"{"ready":true}"#).with_max_bytes(4),
                "artifact A42 unreadable: too-large",
            ),
            (
                ready_store(r#"{"ready":true}"#).with_read_limit(0),
                "artifact A42 unreadable: limit-reached",
            ),
        ];
        for (store, reason) in cases {
            let verdict = check(&packet, &store);
            assert!(!verdict.complete);
            assert_eq!(verdict.reason.as_deref(), Some(reason));
            assert_eq!(verdict.feedback.as_deref(), Some(FEEDBACK));
        }
    }
}
