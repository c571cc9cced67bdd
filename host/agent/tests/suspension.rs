//! Scenario tests of suspension: checkpoint under the correlation id, one
//! tool-free wrap-up counted in the budget, no completion check; `stream`
//! shares the behaviour.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{
    agent_on, any_object, assert_protocol_whole, calls, completion, counting_tool, scripted,
};
use futures::StreamExt;
use serde_json::json;
use verdict_agent::{
    Agent, AgentError, AgentEvent, CallBudget, Checkers, RunOptions, RunStatus, Suspension, Tool,
    ToolError, ToolReturn,
};
use verdict_policy::{Effect, LoopPolicy, Verdict};
use verdict_providers::fake::{ScriptedModel, ScriptedTurn};
use verdict_providers::{Message, ToolChoice};

fn suspending_tool() -> Tool {
    Tool::new_async("await_approval", any_object(), |_, _| async {
        Ok::<_, ToolError>(ToolReturn::Suspend(Suspension {
            correlation_id: "approval-7".into(),
            reason: Some("a human must approve".into()),
        }))
    })
    .unwrap()
    .with_effect(Effect::Read)
}

fn suspending_agent(
    extra: Vec<ScriptedTurn>,
) -> (
    Agent,
    Arc<ScriptedModel>,
    Arc<AtomicUsize>,
    Arc<AtomicUsize>,
) {
    let mut turns = vec![calls(&[
        ("s1", "await_approval", json!({})),
        ("w2", "send_mail", json!({})),
    ])];
    turns.extend(extra);
    let model = scripted(turns);
    let checks = Arc::new(AtomicUsize::new(0));
    let counter = checks.clone();
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(Verdict::bare(true))
    }));
    let (mail, sent) = counting_tool("send_mail", Effect::Write, json!("sent"));
    let agent = agent_on(&model)
        .tool(suspending_tool())
        .tool(mail)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    (agent, model, checks, sent)
}

#[tokio::test]
async fn suspension_checkpoints_and_wraps_up_without_a_check() {
    let (agent, model, checks, sent) =
        suspending_agent(vec![ScriptedTurn::text("Waiting for approval.")]);
    let budget = CallBudget::new(5);
    let run = agent
        .run(
            "Send it.",
            RunOptions::default().with_budget(budget.clone()),
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.output_text, "Waiting for approval.");
    assert_eq!(checks.load(Ordering::SeqCst), 0, "no completion check");
    assert_eq!(budget.used(), 2, "the wrap-up is a counted call");
    // The call after the suspend signal did not run.
    assert_eq!(sent.load(Ordering::SeqCst), 0);
    assert_eq!(
        run.tool_calls[1].to_result().content,
        "Not run: the execution was suspended."
    );
    // The checkpoint, under the correlation id, ends with the tool results.
    let suspension = run.suspension.unwrap();
    assert_eq!(suspension.correlation_id, "approval-7");
    assert_eq!(
        agent.checkpoint("approval-7").unwrap(),
        suspension.checkpoint
    );
    let saved: Vec<Message> = serde_json::from_str(&suspension.checkpoint).unwrap();
    assert!(matches!(saved.last(), Some(Message::ToolResult(r)) if r.call_id == "w2"));
    // The wrap-up request offers no tools.
    let wrap = model.requests().last().unwrap().clone();
    assert!(wrap.tools.is_empty());
    assert_eq!(wrap.tool_choice, ToolChoice::None);
    assert_protocol_whole(&agent.conversation());
}

#[tokio::test]
async fn a_wrap_up_beyond_the_budget_is_refused_but_the_checkpoint_stays() {
    let (agent, _, checks, _) = suspending_agent(vec![ScriptedTurn::text("unreachable")]);
    let result = agent
        .run(
            "Send it.",
            RunOptions::default().with_budget(CallBudget::new(1)),
        )
        .await;
    let error = result.unwrap_err();
    assert_eq!(error, AgentError::BudgetExhausted { max_calls: 1 });
    assert!(agent.checkpoint("approval-7").is_some());
    // The failed run still reports the suspension it settled.
    let settled = error.settled.unwrap();
    assert_eq!(settled.suspension.unwrap().correlation_id, "approval-7");
    assert_eq!(checks.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn stream_suspends_the_same_way() {
    let (agent, model, checks, _) = suspending_agent(vec![ScriptedTurn::text("Waiting.")]);
    let events: Vec<AgentEvent> = tokio::time::timeout(
        Duration::from_secs(10),
        agent.stream("Send it.", RunOptions::default()).collect(),
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
    assert_eq!(response.suspension.unwrap().correlation_id, "approval-7");
    assert_eq!(response.output_text, "Waiting.");
    assert_eq!(checks.load(Ordering::SeqCst), 0);
    assert_eq!(model.requests().len(), 2);
}
