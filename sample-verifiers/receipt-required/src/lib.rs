//! `receipt-required`: complete only when a write really happened.
//!
//! Complete only when some observation has effect `write`, an authentic
//! `succeeded` outcome with `executed = true`, and a receipt artifact for that
//! call exists: `receipts/<call-id>.json`, a JSON object whose `"call_id"`
//! equals the call id. Writes are tried newest first; the first one with a
//! valid receipt completes. Otherwise not complete, with [`FEEDBACK`].

use verdict_guest::{ArtifactError, Artifacts, JsonReadError, Packet, Verdict, Verifier};

/// Feedback returned whenever the execution is not complete.
pub const FEEDBACK: &str = "Perform the write with a write tool and make sure it succeeded and left a receipt before finishing.";

/// Longest call id quoted in a reason (the host bounds reasons to 400 chars).
const MAX_QUOTED_ID_CHARS: usize = 200;

/// The artifact id of the receipt for `call_id`.
pub fn receipt_id(call_id: &str) -> String {
    format!("receipts/{call_id}.json")
}

/// The completion checker.
#[derive(Debug, Default)]
pub struct ReceiptRequired;

impl Verifier for ReceiptRequired {
    fn check(&self, packet: &Packet, artifacts: &dyn Artifacts) -> Verdict {
        let writes: Vec<_> = packet.executed_writes().collect();
        let Some(newest) = writes.last() else {
            return not_complete("no write call succeeded".to_owned());
        };
        for write in writes.iter().rev() {
            match receipt_matches(artifacts, &write.call_id) {
                Ok(true) => {
                    return Verdict::complete()
                        .with_reason(format!("receipt found for {}", quoted(&write.call_id)));
                }
                Ok(false) => {}
                Err(error) => {
                    return not_complete(format!("receipt unreadable: {}", error.code()));
                }
            }
        }
        not_complete(format!(
            "no receipt for write call {}",
            quoted(&newest.call_id)
        ))
    }
}

/// Whether a valid receipt exists for `call_id`; refusals other than
/// not-found/denied (limits) are errors.
fn receipt_matches(artifacts: &dyn Artifacts, call_id: &str) -> Result<bool, ArtifactError> {
    match artifacts.read_json(&receipt_id(call_id)) {
        Ok(receipt) => Ok(receipt.get("call_id").and_then(|id| id.as_str()) == Some(call_id)),
        Err(JsonReadError::InvalidJson(_))
        | Err(JsonReadError::Artifact(ArtifactError::NotFound | ArtifactError::Denied)) => {
            Ok(false)
        }
        Err(JsonReadError::Artifact(error)) => Err(error),
    }
}

fn quoted(call_id: &str) -> String {
    call_id.chars().take(MAX_QUOTED_ID_CHARS).collect()
}

fn not_complete(reason: String) -> Verdict {
    Verdict::incomplete(FEEDBACK).with_reason(reason)
}

verdict_guest::export!(completion: ReceiptRequired);

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_guest::{Effect, FailureKind, MemoryArtifacts, Observation, Outcome};

    fn write<'a>(call_id: &'a str, outcome: Outcome<'a>) -> Observation<'a> {
        Observation::new("write_file", call_id, Effect::Write).with_outcome(outcome)
    }

    fn receipt(call_id: &str) -> String {
        format!(r#"{{"call_id":"{call_id}","status":"ok"}}"#)
    }

    fn check(packet: &Packet, store: &MemoryArtifacts) -> Verdict {
        ReceiptRequired.check(packet, store)
    }

    #[test]
    fn complete_with_an_executed_write_and_its_receipt() {
        let packet = Packet::new("e").with_observation(write("w1", Outcome::succeeded()));
        let store = MemoryArtifacts::new().with("receipts/w1.json", receipt("w1"));
        let verdict = check(&packet, &store);
        assert!(verdict.complete);
        assert_eq!(verdict.reason.as_deref(), Some("receipt found for w1"));
    }

    #[test]
    fn an_older_write_with_a_receipt_is_enough() {
        let packet = Packet::new("e")
            .with_observation(write("w1", Outcome::succeeded()))
            .with_observation(write("w2", Outcome::succeeded()));
        let store = MemoryArtifacts::new().with("receipts/w1.json", receipt("w1"));
        assert!(check(&packet, &store).complete);
    }

    #[test]
    fn not_complete_without_an_executed_successful_write() {
        let store = MemoryArtifacts::new().with("receipts/w1.json", receipt("w1"));
        let read =
            Observation::new("read_file", "w1", Effect::Read).with_outcome(Outcome::succeeded());
        let unknown =
            Observation::new("tool", "w1", Effect::Unknown).with_outcome(Outcome::succeeded());
        let mut not_executed = Outcome::succeeded();
        not_executed.executed = false;
        for observation in [
            read,
            unknown,
            write("w1", Outcome::failed(FailureKind::Execution)),
            write("w1", Outcome::not_started()),
            write("w1", not_executed),
            Observation::new("write_file", "w1", Effect::Write),
        ] {
            let verdict = check(&Packet::new("e").with_observation(observation), &store);
            assert!(!verdict.complete);
            assert_eq!(verdict.reason.as_deref(), Some("no write call succeeded"));
            assert_eq!(verdict.feedback.as_deref(), Some(FEEDBACK));
        }
    }

    #[test]
    fn not_complete_without_a_matching_receipt() {
        let packet = Packet::new("e").with_observation(write("w1", Outcome::succeeded()));
        for store in [
            MemoryArtifacts::new(),
            MemoryArtifacts::new().with("receipts/w2.json", receipt("w2")),
            MemoryArtifacts::new().with("receipts/w1.json", receipt("w2")),
            MemoryArtifacts::new().with("receipts/w1.json", "not json"),
        ] {
            let verdict = check(&packet, &store);
            assert!(!verdict.complete);
            assert_eq!(
                verdict.reason.as_deref(),
                Some("no receipt for write call w1")
            );
        }
    }

    #[test]
    fn escaping_call_ids_never_reach_other_artifacts() {
        let packet = Packet::new("e").with_observation(write("../secret", Outcome::succeeded()));
        let store = MemoryArtifacts::new().with("secret.json", receipt("../secret"));
        assert!(!check(&packet, &store).complete);
    }

    #[test]
    fn read_limits_are_reported_not_hidden() {
        let packet = Packet::new("e").with_observation(write("w1", Outcome::succeeded()));
        let store = MemoryArtifacts::new()
            .with("receipts/w1.json", receipt("w1"))
            .with_read_limit(0);
        let verdict = check(&packet, &store);
        assert!(!verdict.complete);
        assert_eq!(
            verdict.reason.as_deref(),
            Some("receipt unreadable: limit-reached")
        );
    }

    #[test]
    fn long_call_ids_keep_the_reason_in_bounds() {
        let id = "w".repeat(1_000);
        let packet = Packet::new("e").with_observation(write(&id, Outcome::succeeded()));
        let verdict = check(&packet, &MemoryArtifacts::new());
        assert!(!verdict.complete);
        assert!(verdict.within_bounds());
    }
}
