//! A wasm verifier as the loop's completion/progress checker, recording
//! the sandbox's per-call metrics for the run summary.
//!
//! `verdict_agent::WasmChecker` does the same checks but drops the metrics,
//! so the CLI keeps this thin variant.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use verdict_policy::{CheckPacket, CheckerError, CompletionChecker, ProgressChecker, Verdict};
use verdict_sandbox::{CallMetrics, CheckError, Tenant, Verifier};

/// Metrics summed over a run's checker calls.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckerTotals {
    /// Completion checks run.
    pub checks: u32,
    /// Progress keys sampled.
    pub progress_samples: u32,
    /// Calls that failed (trap, timeout, fuel, invalid answer).
    pub errors: u32,
    /// Wall time in microseconds.
    pub duration_us: u64,
    /// Fuel burnt.
    pub fuel_used: u64,
    /// Largest linear memory seen, in bytes.
    pub peak_memory_bytes: u64,
    /// Artifact operations.
    pub artifact_reads: u64,
}

/// Shared totals (cloned into the checker, read by the summary).
pub type Totals = Arc<Mutex<CheckerTotals>>;

/// A verifier bound to a tenant, adding its metrics to [`Totals`].
#[derive(Clone)]
pub struct MeteredChecker {
    verifier: Verifier,
    tenant: Tenant,
    totals: Totals,
}

impl MeteredChecker {
    /// Checks with `verifier` for `tenant`, summing into `totals`.
    pub fn new(verifier: Verifier, tenant: Tenant, totals: Totals) -> Self {
        Self {
            verifier,
            tenant,
            totals,
        }
    }

    fn record(&self, metrics: &CallMetrics, failed: bool, progress: bool) {
        let mut t = self.totals.lock().unwrap_or_else(|p| p.into_inner());
        if progress {
            t.progress_samples += 1;
        } else {
            t.checks += 1;
        }
        t.errors += u32::from(failed);
        t.duration_us += u64::try_from(metrics.duration.min(Duration::from_secs(3600)).as_micros())
            .unwrap_or(u64::MAX);
        t.fuel_used = t.fuel_used.saturating_add(metrics.fuel_used);
        t.peak_memory_bytes = t.peak_memory_bytes.max(metrics.peak_memory_bytes);
        t.artifact_reads += u64::from(metrics.artifact_reads);
    }
}

/// The policy's class of a sandbox error (details stay with the host).
fn checker_error(error: CheckError) -> CheckerError {
    match error {
        CheckError::Timeout { .. } | CheckError::OutOfFuel { .. } => CheckerError::Timeout,
        CheckError::Cancelled => CheckerError::Cancelled,
        CheckError::InvalidVerdict(e) => CheckerError::InvalidVerdict(e),
        CheckError::InvalidProgressKey { chars } => CheckerError::ProgressKeyTooLong { chars },
        other => CheckerError::Failed(other.code().to_owned()),
    }
}

impl CompletionChecker for MeteredChecker {
    fn check(&self, packet: &CheckPacket) -> Result<Verdict, CheckerError> {
        let outcome = self.verifier.check(&self.tenant, packet, None);
        self.record(&outcome.metrics, outcome.result.is_err(), false);
        outcome.result.map_err(checker_error)
    }

    fn identity(&self) -> String {
        self.verifier.digest().to_owned()
    }
}

impl ProgressChecker for MeteredChecker {
    fn progress_key(&self, packet: &CheckPacket) -> Result<String, CheckerError> {
        let outcome = self.verifier.progress_key(&self.tenant, packet, None);
        self.record(&outcome.metrics, outcome.result.is_err(), true);
        outcome.result.map_err(checker_error)
    }

    fn identity(&self) -> String {
        self.verifier.digest().to_owned()
    }
}
