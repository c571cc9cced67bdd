//! Async results: pending handles the agent awaits, deliveries that
//! arrived, and the call ids already delivered (deduplication).

use std::collections::{HashSet, VecDeque};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use verdict_policy::{Delivery, Effect};
use verdict_providers::ToolCall;

use crate::tools::{ExecutionReceipt, PendingResult, Poll, SettledCall, ToolOutcome};

/// How many delivered call ids the agent remembers for deduplication.
const MAX_REMEMBERED: usize = 4096;

/// An async tool result delivered to the agent, imported by its next
/// execution before the next model dispatch or completion check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AsyncDelivery {
    /// The call's id.
    pub call_id: String,
    /// The policy execution that admitted the call, when known. With the
    /// call id it is the delivery's identity: repeated deliveries of one
    /// identity are imported once, and a call id reused by another
    /// execution is a different call.
    #[serde(default)]
    pub execution_id: Option<String>,
    /// The tool's name at invocation.
    pub tool_name: String,
    /// The effect chosen at admission, when retained; it wins over the
    /// tool's current registration, which is never consulted.
    #[serde(default)]
    pub admitted_effect: Option<Effect>,
    /// The execution receipt, when the tool ran (a legacy result without
    /// admission metadata uses its effect, else `unknown`).
    #[serde(default)]
    pub receipt: Option<ExecutionReceipt>,
    /// The call's arguments, when retained.
    #[serde(default)]
    pub arguments: Option<Value>,
    /// The authentic outcome; `None` blocks a possible action (a write or
    /// unknown effect) with `uncertain_effect`.
    #[serde(default)]
    pub outcome: Option<ToolOutcome>,
}

impl AsyncDelivery {
    /// The delivery's identity: origin execution and call id.
    pub(crate) fn identity(&self) -> String {
        identity(self.execution_id.as_deref(), &self.call_id)
    }

    /// The policy engine's view of it: with `sequence`, a settlement of the
    /// receiving execution's own call (`key` is its call id); without, a
    /// call of another execution (`key` is the delivery identity).
    pub(crate) fn as_policy<'a>(&'a self, sequence: Option<u64>, key: &'a str) -> Delivery<'a> {
        let executed = self.receipt.is_some();
        Delivery {
            sequence,
            call_id: key,
            tool_name: &self.tool_name,
            admitted_effect: self.admitted_effect,
            receipt_effect: self.receipt.as_ref().map(|r| r.effect),
            arguments: self.arguments.as_ref(),
            outcome: self.outcome.as_ref().map(|o| o.to_policy(executed)),
            result: match &self.outcome {
                Some(ToolOutcome::Succeeded { value }) => Some(value),
                _ => None,
            },
        }
    }

    /// The settled call recorded in the response.
    pub(crate) fn to_settled(&self) -> SettledCall {
        SettledCall {
            call: ToolCall {
                id: self.call_id.clone(),
                name: self.tool_name.clone(),
                arguments: self.arguments.clone().unwrap_or(Value::Null),
                signature: None,
            },
            effect: self
                .admitted_effect
                .or(self.receipt.as_ref().map(|r| r.effect))
                .unwrap_or(Effect::Unknown),
            outcome: self
                .outcome
                .clone()
                .unwrap_or_else(|| ToolOutcome::Unknown {
                    error: "no outcome was delivered".to_owned(),
                }),
            receipt: self.receipt.clone(),
            pending: false,
        }
    }

    /// The labelled user message that carries it to the model.
    pub(crate) fn message(&self) -> String {
        let content = match &self.outcome {
            Some(outcome) => outcome.content().0,
            None => "error: no outcome was delivered".to_owned(),
        };
        format!(
            "[async result] {} (call {}): {content}",
            self.tool_name, self.call_id
        )
    }
}

/// A delivery's identity: origin execution (`delivered` for a legacy one,
/// which has none) and call id.
fn identity(origin: Option<&str>, call_id: &str) -> String {
    format!("{}/{call_id}", origin.unwrap_or("delivered"))
}

/// A pending handle the agent awaits.
struct Awaited {
    execution_id: String,
    call: ToolCall,
    effect: Effect,
    receipt: Option<ExecutionReceipt>,
    handle: PendingResult,
}

/// The agent's async results.
#[derive(Default)]
pub(crate) struct AsyncQueue {
    awaited: Vec<Awaited>,
    arrived: VecDeque<AsyncDelivery>,
    delivered: HashSet<String>,
    delivered_order: VecDeque<String>,
}

impl AsyncQueue {
    /// Awaits the handle of a call that answered pending.
    pub(crate) fn await_handle(
        &mut self,
        execution_id: &str,
        settled: &SettledCall,
        handle: PendingResult,
    ) {
        self.awaited.push(Awaited {
            execution_id: execution_id.to_owned(),
            call: settled.call.clone(),
            effect: settled.effect,
            receipt: settled.receipt.clone(),
            handle,
        });
    }

