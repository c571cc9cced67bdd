//! The verdict loop policy engine.
//!
//! Pure and deterministic: no IO, no async runtime, no wasmtime, no HTTP.
//! The agent loop feeds it plain events and acts on its decisions.

pub mod packet;
pub mod verdict;

pub use packet::{
    CheckPacket, Effect, FailureKind, Observation, Outcome, OutcomeStatus, TaskStateSnapshot,
};
pub use verdict::{Verdict, VerdictError};
