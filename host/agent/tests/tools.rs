//! The tool manager inside the loop: schema validation, hooks, permissions
//! (ask), batch concurrency and order, panics.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{agent_on, any_object, calls, counting_tool, scripted};
use serde_json::json;
use verdict_agent::{
    BeforeTool, Hooks, PermissionPolicy, PermissionRule, RunOptions, RunStatus, Tool, ToolError,
    ToolOutcome,
};
use verdict_policy::{Effect, FailureKind, LoopPolicy, StopReason};
use verdict_providers::fake::ScriptedTurn;

#[tokio::test]
async fn schema_violation_is_an_argument_failure_and_never_runs() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("a", "resize", json!({"width": "wide"})),
        ScriptedTurn::text("gave up"),
    ]);
    let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = runs.clone();
    let schema = json!({
        "type": "object",
        "properties": {"width": {"type": "integer", "minimum": 1}},
        "required": ["width"],
        "additionalProperties": false
    });
    let resize = Tool::new("resize", schema, move |_, _| {
        counter.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, ToolError>(json!({})) }
    })
    .unwrap();
    let agent = agent_on(&model)
        .tool(resize)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let response = agent.run("Resize.", RunOptions::default()).await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let call = &response.tool_calls[0];
    assert!(matches!(
        &call.outcome,
        ToolOutcome::Failed { kind: FailureKind::Arguments, error } if error.contains("invalid arguments")
    ));
    assert_eq!(call.receipt, None);
    assert_eq!(response.loop_diagnostics.unwrap().counters.failures, 1);
    // The model saw the failure as an error result.
    let second = &model.requests()[1];
    assert!(second.messages.iter().any(|m| matches!(
        m,
        verdict_providers::Message::ToolResult(r) if r.call_id == "a" && r.is_error
    )));
}

#[test]
fn an_invalid_schema_is_refused_at_definition() {
    let error = Tool::new("t", json!({"type": 12}), |_, _| async {
        Ok::<_, ToolError>(json!({}))
    })
    .unwrap_err();
    assert!(matches!(
        error,
        verdict_agent::ToolDefinitionError::InvalidSchema { .. }
    ));
    assert!(
        Tool::new("bad name!", any_object(), |_, _| async {
            Ok::<_, ToolError>(json!({}))
        })
        .is_err()
    );
}

#[tokio::test]
async fn modified_arguments_are_what_runs_and_what_the_policy_fingerprints() {
    // Two different raw requests that a hook normalizes to the same write:
    // the policy must see the normalized arguments and refuse the second.
    let model = scripted(vec![
        calls(&[
            ("w1", "post", json!({"text": "Hello"})),
            ("w2", "post", json!({"text": "hello  "})),
        ]),
        ScriptedTurn::text("posted"),
    ]);
    let received = Arc::new(Mutex::new(Vec::new()));
    let sink = received.clone();
    let post = Tool::new("post", any_object(), move |args, _| {
        sink.lock().unwrap().push(args);
        async { Ok::<_, ToolError>(json!({"ok": true})) }
    })
    .unwrap()
    .with_effect(Effect::Write);
    let hooks = Hooks::default().before_tool(Arc::new(|call| {
        let text = call.arguments["text"]
            .as_str()
            .unwrap_or("")
            .trim()
            .to_lowercase();
        BeforeTool::Modify {
            arguments: json!({"text": text}),
        }
    }));
    let agent = agent_on(&model)
        .tool(post)
        .hooks(hooks)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let response = agent
        .run("Post hello.", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(*received.lock().unwrap(), vec![json!({"text": "hello"})]);
    assert_eq!(
        response.tool_calls[0].call.arguments,
        json!({"text": "hello"})
    );
    assert!(matches!(
        response.tool_calls[1].outcome,
        ToolOutcome::NotStarted { .. }
    ));
}

#[tokio::test]
async fn a_hook_skip_never_starts_the_call_and_is_not_admitted() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("x", "rm", json!({"path": "/"})),
        ScriptedTurn::text("ok"),
    ]);
    let (rm, runs) = counting_tool("rm", Effect::Write, json!({}));
    let hooks = Hooks::default().before_tool(Arc::new(|call| {
        if call.arguments["path"] == "/" {
            BeforeTool::Skip {
                message: "refusing to remove /".into(),
            }
        } else {
            BeforeTool::Proceed
        }
    }));
    let agent = agent_on(&model)
        .tool(rm)
        .hooks(hooks)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let response = agent.run("Clean.", RunOptions::default()).await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(
        response.tool_calls[0].outcome,
        ToolOutcome::NotStarted {
            message: "refusing to remove /".into()
        }
    );
    assert_eq!(response.loop_diagnostics.unwrap().counters.admissions, 0);
}

