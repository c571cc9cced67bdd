//! A verifier's code switching tiers: loaded on Winch (fast to compile),
//! replaced by the same component compiled with Cranelift in the background
//! (fast to run) once that code is whole.
//!
//! The swap replaces one `Arc<Code>` under a lock. A call takes the code
//! once, at its start, and keeps it (engine, pre-instantiated component,
//! export indices) to its end; the Cranelift code is compiled, loaded,
//! type-checked and pre-instantiated before it is installed, so no call
//! ever sees part of it. Ready instances made from the Winch code are
//! dropped at the next check of their tenant, whose refills then
//! instantiate the Cranelift code.

use super::{Code, LoadedVerifier};
use crate::load::tier::Tier;
use serde::Serialize;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Where a verifier's code stands ([`LoadedVerifier::tier_status`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "error")]
#[non_exhaustive]
pub enum TierStatus {
    /// Compiled with Cranelift at load (or found so in the compile cache).
    Cranelift,
    /// Runs on Winch, and stays there (the host does not optimize in the
    /// background, or was told to use Winch).
    Winch,
    /// Runs on Winch while the host compiles it with Cranelift in the
    /// background (queued or compiling).
    Optimizing,
    /// Switched from Winch to Cranelift: checks starting now run the
    /// optimized code.
    Optimized,
    /// The background compile failed (its bound, a refusal): the verifier
    /// stays on Winch, and checks go on as before. Why, as the load error
    /// says it.
    OptimizeFailed(String),
}

impl TierStatus {
    /// The status of code compiled on `tier` that no background compile
    /// will replace.
    pub(crate) fn settled(tier: Tier) -> Self {
        match tier {
            Tier::Cranelift => TierStatus::Cranelift,
            Tier::Winch => TierStatus::Winch,
        }
    }

    /// The tier checks starting now run on.
    pub fn tier(&self) -> Tier {
        match self {
            TierStatus::Cranelift | TierStatus::Optimized => Tier::Cranelift,
            _ => Tier::Winch,
        }
    }
}

/// A verifier's [`TierStatus`], with a way to wait for it to settle.
pub(crate) struct StatusCell {
    status: Mutex<TierStatus>,
    settled: Condvar,
}

impl StatusCell {
    pub(crate) fn new(status: TierStatus) -> Self {
        Self {
            status: Mutex::new(status),
            settled: Condvar::new(),
        }
    }

    fn get(&self) -> TierStatus {
        self.status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set(&self, status: TierStatus) {
        *self.status.lock().unwrap_or_else(PoisonError::into_inner) = status;
        self.settled.notify_all();
    }

    fn wait(&self, timeout: Duration) -> TierStatus {
        let until = Instant::now() + timeout;
        let mut status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        while *status == TierStatus::Optimizing {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            status = self
                .settled
                .wait_timeout(status, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        status.clone()
    }
}

impl LoadedVerifier {
    /// Where this verifier's code stands: the tier checks starting now run
    /// on, and whether a background compile is under way or failed.
    pub fn tier_status(&self) -> TierStatus {
        self.inner.status.get()
    }

    /// Waits at most `timeout` for a background compile of this verifier
    /// to end (switched, or failed); the status then. Returns at once when
    /// none is under way.
    pub fn wait_for_tier(&self, timeout: Duration) -> TierStatus {
        self.inner.status.wait(timeout)
    }

    /// Installs `code`, the same component compiled with Cranelift and
    /// prepared whole: checks starting from now on run it; checks in
    /// flight keep the code they started with.
    pub(crate) fn install_optimized(&self, code: Code) {
        let code = Arc::new(code);
        let old = {
            let mut current = self
                .inner
                .code
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            std::mem::replace(&mut *current, code)
        };
        // Dropped outside the lock (the last clone may free the Winch code).
        drop(old);
        self.inner.status.set(TierStatus::Optimized);
    }

    /// Records that the background compile failed: the code stays.
    pub(crate) fn optimize_failed(&self, why: String) {
        self.inner.status.set(TierStatus::OptimizeFailed(why));
    }
}
