//! The managed side of a run: one [`PolicyExecution`], its checkers, and
//! the view the stale-view guard compares. The only place the loop talks to
//! the policy engine, so `run` (and any future `stream`) share one decision
//! path.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use verdict_policy::{
    Admission, BatchDecision, CancelHandle, CheckContext, CheckDecision, CheckFuture, CheckKind,
    CheckRequest, CheckView, CheckerError, Decision, ExecutionIdentity, FinalDecision,
    LoopDiagnostics, PolicyExecution, StopReason, ToolCallRequest, TurnDecision, Verdict,
};
use verdict_providers::ToolCall;

use super::async_results::AsyncDelivery;
use crate::checkers::Checkers;
use crate::host::HostContext;
use crate::tools::SettledCall;

/// How many times a check restarts because the host scope changed before
/// it gives up with a checker error.
const MAX_SCOPE_RESTARTS: u32 = 4;

/// The diagnostics slot an agent exposes through `loop_diagnostics()`.
pub(crate) type DiagnosticsSlot = Arc<Mutex<Option<LoopDiagnostics>>>;

/// What to do with a final candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Judgement {
    /// Return it.
    Accept,
    /// Take another turn (the feedback comes with it).
    Continue,
    /// The execution ended.
    Stop(StopReason),
}

/// Who the execution belongs to.
pub(crate) struct Identity {
    pub owner: String,
    pub conversation: String,
}

/// One managed policy execution.
pub(crate) struct Managed {
    policy_exec: PolicyExecution,
    /// The checkers the execution runs (the engine knows their identities).
    checkers: Checkers,
    host: Arc<dyn HostContext>,
    identity: Identity,
    checker_timeout: Duration,
    slot: DiagnosticsSlot,
    /// The admission sequence number of each admitted call, by its call id
    /// (unique within the execution: see `call_ids.rs`).
    admitted: HashMap<String, u64>,
    /// Sequence numbers given so far.
    sequences: u64,
}

/// A checker's answer.
enum CheckerAnswer {
    Verdict(Result<Verdict, CheckerError>),
    Key(Result<String, CheckerError>),
}

impl Managed {
    pub(crate) fn new(
        policy_exec: PolicyExecution,
        checkers: Checkers,
        host: Arc<dyn HostContext>,
        identity: Identity,
        checker_timeout: Duration,
        slot: DiagnosticsSlot,
    ) -> Self {
        let managed = Self {
            policy_exec,
            checkers,
            host,
            identity,
            checker_timeout,
            slot,
            admitted: HashMap::new(),
            sequences: 0,
        };
        managed.publish();
        managed
    }

    /// A detached snapshot of the diagnostics.
    pub(crate) fn diagnostics(&self) -> LoopDiagnostics {
        self.policy_exec.diagnostics()
    }

    /// Copies the diagnostics into the agent's slot.
    fn publish(&self) {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        *slot = Some(self.policy_exec.diagnostics());
    }

    /// The view now: the host's scope and task generation, the identity of
    /// the checker of `kind` as it reports itself now, the owner and the
    /// conversation.
    fn view(&self, kind: CheckKind) -> CheckView {
        let checker = match kind {
            CheckKind::Completion => self.checkers.completion.as_ref().map(|c| c.identity()),
            CheckKind::Progress => self.checkers.progress.as_ref().map(|c| c.identity()),
        };
        CheckView {
            scope: self.host.scope(),
            identity: ExecutionIdentity {
                task_generation: self.host.task_generation(),
                checker: checker.unwrap_or_default(),
                owner: self.identity.owner.clone(),
                conversation: self.identity.conversation.clone(),
            },
        }
    }

    /// Before a model call.
    pub(crate) fn begin_turn(&mut self) -> TurnDecision {
        let turn = self.policy_exec.begin_turn();
        self.publish();
        turn
    }

    /// Before a tool dispatch, with the arguments that will run. The call
    /// gets the next sequence number of the execution: its admission
    /// identity, with its action.
    pub(crate) fn admit(&mut self, call: &ToolCall, effect: verdict_policy::Effect) -> Admission {
        self.sequences += 1;
        let sequence = self.sequences;
        let admission = self.policy_exec.admit(&ToolCallRequest {
            sequence,
            call_id: &call.id,
            tool_name: &call.name,
            effect,
            arguments: &call.arguments,
        });
        if admission == Admission::Run {
            self.admitted.insert(call.id.clone(), sequence);
        }
        self.publish();
        admission
    }

