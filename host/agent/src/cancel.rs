//! The run's cancellation, a [`CancelHandle`], where the loop needs more
//! than the handle: cancelling when a value drops, and the tokio-util token
//! a provider's `CallContext` takes.

use tokio_util::sync::{CancellationToken, DropGuard};
use verdict_policy::CancelHandle;

/// Cancels its handle when dropped.
#[derive(Debug)]
pub(crate) struct CancelOnDrop(pub(crate) CancelHandle);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// A provider token cancelled when `handle` is (at once if it already is),
/// and the guard that ends the watch (cancelling the token) when dropped.
/// Within a tokio runtime a task waits for either; outside one only a
/// handle cancelled already is seen (the loop runs on tokio).
pub(crate) fn provider_token(handle: &CancelHandle) -> (CancellationToken, DropGuard) {
    let token = CancellationToken::new();
    if handle.is_cancelled() {
        token.cancel();
    } else if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let (handle, watched) = (handle.clone(), token.clone());
        runtime.spawn(async move {
            tokio::select! {
                () = handle.cancelled() => watched.cancel(),
                () = watched.cancelled() => {}
            }
        });
    }
    let guard = token.clone().drop_guard();
    (token, guard)
}
