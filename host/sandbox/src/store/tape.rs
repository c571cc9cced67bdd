//! What a call sees from outside the guest, written down (recording) or
//! played back (replaying): the seed of its randomness, its wall clock, the
//! monotonic clock readings, every artifact operation and every question
//! about its timers (`ready`, `block` and `poll` on a `wasi:clocks`
//! subscription), in order.
//!
//! Everything else a guest computes follows from the component, the packet
//! and the limits, so a call replayed with the same [`CallTrace`] answers
//! the same. The tape lives in the call's store; host imports write to it
//! as they answer the guest.

use crate::artifacts::{ArtifactData, ArtifactError, ArtifactStore};
use rand::SeedableRng;
use rand::rngs::{ChaCha8Rng, ChaCha20Rng};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

/// Bytes in a call's random seed.
pub const SEED_BYTES: usize = 32;

/// Runs of monotonic clock readings a trace keeps; a call reading more
/// distinct times than this (more than 100 s of 1 ms steps) has an
/// incomplete trace.
pub const MAX_CLOCK_RUNS: usize = 100_000;

/// Runs of timer questions a trace keeps ([`MAX_CLOCK_RUNS`] again); a call
/// asking more has an incomplete trace.
pub const MAX_TIMER_RUNS: usize = MAX_CLOCK_RUNS;

/// Questions about a call's timers (pollables from `subscribe-duration` or
/// `subscribe-instant`) and their answers, in order; equal ones in a row are
/// one entry with their `count`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimerOp {
    /// `pollable.ready()` on a timer, answered `ready`.
    Ready {
        /// The answer.
        ready: bool,
        /// How many questions in a row got it.
        count: u32,
    },
    /// `pollable.block()` on a timer: it returned (the timer was due).
    Block {
        /// How many in a row.
        count: u32,
    },
    /// `poll` on a list of `asked` pollables, one at least a timer,
    /// answered with the indices in `ready`.
    Poll {
        /// The length of the list.
        asked: u32,
        /// The indices answered ready.
        ready: Vec<u32>,
        /// How many in a row got this answer to this question.
        count: u32,
    },
}

impl TimerOp {
    /// How many questions the entry stands for.
    pub fn count(&self) -> u32 {
        match self {
            Self::Ready { count, .. } | Self::Block { count } | Self::Poll { count, .. } => *count,
        }
    }

    fn count_mut(&mut self) -> &mut u32 {
        match self {
            Self::Ready { count, .. } | Self::Block { count } | Self::Poll { count, .. } => count,
        }
    }

    /// The question and its answer, one at a time.
    fn one(question: &TimerQuestion, answer: &TimerAnswer) -> Option<Self> {
        Some(match (question, answer) {
            (TimerQuestion::Ready, TimerAnswer::Ready(ready)) => Self::Ready {
                ready: *ready,
                count: 1,
            },
            (TimerQuestion::Block, TimerAnswer::Blocked) => Self::Block { count: 1 },
            (TimerQuestion::Poll { asked }, TimerAnswer::Polled(ready)) => Self::Poll {
                asked: *asked,
                ready: ready.clone(),
                count: 1,
            },
            _ => return None,
        })
    }

    /// The question this entry answers.
    fn question(&self) -> TimerQuestion {
        match self {
            Self::Ready { .. } => TimerQuestion::Ready,
            Self::Block { .. } => TimerQuestion::Block,
            Self::Poll { asked, .. } => TimerQuestion::Poll { asked: *asked },
        }
    }

    /// The answer this entry gives.
    fn answer(&self) -> TimerAnswer {
        match self {
            Self::Ready { ready, .. } => TimerAnswer::Ready(*ready),
            Self::Block { .. } => TimerAnswer::Blocked,
            Self::Poll { ready, .. } => TimerAnswer::Polled(ready.clone()),
        }
    }
}

/// A question a guest asks about its timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimerQuestion {
    /// `pollable.ready()`.
    Ready,
    /// `pollable.block()`.
    Block,
    /// `poll` on a list of `asked` pollables.
    Poll { asked: u32 },
}

impl std::fmt::Display for TimerQuestion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Ready => f.write_str("ready()"),
            Self::Block => f.write_str("block()"),
            Self::Poll { asked } => write!(f, "poll() of {asked}"),
        }
    }
}

/// The answer to a [`TimerQuestion`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TimerAnswer {
    Ready(bool),
    Blocked,
    Polled(Vec<u32>),
}

