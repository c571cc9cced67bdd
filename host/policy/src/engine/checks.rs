//! Completion and progress checks: packets, tickets, the stale-view guard
//! and late verdicts.

use crate::checker::{CheckerError, CheckerErrorKind, validate_progress_key};
use crate::diagnostics::{Phase, RecoveryTrigger, StopReason, WorkflowStatus};
use crate::feedback;
use crate::packet::{
    CheckPacket, MAX_OUTPUT_CHARS, MAX_PACKET_BYTES, PacketParts, TaskStateSnapshot, json_len,
    truncate_chars,
};
use crate::scope::CheckView;
use crate::verdict::Verdict;

use super::decision::{
    BatchDecision, CheckDecision, CheckKind, CheckRequest, CheckTicket, Decision, FinalDecision,
};
use super::state::{PendingCheck, PolicyExecution};

impl PolicyExecution {
    /// A final candidate arrived. `view` is the host scope and identity now;
    /// `task_state` is the built-in task-state snapshot when enabled. One
    /// check is pending at a time: a new request supersedes the previous one,
    /// whose answer is then ignored.
    pub fn final_candidate(
        &mut self,
        output: &str,
        view: &CheckView,
        task_state: Option<TaskStateSnapshot>,
    ) -> FinalDecision {
        if let Some(reason) = self.ended() {
            return FinalDecision::Stop { reason };
        }
        if self.outstanding > 0 {
            return FinalDecision::Stop {
                reason: self.stop(StopReason::PendingAsync),
            };
        }
        // Feedback queued since the last turn (a failure in the batch that
        // ended with a tool-induced stop, an async failure imported just
        // before this check) stays queued: its attempt is already charged,
        // so a false verdict joins it in the same feedback turn.
        if self.policy.checkers.completion.is_none() {
            self.finish(Phase::Complete, StopReason::AnswerReturned);
            return FinalDecision::Answer;
        }
        self.diag.counters.completion_checks += 1;
        let (text, cut) = truncate_chars(output, MAX_OUTPUT_CHARS);
        match self.request(
            CheckKind::Completion,
            view,
            (text.to_owned(), cut),
            task_state,
        ) {
            Ok(request) => FinalDecision::Check(request),
            Err(reason) => FinalDecision::Stop { reason },
        }
    }

    /// A tool batch ended: sample the progress key when a progress checker
    /// is configured.
    pub fn after_batch(
        &mut self,
        view: &CheckView,
        task_state: Option<TaskStateSnapshot>,
    ) -> BatchDecision {
        if let Some(reason) = self.ended() {
            return BatchDecision::Stop { reason };
        }
        if self.policy.checkers.progress.is_none() {
            return BatchDecision::Continue;
        }
        self.diag.counters.progress_samples += 1;
        match self.request(
            CheckKind::Progress,
            view,
            (String::new(), false),
            task_state,
        ) {
            Ok(request) => BatchDecision::SampleProgress(request),
            Err(reason) => BatchDecision::Stop { reason },
        }
    }

    /// The checker wrote a check record with id `id` for the check it just
    /// answered: the diagnostics list it (up to
    /// [`MAX_CHECK_RECORDS`](crate::diagnostics::MAX_CHECK_RECORDS)).
    pub fn note_check_record(&mut self, id: String) {
        if self.diag.check_records.len() < crate::diagnostics::MAX_CHECK_RECORDS {
            self.diag.check_records.push(id);
        }
    }

    /// Withdraws a check (cancelled, abandoned): its answer, if it ever
    /// comes, is ignored. Returns whether the ticket was the pending one.
    pub fn cancel_check(&mut self, ticket: CheckTicket) -> bool {
        if self
            .pending_check
            .as_ref()
            .is_some_and(|p| p.ticket == ticket)
        {
            self.pending_check = None;
            return true;
        }
        false
    }

    /// The completion checker answered `result` for `ticket`; `view` is the
    /// host scope and identity now.
    pub fn completion_verdict(
        &mut self,
        ticket: CheckTicket,
        view: &CheckView,
        result: Result<Verdict, CheckerError>,
    ) -> CheckDecision {
        let pending = match self.take_pending(ticket, CheckKind::Completion, view) {
            Ok(pending) => pending,
            Err(decision) => return decision,
        };
        // A `Verdict` is within its bounds by construction.
        let verdict = match result {
            Ok(verdict) => verdict,
            Err(error) => return self.checker_failed(error.kind()),
        };
        drop(pending);
        self.diag.last_verdict = Some(verdict.clone());
        if verdict.complete {
            self.diag.status = Some(WorkflowStatus::Completed);
            self.finish(Phase::Complete, StopReason::Completed);
            return CheckDecision::Complete;
        }
        let message = feedback::incomplete(verdict.feedback.as_deref());
        into_check(self.recover(RecoveryTrigger::IncompleteVerdict, message))
    }

