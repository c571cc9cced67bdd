//! Process exit codes, one per outcome a script may branch on.
//!
//! | code | `check` / `inspect` | `run` / `demo` |
//! |---|---|---|
//! | 0 | complete / accepted | completed: the verifier confirmed the work |
//! | 1 | not complete / rejected | — |
//! | 2 | bad arguments, input or configuration (nothing ran) | same |
//! | 3 | the checker failed | the policy stopped the run on a checker error |
//! | 4 | — | answer returned without verification (no policy or no completion checker) |
//! | 5 | — | stopped by the loop policy (recovery exhausted, repeated read, duplicate action, tracking bound, uncertain effect, state change, iteration bound…) |
//! | 6 | — | the run failed (model call error, cancelled — also by SIGINT, SIGTERM or SIGHUP); `console`: ended by SIGTERM or SIGHUP |
//! | 7 | standard output could not be written (closed pipe, full disk) | same |

use std::process::ExitCode;

/// What `verdict` exits with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The verifier said complete (or `inspect`: accepted; `run`: the
    /// workflow completed with a true verdict).
    Complete = 0,
    /// The verifier said not complete (or `inspect`: rejected).
    NotComplete = 1,
    /// Bad arguments, input or configuration (clap also uses 2 for usage
    /// errors); nothing ran.
    InvalidInput = 2,
    /// The checker failed: trap, timeout, fuel, memory, invalid verdict,
    /// load rejected, cancelled (`run`: the policy stopped on it).
    CheckerError = 3,
    /// `run`: a final answer was returned without verification.
    Unverified = 4,
    /// `run`: the loop policy (or the iteration bound) stopped the run.
    Stopped = 5,
    /// `run`: the run failed (model call error, cancellation); `console`:
    /// ended by SIGTERM or SIGHUP.
    RunFailed = 6,
    /// Standard output could not be written (closed pipe, full disk): the
    /// result is lost, whatever it was.
    OutputFailed = 7,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}
