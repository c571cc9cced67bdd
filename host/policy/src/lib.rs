// The README's examples use the facade: `tests/facade` compiles them.
#![cfg_attr(not(doctest), doc = include_str!("../README.md"))]
#![deny(missing_docs)]

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
    Counters, LoopDiagnostics, MAX_CHECK_RECORDS, Phase, RecoveryTrigger, StopReason,
    TrackingBound, WorkflowStatus,
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
pub use verdict::{
    MAX_FEEDBACK_CHARS, MAX_REASON_CHARS, MAX_VERDICT_BYTES, Verdict, VerdictError, VerdictParts,
};
