//! The recorder: records are written by a thread of their own, never on
//! the checking thread.
//!
//! A check hands over what it saw ([`RecordInput`]) and goes on; the
//! writer keeps the artifact bytes in `cas/`, writes `<id>.json` and
//! appends the audit line, in the order the checks handed them over. It
//! wakes for a batch (or 5 ms after the first record of one), not for
//! every record, so recording adds no wake-up to a check; after a second
//! idle it sleeps until the next record.
//!
//! The queue is bounded by the bytes its records hold (the artifact bytes
//! each check read, its packet and clock readings:
//! [`RecorderOptions::max_queued_bytes`], 256 MiB by default), counted
//! until the writer has written them. A check that finds no room either
//! awaits it (the default: [`WhenFull::Wait`]; the thread goes on with
//! other work) or is refused at once with [`RecordError::Backlog`]
//! ([`WhenFull::Refuse`], what `verdict serve` does), so no record is
//! dropped and no thread blocks. A record bigger than the whole budget is
//! taken when the queue is empty. [`Recorder::flush`] returns once
//! everything handed over is on disk; [`Recorder::is_pending`] and
//! [`Recorder::settled`] look one record up without a flush.

use crate::audit::{AuditLine, AuditLog};
use crate::dir::RecordDir;
use crate::error::RecordError;
use crate::format::{RecordInput, RecordedAnswer};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use verdict_sandbox::ArtifactOp;

/// The default bound on the bytes records waiting for the writer hold.
pub const DEFAULT_QUEUE_BYTES: usize = 256 << 20;
/// What a record costs in the queue beyond its artifact bytes, packet
/// text and clock readings (its other fields, bounded).
const RECORD_OVERHEAD: usize = 4 << 10;

/// What a check does when the queue holds its byte bound already.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WhenFull {
    /// [`Recorder::submit`] awaits room (the check's thread runs other
    /// tasks meanwhile): the checks slow to the disk's pace.
    #[default]
    Wait,
    /// [`Recorder::submit`] refuses the record at once with
    /// [`RecordError::Backlog`]: the check must not be answered as
    /// recorded.
    Refuse,
}

/// How a [`Recorder`] bounds its queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecorderOptions {
    /// The bytes queued records may hold at most ([`DEFAULT_QUEUE_BYTES`]).
    pub max_queued_bytes: usize,
    /// What a check that finds no room does.
    pub when_full: WhenFull,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        Self {
            max_queued_bytes: DEFAULT_QUEUE_BYTES,
            when_full: WhenFull::Wait,
        }
    }
}
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

impl Job {
    /// The bytes the job holds, as the queue counts them.
    fn weight(&self) -> usize {
        match self {
            Job::Component(bytes) => bytes.len() + RECORD_OVERHEAD,
            Job::Record(input) => weight(input),
        }
    }
}

/// The bytes a record holds until it is written: what the check read,
/// its packet's text and observations, its clock runs, and a fixed part.
fn weight(input: &RecordInput) -> usize {
    let artifacts: usize = input
        .trace
        .artifacts
        .iter()
        .map(|op| match op {
            ArtifactOp::Read { id, result } => {
                id.len() + result.as_ref().map_or(0, |d| d.bytes.len() + d.revision.len())
            }
            ArtifactOp::List { prefix, result } => {
                prefix.len()
                    + result
                        .as_ref()
                        .map_or(0, |ids| ids.iter().map(|i| i.len() + 24).sum())
            }
        } + 64)
        .sum();
    let packet = input.packet.output_text.len() + input.packet.observations.len() * 256;
    artifacts + packet + input.trace.monotonic.len() * 16 + RECORD_OVERHEAD
}

