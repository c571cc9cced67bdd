//! Reusable threads for the calls that move off their caller's thread.
//!
//! A call that outlives its first poll moves to a thread of its own
//! ([`crate::call::handoff`]). Starting a thread per such call cost a spawn and,
//! at the thread's exit, unmapping its stack, which interrupts every core
//! to flush its TLB (on our 2-core VM a spawn and join took 145–152 µs, a
//! hand-over to a parked thread and back 94–100 µs). Here a thread that
//! finished a call waits for the next one for [`KEEP_ALIVE`], then exits; a
//! call finding no idle thread starts a new one, so no call ever queues
//! behind another.
//!
//! A new thread inherits its creator's scheduling policy, and threads are
//! started by callers. A worker runs untrusted code that may spin until
//! its deadline, so it never keeps a real-time policy lent by its caller:
//! a real-time spinner would starve every normal thread on its core, the
//! epoch ticker that stops it included (on a one-core machine it would
//! run on until the kernel's real-time throttling let the ticker in).
//! Workers run at the normal policy; a real-time caller still wakes at its
//! deadline at once, as it preempts the worker.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long a thread with nothing to run waits for work before it exits.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// The process's threads for moved calls (shared by every host).
pub(crate) static WORKERS: Workers = Workers::new(KEEP_ALIVE);

type Job = Box<dyn FnOnce() + Send>;

/// One reusable thread: the job handed to it, and its handle to wake it.
struct Worker {
    job: Mutex<Option<Job>>,
    thread: Thread,
}

/// A set of reusable threads.
pub(crate) struct Workers {
    /// The threads waiting for a job, the most recently idle last (it is
    /// reused first: its stack is warm).
    idle: Mutex<Vec<Arc<Worker>>>,
    keep_alive: Duration,
}

impl Workers {
    const fn new(keep_alive: Duration) -> Self {
        Self {
            idle: Mutex::new(Vec::new()),
            keep_alive,
        }
    }

    /// Runs `job` on an idle thread, or on a new one. Returns the thread
    /// that runs it, or gives the job back when no thread could be started.
    pub(crate) fn run(&'static self, job: Job) -> Result<Thread, Job> {
        let ready = lock(&self.idle).pop();
        if let Some(worker) = ready {
            *lock(&worker.job) = Some(job);
            worker.thread.unpark();
            return Ok(worker.thread.clone());
        }
        let handed = Arc::new(Mutex::new(Some(job)));
        let theirs = Arc::clone(&handed);
        let spawned = std::thread::Builder::new()
            .name("verdict-call".into())
            .spawn(move || {
                leave_real_time();
                let first = lock(&theirs).take();
                let worker = Arc::new(Worker {
                    job: Mutex::new(first),
                    thread: std::thread::current(),
                });
                self.serve(&worker);
            });
        match spawned {
            Ok(handle) => Ok(handle.thread().clone()),
            // The closure (and the thread's share of `handed`) is dropped
            // when the spawn fails, so the job is ours again.
            Err(_) => match lock(&handed).take() {
                Some(job) => Err(job),
                None => Ok(std::thread::current()),
            },
        }
    }

    /// A worker's life: run its job, offer itself for the next, and exit
    /// after `keep_alive` without one.
    fn serve(&self, worker: &Arc<Worker>) {
        loop {
            let job = lock(&worker.job).take();
            if let Some(job) = job {
                job();
                lock(&self.idle).push(Arc::clone(worker));
                continue;
            }
            if !self.wait_for_job(worker) {
                return;
            }
        }
    }

    /// Parks until a job is handed over (true) or `keep_alive` passes with
    /// the worker still idle, which then leaves the idle list (false). A
    /// worker taken off the list by [`Workers::run`] always gets its job,
    /// so it waits on.
    fn wait_for_job(&self, worker: &Arc<Worker>) -> bool {
        let until = Instant::now() + self.keep_alive;
        loop {
            if lock(&worker.job).is_some() {
                return true;
            }
            let now = Instant::now();
            if now < until {
                std::thread::park_timeout(until - now);
                continue;
            }
            let mut idle = lock(&self.idle);
            match idle.iter().position(|w| Arc::ptr_eq(w, worker)) {
                Some(at) => {
                    idle.remove(at);
                    return false;
                }
                // Taken for a job that is on its way.
                None => {
                    drop(idle);
                    std::thread::park();
                }
            }
        }
    }
}

/// The normal scheduling policy (`SCHED_OTHER`).
const NORMAL: thread_priority::ThreadSchedulePolicy = thread_priority::ThreadSchedulePolicy::Normal(
    thread_priority::NormalThreadSchedulePolicy::Other,
);

/// Nice 0 as `thread_priority` spells it: under a normal policy it maps
/// its portable 0–99 scale onto nice 19..−20, and 47 lands on 0 (asserted
/// in the tests).
fn nice_zero() -> Result<thread_priority::ThreadPriority, thread_priority::Error> {
    thread_priority::ThreadPriorityValue::try_from(47)
        .map(thread_priority::ThreadPriority::Crossplatform)
        .map_err(|_| thread_priority::Error::Priority("47 is out of the portable range"))
}

