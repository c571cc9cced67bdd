//! Wake-ups at an instant, serviced by the epoch ticker.
//!
//! A call waiting in a host import (a guest's sleep, or the call itself
//! waiting for its deadline) registers its waker here. The ticker sleeps
//! until its next tick or the earliest wake-up, whichever is first, and a
//! wake-up registered for an earlier instant than the ticker's planned one
//! wakes the ticker to re-plan: each waker is woken at its instant (plus
//! the kernel's wake-up latency), not at the next tick. No async runtime is
//! needed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::thread::Thread;
use std::time::Instant;

/// Pending wake-ups, earliest first, and when the ticker plans to wake.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    queue: BinaryHeap<Reverse<Entry>>,
    /// The ticker thread and the instant it sleeps until, while it sleeps.
    ticker: Option<(Thread, Instant)>,
}

#[derive(Debug)]
struct Entry {
    at: Instant,
    seq: u64,
    waker: Waker,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

impl Timers {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every critical section leaves the queue and plan consistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes `waker` once `at` has passed.
    pub(crate) fn wake_at(&self, at: Instant, waker: &Waker) {
        let earlier_than_planned = {
            let mut inner = self.lock();
            let seq = inner.queue.len() as u64;
            inner.queue.push(Reverse(Entry {
                at,
                seq,
                waker: waker.clone(),
            }));
            match &mut inner.ticker {
                Some((thread, planned)) if at < *planned => {
                    *planned = at;
                    Some(thread.clone())
                }
                _ => None,
            }
        };
        if let Some(ticker) = earlier_than_planned {
            ticker.unpark();
        }
    }

    /// When the calling ticker should wake: at `next_tick`, or earlier for
    /// a wake-up due before it. Remembers the plan, so that [`wake_at`]
    /// with an earlier instant unparks the ticker.
    ///
    /// [`wake_at`]: Timers::wake_at
    pub(crate) fn plan_wake(&self, next_tick: Instant) -> Instant {
        let mut inner = self.lock();
        let wake = inner
            .queue
            .peek()
            .map_or(next_tick, |Reverse(e)| e.at.min(next_tick));
        inner.ticker = Some((std::thread::current(), wake));
        wake
    }

    /// Wakes every entry due at `now`; called by the ticker.
    pub(crate) fn fire(&self, now: Instant) {
        let mut due = Vec::new();
        {
            let mut inner = self.lock();
            while inner.queue.peek().is_some_and(|Reverse(e)| e.at <= now) {
                if let Some(Reverse(entry)) = inner.queue.pop() {
                    due.push(entry.waker);
                }
            }
        }
        // Wake outside the lock: a woken executor may register again at once.
        for waker in due {
            waker.wake();
        }
    }

    /// Entries still waiting (for tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().queue.len()
    }
}

/// A future that completes once `until` has passed.
#[derive(Debug)]
pub(crate) struct SleepUntil {
    until: Instant,
    timers: Arc<Timers>,
    registered: Option<Waker>,
}

impl SleepUntil {
    pub(crate) fn new(until: Instant, timers: Arc<Timers>) -> Self {
        Self {
            until,
            timers,
            registered: None,
        }
    }
}

impl Future for SleepUntil {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.until {
            return Poll::Ready(());
        }
        // Register once per waker: a re-poll with the same waker (after a
        // fuel yield, say) must not grow the queue.
        if !self
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            self.timers.wake_at(self.until, cx.waker());
            self.registered = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;
    use std::time::Duration;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn fires_only_due_entries_in_order() {
        let timers = Timers::default();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&count));
        let t0 = Instant::now();
        timers.wake_at(t0 + Duration::from_secs(60), &waker);
        timers.wake_at(t0, &waker);
        timers.fire(t0);
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(timers.len(), 1);
        timers.fire(t0 + Duration::from_secs(61));
        assert_eq!(count.0.load(Ordering::SeqCst), 2);
        assert_eq!(timers.len(), 0);
    }

    #[test]
    fn a_sleep_registers_once_per_waker() {
        let timers = Arc::new(Timers::default());
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&count));
        let mut cx = Context::from_waker(&waker);
        let mut sleep = Box::pin(SleepUntil::new(
            Instant::now() + Duration::from_secs(60),
            Arc::clone(&timers),
        ));
        assert!(sleep.as_mut().poll(&mut cx).is_pending());
        assert!(sleep.as_mut().poll(&mut cx).is_pending());
        assert_eq!(timers.len(), 1);
        let mut past = Box::pin(SleepUntil::new(Instant::now(), timers));
        assert!(past.as_mut().poll(&mut cx).is_ready());
    }
}
