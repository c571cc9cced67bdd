//! The recorder: records are written by a thread of their own, never on
//! the checking thread.
//!
//! A check hands over what it saw ([`RecordInput`]) and goes on; the
//! writer keeps the artifact bytes in `cas/`, writes `<id>.json` and
//! appends the audit line, in the order the checks handed them over. It
//! wakes for a batch (or 5 ms after the first record of one), not for
//! every record, so recording adds no wake-up to a check; after a second
//! idle it sleeps until the next record. At most [`MAX_QUEUED`] records
//! wait: a check that finds the queue full waits for room, so a record
//! is never dropped. [`Recorder::flush`] returns once everything handed
//! over is on disk.

use crate::audit::{AuditLine, AuditLog};
use crate::dir::RecordDir;
use crate::error::RecordError;
use crate::format::{RecordInput, RecordedAnswer};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Records waiting for the writer at most.
pub const MAX_QUEUED: usize = 4096;
/// Records that wake the writer at once.
const BATCH: usize = 64;
/// How long the first record of a batch waits for more.
const LINGER: Duration = Duration::from_millis(5);
/// Idle time after which the writer sleeps until woken.
const PARK_AFTER: Duration = Duration::from_secs(1);

enum Job {
    Record(Box<RecordInput>),
    Component(Arc<[u8]>),
}

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    /// Jobs taken by the writer and not yet written.
    writing: usize,
    /// The writer sleeps until woken.
    parked: bool,
    /// Someone waits in `flush`.
    flushing: bool,
    stop: bool,
    written: u64,
    /// Audit lines whose append failed, waiting to be retried.
    unappended: usize,
    /// Batches the writer has finished (a flush waits for one more when
    /// lines wait for a retry).
    passes: u64,
    /// The first write error (reported by the next `flush`).
    error: Option<String>,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the writer.
    wake: Condvar,
    /// Wakes callers waiting for room or for a flush.
    progress: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Writes check records into a [`RecordDir`] off the checking thread.
pub struct Recorder {
    dir: RecordDir,
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").field("dir", &self.dir).finish()
    }
}

