//! One response's tool calls as a batch: hooks, admission, execution and
//! observation, with results in call order.
//!
//! Every call is prepared (before-tool hooks) first. Then calls are
//! dispatched in groups: consecutive distinct reads run concurrently; a
//! write or unknown effect runs alone, in order, so a later call is admitted
//! only after an earlier action settled; a read identical to one in the
//! current group starts the next group. With a policy, each call is admitted
//! (with the arguments that will actually run) just before its group runs,
//! and observed once it settles. Decisions match one-at-a-time execution:
//! when admission stops inside a group of reads, the reads admitted before
//! the stop still run (as they would have sequentially), and the calls from
//! the stop on are not started. A policy stop or cancellation leaves the
//! remaining calls not started, each still answered so the tool-call/result
//! protocol stays whole.

use futures::future::join_all;
use verdict_policy::{Admission, CancelHandle, Decision, Effect, Fingerprint, StopReason};
use verdict_providers::ToolCall;

use super::events::{AgentEvent, Events};
use super::managed::Managed;
use crate::tools::{
    Deferred, PendingResult, Prepared, SettledCall, Suspension, ToolManager, ToolOutcome,
};

/// The result text of a call the execution stopped before.
pub(crate) const NOT_RUN_STOPPED: &str = "Not run: the host stopped this execution.";
/// The result text of a call after a suspend signal.
pub(crate) const NOT_RUN_SUSPENDED: &str = "Not run: the execution was suspended.";
/// The result text of a call after a tool ended the run.
pub(crate) const NOT_RUN_ENDED: &str = "Not run: a tool ended the run.";
/// The result text of a call cancelled before it started.
pub(crate) const NOT_RUN_CANCELLED: &str = "Not run: the execution was cancelled.";

/// The settled batch.
pub(crate) struct Batch {
    /// One per call, in call order.
    pub settled: Vec<SettledCall>,
    /// Set when the policy stopped the execution.
    pub stop: Option<StopReason>,
    /// Calls whose tool answered with a pending handle (not observed yet).
    pub pending: Vec<(SettledCall, PendingResult)>,
    /// Set when a tool asked to suspend (the calls after it did not run).
    pub suspend: Option<Suspension>,
    /// The index of a succeeded call whose tool ends the run.
    pub ended_by: Option<usize>,
}

/// Runs `calls` as one batch.
pub(crate) async fn run_batch(
    tools: &ToolManager,
    calls: &[ToolCall],
    mut managed: Option<&mut Managed>,
    cancel: &CancelHandle,
    events: &Events,
) -> Batch {
    let prepared: Vec<Prepared> = calls.iter().map(|c| tools.prepare(c)).collect();
    let mut settled: Vec<Option<SettledCall>> = vec![None; calls.len()];
    let mut stop = None;
    let mut pending = Vec::new();
    let mut suspend = None;
    let mut ended_by = None;
    let mut next = 0;
    while next < prepared.len()
        && stop.is_none()
        && suspend.is_none()
        && ended_by.is_none()
        && !cancel.is_cancelled()
    {
        let mut group = Vec::new();
        let mut signatures = Vec::new();
        while let Some(item) = prepared.get(next) {
            let effect = item.effect();
            let (call, tool) = match item {
                Prepared::Skipped(skip) => {
                    settled[next] = Some(skip.clone());
                    next += 1;
                    continue;
                }
                Prepared::Ready { call, tool } => (call, tool),
            };
            // A write runs alone; a read identical to one already in the
            // group waits for it, so repeat accounting sees the first
            // result before admitting the second (as one at a time would).
            // Signatures are needed only when the batch has another call
            // (a lone call's fingerprint would be compared with nothing).
            let signature = (prepared.len() > 1)
                .then(|| (call.name.as_str(), Fingerprint::of(&call.arguments).ok()));
            if !group.is_empty() && (effect != Effect::Read || signatures.contains(&signature)) {
                break;
            }
            signatures.push(signature);
            let admission = match managed.as_deref_mut() {
                Some(m) => m.admit(call, effect),
                None => Admission::Run,
            };
            match admission {
                Admission::Run => group.push((next, call.clone(), tool.clone())),
                Admission::Skip { feedback } => {
                    settled[next] = Some(SettledCall::not_started(call.clone(), effect, feedback));
                }
                Admission::Stop { reason } => {
                    stop = Some(reason);
                    break;
                }
            }
            next += 1;
            if effect != Effect::Read {
                break;
            }
        }
        for (_, call, _) in &group {
            events
                .emit(|| AgentEvent::ToolCallAdmitted {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                })
                .await;
        }
        let indices: Vec<usize> = group.iter().map(|(i, _, _)| *i).collect();
        let ends: Vec<bool> = group
            .iter()
            .map(|(_, _, tool)| tool.as_ref().is_some_and(|t| t.ends_run))
            .collect();
        let results = join_all(
            group
                .into_iter()
                .map(|(_, call, tool)| tools.execute_keeping(call, tool, cancel)),
        )
        .await;
        for ((index, ends), (result, deferred)) in indices.into_iter().zip(ends).zip(results) {
            if ends && deferred.is_none() && matches!(result.outcome, ToolOutcome::Succeeded { .. })
            {
                ended_by.get_or_insert(index);
            }
            match deferred {
                Some(Deferred::Pending(handle)) => {
                    // Started, settles later: observed when its result arrives.
                    pending.push((result.clone(), handle));
                    settled[index] = Some(result);
                    continue;
                }
                Some(Deferred::Suspend(signal)) => {
                    suspend.get_or_insert(signal);
                }
                None => {}
            }
            if let Some(m) = managed.as_deref_mut()
                && let Decision::Stop { reason } = m.observe(&result)
            {
                stop.get_or_insert(reason);
            }
            settled[index] = Some(result);
        }
    }
    let leftover = if stop.is_some() {
        NOT_RUN_STOPPED
    } else if suspend.is_some() {
        NOT_RUN_SUSPENDED
    } else if ended_by.is_some() {
        NOT_RUN_ENDED
    } else {
        NOT_RUN_CANCELLED
    };
    let settled: Vec<SettledCall> = settled
        .into_iter()
        .zip(prepared)
        .map(|(done, prepared)| {
            done.unwrap_or_else(|| {
                let effect = prepared.effect();
                match prepared {
                    Prepared::Skipped(skip) => skip,
                    Prepared::Ready { call, .. } => {
                        SettledCall::not_started(call, effect, leftover)
                    }
                }
            })
        })
        .collect();
    for call in &settled {
        tools.after(call);
        events
            .emit(|| AgentEvent::ToolCallSettled(call.clone()))
            .await;
    }
    Batch {
        settled,
        stop,
        pending,
        suspend,
        ended_by,
    }
}
