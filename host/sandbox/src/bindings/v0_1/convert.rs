//! Conversions from the policy's packet types to the WIT records.

use crate::bindings::v0_1::wit;
use verdict_policy::{
    CheckPacket, Effect, FailureKind, Observation, ObservedOutcome, OutcomeStatus,
    TaskStateSnapshot,
};

/// The packet as the owned WIT record. A [`CheckPacket`] is within every
/// bound by construction (the engine built it, or it was validated), so
/// nothing is cut or measured here. Calls lower the packet from borrowed
/// views instead ([`super::lower`]); this is their flat fallback and the
/// reference the tests compare them with.
pub(crate) fn packet(packet: &CheckPacket) -> wit::Packet {
    wit::Packet {
        execution_id: packet.execution_id.clone(),
        iteration: packet.iteration,
        output_text: packet.output_text.clone(),
        output_truncated: packet.output_truncated,
        observations: packet.observations.iter().map(observation).collect(),
        observed_tool_calls: packet.observed_tool_calls,
        observations_truncated: packet.observations_truncated,
        task_state: task_state(packet.task_state.as_ref()),
    }
}

/// The task state as its WIT record (its payload as JSON text).
pub(crate) fn task_state(state: Option<&TaskStateSnapshot>) -> Option<wit::TaskState> {
    state.map(|state| wit::TaskState {
        host_scope: state.host_scope.clone(),
        revision: state.revision,
        generation: state.generation,
        // A `serde_json::Value` always serializes (string keys only).
        payload_json: state.payload.to_string(),
    })
}

pub(crate) fn observation(obs: &Observation) -> wit::Observation {
    wit::Observation {
        tool_name: obs.tool_name.clone(),
        call_id: obs.call_id.clone(),
        effect: effect(obs.effect),
        outcome: obs.outcome.as_ref().map(outcome),
    }
}

pub(crate) fn outcome(o: &ObservedOutcome) -> wit::Outcome {
    wit::Outcome {
        status: status(o.status),
        failure: o.failure.map(failure),
        executed: o.executed,
        result_fingerprint: o.result_fingerprint.clone(),
    }
}

pub(crate) fn effect(effect: Effect) -> wit::Effect {
    match effect {
        Effect::Read => wit::Effect::Read,
        Effect::Write => wit::Effect::Write,
        Effect::Unknown => wit::Effect::Unknown,
    }
}

pub(crate) fn status(status: OutcomeStatus) -> wit::OutcomeStatus {
    match status {
        OutcomeStatus::Succeeded => wit::OutcomeStatus::Succeeded,
        OutcomeStatus::Failed => wit::OutcomeStatus::Failed,
        OutcomeStatus::NotStarted => wit::OutcomeStatus::NotStarted,
        OutcomeStatus::Unknown => wit::OutcomeStatus::Unknown,
    }
}

pub(crate) fn failure(kind: FailureKind) -> wit::FailureKind {
    match kind {
        FailureKind::Permission => wit::FailureKind::Permission,
        FailureKind::Arguments => wit::FailureKind::Arguments,
        FailureKind::Execution => wit::FailureKind::Execution,
        FailureKind::Timeout => wit::FailureKind::Timeout,
        FailureKind::Cancelled => wit::FailureKind::Cancelled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_policy::{MAX_OBSERVATIONS, MAX_OUTPUT_CHARS, PacketParts};

    #[test]
    fn every_field_is_lowered_as_it_is() {
        let parts = PacketParts {
            execution_id: "e".into(),
            iteration: 3,
            output_text: "x".repeat(MAX_OUTPUT_CHARS),
            output_truncated: true,
            observations: (0..MAX_OBSERVATIONS)
                .map(|i| Observation {
                    tool_name: "t".into(),
                    call_id: i.to_string(),
                    effect: Effect::Read,
                    outcome: None,
                })
                .collect(),
            observed_tool_calls: 150,
            observations_truncated: true,
            task_state: Some(TaskStateSnapshot {
                host_scope: "s".into(),
                revision: 7,
                generation: 2,
                payload: serde_json::json!({"ready": true}),
            }),
        };
        let wit = super::packet(&CheckPacket::from_parts(parts).unwrap());
        assert_eq!(wit.output_text.len(), MAX_OUTPUT_CHARS);
        assert!(wit.output_truncated && wit.observations_truncated);
        assert_eq!(wit.observations.len(), MAX_OBSERVATIONS);
        assert_eq!(wit.observations[99].call_id, "99");
        assert_eq!((wit.iteration, wit.observed_tool_calls), (3, 150));
        let state = wit.task_state.unwrap();
        assert_eq!((state.revision, state.generation), (7, 2));
        assert_eq!(state.payload_json, r#"{"ready":true}"#);
    }
}
