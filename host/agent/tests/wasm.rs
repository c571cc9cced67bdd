//! The loop with wasm verifiers: the sample `artifact-ready` verifier
//! completes the feedback story, and a spinning verifier is a checker
//! error that leaves the agent able to serve the next run.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{agent_on, scripted};
use serde_json::json;
use verdict_agent::{Checkers, RunOptions, RunStatus, Tool, ToolError};
use verdict_policy::{
    CheckerErrorKind, CompletionChecker, Effect, LoopPolicy, StopReason, WorkflowStatus,
};
use verdict_providers::fake::ScriptedTurn;
use verdict_sandbox::{Limits, MemoryStore, Tenant, WasmChecker};
use verdict_test_support::{guests, load};

#[tokio::test]
async fn artifact_ready_verifier_completes_the_feedback_story() {
    let model = scripted(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call("r1", "read_artifact", json!({})),
        ScriptedTurn::tool_call("r2", "read_artifact", json!({})),
        ScriptedTurn::text("Verified: A42 is ready."),
    ]);
    let store = Arc::new(MemoryStore::new());
    let tenant = Tenant::new("tenant-a", Limits::default(), store.clone());
    let checker = Arc::new(WasmChecker::new(load(guests::ARTIFACT_READY), tenant));
    let tries = Arc::new(AtomicUsize::new(0));
    let writer = store.clone();
    // The tool stands in for the host's authorized artifact pipeline: the
    // first read fails, the second finds A42 ready and records it.
    let read = Tool::new("read_artifact", json!({"type": "object"}), move |_, _| {
        let first = tries.fetch_add(1, Ordering::SeqCst) == 0;
        let result = if first {
            Err(ToolError::new("artifact store unavailable"))
        } else {
            writer
                .insert("A42", br#"{"id":"A42","ready":true}"#.to_vec())
                .map(|_| json!({"id": "A42", "ready": true}))
                .map_err(|e| ToolError::new(e.to_string()))
        };
        async move { result }
    })
    .unwrap()
    .with_effect(Effect::Read);
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(checker.clone());
    let agent = agent_on(&model)
        .tool(read)
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();

    let response = agent
        .run("Verify artifact A42.", RunOptions::default())
        .await
        .unwrap();

    assert_eq!(response.status, RunStatus::Completed);
    let diag = response.loop_diagnostics.unwrap();
    assert_eq!(diag.status, Some(WorkflowStatus::Completed));
    assert_eq!(diag.recovery_attempts_used, 2);
    assert_eq!(
        diag.last_verdict.unwrap().reason.as_deref(),
        Some("artifact A42 is ready")
    );
    // The verifier's own feedback reached the model after the premature answer.
    let second = &model.requests()[1];
    assert!(second.messages.iter().any(|m| matches!(
        m,
        verdict_providers::Message::User { text } if text.contains("Read and verify artifact A42 before finishing.")
    )));
    assert_eq!(CompletionChecker::identity(checker.as_ref()).len(), 64);
}

#[tokio::test]
async fn spinning_verifier_is_a_checker_error_and_the_agent_serves_the_next_run() {
    let model = scripted(vec![
        ScriptedTurn::text("done"),
        ScriptedTurn::text("done again"),
    ]);
    // Fuel for far longer than the deadline: the deadline ends the spin.
    let limits = Limits {
        timeout_ms: 50,
        fuel: 1_000_000_000_000,
        ..Limits::default()
    };
    let tenant = Tenant::new("tenant-s", limits, Arc::new(MemoryStore::new()));
    let spin = Arc::new(WasmChecker::new(load(guests::HOSTILE_SPIN), tenant));
    let agent = agent_on(&model)
        .loop_policy(LoopPolicy::default())
        .completion_checker(spin)
        .build()
        .unwrap();

    let response = agent.run("Finish.", RunOptions::default()).await.unwrap();
    assert_eq!(
        response.status,
        RunStatus::Stopped(StopReason::CheckerError)
    );
    assert_eq!(
        response.loop_diagnostics.unwrap().checker_error,
        Some(CheckerErrorKind::Timeout)
    );

    let next = agent
        .run("Finish.", RunOptions::default().without_policy())
        .await
        .unwrap();
    assert_eq!(next.status, RunStatus::Completed);
    assert_eq!(next.output_text, "done again");
}

#[tokio::test]
async fn a_verifier_out_of_fuel_is_out_of_fuel_not_a_timeout() {
    let model = scripted(vec![ScriptedTurn::text("done")]);
    // A deadline far beyond what the fuel lasts: fuel ends the spin.
    let limits = Limits {
        timeout_ms: 60_000,
        fuel: 1_000_000,
        ..Limits::default()
    };
    let tenant = Tenant::new("tenant-s", limits, Arc::new(MemoryStore::new()));
    let spin = Arc::new(WasmChecker::new(load(guests::HOSTILE_SPIN), tenant));
    let agent = agent_on(&model)
        .loop_policy(LoopPolicy::default())
        .completion_checker(spin)
        .build()
        .unwrap();
    let response = agent.run("Finish.", RunOptions::default()).await.unwrap();
    assert_eq!(
        response.status,
        RunStatus::Stopped(StopReason::CheckerError)
    );
    let diag = response.loop_diagnostics.unwrap();
    assert_eq!(diag.checker_error, Some(CheckerErrorKind::OutOfFuel));
    assert!(diag.to_json().contains("\"checker_error\":\"out_of_fuel\""));
}
