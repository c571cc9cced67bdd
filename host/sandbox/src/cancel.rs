//! Cancellation of a running check from another task or thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A cloneable handle that stops a check. A guest busy in wasm code is
/// interrupted at the next epoch tick; a check not yet started fails at once.
#[derive(Debug, Clone, Default)]
pub struct CancelHandle(Arc<AtomicBool>);

impl CancelHandle {
    /// A fresh, un-cancelled handle.
    pub fn new() -> Self {
        Self::default()
    }

    /// Requests cancellation. Idempotent.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// True once [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}
