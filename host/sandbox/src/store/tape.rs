//! What a call sees from outside the guest, written down (recording) or
//! played back (replaying): the seed of its randomness, its wall clock, the
//! monotonic clock readings and every artifact operation, in order.
//!
//! Everything else a guest computes follows from the component, the packet
//! and the limits, so a call replayed with the same [`CallTrace`] answers
//! the same. The tape lives in the call's store; host imports write to it
//! as they answer the guest.

use crate::artifacts::{ArtifactData, ArtifactError, ArtifactStore};
use rand::SeedableRng;
use rand::rngs::{ChaCha8Rng, ChaCha20Rng};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// Bytes in a call's random seed.
pub const SEED_BYTES: usize = 32;

/// Runs of monotonic clock readings a trace keeps; a call reading more
/// distinct times than this (more than 100 s of 1 ms steps) has an
/// incomplete trace.
pub const MAX_CLOCK_RUNS: usize = 100_000;

/// One artifact operation of a call, in the order the guest asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactOp {
    /// `artifacts.read`.
    Read {
        /// The id asked for.
        id: String,
        /// What the guest got.
        result: Result<ArtifactData, ArtifactError>,
    },
    /// `artifacts.list`.
    List {
        /// The prefix asked for.
        prefix: String,
        /// What the guest got.
        result: Result<Vec<String>, ArtifactError>,
    },
}

/// `count` monotonic clock readings in a row that all said `nanos`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockRun {
    /// The reading: nanoseconds since the call started.
    pub nanos: u64,
    /// How many readings in a row gave it.
    pub count: u32,
}

/// What one call saw from outside the guest (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallTrace {
    /// The seed of the call's `wasi:random` streams (drawn from the OS).
    pub seed: [u8; SEED_BYTES],
    /// The call's wall clock, milliseconds since the Unix epoch.
    pub wall_clock_ms: u64,
    /// The monotonic clock readings, in order.
    pub monotonic: Vec<ClockRun>,
    /// The artifact operations, in order (refused ones included).
    pub artifacts: Vec<ArtifactOp>,
    /// False when the trace may miss something the guest saw: the caller
    /// left at the deadline or on cancellation before the guest stopped, or
    /// the guest read more than [`MAX_CLOCK_RUNS`] clock values.
    pub complete: bool,
}

impl CallTrace {
    /// An empty trace of a call with `seed` at wall time `wall_clock_ms`.
    pub fn new(seed: [u8; SEED_BYTES], wall_clock_ms: u64) -> Self {
        Self {
            seed,
            wall_clock_ms,
            monotonic: Vec::new(),
            artifacts: Vec::new(),
            complete: true,
        }
    }

    /// A store answering the artifact operations of this trace as they were
    /// answered: each id (or prefix) gets its recorded results in order,
    /// the last one again when asked more often; an id the trace never read
    /// is not found.
    pub fn artifact_store(&self) -> Arc<dyn ArtifactStore> {
        let mut reads: HashMap<String, VecDeque<Result<ArtifactData, ArtifactError>>> =
            HashMap::new();
        let mut lists: HashMap<String, VecDeque<Result<Vec<String>, ArtifactError>>> =
            HashMap::new();
        for op in &self.artifacts {
            match op {
                // The call's own budget refused these: the store never saw them.
                ArtifactOp::Read {
                    result: Err(ArtifactError::LimitReached),
                    ..
                }
                | ArtifactOp::List {
                    result: Err(ArtifactError::LimitReached),
                    ..
                } => {}
                ArtifactOp::Read { id, result } => {
                    reads
                        .entry(id.clone())
                        .or_default()
                        .push_back(result.clone());
                }
                ArtifactOp::List { prefix, result } => {
                    lists
                        .entry(prefix.clone())
                        .or_default()
                        .push_back(result.clone());
                }
            }
        }
        Arc::new(TraceArtifacts {
            answers: Mutex::new(Answers { reads, lists }),
        })
    }
}

/// Draws a seed from the operating system.
pub fn draw_seed() -> Result<[u8; SEED_BYTES], getrandom::Error> {
    let mut seed = [0; SEED_BYTES];
    getrandom::fill(&mut seed)?;
    Ok(seed)
}

