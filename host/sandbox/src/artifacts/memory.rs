//! An in-memory artifact store, for embedding and tests.

use super::{ArtifactData, ArtifactError, ArtifactStore, validate_artifact_id, validate_prefix};
use std::collections::BTreeMap;
use std::sync::RwLock;

/// Artifacts held in memory. Each `insert` bumps the artifact's revision.
#[derive(Debug, Default)]
pub struct MemoryStore {
    items: RwLock<BTreeMap<String, (u64, Vec<u8>)>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Inserts or replaces an artifact; returns its new revision.
    pub fn insert(
        &self,
        id: impl Into<String>,
        bytes: impl Into<Vec<u8>>,
    ) -> Result<u64, ArtifactError> {
        let id = id.into();
        validate_artifact_id(&id)?;
        let mut items = self.items.write().unwrap_or_else(|p| p.into_inner());
        let revision = items.get(&id).map_or(1, |(rev, _)| rev + 1);
        items.insert(id, (revision, bytes.into()));
        Ok(revision)
    }

    /// Removes an artifact; true if it existed.
    pub fn remove(&self, id: &str) -> bool {
        let mut items = self.items.write().unwrap_or_else(|p| p.into_inner());
        items.remove(id).is_some()
    }
}

impl ArtifactStore for MemoryStore {
    fn read(&self, id: &str, max_bytes: u64) -> Result<ArtifactData, ArtifactError> {
        validate_artifact_id(id)?;
        let items = self.items.read().unwrap_or_else(|p| p.into_inner());
        let (revision, bytes) = items.get(id).ok_or(ArtifactError::NotFound)?;
        let size = bytes.len() as u64;
        if size > max_bytes {
            return Err(ArtifactError::TooLarge(size));
        }
        Ok(ArtifactData {
            id: id.to_owned(),
            revision: revision.to_string(),
            size,
            bytes: bytes.clone(),
        })
    }

    fn list(&self, prefix: &str, max_entries: usize) -> Result<Vec<String>, ArtifactError> {
        validate_prefix(prefix)?;
        let items = self.items.read().unwrap_or_else(|p| p.into_inner());
        Ok(items
            .range(prefix.to_owned()..)
            .take_while(|(id, _)| id.starts_with(prefix))
            .take(max_entries)
            .map(|(id, _)| id.clone())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_read_list_and_revisions() {
        let store = MemoryStore::new();
        assert_eq!(store.insert("A42", b"{}".to_vec()), Ok(1));
        assert_eq!(store.insert("A42", b"{\"ready\":true}".to_vec()), Ok(2));
        store.insert("receipts/c1.json", b"1".to_vec()).unwrap();
        store.insert("receipts/c2.json", b"2".to_vec()).unwrap();
        let a = store.read("A42", 1024).unwrap();
        assert_eq!(a.revision, "2");
        assert_eq!(a.bytes, b"{\"ready\":true}");
        assert_eq!(store.read("A42", 3), Err(ArtifactError::TooLarge(14)));
        assert_eq!(store.read("nope", 10), Err(ArtifactError::NotFound));
        assert_eq!(store.read("../A42", 10), Err(ArtifactError::Denied));
        assert_eq!(
            store.list("receipts/", 10).unwrap(),
            vec!["receipts/c1.json", "receipts/c2.json"]
        );
        assert_eq!(store.list("", 1).unwrap(), vec!["A42"]);
        assert!(store.remove("A42"));
        assert_eq!(store.read("A42", 1024), Err(ArtifactError::NotFound));
    }
}
