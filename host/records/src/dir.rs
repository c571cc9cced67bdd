//! A record directory: `<id>.json` per check, `cas/` for the bytes they
//! refer to, and `audit.jsonl`, the hash-chained log of them all.

use crate::cas::Cas;
use crate::error::RecordError;
use crate::format::CheckRecord;
use std::path::{Path, PathBuf};

/// A directory of check records.
#[derive(Debug, Clone)]
pub struct RecordDir {
    root: PathBuf,
}

impl RecordDir {
    /// The directory `root` (created on the first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The content-addressed store beside the records.
    pub fn cas(&self) -> Cas {
        Cas::new(self.root.join("cas"))
    }

    /// The audit log.
    pub fn audit_path(&self) -> PathBuf {
        self.root.join("audit.jsonl")
    }

    /// Where the record `id` is (or will be); `None` for anything but a
    /// check id (32 lowercase hex digits), so an id from a request never
    /// names another file.
    pub fn record_path(&self, id: &str) -> Option<PathBuf> {
        is_check_id(id).then(|| self.root.join(format!("{id}.json")))
    }

    /// Reads and verifies the record `id` (`Ok(None)` when there is none).
    pub fn load(&self, id: &str) -> Result<Option<CheckRecord>, RecordError> {
        let Some(path) = self.record_path(id) else {
            return Ok(None);
        };
        if !path.exists() {
            return Ok(None);
        }
        CheckRecord::load(&path).map(Some)
    }
}

/// True for a check id: 32 lowercase hex digits.
pub fn is_check_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
