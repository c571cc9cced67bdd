//! Conversions between the policy's packet/verdict types and the WIT records.

use crate::abi::{GuestText, GuestVerdict};
use crate::bindings::v0_1::wit;
use crate::error::CheckError;
use verdict_policy::packet::{MAX_OBSERVATIONS, MAX_OUTPUT_CHARS, MAX_PACKET_BYTES};
use verdict_policy::{
    CheckPacket, Effect, FailureKind, Observation, OutcomeStatus, Verdict, VerdictError,
};

/// Fixed JSON overhead charged per observation when sizing a packet.
const OBSERVATION_OVERHEAD: usize = 160;
/// Fixed JSON overhead charged per packet.
const PACKET_OVERHEAD: usize = 256;

/// Lowers a (bounded) packet into the WIT record, enforcing the 1 MiB bound.
///
/// The size is measured as the packet's string bytes with JSON escaping at
/// its worst plus fixed per-field overhead: an upper bound of the JSON size
/// that costs no serialization.
pub(crate) fn packet(packet: &CheckPacket) -> Result<wit::Packet, CheckError> {
    // Byte length bounds character count, so the count is only needed for
    // long texts.
    let needs_bounding = packet.observations.len() > MAX_OBSERVATIONS
        || (packet.output_text.len() > MAX_OUTPUT_CHARS
            && packet.output_text.chars().count() > MAX_OUTPUT_CHARS);
    let bounded;
    let packet = if needs_bounding {
        bounded = packet.clone().bounded();
        &bounded
    } else {
        packet
    };
    let task_state = match &packet.task_state {
        Some(state) => Some(wit::TaskState {
            host_scope: state.host_scope.clone(),
            revision: state.revision,
            generation: state.generation,
            payload_json: serde_json::to_string(&state.payload)
                .map_err(|e| CheckError::Host(format!("task state is not serializable: {e}")))?,
        }),
        None => None,
    };
    let mut size = PACKET_OVERHEAD + packet.execution_id.len() + escaped_bound(&packet.output_text);
    if let Some(state) = &task_state {
        size += state.host_scope.len() + escaped_bound(&state.payload_json);
    }
    for obs in &packet.observations {
        size += OBSERVATION_OVERHEAD + obs.tool_name.len() + obs.call_id.len();
    }
    if size > MAX_PACKET_BYTES {
        return Err(CheckError::PacketTooLarge { bytes: size });
    }
    Ok(wit::Packet {
        execution_id: packet.execution_id.clone(),
        iteration: packet.iteration,
        output_text: packet.output_text.clone(),
        output_truncated: packet.output_truncated,
        observations: packet.observations.iter().map(observation).collect(),
        observed_tool_calls: packet.observed_tool_calls,
        observations_truncated: packet.observations_truncated,
        task_state,
    })
}

/// JSON size bound of a string: control characters escape to six bytes.
/// Strings up to 64 KiB are charged that worst case without being scanned.
fn escaped_bound(text: &str) -> usize {
    if text.len() <= 64 * 1024 {
        return 6 * text.len() + 2;
    }
    text.len()
        + 2
        + 5 * text
            .bytes()
            .filter(|b| *b < 0x20 || *b == b'"' || *b == b'\\')
            .count()
}

fn observation(obs: &Observation) -> wit::Observation {
    wit::Observation {
        tool_name: obs.tool_name.clone(),
        call_id: obs.call_id.clone(),
        effect: match obs.effect {
            Effect::Read => wit::Effect::Read,
            Effect::Write => wit::Effect::Write,
            Effect::Unknown => wit::Effect::Unknown,
        },
        outcome: obs.outcome.as_ref().map(|o| wit::Outcome {
            status: match o.status {
                OutcomeStatus::Succeeded => wit::OutcomeStatus::Succeeded,
                OutcomeStatus::Failed => wit::OutcomeStatus::Failed,
                OutcomeStatus::NotStarted => wit::OutcomeStatus::NotStarted,
                OutcomeStatus::Unknown => wit::OutcomeStatus::Unknown,
            },
            failure: o.failure.map(|f| match f {
                FailureKind::Permission => wit::FailureKind::Permission,
                FailureKind::Arguments => wit::FailureKind::Arguments,
                FailureKind::Execution => wit::FailureKind::Execution,
                FailureKind::Timeout => wit::FailureKind::Timeout,
                FailureKind::Cancelled => wit::FailureKind::Cancelled,
            }),
            executed: o.executed,
            result_fingerprint: o.result_fingerprint.clone(),
        }),
    }
}

/// Validates a verdict read from guest memory: texts over their bounds
/// were measured there and not copied.
pub(crate) fn verdict(v: GuestVerdict) -> Result<Verdict, CheckError> {
    let reason = match v.reason {
        Some(GuestText::TooLong { chars }) => {
            return Err(VerdictError::ReasonTooLong { chars }.into());
        }
        Some(GuestText::Text(text)) => Some(text),
        None => None,
    };
    let feedback = match v.feedback {
        Some(GuestText::TooLong { chars }) => {
            return Err(VerdictError::FeedbackTooLong { chars }.into());
        }
        Some(GuestText::Text(text)) => Some(text),
        None => None,
    };
    let verdict = Verdict {
        complete: v.complete,
        reason,
        feedback,
    };
    verdict.validate()?;
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(text: String, observations: usize) -> CheckPacket {
        CheckPacket {
            execution_id: "e".into(),
            iteration: 1,
            output_text: text,
            output_truncated: false,
            observations: (0..observations)
                .map(|i| Observation {
                    tool_name: "t".into(),
                    call_id: i.to_string(),
                    effect: Effect::Read,
                    outcome: None,
                })
                .collect(),
            observed_tool_calls: 0,
            observations_truncated: false,
            task_state: None,
        }
    }

    #[test]
    fn over_long_output_and_history_are_cut_and_flagged() {
        let wit = super::packet(&packet("é".repeat(MAX_OUTPUT_CHARS + 5), 150)).unwrap();
        assert_eq!(wit.output_text.chars().count(), MAX_OUTPUT_CHARS);
        assert!(wit.output_truncated);
        assert_eq!(wit.observations.len(), MAX_OBSERVATIONS);
        assert_eq!(
            wit.observations[0].call_id, "50",
            "the most recent are kept"
        );
        assert!(wit.observations_truncated);
        assert_eq!(wit.observed_tool_calls, 150);
    }

    #[test]
    fn packets_at_the_bounds_pass_unchanged() {
        let wit = super::packet(&packet("x".repeat(MAX_OUTPUT_CHARS), 100)).unwrap();
        assert_eq!(wit.output_text.len(), MAX_OUTPUT_CHARS);
        assert!(!wit.output_truncated && !wit.observations_truncated);
    }

    #[test]
    fn escaped_bound_is_an_upper_bound_of_the_json_size() {
        for text in [
            "",
            "plain",
            "\"\\\n\u{1}",
            &"\u{1}".repeat(70_000),
            &"a".repeat(70_000),
        ] {
            let json = serde_json::to_string(text).unwrap();
            assert!(escaped_bound(text) >= json.len(), "{}", text.len());
        }
    }
}
