//! The audit log: one JSON line per record, hash-chained.
//!
//! Each line carries its sequence number, the hash of the line before it
//! (`prev`, 64 zeros for the first), what it records, and its own `hash`:
//! the SHA-256 of `prev` and the line's JSON without `hash`. A changed
//! line no longer matches its own hash; a removed, inserted or reordered
//! line breaks the next line's `prev` (and the sequence). Removing lines
//! from the end leaves a shorter, valid chain: compare the head hash that
//! [`verify`] returns with one kept elsewhere (`verdict audit verify
//! --head`) to detect that too.

use crate::cas::sha256_hex;
use crate::error::RecordError;
use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The `prev` of the first line.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditLine {
    /// 0 for the first line, then one more per line.
    pub seq: u64,
    /// The previous line's `hash`.
    pub prev: String,
    /// The record's id.
    pub record: String,
    /// The record's integrity hash.
    pub record_sha256: String,
    /// The tenant.
    pub tenant: String,
    /// The verifier's digest.
    pub verifier: String,
    /// The answer in a word: `complete`, `incomplete`, `key` or the error class.
    pub answer: String,
    /// When the check ran (its wall clock), ms since the Unix epoch.
    pub at_ms: u64,
    /// SHA-256 of `prev` and this line's JSON with `hash` empty.
    pub hash: String,
}

impl AuditLine {
    /// True when the line's `hash` is the hash of its content and `prev`
    /// (it says nothing of the lines around it).
    pub fn is_intact(&self) -> bool {
        self.compute_hash() == self.hash
    }

    fn compute_hash(&self) -> String {
        let body = serde_json::to_vec(&Self {
            hash: String::new(),
            ..self.clone()
        })
        .unwrap_or_default();
        let mut input = self.prev.as_bytes().to_vec();
        input.extend_from_slice(&body);
        sha256_hex(&input)
    }
}

/// An audit log open for appending. Appends take an exclusive lock on the
/// file and continue from its last line, so several processes recording
/// into one directory extend one chain.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    recovered: Option<PathBuf>,
}

/// Most bytes read back from the end of the log to find its last line.
const TAIL_BYTES: u64 = 64 * 1024;

impl AuditLog {
    /// Opens (or creates) the log at `path`, verifying the chain so far
    /// under the lock appends take. A torn last line (a write cut by a
    /// crash or a full disk) is cut off first: see [`AuditLog::recovered`].
    pub fn open(path: &Path) -> Result<Self, RecordError> {
        let mut recovered = None;
        if path.exists() {
            let io = |e| RecordError::io(path, e);
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(path)
                .map_err(io)?;
            let mut file = Flock::lock(file, FlockArg::LockExclusive)
                .map_err(|(_, errno)| io(std::io::Error::from(errno)))?;
            recovered = recover_tail(path, &mut file)?;
            verify(path)?;
            drop(file);
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| RecordError::io(dir, e))?;
        }
        Ok(Self {
            path: path.to_owned(),
            recovered,
        })
    }

    /// Where the torn bytes cut off the end of the log when it was opened
    /// were kept, if any were.
    pub fn recovered(&self) -> Option<&Path> {
        self.recovered.as_deref()
    }

    /// Appends a line for a record; fills in `seq`, `prev` and `hash`.
    pub fn append(&mut self, line: AuditLine) -> Result<(), RecordError> {
        self.append_all(vec![line])
    }

    /// Appends lines in order under one lock, then makes them durable.
    pub fn append_all(&mut self, lines: Vec<AuditLine>) -> Result<(), RecordError> {
        if lines.is_empty() {
            return Ok(());
        }
        let io = |e| RecordError::io(&self.path, e);
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&self.path)
            .map_err(io)?;
        let mut file = Flock::lock(file, FlockArg::LockExclusive)
            .map_err(|(_, errno)| io(std::io::Error::from(errno)))?;
        recover_tail(&self.path, &mut file)?;
        let (mut seq, mut head) = self.tail(&mut file)?;
        let mut bytes = Vec::new();
        for mut line in lines {
            line.seq = seq;
            line.prev = head;
            line.hash = line.compute_hash();
            bytes.extend_from_slice(&serde_json::to_vec(&line).unwrap_or_default());
            bytes.push(b'\n');
            seq += 1;
            head = line.hash;
        }
        file.write_all(&bytes).map_err(io)?;
        file.sync_data().map_err(io)
    }

    /// The next sequence number and the last line's hash, from the end of
    /// the file.
    fn tail(&self, file: &mut File) -> Result<(u64, String), RecordError> {
        let io = |e| RecordError::io(&self.path, e);
        let len = file.metadata().map_err(io)?.len();
        if len == 0 {
            return Ok((0, GENESIS.to_owned()));
        }
        let from = len.saturating_sub(TAIL_BYTES);
        file.seek(SeekFrom::Start(from)).map_err(io)?;
        let mut tail = Vec::new();
        file.take(TAIL_BYTES).read_to_end(&mut tail).map_err(io)?;
        let text = String::from_utf8_lossy(&tail);
        let last = text
            .trim_end_matches('\n')
            .rsplit('\n')
            .next()
            .unwrap_or("");
        let line: AuditLine = serde_json::from_str(last).map_err(|e| RecordError::Tampered {
            what: format!("{} (its last line)", self.path.display()),
            detail: format!("not an audit line: {e}"),
        })?;
        Ok((line.seq + 1, line.hash))
    }
}

