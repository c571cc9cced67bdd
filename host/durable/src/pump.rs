//! The handler's side of the journal: each [`Step`] performed inside a
//! journaled `ctx.run` (an [`Entry`] named `step N`), or answered from the
//! journal on replay once the journaled entry is found to answer what the
//! loop asks for now.
//!
//! A tool call takes two entries: a start marker (its admission: sequence,
//! call id, tool, effect, idempotency key, arguments), then its result. The
//! marker's closure runs only when the marker is not in the journal yet, so
//! whether it ran in this attempt tells whether the call was ever started
//! before: `ctx.run` returns only after Restate acknowledged the journaled
//! entry, and the tool starts only after its marker returned. A marker
//! taken from the journal with no result after it is a call that was
//! started and may have taken effect: a read runs again, an idempotent tool
//! runs again with the same key, any other write or unknown effect is never
//! run again and is answered `unknown` (the policy stops with
//! `uncertain_effect`).
//!
//! Every state write the handler makes mid-run is carried in the entry it
//! follows and written from there, so a replay writes exactly what the
//! first attempt wrote (Restate compares state writes on replay: a write
//! that differed would stop the invocation for good, retried forever).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use futures::FutureExt;
use restate_sdk::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use verdict_agent::{ToolError, ToolReturn};
use verdict_policy::{CheckerError, Effect, LoopDiagnostics};

use crate::entry::{
    Asked, Entry, ModelAnswer, StartMarker, StateWrite, ToolAnswer, ToolResult, call_name,
    fingerprint, step_name,
};
use crate::journal::{CheckOutcome, CheckStep, Step, ToolStep};
use crate::record::{ExecutionRecord, UncertainCall};
use crate::setup::Setup;

/// What the pump counted and found, for the execution record.
#[derive(Debug, Default, Clone)]
pub(crate) struct Tally {
    pub model_calls: u64,
    pub tool_calls: u64,
    pub checks: u64,
    pub uncertain: Option<UncertainCall>,
    pub reruns: Vec<String>,
}

/// The record as the loop stood when it asked for a step: what the state
/// write after that step holds, with the counts after it.
#[derive(Debug, Clone)]
pub(crate) struct Draft {
    pub record: ExecutionRecord,
    pub diagnostics: Option<LoopDiagnostics>,
}

impl Draft {
    /// The record with `tally`'s counts.
    pub(crate) fn fill(&self, tally: &Tally) -> ExecutionRecord {
        let mut record = self.record.clone();
        record.diagnostics.clone_from(&self.diagnostics);
        record.model_calls = tally.model_calls;
        record.tool_calls = tally.tool_calls;
        record.checks = tally.checks;
        record.uncertain.clone_from(&tally.uncertain);
        record.reruns.clone_from(&tally.reruns);
        record
    }
}

/// Why a step did not go through.
pub(crate) enum Stop {
    /// Restate ended the invocation (cancelled, say).
    Terminal(TerminalError),
    /// The journal does not answer what the loop asks for.
    Mismatch(Box<Mismatch>),
}

/// A journal that disagrees with the loop at a step.
pub(crate) struct Mismatch {
    /// The step.
    pub step: u64,
    /// What differs.
    pub why: String,
    /// The journaled entry whose follow-up entries and writes are still
    /// to be replayed (none: they were).
    pub pending: Option<Entry>,
}

impl From<TerminalError> for Stop {
    fn from(error: TerminalError) -> Self {
        Self::Terminal(error)
    }
}

/// Performs the steps of one execution in order.
pub(crate) struct Pump<'a, 'ctx> {
    pub(crate) ctx: &'a ObjectContext<'ctx>,
    pub(crate) execution_id: String,
    /// The state key of the execution's record.
    pub(crate) record_key: String,
    /// The next step's number.
    pub(crate) step: u64,
    pub(crate) tally: Tally,
    /// The last record written (what a failed replay's record starts from).
    pub(crate) last_record: Option<ExecutionRecord>,
}

