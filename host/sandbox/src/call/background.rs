//! Work taken off a caller's path: after each call, dropping its store
//! (the page-table scan and pool return) and making the ready instances
//! that replace the one it took ([`crate::verifier::ready`]), as one job on
//! one thread.
//!
//! Handing a job over must cost the caller less than the work: waking a
//! sleeping thread costs 5–7 µs on a small VM (a cross-core interrupt),
//! about what dropping a store inline does. So a job is queued without a
//! wake-up, and the thread is woken by the epoch tickers' next tick
//! ([`nudge`], at most 1 ms later by default), or at once when
//! [`WAKE_AT`] jobs wait. The thread sleeps while there is nothing to do
//! (an idle host burns no CPU here) and runs under the idle scheduling
//! policy, so it uses only cores no caller wants: when every core is busy,
//! the queue fills and callers drop their own stores, as without it.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread::Thread;

type Job = Box<dyn FnOnce() + Send>;

/// The most jobs waiting. Each holds a store, with an instance slot of its
/// engine's pool and its memory, until it runs.
const MAX_QUEUED: usize = 8;

/// Jobs waiting at which a caller wakes the thread itself.
const WAKE_AT: usize = 4;

/// The thread and its queue, started with the first job.
static TEARDOWN: OnceLock<Option<Teardown>> = OnceLock::new();

struct Teardown {
    jobs: Mutex<VecDeque<Job>>,
    /// Jobs queued and not yet run.
    queued: AtomicUsize,
    thread: Thread,
}

impl Teardown {
    fn start() -> Option<Teardown> {
        let spawned = std::thread::Builder::new()
            .name("verdict-teardown".into())
            .spawn(|| {
                crate::call::workers::run_only_when_idle();
                serve();
            });
        match spawned {
            Ok(handle) => Some(Teardown {
                jobs: Mutex::new(VecDeque::new()),
                queued: AtomicUsize::new(0),
                thread: handle.thread().clone(),
            }),
            Err(err) => {
                tracing::warn!(error = %err, "cannot start the teardown thread; stores are dropped inline");
                None
            }
        }
    }
}

/// The teardown thread: runs what is queued, sleeps when nothing is.
fn serve() {
    let teardown = loop {
        // The spawner publishes the queue right after the spawn returns.
        match TEARDOWN.get() {
            Some(Some(teardown)) => break teardown,
            Some(None) => return,
            None => std::thread::park(),
        }
    };
    loop {
        let batch = std::mem::take(&mut *lock(&teardown.jobs));
        if batch.is_empty() {
            // An unpark between the check and here is not lost: `park`
            // returns at once for it.
            std::thread::park();
            continue;
        }
        for job in batch {
            job();
            teardown.queued.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every critical section leaves its data consistent.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn teardown() -> Option<&'static Teardown> {
    let teardown = TEARDOWN.get_or_init(Teardown::start).as_ref();
    if let Some(t) = teardown {
        // In case the thread looked before the queue was published.
        t.thread.unpark();
    }
    teardown
}

/// Drops `value` on the teardown thread, then runs `then` there; or drops
/// it inline, and `then` with it (unrun), when there is no thread or
/// [`MAX_QUEUED`] jobs already wait.
pub(crate) fn drop_then<T: Send + 'static, U: FnOnce() + Send + 'static>(value: T, then: U) {
    let Some(teardown) = TEARDOWN.get().and_then(Option::as_ref).or_else(teardown) else {
        return;
    };
    let queued = teardown.queued.fetch_add(1, Ordering::AcqRel);
    if queued >= MAX_QUEUED {
        teardown.queued.fetch_sub(1, Ordering::AcqRel);
        drop(value);
        return;
    }
    lock(&teardown.jobs).push_back(Box::new(move || {
        drop(value);
        then();
    }));
    if queued + 1 >= WAKE_AT {
        teardown.thread.unpark();
    }
}

/// True when a job queued now would run on the teardown thread (or before
/// it sleeps), false when [`drop_then`] would run it inline for want of
/// room or of a thread: refills asked for then would be dropped unrun.
pub(crate) fn has_room() -> bool {
    match TEARDOWN.get() {
        Some(Some(teardown)) => teardown.queued.load(Ordering::Acquire) < MAX_QUEUED,
        Some(None) => false,
        // Not started yet: the first job starts it.
        None => true,
    }
}

/// Drops `value` on the teardown thread (see [`drop_then`]).
pub(crate) fn drop_later<T: Send + 'static>(value: T) {
    drop_then(value, || {});
}

thread_local! {
    /// Set while [`run_waiting_jobs`] runs jobs on this thread.
    static ON_IDLE_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// True while jobs run on a thread that lent itself from its idle time
/// ([`run_waiting_jobs`]): work there must stay short, since the thread
/// has its own to get back to.
pub(crate) fn on_idle_thread() -> bool {
    ON_IDLE_THREAD.with(Cell::get)
}

/// Runs the jobs waiting for the teardown thread here, now: for a thread
/// about to sleep for want of work (a server's idle thread, from its
/// runtime's park hook). The stores are dropped and the ready instances
/// made on a core that is idle anyway, the one the next call is likely to
/// run on, and no other thread is woken. Returns at once when none wait.
/// A ready instance whose instantiation (guest code: start functions)
/// takes longer than [`crate::verifier::ready::IDLE_MAKE_BUDGET`] is
/// abandoned here, and its verifier's are no longer made on such threads.
pub fn run_waiting_jobs() {
    let Some(Some(teardown)) = TEARDOWN.get() else {
        return;
    };
    if teardown.queued.load(Ordering::Acquire) == 0 {
        return;
    }
    let batch = std::mem::take(&mut *lock(&teardown.jobs));
    ON_IDLE_THREAD.with(|on| on.set(true));
    for job in batch {
        job();
        teardown.queued.fetch_sub(1, Ordering::AcqRel);
    }
    ON_IDLE_THREAD.with(|on| on.set(false));
}

/// Wakes the teardown thread when jobs wait: called by the epoch tickers
/// at every tick, and when one stops.
pub(crate) fn nudge() {
    if let Some(Some(teardown)) = TEARDOWN.get()
        && teardown.queued.load(Ordering::Acquire) > 0
    {
        teardown.thread.unpark();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    #[test]
    fn a_dropped_value_is_dropped_off_the_callers_thread_then_the_rest_runs() {
        struct Noted(Arc<Mutex<Option<std::thread::ThreadId>>>);
        impl Drop for Noted {
            fn drop(&mut self) {
                *self.0.lock().unwrap() = Some(std::thread::current().id());
            }
        }
        let dropped = Arc::new(Mutex::new(None));
        let then_ran = Arc::new(Mutex::new(None));
        let theirs = Arc::clone(&then_ran);
        drop_then(Noted(Arc::clone(&dropped)), move || {
            *theirs.lock().unwrap() = Some(std::thread::current().id());
        });
        let until = Instant::now() + Duration::from_secs(10);
        while then_ran.lock().unwrap().is_none() {
            // No ticker runs in this test: nudge as one would.
            nudge();
            assert!(Instant::now() < until, "the job never ran");
            std::thread::sleep(Duration::from_millis(1));
        }
        let dropped_on = dropped.lock().unwrap().expect("dropped");
        assert_ne!(dropped_on, std::thread::current().id());
        assert_eq!(*then_ran.lock().unwrap(), Some(dropped_on));
    }
}
