//! A check bundle: one record with everything its replay needs, in one
//! JSON file (format [`BUNDLE_FORMAT`]), so a record fetched over HTTP
//! replays away from the server's record directory.
//!
//! ```json
//! {"format": "verdict.check-bundle/1",
//!  "record": { ...the record, as `<id>.json` holds it... },
//!  "auditLine": { ...the audit line that names it, or null... },
//!  "blobs": {"<sha256>": "<base64 of the bytes>", ...}}
//! ```
//!
//! `blobs` holds the bytes of every artifact the record read and the
//! verifier component (when the store kept it), each under its SHA-256;
//! [`CheckBundle::unpack`] checks every one against its name.

use crate::audit::AuditLine;
use crate::cas::sha256_hex;
use crate::dir::RecordDir;
use crate::error::RecordError;
use crate::format::{CheckRecord, RecordedArtifactOp};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// The `format` of the bundles this version writes and reads.
pub const BUNDLE_FORMAT: &str = "verdict.check-bundle/1";

/// The media type a bundle is served as.
pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.verdict.check-bundle+json";

/// One record and the bytes it refers to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckBundle {
    /// [`BUNDLE_FORMAT`].
    pub format: String,
    /// The record.
    pub record: CheckRecord,
    /// The line of the record directory's audit log that names the record
    /// (its `hash` can be looked up in the server's chain).
    pub audit_line: Option<AuditLine>,
    /// Blobs by SHA-256, base64.
    pub blobs: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Format {
    format: Option<String>,
}

impl CheckBundle {
    /// The bundle of `record` from `dir`: the artifact bytes it read (all
    /// must be there), the component when kept, and its audit line.
    pub fn of(dir: &RecordDir, record: CheckRecord) -> Result<Self, RecordError> {
        let cas = dir.cas();
        let mut blobs = BTreeMap::new();
        for op in &record.artifacts {
            if let RecordedArtifactOp::Read {
                id,
                sha256: Some(hash),
                ..
            } = op
                && !blobs.contains_key(hash)
            {
                let bytes = cas.get(hash, &format!("artifact {id}"))?;
                blobs.insert(hash.clone(), STANDARD.encode(bytes));
            }
        }
        let digest = &record.verifier.digest;
        match cas.get(digest, "verifier") {
            Ok(bytes) => {
                blobs.insert(digest.clone(), STANDARD.encode(bytes));
            }
            // Not kept: a replay then names the build with --verifier.
            Err(RecordError::Missing { .. }) => {}
            Err(e) => return Err(e),
        }
        let audit_line = audit_line(&dir.audit_path(), &record.id)?;
        Ok(Self {
            format: BUNDLE_FORMAT.to_owned(),
            record,
            audit_line,
            blobs,
        })
    }

    /// The bundle in the file at `path`; `Ok(None)` when the file is not a
    /// bundle (a plain record, say).
    pub fn read(path: &Path) -> Result<Option<Self>, RecordError> {
        let bytes = std::fs::read(path).map_err(|e| RecordError::io(path, e))?;
        let is_bundle = serde_json::from_slice::<Format>(&bytes)
            .ok()
            .and_then(|f| f.format)
            .is_some_and(|f| f == BUNDLE_FORMAT);
        if !is_bundle {
            return Ok(None);
        }
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| RecordError::Format {
                path: path.to_owned(),
                message: format!("not a check bundle: {e}"),
            })
    }

    /// Writes the bundle out as a record directory under `root`
    /// (`<id>.json` and `cas/`, each blob checked against its hash); the
    /// record file's path.
    pub fn unpack(&self, root: &Path) -> Result<PathBuf, RecordError> {
        let dir = RecordDir::new(root);
        let cas = dir.cas();
        for (hash, text) in &self.blobs {
            let bytes = STANDARD.decode(text).map_err(|e| RecordError::Format {
                path: root.to_owned(),
                message: format!("blob {hash}: not base64: {e}"),
            })?;
            let found = sha256_hex(&bytes);
            if found != *hash {
                return Err(RecordError::Tampered {
                    what: format!("blob {hash}"),
                    detail: format!("its bytes hash to {found}"),
                });
            }
            cas.put(&bytes)?;
        }
        let Some(path) = dir.record_path(&self.record.id) else {
            return Err(RecordError::Format {
                path: root.to_owned(),
                message: format!("`{}` is not a check id", self.record.id),
            });
        };
        let mut bytes = serde_json::to_vec_pretty(&self.record).unwrap_or_default();
        bytes.push(b'\n');
        crate::cas::write_atomic(&path, &bytes)?;
        Ok(path)
    }

    /// Whether the bundle's audit line names its record with the record's
    /// hash and is itself intact. It is one line of the server's chain:
    /// that it is in the chain is checked there (`audit verify` prints
    /// the head; the line's `hash` and `seq` locate it).
    pub fn anchor(&self) -> crate::Anchor {
        match &self.audit_line {
            Some(line) if line.record == self.record.id && line.is_intact() => {
                if line.record_sha256 == self.record.integrity {
                    crate::Anchor::Anchored
                } else {
                    crate::Anchor::Mismatch {
                        line: line.record_sha256.clone(),
                    }
                }
            }
            _ => crate::Anchor::NotInChain,
        }
    }
}

/// The line of the log at `path` that names record `id` (the last one,
/// should there be several).
fn audit_line(path: &Path, id: &str) -> Result<Option<AuditLine>, RecordError> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(RecordError::io(path, e)),
    };
    let mut found = None;
    for text in std::io::BufReader::new(file).lines() {
        let text = text.map_err(|e| RecordError::io(path, e))?;
        if text.contains(id)
            && let Ok(line) = serde_json::from_str::<AuditLine>(&text)
            && line.record == id
        {
            found = Some(line);
        }
    }
    Ok(found)
}
