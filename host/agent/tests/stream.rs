//! `Agent::stream` shares `run`'s decision path and yields typed events
//! (with a policy, before-tool hooks that skip a call or modify its
//! arguments run through the same preparation); dropping it ends the
//! execution, releases the lease and keeps settled results.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{
    agent_on, any_object, assert_protocol_whole, calls, completion, counting_tool, scripted,
};
use futures::StreamExt;
use serde_json::json;
use verdict_agent::{
    Agent, AgentError, AgentEvent, BeforeTool, Checkers, Hooks, RunOptions, RunStatus, Tool,
    ToolError, ToolOutcome,
};
use verdict_policy::{Effect, LoopPolicy, Verdict, WorkflowStatus};
use verdict_providers::Message;
use verdict_providers::fake::{ScriptedModel, ScriptedTurn};

fn story_agent() -> (Agent, Arc<ScriptedModel>) {
    let model = scripted(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call("r1", "read_artifact", json!({})),
        ScriptedTurn::tool_call("r2", "read_artifact", json!({})),
        ScriptedTurn::text("Verified: A42 is ready."),
    ]);
    let verified = Arc::new(AtomicBool::new(false));
    let tries = Arc::new(AtomicUsize::new(0));
    let flag = verified.clone();
    let read = Tool::new("read_artifact", any_object(), move |_, _| {
        let first = tries.fetch_add(1, Ordering::SeqCst) == 0;
        let flag = flag.clone();
        async move {
            if first {
                return Err(ToolError::new("artifact store unavailable"));
            }
            flag.store(true, Ordering::SeqCst);
            Ok(json!({"id": "A42", "ready": true}))
        }
    })
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
    let agent = agent_on(&model)
        .tool(read)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    (agent, model)
}

#[tokio::test]
async fn stream_takes_the_same_decisions_as_run_and_yields_typed_events() {
    let (run_agent, run_model) = story_agent();
    let ran = run_agent
        .run("Verify artifact A42.", RunOptions::default())
        .await
        .unwrap();

    let (agent, model) = story_agent();
    let events: Vec<AgentEvent> = tokio::time::timeout(
        Duration::from_secs(10),
        agent
            .stream("Verify artifact A42.", RunOptions::default())
            .collect(),
    )
    .await
    .unwrap();

    // Same requests to the model as `run`.
    assert_eq!(model.requests(), run_model.requests());
    // Provisional text includes the rejected candidate.
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "A42 is ready.Verified: A42 is ready.");
    let notices = events.iter().filter(|e| matches!(e, AgentEvent::LoopNotice { feedback } if feedback.starts_with("[host feedback]"))).count();
    assert_eq!(notices, 2);
    let settled: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallSettled(s) => Some(s.call.id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(settled, ["r1", "r2"]);
    let admitted = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolCallAdmitted { .. }))
        .count();
    assert_eq!(admitted, 2);
    let Some(AgentEvent::ResponseComplete(response)) = events.last() else {
        panic!("last event: {:?}", events.last());
    };
    assert_eq!(response.status, RunStatus::Completed);
    assert_eq!(
        response.loop_diagnostics.as_ref().unwrap().status,
        Some(WorkflowStatus::Completed)
    );
    assert_eq!(response.tool_calls, ran.tool_calls);
    assert_eq!(response.output_text, ran.output_text);
}

#[tokio::test]
async fn dropping_the_stream_ends_the_run_keeps_settled_results_and_frees_the_lease() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("a", "quick", json!({})),
        ScriptedTurn::tool_call("b", "hang", json!({})),
        ScriptedTurn::text("never"),
        ScriptedTurn::text("after"),
    ]);
    let quick = Tool::new("quick", any_object(), |_, _| async {
        Ok::<_, ToolError>(json!({"ok": 1}))
    })
    .unwrap()
    .with_effect(Effect::Read);
    let hang = Tool::new("hang", any_object(), |_, ctx| async move {
        ctx.cancel.cancelled().await;
        Err::<serde_json::Value, _>(ToolError::new("stopped"))
    })
    .unwrap()
    .with_effect(Effect::Read);
    let agent = agent_on(&model).tool(quick).tool(hang).build().unwrap();

    let mut stream = agent.stream("go", RunOptions::default());
    // Read until the hanging call is admitted, then drop the stream.
    loop {
        let event = tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .unwrap()
            .unwrap();
        if matches!(&event, AgentEvent::ToolCallAdmitted { call_id, .. } if call_id == "b") {
            break;
        }
    }
    drop(stream);

    // The lease comes back once the run has wound down.
    let response = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match agent.run("next", RunOptions::default()).await {
                Err(e) if e == AgentError::Busy => {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                other => return other,
            }
        }
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(response.output_text, "never");
    let conversation = agent.conversation();
    assert_protocol_whole(&conversation);
    // Both settled results stayed in the conversation.
    let results: Vec<(&str, bool)> = conversation
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((r.call_id.as_str(), r.is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results, [("a", false), ("b", true)]);
}

