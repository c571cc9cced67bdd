//! A cancellation signal that needs no async runtime.
//!
//! The agent loop cancels a check through it and the sandbox stops a guest
//! on it, so it is the one cancellation type on the check path. Waiting is
//! waker-based: [`CancelHandle::cancelled`] is a future any executor can
//! poll, and [`CancelHandle::cancel`] wakes every waiter.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// A cloneable cancellation signal: clones share it, and cancelling any
/// clone cancels them all (once; cancellation cannot be undone).
#[derive(Debug, Clone, Default)]
pub struct CancelHandle(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    cancelled: AtomicBool,
    waiters: Mutex<Waiters>,
}

/// The wakers of pending [`Cancelled`] futures, by the slot each holds.
#[derive(Debug, Default)]
struct Waiters {
    next: u64,
    wakers: HashMap<u64, Waker>,
}

impl CancelHandle {
    /// A fresh, un-cancelled handle.
    pub fn new() -> Self {
        Self::default()
    }

    /// Requests cancellation and wakes every waiter. Idempotent.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
        let wakers: Vec<Waker> = self.0.waiters().wakers.drain().map(|(_, w)| w).collect();
        for waker in wakers {
            waker.wake();
        }
    }

    /// True once [`CancelHandle::cancel`] was called on any clone.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// Completes once the handle is cancelled (at once if it already is).
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled {
            handle: self,
            deadline: None,
            slot: None,
        }
    }
}

impl Shared {
    fn waiters(&self) -> MutexGuard<'_, Waiters> {
        // The map is left consistent at every point: a panic elsewhere
        // cannot have broken it.
        self.waiters.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The future of [`CancelHandle::cancelled`] (and of
/// [`crate::CheckContext::cancelled`], which also completes at the check's
/// deadline).
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Cancelled<'a> {
    handle: &'a CancelHandle,
    /// Ready at any poll once this has passed. The future holds no timer:
    /// whoever runs the check cancels the handle at the deadline (the agent
    /// loop does), which wakes it.
    deadline: Option<Instant>,
    slot: Option<u64>,
}

impl<'a> Cancelled<'a> {
    /// Completes once `handle` is cancelled, and at any poll after
    /// `deadline`.
    pub(crate) fn with_deadline(handle: &'a CancelHandle, deadline: Option<Instant>) -> Self {
        Self {
            handle,
            deadline,
            slot: None,
        }
    }
}

impl Future for Cancelled<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let shared = &self.handle.0;
        if shared.cancelled.load(Ordering::SeqCst)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
        {
            return Poll::Ready(());
        }
        let mut waiters = shared.waiters();
        // Read again under the lock: `cancel` sets the flag before it takes
        // the wakers, so a waker registered now is either seen by it or the
        // flag is seen here.
        if shared.cancelled.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        let slot = match self.slot {
            Some(slot) => slot,
            None => {
                let slot = waiters.next;
                waiters.next += 1;
                slot
            }
        };
        match waiters.wakers.get_mut(&slot) {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            Some(waker) => waker.clone_from(cx.waker()),
            None => {
                waiters.wakers.insert(slot, cx.waker().clone());
            }
        }
        drop(waiters);
        self.slot = Some(slot);
        Poll::Pending
    }
}

impl Drop for Cancelled<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            self.handle.0.waiters().wakers.remove(&slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll(future: &mut Cancelled<'_>, waker: &Waker) -> Poll<()> {
        Pin::new(future).poll(&mut Context::from_waker(waker))
    }

    #[test]
    fn a_waiter_is_woken_once_and_then_ready() {
        let handle = CancelHandle::new();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut waiting = handle.cancelled();
        assert_eq!(poll(&mut waiting, &waker), Poll::Pending);
        // Polling again with the same waker registers nothing new.
        assert_eq!(poll(&mut waiting, &waker), Poll::Pending);
        assert_eq!(handle.0.waiters().wakers.len(), 1);
        handle.clone().cancel();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(poll(&mut waiting, &waker), Poll::Ready(()));
        assert!(handle.is_cancelled());
        // Already cancelled: ready at once.
        assert_eq!(poll(&mut handle.cancelled(), &waker), Poll::Ready(()));
    }

    #[test]
    fn a_dropped_waiter_leaves_no_waker_behind() {
        let handle = CancelHandle::new();
        let waker = Waker::from(Arc::new(Count(AtomicUsize::new(0))));
        for _ in 0..3 {
            let mut waiting = handle.cancelled();
            assert_eq!(poll(&mut waiting, &waker), Poll::Pending);
        }
        assert!(handle.0.waiters().wakers.is_empty());
    }

    #[test]
    fn cancel_from_another_thread_wakes_a_parked_waiter() {
        struct Unpark(std::thread::Thread);
        impl Wake for Unpark {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let handle = CancelHandle::new();
        let remote = handle.clone();
        let canceller = std::thread::spawn(move || remote.cancel());
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut waiting = handle.cancelled();
        while poll(&mut waiting, &waker).is_pending() {
            std::thread::park();
        }
        canceller.join().unwrap_or(());
        assert!(handle.is_cancelled());
    }
}
