//! The handler's side of the journal: each [`Step`] performed inside a
//! journaled `ctx.run`, or answered from the journal on replay.
//!
//! A tool call takes two entries: a start marker (its admission: sequence,
//! call id, tool, effect, idempotency key), then its result. The marker's
//! closure runs only when the marker is not in the journal yet, so whether
//! it ran in this attempt tells whether the call was ever started before:
//! `ctx.run` returns only after Restate acknowledged the journaled entry,
//! and the tool starts only after its marker returned. A marker taken from
//! the journal with no result after it is a call that was started and may
//! have taken effect: a read runs again, an idempotent tool runs again
//! with the same key, any other write or unknown effect is never run again
//! and is answered `unknown` (the policy stops with `uncertain_effect`).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::FutureExt;
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use verdict_agent::{ToolError, ToolReturn};
use verdict_policy::{CheckerError, CheckerErrorKind, Effect, Verdict};
use verdict_providers::{ModelResponse, ProviderError};

use crate::journal::{Step, ToolStep};
use crate::record::UncertainCall;

/// A model call's journaled answer.
#[derive(Serialize, Deserialize)]
enum ModelAnswer {
    Response(ModelResponse),
    Error(String),
}

/// A check's journaled answer (a verdict as its JSON, a progress key).
#[derive(Serialize, Deserialize)]
enum CheckAnswer {
    Value(String),
    Error {
        kind: CheckerErrorKind,
        message: String,
    },
}

/// The journaled start of a tool call: its admission.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StartMarker {
    sequence: u64,
    call_id: String,
    tool: String,
    effect: Effect,
    idempotency_key: String,
}

/// A tool call's journaled result.
#[derive(Serialize, Deserialize)]
enum ToolAnswer {
    Value(Value),
    Failed(String),
    Unknown(String),
    /// Started before a crash, result never journaled, not run again.
    Uncertain,
    /// Started before a crash and run again (idempotent or a read).
    Rerun(Box<ToolAnswer>),
}

/// What the pump counted and found, for the execution record.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub model_calls: u64,
    pub tool_calls: u64,
    pub checks: u64,
    pub uncertain: Option<UncertainCall>,
    pub reruns: Vec<String>,
}

/// Performs one step of execution `execution_id`.
pub(crate) async fn perform(
    ctx: &ObjectContext<'_>,
    execution_id: &str,
    tally: &mut Tally,
    step: Step,
) -> Result<(), TerminalError> {
    match step {
        Step::Model { call, reply } => {
            tally.model_calls += 1;
            let Json(answer) = ctx
                .run(|| async move {
                    Ok(Json(match call.await {
                        Ok(response) => ModelAnswer::Response(response),
                        Err(error) => ModelAnswer::Error(error.to_string()),
                    }))
                })
                .name(format!("model {}", tally.model_calls))
                .await?;
            let _ = reply.send(match answer {
                ModelAnswer::Response(response) => Ok(response),
                ModelAnswer::Error(detail) => Err(ProviderError::Transport { detail }),
            });
        }
        Step::Verdict { call, reply } => {
            tally.checks += 1;
            let answer = check(ctx, tally.checks, "verdict", async move {
                call.await
                    .map(|v| serde_json::to_string(&v).unwrap_or_default())
            })
            .await?;
            let _ =
                reply.send(answer.and_then(|text| {
                    Verdict::from_json(&text).map_err(CheckerError::InvalidVerdict)
                }));
        }
        Step::Progress { call, reply } => {
            tally.checks += 1;
            let _ = reply.send(check(ctx, tally.checks, "progress", call).await?);
        }
        Step::Tool { call, reply } => {
            tally.tool_calls += 1;
            let answer = tool(ctx, execution_id, tally, call).await?;
            let _ = reply.send(answer);
        }
    }
    Ok(())
}

/// A check, journaled once it answered (a check cut off by a crash has no
/// entry and runs again).
async fn check(
    ctx: &ObjectContext<'_>,
    number: u64,
    what: &str,
    call: impl Future<Output = Result<String, CheckerError>> + Send + 'static,
) -> Result<Result<String, CheckerError>, TerminalError> {
    let Json(answer) = ctx
        .run(|| async move {
            Ok(Json(match AssertUnwindSafe(call).catch_unwind().await {
                Ok(Ok(value)) => CheckAnswer::Value(value),
                Ok(Err(error)) => CheckAnswer::Error {
                    kind: error.kind(),
                    message: error.to_string(),
                },
                Err(_panic) => CheckAnswer::Error {
                    kind: CheckerErrorKind::Failed,
                    message: "the checker panicked".to_owned(),
                },
            }))
        })
        .name(format!("{what} {number}"))
        .await?;
    Ok(match answer {
        CheckAnswer::Value(value) => Ok(value),
        CheckAnswer::Error { kind, message } => Err(match kind {
            CheckerErrorKind::Timeout => CheckerError::Timeout,
            CheckerErrorKind::OutOfFuel => CheckerError::OutOfFuel,
            CheckerErrorKind::Cancelled => CheckerError::Cancelled,
            _ => CheckerError::Failed(message),
        }),
    })
}

