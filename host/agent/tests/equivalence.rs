//! Without a policy the loop behaves exactly as it does with a policy that
//! never intervenes: same requests to the model, same hook trace, same
//! stopping behaviour; and the unconfigured run produces no diagnostics.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::{Arc, Mutex};

use common::{agent_on, calls, counting_tool, scripted};
use serde_json::json;
use verdict_agent::{BeforeTool, Hooks, RunOptions, RunStatus};
use verdict_policy::{Effect, LoopPolicy};
use verdict_providers::fake::ScriptedTurn;

fn task() -> Vec<ScriptedTurn> {
    vec![
        calls(&[
            ("r1", "lookup", json!({"q": "a"})),
            ("r2", "lookup", json!({"q": "b"})),
        ]),
        ScriptedTurn::tool_call("w1", "write", json!({"k": 1})),
        ScriptedTurn::text("All done."),
    ]
}

type Trace = Arc<Mutex<Vec<String>>>;

fn traced_hooks(trace: &Trace) -> Hooks {
    let before = trace.clone();
    let after = trace.clone();
    Hooks::default()
        .before_tool(Arc::new(move |call| {
            before
                .lock()
                .unwrap()
                .push(format!("before {} {}", call.id, call.name));
            BeforeTool::Proceed
        }))
        .after_tool(Arc::new(move |settled| {
            after.lock().unwrap().push(format!(
                "after {} {:?}",
                settled.call.id,
                settled.policy_outcome().status
            ));
        }))
}

async fn run(
    policy: Option<LoopPolicy>,
) -> (
    Vec<verdict_providers::ModelRequest>,
    Vec<String>,
    RunStatus,
    String,
) {
    let model = scripted(task());
    let trace: Trace = Arc::default();
    let (lookup, _) = counting_tool("lookup", Effect::Read, json!({"hit": true}));
    let (write, _) = counting_tool("write", Effect::Write, json!({"ok": true}));
    let mut builder = agent_on(&model)
        .instructions("Be brief.")
        .tool(lookup)
        .tool(write)
        .hooks(traced_hooks(&trace));
    if let Some(policy) = policy {
        builder = builder.loop_policy(policy);
    }
    let agent = builder.build().unwrap();
    let response = agent
        .run("Do the task.", RunOptions::default())
        .await
        .unwrap();
    let trace = trace.lock().unwrap().clone();
    (
        model.requests(),
        trace,
        response.status,
        response.output_text,
    )
}

#[tokio::test]
async fn unconfigured_run_equals_a_never_intervening_policy_run() {
    let (legacy_requests, legacy_trace, legacy_status, legacy_text) = run(None).await;
    let (policy_requests, policy_trace, policy_status, policy_text) =
        run(Some(LoopPolicy::default())).await;
    assert_eq!(legacy_requests.len(), 3);
    assert_eq!(legacy_requests, policy_requests);
    assert_eq!(legacy_trace, policy_trace);
    assert_eq!(
        legacy_trace,
        [
            "before r1 lookup",
            "before r2 lookup",
            "after r1 Succeeded",
            "after r2 Succeeded",
            "before w1 write",
            "after w1 Succeeded",
        ]
    );
    assert_eq!(legacy_status, policy_status);
    assert_eq!(legacy_text, policy_text);
}

#[tokio::test]
async fn disabling_the_policy_per_run_clears_the_diagnostics() {
    let model = scripted(vec![
        ScriptedTurn::text("one"),
        ScriptedTurn::text("two"),
        ScriptedTurn::text("three"),
    ]);
    let agent = agent_on(&model)
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    assert_eq!(agent.loop_diagnostics(), None);

    let managed = agent.run("first", RunOptions::default()).await.unwrap();
    let snapshot = agent.loop_diagnostics().unwrap();
    assert_eq!(Some(&snapshot), managed.loop_diagnostics.as_ref());

    let unmanaged = agent
        .run("second", RunOptions::default().without_policy())
        .await
        .unwrap();
    assert_eq!(unmanaged.loop_diagnostics, None);
    assert_eq!(agent.loop_diagnostics(), None);

    // A replaced policy yields a fresh execution again.
    let replaced = agent
        .run(
            "third",
            RunOptions::default().with_policy(LoopPolicy {
                max_recovery_attempts: 0,
                ..LoopPolicy::default()
            }),
        )
        .await
        .unwrap();
    let diag = replaced.loop_diagnostics.unwrap();
    assert_eq!(diag.recovery_attempts_allowed, 0);
    assert_ne!(diag.execution_id, snapshot.execution_id);
}

#[tokio::test]
async fn invalid_policy_is_refused_before_any_model_call() {
    let model = scripted(vec![ScriptedTurn::text("never")]);
    let agent = agent_on(&model).build().unwrap();
    let bad = LoopPolicy {
        repeated_read_limit: 0,
        ..LoopPolicy::default()
    };
    let error = agent
        .run("go", RunOptions::default().with_policy(bad))
        .await
        .unwrap_err();
    assert!(matches!(error.error, verdict_agent::AgentError::Policy(_)));
    assert_eq!(error.settled, None, "nothing started");
    assert!(model.requests().is_empty());
    assert!(agent.conversation().is_empty());
}
