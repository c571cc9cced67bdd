//! Provider call ids are not action identity: the multi-response story
//! (list the artifacts, then read A42, then answer) completes over the fake
//! HTTP provider on every wire protocol, whether the provider sends no ids,
//! empty ids, or the same id in every response. The loop makes ids unique
//! per execution and uses them on both sides of every call/result pair.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{assert_protocol_whole, completion};
use futures::StreamExt;
use serde_json::json;
use verdict_agent::{
    Agent, AgentEvent, AgentResponse, Checkers, ConnectorRegistry, RunOptions, RunStatus, Tool,
    ToolOutcome,
};
use verdict_policy::{Effect, LoopPolicy, OutcomeStatus, StopReason, Verdict, WorkflowStatus};
use verdict_providers::fake::{FakeProvider, Reply, Script, ScriptedCall, ScriptedTurn};
use verdict_providers::{Connector, Message, ModelRequest, Protocol};

/// How the provider identifies its calls.
#[derive(Debug, Clone, Copy)]
enum Ids {
    /// No id (`""` in the script): Gemini and OpenAI chat send none on the
    /// wire, Anthropic and Responses send an empty one.
    Absent,
    /// The same id in every response.
    Repeated,
}

fn call(ids: Ids, name: &str, arguments: serde_json::Value) -> ScriptedTurn {
    let id = match ids {
        Ids::Absent => String::new(),
        Ids::Repeated => "call_1".to_owned(),
    };
    ScriptedTurn::reply(Reply {
        tool_calls: vec![ScriptedCall {
            id: Some(id),
            name: name.to_owned(),
            arguments,
        }],
        ..Reply::default()
    })
}

/// Response 1 lists, response 2 reads A42, response 3 answers.
fn story(ids: Ids) -> Script {
    Script::new(vec![
        call(ids, "list_artifacts", json!({})),
        call(ids, "read_artifact", json!({"id": "A42"})),
        ScriptedTurn::text("A42 is ready."),
    ])
}

fn agent_for(registry: &ConnectorRegistry, name: &str) -> Agent {
    let verified = Arc::new(AtomicBool::new(false));
    let flag = verified.clone();
    let list = Tool::new("list_artifacts", json!({"type": "object"}), |_, _| async {
        Ok(json!(["A42"]))
    })
    .unwrap()
    .with_effect(Effect::Read);
    let read = Tool::new(
        "read_artifact",
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        move |args, _| {
            let flag = flag.clone();
            async move {
                flag.store(args["id"] == "A42", Ordering::SeqCst);
                Ok(json!({"id": "A42", "ready": true}))
            }
        },
    )
    .unwrap()
    .with_effect(Effect::Read);
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |packet| {
        let read = packet.observations.iter().any(|o| {
            o.tool_name == "read_artifact"
                && o.outcome
                    .as_ref()
                    .is_some_and(|x| x.status == OutcomeStatus::Succeeded)
        });
        Ok(Verdict::new(
            read && verified.load(Ordering::SeqCst),
            None,
            Some("Read and verify artifact A42 before finishing.".into()),
        )
        .unwrap())
    }));
    Agent::builder()
        .connector(registry, name)
        .model_name("fake-model")
        .max_iterations(6)
        .tool(list)
        .tool(read)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap()
}

/// Every tool result in a request answers a call of the assistant message
/// before it, by the id that call carries on this protocol's wire.
fn assert_requests_pair(protocol: Protocol, requests: &[ModelRequest]) {
    for request in requests {
        assert_protocol_whole(&request.messages);
        if protocol == Protocol::Gemini {
            // Gemini has no call ids on the wire: pairing is positional.
            for message in &request.messages {
                match message {
                    Message::Assistant { tool_calls, .. } => {
                        assert!(tool_calls.iter().all(|c| c.id.is_empty()), "{message:?}");
                    }
                    Message::ToolResult(r) => assert!(r.call_id.is_empty(), "{r:?}"),
                    Message::User { .. } => {}
                    other => panic!("a message this check does not know: {other:?}"),
                }
            }
        }
    }
}

fn assert_story(protocol: Protocol, ids: Ids, response: &AgentResponse) {
    let at = format!("{protocol:?}/{ids:?}");
    assert_eq!(response.status, RunStatus::Completed, "{at}: {response:?}");
    let diag = response.loop_diagnostics.as_ref().unwrap();
    assert_eq!(diag.status, Some(WorkflowStatus::Completed), "{at}");
    assert_eq!(diag.reason, Some(StopReason::Completed), "{at}");
    assert_eq!(diag.recovery_attempts_used, 0, "{at}: no recovery needed");
    assert_eq!(diag.counters.admissions, 2, "{at}");
    assert_eq!(diag.counters.skipped_calls, 0, "{at}");
    let names: Vec<&str> = response
        .tool_calls
        .iter()
        .map(|c| c.call.name.as_str())
        .collect();
    assert_eq!(names, ["list_artifacts", "read_artifact"], "{at}");
    assert!(
        response
            .tool_calls
            .iter()
            .all(|c| matches!(c.outcome, ToolOutcome::Succeeded { .. })),
        "{at}: {:?}",
        response.tool_calls
    );
    let unique: HashSet<&str> = response
        .tool_calls
        .iter()
        .map(|c| c.call.id.as_str())
        .collect();
    assert_eq!(unique.len(), 2, "{at}: ids unique per execution");
    assert!(!unique.contains(""), "{at}: no empty id");
}

