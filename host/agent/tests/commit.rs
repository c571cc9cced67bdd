//! What a run commits: only settled exchanges. A host message whose model
//! call failed (feedback, repair, formatting, suspension wrap-up) is not
//! left in the conversation, so the next run never sends it as if it were
//! input. And the response's `output_text` is the candidate the checker
//! judged.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::{Arc, Mutex};

use common::{agent_on, any_object, assert_protocol_whole, calls, completion, scripted};
use serde_json::{Value, json};
use verdict_agent::{
    Agent, Checkers, RunOptions, RunStatus, Suspension, Tool, ToolError, ToolReturn,
};
use verdict_policy::{Effect, LoopPolicy, Verdict};
use verdict_providers::Message;
use verdict_providers::fake::{Fault, ScriptedModel, ScriptedTurn};

fn refused() -> ScriptedTurn {
    ScriptedTurn::fault(Fault::Status {
        status: 400,
        message: "refused".into(),
        retry_after_secs: None,
    })
}

fn schema() -> Value {
    json!({"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}})
}

/// The labelled host messages in `messages`.
fn host_messages(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::User { text } if text.starts_with("[host") => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Runs `input` (expecting a failure), then checks that nothing labelled
/// `[host` was committed and that the next run's request carries none.
async fn assert_failed_call_leaves_no_host_message(
    agent: &Agent,
    model: &Arc<ScriptedModel>,
    options: RunOptions,
) {
    let result = agent.run("Go.", options).await;
    assert!(result.is_err(), "{result:?}");
    let conversation = agent.conversation();
    assert_protocol_whole(&conversation);
    assert_eq!(host_messages(&conversation), Vec::<String>::new());
    let next = agent.run("Next.", RunOptions::default()).await;
    assert!(next.is_ok(), "{next:?}");
    let last = model.requests().pop().unwrap();
    assert_eq!(host_messages(&last.messages), Vec::<String>::new());
}

#[tokio::test]
async fn a_failed_feedback_turn_is_not_committed() {
    let model = scripted(vec![
        ScriptedTurn::text("Done."),
        refused(),
        ScriptedTurn::text("Hello."),
    ]);
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(|packet| {
        Ok(Verdict::new(
            packet.output_text == "Hello.",
            None,
            Some("Not yet.".into()),
        )
        .unwrap())
    }));
    let agent = agent_on(&model)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    assert_failed_call_leaves_no_host_message(&agent, &model, RunOptions::default()).await;
}

#[tokio::test]
async fn a_failed_repair_is_not_committed() {
    let model = scripted(vec![
        ScriptedTurn::text("not json"),
        refused(),
        ScriptedTurn::text("Hello."),
    ]);
    let agent = agent_on(&model).build().unwrap();
    let options = RunOptions::default().with_output_schema("artifact", schema());
    assert_failed_call_leaves_no_host_message(&agent, &model, options).await;
}

#[tokio::test]
async fn a_failed_formatting_call_is_not_committed() {
    let model = scripted(vec![
        calls(&[("s1", "submit", json!({}))]),
        refused(),
        ScriptedTurn::text("Hello."),
    ]);
    let submit = Tool::new("submit", any_object(), |_, _| async {
        Ok(json!({"accepted": true}))
    })
    .unwrap()
    .with_effect(Effect::Write)
    .ends_run();
    let agent = agent_on(&model).tool(submit).build().unwrap();
    let options = RunOptions::default().with_output_schema("artifact", schema());
    assert_failed_call_leaves_no_host_message(&agent, &model, options).await;
}

#[tokio::test]
async fn a_failed_wrap_up_is_not_committed() {
    let model = scripted(vec![
        calls(&[("s1", "await_approval", json!({}))]),
        refused(),
        ScriptedTurn::text("Hello."),
    ]);
    let suspend = Tool::new_async("await_approval", any_object(), |_, _| async {
        Ok::<_, ToolError>(ToolReturn::Suspend(Suspension {
            correlation_id: "approval-7".into(),
            reason: None,
        }))
    })
    .unwrap()
    .with_effect(Effect::Read);
    let agent = agent_on(&model).tool(suspend).build().unwrap();
    assert_failed_call_leaves_no_host_message(&agent, &model, RunOptions::default()).await;
    // The checkpoint taken before the wrap-up is kept.
    assert!(agent.checkpoint("approval-7").is_some());
}

#[tokio::test]
async fn output_text_is_the_candidate_the_checker_judged() {
    // A tool-call turn with text, then an empty final answer (retried once,
    // empty again): the checker judges "" and the response says "".
    let model = scripted(vec![
        ScriptedTurn::reply(verdict_providers::fake::Reply {
            text: Some("Let me look.".into()),
            tool_calls: vec![verdict_providers::fake::ScriptedCall {
                id: Some("p1".into()),
                name: "peek".into(),
                arguments: json!({}),
            }],
            ..Default::default()
        }),
        ScriptedTurn::text(""),
        ScriptedTurn::text(""),
    ]);
    let judged = Arc::new(Mutex::new(Vec::new()));
    let log = judged.clone();
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |packet| {
        log.lock().unwrap().push(packet.output_text.clone());
        Ok(Verdict::bare(true))
    }));
    let peek = Tool::new("peek", any_object(), |_, _| async { Ok(json!({})) })
        .unwrap()
        .with_effect(Effect::Read);
    let agent = agent_on(&model)
        .tool(peek)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let run = agent.run("Look.", RunOptions::default()).await.unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(*judged.lock().unwrap(), vec![String::new()]);
    assert_eq!(run.output_text, "", "the response says what was judged");
}