    /// Queues a delivery; false when its identity was already delivered.
    ///
    /// A legacy delivery (no origin execution) and the settlement of an
    /// awaited call are one result when the call is the only one awaited
    /// under its id, in either order: the first to arrive is imported, and
    /// the legacy identity is remembered with the call's, so the other is a
    /// repeat.
    pub(crate) fn deliver(&mut self, mut delivery: AsyncDelivery) -> bool {
        let legacy = delivery.identity();
        if self.delivered.contains(&legacy) {
            return false;
        }
        if self.adopt(&mut delivery) {
            // Remember the legacy identity too: a repeat of it is this call.
            self.remember(legacy);
        }
        let identity = delivery.identity();
        if self.delivered.contains(&identity) {
            return false;
        }
        if let Some(alias) = self.legacy_alias(&delivery) {
            // The call's result arrived first: a legacy delivery of it
            // later is a repeat.
            self.remember(alias);
        }
        self.remember(identity);
        self.awaited.retain(|a| {
            a.call.id != delivery.call_id
                || delivery.execution_id.as_deref() != Some(a.execution_id.as_str())
        });
        self.arrived.push_back(delivery);
        true
    }

    /// The legacy identity of `delivery`'s call when it settles the only
    /// call awaited under its id (the one a legacy delivery would adopt).
    fn legacy_alias(&self, delivery: &AsyncDelivery) -> Option<String> {
        let origin = delivery.execution_id.as_deref()?;
        let mut matching = self
            .awaited
            .iter()
            .filter(|a| a.call.id == delivery.call_id);
        match (matching.next(), matching.next()) {
            (Some(awaited), None) if awaited.execution_id == origin => {
                Some(identity(None, &delivery.call_id))
            }
            _ => None,
        }
    }

    /// Records a delivered identity (the latest [`MAX_REMEMBERED`] are kept).
    fn remember(&mut self, identity: String) {
        if self.delivered_order.len() == MAX_REMEMBERED
            && let Some(oldest) = self.delivered_order.pop_front()
        {
            self.delivered.remove(&oldest);
        }
        self.delivered.insert(identity.clone());
        self.delivered_order.push_back(identity);
    }

    /// A legacy delivery (no origin execution) whose call id is that of
    /// exactly one call still awaited is that call's result: it takes the
    /// call's origin and the admission metadata it lacks, so the handle
    /// settling later is a repeat, not a second import. (With several
    /// awaited calls under that id it cannot be attributed and stays
    /// legacy.) Returns whether it was adopted.
    fn adopt(&self, delivery: &mut AsyncDelivery) -> bool {
        if delivery.execution_id.is_some() {
            return false;
        }
        let mut matching = self
            .awaited
            .iter()
            .filter(|a| a.call.id == delivery.call_id);
        let (Some(awaited), None) = (matching.next(), matching.next()) else {
            return false;
        };
        delivery.execution_id = Some(awaited.execution_id.clone());
        delivery.admitted_effect.get_or_insert(awaited.effect);
        if delivery.arguments.is_none() {
            delivery.arguments = Some(awaited.call.arguments.clone());
        }
        if delivery.receipt.is_none() {
            delivery.receipt.clone_from(&awaited.receipt);
        }
        true
    }

    /// Moves settled (or abandoned) handles to the arrived deliveries and
    /// takes them all.
    pub(crate) fn take_arrived(&mut self) -> Vec<AsyncDelivery> {
        let mut settled = Vec::new();
        // Polled in place: `deliver` drops each settled call from the
        // awaited list, seeing the calls awaited under its id first.
        for awaited in &mut self.awaited {
            let outcome = match awaited.handle.poll() {
                Poll::Waiting => continue,
                Poll::Settled(Ok(value)) => Some(ToolOutcome::Succeeded { value }),
                Poll::Settled(Err(error)) => Some(ToolOutcome::Failed {
                    kind: verdict_policy::FailureKind::Execution,
                    error: crate::tools::sanitize_error(&error.message),
                }),
                Poll::Lost => None,
            };
            settled.push(AsyncDelivery {
                call_id: awaited.call.id.clone(),
                execution_id: Some(awaited.execution_id.clone()),
                tool_name: awaited.call.name.clone(),
                admitted_effect: Some(awaited.effect),
                receipt: awaited.receipt.clone(),
                arguments: Some(awaited.call.arguments.clone()),
                outcome,
            });
        }
        for delivery in settled {
            self.deliver(delivery);
        }
        self.arrived.drain(..).collect()
    }

    /// Puts deliveries taken with [`AsyncQueue::take_arrived`] but not
    /// imported back at the front of the queue, in order (they were
    /// delivered already: a repeat of one is still refused).
    pub(crate) fn requeue(&mut self, deliveries: impl DoubleEndedIterator<Item = AsyncDelivery>) {
        for delivery in deliveries.rev() {
            self.arrived.push_front(delivery);
        }
    }

    /// The calls still awaited, as expected deliveries.
    pub(crate) fn awaited(&self) -> Vec<AsyncDelivery> {
        self.awaited
            .iter()
            .map(|a| AsyncDelivery {
                call_id: a.call.id.clone(),
                execution_id: Some(a.execution_id.clone()),
                tool_name: a.call.name.clone(),
                admitted_effect: Some(a.effect),
                receipt: a.receipt.clone(),
                arguments: Some(a.call.arguments.clone()),
                outcome: None,
            })
            .collect()
    }

    /// The ids of the calls still awaited.
    pub(crate) fn awaited_ids(&self) -> Vec<String> {
        self.awaited.iter().map(|a| a.call.id.clone()).collect()
    }
}
