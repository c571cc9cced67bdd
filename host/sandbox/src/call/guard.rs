//! Driving a call: the guard that ends it at its deadline or on
//! cancellation whatever the guest is doing, and a minimal executor for the
//! blocking API.
//!
//! A call is a future (wasmtime's async API, running the guest on a fiber).
//! The guest yields back to the guard at every host-import wait (a sleep, a
//! poll) and every few fuel units ([`crate::HostConfig::fuel_yield_interval`]);
//! at each of those points the guard checks the deadline and the cancel
//! handle on the calling thread itself, and a wake-up at the deadline (from
//! the epoch ticker) ends a wait that would outlast it. Dropping the call
//! future abandons the guest: wasmtime unwinds its fiber and the store stays
//! readable for the call's metrics.

use crate::call::timer::{SleepUntil, Timers};
use crate::call::wakeup::{CHECK_IN, PromptWake};
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::Instant;
use verdict_policy::CancelHandle;

/// Why the guard stopped a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The deadline passed.
    Deadline,
    /// The cancel handle fired.
    Cancelled,
}

/// Runs `call` until it completes, `deadline` passes or `cancel` fires,
/// whichever is first; `call` is dropped (and so stopped) in the last two
/// cases.
pub(crate) async fn guarded<F: Future>(
    call: F,
    deadline: Instant,
    cancel: &CancelHandle,
    timers: &Arc<Timers>,
) -> Result<F::Output, Stop> {
    let mut call = pin!(call);
    let mut at_deadline = pin!(SleepUntil::new(deadline, Arc::clone(timers)));
    let mut cancelled = pin!(cancel.cancelled());
    poll_fn(|cx| {
        // The stop conditions come first: a guest woken from a sleep that
        // reached the deadline must not run again.
        if cancel.is_cancelled() {
            return Poll::Ready(Err(Stop::Cancelled));
        }
        if Instant::now() >= deadline {
            return Poll::Ready(Err(Stop::Deadline));
        }
        if let Poll::Ready(out) = call.as_mut().poll(cx) {
            return Poll::Ready(Ok(out));
        }
        // Only a call that did not finish at once pays for these wake-ups.
        if cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(Stop::Cancelled));
        }
        if at_deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(Stop::Deadline));
        }
        Poll::Pending
    })
    .await
}

/// Wakes a parked thread.
struct ThreadWaker(Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

thread_local! {
    static WAKER: Waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
}

/// Polls `future` to completion on the calling thread, parking it while the
/// future waits, and polling it again at `wake_by` at the latest (a timed
/// park: the kernel's own timer, not the epoch ticker's). Needs no async
/// runtime and works from any thread, including one that is driving an
/// async runtime (which it then blocks, as any blocking call does).
pub(crate) fn block_on<F: Future>(future: F, wake_by: Option<Instant>) -> F::Output {
    block_on_waiting(future, wake_by, false)
}

/// [`block_on`]; with `promptly`, a thread waiting for `wake_by` asks to be
/// woken promptly while it sleeps ([`PromptWake`]) and wakes to poll again
/// every [`CHECK_IN`] until then (why: see [`crate::call::wakeup`]).
pub(crate) fn block_on_waiting<F: Future>(
    future: F,
    wake_by: Option<Instant>,
    promptly: bool,
) -> F::Output {
    let mut future = pin!(future);
    let mut prompt = None;
    WAKER.with(|waker| {
        let mut cx = Context::from_waker(waker);
        loop {
            if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
                return out;
            }
            match wake_by.map(|at| at.saturating_duration_since(Instant::now())) {
                None => std::thread::park(),
                Some(left) if left.is_zero() => {}
                Some(left) => {
                    if promptly && prompt.is_none() {
                        prompt = Some(PromptWake::enter());
                    }
                    std::thread::park_timeout(if promptly { left.min(CHECK_IN) } else { left });
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_ready_call_completes_without_waiting() {
        let timers = Arc::new(Timers::default());
        let deadline = Instant::now() + Duration::from_secs(60);
        let out = block_on(
            guarded(async { 7 }, deadline, &CancelHandle::new(), &timers),
            None,
        );
        assert_eq!(out, Ok(7));
    }

    #[test]
    fn a_pending_call_is_stopped_by_cancellation() {
        let timers = Arc::new(Timers::default());
        let cancel = CancelHandle::new();
        let remote = cancel.clone();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            remote.cancel();
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        let out = block_on(
            guarded(std::future::pending::<()>(), deadline, &cancel, &timers),
            None,
        );
        canceller.join().unwrap();
        assert_eq!(out, Err(Stop::Cancelled));
    }

    #[test]
    fn a_pending_call_is_stopped_when_the_timers_fire_past_the_deadline() {
        let timers = Arc::new(Timers::default());
        let deadline = Instant::now() + Duration::from_millis(5);
        let firing = Arc::clone(&timers);
        let ticker = std::thread::spawn(move || {
            for _ in 0..2000 {
                std::thread::sleep(Duration::from_millis(1));
                firing.fire(Instant::now());
            }
        });
        let out = block_on(
            guarded(
                std::future::pending::<()>(),
                deadline,
                &CancelHandle::new(),
                &timers,
            ),
            None,
        );
        assert_eq!(out, Err(Stop::Deadline));
        drop(ticker);
    }

    #[test]
    fn a_passed_deadline_stops_before_the_call_runs() {
        let timers = Arc::new(Timers::default());
        let ran = std::cell::Cell::new(false);
        let out = block_on(
            guarded(
                async { ran.set(true) },
                Instant::now(),
                &CancelHandle::new(),
                &timers,
            ),
            None,
        );
        assert_eq!(out, Err(Stop::Deadline));
        assert!(!ran.get());
    }
}
