//! The feedback-agent story through the fake provider over HTTP on
//! loopback, for every wire protocol: the loop's requests (host feedback
//! after tool results, the user's input intact) survive each provider's
//! encoding.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use common::completion;
use serde_json::json;
use verdict_agent::{Agent, Checkers, ConnectorRegistry, RunOptions, RunStatus, Tool, ToolError};
use verdict_policy::{Effect, LoopPolicy, StopReason, Verdict, WorkflowStatus};
use verdict_providers::fake::{FakeProvider, Script, ScriptedTurn};
use verdict_providers::{Connector, Message, Protocol};

fn story() -> Script {
    Script::new(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call("r1", "read_artifact", json!({})),
        ScriptedTurn::tool_call("r2", "read_artifact", json!({})),
        ScriptedTurn::text("Verified: A42 is ready."),
    ])
}

fn agent_for(registry: &ConnectorRegistry, name: &str) -> Agent {
    let verified = Arc::new(AtomicBool::new(false));
    let tries = Arc::new(AtomicUsize::new(0));
    let flag = verified.clone();
    let read = Tool::new(
        "read_artifact",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        move |_, _| {
            let first = tries.fetch_add(1, Ordering::SeqCst) == 0;
            let flag = flag.clone();
            async move {
                if first {
                    return Err(ToolError::new("artifact store unavailable"));
                }
                flag.store(true, Ordering::SeqCst);
                Ok(json!({"id": "A42", "ready": true}))
            }
        },
    )
    .unwrap()
    .with_effect(Effect::Read);
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |_| {
        Ok(Verdict::new(
            verified.load(Ordering::SeqCst),
            None,
            Some("Read and verify artifact A42 before finishing.".into()),
        )
        .unwrap())
    }));
    Agent::builder()
        .connector(registry, name)
        .model_name("fake-model")
        .max_iterations(6)
        .tool(read)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap()
}

#[tokio::test]
async fn feedback_story_over_every_wire_protocol() {
    for protocol in Protocol::ALL {
        let fake = FakeProvider::start(story()).await.unwrap();
        let config = fake.connector_config(protocol);
        let mut registry = ConnectorRegistry::new();
        let connector = Connector::new(config).unwrap();
        let name = connector.name().to_owned();
        registry.register_connector(connector);
        let agent = agent_for(&registry, &name);

        let response = agent
            .run("Verify artifact A42.", RunOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{protocol:?}: {e}"));

        assert_eq!(response.status, RunStatus::Completed, "{protocol:?}");
        let diag = response.loop_diagnostics.unwrap();
        assert_eq!(diag.status, Some(WorkflowStatus::Completed), "{protocol:?}");
        assert_eq!(diag.reason, Some(StopReason::Completed));
        assert_eq!(diag.recovery_attempts_used, 2);
        assert_eq!(fake.remaining_turns(), 0);

        let recorded = fake.requests();
        assert_eq!(recorded.len(), 4, "{protocol:?}");
        let decoded: Vec<_> = recorded
            .iter()
            .map(|r| r.request.clone().expect("the fake decodes what we sent"))
            .collect();
        for request in &decoded {
            assert!(
                matches!(request.messages.first(), Some(Message::User { text }) if text == "Verify artifact A42."),
                "{protocol:?}: user input first and intact"
            );
        }
        // The rejected candidate is followed by labelled feedback.
        let feedback: Vec<&str> = decoded[1]
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::User { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert!(
            feedback
                .iter()
                .any(|t| t.contains("[host feedback]") && t.contains("artifact A42")),
            "{protocol:?}: {feedback:?}"
        );
        // The failed read's result travels before the feedback that follows it.
        let third = &decoded[2].messages;
        let result_at = third
            .iter()
            .position(|m| matches!(m, Message::ToolResult(r) if r.name == "read_artifact"))
            .unwrap_or_else(|| panic!("{protocol:?}: no tool result in {third:?}"));
        assert!(
            third[result_at + 1..]
                .iter()
                .any(|m| matches!(m, Message::User { text } if text.contains("[host feedback]"))),
            "{protocol:?}: feedback after the tool result"
        );
    }
}

#[tokio::test]
async fn streamed_feedback_story_over_sse() {
    use futures::StreamExt;
    use verdict_agent::AgentEvent;
    for protocol in [Protocol::Anthropic, Protocol::OpenAiChat] {
        let fake = FakeProvider::start(story()).await.unwrap();
        let mut registry = ConnectorRegistry::new();
        let connector = Connector::new(fake.connector_config(protocol)).unwrap();
        let name = connector.name().to_owned();
        registry.register_connector(connector);
        let agent = agent_for(&registry, &name);
        let events: Vec<AgentEvent> = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            agent
                .stream("Verify artifact A42.", RunOptions::default())
                .collect(),
        )
        .await
        .unwrap();
        assert!(
            fake.requests().iter().all(|r| r.stream),
            "{protocol:?}: every call streamed"
        );
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "A42 is ready.Verified: A42 is ready.", "{protocol:?}");
        let Some(AgentEvent::ResponseComplete(response)) = events.last() else {
            panic!("{protocol:?}: {:?}", events.last());
        };
        assert_eq!(response.status, RunStatus::Completed);
        assert_eq!(
            response.loop_diagnostics.as_ref().unwrap().status,
            Some(WorkflowStatus::Completed)
        );
    }
}
