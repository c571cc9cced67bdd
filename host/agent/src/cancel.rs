//! The run's cancellation, a [`CancelHandle`], where the loop needs more
//! than the handle: cancelling when a value drops.

use verdict_policy::CancelHandle;

/// Cancels its handle when dropped.
#[derive(Debug)]
pub(crate) struct CancelOnDrop(pub(crate) CancelHandle);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// The cancellation of an execution's model calls: a child of the run's
/// `handle` (cancelled with it, at once if it already is), and the guard
/// that cancels it, and so any call or stream still using it, when the
/// execution is dropped, leaving the run's handle alone.
pub(crate) fn provider_cancel(handle: &CancelHandle) -> (CancelHandle, CancelOnDrop) {
    let cancel = handle.child();
    let guard = CancelOnDrop(cancel.clone());
    (cancel, guard)
}