    /// After an admitted call settled (a call never admitted is ignored).
    pub(crate) fn observe(&mut self, settled: &SettledCall) -> Decision {
        let Some(&sequence) = self.admitted.get(&settled.call.id) else {
            return Decision::Continue;
        };
        // The receipt's fingerprint of the result (the same canonical
        // fingerprint the engine would compute) saves hashing it again; a
        // value without one goes to the engine, which records it as
        // unfingerprintable.
        let mut outcome = settled.policy_outcome();
        outcome.result_fingerprint = settled
            .receipt
            .as_ref()
            .and_then(|r| r.result_fingerprint.clone());
        let value = match outcome.result_fingerprint {
            Some(_) => None,
            None => settled.value(),
        };
        let decision = self.policy_exec.observe(sequence, Some(outcome), value);
        self.publish();
        decision
    }

    /// Before an import: the stop that leaves the delivery (and those after
    /// it) queued, when the execution ended or reached a tracking bound.
    pub(crate) fn before_import(&mut self) -> Option<StopReason> {
        let stop = self.policy_exec.before_import();
        self.publish();
        stop
    }

    /// Imports a delivered async result.
    pub(crate) fn import(&mut self, delivery: &AsyncDelivery) -> Decision {
        let (sequence, key) = self.key(delivery);
        let decision = self
            .policy_exec
            .import_delivery(&delivery.as_policy(sequence, &key));
        self.publish();
        decision
    }

    /// Registers an async result still awaited (outstanding until imported).
    pub(crate) fn expect(&mut self, delivery: &AsyncDelivery) {
        let (sequence, key) = self.key(delivery);
        self.policy_exec
            .expect_delivery(&delivery.as_policy(sequence, &key));
        self.publish();
    }

    /// How the engine knows a delivery: this execution's own call (a
    /// same-run settlement) by its admission sequence number; a call of
    /// another execution by the delivery identity (origin execution and
    /// call id), so a reused provider id is never taken for one of ours.
    fn key(&self, delivery: &AsyncDelivery) -> (Option<u64>, String) {
        if delivery.execution_id.as_deref() == Some(self.policy_exec.execution_id())
            && let Some(&sequence) = self.admitted.get(&delivery.call_id)
        {
            return (Some(sequence), delivery.call_id.clone());
        }
        (None, delivery.identity())
    }

    /// After a tool batch: samples the progress key when configured.
    pub(crate) async fn after_batch(&mut self, cancel: &CancelHandle) -> Option<StopReason> {
        let view = self.view(CheckKind::Progress);
        let decision = match self.policy_exec.after_batch(&view, self.host.task_state()) {
            BatchDecision::Continue => CheckDecision::Continue,
            BatchDecision::Stop { reason } => CheckDecision::Stop { reason },
            BatchDecision::SampleProgress(request) => self.settle(request, view, cancel).await,
        };
        self.publish();
        match decision {
            CheckDecision::Stop { reason } => Some(reason),
            _ => None,
        }
    }

    /// On a final candidate: runs the completion check when configured.
    pub(crate) async fn final_candidate(
        &mut self,
        output: &str,
        cancel: &CancelHandle,
    ) -> Judgement {
        let view = self.view(CheckKind::Completion);
        let judgement =
            match self
                .policy_exec
                .final_candidate(output, &view, self.host.task_state())
            {
                FinalDecision::Answer => Judgement::Accept,
                FinalDecision::Stop { reason } => Judgement::Stop(reason),
                FinalDecision::Check(request) => match self.settle(request, view, cancel).await {
                    CheckDecision::Complete => Judgement::Accept,
                    CheckDecision::Stop { reason } => Judgement::Stop(reason),
                    CheckDecision::Continue
                    | CheckDecision::Ignored
                    | CheckDecision::Restart(_) => Judgement::Continue,
                },
            };
        self.publish();
        judgement
    }

    /// Runs a requested check until the engine decides (restarting under a
    /// changed host scope a bounded number of times).
    async fn settle(
        &mut self,
        mut request: CheckRequest,
        mut requested_under: CheckView,
        cancel: &CancelHandle,
    ) -> CheckDecision {
        let mut restarts = 0;
        loop {
            let kind = request.ticket.kind;
            let Some((answer, record)) = self.run_checker(&request, cancel).await else {
                // The run was cancelled: the check is withdrawn, not a
                // checker error; the run ends on its cancellation path with
                // the diagnostics as they were.
                self.policy_exec.cancel_check(request.ticket);
                return CheckDecision::Ignored;
            };
            let view = if restarts < MAX_SCOPE_RESTARTS {
                self.view(kind)
            } else {
                // Give up: answer under the view the check was asked with,
                // so the engine records the checker error.
                requested_under.clone()
            };
            let answer = if restarts < MAX_SCOPE_RESTARTS {
                answer
            } else {
                failed(kind, "the host scope kept changing during the check")
            };
            if let Some(id) = record {
                self.policy_exec.note_check_record(id);
            }
            let decision = match answer {
                CheckerAnswer::Verdict(result) => {
                    self.policy_exec
                        .completion_verdict(request.ticket, &view, result)
                }
                CheckerAnswer::Key(result) => {
                    self.policy_exec.progress_key(request.ticket, &view, result)
                }
            };
            match decision {
                CheckDecision::Restart(next) => {
                    restarts += 1;
                    request = next;
                    requested_under = view;
                }
                other => return other,
            }
        }
    }

