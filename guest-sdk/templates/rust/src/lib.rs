//! `{{name}}`: a verdict completion checker.
//!
//! Complete only when the model wrote an artifact during this execution (a
//! `write_artifact` call succeeded: a `status.json` left by an earlier run
//! does not count) and artifact `status.json` is JSON with `"done": true`;
//! otherwise not complete, with feedback telling the model what to do.
//! Replace the logic with your own; `cargo test` runs it natively, and
//! `tests/examples.rs` on the shipped `examples/` (see README.md).

use verdict_guest::{ArtifactError, Artifacts, JsonReadError, Packet, Verdict, Verifier};

/// The artifact that must say the work is done.
pub const STATUS_ID: &str = "status.json";
/// The tool whose successful call shows the model wrote it.
pub const WRITE_TOOL: &str = "write_artifact";
/// Feedback returned whenever the execution is not complete.
pub const FEEDBACK: &str =
    "Write status.json with \"done\": true (write_artifact) once the task is finished.";

/// The completion checker.
#[derive(Debug, Default)]
pub struct Checker;

impl Verifier for Checker {
    fn check(&self, packet: &Packet, artifacts: &dyn Artifacts) -> Verdict {
        if !packet.succeeded(WRITE_TOOL) {
            return not_complete("no successful write_artifact call");
        }
        match artifacts.read_json(STATUS_ID) {
            Ok(status) if status.get("done") == Some(&true.into()) => {
                Verdict::complete().with_reason("status.json says done")
            }
            Ok(_) => not_complete("status.json does not say done"),
            Err(JsonReadError::InvalidJson(_)) => not_complete("status.json is not JSON"),
            Err(JsonReadError::Artifact(ArtifactError::NotFound)) => {
                not_complete("status.json does not exist")
            }
            Err(JsonReadError::Artifact(error)) => {
                not_complete(format!("status.json unreadable: {}", error.code()))
            }
        }
    }
}

fn not_complete(reason: impl Into<String>) -> Verdict {
    Verdict::incomplete(FEEDBACK).with_reason(reason)
}

verdict_guest::export!(completion: Checker);

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_guest::{Effect, FailureKind, MemoryArtifacts, Observation, Outcome};

    /// A packet with one `write_artifact` call that had `outcome`.
    fn wrote(outcome: Outcome<'static>) -> Packet<'static> {
        Packet::new("exec-1").with_observation(
            Observation::new(WRITE_TOOL, "call-1", Effect::Write).with_outcome(outcome),
        )
    }

    fn check(artifacts: &MemoryArtifacts) -> Verdict {
        Checker.check(&wrote(Outcome::succeeded()), artifacts)
    }

    #[test]
    fn not_complete_without_a_successful_write() {
        let done = MemoryArtifacts::new().with(STATUS_ID, r#"{"done": true}"#);
        for packet in [
            Packet::new("exec-1"),
            wrote(Outcome::failed(FailureKind::Permission)),
            wrote(Outcome::not_started()),
        ] {
            let verdict = Checker.check(&packet, &done);
            assert!(!verdict.complete, "{packet:?}");
            assert_eq!(
                verdict.reason.as_deref(),
                Some("no successful write_artifact call")
            );
            assert_eq!(verdict.feedback.as_deref(), Some(FEEDBACK));
        }
    }

    #[test]
    fn complete_when_status_says_done() {
        let verdict = check(&MemoryArtifacts::new().with(STATUS_ID, r#"{"done": true}"#));
        assert!(verdict.complete);
        assert_eq!(verdict.feedback, None);
        assert!(verdict.within_bounds());
    }

    #[test]
    fn not_complete_otherwise() {
        let cases = [
            (MemoryArtifacts::new(), "status.json does not exist"),
            (
                MemoryArtifacts::new().with(STATUS_ID, r#"{"done": false}"#),
                "status.json does not say done",
            ),
            (
                MemoryArtifacts::new().with(STATUS_ID, "done"),
                "status.json is not JSON",
            ),
            (
                MemoryArtifacts::new()
                    .with(STATUS_ID, r#"{"done": true}"#)
                    .with_read_limit(0),
                "status.json unreadable: limit-reached",
            ),
        ];
        for (artifacts, reason) in cases {
            let verdict = check(&artifacts);
            assert!(!verdict.complete, "{reason}");
            assert_eq!(verdict.reason.as_deref(), Some(reason));
            assert_eq!(verdict.feedback.as_deref(), Some(FEEDBACK));
        }
    }
}
