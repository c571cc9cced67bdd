//! Claude Code's transcript (JSONL, one entry per line), read from its
//! end within a byte and an entry bound: the tool calls with their
//! results and the last assistant text.

use serde_json::Value;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Why a transcript could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// Not there, not a regular file, or unreadable.
    #[error("cannot read the transcript {path}: {why}")]
    Unreadable {
        /// The transcript's path.
        path: PathBuf,
        /// Why.
        why: String,
    },
}

/// One `tool_use` and its `tool_result`, when one was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The call id (`toolu_…`).
    pub id: String,
    /// Claude Code's tool name (`Read`, `Bash`, `mcp__server__tool`…).
    pub name: String,
    /// `Some(is_error)` once its result was seen.
    pub result: Option<bool>,
}

/// What the read part of a transcript holds.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    /// Tool calls in order.
    pub calls: Vec<Call>,
    /// The text of the last assistant message that had text.
    pub last_text: Option<String>,
    /// Assistant entries read.
    pub assistant_entries: u32,
    /// Lines that were not JSON (a line being written is one).
    pub skipped_lines: usize,
    /// True when older entries were left unread (over a bound).
    pub cut: bool,
}

/// Reads the end of the transcript at `path`: at most `max_bytes` bytes
/// and `max_entries` entries.
pub fn read_tail(
    path: &Path,
    max_bytes: u64,
    max_entries: usize,
) -> Result<Transcript, TranscriptError> {
    let unreadable = |why: String| TranscriptError::Unreadable {
        path: path.to_owned(),
        why,
    };
    // Checked before opening: opening a FIFO would wait for a writer.
    let meta = std::fs::metadata(path).map_err(|e| unreadable(e.to_string()))?;
    if !meta.is_file() {
        return Err(unreadable("not a regular file".into()));
    }
    let mut file = std::fs::File::open(path).map_err(|e| unreadable(e.to_string()))?;
    let start = meta.len().saturating_sub(max_bytes);
    file.seek(SeekFrom::Start(start))
        .map_err(|e| unreadable(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(max_bytes)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(e.to_string()))?;
    let mut cut = false;
    let mut text = &bytes[..];
    if start > 0 {
        // The first line is a part of one.
        cut = true;
        text = match text.iter().position(|b| *b == b'\n') {
            Some(at) => &text[at + 1..],
            None => &[],
        };
    }
    let lines: Vec<&[u8]> = text
        .split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .collect();
    let skip = lines.len().saturating_sub(max_entries);
    cut |= skip > 0;
    let mut transcript = Transcript {
        cut,
        ..Transcript::default()
    };
    for line in &lines[skip..] {
        match serde_json::from_slice::<Value>(line) {
            Ok(entry) => transcript.take(&entry),
            Err(_) => transcript.skipped_lines += 1,
        }
    }
    Ok(transcript)
}

impl Transcript {
    fn take(&mut self, entry: &Value) {
        // A subagent's entries are its own run's.
        if entry["isSidechain"].as_bool() == Some(true) {
            return;
        }
        let Some(blocks) = entry["message"]["content"].as_array() else {
            return;
        };
        match entry["type"].as_str() {
            Some("assistant") => {
                self.assistant_entries = self.assistant_entries.saturating_add(1);
                let mut text = String::new();
                for block in blocks {
                    match block["type"].as_str() {
                        Some("text") => text.push_str(block["text"].as_str().unwrap_or_default()),
                        Some("tool_use") => self.calls.push(Call {
                            id: block["id"].as_str().unwrap_or_default().to_owned(),
                            name: block["name"].as_str().unwrap_or_default().to_owned(),
                            result: None,
                        }),
                        _ => {}
                    }
                }
                if !text.is_empty() {
                    self.last_text = Some(text);
                }
            }
            Some("user") => {
                for block in blocks {
                    if block["type"].as_str() != Some("tool_result") {
                        continue;
                    }
                    let id = block["tool_use_id"].as_str().unwrap_or_default();
                    let is_error = block["is_error"].as_bool().unwrap_or(false);
                    if let Some(call) = self.calls.iter_mut().rev().find(|c| c.id == id) {
                        call.result = Some(is_error);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn write(lines: &[&str]) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, lines.join("\n").as_bytes()).unwrap();
        file
    }

    const USE: &str = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}"#;
    const RESULT: &str = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"x","is_error":false}]}}"#;
    const DONE: &str =
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Done."}]}}"#;

    #[test]
    fn calls_pair_with_their_results_and_the_last_text_wins() {
        let file = write(&[USE, RESULT, "{not json", DONE]);
        let t = read_tail(file.path(), 1 << 20, 100).unwrap();
        assert_eq!(
            t.calls,
            vec![Call {
                id: "t1".into(),
                name: "Read".into(),
                result: Some(false)
            }]
        );
        assert_eq!(t.last_text.as_deref(), Some("Done."));
        assert_eq!((t.skipped_lines, t.cut, t.assistant_entries), (1, false, 2));
    }

    #[test]
    fn only_the_end_is_read_within_both_bounds() {
        let file = write(&[USE, RESULT, DONE]);
        // The last entry only.
        let t = read_tail(file.path(), 1 << 20, 1).unwrap();
        assert!(t.calls.is_empty() && t.cut);
        assert_eq!(t.last_text.as_deref(), Some("Done."));
        // A byte bound inside the second line: the partial line is dropped.
        let bytes = (DONE.len() + RESULT.len() / 2) as u64;
        let t = read_tail(file.path(), bytes, 100).unwrap();
        assert!(t.calls.is_empty() && t.cut);
        assert_eq!(t.skipped_lines, 0);
        assert_eq!(t.last_text.as_deref(), Some("Done."));
    }

    #[test]
    fn a_missing_or_odd_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_tail(&dir.path().join("none.jsonl"), 10, 10).unwrap_err();
        assert!(err.to_string().contains("none.jsonl"), "{err}");
        let err = read_tail(dir.path(), 10, 10).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
}