    /// Runs the execution's checker of the request's kind with a
    /// [`CheckContext`]: the checker deadline, and a cancel handle the run's
    /// cancellation fires, and the id of the check's record when the
    /// checker wrote one. `None` when the run is cancelled first.
    async fn run_checker(
        &self,
        request: &CheckRequest,
        cancel: &CancelHandle,
    ) -> Option<(CheckerAnswer, Option<String>)> {
        let kind = request.ticket.kind;
        let packet = &request.packet;
        let deadline = Instant::now() + self.checker_timeout;
        let signal = CancelHandle::new();
        let ctx = CheckContext::new()
            .with_deadline(deadline)
            .with_cancel(signal.clone());
        let answer = match kind {
            CheckKind::Completion => match &self.checkers.completion {
                Some(checker) => {
                    let timed = (!checker.decides_deadline()).then_some(deadline);
                    CheckerAnswer::Verdict(
                        drive(checker.check(packet, &ctx), timed, &signal, cancel).await?,
                    )
                }
                None => failed(kind, "no completion checker"),
            },
            CheckKind::Progress => match &self.checkers.progress {
                Some(checker) => {
                    let timed = (!checker.decides_deadline()).then_some(deadline);
                    CheckerAnswer::Key(
                        drive(checker.progress_key(packet, &ctx), timed, &signal, cancel).await?,
                    )
                }
                None => failed(kind, "no progress checker"),
            },
        };
        Some((answer, ctx.record_id().map(str::to_owned)))
    }
}

/// Awaits a checker call until it answers, its `deadline` passes or the run
/// is cancelled (`None`). At the deadline, and on cancellation once
/// `signal` has told the checker, the call gets one last poll so a checker
/// that honours its context (a wasm verifier) gives its own account of an
/// error; a checker that does not is dropped unfinished. Then `signal`
/// fires, however the check ended (past the deadline, a closure still
/// running on the blocking pool sees it and can stop). An answer given at
/// or after the deadline (in that last poll, or ready in the gap between
/// the deadline and its timer) is a timeout: a late verdict never confirms
/// an execution, whatever kind of checker gave it. A panicking checker is a
/// checker failure. Without a `deadline` (a checker that
/// [decides it](verdict_policy::CompletionChecker::decides_deadline)
/// itself), its answer is taken whenever it comes.
async fn drive<T>(
    call: CheckFuture<'_, T>,
    deadline: Option<Instant>,
    signal: &CancelHandle,
    cancel: &CancelHandle,
) -> Option<Result<T, CheckerError>> {
    let mut call = AssertUnwindSafe(call).catch_unwind();
    let timer = async {
        match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline.into(), &mut call).await,
            None => Ok((&mut call).await),
        }
    };
    let answered = tokio::select! {
        biased;
        () = cancel.cancelled() => None,
        answered = timer => Some(answered),
    };
    let Some(answered) = answered else {
        signal.cancel();
        // The checker's own account (e.g. the sandbox's metrics) is taken
        // if it is ready now; the run ends on its cancellation path either
        // way.
        let _ = (&mut call).now_or_never();
        return None;
    };
    let answered = match answered {
        Ok(answered) => answered,
        Err(_elapsed) => (&mut call)
            .now_or_never()
            .unwrap_or(Ok(Err(CheckerError::Timeout))),
    };
    // The check is over: whatever it left running (a closure on the
    // blocking pool, which may have answered for it) is told to stop.
    signal.cancel();
    let answered = answered
        .unwrap_or_else(|_panic| Err(CheckerError::Failed("the checker panicked".to_owned())));
    Some(match answered {
        Ok(_) if deadline.is_some_and(|d| Instant::now() >= d) => Err(CheckerError::Timeout),
        answered => answered,
    })
}

fn error(kind: CheckKind, error: CheckerError) -> CheckerAnswer {
    match kind {
        CheckKind::Completion => CheckerAnswer::Verdict(Err(error)),
        CheckKind::Progress => CheckerAnswer::Key(Err(error)),
    }
}

fn failed(kind: CheckKind, message: &str) -> CheckerAnswer {
    error(kind, CheckerError::Failed(message.to_owned()))
}
