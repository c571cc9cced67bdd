//! The execution's state, its start, turns, recovery and stops.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use crate::canonical::Fingerprint;
use crate::checker::CheckerIdentities;
use crate::config::{LoopPolicy, PolicyError};
use crate::diagnostics::{
    Counters, LoopDiagnostics, Phase, RecoveryTrigger, StopReason, TrackingBound,
};
use crate::feedback;
use crate::packet::{Effect, FailureKind, Observation, TaskStateSnapshot};
use crate::scope::CheckView;

use super::decision::{CheckTicket, Decision, TurnDecision};

/// A call signature: tool name and argument fingerprint (shared between the
/// signature table and the calls admitted under it).
pub(super) type Signature = Arc<(String, Fingerprint)>;

/// What a read's result is known to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ResultIdentity {
    /// Fingerprinted.
    Known(Fingerprint),
    /// Not supplied by the loop: identity falls back to the arguments.
    NotKnown,
    /// Over a bound: never identical to anything.
    Unfingerprintable,
}

/// Per-signature accounting.
#[derive(Debug, Default)]
pub(super) struct SignatureState {
    /// Admissions not released by `not_started`.
    pub live: u32,
    /// The latest settled read result.
    pub last_result: Option<ResultIdentity>,
    /// Consecutive identical repeats of the read after its first result.
    pub repeats: u32,
    /// Feedback was given: asking again stops.
    pub flagged: bool,
}

/// What the engine knows a call by. Never the provider's call id alone:
/// providers omit, empty or repeat ids, so an admission is keyed by the
/// call sequence number the loop assigns, and a call admitted elsewhere by
/// its delivery identity (origin execution and call id).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum CallKey {
    /// Admitted by this execution under this sequence number.
    Admitted(u64),
    /// Admitted elsewhere; delivered (or expected) under this identity.
    Delivered(String),
}

/// One tracked call.
#[derive(Debug)]
pub(super) struct TrackedCall {
    /// The id its observation carries (the loop's per-execution id).
    pub call_id: String,
    pub signature: Signature,
    pub effect: Effect,
    pub settled: bool,
}

/// A copy of the policy taken at start.
pub(super) struct Snapshot {
    pub max_recovery_attempts: u32,
    pub repeated_read_limit: u32,
    pub unchanged_progress_limit: u32,
    pub max_admissions: u32,
    pub max_call_signatures: u32,
    pub max_observations: u32,
    pub read_allowlist: HashSet<String>,
    /// The checkers' identities (`None`: no checker of that role).
    pub checkers: CheckerIdentities,
}

/// A check in flight: what it was asked under, and what a restart under a
/// new scope needs.
#[derive(Debug)]
pub(super) struct PendingCheck {
    pub ticket: CheckTicket,
    /// The view the check was asked under, with the engine's checker
    /// identity.
    pub view: CheckView,
    pub output: String,
    pub output_truncated: bool,
    pub task_state: Option<TaskStateSnapshot>,
}

/// One policy execution. Create with [`PolicyExecution::start`].
pub struct PolicyExecution {
    pub(super) policy: Snapshot,
    pub(super) max_iterations: Option<u32>,
    pub(super) diag: LoopDiagnostics,
    pub(super) signatures: HashMap<Signature, SignatureState>,
    pub(super) calls: HashMap<CallKey, TrackedCall>,
    pub(super) outstanding: usize,
    pub(super) failure_identities: HashSet<(String, Option<Fingerprint>, Option<FailureKind>)>,
    pub(super) observations: VecDeque<Observation>,
    pub(super) pending_feedback: Vec<String>,
    pub(super) pending_check: Option<PendingCheck>,
    pub(super) next_ticket: u64,
    pub(super) last_progress_key: Option<String>,
    pub(super) unchanged_samples: u32,
}

impl std::fmt::Debug for PolicyExecution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyExecution")
            .field("diagnostics", &self.diag)
            .finish()
    }
}

impl PolicyExecution {
    /// Validates `policy` and starts an execution with a copy of it; later
    /// edits to `policy` apply to later executions only. `checkers` names
    /// the checkers the loop will run (by identity: the engine never holds
    /// or calls one). `max_iterations` is the agent's main-loop bound, when
    /// it has one.
    pub fn start(
        policy: &LoopPolicy,
        checkers: &CheckerIdentities,
        execution_id: impl Into<String>,
        max_iterations: Option<u32>,
    ) -> Result<Self, PolicyError> {
        policy.validate()?;
        let snapshot = Snapshot {
            max_recovery_attempts: policy.max_recovery_attempts,
            repeated_read_limit: policy.repeated_read_limit,
            unchanged_progress_limit: policy.unchanged_progress_limit,
            max_admissions: policy.max_admissions,
            max_call_signatures: policy.max_call_signatures,
            max_observations: policy.max_observations,
            read_allowlist: policy.read_allowlist.iter().cloned().collect(),
            checkers: checkers.clone(),
        };
        Ok(Self {
            diag: LoopDiagnostics {
                execution_id: execution_id.into(),
                phase: Phase::Running,
                reason: None,
                status: None,
                recovery_attempts_used: 0,
                recovery_attempts_allowed: snapshot.max_recovery_attempts,
                last_trigger: None,
                tracking_bound: None,
                checker_error: None,
                last_verdict: None,
                check_records: Vec::new(),
                counters: Counters::default(),
            },
            policy: snapshot,
            max_iterations,
            signatures: HashMap::new(),
            calls: HashMap::new(),
            outstanding: 0,
            failure_identities: HashSet::new(),
            // Grown as observations arrive: an execution that made few
            // calls (or sits idle) holds little.
            observations: VecDeque::new(),
            pending_feedback: Vec::new(),
            pending_check: None,
            next_ticket: 0,
            last_progress_key: None,
            unchanged_samples: 0,
        })
    }

