//! Test guest exporting both roles from one component.
//!
//! Completion: complete when artifact `A42` is JSON with `"ready": true`.
//! Progress: the key is `A42`'s revision, or `missing`.

use verdict_guest::{ArtifactError, Artifacts, Packet, ProgressKey, Verdict, Verifier};

/// The artifact both roles look at.
pub const ARTIFACT_ID: &str = "A42";

/// The dual-role checker.
#[derive(Debug, Default)]
pub struct GoodBoth;

impl Verifier for GoodBoth {
    fn check(&self, _packet: &Packet, artifacts: &dyn Artifacts) -> Verdict {
        match artifacts.read_json(ARTIFACT_ID) {
            Ok(value) if value.get("ready") == Some(&true.into()) => Verdict::complete(),
            _ => Verdict::incomplete("Make artifact A42 ready."),
        }
    }
}

impl ProgressKey for GoodBoth {
    fn progress_key(&self, _packet: &Packet, artifacts: &dyn Artifacts) -> String {
        match artifacts.read(ARTIFACT_ID) {
            Ok(artifact) => artifact.revision,
            Err(ArtifactError::NotFound) => "missing".to_owned(),
            Err(error) => format!("unreadable:{}", error.code()),
        }
    }
}

verdict_guest::export!(completion: GoodBoth, progress: GoodBoth);

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_guest::MemoryArtifacts;

    #[test]
    fn completion_follows_the_ready_flag() {
        let packet = Packet::new("e");
        let ready = MemoryArtifacts::new().with(ARTIFACT_ID, r#"{"ready":true}"#);
        let not_ready = MemoryArtifacts::new().with(ARTIFACT_ID, r#"{"ready":false}"#);
        assert!(GoodBoth.check(&packet, &ready).complete);
        assert!(!GoodBoth.check(&packet, &not_ready).complete);
        assert!(!GoodBoth.check(&packet, &MemoryArtifacts::new()).complete);
    }

    #[test]
    fn progress_key_is_the_revision_or_missing() {
        let packet = Packet::new("e");
        let store = MemoryArtifacts::new().with_revision(ARTIFACT_ID, "r9", "{}");
        assert_eq!(GoodBoth.progress_key(&packet, &store), "r9");
        assert_eq!(
            GoodBoth.progress_key(&packet, &MemoryArtifacts::new()),
            "missing"
        );
    }
}