/// Cuts a torn last line off the log (bytes after its last newline that
/// are not a whole audit line), keeping them in `<log>.torn-<offset>` and
/// saying so in the log; a whole last line missing only its newline gets
/// it. The caller holds the lock. Returns where the torn bytes went.
fn recover_tail(path: &Path, file: &mut File) -> Result<Option<PathBuf>, RecordError> {
    let io = |e| RecordError::io(path, e);
    let len = file.metadata().map_err(io)?.len();
    if len == 0 {
        return Ok(None);
    }
    // The start of the last (partial) line: after the last newline.
    let mut end = len;
    let mut cut = 0;
    'scan: while end > 0 {
        let from = end.saturating_sub(TAIL_BYTES);
        let mut chunk = vec![0; usize::try_from(end - from).unwrap_or(0)];
        file.seek(SeekFrom::Start(from)).map_err(io)?;
        file.read_exact(&mut chunk).map_err(io)?;
        if end == len && chunk.last() == Some(&b'\n') {
            return Ok(None);
        }
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            cut = from + i as u64 + 1;
            break 'scan;
        }
        end = from;
    }
    let mut torn = vec![0; usize::try_from(len - cut).unwrap_or(0)];
    file.seek(SeekFrom::Start(cut)).map_err(io)?;
    file.read_exact(&mut torn).map_err(io)?;
    let whole = serde_json::from_slice::<AuditLine>(&torn)
        .is_ok_and(|line| line.compute_hash() == line.hash);
    if whole {
        file.seek(SeekFrom::End(0)).map_err(io)?;
        file.write_all(b"\n").map_err(io)?;
        file.sync_data().map_err(io)?;
        tracing::warn!(log = %path.display(), "the audit log's last line had no newline: completed");
        return Ok(None);
    }
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".torn-{cut}"));
    let copy = PathBuf::from(name);
    crate::cas::write_atomic(&copy, &torn)?;
    file.set_len(cut).map_err(io)?;
    file.sync_data().map_err(io)?;
    tracing::warn!(
        log = %path.display(),
        bytes = torn.len(),
        offset = cut,
        kept = %copy.display(),
        "the audit log ended in a torn line (a write cut short): cut it off and kept its bytes"
    );
    Ok(Some(copy))
}

/// A verified chain's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainHead {
    /// Lines in the log.
    pub lines: u64,
    /// The last line's hash ([`GENESIS`] for an empty log).
    pub hash: String,
}

