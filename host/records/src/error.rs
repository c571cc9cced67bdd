//! Why a record could not be written, read, trusted or replayed.

use std::path::PathBuf;

/// A record, store or audit-log failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A record (or audit line) is not the JSON this version writes.
    #[error("{path}: not a check record: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A record or stored content no longer matches the hash it was
    /// written with: it was changed after it was written.
    #[error("{what} was changed after it was recorded: {detail}")]
    Tampered {
        /// What does not match (`record`, `packet`, `artifact A42`, `verifier`).
        what: String,
        /// The expected and found hashes, or what is missing.
        detail: String,
    },
    /// Content the record refers to is not in the store.
    #[error("{what} is not in the record store ({detail})")]
    Missing {
        /// What is missing.
        what: String,
        /// Where it was looked for.
        detail: String,
    },
    /// The recorder's queue holds its byte bound: the record was refused
    /// (the disk is slower than the checks). Nothing was written.
    #[error(
        "the record queue is full ({queued} bytes wait, this record holds {record}, the bound is {budget})"
    )]
    Backlog {
        /// Bytes queued.
        queued: usize,
        /// Bytes of the refused record.
        record: usize,
        /// The queue's bound.
        budget: usize,
    },
    /// A record's limits are outside what a sandbox accepts (a hostile or
    /// corrupt record): nothing was run.
    #[error(
        "record {id}: its limits are refused ({source}); a replay runs only within the limits a host accepts"
    )]
    Limits {
        /// The record's id.
        id: String,
        /// The field out of range.
        source: verdict_sandbox::LimitsError,
    },
    /// The recorder's writer thread is gone (it panicked, or the recorder
    /// was shut down).
    #[error("the record writer stopped: {0}")]
    WriterStopped(String),
}

impl RecordError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
