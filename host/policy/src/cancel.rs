//! A cancellation signal that needs no async runtime.
//!
//! The agent loop cancels a check through it and the sandbox stops a guest
//! on it, so it is the one cancellation type on the check path. Waiting is
//! waker-based: [`CancelHandle::cancelled`] is a future any executor can
//! poll, and [`CancelHandle::cancel`] wakes every waiter. A
//! [`CancelHandle::child`] is cancelled with its parent but cancelling it
//! leaves the parent alone (a run's handle and a tool call's, say).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
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

/// The wakers of pending [`Cancelled`] futures, by the slot each holds, and
/// the children to cancel with this handle.
#[derive(Debug, Default)]
struct Waiters {
    next: u64,
    wakers: HashMap<u64, Waker>,
    children: Vec<Weak<Shared>>,
}

impl CancelHandle {
    /// A fresh, un-cancelled handle.
    pub fn new() -> Self {
        Self::default()
    }

    /// A handle cancelled when this one is (at once if it already is);
    /// cancelling the child leaves this one alone.
    pub fn child(&self) -> Self {
        let child = Arc::new(Shared::default());
        let mut waiters = self.0.waiters();
        // Read under the lock: `cancel` sets the flag before it takes the
        // children, so the child is either seen by it or cancelled here.
        if self.0.cancelled.load(Ordering::SeqCst) {
            child.cancelled.store(true, Ordering::SeqCst);
        } else {
            // Children dropped since are forgotten, so the list stays as
            // long as the live children.
            waiters.children.retain(|c| c.strong_count() > 0);
            waiters.children.push(Arc::downgrade(&child));
        }
        drop(waiters);
        Self(child)
    }

    /// Requests cancellation and wakes every waiter, and cancels every
    /// child. Idempotent.
    pub fn cancel(&self) {
        self.0.cancel();
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
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        let (wakers, children) = {
            let mut waiters = self.waiters();
            let wakers: Vec<Waker> = waiters.wakers.drain().map(|(_, w)| w).collect();
            (wakers, std::mem::take(&mut waiters.children))
        };
        for waker in wakers {
            waker.wake();
        }
        for child in children.iter().filter_map(Weak::upgrade) {
            child.cancel();
        }
    }

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
    fn a_child_is_cancelled_with_its_parent_and_not_the_other_way() {
        let parent = CancelHandle::new();
        let child = parent.child();
        let grandchild = child.child();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut waiting = grandchild.cancelled();
        assert_eq!(poll(&mut waiting, &waker), Poll::Pending);
        let sibling = parent.child();
        sibling.cancel();
        assert!(!parent.is_cancelled());
        assert!(!child.is_cancelled());
        parent.cancel();
        assert!(child.is_cancelled() && grandchild.is_cancelled());
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(poll(&mut waiting, &waker), Poll::Ready(()));
        // Made after the parent was cancelled: cancelled at once.
        assert!(parent.child().is_cancelled());
    }

    #[test]
    fn dropped_children_are_forgotten() {
        let parent = CancelHandle::new();
        for _ in 0..10 {
            drop(parent.child());
        }
        let _live = parent.child();
        assert_eq!(parent.0.waiters().children.len(), 1);
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