#[tokio::test]
async fn ask_permission_consults_the_host_callback() {
    let model = scripted(vec![
        calls(&[
            ("a", "pay", json!({"amount": 5})),
            ("b", "pay", json!({"amount": 500})),
        ]),
        ScriptedTurn::text("ok"),
    ]);
    let (pay, runs) = counting_tool("pay", Effect::Write, json!({"paid": true}));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let permissions = PermissionPolicy::with_default(PermissionRule::Deny)
        .with_rule("pay", PermissionRule::Ask)
        .with_ask(Arc::new(move |call| {
            log.lock().unwrap().push(call.id.clone());
            let small = call.arguments["amount"].as_i64().unwrap_or(i64::MAX) < 100;
            Box::pin(async move { small })
        }));
    let agent = agent_on(&model)
        .tool(pay)
        .permissions(permissions)
        .build()
        .unwrap();
    let response = agent.run("Pay.", RunOptions::default()).await.unwrap();
    assert_eq!(*asked.lock().unwrap(), ["a", "b"]);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert!(matches!(
        response.tool_calls[0].outcome,
        ToolOutcome::Succeeded { .. }
    ));
    assert!(matches!(
        response.tool_calls[1].outcome,
        ToolOutcome::Failed {
            kind: FailureKind::Permission,
            ..
        }
    ));
}

#[tokio::test]
async fn reads_in_one_response_run_concurrently_and_return_in_call_order() {
    // Each read waits for the other at a barrier: they finish only if they
    // run at the same time. The second finishes first, yet results come
    // back in call order.
    let model = scripted(vec![
        calls(&[
            ("r1", "probe", json!({"n": 1})),
            ("r2", "probe", json!({"n": 2})),
        ]),
        ScriptedTurn::text("done"),
    ]);
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let probe = Tool::new("probe", any_object(), move |args, _| {
        let barrier = barrier.clone();
        async move {
            barrier.wait().await;
            if args["n"] == 1 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok::<_, ToolError>(json!({"n": args["n"]}))
        }
    })
    .unwrap()
    .with_effect(Effect::Read)
    .with_deadline(Duration::from_secs(5));
    let agent = agent_on(&model).tool(probe).build().unwrap();
    let response = agent.run("Probe.", RunOptions::default()).await.unwrap();
    let ids: Vec<&str> = response
        .tool_calls
        .iter()
        .map(|c| c.call.id.as_str())
        .collect();
    assert_eq!(ids, ["r1", "r2"]);
    for (call, n) in response.tool_calls.iter().zip([1, 2]) {
        assert_eq!(
            call.outcome,
            ToolOutcome::Succeeded {
                value: json!({"n": n})
            }
        );
    }
}

#[tokio::test]
async fn writes_in_one_response_run_one_at_a_time_in_order() {
    let model = scripted(vec![
        calls(&[
            ("w1", "append", json!({"v": 1})),
            ("w2", "append", json!({"v": 2})),
            ("w3", "append", json!({"v": 3})),
        ]),
        ScriptedTurn::text("done"),
    ]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let active = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (sink, busy) = (log.clone(), active.clone());
    let append = Tool::new("append", any_object(), move |args, _| {
        let (sink, busy) = (sink.clone(), busy.clone());
        async move {
            let overlapping = busy.fetch_add(1, Ordering::SeqCst) > 0;
            tokio::time::sleep(Duration::from_millis(5)).await;
            sink.lock().unwrap().push((args["v"].clone(), overlapping));
            busy.fetch_sub(1, Ordering::SeqCst);
            Ok::<_, ToolError>(json!({}))
        }
    })
    .unwrap()
    .with_effect(Effect::Write);
    let agent = agent_on(&model).tool(append).build().unwrap();
    agent.run("Append.", RunOptions::default()).await.unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [(json!(1), false), (json!(2), false), (json!(3), false)]
    );
}

#[tokio::test]
async fn a_panicking_write_has_an_unknown_outcome_and_stops_uncertain() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("w", "flaky", json!({})),
        ScriptedTurn::text("never"),
    ]);
    let flaky = Tool::new("flaky", any_object(), |_, _| async {
        if std::hint::black_box(true) {
            panic!("tool bug");
        }
        Ok::<_, ToolError>(json!({}))
    })
    .unwrap()
    .with_effect(Effect::Write);
    let agent = agent_on(&model)
        .tool(flaky)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let response = agent.run("Go.", RunOptions::default()).await.unwrap();
    assert!(matches!(
        response.tool_calls[0].outcome,
        ToolOutcome::Unknown { .. }
    ));
    assert!(response.tool_calls[0].receipt.is_some());
    assert_eq!(
        response.status,
        RunStatus::Stopped(StopReason::UncertainEffect)
    );
}

#[tokio::test]
async fn an_unknown_tool_is_an_argument_failure() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("u", "nope", json!({})),
        ScriptedTurn::text("ok"),
    ]);
    let agent = agent_on(&model)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let response = agent.run("Go.", RunOptions::default()).await.unwrap();
    assert!(matches!(
        response.tool_calls[0].outcome,
        ToolOutcome::Failed {
            kind: FailureKind::Arguments,
            ..
        }
    ));
    assert_eq!(response.tool_calls[0].effect, Effect::Unknown);
    assert_eq!(response.status, RunStatus::Completed);
}
