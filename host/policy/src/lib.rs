//! The verdict loop policy engine.
//!
//! Pure and deterministic: no IO, no async runtime, no wasmtime, no HTTP.
//! The agent loop feeds a [`PolicyExecution`] plain events and acts on its
//! decisions; the rule table in `src/engine/mod.rs` maps every spec rule to
//! its test. The checker roles ([`CompletionChecker`], [`ProgressChecker`])
//! and what every checker call receives ([`CheckPacket`], [`CheckContext`])
//! are defined here, so the loop and the sandbox share them without
//! depending on each other.
//!
//! Every public item has one path: the crate root.

mod cancel;
mod canonical;
mod checker;
mod config;
mod diagnostics;
mod engine;
mod feedback;
mod packet;
mod scope;
mod verdict;

pub use cancel::{CancelHandle, Cancelled};
pub use canonical::{
    CanonicalError, Fingerprint, MAX_DEPTH, MAX_FINGERPRINT_INPUT_BYTES, canonical_json,
};
pub use checker::{
    CheckContext, CheckFuture, CheckerError, CheckerErrorKind, CheckerIdentities,
    CompletionChecker, MAX_PROGRESS_KEY_CHARS, ProgressChecker,
};
pub use config::{
    LoopPolicy, MAX_ALLOWLIST_LEN, MAX_THRESHOLD, MAX_TOOL_NAME_CHARS, PolicyError,
    PolicyLoadError, PolicyViolation,
};
pub use diagnostics::{
    Counters, LoopDiagnostics, Phase, RecoveryTrigger, StopReason, TrackingBound, WorkflowStatus,
};
pub use engine::{
    Admission, BatchDecision, CheckDecision, CheckKind, CheckRequest, CheckTicket, Decision,
    Delivery, FinalDecision, PolicyExecution, ToolCallRequest, TurnDecision,
};
pub use feedback::FEEDBACK_LABEL;
pub use packet::{
    CheckPacket, Effect, FailureKind, MAX_OBSERVATIONS, MAX_OUTPUT_CHARS, MAX_PACKET_BYTES,
    Observation, ObservedOutcome, OutcomeStatus, PacketError, PacketParts, TaskStateSnapshot,
};
pub use scope::{CheckView, ExecutionIdentity, HostScope};
pub use verdict::{MAX_FEEDBACK_CHARS, MAX_REASON_CHARS, MAX_VERDICT_BYTES, Verdict, VerdictError};
