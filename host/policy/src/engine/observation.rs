//! Observation: accounting after each tool call settles.

use std::sync::Arc;

use serde_json::Value;

use crate::canonical::Fingerprint;
use crate::diagnostics::{RecoveryTrigger, StopReason};
use crate::feedback;
use crate::packet::{
    Effect, FailureKind, MAX_OBSERVATIONS, Observation, ObservedOutcome, OutcomeStatus,
};

use super::decision::Decision;
use super::state::{CallKey, PolicyExecution, ResultIdentity, Signature};

impl PolicyExecution {
    /// Records the settlement of the call admitted under `sequence`.
    /// `outcome` is the framework's authentic outcome (`None` when there is
    /// none); `result` is the tool's result value when the loop has it,
    /// fingerprinted here (otherwise `outcome.result_fingerprint` is used
    /// when present).
    ///
    /// A sequence that was never admitted, or whose call already settled, is
    /// ignored: settlements are deduplicated per call.
    pub fn observe(
        &mut self,
        sequence: u64,
        outcome: Option<ObservedOutcome>,
        result: Option<&Value>,
    ) -> Decision {
        self.settle(&CallKey::Admitted(sequence), outcome, result)
    }

    /// Settles the tracked call `key` (see [`PolicyExecution::observe`]).
    pub(super) fn settle(
        &mut self,
        key: &CallKey,
        outcome: Option<ObservedOutcome>,
        result: Option<&Value>,
    ) -> Decision {
        let Some(call) = self.calls.get_mut(key) else {
            return self.current();
        };
        if call.settled {
            return self.current();
        }
        call.settled = true;
        let call_id = call.call_id.clone();
        let effect = call.effect;
        let signature = Arc::clone(&call.signature);
        self.outstanding = self.outstanding.saturating_sub(1);
        if let Some(reason) = self.ended() {
            return Decision::Stop { reason };
        }
        let conservative = effect != Effect::Read;
        let Some(mut outcome) = outcome else {
            return self.no_outcome(call_id, &signature, effect, conservative);
        };
        let identity = match result {
            Some(value) => match Fingerprint::of(value) {
                Ok(fingerprint) => {
                    outcome.result_fingerprint = Some(fingerprint.as_str().to_owned());
                    ResultIdentity::Known(fingerprint)
                }
                Err(_) => {
                    outcome.result_fingerprint = None;
                    ResultIdentity::Unfingerprintable
                }
            },
            None => match &outcome.result_fingerprint {
                Some(text) => match Fingerprint::parse(text) {
                    Some(fingerprint) => ResultIdentity::Known(fingerprint),
                    None => ResultIdentity::Unfingerprintable,
                },
                None => ResultIdentity::NotKnown,
            },
        };
        match outcome.status {
            OutcomeStatus::NotStarted => {
                if let Some(state) = self.signatures.get_mut(&signature) {
                    state.live = state.live.saturating_sub(1);
                }
                Decision::Continue
            }
            OutcomeStatus::Unknown if conservative => {
                self.record(call_id, &signature.0, effect, Some(outcome));
                Decision::Stop {
                    reason: self.stop(StopReason::UncertainEffect),
                }
            }
            OutcomeStatus::Unknown => {
                self.record(call_id, &signature.0, effect, Some(outcome));
                self.failed(&signature, None)
            }
            OutcomeStatus::Failed => {
                let kind = outcome.failure;
                let uncertain = conservative
                    && match kind {
                        Some(FailureKind::Timeout) => true,
                        Some(FailureKind::Cancelled) => outcome.executed,
                        _ => false,
                    };
                if matches!(kind, Some(FailureKind::Permission | FailureKind::Arguments)) {
                    // The tool never ran: no execution receipt.
                    outcome.executed = false;
                }
                self.record(call_id, &signature.0, effect, Some(outcome));
                if uncertain {
                    return Decision::Stop {
                        reason: self.stop(StopReason::UncertainEffect),
                    };
                }
                self.failed(&signature, kind)
            }
            OutcomeStatus::Succeeded => {
                self.record(call_id, &signature.0, effect, Some(outcome));
                if effect == Effect::Read && !self.policy.read_allowlist.contains(&signature.0) {
                    return self.read_settled(&signature, identity);
                }
                Decision::Continue
            }
        }
    }

    fn no_outcome(
        &mut self,
        call_id: String,
        signature: &Signature,
        effect: Effect,
        conservative: bool,
    ) -> Decision {
        self.record(call_id, &signature.0, effect, None);
        if conservative {
            return Decision::Stop {
                reason: self.stop(StopReason::UncertainEffect),
            };
        }
        self.failed(signature, None)
    }

    fn current(&self) -> Decision {
        match self.ended() {
            Some(reason) => Decision::Stop { reason },
            None => Decision::Continue,
        }
    }

    fn record(
        &mut self,
        call_id: String,
        tool: &str,
        effect: Effect,
        outcome: Option<ObservedOutcome>,
    ) {
        self.diag.counters.observations = self.diag.counters.observations.saturating_add(1);
        if self.observations.len() == MAX_OBSERVATIONS {
            self.observations.pop_front();
        }
        self.observations.push_back(Observation {
            tool_name: tool.to_owned(),
            call_id,
            effect,
            outcome,
        });
    }

    fn failed(&mut self, signature: &Signature, kind: Option<FailureKind>) -> Decision {
        self.diag.counters.failures = self.diag.counters.failures.saturating_add(1);
        let bound = self.policy.max_observations as usize;
        if self.failure_identities.len() < bound {
            self.failure_identities
                .insert((signature.0.clone(), Some(signature.1.clone()), kind));
            self.diag.counters.failure_identities =
                u32::try_from(self.failure_identities.len()).unwrap_or(u32::MAX);
        }
        self.recover(
            RecoveryTrigger::ToolFailure,
            feedback::tool_failure(&signature.0, kind),
        )
    }

    fn read_settled(&mut self, signature: &Signature, result: ResultIdentity) -> Decision {
        let limit = self.policy.repeated_read_limit;
        let Some(state) = self.signatures.get_mut(signature) else {
            return Decision::Continue;
        };
        let identical = matches!(
            (&state.last_result, &result),
            (Some(ResultIdentity::Known(a)), ResultIdentity::Known(b)) if a == b
        ) || matches!(
            (&state.last_result, &result),
            (Some(ResultIdentity::NotKnown), ResultIdentity::NotKnown)
        );
        state.repeats = if identical { state.repeats + 1 } else { 0 };
        state.last_result = Some(result);
        if state.repeats < limit {
            return Decision::Continue;
        }
        state.flagged = true;
        self.diag.counters.repeated_reads += 1;
        self.recover(
            RecoveryTrigger::RepeatedRead,
            feedback::repeated_read(&signature.0),
        )
    }
}