/// Runs `make` as the journaled entry `name`, its value as JSON; the value
/// and whether `make` ran in this attempt (the entry was not journaled).
pub(crate) async fn journaled<T, F>(
    ctx: &ObjectContext<'_>,
    name: String,
    make: F,
) -> Result<(Value, bool), TerminalError>
where
    T: Serialize + Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let fresh = Arc::new(AtomicBool::new(false));
    let ran = Arc::clone(&fresh);
    let Json(value) = ctx
        .run(|| async move {
            ran.store(true, Ordering::SeqCst);
            Ok(Json(
                serde_json::to_value(make.await).unwrap_or(Value::Null),
            ))
        })
        .name(name)
        .await?;
    Ok((value, fresh.load(Ordering::SeqCst)))
}

/// A journaled value read back.
pub(crate) fn parse<T: DeserializeOwned>(step: u64, value: Value) -> Result<T, Stop> {
    serde_json::from_value(value).map_err(|e| {
        Stop::Mismatch(Box::new(Mismatch {
            step,
            why: format!(
                "the journal holds an entry this worker cannot read ({e}): it was written by \
                 another version"
            ),
            pending: None,
        }))
    })
}

impl<'a, 'ctx> Pump<'a, 'ctx> {
    /// A pump for execution `execution_id`, its record under `record_key`.
    pub(crate) fn new(ctx: &'a ObjectContext<'ctx>, execution_id: &str, record_key: &str) -> Self {
        Self {
            ctx,
            execution_id: execution_id.to_owned(),
            record_key: record_key.to_owned(),
            step: 0,
            tally: Tally::default(),
            last_record: None,
        }
    }

    /// Writes `sets` (as journaled).
    pub(crate) fn write(&mut self, sets: &[StateWrite]) {
        for set in sets {
            match set {
                StateWrite::Json { key, value } => self.ctx.set(key, Json(value.clone())),
                StateWrite::Text { key, value } => self.ctx.set(key, value.clone()),
            }
            if let Some(record) = set.as_record() {
                self.last_record = Some(record);
            }
        }
    }

    /// Writes the journaled `sets`; a mismatch when they are not `now`.
    fn write_checked(&mut self, journaled: &[StateWrite], now: &[StateWrite]) -> Result<(), Stop> {
        self.write(journaled);
        if journaled == now {
            return Ok(());
        }
        Err(Stop::Mismatch(Box::new(Mismatch {
            step: self.step - 1,
            why: "the execution's record differs from the journaled one (its diagnostics \
                  or counts)"
                .to_owned(),
            pending: None,
        })))
    }

    /// The journaled entry of the next step (`make` runs when it is not
    /// journaled yet), checked against `asked`; whether `make` ran.
    async fn entry<F>(&mut self, asked: &Asked, make: F) -> Result<(Entry, bool), Stop>
    where
        F: Future<Output = Entry> + Send + 'static,
    {
        let step = self.step;
        self.step += 1;
        let (value, fresh) = journaled(self.ctx, step_name(step), make).await?;
        let entry: Entry = parse(step, value)?;
        match asked.compare(&entry) {
            Ok(()) => Ok((entry, fresh)),
            Err(why) => Err(Stop::Mismatch(Box::new(Mismatch {
                step,
                why,
                pending: Some(entry),
            }))),
        }
    }

    /// Step 0: the setup `now` and the writes that follow it; the
    /// journaled setup (the same as `now`).
    pub(crate) async fn setup(&mut self, now: Setup, sets: Vec<StateWrite>) -> Result<(), Stop> {
        let asked = Asked::Setup(now.clone());
        let made = Entry::Setup {
            setup: now,
            sets: sets.clone(),
        };
        let (entry, _) = self.entry(&asked, async move { made }).await?;
        self.write_checked(entry.sets(), &sets)
    }