/// Where a replay's questions about its timers left the recorded ones: from
/// there on, the replay's timers answer live.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TapeMismatch {
    /// The replay asked another question than the record holds.
    #[error("timer question {index} is `{asked}`, the record has `{recorded}`")]
    Different {
        /// The question's place, from 0.
        index: u64,
        /// What the replay asked.
        asked: String,
        /// What the record holds there.
        recorded: String,
    },
    /// The replay asked more questions than the record holds.
    #[error("timer question {index} (`{asked}`) is past the record's last one")]
    Unrecorded {
        /// The question's place, from 0.
        index: u64,
        /// What the replay asked.
        asked: String,
    },
    /// The replay stopped before asking every recorded question.
    #[error("the replay asked {asked} timer questions, the record holds {recorded}")]
    Unasked {
        /// Questions asked.
        asked: u64,
        /// Questions recorded.
        recorded: u64,
    },
    /// The recorded answer cannot be one to the question (a `poll` answer
    /// naming no index, or one past the list).
    #[error("the recorded answer to timer question {index} is impossible: {detail}")]
    Invalid {
        /// The question's place, from 0.
        index: u64,
        /// What is wrong with it.
        detail: String,
    },
}

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
    /// The questions about timers and their answers, in order. `None` in a
    /// trace written before timers were taped: replaying it, timers answer
    /// live.
    pub timers: Option<Vec<TimerOp>>,
    /// Set on a replay's trace when the replay's timer questions left the
    /// recorded ones (see [`TapeMismatch`]).
    pub mismatch: Option<TapeMismatch>,
    /// False when the trace may miss something the guest saw: the caller
    /// left at the deadline or on cancellation before the guest stopped, or
    /// the guest read more than [`MAX_CLOCK_RUNS`] clock values or asked
    /// more than [`MAX_TIMER_RUNS`] runs of timer questions.
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
            timers: Some(Vec::new()),
            mismatch: None,
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
    /// The call's live timer pollables (their resource reps).
    timer_reps: HashSet<u32>,
    /// When replaying a trace with timers: the answers still to give.
    replay_timers: Option<VecDeque<TimerOp>>,
    /// Timer questions in the trace replayed.
    recorded_questions: u64,
    /// Timer questions asked so far.
    asked: u64,
}

impl TapeState {
    /// A tape recording a call with `seed` at `wall_clock_ms`.
    pub(crate) fn record(seed: [u8; SEED_BYTES], wall_clock_ms: u64) -> Self {
        Self {
            trace: CallTrace::new(seed, wall_clock_ms),
            replay_clock: None,
            last_replayed: 0,
            timer_reps: HashSet::new(),
            replay_timers: None,
            recorded_questions: 0,
            asked: 0,
        }
    }

