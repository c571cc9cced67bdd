//! MCP tools in verdict's loop, under the policy: a read-only tool
//! repeated is admitted as a repeated read, a destructive write repeated
//! in one response runs once, and the feedback story through the
//! reference filesystem server.

use std::sync::Arc;

use serde_json::{Value, json};
use verdict_agent::{Agent, Checkers, CompletionFn, RunOptions, RunStatus, ToolOutcome};
use verdict_mcp::McpToolset;
use verdict_policy::{LoopPolicy, Verdict};
use verdict_providers::Model;
use verdict_providers::fake::{Reply, Script, ScriptedCall, ScriptedModel, ScriptedTurn};

use crate::support;

fn scripted(turns: Vec<ScriptedTurn>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(Script::new(turns)))
}

fn agent(model: &Arc<ScriptedModel>, set: &McpToolset) -> verdict_agent::AgentBuilder {
    let model: Arc<dyn Model> = model.clone();
    let mut builder = Agent::builder()
        .model(model)
        .model_name("scripted")
        .loop_policy(LoopPolicy::default());
    for tool in set.tools() {
        builder = builder.tool(tool);
    }
    builder
}

fn calls(list: &[(&str, &str, Value)]) -> ScriptedTurn {
    ScriptedTurn::reply(Reply {
        tool_calls: list
            .iter()
            .map(|(id, name, args)| ScriptedCall {
                id: Some((*id).to_owned()),
                name: (*name).to_owned(),
                arguments: args.clone(),
            })
            .collect(),
        ..Reply::default()
    })
}

#[tokio::test]
async fn a_read_only_tool_repeated_is_admitted_as_a_repeated_read() {
    let Some(config) = support::everything() else {
        return;
    };
    let set = McpToolset::start(vec![config]).await.unwrap();
    let args = json!({"message": "ping"});
    let model = scripted(vec![
        ScriptedTurn::tool_call("a", "everything__echo", args.clone()),
        ScriptedTurn::tool_call("b", "everything__echo", args),
        ScriptedTurn::text("echoed twice"),
    ]);
    let response = agent(&model, &set)
        .build()
        .unwrap()
        .run("Echo ping.", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(response.status, RunStatus::Completed);
    assert_eq!(response.tool_calls.len(), 2);
    for call in &response.tool_calls {
        assert!(call.receipt.is_some(), "both reads ran: {call:?}");
        assert!(
            matches!(&call.outcome, ToolOutcome::Succeeded { value } if value.to_string().contains("ping")),
            "{:?}",
            call.outcome
        );
    }
}

#[tokio::test]
async fn a_destructive_write_repeated_in_one_response_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let Some(config) = support::filesystem(&root) else {
        return;
    };
    let file = root.join("notes.txt");
    std::fs::write(&file, "a").unwrap();
    let set = McpToolset::start(vec![config]).await.unwrap();
    let edit = json!({
        "path": file.display().to_string(),
        "edits": [{"oldText": "a", "newText": "aa"}],
    });
    let model = scripted(vec![
        calls(&[
            ("e1", "fs__edit_file", edit.clone()),
            ("e2", "fs__edit_file", edit),
        ]),
        ScriptedTurn::text("edited"),
    ]);
    let response = agent(&model, &set)
        .build()
        .unwrap()
        .run("Double the a.", RunOptions::default())
        .await
        .unwrap();
    // Run twice, the edit would have left "aaa".
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "aa");
    assert!(response.tool_calls[0].receipt.is_some());
    assert!(
        matches!(
            &response.tool_calls[1].outcome,
            ToolOutcome::NotStarted { .. }
        ),
        "{:?}",
        response.tool_calls[1].outcome
    );
}

#[tokio::test]
async fn the_feedback_story_through_the_filesystem_server() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let Some(config) = support::filesystem(&root) else {
        return;
    };
    let report = root.join("report.txt");
    let set = McpToolset::start(vec![config]).await.unwrap();
    let path = report.display().to_string();
    let model = scripted(vec![
        ScriptedTurn::text("The report is written."),
        ScriptedTurn::tool_call(
            "w",
            "fs__write_file",
            json!({"path": path, "content": "status: ready\n"}),
        ),
        ScriptedTurn::tool_call("r", "fs__read_text_file", json!({"path": path})),
        ScriptedTurn::text("Verified: the report says ready."),
    ]);
    // The checker reads the same directory the server writes to.
    let seen = report.clone();
    let checkers =
        Checkers::new().with_completion(Arc::new(CompletionFn::new(move |_packet, _ctx| {
            let ready =
                std::fs::read_to_string(&seen).is_ok_and(|text| text.contains("status: ready"));
            Verdict::new(
                ready,
                None,
                Some(
                    "report.txt does not say `status: ready`: write it, then read it back.".into(),
                ),
            )
            .map_err(|e| verdict_policy::CheckerError::Failed(e.to_string()))
        })));
    let response = agent(&model, &set)
        .checkers(checkers)
        .max_iterations(6)
        .build()
        .unwrap()
        .run("Write the report.", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(response.status, RunStatus::Completed);
    assert_eq!(response.output_text, "Verified: the report says ready.");
    assert_eq!(std::fs::read_to_string(&report).unwrap(), "status: ready\n");
    let requests = model.requests();
    assert_eq!(requests.len(), 4, "refused, write, read, confirmed");
    let feedback = format!("{:?}", requests[1].messages.last());
    assert!(feedback.contains("status: ready"), "{feedback}");
    let read = &response.tool_calls[1];
    assert!(
        matches!(&read.outcome, ToolOutcome::Succeeded { value } if value.to_string().contains("status: ready")),
        "{:?}",
        read.outcome
    );
}
