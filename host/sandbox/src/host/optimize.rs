//! The background Cranelift compile of components loaded on Winch
//! ([`HostConfig::optimize_in_background`]): one worker thread per host,
//! started with its first job, compiling one component at a time within
//! [`BackgroundCompile`], caching the result by digest and switching the
//! verifier to it ([`crate::verifier::optimized`]).

use super::config::{BackgroundCompile, HostConfig};
use crate::error::LoadError;
use crate::load::compile::{compile_within, read_component};
use crate::load::compile_child::CompileIn;
use crate::load::shared::Shared;
use crate::verifier::{Code, WeakVerifier};
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// Where a job finds the component's bytes.
pub(crate) enum JobBytes {
    /// Held since the load.
    Held(Vec<u8>),
    /// Read again from this file (a load that found its digest in the
    /// index and never read it), and checked against the digest.
    File(PathBuf),
}

/// A component to compile with Cranelift for a verifier loaded on Winch.
pub(crate) struct Job {
    pub(crate) verifier: WeakVerifier,
    pub(crate) digest: String,
    pub(crate) bytes: JobBytes,
}

/// A host's background compiles: a queue served by one thread.
#[derive(Default)]
pub(crate) struct Optimizer {
    queue: Mutex<Option<Sender<Job>>>,
}

/// What the worker compiles with.
struct Worker {
    /// The Cranelift tier.
    shared: Arc<Shared>,
    bounds: BackgroundCompile,
}

impl Optimizer {
    /// Queues `job`, starting the worker first if need be. A job that
    /// cannot be queued leaves its verifier on Winch, reported.
    pub(crate) fn submit(&self, shared: &Arc<Shared>, config: &HostConfig, job: Job) {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let job = match queue.as_ref() {
            Some(q) => match q.send(job) {
                Ok(()) => return,
                Err(unsent) => unsent.0,
            },
            None => job,
        };
        let (send, receive) = channel::<Job>();
        let worker = Worker {
            shared: Arc::clone(shared),
            bounds: config.background_compile,
        };
        let started = std::thread::Builder::new()
            .name("verdict-optimize".into())
            .spawn(move || {
                // Ends once the host (every clone) is gone and the queue is
                // empty.
                while let Ok(job) = receive.recv() {
                    worker.run(job);
                }
            });
        match started {
            Ok(_) => {
                // The receiver lives on the thread just started.
                if let Err(unsent) = send.send(job) {
                    fail(&unsent.0, "the background compiler is gone".into());
                }
                *queue = Some(send);
            }
            Err(err) => fail(
                &job,
                format!("cannot start the background compiler: {}", err.kind()),
            ),
        }
    }
}

/// Reports a job that will not run.
fn fail(job: &Job, why: String) {
    tracing::warn!(digest = %job.digest, error = %why, "not optimized; staying on Winch");
    if let Some(verifier) = job.verifier.upgrade() {
        verifier.optimize_failed(why);
    }
}

impl Worker {
    fn run(&self, job: Job) {
        // A verifier dropped while queued is not compiled for.
        if job.verifier.upgrade().is_none() {
            return;
        }
        let started = Instant::now();
        match self.optimize(&job) {
            Ok(code) => match job.verifier.upgrade() {
                Some(verifier) => {
                    tracing::info!(digest = %job.digest, elapsed = ?started.elapsed(), "optimized verifier: switched to Cranelift");
                    verifier.install_optimized(code);
                }
                None => drop(code),
            },
            Err(err) => fail(&job, err.to_string()),
        }
    }

    /// The Cranelift code of the job's component, prepared whole.
    fn optimize(&self, job: &Job) -> Result<Code, LoadError> {
        let shared = &self.shared;
        let read;
        let bytes = match &job.bytes {
            JobBytes::Held(bytes) => bytes.as_slice(),
            JobBytes::File(path) => {
                read = read_component(path, shared.load.max_component_bytes)?;
                if hex::encode(Sha256::digest(&read)) != job.digest {
                    return Err(LoadError::Io(
                        "the file changed since it was loaded".to_owned(),
                    ));
                }
                &read
            }
        };
        let mut limits = shared.load;
        let compile_in = match &shared.compile_in {
            CompileIn::Process => CompileIn::Process,
            CompileIn::Child(child) => {
                limits.max_compile_cost = self.bounds.max_compile_cost;
                let mut child = child.clone();
                child.timeout = self.bounds.timeout;
                child.threads = self.bounds.threads;
                CompileIn::Child(child)
            }
        };
        let (component, _) = compile_within(shared, bytes, &job.digest, &limits, &compile_in)?;
        let (code, _) = Code::prepare(Arc::clone(shared), &component)?;
        Ok(code)
    }
}
