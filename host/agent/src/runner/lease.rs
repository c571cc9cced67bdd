//! The execution lease: one execution at a time per agent.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::AgentError;

/// Held for the length of one execution; released on drop (also when a
/// run's future is dropped mid-way).
pub(crate) struct Lease(Arc<AtomicBool>);

impl Lease {
    /// Takes the lease, or fails with [`AgentError::Busy`].
    pub(crate) fn take(flag: &Arc<AtomicBool>) -> Result<Self, AgentError> {
        flag.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .map_err(|_| AgentError::Busy)?;
        Ok(Self(Arc::clone(flag)))
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}