    /// The identities of the checkers the execution started with.
    pub fn checkers(&self) -> &CheckerIdentities {
        &self.policy.checkers
    }

    /// A detached copy of the diagnostics.
    pub fn diagnostics(&self) -> LoopDiagnostics {
        self.diag.clone()
    }

    /// The execution id.
    pub fn execution_id(&self) -> &str {
        &self.diag.execution_id
    }

    /// True once the execution has ended (complete, input-needed, stopped).
    pub fn is_finished(&self) -> bool {
        self.diag.reason.is_some()
    }

    /// Called before each model call.
    pub fn begin_turn(&mut self) -> TurnDecision {
        if let Some(reason) = self.ended() {
            return TurnDecision::Stop { reason };
        }
        if let Some(reason) = self.check_tracking_bounds() {
            return TurnDecision::Stop { reason };
        }
        if let Some(max) = self.max_iterations
            && self.diag.counters.iterations >= max
        {
            return TurnDecision::Stop {
                reason: self.stop(StopReason::MaxIterations),
            };
        }
        self.diag.counters.iterations += 1;
        if self.pending_feedback.is_empty() {
            self.diag.phase = Phase::Running;
            TurnDecision::Proceed { feedback: None }
        } else {
            self.diag.phase = Phase::Recovering;
            let text = feedback::render(&self.pending_feedback);
            self.pending_feedback.clear();
            TurnDecision::Proceed {
                feedback: Some(text),
            }
        }
    }

    /// The stop reason once the execution has ended.
    pub(super) fn ended(&self) -> Option<StopReason> {
        self.diag.reason
    }

    /// Ends the execution with `reason` in phase `stopped`.
    pub(super) fn stop(&mut self, reason: StopReason) -> StopReason {
        self.finish(Phase::Stopped, reason)
    }

    /// Ends the execution; any pending check can no longer confirm anything.
    pub(super) fn finish(&mut self, phase: Phase, reason: StopReason) -> StopReason {
        if let Some(existing) = self.diag.reason {
            return existing;
        }
        self.diag.phase = phase;
        self.diag.reason = Some(reason);
        self.pending_check = None;
        self.pending_feedback.clear();
        reason
    }

    /// Stops with `tracking_bound` when any bound has been reached. The
    /// admissions bound counts every call the execution tracks: its own
    /// admissions and the calls of other executions it imported or awaits
    /// ("at most 1000 admissions (including pending async calls)").
    pub(super) fn check_tracking_bounds(&mut self) -> Option<StopReason> {
        let p = &self.policy;
        let c = &self.diag.counters;
        let bound = if self.calls.len() >= p.max_admissions as usize {
            TrackingBound::Admissions
        } else if c.call_signatures >= p.max_call_signatures {
            TrackingBound::CallSignatures
        } else if c.failure_identities >= p.max_observations {
            // Every failure is also an observation, so when failure
            // identities reach the bound the observations have too: the
            // more specific bound is reported.
            TrackingBound::FailureIdentities
        } else if c.observations >= p.max_observations {
            TrackingBound::Observations
        } else {
            return None;
        };
        self.diag.tracking_bound = Some(bound);
        Some(self.stop(StopReason::TrackingBound))
    }

    /// Queues labelled feedback for the next turn. The first message of a
    /// turn spends a recovery attempt; with none left the execution stops.
    pub(super) fn recover(&mut self, trigger: RecoveryTrigger, message: String) -> Decision {
        self.diag.last_trigger = Some(trigger);
        if self.pending_feedback.is_empty() {
            if self.diag.recovery_attempts_used >= self.policy.max_recovery_attempts {
                let phase = if trigger == RecoveryTrigger::IncompleteVerdict {
                    Phase::InputNeeded
                } else {
                    Phase::Stopped
                };
                return Decision::Stop {
                    reason: self.finish(phase, StopReason::RecoveryExhausted),
                };
            }
            self.diag.recovery_attempts_used += 1;
        }
        self.pending_feedback.push(message);
        self.diag.phase = Phase::Recovering;
        Decision::Continue
    }

    pub(super) fn ticket(&mut self) -> u64 {
        self.next_ticket += 1;
        self.next_ticket
    }
}
