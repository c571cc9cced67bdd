//! A wasm verifier in the checker roles.
//!
//! [`WasmChecker`] implements the policy's [`CompletionChecker`] and
//! [`ProgressChecker`] with [`LoadedVerifier::check_async`] /
//! [`LoadedVerifier::progress_key_async`] for one tenant; its identity is
//! the component digest. The loop's [`CheckContext`] is forwarded: its
//! deadline and the tenant's `timeout_ms` both bound the call (the earlier
//! wins, see [`crate::LoadedVerifier`]), and cancelling it stops a running
//! guest at once. The sandbox's fuel and epoch deadline bound the guest
//! itself, so even an abandoned check ends. Optionally it adds every call's
//! [`CallMetrics`] to shared [`CheckerTotals`].

use crate::error::CheckError;
use crate::tenant::Tenant;
use crate::verifier::LoadedVerifier;
use crate::verifier::call::CallMetrics;
use std::sync::{Arc, Mutex};
use verdict_policy::{
    CheckContext, CheckFuture, CheckPacket, CheckerError, CompletionChecker, ProgressChecker,
    Verdict,
};

/// Metrics summed over checker calls (e.g. one run's).
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
    /// Fuel consumed.
    pub fuel_used: u64,
    /// Largest linear memory seen, in bytes.
    pub peak_memory_bytes: u64,
    /// Artifact operations.
    pub artifact_reads: u64,
}

impl CheckerTotals {
    /// Adds one call: a progress sample or a completion check, failed or not.
    pub fn add(&mut self, metrics: &CallMetrics, failed: bool, progress: bool) {
        if progress {
            self.progress_samples += 1;
        } else {
            self.checks += 1;
        }
        self.errors += u32::from(failed);
        self.duration_us = self
            .duration_us
            .saturating_add(u64::try_from(metrics.duration.as_micros()).unwrap_or(u64::MAX));
        self.fuel_used = self.fuel_used.saturating_add(metrics.fuel_used);
        self.peak_memory_bytes = self.peak_memory_bytes.max(metrics.peak_memory_bytes);
        self.artifact_reads += u64::from(metrics.artifact_reads);
    }
}

/// The policy's class of a sandbox error; details (guest stderr, messages)
/// stay with the host.
impl From<CheckError> for CheckerError {
    fn from(error: CheckError) -> Self {
        match error {
            CheckError::Timeout { .. } => CheckerError::Timeout,
            CheckError::OutOfFuel { .. } => CheckerError::OutOfFuel,
            CheckError::Cancelled => CheckerError::Cancelled,
            CheckError::InvalidVerdict(e) => CheckerError::InvalidVerdict(e),
            CheckError::InvalidProgressKey { chars } => CheckerError::ProgressKeyTooLong { chars },
            other => CheckerError::Failed(other.code().to_owned()),
        }
    }
}

/// A loaded verifier bound to the tenant whose artifacts it may read: a
/// completion and progress checker.
#[derive(Clone)]
pub struct WasmChecker {
    verifier: LoadedVerifier,
    tenant: Tenant,
    totals: Option<Arc<Mutex<CheckerTotals>>>,
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
    pub fn new(verifier: LoadedVerifier, tenant: Tenant) -> Self {
        Self {
            verifier,
            tenant,
            totals: None,
        }
    }

    /// Also adds every call's metrics to `totals`.
    pub fn with_totals(mut self, totals: Arc<Mutex<CheckerTotals>>) -> Self {
        self.totals = Some(totals);
        self
    }

    fn record(&self, metrics: &CallMetrics, failed: bool, progress: bool) {
        if let Some(totals) = &self.totals {
            let mut totals = totals.lock().unwrap_or_else(|p| p.into_inner());
            totals.add(metrics, failed, progress);
        }
    }
}

impl CompletionChecker for WasmChecker {
    fn check<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, Verdict> {
        Box::pin(async move {
            let report = self.verifier.check_async(&self.tenant, packet, ctx).await;
            self.record(&report.metrics, report.result.is_err(), false);
            report.result.map_err(CheckerError::from)
        })
    }

    fn identity(&self) -> String {
        self.verifier.digest().to_owned()
    }
}

impl ProgressChecker for WasmChecker {
    fn progress_key<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, String> {
        Box::pin(async move {
            let report = self
                .verifier
                .progress_key_async(&self.tenant, packet, ctx)
                .await;
            self.record(&report.metrics, report.result.is_err(), true);
            report.result.map_err(CheckerError::from)
        })
    }

    fn identity(&self) -> String {
        self.verifier.digest().to_owned()
    }
}
