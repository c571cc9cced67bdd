//! Scenario tests of structured output: one counted repair of an invalid
//! final answer in `run` (not `stream`), seen by the completion checker.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{agent_on, completion, scripted, user_texts};
use futures::StreamExt;
use serde_json::{Value, json};
use verdict_agent::{AgentError, AgentEvent, CallBudget, Checkers, RunOptions, RunStatus};
use verdict_policy::{LoopPolicy, Verdict};
use verdict_providers::ToolChoice;
use verdict_providers::fake::ScriptedTurn;

fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["id"],
        "properties": {"id": {"type": "string"}},
        "additionalProperties": false
    })
}

#[tokio::test]
async fn the_checker_sees_the_repaired_candidate() {
    let model = scripted(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::text(r#"{"id":"A42"}"#),
    ]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |packet| {
        log.lock().unwrap().push(packet.output_text.clone());
        Ok(Verdict::bare(true))
    }));
    let agent = agent_on(&model)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let budget = CallBudget::new(5);
    let run = agent
        .run(
            "Which artifact?",
            RunOptions::default()
                .with_budget(budget.clone())
                .with_output_schema("artifact", schema()),
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(*seen.lock().unwrap(), vec![r#"{"id":"A42"}"#.to_owned()]);
    assert_eq!(budget.used(), 2, "the repair is a counted call");
    assert_eq!(run.structured_output, Some(json!({"id": "A42"})));
    let requests = model.requests();
    assert!(requests.iter().all(|r| r.output_schema.is_some()));
    let repair = &requests[1];
    assert!(repair.tools.is_empty());
    assert_eq!(repair.tool_choice, ToolChoice::None);
    assert!(
        user_texts(repair)
            .last()
            .unwrap()
            .starts_with("[host repair]")
    );
}

#[tokio::test]
async fn a_valid_answer_is_not_repaired() {
    let model = scripted(vec![ScriptedTurn::text(r#"{"id":"A1"}"#)]);
    let agent = agent_on(&model).build().unwrap();
    let run = agent
        .run(
            "Go.",
            RunOptions::default().with_output_schema("artifact", schema()),
        )
        .await
        .unwrap();
    assert_eq!(model.requests().len(), 1);
    assert_eq!(run.structured_output, Some(json!({"id": "A1"})));
}

#[tokio::test]
async fn only_one_repair_per_candidate() {
    let model = scripted(vec![
        ScriptedTurn::text("nope"),
        ScriptedTurn::text("still nope"),
    ]);
    let agent = agent_on(&model).build().unwrap();
    let run = agent
        .run(
            "Go.",
            RunOptions::default().with_output_schema("artifact", schema()),
        )
        .await
        .unwrap();
    assert_eq!(model.requests().len(), 2);
    assert_eq!(run.output_text, "still nope");
    assert_eq!(run.structured_output, None);
}

#[tokio::test]
async fn stream_does_not_repair() {
    let model = scripted(vec![
        ScriptedTurn::text("nope"),
        ScriptedTurn::text(r#"{"id":"A1"}"#),
    ]);
    let agent = agent_on(&model).build().unwrap();
    let events: Vec<AgentEvent> = tokio::time::timeout(
        Duration::from_secs(10),
        agent
            .stream(
                "Go.",
                RunOptions::default().with_output_schema("artifact", schema()),
            )
            .collect(),
    )
    .await
    .unwrap();
    let response = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ResponseComplete(r) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(model.requests().len(), 1);
    assert_eq!(response.structured_output, None);
}

#[tokio::test]
async fn an_invalid_schema_is_refused_before_any_call() {
    let model = scripted(vec![ScriptedTurn::text("{}")]);
    let agent = agent_on(&model).build().unwrap();
    let result = agent
        .run(
            "Go.",
            RunOptions::default().with_output_schema("bad", json!({"type": 12})),
        )
        .await;
    assert!(matches!(
        result.map_err(verdict_agent::RunError::into_error),
        Err(AgentError::OutputSchema(_))
    ));
    assert!(model.requests().is_empty());
}

fn submit_tool() -> verdict_agent::Tool {
    verdict_agent::Tool::new("submit", common::any_object(), |_, _| async {
        Ok::<_, verdict_agent::ToolError>(json!({"accepted": true}))
    })
    .unwrap()
    .with_effect(verdict_policy::Effect::Write)
    .ends_run()
}

#[tokio::test]
async fn formatting_after_a_tool_induced_stop_appends_a_separate_answer() {
    use verdict_providers::Message;
    let model = scripted(vec![
        common::calls(&[
            ("f1", "submit", json!({"id": "A42", "note": "x"})),
            ("f2", "submit", json!({"id": "B7"})),
        ]),
        ScriptedTurn::text(r#"{"id":"A42"}"#),
    ]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |packet| {
        log.lock().unwrap().push(packet.output_text.clone());
        Ok(Verdict::bare(true))
    }));
    let agent = agent_on(&model)
        .tool(submit_tool())
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let budget = CallBudget::new(5);
    let run = agent
        .run(
            "Submit.",
            RunOptions::default()
                .with_budget(budget.clone())
                .with_output_schema("artifact", schema()),
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.structured_output, Some(json!({"id": "A42"})));
    assert_eq!(budget.used(), 2, "the formatting call is counted");
    assert_eq!(*seen.lock().unwrap(), vec![r#"{"id":"A42"}"#.to_owned()]);
    // The exact call, arguments and results stay; the answer is separate.
    let conversation = agent.conversation();
    match &conversation[1] {
        Message::Assistant { tool_calls, .. } => {
            assert_eq!(tool_calls[0].arguments, json!({"id": "A42", "note": "x"}));
        }
        other => panic!("expected the tool-call turn, got {other:?}"),
    }
    match (&conversation[2], &conversation[3]) {
        (Message::ToolResult(first), Message::ToolResult(second)) => {
            assert_eq!(first.content, r#"{"accepted":true}"#);
            assert_eq!(second.content, "Not run: a tool ended the run.");
        }
        other => panic!("expected the results, got {other:?}"),
    }
    assert!(
        matches!(&conversation[4], Message::User { text } if text.starts_with("[host format]"))
    );
    assert!(matches!(
        conversation.last(),
        Some(Message::Assistant { text: Some(t), tool_calls }) if t == r#"{"id":"A42"}"# && tool_calls.is_empty()
    ));
    assert!(model.requests()[1].tools.is_empty());
}

#[tokio::test]
async fn a_tool_induced_stop_without_a_schema_makes_no_extra_call() {
    let model = scripted(vec![common::calls(&[("f1", "submit", json!({}))])]);
    let agent = agent_on(&model).tool(submit_tool()).build().unwrap();
    let run = agent.run("Submit.", RunOptions::default()).await.unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.output_text, r#"{"accepted":true}"#);
    assert_eq!(model.requests().len(), 1);
}