impl Recorder {
    /// A recorder writing into `dir`: its audit log is verified (a broken
    /// chain is refused) and continued.
    pub fn open(dir: RecordDir) -> Result<Self, RecordError> {
        let audit = AuditLog::open(&dir.audit_path())?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            progress: Condvar::new(),
        });
        let writer = Writer {
            dir: dir.clone(),
            audit,
            shared: Arc::clone(&shared),
            pending: Vec::new(),
        };
        let thread = std::thread::Builder::new()
            .name("verdict-records".into())
            .spawn(move || writer.run())
            .map_err(|e| RecordError::io(dir.root(), e))?;
        Ok(Self {
            dir,
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// The directory written to.
    pub fn dir(&self) -> &RecordDir {
        &self.dir
    }

    /// Hands a record over to the writer (waiting only while
    /// [`MAX_QUEUED`] records wait already).
    pub fn submit(&self, input: RecordInput) -> Result<(), RecordError> {
        self.push(Job::Record(Box::new(input)))
    }

    /// Keeps a verifier component's bytes in `cas/` (under its digest), so
    /// its records replay without the file.
    pub fn keep_component(&self, bytes: Arc<[u8]>) -> Result<(), RecordError> {
        self.push(Job::Component(bytes))
    }

    fn push(&self, job: Job) -> Result<(), RecordError> {
        let mut state = self.shared.lock();
        while state.jobs.len() >= MAX_QUEUED && !state.stop {
            self.shared.wake.notify_one();
            state = self
                .shared
                .progress
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
        if state.stop {
            return Err(RecordError::WriterStopped(
                "the recorder is shut down".into(),
            ));
        }
        state.jobs.push_back(job);
        let len = state.jobs.len();
        if state.parked || len == BATCH {
            state.parked = false;
            self.shared.wake.notify_one();
        }
        Ok(())
    }

    /// Waits until every record handed over is written; the first write
    /// error since the last flush, if any.
    pub fn flush(&self) -> Result<(), RecordError> {
        let mut state = self.shared.lock();
        state.flushing = true;
        self.shared.wake.notify_one();
        let start = state.passes;
        while !(state.jobs.is_empty()
            && state.writing == 0
            && (state.unappended == 0 || state.passes > start))
        {
            if self.thread_gone() {
                return Err(RecordError::WriterStopped("the writer thread ended".into()));
            }
            state = self
                .shared
                .progress
                .wait_timeout(state, Duration::from_millis(50))
                .map(|(s, _)| s)
                .unwrap_or_else(|p| p.into_inner().0);
            state.flushing = true;
            self.shared.wake.notify_one();
        }
        state.flushing = false;
        match state.error.take() {
            Some(e) => Err(RecordError::WriterStopped(e)),
            None => Ok(()),
        }
    }

    /// Records written so far.
    pub fn written(&self) -> u64 {
        self.shared.lock().written
    }

    fn thread_gone(&self) -> bool {
        let thread = self.thread.lock().unwrap_or_else(|p| p.into_inner());
        thread.as_ref().is_none_or(JoinHandle::is_finished)
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Err(e) = self.flush() {
            tracing::warn!(error = %e, "check records not all written");
        }
        self.shared.lock().stop = true;
        self.shared.wake.notify_one();
        self.shared.progress.notify_all();
        let thread = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

/// The writer thread's side.
struct Writer {
    dir: RecordDir,
    audit: AuditLog,
    shared: Arc<Shared>,
    /// Lines of records written whose append failed: retried first.
    pending: Vec<AuditLine>,
}

/// Appends tried per batch before its lines wait for the next one.
const APPEND_TRIES: u32 = 3;
/// Lines kept for a retry at most; older ones beyond are dropped (and
/// said so): their records are on disk, `audit verify` names them.
const MAX_PENDING: usize = 65_536;
/// How often lines waiting for a retry are tried again when nothing else
/// wakes the writer.
const RETRY_AFTER: Duration = Duration::from_secs(1);

impl Writer {
    /// Appends the waiting lines and `lines`, trying a few times; what
    /// still fails waits for the next batch. The lines appended.
    fn append(&mut self, lines: Vec<AuditLine>) -> Result<u64, RecordError> {
        self.pending.extend(lines);
        if self.pending.is_empty() {
            return Ok(0);
        }
        let mut last = None;
        for attempt in 0..APPEND_TRIES {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(10 << (2 * attempt)));
            }
            match self.audit.append_all(self.pending.clone()) {
                Ok(()) => {
                    let n = self.pending.len() as u64;
                    self.pending.clear();
                    return Ok(n);
                }
                Err(e) => last = Some(e),
            }
        }
        if self.pending.len() > MAX_PENDING {
            let dropped = self.pending.len() - MAX_PENDING;
            self.pending.drain(..dropped);
            tracing::error!(dropped, "audit lines dropped after failed appends");
        }
        Err(last.unwrap_or_else(|| RecordError::WriterStopped("append failed".into())))
    }

    fn run(mut self) {
        let mut idle_since = Instant::now();
        loop {
            let jobs = {
                let mut state = self.shared.lock();
                loop {
                    let retry = !self.pending.is_empty();
                    if state.stop && state.jobs.is_empty() && !retry {
                        return;
                    }
                    let due = state.flushing || state.stop || state.jobs.len() >= BATCH;
                    if (!state.jobs.is_empty() || retry) && due {
                        break;
                    }
                    if retry && idle_since.elapsed() >= RETRY_AFTER {
                        break;
                    }
                    if state.jobs.is_empty() && !retry && idle_since.elapsed() >= PARK_AFTER {
                        state.parked = true;
                        state = self
                            .shared
                            .wake
                            .wait(state)
                            .unwrap_or_else(|p| p.into_inner());
                        continue;
                    }
                    let had = state.jobs.len();
                    let (next, timeout) = self
                        .shared
                        .wake
                        .wait_timeout(state, LINGER)
                        .unwrap_or_else(|p| p.into_inner());
                    state = next;
                    if had > 0 && timeout.timed_out() {
                        break;
                    }
                }
                let jobs: Vec<Job> = state.jobs.drain(..).collect();
                state.writing = jobs.len();
                jobs
            };
            let mut error = None;
            let mut lines = Vec::new();
            for job in jobs {
                match self.write(job) {
                    Ok(Some(line)) => lines.push(line),
                    Ok(None) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "writing a check record failed");
                        error.get_or_insert(e.to_string());
                    }
                }
            }
            let stopping = self.shared.lock().stop;
            let written = match self.append(lines) {
                Ok(n) => n,
                Err(e) => {
                    tracing::warn!(error = %e, waiting = self.pending.len(), "appending to the audit log failed: retried with the next batch");
                    error.get_or_insert(e.to_string());
                    if stopping {
                        tracing::error!(
                            lines = self.pending.len(),
                            "audit lines not appended at shutdown"
                        );
                        self.pending.clear();
                    }
                    0
                }
            };
            let mut state = self.shared.lock();
            state.writing = 0;
            state.written += written;
            state.unappended = self.pending.len();
            state.passes += 1;
            if let Some(e) = error {
                state.error.get_or_insert(e);
            }
            drop(state);
            self.shared.progress.notify_all();
            idle_since = Instant::now();
        }
    }

    /// Writes one job; the audit line of the record it wrote.
    fn write(&mut self, job: Job) -> Result<Option<AuditLine>, RecordError> {
        let input = match job {
            Job::Component(bytes) => {
                self.dir.cas().put(&bytes)?;
                return Ok(None);
            }
            Job::Record(input) => input,
        };
        let record = input.into_record(&self.dir.cas())?;
        let Some(path) = self.dir.record_path(&record.id) else {
            return Err(RecordError::Format {
                path: self.dir.root().to_owned(),
                message: format!("`{}` is not a check id", record.id),
            });
        };
        let mut bytes = serde_json::to_vec_pretty(&record).unwrap_or_default();
        bytes.push(b'\n');
        crate::cas::write_atomic(&path, &bytes)?;
        let answer = match &record.answer {
            RecordedAnswer::Verdict { verdict } if verdict.complete => "complete".to_owned(),
            RecordedAnswer::Verdict { .. } => "incomplete".to_owned(),
            RecordedAnswer::Key { .. } => "key".to_owned(),
            RecordedAnswer::Error { class, .. } => class.clone(),
        };
        Ok(Some(AuditLine {
            seq: 0,
            prev: String::new(),
            record: record.id.clone(),
            record_sha256: record.integrity.clone(),
            tenant: record.tenant.clone(),
            verifier: record.verifier.digest.clone(),
            answer,
            at_ms: record.clock.wall_ms,
            hash: String::new(),
        }))
    }
}
