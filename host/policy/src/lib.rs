//! The verdict loop policy engine.
//!
//! Pure and deterministic: no IO, no async runtime, no wasmtime, no HTTP.
//! The agent loop feeds a [`PolicyExecution`] plain events and acts on its
//! decisions; the rule table in [`engine`] maps every spec rule to its test.

pub mod canonical;
pub mod checker;
pub mod config;
pub mod diagnostics;
pub mod engine;
pub mod feedback;
pub mod packet;
pub mod scope;
pub mod verdict;

pub use canonical::{CanonicalError, Fingerprint, canonical_json};
pub use checker::{
    CheckerError, CheckerErrorKind, CompletionChecker, CompletionFn, ProgressChecker, ProgressFn,
};
pub use config::{LoopPolicy, PolicyError, PolicyLoadError, PolicyViolation};
pub use diagnostics::{
    Counters, LoopDiagnostics, Phase, RecoveryTrigger, StopReason, TrackingBound, WorkflowStatus,
};
pub use engine::{
    Admission, BatchDecision, CheckDecision, CheckKind, CheckRequest, CheckTicket, Decision,
    Delivery, FinalDecision, PolicyExecution, ToolCallRequest, Turn,
};
pub use packet::{
    CheckPacket, Effect, FailureKind, Observation, Outcome, OutcomeStatus, TaskStateSnapshot,
};
pub use scope::{CheckView, ExecutionIdentity, HostScope};
pub use verdict::{Verdict, VerdictError};
