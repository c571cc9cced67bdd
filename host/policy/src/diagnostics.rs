//! `LoopDiagnostics`: the detached, serializable state of one execution.

use serde::{Deserialize, Serialize};

use crate::checker::CheckerErrorKind;
use crate::verdict::Verdict;

/// Where an execution is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Phase {
    /// Turns and tools proceed normally.
    Running,
    /// The next model turn carries host feedback.
    Recovering,
    /// A final answer was accepted (with or without a completion checker).
    Complete,
    /// The host's required evidence is still missing after recovery.
    InputNeeded,
    /// A bound, an uncertain effect, a checker error or a state change
    /// ended the execution.
    Stopped,
}

/// Why an execution ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The completion checker returned a true verdict.
    Completed,
    /// No completion checker: a final answer was returned.
    AnswerReturned,
    /// A write/unknown effect has no authentic outcome or an unknown one.
    UncertainEffect,
    /// A checker failed, timed out or answered out of bounds.
    CheckerError,
    /// The task, checker, owner or conversation identity changed under a check.
    StateChanged,
    /// A final candidate arrived while admitted calls were outstanding.
    PendingAsync,
    /// The main-loop iteration bound was reached.
    MaxIterations,
    /// A recovery trigger arrived with no recovery attempt left.
    RecoveryExhausted,
    /// The model asked again for a read already flagged as unproductive.
    RepeatedRead,
    /// A tracking bound (admissions, signatures, observations) was reached.
    TrackingBound,
    /// An identical write/unknown action was requested again.
    DuplicateAction,
    /// A call's arguments could not be fingerprinted.
    Unfingerprintable,
}

/// What asked for host feedback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RecoveryTrigger {
    /// A tool call failed (by the framework outcome).
    ToolFailure,
    /// An identical read returned an identical result.
    RepeatedRead,
    /// The progress key did not change.
    UnchangedProgress,
    /// The completion checker returned a false verdict.
    IncompleteVerdict,
    /// An identical write/unknown action was skipped.
    DuplicateAction,
}

/// The workflow status; present only after a true verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WorkflowStatus {
    /// The host's completion checker confirmed the work.
    Completed,
}

/// Which tracking bound was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TrackingBound {
    /// `max_admissions`.
    Admissions,
    /// `max_call_signatures`.
    CallSignatures,
    /// `max_observations`, counting observations.
    Observations,
    /// `max_observations`, counting distinct failure identities (reported
    /// instead of `observations` when both are reached: every failure is an
    /// observation).
    FailureIdentities,
}

/// Counters of one execution.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Model turns begun.
    pub iterations: u32,
    /// Admissions granted (released ones included).
    pub admissions: u32,
    /// Distinct call signatures seen.
    pub call_signatures: u32,
    /// Observations recorded.
    pub observations: u32,
    /// Failed observations.
    pub failures: u32,
    /// Distinct failure identities.
    pub failure_identities: u32,
    /// Repeated identical reads detected.
    pub repeated_reads: u32,
    /// Calls skipped with feedback instead of running.
    pub skipped_calls: u32,
    /// Progress samples taken.
    pub progress_samples: u32,
    /// Completion checks requested.
    pub completion_checks: u32,
    /// Checks restarted because the host scope changed.
    pub scope_restarts: u32,
    /// Verdicts or keys that arrived for a finished or cancelled check.
    pub late_verdicts: u32,
}

/// Detached diagnostics for one policy execution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopDiagnostics {
    /// The execution these describe.
    pub execution_id: String,
    /// The current phase.
    pub phase: Phase,
    /// Why the execution ended, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<StopReason>,
    /// `completed` only after a true verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<WorkflowStatus>,
    /// Recovery attempts spent.
    pub recovery_attempts_used: u32,
    /// Recovery attempts allowed.
    pub recovery_attempts_allowed: u32,
    /// The latest recovery trigger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_trigger: Option<RecoveryTrigger>,
    /// The tracking bound that stopped the execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracking_bound: Option<TrackingBound>,
    /// The sanitized class of a checker error that stopped the execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checker_error: Option<CheckerErrorKind>,
    /// The latest accepted completion verdict (an earlier false one stays
    /// when a later bound stops the execution).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_verdict: Option<Verdict>,
    /// The ids of the check records of this execution's checks, in order,
    /// when its checker records them (at most [`MAX_CHECK_RECORDS`]; see
    /// `verdict-records`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub check_records: Vec<String>,
    /// Counters.
    pub counters: Counters,
}

/// Record ids the diagnostics keep per execution; later ones are not listed
/// (the records are still written).
pub const MAX_CHECK_RECORDS: usize = 1_000;

impl LoopDiagnostics {
    /// The diagnostics as JSON.
    pub fn to_json(&self) -> String {
        // Plain data with string keys: serialization cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}
