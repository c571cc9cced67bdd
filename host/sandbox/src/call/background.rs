//! Work taken off a caller's path, each kind on a thread of its own that
//! sleeps until it is given work (an idle host burns no CPU here) and runs
//! under the idle scheduling policy, so that it uses only cores no caller
//! wants (when every core is busy, callers instantiate and drop their own
//! stores, as without these threads):
//! [`TEARDOWN`] drops finished calls' stores (their page-table scans and
//! pool returns), [`REFILL`] makes ready instances
//! ([`crate::verifier::ready`]). Two threads, so that a slow refill (a
//! Python component instantiates in milliseconds) never holds up the
//! teardowns behind it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Mutex, OnceLock, PoisonError};

type Job = Box<dyn FnOnce() + Send>;

/// Drops finished calls' stores.
pub(crate) static TEARDOWN: Background = Background::new("verdict-teardown");
/// Makes ready instances.
pub(crate) static REFILL: Background = Background::new("verdict-refill");

/// One background thread and its queue, started with its first job.
pub(crate) struct Background {
    name: &'static str,
    queue: OnceLock<Mutex<Option<Sender<Job>>>>,
}

impl Background {
    const fn new(name: &'static str) -> Self {
        Self {
            name,
            queue: OnceLock::new(),
        }
    }

    /// Queues `job` for this thread; gives it back when the thread could
    /// not be started (the caller then decides: run it, or do without).
    pub(crate) fn run(&'static self, job: Job) -> Result<(), Job> {
        let queue = self.queue.get_or_init(|| Mutex::new(self.start()));
        let sender = queue.lock().unwrap_or_else(PoisonError::into_inner);
        match sender.as_ref() {
            Some(sender) => sender.send(job).map_err(|refused| refused.0),
            None => Err(job),
        }
    }

    fn start(&'static self) -> Option<Sender<Job>> {
        let (sender, jobs) = mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name(self.name.into())
            .spawn(move || {
                crate::call::workers::run_only_when_idle();
                for job in jobs {
                    job();
                }
            });
        match spawned {
            Ok(_) => Some(sender),
            Err(err) => {
                tracing::warn!(thread = self.name, error = %err, "cannot start a background thread; its work runs inline");
                None
            }
        }
    }
}

/// The most stores waiting for the teardown thread. Each holds an instance
/// slot of its engine's pool (and its memory) until dropped, so when the
/// thread falls behind (callers keeping every core busy) a caller drops its
/// own store rather than queue more.
const MAX_QUEUED_DROPS: usize = 8;

/// Stores queued for the teardown thread and not yet dropped.
static QUEUED_DROPS: AtomicUsize = AtomicUsize::new(0);

/// Drops `value` on the teardown thread, or inline when there is none or
/// [`MAX_QUEUED_DROPS`] are already waiting.
pub(crate) fn drop_later<T: Send + 'static>(value: T) {
    if QUEUED_DROPS.fetch_add(1, Ordering::AcqRel) >= MAX_QUEUED_DROPS {
        QUEUED_DROPS.fetch_sub(1, Ordering::AcqRel);
        drop(value);
        return;
    }
    let job = Box::new(move || {
        drop(value);
        QUEUED_DROPS.fetch_sub(1, Ordering::AcqRel);
    });
    if let Err(job) = TEARDOWN.run(job) {
        job();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn a_dropped_value_is_dropped_off_the_callers_thread() {
        struct Noted(Arc<Mutex<Option<std::thread::ThreadId>>>);
        impl Drop for Noted {
            fn drop(&mut self) {
                *self.0.lock().unwrap() = Some(std::thread::current().id());
            }
        }
        let seen = Arc::new(Mutex::new(None));
        drop_later(Noted(Arc::clone(&seen)));
        let done = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&done);
        TEARDOWN
            .run(Box::new(move || flag.store(true, Ordering::SeqCst)))
            .ok()
            .unwrap();
        while !done.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        let dropped_on = seen.lock().unwrap().expect("dropped");
        assert_ne!(dropped_on, std::thread::current().id());
    }
}