    /// The last step: the loop ended with `record` (and `sets`, its final
    /// writes); the journaled record, which every attempt returns.
    pub(crate) async fn finish(
        &mut self,
        record: ExecutionRecord,
        sets: Vec<StateWrite>,
    ) -> Result<ExecutionRecord, Stop> {
        let made = Entry::Finish {
            sets: sets.clone(),
            record: Box::new(record.clone()),
        };
        let (entry, _) = self.entry(&Asked::Finish, async move { made }).await?;
        self.write(entry.sets());
        match entry {
            Entry::Finish {
                record: journaled, ..
            } => {
                if *journaled != record {
                    tracing::warn!(
                        execution = %self.execution_id,
                        "the replayed execution ended otherwise than journaled; the journaled record stands"
                    );
                }
                Ok(*journaled)
            }
            // `Asked::Finish` agrees with a finish entry only.
            other => Err(Stop::Mismatch(Box::new(Mismatch {
                step: self.step - 1,
                why: format!("the journal holds {}", other.describe()),
                pending: None,
            }))),
        }
    }

    /// Performs one step; `draft` is the record the write after it holds.
    pub(crate) async fn perform(&mut self, step: Step, draft: Option<Draft>) -> Result<(), Stop> {
        match step {
            Step::Model {
                request_sha256,
                call,
                reply,
            } => {
                self.tally.model_calls += 1;
                let asked = Asked::Model {
                    request_sha256: request_sha256.clone(),
                };
                let make = async move {
                    Entry::Model {
                        request_sha256,
                        answer: match call.await {
                            Ok(response) => ModelAnswer::Response(response),
                            Err(error) => ModelAnswer::Error(error),
                        },
                    }
                };
                let (entry, _) = self.entry(&asked, make).await?;
                let Entry::Model { answer, .. } = entry else {
                    return Err(self.unexpected());
                };
                let _ = reply.send(match answer {
                    ModelAnswer::Response(response) => Ok(response),
                    ModelAnswer::Error(error) => Err(error),
                });
            }
            Step::Check { call, reply } => {
                self.tally.checks += 1;
                let outcome = self.check(call, draft).await?;
                let _ = reply.send(outcome);
            }
            Step::Tool { call, reply } => {
                self.tally.tool_calls += 1;
                let answer = self.tool(call, draft).await?;
                let _ = reply.send(answer);
            }
        }
        Ok(())
    }

    /// A journaled entry that answers the request but is not of its kind
    /// (cannot happen: [`Asked::compare`] checks the kind).
    fn unexpected(&self) -> Stop {
        Stop::Mismatch(Box::new(Mismatch {
            step: self.step - 1,
            why: "the journaled entry is not of the kind asked".to_owned(),
            pending: None,
        }))
    }

    /// The record writes after a step, from `draft` and `tally`.
    fn sets(&self, draft: Option<&Draft>, tally: &Tally) -> Vec<StateWrite> {
        draft
            .map(|d| vec![StateWrite::record(&self.record_key, &d.fill(tally))])
            .unwrap_or_default()
    }

    /// A check, journaled once it answered (a check cut off by a crash has
    /// no entry and runs again), its timeout decided in the entry.
    async fn check(&mut self, call: CheckStep, draft: Option<Draft>) -> Result<CheckOutcome, Stop> {
        let CheckStep {
            role,
            checker,
            packet_sha256,
            deadline,
            run,
        } = call;
        let asked = Asked::Check {
            role,
            checker: checker.clone(),
            packet_sha256: packet_sha256.clone(),
        };
        let sets = self.sets(draft.as_ref(), &self.tally);
        let made_sets = sets.clone();
        let make = async move {
            let outcome = decide(deadline, run).await;
            Entry::Check {
                role,
                checker,
                packet_sha256,
                answer: outcome.answer,
                record: outcome.record,
                sets: made_sets,
            }
        };
        let (entry, _) = self.entry(&asked, make).await?;
        let Entry::Check {
            answer,
            record,
            sets: journaled,
            ..
        } = entry
        else {
            return Err(self.unexpected());
        };
        self.write_checked(&journaled, &sets)?;
        Ok(CheckOutcome { answer, record })
    }

