//! `revision-progress`: the progress key is the revision of artifact `A42`.
//!
//! The key is the revision string the host reports for [`ARTIFACT_ID`], so it
//! changes exactly when the artifact's content changes. When the artifact
//! does not exist the key is [`MISSING_KEY`]; when it cannot be read the key
//! is `unreadable:<code>` (`denied`, `too-large`, `limit-reached`). Both are
//! stable, so "no artifact yet" reads as no progress.

use verdict_guest::{ArtifactError, Artifacts, Packet, ProgressKey};

/// The artifact whose revision is sampled.
pub const ARTIFACT_ID: &str = "A42";
/// The key while the artifact does not exist.
pub const MISSING_KEY: &str = "missing";

/// The progress checker.
#[derive(Debug, Default)]
pub struct RevisionProgress;

impl ProgressKey for RevisionProgress {
    fn progress_key(&self, _packet: &Packet, artifacts: &dyn Artifacts) -> String {
        match artifacts.read(ARTIFACT_ID) {
            Ok(artifact) => artifact.revision,
            Err(ArtifactError::NotFound) => MISSING_KEY.to_owned(),
            Err(error) => format!("unreadable:{}", error.code()),
        }
    }
}

verdict_guest::export!(progress: RevisionProgress);

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_guest::MemoryArtifacts;

    fn key(store: &MemoryArtifacts) -> String {
        RevisionProgress.progress_key(&Packet::new("e"), store)
    }

    #[test]
    fn key_is_the_artifact_revision() {
        let store = MemoryArtifacts::new().with_revision(ARTIFACT_ID, "rev-7", "{}");
        assert_eq!(key(&store), "rev-7");
    }

    #[test]
    fn key_changes_with_content_and_only_then() {
        let mut store = MemoryArtifacts::new().with(ARTIFACT_ID, "v1");
        let first = key(&store);
        assert_eq!(key(&store), first);
        store.insert(ARTIFACT_ID, "v2");
        assert_ne!(key(&store), first);
    }

    #[test]
    fn missing_and_unreadable_artifacts_have_stable_keys() {
        assert_eq!(key(&MemoryArtifacts::new()), MISSING_KEY);
        let big = MemoryArtifacts::new()
            .with(ARTIFACT_ID, "0123456789")
            .with_max_bytes(3);
        assert_eq!(key(&big), "unreadable:too-large");
        let spent = MemoryArtifacts::new()
            .with(ARTIFACT_ID, "x")
            .with_read_limit(0);
        assert_eq!(key(&spent), "unreadable:limit-reached");
    }
}