#[derive(Default)]
struct State {
    jobs: VecDeque<(Job, usize)>,
    /// Bytes the queued jobs and those being written hold.
    bytes: usize,
    /// Records handed over and not yet written (or failed), by id: their
    /// tenant.
    pending: HashMap<String, String>,
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
    /// Wakes callers waiting for a flush.
    progress: Condvar,
    /// Wakes tasks awaiting room or a record (never a blocked thread).
    settled: tokio::sync::Notify,
    options: RecorderOptions,
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
        Self::open_with(dir, RecorderOptions::default())
    }

    /// A recorder writing into `dir` whose queue is bounded as `options`
    /// say.
    pub fn open_with(dir: RecordDir, options: RecorderOptions) -> Result<Self, RecordError> {
        let audit = AuditLog::open(&dir.audit_path())?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            progress: Condvar::new(),
            settled: tokio::sync::Notify::new(),
            options,
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

    /// Hands a record over to the writer. When the queue holds its byte
    /// bound already, awaits room ([`WhenFull::Wait`]) or refuses with
    /// [`RecordError::Backlog`] ([`WhenFull::Refuse`]); never blocks the
    /// thread.
    pub async fn submit(&self, input: RecordInput) -> Result<(), RecordError> {
        let id = input.id.clone();
        let tenant = input.tenant.clone();
        let job = Job::Record(Box::new(input));
        let weight = job.weight();
        let mut job = Some(job);
        loop {
            let settled = self.shared.settled.notified();
            let mut settled = std::pin::pin!(settled);
            settled.as_mut().enable();
            {
                let mut state = self.shared.lock();
                if state.stop {
                    return Err(RecordError::WriterStopped(
                        "the recorder is shut down".into(),
                    ));
                }
                let budget = self.shared.options.max_queued_bytes;
                let fits = state.bytes == 0 || state.bytes.saturating_add(weight) <= budget;
                if fits {
                    if let Some(job) = job.take() {
                        state.pending.insert(id, tenant);
                        self.enqueue(&mut state, job, weight);
                    }
                    return Ok(());
                }
                if self.shared.options.when_full == WhenFull::Refuse {
                    return Err(RecordError::Backlog {
                        queued: state.bytes,
                        record: weight,
                        budget,
                    });
                }
                // Room comes when the writer has written a record.
                state.parked = false;
                self.shared.wake.notify_one();
            }
            settled.await;
        }
    }

    /// Keeps a verifier component's bytes in `cas/` (under its digest), so
    /// its records replay without the file. Never waits: a component is
    /// counted in the queue's bytes but taken even over the bound.
    pub fn keep_component(&self, bytes: Arc<[u8]>) -> Result<(), RecordError> {
        let job = Job::Component(bytes);
        let weight = job.weight();
        let mut state = self.shared.lock();
        if state.stop {
            return Err(RecordError::WriterStopped(
                "the recorder is shut down".into(),
            ));
        }
        self.enqueue(&mut state, job, weight);
        Ok(())
    }

    fn enqueue(&self, state: &mut State, job: Job, weight: usize) {
        state.bytes = state.bytes.saturating_add(weight);
        state.jobs.push_back((job, weight));
        let len = state.jobs.len();
        if state.parked || len == BATCH {
            state.parked = false;
            self.shared.wake.notify_one();
        }
    }

    /// Bytes the records waiting for the writer (or being written) hold.
    pub fn queued_bytes(&self) -> usize {
        self.shared.lock().bytes
    }

    /// The tenant of record `id` when it was handed over and is not
    /// written yet (`None`: written, failed, or never handed over).
    pub fn is_pending(&self, id: &str) -> Option<String> {
        self.shared.lock().pending.get(id).cloned()
    }

    /// Returns once record `id` is no longer pending (written, or its
    /// write failed): a wait for that record only, no flush. Bound it
    /// with a timeout of the caller's runtime.
    pub async fn settled(&self, id: &str) {
        loop {
            let settled = self.shared.settled.notified();
            let mut settled = std::pin::pin!(settled);
            settled.as_mut().enable();
            {
                let mut state = self.shared.lock();
                if state.stop || !state.pending.contains_key(id) {
                    return;
                }
                if state.parked {
                    state.parked = false;
                    self.shared.wake.notify_one();
                }
            }
            settled.await;
        }
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
        self.shared.settled.notify_waiters();
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
                let jobs: Vec<(Job, usize)> = state.jobs.drain(..).collect();
                state.writing = jobs.len();
                jobs
            };
            let mut error = None;
            let mut lines = Vec::new();
            for (job, weight) in jobs {
                let id = match &job {
                    Job::Record(input) => Some(input.id.clone()),
                    Job::Component(_) => None,
                };
                match self.write(job) {
                    Ok(Some(line)) => lines.push(line),
                    Ok(None) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "writing a check record failed");
                        error.get_or_insert(e.to_string());
                    }
                }
                // The job's bytes are free and its record settled (on
                // disk, or failed and logged): wake who waits for either.
                let mut state = self.shared.lock();
                state.bytes = state.bytes.saturating_sub(weight);
                if let Some(id) = id {
                    state.pending.remove(&id);
                }
                drop(state);
                self.shared.settled.notify_waiters();
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