/// A seed for the stream `label`, derived from the call's seed.
fn derive(seed: &[u8; SEED_BYTES], label: &str) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(b"verdict/random/");
    hash.update(label.as_bytes());
    hash.update(seed);
    hash.finalize().into()
}

/// The call's `wasi:random` streams from `seed`: ChaCha20 for
/// `random`, ChaCha8 for `insecure`, and `insecure-seed`, each from its
/// own SHA-256 derivation of the seed.
pub(crate) fn seeded_random(seed: &[u8; SEED_BYTES]) -> (ChaCha20Rng, ChaCha8Rng, u128) {
    let secure = ChaCha20Rng::from_seed(derive(seed, "secure"));
    let insecure = ChaCha8Rng::from_seed(derive(seed, "insecure"));
    let [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, ..] = derive(seed, "insecure-seed");
    let insecure_seed = u128::from_le_bytes([a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p]);
    (secure, insecure, insecure_seed)
}

/// Where a taped call's trace arrives once its store is done.
pub(crate) type TraceSink = Arc<Mutex<Option<CallTrace>>>;

/// A taped call's trace, to be collected after the call.
pub(crate) struct Taped {
    pub(crate) sink: TraceSink,
    pub(crate) seed: [u8; SEED_BYTES],
    pub(crate) wall_clock_ms: u64,
}

impl Taped {
    /// The trace the call left; an incomplete one (seed and wall clock
    /// only) when its caller returned before the guest stopped.
    pub(crate) fn collect(self) -> CallTrace {
        let left = self.sink.lock().unwrap_or_else(|p| p.into_inner()).take();
        left.unwrap_or_else(|| CallTrace {
            complete: false,
            ..CallTrace::new(self.seed, self.wall_clock_ms)
        })
    }
}

/// The tape in a call's store.
#[derive(Debug)]
pub(crate) struct TapeState {
    /// What this call saw so far.
    pub(crate) trace: CallTrace,
    /// When replaying: the monotonic readings still to give.
    replay_clock: Option<VecDeque<ClockRun>>,
    /// The last monotonic reading given while replaying.
    last_replayed: u64,
}

impl TapeState {
    /// A tape recording a call with `seed` at `wall_clock_ms`.
    pub(crate) fn record(seed: [u8; SEED_BYTES], wall_clock_ms: u64) -> Self {
        Self {
            trace: CallTrace::new(seed, wall_clock_ms),
            replay_clock: None,
            last_replayed: 0,
        }
    }

    /// A tape replaying `trace`'s seed and clocks (its artifacts come from
    /// [`CallTrace::artifact_store`]); it records the replay as it goes.
    pub(crate) fn replay(trace: &CallTrace) -> Self {
        Self {
            trace: CallTrace::new(trace.seed, trace.wall_clock_ms),
            replay_clock: Some(trace.monotonic.iter().copied().collect()),
            last_replayed: 0,
        }
    }

    /// The monotonic reading to give the guest: the recorded one when
    /// replaying (the last one again once they run out), else `live`;
    /// written down either way.
    pub(crate) fn monotonic(&mut self, live: u64) -> u64 {
        let nanos = match &mut self.replay_clock {
            Some(runs) => {
                if let Some(run) = runs.front_mut() {
                    self.last_replayed = run.nanos;
                    run.count = run.count.saturating_sub(1);
                    if run.count == 0 {
                        runs.pop_front();
                    }
                }
                self.last_replayed
            }
            None => live,
        };
        let runs = &mut self.trace.monotonic;
        let full = runs.len() >= MAX_CLOCK_RUNS;
        match runs.last_mut() {
            Some(last) if last.nanos == nanos && last.count < u32::MAX => last.count += 1,
            _ if full => self.trace.complete = false,
            _ => runs.push(ClockRun { nanos, count: 1 }),
        }
        nanos
    }

    /// Writes down an artifact operation.
    pub(crate) fn artifact(&mut self, op: ArtifactOp) {
        self.trace.artifacts.push(op);
    }
}

