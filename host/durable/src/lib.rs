//! Durable agent executions on [Restate](https://restate.dev): an execution
//! survives the crash of the process running it, and a write never runs
//! twice.
//!
//! A worker serves the [`ConversationObject`] virtual object (one object
//! per conversation; its exclusive `execute` handler is the lease, so one
//! execution per conversation runs at a time). The handler runs the
//! managed loop of `verdict-agent` unchanged, with its effects journaled:
//!
//! - every model call is a `ctx.run` entry: a replay takes the response
//!   from the journal and never calls (or bills) the model again;
//! - every tool call is two entries, a start marker (its admission:
//!   sequence, call id, tool, effect, idempotency key) and its result;
//! - every verdict and progress key is an entry once the checker answered
//!   (a check cut off by a crash runs again);
//! - the conversation and each execution's record (phase, stop reason,
//!   recovery used, verdict, counts) live in the object's state.
//!
//! The policy engine is pure: on replay the loop runs again from the start
//! and the engine is fed the same events (the journaled responses, results
//! and verdicts), so its state is rebuilt exactly.
//!
//! # Started but not finished
//!
//! `ctx.run` resolves only once Restate has acknowledged the journaled
//! result (restate-sdk-shared-core waits for the completion notification,
//! or from protocol v7 for its ack, before the run future is ready); and on
//! replay a `ctx.run` whose result is in the journal returns it without
//! running the closure, while one whose result is missing runs its closure
//! again. A single `ctx.run` around a write therefore cannot tell a first
//! run from a re-run after a crash mid-write. The start marker can: its
//! closure sets a flag, so the flag is set exactly when the marker was not
//! in the journal, i.e. when no earlier attempt got past the marker, so the
//! write never started before. When the marker comes from the journal and
//! the result closure runs anyway, an earlier attempt started the call and
//! died before its result was journaled. Then a read runs again; a tool
//! declared idempotent ([`verdict_agent::Tool::idempotent`]) runs again
//! with the same [`verdict_agent::ToolContext::idempotency_key`] (the
//! execution id and the call's sequence number); any other write or
//! unknown effect is not run: its outcome is `unknown`, the policy stops
//! with `uncertain_effect`, and the record names the call
//! ([`ExecutionRecord::uncertain`]). That decision is journaled as the
//! call's result, so later replays agree with it.

mod blueprint;
mod client;
#[cfg(test)]
mod deadline_tests;
mod drain;
mod effects;
mod entry;
mod error;
mod identity;
mod journal;
mod object;
mod pump;
mod readiness;
mod record;
mod retry;
mod setup;
mod tenants;
mod tls;
mod worker;

pub use blueprint::Blueprint;
pub use client::{ExecutionRef, RestateClient, Submitted};
pub use error::DurableError;
pub use identity::{KEY_PREFIX, RequestIdentity};
pub use object::{ConversationObject, SERVICE};
pub use readiness::Readiness;
pub use record::{ExecutionRecord, ExecutionState, Submission, UncertainCall};
pub use retry::{Backoff, register_until_done};
pub use tenants::Tenants;
pub use worker::{READYZ, Worker, endpoint};