/// Moves the calling thread from a real-time scheduling policy (FIFO,
/// round-robin, deadline) to the normal one at nice 0; a thread already
/// under a normal policy is left as it is. Lowering a priority needs no
/// privilege, so this fails only on an unusual kernel, and is then logged.
pub(crate) fn leave_real_time() {
    use thread_priority::ThreadSchedulePolicy;
    if !matches!(
        thread_priority::thread_schedule_policy(),
        Ok(ThreadSchedulePolicy::Realtime(_))
    ) {
        return;
    }
    let set = nice_zero().and_then(|nice| {
        thread_priority::set_thread_priority_and_policy(
            thread_priority::thread_native_id(),
            nice,
            NORMAL,
        )
    });
    if let Err(e) = set {
        tracing::warn!(error = ?e, "a verifier call thread kept its creator's real-time policy");
    }
}

/// Moves the calling thread to the idle scheduling policy (Linux
/// `SCHED_IDLE`): it runs only on a core no other thread wants, so work
/// taken off callers' paths never competes with them for a busy core.
/// Elsewhere, and if the kernel refuses, it leaves a real-time policy as
/// [`leave_real_time`] does.
pub(crate) fn run_only_when_idle() {
    #[cfg(target_os = "linux")]
    {
        let idle = thread_priority::set_thread_priority_and_policy(
            thread_priority::thread_native_id(),
            thread_priority::ThreadPriority::Min,
            thread_priority::ThreadSchedulePolicy::Normal(
                thread_priority::NormalThreadSchedulePolicy::Idle,
            ),
        );
        match idle {
            Ok(()) => return,
            Err(e) => tracing::warn!(error = ?e, "a background thread runs at the normal policy"),
        }
    }
    leave_real_time();
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section leaves its data consistent.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::thread::ThreadId;

    fn pool(keep_alive: Duration) -> &'static Workers {
        Box::leak(Box::new(Workers::new(keep_alive)))
    }

    /// Runs a job that reports its thread; returns the thread `run` named
    /// and the one the job ran on.
    fn job_on(workers: &'static Workers) -> (Option<ThreadId>, Option<ThreadId>) {
        let (tx, rx) = mpsc::channel();
        let named = workers
            .run(Box::new(move || {
                let _ = tx.send(std::thread::current().id());
            }))
            .ok()
            .map(|t| t.id());
        (named, rx.recv_timeout(Duration::from_secs(10)).ok())
    }

    fn wait_until_idle(workers: &Workers, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while lock(&workers.idle).len() != count && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(lock(&workers.idle).len(), count);
    }

    #[test]
    fn a_thread_that_finished_runs_the_next_job() {
        let workers = pool(Duration::from_secs(60));
        let (named, ran_on) = job_on(workers);
        assert!(ran_on.is_some());
        assert_eq!(named, ran_on);
        wait_until_idle(workers, 1);
        let (again_named, again) = job_on(workers);
        assert_eq!(again, ran_on, "the idle thread is reused");
        assert_eq!(again_named, again);
    }

    #[test]
    fn an_idle_thread_exits_after_its_keep_alive() {
        let workers = pool(Duration::from_millis(30));
        let (_, ran_on) = job_on(workers);
        wait_until_idle(workers, 1);
        wait_until_idle(workers, 0);
        let (_, next) = job_on(workers);
        assert!(next.is_some());
        assert_ne!(next, ran_on, "a new thread runs the next job");
    }

    #[test]
    fn nice_zero_is_nice_zero() {
        let posix = nice_zero().and_then(|nice| nice.to_posix(NORMAL));
        assert_eq!(posix.ok(), Some(0));
    }

    /// A worker started by a real-time caller (it would inherit the
    /// caller's policy) runs its job at the normal policy. Needs the
    /// privilege to make the caller real-time (root, `CAP_SYS_NICE` or an
    /// `RLIMIT_RTPRIO`); says so and checks nothing without it.
    #[test]
    fn a_real_time_caller_does_not_lend_its_policy_to_the_worker() {
        use thread_priority::{
            RealtimeThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
            set_thread_priority_and_policy, thread_native_id, thread_schedule_policy,
        };
        let workers = pool(Duration::from_secs(60));
        let caller = std::thread::spawn(move || {
            let fifo = ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo);
            set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, fifo).ok()?;
            assert_eq!(thread_schedule_policy().ok(), Some(fifo));
            let (tx, rx) = mpsc::channel();
            let job: Job = Box::new(move || {
                let _ = tx.send(thread_schedule_policy().ok());
            });
            assert!(workers.run(job).is_ok());
            rx.recv_timeout(Duration::from_secs(10)).ok()
        });
        match caller.join() {
            Ok(Some(policy)) => assert!(
                matches!(policy, Some(ThreadSchedulePolicy::Normal(_))),
                "the worker ran at {policy:?}"
            ),
            Ok(None) => eprintln!("skipped: no privilege to make a thread real-time"),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    #[test]
    fn busy_threads_do_not_hold_up_a_new_job() {
        let workers = pool(Duration::from_secs(60));
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(Mutex::new(release_rx));
        let (started_tx, started_rx) = mpsc::channel();
        // Four jobs that each hold their thread until released: all four
        // start (none waits for a thread).
        for _ in 0..4 {
            let (rx, started) = (Arc::clone(&release_rx), started_tx.clone());
            let job: Job = Box::new(move || {
                let _ = started.send(std::thread::current().id());
                let _ = lock(&rx).recv_timeout(Duration::from_secs(10));
            });
            assert!(workers.run(job).is_ok());
        }
        let threads: std::collections::HashSet<_> = (0..4)
            .filter_map(|_| started_rx.recv_timeout(Duration::from_secs(10)).ok())
            .collect();
        assert_eq!(threads.len(), 4);
        for _ in 0..4 {
            let _ = release_tx.send(());
        }
        wait_until_idle(workers, 4);
    }
}