/// Checks every line of the log at `path`: its JSON, its own hash, its
/// sequence number and its link to the line before. The first broken
/// line is the error, named by its line number.
pub fn verify(path: &Path) -> Result<ChainHead, RecordError> {
    let file = File::open(path).map_err(|e| RecordError::io(path, e))?;
    let mut head = ChainHead {
        lines: 0,
        hash: GENESIS.to_owned(),
    };
    for (n, text) in BufReader::new(file).lines().enumerate() {
        let text = text.map_err(|e| RecordError::io(path, e))?;
        let number = n + 1;
        let broken = |detail: String| RecordError::Tampered {
            what: format!("{} line {number}", path.display()),
            detail,
        };
        let line: AuditLine =
            serde_json::from_str(&text).map_err(|e| broken(format!("not an audit line: {e}")))?;
        if line.compute_hash() != line.hash {
            return Err(broken("the line does not match its own hash".into()));
        }
        if line.seq != head.lines {
            return Err(broken(format!(
                "sequence {} where {} was expected (a line was removed, added or moved)",
                line.seq, head.lines
            )));
        }
        if line.prev != head.hash {
            return Err(broken(
                "it does not follow the line before it (a line was removed, added or moved)".into(),
            ));
        }
        head = ChainHead {
            lines: head.lines + 1,
            hash: line.hash,
        };
    }
    Ok(head)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn line(record: &str) -> AuditLine {
        AuditLine {
            seq: 0,
            prev: String::new(),
            record: record.into(),
            record_sha256: sha256_hex(record.as_bytes()),
            tenant: "t".into(),
            verifier: "d".into(),
            answer: "complete".into(),
            at_ms: 1,
            hash: String::new(),
        }
    }

    fn log_of(n: usize) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let mut log = AuditLog::open(&path).unwrap();
        for i in 0..n {
            log.append(line(&format!("r{i}"))).unwrap();
        }
        (dir, path)
    }

    fn rewrite(path: &Path, edit: impl FnOnce(&mut Vec<String>)) {
        let text = std::fs::read_to_string(path).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        edit(&mut lines);
        std::fs::write(path, lines.join("\n") + "\n").unwrap();
    }

    #[test]
    fn a_chain_verifies_and_continues_after_reopening() {
        let (_dir, path) = log_of(3);
        let head = verify(&path).unwrap();
        assert_eq!(head.lines, 3);
        let mut log = AuditLog::open(&path).unwrap();
        log.append(line("r3")).unwrap();
        assert_eq!(verify(&path).unwrap().lines, 4);
    }

    #[test]
    fn two_writers_extend_one_chain() {
        let (_dir, path) = log_of(1);
        let writers: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|name| {
                let mut log = AuditLog::open(&path).unwrap();
                std::thread::spawn(move || {
                    for i in 0..50 {
                        log.append(line(&format!("{name}{i}"))).unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(verify(&path).unwrap().lines, 101);
    }

    #[test]
    fn changed_removed_and_reordered_lines_are_found() {
        type Edit = fn(&mut Vec<String>);
        let cases: [(&str, Edit, usize); 4] = [
            (
                "changed",
                |l| l[1] = l[1].replace("complete", "incomplete"),
                2,
            ),
            ("removed", |l| drop(l.remove(1)), 2),
            ("reordered", |l| l.swap(1, 2), 2),
            ("last changed", |l| l[3] = l[3].replace("r3", "r9"), 4),
        ];
        for (what, edit, at) in cases {
            let (_dir, path) = log_of(4);
            rewrite(&path, edit);
            match verify(&path) {
                Err(RecordError::Tampered { what: line, .. }) => {
                    assert!(line.ends_with(&format!("line {at}")), "{what}: {line}")
                }
                other => panic!("{what}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_torn_last_line_is_cut_off_kept_and_the_chain_goes_on() {
        let (_dir, path) = log_of(3);
        let whole = std::fs::read(&path).unwrap();
        let mut torn = whole.clone();
        torn.extend_from_slice(br#"{"seq":3,"prev":"ab"#);
        std::fs::write(&path, &torn).unwrap();
        let mut log = AuditLog::open(&path).unwrap();
        let kept = log.recovered().unwrap().to_owned();
        assert_eq!(std::fs::read(&kept).unwrap(), br#"{"seq":3,"prev":"ab"#);
        assert_eq!(std::fs::read(&path).unwrap(), whole);
        log.append(line("r3")).unwrap();
        assert_eq!(verify(&path).unwrap().lines, 4);

        // Torn while another writer has it open: its next append recovers.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(b"{\"seq\":4");
        std::fs::write(&path, &bytes).unwrap();
        log.append(line("r4")).unwrap();
        assert_eq!(verify(&path).unwrap().lines, 5);

        // A whole last line that lost only its newline is kept.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.pop();
        std::fs::write(&path, &bytes).unwrap();
        let log = AuditLog::open(&path).unwrap();
        assert!(log.recovered().is_none());
        assert_eq!(verify(&path).unwrap().lines, 5);
    }

    #[test]
    fn a_changed_complete_last_line_is_not_taken_for_a_torn_one() {
        let (_dir, path) = log_of(2);
        rewrite(&path, |l| l[1] = l[1].replace("r1", "r9"));
        assert!(matches!(
            AuditLog::open(&path),
            Err(RecordError::Tampered { .. })
        ));
    }
}
