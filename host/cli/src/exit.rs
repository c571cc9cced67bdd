//! Process exit codes, one per outcome a script may branch on.

use std::process::ExitCode;

/// What `verdict` exits with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The verifier said complete (or `inspect`: accepted).
    Complete = 0,
    /// The verifier said not complete (or `inspect`: rejected).
    NotComplete = 1,
    /// Bad arguments or input (clap also uses 2 for usage errors).
    InvalidInput = 2,
    /// The checker failed: trap, timeout, fuel, memory, invalid verdict,
    /// load rejected, cancelled.
    CheckerError = 3,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}