/// A tool call: its start marker, then its result.
async fn tool(
    ctx: &ObjectContext<'_>,
    execution_id: &str,
    tally: &mut Tally,
    step: ToolStep,
) -> Result<Result<ToolReturn, ToolError>, TerminalError> {
    let sequence = tally.tool_calls;
    let marker = StartMarker {
        sequence,
        call_id: step.ctx.call_id.clone(),
        tool: step.tool.clone(),
        effect: step.effect,
        idempotency_key: format!("{execution_id}:{sequence}"),
    };
    let fresh = Arc::new(AtomicBool::new(false));
    let Json(journaled) = {
        let (marker, fresh) = (marker.clone(), Arc::clone(&fresh));
        ctx.run(|| async move {
            fresh.store(true, Ordering::SeqCst);
            Ok(Json(marker))
        })
        .name(format!("start {sequence} {}", step.tool))
        .await?
    };
    if journaled != marker {
        // The loop asked for another call than the journal holds: the
        // code or the configuration changed under a running execution.
        return Err(TerminalError::new(format!(
            "the journal does not match this execution: call {sequence} was {} ({}), now {} ({})",
            journaled.tool, journaled.call_id, marker.tool, marker.call_id
        )));
    }
    let started_before = !fresh.load(Ordering::SeqCst);
    let repeatable = step.effect == Effect::Read || step.idempotent;
    let ToolStep {
        effect,
        deadline,
        arguments,
        ctx: mut tool_ctx,
        run,
        ..
    } = step;
    tool_ctx.idempotency_key = Some(marker.idempotency_key.clone());
    let Json(answer) = ctx
        .run(|| async move {
            if started_before && !repeatable {
                return Ok(Json(ToolAnswer::Uncertain));
            }
            let call = AssertUnwindSafe(run.run(arguments, tool_ctx)).catch_unwind();
            let answer = match tokio::time::timeout(deadline, call).await {
                // As in-process: a read that timed out failed; a write
                // (or unknown effect) that timed out may have taken effect.
                Err(_elapsed) if effect == Effect::Read => {
                    ToolAnswer::Failed(format!("exceeded its deadline of {deadline:?}"))
                }
                Err(_elapsed) => ToolAnswer::Unknown(format!(
                    "exceeded its deadline of {deadline:?}; whether it took effect is unknown"
                )),
                Ok(Err(_panic)) => ToolAnswer::Unknown(
                    "the tool panicked; whether it took effect is unknown".to_owned(),
                ),
                Ok(Ok(Ok(ToolReturn::Ready(value)))) => ToolAnswer::Value(value),
                Ok(Ok(Ok(ToolReturn::Unknown(error)))) => ToolAnswer::Unknown(error),
                // Work that goes on (or suspends) outside the journal: it
                // may take effect, and its result can never be journaled.
                Ok(Ok(Ok(_))) => ToolAnswer::Unknown(
                    "async and suspending tools are not supported in a durable execution; \
                     the call started and its outcome is unknown"
                        .to_owned(),
                ),
                Ok(Ok(Err(error))) => ToolAnswer::Failed(error.message),
            };
            Ok(Json(if started_before {
                ToolAnswer::Rerun(Box::new(answer))
            } else {
                answer
            }))
        })
        .name(format!("call {sequence} {}", marker.tool))
        .await?;
    Ok(settle(answer, &marker, tally))
}

/// The loop's view of a journaled tool answer; notes an uncertain call or
/// a rerun in `tally`.
fn settle(
    answer: ToolAnswer,
    marker: &StartMarker,
    tally: &mut Tally,
) -> Result<ToolReturn, ToolError> {
    match answer {
        ToolAnswer::Value(value) => Ok(ToolReturn::Ready(value)),
        ToolAnswer::Failed(message) => Err(ToolError::new(message)),
        ToolAnswer::Unknown(message) => Ok(ToolReturn::Unknown(message)),
        ToolAnswer::Uncertain => {
            tally.uncertain.get_or_insert_with(|| UncertainCall {
                sequence: marker.sequence,
                call_id: marker.call_id.clone(),
                tool: marker.tool.clone(),
                effect: marker.effect,
                idempotency_key: marker.idempotency_key.clone(),
            });
            Ok(ToolReturn::Unknown(format!(
                "call {} ({}) was started before a crash and its result was never \
                 recorded: it may have taken effect, so it is not run again",
                marker.call_id, marker.tool
            )))
        }
        ToolAnswer::Rerun(answer) => {
            tally.reruns.push(marker.idempotency_key.clone());
            settle(*answer, marker, tally)
        }
    }
}
