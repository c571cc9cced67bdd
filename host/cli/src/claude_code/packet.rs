//! A check packet from what Claude Code's transcript says: each tool call
//! an observation with the effect of its tool, the last assistant text as
//! the candidate output.

use super::transcript::Transcript;
use crate::config::ClaudeToolSection;
use std::collections::BTreeMap;
use verdict::{
    CheckPacket, Effect, FailureKind, MAX_OBSERVATIONS, MAX_OUTPUT_CHARS, Observation,
    ObservedOutcome, OutcomeStatus, PacketError, PacketParts,
};

/// The effect of one of Claude Code's tools when the configuration does
/// not say: its reading tools read, its editing tools write, the rest
/// (`Bash`, `Task`, MCP tools, whose annotations the transcript does not
/// carry) are unknown, which the policy treats as a write.
pub fn default_effect(tool: &str) -> Effect {
    match tool {
        "Read" | "Grep" | "Glob" | "LS" | "NotebookRead" | "WebFetch" | "WebSearch"
        | "TodoRead" => Effect::Read,
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => Effect::Write,
        _ => Effect::Unknown,
    }
}

/// Builds the packet of `session` from `transcript`; `output` (the hook
/// input's `last_assistant_message`, when Claude Code sends it) wins over
/// the transcript's last text, which may lag behind.
pub fn build(
    session: &str,
    transcript: &Transcript,
    output: Option<&str>,
    tools: &BTreeMap<String, ClaudeToolSection>,
) -> Result<CheckPacket, PacketError> {
    let text = output
        .or(transcript.last_text.as_deref())
        .unwrap_or_default();
    let output_truncated = text.chars().count() > MAX_OUTPUT_CHARS;
    let output_text: String = text.chars().take(MAX_OUTPUT_CHARS).collect();
    let observed = transcript.calls.len();
    let carried = &transcript.calls[observed.saturating_sub(MAX_OBSERVATIONS)..];
    let observations = carried
        .iter()
        .map(|call| {
            let section = tools.get(&call.name);
            let effect = section
                .and_then(|s| s.effect)
                .unwrap_or_else(|| default_effect(&call.name));
            let name = section
                .and_then(|s| s.name.clone())
                .unwrap_or_else(|| call.name.clone());
            Observation {
                tool_name: name,
                call_id: call.id.clone(),
                effect,
                outcome: call.result.map(|is_error| ObservedOutcome {
                    status: if is_error {
                        OutcomeStatus::Failed
                    } else {
                        OutcomeStatus::Succeeded
                    },
                    failure: is_error.then_some(FailureKind::Execution),
                    executed: true,
                    result_fingerprint: None,
                }),
            }
        })
        .collect::<Vec<_>>();
    let observed_tool_calls = u32::try_from(observed).unwrap_or(u32::MAX);
    CheckPacket::from_parts(PacketParts {
        execution_id: format!("claude-code/{session}"),
        iteration: transcript.assistant_entries,
        output_text,
        output_truncated,
        observations_truncated: observed > carried.len(),
        observations,
        observed_tool_calls,
        task_state: None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::claude_code::transcript::Call;

    fn call(id: &str, name: &str, result: Option<bool>) -> Call {
        Call {
            id: id.into(),
            name: name.into(),
            result,
        }
    }

    #[test]
    fn effects_names_and_outcomes_follow_the_map() {
        let transcript = Transcript {
            calls: vec![
                call("a", "Read", Some(false)),
                call("b", "Bash", Some(true)),
                call("c", "Edit", None),
            ],
            last_text: Some("lagging".into()),
            ..Transcript::default()
        };
        let mut tools = BTreeMap::new();
        tools.insert(
            "Read".to_owned(),
            ClaudeToolSection {
                effect: None,
                name: Some("read_artifact".into()),
            },
        );
        let packet = build("s1", &transcript, Some("Done."), &tools).unwrap();
        assert_eq!(packet.execution_id, "claude-code/s1");
        assert_eq!(packet.output_text, "Done.");
        let seen: Vec<(&str, Effect, Option<OutcomeStatus>)> = packet
            .observations
            .iter()
            .map(|o| {
                (
                    o.tool_name.as_str(),
                    o.effect,
                    o.outcome.as_ref().map(|x| x.status),
                )
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                (
                    "read_artifact",
                    Effect::Read,
                    Some(OutcomeStatus::Succeeded)
                ),
                ("Bash", Effect::Unknown, Some(OutcomeStatus::Failed)),
                ("Edit", Effect::Write, None),
            ]
        );
    }

    #[test]
    fn the_last_calls_are_carried_within_the_bounds() {
        let transcript = Transcript {
            calls: (0..150)
                .map(|i| call(&i.to_string(), "Read", Some(false)))
                .collect(),
            last_text: Some("x".repeat(MAX_OUTPUT_CHARS + 5)),
            ..Transcript::default()
        };
        let packet = build("s", &transcript, None, &BTreeMap::new()).unwrap();
        assert_eq!(packet.observations.len(), MAX_OBSERVATIONS);
        assert_eq!(packet.observations[0].call_id, "50");
        assert_eq!(packet.observed_tool_calls, 150);
        assert!(packet.observations_truncated && packet.output_truncated);
    }
}
