//! Admission: the decision before each tool dispatch.

use std::sync::Arc;

use serde_json::Value;

use crate::canonical::Fingerprint;
use crate::diagnostics::{RecoveryTrigger, StopReason};
use crate::feedback;
use crate::packet::Effect;

use super::decision::{Admission, Decision};
use super::state::{CallKey, PolicyExecution, TrackedCall};

/// A tool call the model asked for, as the loop is about to dispatch it.
///
/// Admission identity is the action (tool name and canonical arguments)
/// plus `sequence`; the call id only labels the observation. Providers omit,
/// empty or repeat call ids, so the engine never takes an id for an action.
#[derive(Debug, Clone, Copy)]
pub struct ToolCallRequest<'a> {
    /// The call's number within this execution, assigned by the loop:
    /// unique per call (a second admission under one number is a replay and
    /// is skipped). [`PolicyExecution::observe`] settles the call by it.
    pub sequence: u64,
    /// The call id its observation carries (the loop's per-execution id).
    pub call_id: &'a str,
    /// The tool's registered name.
    pub tool_name: &'a str,
    /// The effect the tool declared at registration (unknown if none).
    pub effect: Effect,
    /// The parsed arguments.
    pub arguments: &'a Value,
}

impl PolicyExecution {
    /// Decides whether `call` may be dispatched.
    pub fn admit(&mut self, call: &ToolCallRequest<'_>) -> Admission {
        if let Some(reason) = self.ended() {
            return Admission::Stop { reason };
        }
        if let Some(reason) = self.check_tracking_bounds() {
            return Admission::Stop { reason };
        }
        let key = CallKey::Admitted(call.sequence);
        if self.calls.contains_key(&key) {
            // A sequence number is one call: a second dispatch under it
            // would be a replay.
            self.diag.counters.skipped_calls += 1;
            return Admission::Skip {
                feedback: feedback::render(&[feedback::duplicate_action(call.tool_name)]),
            };
        }
        let Ok(fingerprint) = Fingerprint::of(call.arguments) else {
            return Admission::Stop {
                reason: self.stop(StopReason::Unfingerprintable),
            };
        };
        let signature = Arc::new((call.tool_name.to_owned(), fingerprint));
        let allowlisted = self.policy.read_allowlist.contains(call.tool_name);
        let entry = self.signatures.entry(signature.clone()).or_default();
        match call.effect {
            Effect::Read if entry.flagged && !allowlisted => {
                return Admission::Stop {
                    reason: self.stop(StopReason::RepeatedRead),
                };
            }
            Effect::Write | Effect::Unknown if entry.live > 0 => {
                if entry.flagged {
                    return Admission::Stop {
                        reason: self.stop(StopReason::DuplicateAction),
                    };
                }
                entry.flagged = true;
                self.diag.counters.skipped_calls += 1;
                let message = feedback::duplicate_action(call.tool_name);
                return match self.recover(RecoveryTrigger::DuplicateAction, message.clone()) {
                    Decision::Continue => Admission::Skip {
                        feedback: feedback::render(&[message]),
                    },
                    Decision::Stop { reason } => Admission::Stop { reason },
                };
            }
            _ => {}
        }
        entry.live += 1;
        self.diag.counters.call_signatures =
            u32::try_from(self.signatures.len()).unwrap_or(u32::MAX);
        self.diag.counters.admissions += 1;
        self.outstanding += 1;
        self.calls.insert(
            key,
            TrackedCall {
                call_id: call.call_id.to_owned(),
                signature,
                effect: call.effect,
                settled: false,
            },
        );
        Admission::Run
    }
}