    /// A tool call: its start marker, then its result.
    async fn tool(
        &mut self,
        step: ToolStep,
        draft: Option<Draft>,
    ) -> Result<Result<ToolReturn, ToolError>, Stop> {
        let sequence = self.tally.tool_calls;
        let marker = StartMarker {
            sequence,
            call_id: step.ctx.call_id.clone(),
            tool: step.tool.clone(),
            effect: step.effect,
            idempotency_key: format!("{}:{sequence}", self.execution_id),
            arguments_sha256: fingerprint(&step.arguments),
        };
        let made = Entry::ToolStart {
            marker: marker.clone(),
        };
        let (_, fresh) = self
            .entry(&Asked::ToolStart(marker.clone()), async move { made })
            .await?;
        let started_before = !fresh;
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
        let (in_closure, tally, draft_in) = (marker.clone(), self.tally.clone(), draft.clone());
        let record_key = self.record_key.clone();
        let make = async move {
            let answer = if started_before && !repeatable {
                ToolAnswer::Uncertain
            } else {
                let answer = run_tool(effect, deadline, run.run(arguments, tool_ctx)).await;
                if started_before {
                    ToolAnswer::Rerun(Box::new(answer))
                } else {
                    answer
                }
            };
            let mut tally = tally;
            let _ = settle(answer.clone(), &in_closure, &mut tally);
            let sets = draft_in
                .map(|d| vec![StateWrite::record(&record_key, &d.fill(&tally))])
                .unwrap_or_default();
            ToolResult { answer, sets }
        };
        let (value, _) = journaled(self.ctx, call_name(&marker), make).await?;
        let result: ToolResult = parse(self.step - 1, value)?;
        let answer = settle(result.answer, &marker, &mut self.tally);
        let sets = self.sets(draft.as_ref(), &self.tally);
        self.write_checked(&result.sets, &sets)?;
        Ok(answer)
    }
}

/// A check's outcome, decided against its deadline as the loop decides it
/// in-process: an answer at or after the deadline is a timeout.
pub(crate) async fn decide(
    deadline: Option<Instant>,
    run: futures::future::BoxFuture<'static, CheckOutcome>,
) -> CheckOutcome {
    let run = AssertUnwindSafe(run).catch_unwind();
    let answered = match deadline {
        Some(deadline) => match tokio::time::timeout_at(deadline.into(), run).await {
            Ok(_) if Instant::now() >= deadline => None,
            Ok(answered) => Some(answered),
            Err(_elapsed) => None,
        },
        None => Some(run.await),
    };
    match answered {
        None => CheckOutcome {
            answer: Err(CheckerError::Timeout),
            record: None,
        },
        Some(Ok(outcome)) => outcome,
        Some(Err(_panic)) => CheckOutcome {
            answer: Err(CheckerError::Failed("the checker panicked".to_owned())),
            record: None,
        },
    }
}

/// Runs a tool within its deadline; its answer as journaled.
async fn run_tool(
    effect: Effect,
    deadline: std::time::Duration,
    call: impl Future<Output = Result<ToolReturn, ToolError>>,
) -> ToolAnswer {
    let call = AssertUnwindSafe(call).catch_unwind();
    match tokio::time::timeout(deadline, call).await {
        // As in-process: a read that timed out failed; a write (or unknown
        // effect) that timed out may have taken effect.
        Err(_elapsed) if effect == Effect::Read => {
            ToolAnswer::Failed(format!("exceeded its deadline of {deadline:?}"))
        }
        Err(_elapsed) => ToolAnswer::Unknown(format!(
            "exceeded its deadline of {deadline:?}; whether it took effect is unknown"
        )),
        Ok(Err(_panic)) => {
            ToolAnswer::Unknown("the tool panicked; whether it took effect is unknown".to_owned())
        }
        Ok(Ok(Ok(ToolReturn::Ready(value)))) => ToolAnswer::Value(value),
        Ok(Ok(Ok(ToolReturn::Unknown(error)))) => ToolAnswer::Unknown(error),
        // Work that goes on (or suspends) outside the journal: it may take
        // effect, and its result can never be journaled.
        Ok(Ok(Ok(_))) => ToolAnswer::Unknown(
            "async and suspending tools are not supported in a durable execution; the call \
             started and its outcome is unknown"
                .to_owned(),
        ),
        Ok(Ok(Err(error))) => ToolAnswer::Failed(error.message),
    }
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
        ToolAnswer::Abandoned => Ok(ToolReturn::Unknown(
            "the call was abandoned when its execution failed".to_owned(),
        )),
    }
}
