//! Records tied to the audit log: every line names a record file with the
//! same hash, every record file is named by a line.
//!
//! A record's `integrity` is a plain hash anyone can recompute after an
//! edit; the audit line written with it (`recordSha256`) is chained to
//! every line after it. A record that is not in the chain, or whose hash
//! is not the one its line holds, was written or changed by someone else.

use crate::audit::{self, AuditLine, ChainHead};
use crate::dir::{RecordDir, is_check_id};
use crate::error::RecordError;
use crate::format::CheckRecord;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

/// The verified chain of a record directory, by record id.
#[derive(Debug, Clone)]
pub struct Chain {
    /// The chain's end.
    pub head: ChainHead,
    /// Each record's hash as its line holds it.
    records: HashMap<String, String>,
}

/// Whether a record is in its directory's chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Anchor {
    /// A line names the record with its hash.
    Anchored,
    /// No line names the record.
    NotInChain,
    /// A line names the record with another hash (`line` is that hash).
    Mismatch {
        /// The hash the audit line holds.
        line: String,
    },
}

impl Chain {
    /// Verifies the log at `path` and reads which records it names.
    pub fn read(path: &Path) -> Result<Self, RecordError> {
        let head = audit::verify(path)?;
        let file = std::fs::File::open(path).map_err(|e| RecordError::io(path, e))?;
        let mut records = HashMap::new();
        for text in std::io::BufReader::new(file).lines() {
            let text = text.map_err(|e| RecordError::io(path, e))?;
            // verify() parsed every line already.
            if let Ok(line) = serde_json::from_str::<AuditLine>(&text) {
                records.insert(line.record, line.record_sha256);
            }
        }
        Ok(Self { head, records })
    }

    /// The chain of `dir` (an empty chain when it has no log).
    pub fn of_dir(dir: &RecordDir) -> Result<Self, RecordError> {
        let path = dir.audit_path();
        if !path.exists() {
            return Ok(Self {
                head: ChainHead {
                    lines: 0,
                    hash: audit::GENESIS.to_owned(),
                },
                records: HashMap::new(),
            });
        }
        Self::read(&path)
    }

    /// Whether `record` is in the chain with its hash.
    pub fn anchor(&self, record: &CheckRecord) -> Anchor {
        match self.records.get(&record.id) {
            None => Anchor::NotInChain,
            Some(hash) if *hash == record.integrity => Anchor::Anchored,
            Some(hash) => Anchor::Mismatch { line: hash.clone() },
        }
    }
}

/// What [`verify_dir`] found.
#[derive(Debug, Clone)]
pub struct DirAudit {
    /// The chain's end.
    pub head: ChainHead,
    /// Records checked against their lines.
    pub records: u64,
    /// Each line without its record, record without its line, or record
    /// that does not match its line, in words.
    pub problems: Vec<String>,
}

/// Verifies the chain of `dir`, then every line against its record file
/// (present, intact, the hash the line holds) and every record file
/// against a line. A broken chain is the error; the rest are `problems`.
pub fn verify_dir(dir: &RecordDir) -> Result<DirAudit, RecordError> {
    let chain = Chain::read(&dir.audit_path())?;
    let mut problems = Vec::new();
    let mut ids: Vec<&String> = chain.records.keys().collect();
    ids.sort();
    let mut checked = 0;
    for id in ids {
        checked += 1;
        let Some(path) = dir.record_path(id) else {
            problems.push(format!("line for `{id}`: not a check id"));
            continue;
        };
        if !path.exists() {
            problems.push(format!(
                "{id}: its audit line has no record ({} is missing)",
                path.display()
            ));
            continue;
        }
        match CheckRecord::load(&path) {
            Ok(record) => match chain.anchor(&record) {
                Anchor::Anchored => {}
                Anchor::Mismatch { line } => problems.push(format!(
                    "{id}: the record hashes to {}, its audit line holds {line} (the record was rewritten)",
                    record.integrity
                )),
                Anchor::NotInChain => problems.push(format!("{id}: not in the chain")),
            },
            Err(e) => problems.push(format!("{id}: {e}")),
        }
    }
    let entries = std::fs::read_dir(dir.root()).map_err(|e| RecordError::io(dir.root(), e))?;
    let mut unlisted = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| RecordError::io(dir.root(), e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if let Some(id) = name.strip_suffix(".json")
            && is_check_id(id)
            && !chain.records.contains_key(id)
        {
            unlisted.push(format!(
                "{id}: a record no audit line names (added after the fact)"
            ));
        }
    }
    unlisted.sort();
    problems.extend(unlisted);
    Ok(DirAudit {
        head: chain.head,
        records: checked,
        problems,
    })
}