/// What [`CallTrace::artifact_store`] still has to give.
#[derive(Debug)]
struct Answers {
    reads: HashMap<String, VecDeque<Result<ArtifactData, ArtifactError>>>,
    lists: HashMap<String, VecDeque<Result<Vec<String>, ArtifactError>>>,
}

/// The next recorded answer for a key: popped while more remain, the last
/// one kept.
fn next<T: Clone>(queue: Option<&mut VecDeque<T>>) -> Option<T> {
    let queue = queue?;
    if queue.len() > 1 {
        queue.pop_front()
    } else {
        queue.front().cloned()
    }
}

/// An artifact store answering from a trace.
#[derive(Debug)]
struct TraceArtifacts {
    answers: Mutex<Answers>,
}

impl ArtifactStore for TraceArtifacts {
    fn read(&self, id: &str, _max_bytes: u64) -> Result<ArtifactData, ArtifactError> {
        let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        next(answers.reads.get_mut(id)).unwrap_or(Err(ArtifactError::NotFound))
    }

    fn list(&self, prefix: &str, _max_entries: usize) -> Result<Vec<String>, ArtifactError> {
        let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        next(answers.lists.get_mut(prefix)).unwrap_or(Ok(Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn data(id: &str, bytes: &[u8]) -> ArtifactData {
        ArtifactData {
            id: id.to_owned(),
            revision: "r1".to_owned(),
            size: bytes.len() as u64,
            bytes: bytes.to_vec(),
        }
    }

    #[test]
    fn readings_are_written_as_runs_and_replayed_in_order() {
        let mut tape = TapeState::record([7; SEED_BYTES], 5);
        for live in [0, 0, 0, 1_000_000, 3_000_000, 3_000_000] {
            assert_eq!(tape.monotonic(live), live);
        }
        let trace = tape.trace.clone();
        assert_eq!(
            trace.monotonic,
            vec![
                ClockRun { nanos: 0, count: 3 },
                ClockRun {
                    nanos: 1_000_000,
                    count: 1
                },
                ClockRun {
                    nanos: 3_000_000,
                    count: 2
                },
            ]
        );
        let mut again = TapeState::replay(&trace);
        let seen: Vec<u64> = (0..7).map(|_| again.monotonic(42)).collect();
        assert_eq!(
            seen,
            [0, 0, 0, 1_000_000, 3_000_000, 3_000_000, 3_000_000],
            "the live clock is never read while replaying"
        );
    }

    #[test]
    fn the_store_answers_each_id_as_recorded() {
        let mut trace = CallTrace::new([0; SEED_BYTES], 0);
        trace.artifacts = vec![
            ArtifactOp::Read {
                id: "a".into(),
                result: Ok(data("a", b"one")),
            },
            ArtifactOp::Read {
                id: "a".into(),
                result: Err(ArtifactError::NotFound),
            },
            ArtifactOp::Read {
                id: "b".into(),
                result: Err(ArtifactError::LimitReached),
            },
            ArtifactOp::List {
                prefix: "".into(),
                result: Ok(vec!["a".into()]),
            },
        ];
        let store = trace.artifact_store();
        assert_eq!(store.read("a", 10), Ok(data("a", b"one")));
        assert_eq!(store.read("a", 10), Err(ArtifactError::NotFound));
        assert_eq!(store.read("a", 10), Err(ArtifactError::NotFound));
        assert_eq!(store.read("b", 10), Err(ArtifactError::NotFound));
        assert_eq!(store.list("", 10), Ok(vec!["a".to_owned()]));
        assert_eq!(store.list("x/", 10), Ok(Vec::new()));
    }

    #[test]
    fn streams_follow_the_seed() {
        use rand::Rng;
        let draw = |seed: &[u8; SEED_BYTES]| {
            let (mut secure, mut insecure, insecure_seed) = seeded_random(seed);
            (secure.next_u64(), insecure.next_u64(), insecure_seed)
        };
        assert_eq!(draw(&[1; SEED_BYTES]), draw(&[1; SEED_BYTES]));
        assert_ne!(draw(&[1; SEED_BYTES]), draw(&[2; SEED_BYTES]));
        let seeds = (draw_seed().unwrap(), draw_seed().unwrap());
        assert_ne!(seeds.0, seeds.1);
    }
}