#[tokio::test]
async fn the_multi_response_story_completes_on_every_protocol_whatever_the_ids() {
    for protocol in Protocol::ALL {
        for ids in [Ids::Absent, Ids::Repeated] {
            let fake = FakeProvider::start(story(ids)).await.unwrap();
            let mut registry = ConnectorRegistry::new();
            let connector = Connector::new(fake.connector_config(protocol)).unwrap();
            let name = connector.name().to_owned();
            registry.register_connector(connector);
            let agent = agent_for(&registry, &name);

            let response = agent
                .run("Verify artifact A42.", RunOptions::default())
                .await
                .unwrap_or_else(|e| panic!("{protocol:?}/{ids:?}: {e}"));
            assert_story(protocol, ids, &response);
            assert_eq!(fake.remaining_turns(), 0, "{protocol:?}/{ids:?}");
            assert_protocol_whole(&agent.conversation());
            let requests: Vec<ModelRequest> = fake
                .requests()
                .into_iter()
                .map(|r| r.request.expect("the fake decodes what we sent"))
                .collect();
            assert_eq!(requests.len(), 3, "{protocol:?}/{ids:?}");
            assert_requests_pair(protocol, &requests);
        }
    }
}

#[tokio::test]
async fn the_streamed_multi_response_story_completes_on_every_protocol() {
    for protocol in Protocol::ALL {
        for ids in [Ids::Absent, Ids::Repeated] {
            let fake = FakeProvider::start(story(ids)).await.unwrap();
            let mut registry = ConnectorRegistry::new();
            let connector = Connector::new(fake.connector_config(protocol)).unwrap();
            let name = connector.name().to_owned();
            registry.register_connector(connector);
            let agent = agent_for(&registry, &name);
            let events: Vec<AgentEvent> = tokio::time::timeout(
                std::time::Duration::from_secs(30),
                agent
                    .stream("Verify artifact A42.", RunOptions::default())
                    .collect(),
            )
            .await
            .unwrap();
            let Some(AgentEvent::ResponseComplete(response)) = events.last() else {
                panic!("{protocol:?}/{ids:?}: {:?}", events.last());
            };
            assert_story(protocol, ids, response);
            // The events name the same unique ids the response does.
            let admitted: Vec<&str> = events
                .iter()
                .filter_map(|e| match e {
                    AgentEvent::ToolCallAdmitted { call_id, .. } => Some(call_id.as_str()),
                    _ => None,
                })
                .collect();
            let settled: Vec<&str> = response
                .tool_calls
                .iter()
                .map(|c| c.call.id.as_str())
                .collect();
            assert_eq!(admitted, settled, "{protocol:?}/{ids:?}");
            assert!(fake.requests().iter().all(|r| r.stream));
        }
    }
}

#[tokio::test]
async fn repeated_and_missing_ids_in_one_response_are_made_unique() {
    let model = common::scripted(vec![
        common::calls(&[
            ("dup", "list_artifacts", json!({})),
            ("dup", "read_artifact", json!({"id": "A42"})),
            ("", "read_artifact", json!({"id": "A43"})),
        ]),
        ScriptedTurn::text("A42 is ready."),
    ]);
    let (list, _) = common::counting_tool("list_artifacts", Effect::Read, json!(["A42"]));
    let (read, reads) = common::counting_tool("read_artifact", Effect::Read, json!({"ok": true}));
    let agent = common::agent_on(&model)
        .tool(list)
        .tool(read)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let response = agent.run("Go.", RunOptions::default()).await.unwrap();
    assert_eq!(response.status, RunStatus::Completed);
    assert_eq!(reads.load(Ordering::SeqCst), 2, "both reads ran");
    let ids: Vec<&str> = response
        .tool_calls
        .iter()
        .map(|c| c.call.id.as_str())
        .collect();
    assert_eq!(ids, ["dup", "dup-2", "call-3"]);
    assert_eq!(response.loop_diagnostics.unwrap().counters.skipped_calls, 0);
    // The model got each result under the id of its call.
    let second = &model.requests()[1];
    assert_protocol_whole(&second.messages);
    let results: Vec<&str> = second
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some(r.call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ids);
}

#[test]
fn the_protocol_check_refuses_duplicate_and_orphan_results() {
    use verdict_providers::{ToolCall, ToolResult};
    let call = |id: &str| ToolCall {
        id: id.into(),
        name: "t".into(),
        arguments: json!({}),
        signature: None,
    };
    let result = |id: &str| {
        Message::ToolResult(ToolResult {
            call_id: id.into(),
            name: "t".into(),
            content: "ok".into(),
            is_error: false,
        })
    };
    let assistant = |calls: Vec<ToolCall>| Message::Assistant {
        text: None,
        tool_calls: calls,
    };
    let fails = |messages: Vec<Message>| {
        std::panic::catch_unwind(|| assert_protocol_whole(&messages)).is_err()
    };
    assert!(!fails(vec![
        Message::user("go"),
        assistant(vec![call("a"), call("b")]),
        result("a"),
        result("b"),
    ]));
    // A second result for one call.
    assert!(fails(vec![
        assistant(vec![call("a")]),
        result("a"),
        result("a")
    ]));
    // A result with no call before it.
    assert!(fails(vec![Message::user("go"), result("a")]));
    // A call without its result, and results out of order.
    assert!(fails(vec![assistant(vec![call("a")]), Message::user("x")]));
    assert!(fails(vec![
        assistant(vec![call("a"), call("b")]),
        result("b"),
        result("a"),
    ]));
    // One id for two calls of a response.
    assert!(fails(vec![
        assistant(vec![call("a"), call("a")]),
        result("a"),
        result("a"),
    ]));
}
