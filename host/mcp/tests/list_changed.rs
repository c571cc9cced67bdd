//! `notifications/tools/list_changed` in the loop: the toolset lists again
//! between turns, the model's next request carries the new definitions, a
//! batch in flight keeps the tools it started with, and a withdrawn tool
//! called later fails saying so.

use std::sync::Arc;

use serde_json::json;
use verdict_agent::{Agent, RunOptions, RunStatus, ToolOutcome};
use verdict_mcp::McpToolset;
use verdict_providers::fake::{Reply, Script, ScriptedCall, ScriptedModel, ScriptedTurn};
use verdict_providers::{Model, ModelRequest};

use crate::faults::python;
use crate::support::faulty;

fn names(request: &ModelRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

async fn run(
    mode: &str,
    turns: Vec<ScriptedTurn>,
) -> (verdict_agent::AgentResponse, Vec<ModelRequest>) {
    let dir = tempfile::tempdir().unwrap();
    let set = McpToolset::start(vec![faulty(mode, &dir.path().join("log"))])
        .await
        .unwrap();
    let model = Arc::new(ScriptedModel::new(Script::new(turns)));
    let dyn_model: Arc<dyn Model> = model.clone();
    let response = Agent::builder()
        .model(dyn_model)
        .model_name("scripted")
        .max_iterations(6)
        .tool_source(Arc::new(set))
        .build()
        .unwrap()
        .run("Use the tools.", RunOptions::default())
        .await
        .unwrap();
    (response, model.requests())
}

#[tokio::test]
async fn the_next_request_offers_the_tool_the_server_added() {
    if !python() {
        return;
    }
    let (response, requests) = run(
        "changing",
        vec![
            ScriptedTurn::tool_call("c1", "fault__wait", json!({})),
            ScriptedTurn::tool_call("c2", "fault__added", json!({})),
            ScriptedTurn::text("done"),
        ],
    )
    .await;
    assert_eq!(response.status, RunStatus::Completed);
    assert_eq!(requests.len(), 3);
    assert_eq!(names(&requests[0]), ["fault__wait"]);
    assert_eq!(names(&requests[1]), ["fault__wait", "fault__added"]);
    assert_eq!(names(&requests[2]), ["fault__wait", "fault__added"]);
    let added = &response.tool_calls[1];
    assert!(
        matches!(&added.outcome, ToolOutcome::Succeeded { value } if value.to_string().contains("call 2")),
        "{:?}",
        added.outcome
    );
}

#[tokio::test]
async fn a_batch_keeps_its_tools_and_a_withdrawn_tool_later_fails_saying_so() {
    if !python() {
        return;
    }
    let both = ScriptedTurn::reply(Reply {
        tool_calls: ["b1", "b2"]
            .into_iter()
            .map(|id| ScriptedCall {
                id: Some(id.to_owned()),
                name: "fault__wait".to_owned(),
                arguments: json!({}),
            })
            .collect(),
        ..Reply::default()
    });
    let (response, requests) = run(
        "swapping",
        vec![
            both,
            ScriptedTurn::tool_call("late", "fault__wait", json!({})),
            ScriptedTurn::text("done"),
        ],
    )
    .await;
    assert_eq!(response.status, RunStatus::Completed);
    assert_eq!(names(&requests[0]), ["fault__wait"]);
    assert_eq!(names(&requests[1]), ["fault__added"]);
    // The list changed during the first call of the batch: its second call
    // still ran on the tool the batch started with.
    for (call, text) in response.tool_calls[..2].iter().zip(["call 1", "call 2"]) {
        assert!(
            matches!(&call.outcome, ToolOutcome::Succeeded { value } if value.to_string().contains(text)),
            "{:?}",
            call.outcome
        );
    }
    let late = &response.tool_calls[2];
    assert!(late.receipt.is_none(), "it never reached the server");
    assert!(
        matches!(&late.outcome, ToolOutcome::Failed { error, .. }
            if error.contains("no longer offered by MCP server fault")),
        "{:?}",
        late.outcome
    );
}
