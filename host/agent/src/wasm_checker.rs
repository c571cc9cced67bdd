//! A wasm verifier as the policy's completion and progress checker.
//!
//! [`WasmChecker`] implements [`CompletionChecker`] and [`ProgressChecker`]
//! with [`Verifier::check`] / [`Verifier::progress_key`] for one tenant. The
//! loop already calls checkers on a blocking thread
//! (`tokio::task::spawn_blocking`) under its own checker deadline; the
//! sandbox's fuel and epoch deadline bound the guest itself, so an
//! abandoned check still ends. The plugin identity is the component digest.

use verdict_policy::{CheckPacket, CheckerError, CompletionChecker, ProgressChecker, Verdict};
use verdict_sandbox::{CheckError, Tenant, Verifier};

/// A verifier component bound to the tenant whose artifacts it may read.
#[derive(Clone)]
pub struct WasmChecker {
    verifier: Verifier,
    tenant: Tenant,
}

impl std::fmt::Debug for WasmChecker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmChecker")
            .field("digest", &self.verifier.digest())
            .field("tenant", &self.tenant.id())
            .finish()
    }
}

impl WasmChecker {
    /// Checks with `verifier` on behalf of `tenant`.
    pub fn new(verifier: Verifier, tenant: Tenant) -> Self {
        Self { verifier, tenant }
    }
}

/// Maps a sandbox error to the policy's class; details (guest stderr,
/// messages) stay with the host.
fn checker_error(error: CheckError) -> CheckerError {
    match error {
        CheckError::Timeout { .. } | CheckError::OutOfFuel { .. } => CheckerError::Timeout,
        CheckError::Cancelled => CheckerError::Cancelled,
        CheckError::InvalidVerdict(e) => CheckerError::InvalidVerdict(e),
        CheckError::InvalidProgressKey { chars } => CheckerError::ProgressKeyTooLong { chars },
        other => CheckerError::Failed(other.code().to_owned()),
    }
}

impl CompletionChecker for WasmChecker {
    fn check(&self, packet: &CheckPacket) -> Result<Verdict, CheckerError> {
        self.verifier
            .check(&self.tenant, packet, None)
            .result
            .map_err(checker_error)
    }

    fn identity(&self) -> String {
        self.verifier.digest().to_owned()
    }
}

impl ProgressChecker for WasmChecker {
    fn progress_key(&self, packet: &CheckPacket) -> Result<String, CheckerError> {
        self.verifier
            .progress_key(&self.tenant, packet, None)
            .result
            .map_err(checker_error)
    }

    fn identity(&self) -> String {
        self.verifier.digest().to_owned()
    }
}