#[tokio::test]
async fn an_overlapping_stream_fails_with_busy() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("h", "hang", json!({})),
        ScriptedTurn::text("x"),
    ]);
    let hang = Tool::new("hang", any_object(), |_, ctx| async move {
        ctx.cancel.cancelled().await;
        Ok::<_, ToolError>(json!({}))
    })
    .unwrap()
    .with_effect(Effect::Read);
    let agent = agent_on(&model).tool(hang).build().unwrap();
    let _first = agent.stream("one", RunOptions::default());
    let second: Vec<AgentEvent> = agent.stream("two", RunOptions::default()).collect().await;
    assert_eq!(second, [AgentEvent::Failed(AgentError::Busy.into())]);
}

#[tokio::test]
async fn the_loop_waits_for_a_slow_consumer_and_a_cancel_on_its_first_event_stops_the_next_call() {
    // The consumer takes the first event (the premature answer's text) and,
    // like the CLI on a failed write, cancels the run before taking the next
    // one. The loop may have queued one more event, but it starts no model
    // call until every earlier event was taken: the script's second turn is
    // never asked for. (With an unbounded channel the loop ran ahead into
    // its next calls while the consumer still held the first event.)
    let (agent, model) = story_agent();
    let options = RunOptions::default();
    let cancel = options.cancel.clone();
    let mut events = agent.stream("Verify artifact A42.", options);
    let first = events.next().await.unwrap();
    assert!(matches!(first, AgentEvent::TextDelta(_)), "{first:?}");
    // Slow: the loop has every chance to run ahead while this one waits.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        model.requests().len(),
        1,
        "the loop ran ahead of its consumer"
    );
    cancel.cancel();
    let rest: Vec<AgentEvent> = tokio::time::timeout(Duration::from_secs(10), events.collect())
        .await
        .unwrap();
    match rest.last() {
        Some(AgentEvent::Failed(error)) => assert_eq!(error.error, AgentError::Cancelled),
        other => panic!("the run ends cancelled: {other:?}"),
    }
    assert_eq!(model.requests().len(), 1, "no model call after the cancel");
}

/// An agent under a loop policy whose before-tool hooks skip `rm` of `/`
/// and normalize `post`'s text (trimmed, lower case); `post` records the
/// arguments it ran with, `rm` counts its runs.
fn hooked_agent() -> (Agent, Arc<Mutex<Vec<serde_json::Value>>>, Arc<AtomicUsize>) {
    let model = scripted(vec![
        calls(&[
            ("w1", "post", json!({"text": "Hello"})),
            ("w2", "post", json!({"text": "hello  "})),
            ("x", "rm", json!({"path": "/"})),
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
    let (rm, removals) = counting_tool("rm", Effect::Write, json!({}));
    let hooks = Hooks::default().before_tool(Arc::new(|call| match call.name.as_str() {
        "rm" if call.arguments["path"] == "/" => BeforeTool::Skip {
            message: "refusing to remove /".into(),
        },
        "post" => BeforeTool::Modify {
            arguments: json!({
                "text": call.arguments["text"].as_str().unwrap_or("").trim().to_lowercase()
            }),
        },
        _ => BeforeTool::Proceed,
    }));
    let agent = agent_on(&model)
        .tool(post)
        .tool(rm)
        .hooks(hooks)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    (agent, received, removals)
}

#[tokio::test]
async fn a_policy_stream_runs_before_tool_hooks_that_skip_and_modify() {
    let (agent, received, removals) = hooked_agent();
    let events: Vec<AgentEvent> = tokio::time::timeout(
        Duration::from_secs(10),
        agent
            .stream("Post hello, then clean up.", RunOptions::default())
            .collect(),
    )
    .await
    .unwrap();

    // Modified: the tool ran with the hook's arguments, and the policy
    // fingerprinted those too, so the second post (the same once
    // normalized) was refused as a duplicate write.
    assert_eq!(*received.lock().unwrap(), [json!({"text": "hello"})]);
    // Skipped: `rm` never started and was never admitted.
    assert_eq!(removals.load(Ordering::SeqCst), 0);
    let admitted: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallAdmitted { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(admitted, ["w1"]);
    let settled: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallSettled(s) => Some(s),
            _ => None,
        })
        .collect();
    let ids: Vec<&str> = settled.iter().map(|s| s.call.id.as_str()).collect();
    assert_eq!(ids, ["w1", "w2", "x"]);
    assert_eq!(settled[0].call.arguments, json!({"text": "hello"}));
    assert!(matches!(settled[0].outcome, ToolOutcome::Succeeded { .. }));
    assert_eq!(settled[1].call.arguments, json!({"text": "hello"}));
    assert!(matches!(settled[1].outcome, ToolOutcome::NotStarted { .. }));
    assert_eq!(
        settled[2].outcome,
        ToolOutcome::NotStarted {
            message: "refusing to remove /".into()
        }
    );
    assert!(settled[1].receipt.is_none() && settled[2].receipt.is_none());
    let Some(AgentEvent::ResponseComplete(response)) = events.last() else {
        panic!("last event: {:?}", events.last());
    };
    assert_eq!(response.status, RunStatus::Completed);
    let diag = response.loop_diagnostics.as_ref().unwrap();
    assert_eq!(diag.counters.admissions, 1, "{diag:?}");
    assert_protocol_whole(&agent.conversation());

    // The same preparation as `run`: the same calls, arguments and outcomes.
    let (run_agent, _, _) = hooked_agent();
    let ran = run_agent
        .run("Post hello, then clean up.", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(ran.tool_calls, response.tool_calls);
}
