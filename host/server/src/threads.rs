//! Threads each running a single-threaded tokio runtime: one set serves
//! the HTTP connections, another runs the checks.
//!
//! Why two sets: a core that alternates between the network stack and
//! instantiating and running a WebAssembly instance keeps neither in its
//! caches, and on the 2-core machine the bench runs on a small check then
//! costs about 2.5 times its in-process CPU. A check handed to a thread
//! that runs only checks keeps its code and its pool slots hot; the
//! hand-over costs two wake-ups, which is why a check that runs alone
//! stays on its connection's thread (`routes::check`).
//!
//! Why single-threaded runtimes: a multi-threaded one wakes an idle
//! worker whenever a task becomes runnable, so its workers trade every
//! request between them. A task spawned here stays on its thread; work is
//! dealt to the thread with the fewest tasks, so a thread that a long
//! first poll holds delays only its own.

use std::cell::Cell;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::{JoinHandle, ThreadId};
use tokio::runtime::Handle;
use tokio::sync::watch;

thread_local! {
    /// Times this thread's runtime went to sleep for want of work.
    static PARKS: Cell<u64> = const { Cell::new(0) };
    /// [`PARKS`] when [`slept_since_last_asked`] last looked.
    static PARKS_SEEN: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// True when this thread's runtime has slept since the last time this was
/// asked on it (and the first time): work that finds it so arrives at an
/// idle server. A thread that has not slept went from one task to the
/// next: the server is busy. False on threads not started here.
pub(crate) fn slept_since_last_asked() -> bool {
    let parks = PARKS.with(Cell::get);
    PARKS_SEEN.with(|seen| seen.replace(parks)) != parks
}

/// One thread and what it runs now.
struct Lane {
    handle: Handle,
    /// Its tasks not yet finished.
    busy: Arc<AtomicUsize>,
    id: ThreadId,
}

/// A set of threads with a single-threaded runtime each. Dropping it ends
/// the runtimes (their unfinished tasks are dropped) and joins the threads.
pub(crate) struct RuntimeThreads {
    lanes: Vec<Lane>,
    stop: watch::Sender<bool>,
    joins: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for RuntimeThreads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeThreads")
            .field("threads", &self.lanes.len())
            .finish_non_exhaustive()
    }
}

impl RuntimeThreads {
    /// Starts `n` (at least 1) threads named `{name}-{i}`; each runs
    /// `when_idle` whenever it is about to sleep for want of work.
    pub(crate) fn start(
        name: &str,
        n: usize,
        when_idle: Arc<dyn Fn() + Send + Sync>,
    ) -> io::Result<Self> {
        let (stop, _) = watch::channel(false);
        let mut threads = Self {
            lanes: Vec::with_capacity(n),
            stop,
            joins: Vec::with_capacity(n),
        };
        for i in 0..n.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .on_thread_park({
                    let when_idle = Arc::clone(&when_idle);
                    move || {
                        PARKS.with(|p| p.set(p.get().wrapping_add(1)));
                        when_idle();
                    }
                })
                .build()?;
            let handle = runtime.handle().clone();
            let mut stopped = threads.stop.subscribe();
            // On an error here, `threads` is dropped: the ones started stop.
            let join = std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn(move || {
                    runtime.block_on(async move {
                        while !*stopped.borrow_and_update() {
                            if stopped.changed().await.is_err() {
                                break;
                            }
                        }
                    });
                })?;
            threads.lanes.push(Lane {
                handle,
                busy: Arc::new(AtomicUsize::new(0)),
                id: join.thread().id(),
            });
            threads.joins.push(join);
        }
        Ok(threads)
    }

    /// True when no thread has a task unfinished.
    pub(crate) fn idle(&self) -> bool {
        self.lanes
            .iter()
            .all(|l| l.busy.load(Ordering::Relaxed) == 0)
    }

    /// Runs `task` on the thread with the fewest unfinished tasks.
    pub(crate) fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let Some(lane) = self
            .lanes
            .iter()
            .min_by_key(|l| l.busy.load(Ordering::Relaxed))
        else {
            return;
        };
        let busy = Arc::clone(&lane.busy);
        busy.fetch_add(1, Ordering::Relaxed);
        // Detached: the task reports through what it captured.
        drop(lane.handle.spawn(async move {
            let _busy = Busy(busy);
            task.await;
        }));
    }
}

/// Counts a task finished however it ends.
struct Busy(Arc<AtomicUsize>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for RuntimeThreads {
    fn drop(&mut self) {
        self.stop.send_replace(true);
        let here = std::thread::current().id();
        for (lane, join) in self.lanes.iter().zip(self.joins.drain(..)) {
            // Dropped by a task of its own (the last owner): it ends anyway.
            if lane.id != here {
                let _ = join.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn deals_tasks_to_the_least_busy_thread_and_stops() {
        let threads =
            RuntimeThreads::start("lane", 2, Arc::new(|| {})).unwrap_or_else(|e| panic!("{e}"));
        let (release, _) = watch::channel(false);
        let (names_tx, names_rx) = std::sync::mpsc::channel();
        for _ in 0..4 {
            let mut wait = release.subscribe();
            let names = names_tx.clone();
            threads.spawn(async move {
                let name = std::thread::current().name().map(str::to_owned);
                let _ = names.send(name);
                let _ = wait.changed().await;
            });
        }
        let mut names: Vec<_> = (0..4)
            .map(|_| names_rx.recv_timeout(Duration::from_secs(5)).ok().flatten())
            .collect();
        names.sort();
        let expected = ["lane-0", "lane-0", "lane-1", "lane-1"].map(|n| Some(n.to_owned()));
        assert_eq!(names, expected);
        assert!(!threads.idle());
        // A finished task frees its thread: the next goes to the idle one.
        release.send_replace(true);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while threads
            .lanes
            .iter()
            .any(|l| l.busy.load(Ordering::Relaxed) > 0)
        {
            assert!(std::time::Instant::now() < deadline, "tasks never finished");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(threads.idle());
        drop(threads);
    }
}
