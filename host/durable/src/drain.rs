//! Ending an execution whose journal disagrees with its loop.
//!
//! Restate compares every command of a replay with the journal: a
//! different command (or state write) where the journal holds another
//! stops the invocation with a journal mismatch, which Restate retries
//! forever while the conversation's lock blocks every later submit. So a
//! replay that finds a step it disagrees with (a removed tool, a replaced
//! verifier, a changed policy: [`crate::entry::Asked::compare`]) does not
//! write its failure at once. It first replays the rest of the journal
//! exactly as it was written — each entry says what followed it: its state
//! writes, a tool call's result entry — without running anything, until it
//! reaches the journal's end (the first entry whose closure runs in this
//! attempt). Past the end, nothing is compared any more: the record is
//! written `failed`, naming the step and what differed, and the handler
//! returns it. Had the first attempt already finished (its finish entry is
//! in the journal), its own record stands.

use restate_sdk::prelude::*;

use crate::entry::{Entry, ToolAnswer, ToolResult, call_name, step_name};
use crate::pump::{Mismatch, Pump, journaled, parse};
use crate::record::{ExecutionRecord, ExecutionState};

/// How an execution ends after a mismatch.
pub(crate) async fn drain(
    pump: &mut Pump<'_, '_>,
    mismatch: Mismatch,
    base: ExecutionRecord,
) -> Result<ExecutionRecord, TerminalError> {
    let Mismatch {
        step,
        why,
        mut pending,
    } = mismatch;
    tracing::warn!(execution = %pump.execution_id, step, %why, "the journal does not match this execution");
    loop {
        if let Some(entry) = pending.take() {
            pump.write(entry.sets());
            match entry {
                Entry::Finish { record, .. } => return Ok(*record),
                Entry::ToolStart { marker } => {
                    let abandoned = async {
                        ToolResult {
                            answer: ToolAnswer::Abandoned,
                            sets: Vec::new(),
                        }
                    };
                    let (value, fresh) = journaled(pump.ctx, call_name(&marker), abandoned).await?;
                    if fresh {
                        break;
                    }
                    match parse::<ToolResult>(pump.step, value) {
                        Ok(result) => pump.write(&result.sets),
                        Err(_) => return Err(unreadable(step, &why)),
                    }
                }
                _ => {}
            }
        }
        let n = pump.step;
        pump.step += 1;
        let (value, fresh) = journaled(pump.ctx, step_name(n), async { Entry::End }).await?;
        if fresh {
            break;
        }
        match parse::<Entry>(n, value) {
            Ok(entry) => pending = Some(entry),
            Err(_) => return Err(unreadable(step, &why)),
        }
    }
    let mut record = pump.last_record.take().unwrap_or(base);
    record.state = ExecutionState::Failed;
    record.error = Some(format!(
        "the journal does not match this execution at step {step}: {why}"
    ));
    pump.ctx.set(&pump.record_key, Json(record.clone()));
    Ok(record)
}

/// A journal this worker cannot follow to its end: the invocation fails
/// (Restate may still see the rest of the journal disagree).
fn unreadable(step: u64, why: &str) -> TerminalError {
    TerminalError::new(format!(
        "the journal does not match this execution at step {step} ({why}), and holds entries \
         this worker cannot read"
    ))
}
