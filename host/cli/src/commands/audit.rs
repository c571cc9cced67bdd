//! `verdict audit verify`: check a record directory's hash-chained log.

use crate::exit::Exit;
use std::path::PathBuf;
use verdict::records::{RecordError, audit};

/// Arguments of `verdict audit`.
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    #[command(subcommand)]
    command: AuditCommand,
}

#[derive(Debug, clap::Subcommand)]
enum AuditCommand {
    /// Verify every line's hash and its link to the line before; prints
    /// the line count and the head hash (keep it elsewhere and pass it as
    /// --head to detect lines removed from the end).
    Verify {
        /// The audit log (`audit.jsonl` in a record directory).
        file: PathBuf,
        /// The head hash the log must end with.
        #[arg(long, value_name = "HASH")]
        head: Option<String>,
    },
}

/// Runs `verdict audit`: exit 0 for an intact chain, 1 for a broken one.
pub fn run(args: AuditArgs) -> anyhow::Result<Exit> {
    let AuditCommand::Verify { file, head } = args.command;
    match audit::verify(&file) {
        Ok(found) => {
            if let Some(expected) = head.filter(|h| *h != found.hash) {
                crate::outln!(
                    "broken: {} ends with {} after {} lines, not with {expected} (lines were removed from the end, or added)",
                    file.display(),
                    found.hash,
                    found.lines
                )?;
                return Ok(Exit::NotComplete);
            }
            crate::outln!("ok: {} lines, head {}", found.lines, found.hash)?;
            Ok(Exit::Complete)
        }
        Err(e @ RecordError::Tampered { .. }) => {
            crate::outln!("broken: {e}")?;
            Ok(Exit::NotComplete)
        }
        Err(e) => Err(e.into()),
    }
}
