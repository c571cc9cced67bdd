//! What a durable executor builds on: a tool's outcome may be unknown
//! (its effect started and its result was lost), a tool may be layered
//! (the layer decides whether the tool runs), and a tool may declare itself
//! idempotent; in-process, tools get no idempotency key.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::FutureExt;
use serde_json::json;
use verdict_agent::{RunOptions, RunStatus, Tool, ToolError, ToolOutcome, ToolReturn};
use verdict_policy::{Effect, LoopPolicy, StopReason};
use verdict_providers::fake::ScriptedTurn;

use crate::common::{agent_on, any_object, scripted};

#[tokio::test]
async fn a_write_whose_outcome_is_unknown_stops_the_run_with_uncertain_effect() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("w", "deploy", json!({"env": "prod"})),
        ScriptedTurn::text("never"),
    ]);
    let deploy = Tool::new_async("deploy", any_object(), |_, _| async {
        Ok::<_, ToolError>(ToolReturn::Unknown("lost in a crash".to_owned()))
    })
    .unwrap()
    .with_effect(Effect::Write);
    let agent = agent_on(&model)
        .tool(deploy)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let response = agent.run("Deploy.", RunOptions::default()).await.unwrap();
    assert_eq!(
        response.status,
        RunStatus::Stopped(StopReason::UncertainEffect)
    );
    assert!(matches!(
        &response.tool_calls[0].outcome,
        ToolOutcome::Unknown { error } if error == "lost in a crash"
    ));
    // No turn after the stop.
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn a_read_whose_outcome_is_unknown_is_a_failure_to_recover_from() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("r", "look", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let look = Tool::new_async("look", any_object(), |_, _| async {
        Ok::<_, ToolError>(ToolReturn::Unknown("no answer".to_owned()))
    })
    .unwrap()
    .with_effect(Effect::Read);
    let agent = agent_on(&model)
        .tool(look)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let response = agent.run("Look.", RunOptions::default()).await.unwrap();
    assert_eq!(response.status, RunStatus::Completed);
    let diagnostics = response.loop_diagnostics.unwrap();
    assert_eq!(diagnostics.counters.failures, 1);
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn a_layer_sees_each_call_and_decides_whether_the_tool_runs() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("a", "write", json!({"n": 1})),
        ScriptedTurn::tool_call("b", "write", json!({"n": 2})),
        ScriptedTurn::text("done"),
    ]);
    let ran = Arc::new(AtomicUsize::new(0));
    let keys = Arc::new(Mutex::new(Vec::new()));
    let (counter, seen) = (ran.clone(), keys.clone());
    let write = Tool::new("write", any_object(), move |_, ctx| {
        counter.fetch_add(1, Ordering::SeqCst);
        seen.lock().unwrap().push(ctx.idempotency_key);
        async { Ok::<_, ToolError>(json!({"written": true})) }
    })
    .unwrap()
    .with_effect(Effect::Write)
    .idempotent();
    let layered = write.layered(|args, mut ctx, run| {
        async move {
            if args["n"] == 2 {
                // The layer answers for the tool: it does not run.
                return Ok(ToolReturn::Ready(json!({"from": "layer"})));
            }
            ctx.idempotency_key = Some(format!("key-{}", ctx.call_id));
            run.run(args, ctx).await
        }
        .boxed()
    });
    assert_eq!(layered.name(), "write");
    assert_eq!(layered.effect(), Effect::Write);
    assert!(layered.is_idempotent());
    assert_eq!(layered.deadline(), write.deadline());
    let agent = agent_on(&model)
        .tool(layered)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let response = agent.run("Write.", RunOptions::default()).await.unwrap();
    assert_eq!(response.status, RunStatus::Completed);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    let call_id = &response.tool_calls[0].call.id;
    assert_eq!(*keys.lock().unwrap(), vec![Some(format!("key-{call_id}"))]);
    assert!(matches!(
        &response.tool_calls[1].outcome,
        ToolOutcome::Succeeded { value } if value == &json!({"from": "layer"})
    ));
}

#[tokio::test]
async fn in_process_tools_get_no_idempotency_key() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("w", "write", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let keys = Arc::new(Mutex::new(Vec::new()));
    let seen = keys.clone();
    let write = Tool::new("write", any_object(), move |_, ctx| {
        seen.lock().unwrap().push(ctx.idempotency_key);
        async { Ok::<_, ToolError>(json!({})) }
    })
    .unwrap()
    .with_effect(Effect::Write);
    assert!(!write.is_idempotent());
    let agent = agent_on(&model).tool(write).build().unwrap();
    agent.run("Write.", RunOptions::default()).await.unwrap();
    assert_eq!(*keys.lock().unwrap(), vec![None]);
}
