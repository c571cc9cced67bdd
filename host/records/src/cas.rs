//! The content-addressed store beside the records: artifact bytes and
//! verifier components, each kept once under the SHA-256 of its bytes
//! (`cas/sha256/ab/cdef…`), so a replay depends on neither the live
//! artifact directory nor the verifier file.

use crate::error::RecordError;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A content-addressed store in a directory.
#[derive(Debug, Clone)]
pub struct Cas {
    root: PathBuf,
}

impl Cas {
    /// The store under `root` (created on the first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    fn path(&self, hash: &str) -> Option<PathBuf> {
        let valid =
            hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        valid.then(|| self.root.join("sha256").join(&hash[..2]).join(&hash[2..]))
    }

    /// Keeps `bytes` (once) and returns their hash.
    pub fn put(&self, bytes: &[u8]) -> Result<String, RecordError> {
        let hash = sha256_hex(bytes);
        let Some(path) = self.path(&hash) else {
            return Err(RecordError::Missing {
                what: "a content hash".into(),
                detail: hash,
            });
        };
        // A blob already there is trusted only if it still holds these
        // bytes (a power loss can leave a short or empty file).
        match std::fs::read(&path) {
            Ok(found) if sha256_hex(&found) == hash => return Ok(hash),
            Ok(found) => tracing::warn!(
                blob = %path.display(),
                bytes = found.len(),
                "a stored blob does not match its hash: rewritten"
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(RecordError::io(path, e)),
        }
        write_atomic(&path, bytes)?;
        Ok(hash)
    }

    /// The bytes stored under `hash`, checked against it.
    pub fn get(&self, hash: &str, what: &str) -> Result<Vec<u8>, RecordError> {
        let path = self.path(hash).ok_or_else(|| RecordError::Format {
            path: self.root.clone(),
            message: format!("{what}: `{hash}` is not a SHA-256 hash"),
        })?;
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(RecordError::Missing {
                    what: what.to_owned(),
                    detail: path.display().to_string(),
                });
            }
            Err(e) => return Err(RecordError::io(path, e)),
        };
        let found = sha256_hex(&bytes);
        if found != hash {
            return Err(RecordError::Tampered {
                what: what.to_owned(),
                detail: format!("stored bytes hash to {found}, recorded {hash}"),
            });
        }
        Ok(bytes)
    }
}

/// Writes `bytes` to `path` durably: through a temporary file in the same
/// directory, synced before it is renamed into place, then the directory
/// synced, so a reader never sees half a file and a power loss after the
/// return leaves the whole file.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RecordError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let created = !dir.exists();
    std::fs::create_dir_all(dir).map_err(|e| RecordError::io(dir, e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| RecordError::io(dir, e))?;
    tmp.write_all(bytes).map_err(|e| RecordError::io(path, e))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| RecordError::io(path, e))?;
    tmp.persist(path)
        .map_err(|e| RecordError::io(path, e.error))?;
    sync_dir(dir)?;
    if created {
        // New fan-out directories: their entries in the parents too.
        let mut up = dir.parent();
        for _ in 0..2 {
            let Some(parent) = up else { break };
            sync_dir(parent)?;
            up = parent.parent();
        }
    }
    Ok(())
}

/// Makes the entries of `dir` (a rename, a new file) durable.
fn sync_dir(dir: &Path) -> Result<(), RecordError> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| RecordError::io(dir, e))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn content_comes_back_checked() {
        let dir = tempfile::tempdir().unwrap();
        let cas = Cas::new(dir.path());
        let hash = cas.put(b"hello").unwrap();
        assert_eq!(hash, sha256_hex(b"hello"));
        assert_eq!(cas.get(&hash, "x").unwrap(), b"hello");
        let path = cas.path(&hash).unwrap();
        std::fs::write(&path, b"hellO").unwrap();
        assert!(matches!(
            cas.get(&hash, "x"),
            Err(RecordError::Tampered { .. })
        ));
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(
            cas.get(&hash, "x"),
            Err(RecordError::Missing { .. })
        ));
        assert!(matches!(
            cas.get("../../etc", "x"),
            Err(RecordError::Format { .. })
        ));
    }
}
