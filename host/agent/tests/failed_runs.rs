//! A failed run reports what settled before the failure: the tool calls
//! that ran (writes included), usage, turns and the loop diagnostics, from
//! `run` and from `stream`'s last event alike.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use common::{agent_on, counting_tool, scripted};
use futures::StreamExt;
use serde_json::json;
use verdict_agent::{AgentError, AgentEvent, RunOptions, SettledRun, ToolOutcome};
use verdict_policy::{Effect, LoopPolicy};
use verdict_providers::Usage;
use verdict_providers::fake::{Fault, Reply, ScriptedCall, ScriptedTurn};

/// A write that runs, then a model error.
fn write_then_error() -> Vec<ScriptedTurn> {
    vec![
        ScriptedTurn::reply(Reply {
            tool_calls: vec![ScriptedCall {
                id: Some("w1".into()),
                name: "send_mail".into(),
                arguments: json!({"to": "ops"}),
            }],
            usage: Usage {
                input_tokens: 40,
                output_tokens: 7,
                ..Usage::default()
            },
            ..Reply::default()
        }),
        ScriptedTurn::fault(Fault::Status {
            status: 400,
            message: "refused".into(),
            retry_after_secs: None,
        }),
    ]
}

fn assert_settled(settled: &SettledRun) {
    assert_eq!(settled.tool_calls.len(), 1);
    let call = &settled.tool_calls[0];
    assert_eq!(call.call.name, "send_mail");
    assert!(matches!(call.outcome, ToolOutcome::Succeeded { .. }));
    assert!(call.receipt.is_some(), "the write ran");
    assert_eq!(settled.usage.input_tokens, 40);
    assert_eq!(settled.usage.output_tokens, 7);
    assert_eq!(settled.iterations, 2);
    let diag = settled
        .loop_diagnostics
        .as_ref()
        .expect("the loop diagnostics");
    assert_eq!(diag.reason, None, "the loop had not decided");
    assert_eq!(diag.counters.observations, 1);
    assert_eq!(diag.execution_id, settled.execution_id);
}

#[tokio::test]
async fn a_model_error_keeps_what_settled() {
    let model = scripted(write_then_error());
    let (mail, sent) = counting_tool("send_mail", Effect::Write, json!("sent"));
    let agent = agent_on(&model)
        .tool(mail)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let error = agent
        .run("Mail ops.", RunOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(error.error, AgentError::Provider(_)), "{error}");
    assert!(
        error.to_string().starts_with("model call failed"),
        "{error}"
    );
    assert_settled(&error.settled.unwrap());
    assert_eq!(sent.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_streamed_failure_keeps_what_settled() {
    let model = scripted(write_then_error());
    let (mail, _) = counting_tool("send_mail", Effect::Write, json!("sent"));
    let agent = agent_on(&model)
        .tool(mail)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let events: Vec<AgentEvent> = agent
        .stream("Mail ops.", RunOptions::default())
        .collect()
        .await;
    let Some(AgentEvent::Failed(error)) = events.last() else {
        panic!("{:?}", events.last());
    };
    assert_settled(error.settled.as_ref().unwrap());
}

#[tokio::test]
async fn a_run_that_never_started_has_nothing_settled() {
    let model = scripted(vec![ScriptedTurn::text("unused")]);
    let agent = agent_on(&model).build().unwrap();
    let bad = LoopPolicy {
        max_recovery_attempts: 5_000,
        ..LoopPolicy::default()
    };
    let error = agent
        .run("Go.", RunOptions::default().with_policy(bad))
        .await
        .unwrap_err();
    assert!(matches!(error.error, AgentError::Policy(_)));
    assert_eq!(error.settled, None);
}
