//! Imported deliveries: authentic async results settled into this execution.

use std::sync::Arc;

use serde_json::Value;

use crate::canonical::Fingerprint;
use crate::diagnostics::{StopReason, TrackingBound};
use crate::packet::{Effect, ObservedOutcome};

use super::decision::Decision;
use super::state::{CallKey, PolicyExecution, TrackedCall};

/// An async result delivered to this execution (by a continuation or the
/// run queue): a call admitted elsewhere, or a late settlement of one of
/// this execution's own calls.
#[derive(Debug, Clone)]
pub struct Delivery<'a> {
    /// `Some(n)`: the settlement of this execution's own call admitted under
    /// sequence `n`. `None`: a call admitted elsewhere, identified by
    /// `call_id`.
    pub sequence: Option<u64>,
    /// The id its observation carries. For a call admitted elsewhere it is
    /// the delivery's identity, which must name the origin too (e.g.
    /// `exec-3/call_1`): repeated deliveries of one identity are settled
    /// once, and provider ids repeat across executions.
    pub call_id: &'a str,
    /// The tool's name at invocation.
    pub tool_name: &'a str,
    /// The effect selected at invocation admission, when retained. It wins
    /// over the tool's current registration, which is never consulted.
    pub admitted_effect: Option<Effect>,
    /// The effect on the execution receipt, for legacy results without
    /// retained admission metadata.
    pub receipt_effect: Option<Effect>,
    /// The call's arguments, when retained (for failure identity).
    pub arguments: Option<&'a Value>,
    /// The authentic outcome; `None` blocks a possible action
    /// conservatively.
    pub outcome: Option<ObservedOutcome>,
    /// The result value, when delivered.
    pub result: Option<&'a Value>,
}

impl PolicyExecution {
    /// Settles a delivered async result. The effect is the one retained at
    /// admission, else the receipt's, else unknown; failures count toward
    /// recovery as any other; a missing outcome for a write/unknown effect
    /// stops with `uncertain_effect`. Deliveries do not count as admissions
    /// of this execution (the admissions bound counts them with its calls).
    ///
    /// Nothing is imported once the execution has ended or a tracking bound
    /// is reached (see [`PolicyExecution::before_import`]): the decision is
    /// then that stop, and the delivery belongs to a later execution.
    pub fn import_delivery(&mut self, delivery: &Delivery<'_>) -> Decision {
        if let Some(reason) = self.before_import() {
            return Decision::Stop { reason };
        }
        self.expect_delivery(delivery);
        self.settle(&key(delivery), delivery.outcome.clone(), delivery.result)
    }

    /// Asked before importing a delivery: `Some(reason)` when the execution
    /// has ended, or when a tracking bound is reached (the execution then
    /// stops with `tracking_bound`). An import tracks a call and an
    /// observation, so at a bound the delivery must stay with the caller,
    /// queued for a later execution: "at most 1000 … tracked" holds for
    /// deliveries too.
    pub fn before_import(&mut self) -> Option<StopReason> {
        self.ended().or_else(|| self.check_tracking_bounds())
    }

    /// Registers a call admitted elsewhere whose result has not arrived yet,
    /// so a final candidate stops with `pending_async` until it is imported
    /// (with [`PolicyExecution::import_delivery`]). The effect follows the
    /// same order as an import; the outcome fields are not read. It is not
    /// an admission of this execution; a call already known is left as it
    /// is. A call it has no room to track (the admissions bound counts the
    /// calls it tracks, pending async calls included) stops the execution
    /// with `tracking_bound` instead.
    pub fn expect_delivery(&mut self, delivery: &Delivery<'_>) {
        let key = key(delivery);
        if self.calls.contains_key(&key) || self.ended().is_some() {
            return;
        }
        if self.calls.len() >= self.policy.max_admissions as usize {
            self.diag.tracking_bound = Some(TrackingBound::Admissions);
            self.stop(StopReason::TrackingBound);
            return;
        }
        let effect = delivery
            .admitted_effect
            .or(delivery.receipt_effect)
            .unwrap_or(Effect::Unknown);
        let fingerprint = delivery
            .arguments
            .and_then(|args| Fingerprint::of(args).ok())
            .unwrap_or_else(Fingerprint::absent);
        self.calls.insert(
            key,
            TrackedCall {
                call_id: delivery.call_id.to_owned(),
                signature: Arc::new((delivery.tool_name.to_owned(), fingerprint)),
                effect,
                settled: false,
            },
        );
        self.outstanding += 1;
    }
}

/// What the engine knows a delivered call by.
fn key(delivery: &Delivery<'_>) -> CallKey {
    match delivery.sequence {
        Some(sequence) => CallKey::Admitted(sequence),
        None => CallKey::Delivered(delivery.call_id.to_owned()),
    }
}
