//! Returning at the deadline even when the guest's thread waits for a core.
//!
//! A call starts on its caller's thread, and most checks finish in that
//! first poll without ever leaving it. A call that has to wait (its guest
//! runs past a fuel yield, sleeps, or waits in a host import) moves to a
//! thread of its own (a reused one: [`crate::call::workers`]), and the caller
//! waits for its report, its deadline or its cancellation, whichever comes
//! first. The caller is then a sleeping thread woken by a timer, which the
//! kernel runs promptly even when every core is busy, while the thread
//! running the guest may wait a whole time slice for a core. A caller that leaves at the deadline abandons the
//! call: the call's own guard ([`crate::call::guard::guarded`]) stops the guest as
//! soon as its thread runs again, and the store is dropped there.

use crate::call::fpenv::WasmFloats;
use crate::call::guard::{self, Stop};
use crate::call::signals::TrapSignals;
use crate::call::timer::{SleepUntil, Timers};
use crate::call::workers::WORKERS;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Instant;
use verdict_policy::CancelHandle;

/// A call that owns everything it uses, so it can move between threads.
pub(crate) type OwnedCall<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Where a moved call leaves its output, and who to wake then.
struct Slot<T> {
    inner: Mutex<(Option<T>, Option<Waker>)>,
}

impl<T> Slot<T> {
    fn lock(&self) -> MutexGuard<'_, (Option<T>, Option<Waker>)> {
        // Both sides leave the pair consistent at every point.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn put(&self, out: T) {
        let waker = {
            let mut inner = self.lock();
            inner.0 = Some(out);
            inner.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The output if it is there; otherwise remembers `waker`.
    fn take_or_wait(&self, waker: &Waker) -> Option<T> {
        let mut inner = self.lock();
        let out = inner.0.take();
        if out.is_none() && !inner.1.as_ref().is_some_and(|w| w.will_wake(waker)) {
            inner.1 = Some(waker.clone());
        }
        out
    }
}

/// A call whose every poll, on whichever thread, runs in the thread state
/// guest code needs: its trap signals deliverable ([`TrapSignals`]) and
/// WebAssembly's floating-point environment ([`WasmFloats`]), the thread's
/// own restored when the poll returns.
pub(crate) struct GuestPolls<F>(pub(crate) F);

impl<F: Future + Unpin> Future for GuestPolls<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _signals = TrapSignals::enter();
        let _floats = WasmFloats::enter();
        Pin::new(&mut self.0).poll(cx)
    }
}

/// Runs `call` to its output, unless `deadline` passes or `cancel` fires
/// first while it runs on a thread of its own (see the module docs).
pub(crate) async fn run<T: Send + 'static>(
    call: OwnedCall<T>,
    deadline: Instant,
    cancel: &CancelHandle,
    timers: &Arc<Timers>,
) -> Result<T, Stop> {
    let mut call = GuestPolls(call);
    if let Poll::Ready(out) = poll_fn(|cx| Poll::Ready(Pin::new(&mut call).poll(cx))).await {
        return Ok(out);
    }
    let slot = Arc::new(Slot {
        inner: Mutex::new((None, None)),
    });
    let parked = Arc::new(Mutex::new(Some(call)));
    let (theirs, their_call) = (Arc::clone(&slot), Arc::clone(&parked));
    let moved = WORKERS.run(Box::new(move || {
        let call = their_call.lock().ok().and_then(|mut c| c.take());
        if let Some(call) = call {
            theirs.put(guard::block_on(call, None));
        }
    }));
    let worker = moved.ok();
    if worker.is_none() {
        // No thread to move to: finish here, under the call's own guard.
        let call = parked.lock().ok().and_then(|mut c| c.take());
        if let Some(call) = call {
            return Ok(call.await);
        }
    }
    let mut at_deadline = pin!(SleepUntil::new(deadline, Arc::clone(timers)));
    let mut cancelled = pin!(cancel.cancelled());
    let stopped = poll_fn(|cx| {
        // A finished call's own report wins: it is exact.
        if let Some(out) = slot.take_or_wait(cx.waker()) {
            return Poll::Ready(Ok(out));
        }
        if cancel.is_cancelled() || cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(Stop::Cancelled));
        }
        if Instant::now() >= deadline || at_deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(Stop::Deadline));
        }
        Poll::Pending
    })
    .await;
    if let (Err(_), Some(worker)) = (&stopped, worker) {
        // Have the call see the stop now rather than at its next wake-up
        // (a guest waiting in a sleep frees its instance at once).
        worker.unpark();
    }
    stopped
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    /// A call that is pending once (so it moves), then ready.
    fn pending_once(value: u32) -> OwnedCall<u32> {
        let mut polled = false;
        Box::pin(poll_fn(move |cx| {
            if polled {
                Poll::Ready(value)
            } else {
                polled = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }))
    }

    #[test]
    fn a_ready_call_finishes_on_the_callers_thread() {
        let timers = Arc::new(Timers::default());
        let caller = std::thread::current().id();
        let call: OwnedCall<_> = Box::pin(async move { std::thread::current().id() });
        let deadline = Instant::now() + Duration::from_secs(60);
        let ran_on = guard::block_on(run(call, deadline, &CancelHandle::new(), &timers), None);
        assert_eq!(ran_on, Ok(caller));
    }

    #[test]
    fn a_waiting_call_moves_and_its_output_comes_back() {
        let timers = Arc::new(Timers::default());
        let deadline = Instant::now() + Duration::from_secs(60);
        let out = guard::block_on(
            run(pending_once(7), deadline, &CancelHandle::new(), &timers),
            Some(deadline),
        );
        assert_eq!(out, Ok(7));
    }

    #[test]
    fn the_caller_leaves_at_the_deadline_while_the_moved_call_still_runs() {
        let timers = Arc::new(Timers::default());
        let release = Arc::new(AtomicBool::new(false));
        let done = Arc::clone(&release);
        // Busy until released, yielding (like a guest at fuel yields).
        let call: OwnedCall<()> = Box::pin(poll_fn(move |cx| {
            if done.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            std::thread::sleep(Duration::from_millis(1));
            cx.waker().wake_by_ref();
            Poll::Pending
        }));
        let deadline = Instant::now() + Duration::from_millis(20);
        let out = guard::block_on(
            run(call, deadline, &CancelHandle::new(), &timers),
            Some(deadline),
        );
        assert_eq!(out, Err(Stop::Deadline));
        assert!(Instant::now() >= deadline);
        release.store(true, Ordering::SeqCst);
    }

    #[test]
    fn cancelling_wakes_the_waiting_caller() {
        let timers = Arc::new(Timers::default());
        let cancel = CancelHandle::new();
        let remote = cancel.clone();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            remote.cancel();
        });
        // Runs until released after the caller returned: only the
        // cancellation can end the wait (a call that ended by itself first
        // would win with its own output).
        let release = Arc::new(AtomicBool::new(false));
        let released = Arc::clone(&release);
        let call: OwnedCall<()> = Box::pin(poll_fn(move |cx| {
            if released.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            std::thread::sleep(Duration::from_millis(1));
            cx.waker().wake_by_ref();
            Poll::Pending
        }));
        let deadline = Instant::now() + Duration::from_secs(60);
        let out = guard::block_on(run(call, deadline, &cancel, &timers), Some(deadline));
        assert_eq!(out, Err(Stop::Cancelled));
        release.store(true, Ordering::SeqCst);
        assert!(canceller.join().is_ok());
    }
}
