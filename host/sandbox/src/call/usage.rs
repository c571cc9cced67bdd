//! What a running call has used so far, readable from another thread.
//!
//! The store publishes its counters at every epoch tick (and the artifact
//! imports at every operation); a caller that returns at its deadline while
//! the guest's thread has yet to stop it (see [`crate::call::handoff`]) reports
//! these figures.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Counters of one call, shared between its store and its caller.
#[derive(Debug, Default)]
pub(crate) struct Usage {
    fuel_left: AtomicU64,
    peak_memory: AtomicU64,
    artifact_ops: AtomicU32,
    artifact_bytes: AtomicU64,
}

/// A copy of [`Usage`] at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub(crate) fuel_left: u64,
    pub(crate) peak_memory: u64,
    pub(crate) artifact_ops: u32,
    pub(crate) artifact_bytes: u64,
}

impl Usage {
    /// Counters of a call with `fuel` to spend and nothing used yet.
    pub(crate) fn new(fuel: u64) -> Self {
        Self {
            fuel_left: AtomicU64::new(fuel),
            ..Self::default()
        }
    }

    /// Publishes the fuel left and the peak memory (at an epoch tick).
    pub(crate) fn tick(&self, fuel_left: u64, peak_memory: u64) {
        self.fuel_left.store(fuel_left, Ordering::Relaxed);
        self.peak_memory.store(peak_memory, Ordering::Relaxed);
    }

    /// Publishes the artifact counters (after an artifact operation).
    pub(crate) fn artifacts(&self, ops: u32, bytes: u64) {
        self.artifact_ops.store(ops, Ordering::Relaxed);
        self.artifact_bytes.store(bytes, Ordering::Relaxed);
    }

    /// The counters as last published.
    pub(crate) fn snapshot(&self) -> Snapshot {
        Snapshot {
            fuel_left: self.fuel_left.load(Ordering::Relaxed),
            peak_memory: self.peak_memory.load(Ordering::Relaxed),
            artifact_ops: self.artifact_ops.load(Ordering::Relaxed),
            artifact_bytes: self.artifact_bytes.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_holds_what_was_last_published() {
        let progress = Usage::new(1000);
        assert_eq!(progress.snapshot().fuel_left, 1000);
        progress.tick(400, 65_536);
        progress.artifacts(3, 120);
        assert_eq!(
            progress.snapshot(),
            Snapshot {
                fuel_left: 400,
                peak_memory: 65_536,
                artifact_ops: 3,
                artifact_bytes: 120,
            }
        );
    }
}