    /// A tape replaying `trace`'s seed and clocks (its artifacts come from
    /// [`CallTrace::artifact_store`]); it records the replay as it goes.
    pub(crate) fn replay(trace: &CallTrace) -> Self {
        Self {
            trace: CallTrace::new(trace.seed, trace.wall_clock_ms),
            replay_clock: Some(trace.monotonic.iter().copied().collect()),
            last_replayed: 0,
            timer_reps: HashSet::new(),
            replay_timers: trace
                .timers
                .as_ref()
                .map(|ops| ops.iter().cloned().collect()),
            recorded_questions: trace
                .timers
                .iter()
                .flatten()
                .map(|op| u64::from(op.count()))
                .sum(),
            asked: 0,
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

    /// Notes a new timer pollable (resource rep `rep`).
    pub(crate) fn timer_subscribed(&mut self, rep: u32) {
        self.timer_reps.insert(rep);
    }

    /// Forgets a dropped pollable.
    pub(crate) fn pollable_dropped(&mut self, rep: u32) {
        self.timer_reps.remove(&rep);
    }

    /// True when the pollable `rep` is one of the call's timers.
    pub(crate) fn is_timer(&self, rep: u32) -> bool {
        self.timer_reps.contains(&rep)
    }

    /// When replaying a trace with timers and still on it: the recorded
    /// answer to `question`, the next one. `None` (answer live) when not
    /// replaying, or once the replay left the record ([`TapeMismatch`],
    /// noted in the trace the first time).
    pub(crate) fn replayed(&mut self, question: TimerQuestion) -> Option<TimerAnswer> {
        let index = self.asked;
        let queue = self.replay_timers.as_mut()?;
        let mismatch = match queue.front_mut() {
            None => TapeMismatch::Unrecorded {
                index,
                asked: question.to_string(),
            },
            Some(op) if op.question() != question => TapeMismatch::Different {
                index,
                asked: question.to_string(),
                recorded: op.question().to_string(),
            },
            Some(op) => {
                let answer = op.answer();
                let count = op.count_mut();
                *count = count.saturating_sub(1);
                if *count == 0 {
                    queue.pop_front();
                }
                match impossible(question, &answer) {
                    None => return Some(answer),
                    Some(detail) => TapeMismatch::Invalid { index, detail },
                }
            }
        };
        self.replay_timers = None;
        self.trace.mismatch.get_or_insert(mismatch);
        None
    }

    /// Writes down a timer question and the answer the guest got.
    pub(crate) fn timer(&mut self, question: TimerQuestion, answer: TimerAnswer) {
        self.asked += 1;
        let Some(op) = TimerOp::one(&question, &answer) else {
            return;
        };
        let Some(ops) = self.trace.timers.as_mut() else {
            return;
        };
        let full = ops.len() >= MAX_TIMER_RUNS;
        match ops.last_mut() {
            Some(last)
                if last.question() == question
                    && last.answer() == answer
                    && last.count() < u32::MAX =>
            {
                *last.count_mut() += 1;
            }
            _ if full => self.trace.complete = false,
            _ => ops.push(op),
        }
    }

    /// The trace of the call; a replay that asked fewer timer questions
    /// than recorded is noted as a [`TapeMismatch::Unasked`].
    pub(crate) fn into_trace(mut self) -> CallTrace {
        if self.replay_timers.is_some() && self.asked < self.recorded_questions {
            self.trace.mismatch.get_or_insert(TapeMismatch::Unasked {
                asked: self.asked,
                recorded: self.recorded_questions,
            });
        }
        self.trace
    }
}

/// Why `answer` cannot answer `question` (`None`: it can).
fn impossible(question: TimerQuestion, answer: &TimerAnswer) -> Option<String> {
    let (TimerQuestion::Poll { asked }, TimerAnswer::Polled(ready)) = (question, answer) else {
        return None;
    };
    if ready.is_empty() {
        return Some("a poll answered with no index".to_owned());
    }
    ready
        .iter()
        .find(|&&i| i >= asked)
        .map(|i| format!("a poll of {asked} answered index {i}"))
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
    fn timer_answers_are_written_as_runs_and_replayed_in_order() {
        let mut tape = TapeState::record([7; SEED_BYTES], 5);
        assert_eq!(tape.replayed(TimerQuestion::Ready), None, "recording: live");
        for ready in [false, false, false, true] {
            tape.timer(TimerQuestion::Ready, TimerAnswer::Ready(ready));
        }
        tape.timer(
            TimerQuestion::Poll { asked: 2 },
            TimerAnswer::Polled(vec![1]),
        );
        tape.timer(TimerQuestion::Block, TimerAnswer::Blocked);
        let trace = tape.into_trace();
        assert_eq!(
            trace.timers,
            Some(vec![
                TimerOp::Ready {
                    ready: false,
                    count: 3
                },
                TimerOp::Ready {
                    ready: true,
                    count: 1
                },
                TimerOp::Poll {
                    asked: 2,
                    ready: vec![1],
                    count: 1
                },
                TimerOp::Block { count: 1 },
            ])
        );
        assert_eq!(trace.mismatch, None);

        // The same questions get the recorded answers.
        let mut again = TapeState::replay(&trace);
        let ask = |tape: &mut TapeState, q: TimerQuestion| {
            let answer = tape.replayed(q);
            if let Some(a) = &answer {
                tape.timer(q, a.clone());
            }
            answer
        };
        for ready in [false, false, false, true] {
            assert_eq!(
                ask(&mut again, TimerQuestion::Ready),
                Some(TimerAnswer::Ready(ready))
            );
        }
        assert_eq!(
            ask(&mut again, TimerQuestion::Poll { asked: 2 }),
            Some(TimerAnswer::Polled(vec![1]))
        );
        assert_eq!(
            ask(&mut again, TimerQuestion::Block),
            Some(TimerAnswer::Blocked)
        );
        let replayed = again.into_trace();
        assert_eq!(
            (replayed.timers, replayed.mismatch),
            (trace.timers.clone(), None)
        );

        // Another question, one too many, or one too few: a mismatch, and
        // the rest answers live.
        let mut other = TapeState::replay(&trace);
        assert_eq!(ask(&mut other, TimerQuestion::Block), None);
        assert_eq!(ask(&mut other, TimerQuestion::Ready), None);
        assert_eq!(
            other.into_trace().mismatch,
            Some(TapeMismatch::Different {
                index: 0,
                asked: "block()".into(),
                recorded: "ready()".into()
            })
        );
        let mut more = TapeState::replay(&trace);
        for q in [TimerQuestion::Ready; 4]
            .into_iter()
            .chain([TimerQuestion::Poll { asked: 2 }, TimerQuestion::Block])
        {
            assert!(ask(&mut more, q).is_some());
        }
        assert_eq!(ask(&mut more, TimerQuestion::Ready), None);
        assert!(matches!(
            more.into_trace().mismatch,
            Some(TapeMismatch::Unrecorded { index: 6, .. })
        ));
        let mut fewer = TapeState::replay(&trace);
        assert!(ask(&mut fewer, TimerQuestion::Ready).is_some());
        assert_eq!(
            fewer.into_trace().mismatch,
            Some(TapeMismatch::Unasked {
                asked: 1,
                recorded: 6
            })
        );
    }

    #[test]
    fn an_impossible_poll_answer_is_a_mismatch() {
        let mut trace = CallTrace::new([0; SEED_BYTES], 0);
        trace.timers = Some(vec![TimerOp::Poll {
            asked: 2,
            ready: vec![5],
            count: 1,
        }]);
        let mut tape = TapeState::replay(&trace);
        assert_eq!(tape.replayed(TimerQuestion::Poll { asked: 2 }), None);
        assert!(matches!(
            tape.into_trace().mismatch,
            Some(TapeMismatch::Invalid { index: 0, .. })
        ));
        // A trace from before timers were taped: live, no mismatch.
        trace.timers = None;
        let mut old = TapeState::replay(&trace);
        assert_eq!(old.replayed(TimerQuestion::Block), None);
        assert_eq!(old.into_trace().mismatch, None);
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
