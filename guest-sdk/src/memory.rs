//! An in-memory artifact map for native unit tests of verifier logic.

use std::cell::Cell;
use std::collections::BTreeMap;

use crate::artifacts::{Artifact, ArtifactError, Artifacts};

/// In-memory [`Artifacts`] with the host's refusals modelled: ids that are
/// empty, absolute, contain `..`/`.` segments, backslashes or NUL are
/// `Denied`; optional per-read byte and per-call read limits give `TooLarge`
/// and `LimitReached`. Each `read` and `list` counts as one read.
#[derive(Debug, Default)]
pub struct MemoryArtifacts {
    items: BTreeMap<String, (String, Vec<u8>)>,
    max_bytes: Option<u64>,
    max_reads: Option<u32>,
    reads: Cell<u32>,
}

impl MemoryArtifacts {
    /// An empty store without limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an artifact whose revision is derived from its content.
    pub fn with(mut self, id: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        self.insert(id, bytes);
        self
    }

    /// Adds an artifact with an explicit revision.
    pub fn with_revision(
        mut self,
        id: impl Into<String>,
        revision: impl Into<String>,
        bytes: impl Into<Vec<u8>>,
    ) -> Self {
        self.items
            .insert(id.into(), (revision.into(), bytes.into()));
        self
    }

    /// Adds a JSON artifact.
    pub fn with_json(self, id: impl Into<String>, value: &serde_json::Value) -> Self {
        self.with(id, value.to_string())
    }

    /// Inserts or replaces an artifact; its revision is derived from its content.
    pub fn insert(&mut self, id: impl Into<String>, bytes: impl Into<Vec<u8>>) {
        let bytes = bytes.into();
        let revision = content_revision(&bytes);
        self.items.insert(id.into(), (revision, bytes));
    }

    /// Refuses reads of artifacts larger than `bytes` with `TooLarge`.
    pub fn with_max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = Some(bytes);
        self
    }

    /// Allows at most `reads` reads and lists, then answers `LimitReached`.
    pub fn with_read_limit(mut self, reads: u32) -> Self {
        self.max_reads = Some(reads);
        self
    }

    /// Reads and lists attempted so far.
    pub fn reads(&self) -> u32 {
        self.reads.get()
    }

    fn count_read(&self) -> Result<(), ArtifactError> {
        let used = self.reads.get();
        if self.max_reads.is_some_and(|max| used >= max) {
            return Err(ArtifactError::LimitReached);
        }
        self.reads.set(used.saturating_add(1));
        Ok(())
    }
}

impl Artifacts for MemoryArtifacts {
    fn read(&self, id: &str) -> Result<Artifact, ArtifactError> {
        self.count_read()?;
        if !valid_id(id) {
            return Err(ArtifactError::Denied);
        }
        let (revision, bytes) = self.items.get(id).ok_or(ArtifactError::NotFound)?;
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if self.max_bytes.is_some_and(|max| size > max) {
            return Err(ArtifactError::TooLarge(size));
        }
        Ok(Artifact {
            id: id.to_owned(),
            revision: revision.clone(),
            size,
            bytes: bytes.clone(),
        })
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, ArtifactError> {
        self.count_read()?;
        if !prefix.is_empty() && !valid_id(prefix.trim_end_matches('/')) {
            return Err(ArtifactError::Denied);
        }
        Ok(self
            .items
            .keys()
            .filter(|id| id.starts_with(prefix))
            .cloned()
            .collect())
    }
}

/// True for a relative, `/`-separated id without `.`/`..` or empty segments.
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && !id.contains(['\\', '\0'])
        && id
            .split('/')
            .all(|segment| !segment.is_empty() && segment != "." && segment != "..")
}

/// A content-derived revision (FNV-1a, 64 bits, hex).
fn content_revision(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::JsonReadError;

    #[test]
    fn reads_what_was_stored() {
        let store = MemoryArtifacts::new().with("A42", r#"{"ready":true}"#);
        let artifact = store.read("A42").unwrap();
        assert_eq!(artifact.size, 14);
        assert_eq!(artifact.json().unwrap()["ready"], true);
        assert_eq!(store.read("A43"), Err(ArtifactError::NotFound));
        assert_eq!(store.exists("A43"), Ok(false));
        assert_eq!(store.exists("A42"), Ok(true));
    }

    #[test]
    fn revision_follows_content() {
        let mut store = MemoryArtifacts::new().with("a", "one");
        let first = store.read("a").unwrap().revision;
        store.insert("a", "one");
        assert_eq!(store.read("a").unwrap().revision, first);
        store.insert("a", "two");
        assert_ne!(store.read("a").unwrap().revision, first);
        let pinned = MemoryArtifacts::new().with_revision("a", "r7", "x");
        assert_eq!(pinned.read("a").unwrap().revision, "r7");
    }

    #[test]
    fn escaping_ids_are_denied() {
        let store = MemoryArtifacts::new().with("a/b", "x");
        for id in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a//b",
            "./a",
            "a\\b",
            "a\0",
        ] {
            assert_eq!(store.read(id), Err(ArtifactError::Denied), "{id:?}");
        }
        assert!(store.read("a/b").is_ok());
        assert_eq!(store.list("../"), Err(ArtifactError::Denied));
    }

    #[test]
    fn limits_give_typed_errors() {
        let store = MemoryArtifacts::new()
            .with("big", vec![0_u8; 11])
            .with("small", "x")
            .with_max_bytes(10)
            .with_read_limit(2);
        assert_eq!(store.read("big"), Err(ArtifactError::TooLarge(11)));
        assert!(store.read("small").is_ok());
        assert_eq!(store.read("small"), Err(ArtifactError::LimitReached));
        assert_eq!(store.list(""), Err(ArtifactError::LimitReached));
        assert_eq!(store.reads(), 2);
    }

    #[test]
    fn list_filters_by_prefix_in_order() {
        let store = MemoryArtifacts::new()
            .with("receipts/b.json", "{}")
            .with("receipts/a.json", "{}")
            .with("other", "{}");
        assert_eq!(
            store.list("receipts/").unwrap(),
            ["receipts/a.json", "receipts/b.json"]
        );
    }

    #[test]
    fn read_json_separates_refusals_from_bad_json() {
        let store = MemoryArtifacts::new().with("bad", "{");
        assert!(matches!(
            store.read_json("bad"),
            Err(JsonReadError::InvalidJson(_))
        ));
        assert!(matches!(
            store.read_json("none"),
            Err(JsonReadError::Artifact(ArtifactError::NotFound))
        ));
        assert_eq!(ArtifactError::TooLarge(3).code(), "too-large");
    }
}
