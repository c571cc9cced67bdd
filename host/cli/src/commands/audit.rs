//! `verdict audit verify`: check a record directory's hash-chained log and
//! that it and the record files agree.

use crate::exit::Exit;
use std::path::{Path, PathBuf};
use verdict::records::{RecordDir, RecordError, audit, verify_dir};

/// Arguments of `verdict audit`.
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    #[command(subcommand)]
    command: AuditCommand,
}

#[derive(Debug, clap::Subcommand)]
enum AuditCommand {
    /// Verify every line's hash and its link to the line before, then
    /// every line against its record file (present, the hash the line
    /// holds) and every record file against a line; prints the line count
    /// and the head hash (keep it elsewhere and pass it as --head to
    /// detect lines removed from the end).
    Verify {
        /// A record directory, or its `audit.jsonl`.
        path: PathBuf,
        /// The head hash the log must end with.
        #[arg(long, value_name = "HASH")]
        head: Option<String>,
        /// Check the chain only, not the record files beside it.
        #[arg(long)]
        chain_only: bool,
    },
}

/// Runs `verdict audit`: exit 0 for an intact chain whose lines and
/// records agree, 1 otherwise.
pub fn run(args: AuditArgs) -> anyhow::Result<Exit> {
    let AuditCommand::Verify {
        path,
        head,
        chain_only,
    } = args.command;
    let (dir, file) = if path.is_dir() {
        let dir = RecordDir::new(&path);
        let file = dir.audit_path();
        (dir, file)
    } else {
        let parent = path.parent().unwrap_or(Path::new("."));
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        (RecordDir::new(parent), path.clone())
    };
    let checked = if chain_only {
        audit::verify(&file).map(|head| (head, 0, Vec::new()))
    } else if file == dir.audit_path() {
        verify_dir(&dir).map(|a| (a.head, a.records, a.problems))
    } else {
        // A log not named audit.jsonl: its directory is not a record directory.
        audit::verify(&file).map(|head| (head, 0, Vec::new()))
    };
    match checked {
        Ok((found, records, problems)) => {
            if let Some(expected) = head.filter(|h| *h != found.hash) {
                crate::outln!(
                    "broken: {} ends with {} after {} lines, not with {expected} (lines were removed from the end, or added)",
                    file.display(),
                    found.hash,
                    found.lines
                )?;
                return Ok(Exit::NotComplete);
            }
            if !problems.is_empty() {
                for p in &problems {
                    crate::outln!("broken: {p}")?;
                }
                crate::outln!(
                    "broken: {} of {} lines and records disagree",
                    problems.len(),
                    found.lines
                )?;
                return Ok(Exit::NotComplete);
            }
            if chain_only {
                crate::outln!("ok: {} lines, head {}", found.lines, found.hash)?;
            } else {
                crate::outln!(
                    "ok: {} lines, head {}, {records} records matching their lines",
                    found.lines,
                    found.hash
                )?;
            }
            Ok(Exit::Complete)
        }
        Err(e @ RecordError::Tampered { .. }) => {
            crate::outln!("broken: {e}")?;
            Ok(Exit::NotComplete)
        }
        Err(e) => Err(e.into()),
    }
}