    /// The progress checker answered `result` for `ticket`.
    pub fn progress_key(
        &mut self,
        ticket: CheckTicket,
        view: &CheckView,
        result: Result<String, CheckerError>,
    ) -> CheckDecision {
        if let Err(decision) = self.take_pending(ticket, CheckKind::Progress, view) {
            return decision;
        }
        let key = match result.and_then(|k| validate_progress_key(&k).map(|()| k)) {
            Ok(key) => key,
            Err(error) => return self.checker_failed(error.kind()),
        };
        let unchanged = self.last_progress_key.as_deref() == Some(key.as_str());
        self.last_progress_key = Some(key);
        if !unchanged {
            self.unchanged_samples = 0;
            return CheckDecision::Continue;
        }
        self.unchanged_samples += 1;
        if self.unchanged_samples < self.policy.unchanged_progress_limit {
            return CheckDecision::Continue;
        }
        self.unchanged_samples = 0;
        into_check(self.recover(
            RecoveryTrigger::UnchangedProgress,
            feedback::unchanged_progress(),
        ))
    }

    fn checker_failed(&mut self, kind: CheckerErrorKind) -> CheckDecision {
        self.diag.checker_error = Some(kind);
        CheckDecision::Stop {
            reason: self.stop(StopReason::CheckerError),
        }
    }

    /// Matches an answer to the pending check and applies the stale-view
    /// guard. (Private; the decision is returned at once, never propagated.)
    #[allow(clippy::result_large_err)]
    fn take_pending(
        &mut self,
        ticket: CheckTicket,
        kind: CheckKind,
        view: &CheckView,
    ) -> Result<PendingCheck, CheckDecision> {
        let matches = self
            .pending_check
            .as_ref()
            .is_some_and(|p| p.ticket == ticket && ticket.kind == kind);
        let pending = match self.pending_check.take() {
            Some(pending) if matches => pending,
            other => {
                self.pending_check = other;
                self.diag.counters.late_verdicts += 1;
                return Err(CheckDecision::Ignored);
            }
        };
        if pending.view.identity != view.identity {
            return Err(CheckDecision::Stop {
                reason: self.stop(StopReason::StateChanged),
            });
        }
        if pending.view.scope != view.scope {
            self.diag.counters.scope_restarts += 1;
            return Err(
                match self.request(
                    kind,
                    view,
                    (pending.output, pending.output_truncated),
                    pending.task_state,
                ) {
                    Ok(request) => CheckDecision::Restart(request),
                    Err(reason) => CheckDecision::Stop { reason },
                },
            );
        }
        Ok(pending)
    }

    /// Builds a packet, records the pending check and returns the request.
    fn request(
        &mut self,
        kind: CheckKind,
        view: &CheckView,
        (output, output_truncated): (String, bool),
        task_state: Option<TaskStateSnapshot>,
    ) -> Result<CheckRequest, StopReason> {
        let Some(packet) = self.build_packet(&output, output_truncated, task_state.clone()) else {
            self.diag.checker_error = Some(CheckerErrorKind::PacketTooLarge);
            return Err(self.stop(StopReason::CheckerError));
        };
        let ticket = CheckTicket {
            id: self.ticket(),
            kind,
        };
        // The check runs the checker the execution started with: its
        // identity is the engine's, whatever the loop's view said, and an
        // answer reported under another identity is stale.
        let mut view = view.clone();
        let checkers = &self.policy.checkers;
        view.identity.checker = match kind {
            CheckKind::Completion => checkers.completion.clone(),
            CheckKind::Progress => checkers.progress.clone(),
        }
        .unwrap_or_default();
        self.pending_check = Some(PendingCheck {
            ticket,
            view,
            output,
            output_truncated,
            task_state,
        });
        Ok(CheckRequest { ticket, packet })
    }

    /// The detached packet within every bound, or `None` when even without
    /// observations it exceeds [`MAX_PACKET_BYTES`].
    fn build_packet(
        &self,
        output: &str,
        already_cut: bool,
        task_state: Option<TaskStateSnapshot>,
    ) -> Option<CheckPacket> {
        let (text, cut) = truncate_chars(output, MAX_OUTPUT_CHARS);
        let cut = cut || already_cut;
        let total = self.diag.counters.observations;
        let carried = u32::try_from(self.observations.len()).unwrap_or(u32::MAX);
        let mut packet = PacketParts {
            execution_id: self.diag.execution_id.clone(),
            iteration: self.diag.counters.iterations,
            output_text: text.to_owned(),
            output_truncated: cut,
            observations: self.observations.iter().cloned().collect(),
            observed_tool_calls: total,
            observations_truncated: total > carried,
            task_state,
        };
        let mut size = json_len(&packet)?;
        if size <= MAX_PACKET_BYTES {
            return Some(CheckPacket::built(packet));
        }
        // Drop the oldest observations until the packet fits.
        let sizes: Vec<usize> = packet
            .observations
            .iter()
            .map(|o| json_len(o).map_or(usize::MAX, |len| len + 1))
            .collect();
        let mut drop = 0;
        while size > MAX_PACKET_BYTES && drop < sizes.len() {
            size = size.saturating_sub(sizes[drop]);
            drop += 1;
        }
        packet.observations.drain(..drop);
        packet.observations_truncated = true;
        let size = json_len(&packet)?;
        (size <= MAX_PACKET_BYTES).then(|| CheckPacket::built(packet))
    }
}

fn into_check(decision: Decision) -> CheckDecision {
    match decision {
        Decision::Continue => CheckDecision::Continue,
        Decision::Stop { reason } => CheckDecision::Stop { reason },
    }
}
