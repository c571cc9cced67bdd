//! The spec's feedback agent, offline and deterministic.
//!
//! A scripted model served by the fake provider over HTTP on loopback
//! (OpenAI Chat Completions wire format) first claims the work is done,
//! then reads the artifact (the first read fails), reads it again,
//! publishes it (a write that leaves a receipt), and finishes. Completion is
//! decided by two sample wasm verifiers: `artifact-ready` and
//! `receipt-required`, both reading the tenant's artifact directory (a
//! temporary directory, removed at the end).
//!
//! Run: `cargo run -p verdict-examples --example feedback-agent`
#![allow(clippy::unwrap_used, clippy::expect_used)] // an example: fail loudly

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt;
use serde_json::json;
use verdict::fake::{FakeProvider, Script, ScriptedTurn};
use verdict::{
    Agent, AgentEvent, CheckContext, CheckFuture, CheckPacket, CheckerError, CompletionChecker,
    Connector, ConnectorRegistry, DirStore, Effect, HostConfig, Limits, LoadedVerifier, LoopPolicy,
    Protocol, RunOptions, RunStatus, Tenant, Tool, ToolError, ToolOutcome, Verdict, VerifierHost,
    WasmChecker, WorkflowStatus,
};

/// `pub const NAME: &str` (absolute `.wasm` path) per sample verifier this
/// example's build script compiled.
#[allow(dead_code)] // `ALL` is not used here
mod guests {
    include!(concat!(env!("OUT_DIR"), "/guests.rs"));
}

/// Loads a verifier component from `path`.
fn load(host: &VerifierHost, path: &str) -> LoadedVerifier {
    host.load_file(path)
        .unwrap_or_else(|e| panic!("{path} loads: {e}"))
}

/// Complete only when every checker says so; the first incomplete verdict
/// (with its feedback) wins.
struct AllOf(Vec<Arc<dyn CompletionChecker>>);

impl CompletionChecker for AllOf {
    fn check<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, Verdict> {
        Box::pin(async move {
            let mut last = None;
            for checker in &self.0 {
                // Each gets the same context: one deadline for them all.
                let verdict = checker.check(packet, ctx).await?;
                if !verdict.complete {
                    return Ok(verdict);
                }
                last = Some(verdict);
            }
            last.ok_or_else(|| CheckerError::Failed("no checkers".into()))
        })
    }

    fn identity(&self) -> String {
        self.0
            .iter()
            .map(|c| c.identity())
            .collect::<Vec<_>>()
            .join("+")
    }
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_owned();
    let tenant = Tenant::new(
        "demo-tenant",
        Limits::default(),
        Arc::new(DirStore::open(&root).unwrap()),
    );
    let host = VerifierHost::new(HostConfig::default()).unwrap();
    let checker = AllOf(vec![
        Arc::new(WasmChecker::new(
            load(&host, guests::ARTIFACT_READY),
            tenant.clone(),
        )),
        Arc::new(WasmChecker::new(
            load(&host, guests::RECEIPT_REQUIRED),
            tenant,
        )),
    ]);

    let script = Script::new(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call("read-1", "read_artifact", json!({"id": "A42"})),
        ScriptedTurn::tool_call("read-2", "read_artifact", json!({"id": "A42"})),
        ScriptedTurn::tool_call("publish-1", "publish", json!({"id": "A42"})),
        ScriptedTurn::text("A42 is verified and published."),
    ]);
    let fake = FakeProvider::start(script).await.unwrap();
    let mut registry = ConnectorRegistry::new();
    registry
        .register_connector(Connector::new(fake.connector_config(Protocol::OpenAiChat)).unwrap());

    let tries = Arc::new(AtomicUsize::new(0));
    let artifacts = root.clone();
    let read = Tool::new(
        "read_artifact",
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"], "additionalProperties": false}),
        move |_, _| {
            let first = tries.fetch_add(1, Ordering::SeqCst) == 0;
            let path = artifacts.join("A42");
            async move {
                if first {
                    return Err(ToolError::new("artifact store temporarily unavailable"));
                }
                // Stands in for the host's authorized artifact pipeline.
                std::fs::write(&path, br#"{"id":"A42","ready":true}"#)
                    .map_err(|e| ToolError::new(e.to_string()))?;
                Ok(json!({"id": "A42", "ready": true}))
            }
        },
    )
    .unwrap()
    .with_effect(Effect::Read);
    let receipts = root.join("receipts");
    let publish = Tool::new(
        "publish",
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        move |_, ctx| {
            let receipts = receipts.clone();
            async move {
                std::fs::create_dir_all(&receipts).map_err(|e| ToolError::new(e.to_string()))?;
                let receipt = json!({"call_id": ctx.call_id, "artifact": "A42"});
                std::fs::write(
                    receipts.join(format!("{}.json", ctx.call_id)),
                    receipt.to_string(),
                )
                .map_err(|e| ToolError::new(e.to_string()))?;
                Ok(json!({"published": "A42"}))
            }
        },
    )
    .unwrap()
    .with_effect(Effect::Write);

    let agent = Agent::builder()
        .connector(&registry, "fake-OpenAiChat")
        .model_name("demo-model")
        .max_iterations(6)
        .tool(read)
        .tool(publish)
        .loop_policy(LoopPolicy {
            max_recovery_attempts: 2,
            ..LoopPolicy::default()
        })
        .completion_checker(Arc::new(checker))
        .build()
        .unwrap();

    println!("user: Verify and publish artifact A42.");
    let mut events = agent.stream("Verify and publish artifact A42.", RunOptions::default());
    let mut line = String::new();
    let mut completed = false;
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::TextDelta(text) => line.push_str(&text),
            AgentEvent::ToolCallAdmitted { call_id, name } => {
                println!("  admit  {name} ({call_id})")
            }
            AgentEvent::ToolCallSettled(settled) => {
                let what = match &settled.outcome {
                    ToolOutcome::Succeeded { .. } => "succeeded".to_owned(),
                    ToolOutcome::Failed { kind, error } => format!("failed ({kind:?}): {error}"),
                    ToolOutcome::NotStarted { message } => format!("not started: {message}"),
                    ToolOutcome::Unknown { error } => format!("unknown: {error}"),
                    other => format!("{other:?}"),
                };
                let receipt = if settled.receipt.is_some() {
                    ", receipt"
                } else {
                    ""
                };
                println!(
                    "  settle {} ({}): {what}{receipt}",
                    settled.call.name, settled.call.id
                );
            }
            AgentEvent::LoopNotice { feedback } => {
                println!("  host feedback -> model:");
                for l in feedback.lines() {
                    println!("    {l}");
                }
            }
            AgentEvent::IterationComplete {
                iteration,
                loop_diagnostics,
            } => {
                if !line.is_empty() {
                    println!("model: {line}");
                    line.clear();
                }
                if let Some(diag) = loop_diagnostics {
                    println!("  turn {iteration}: phase {:?}", diag.phase);
                }
            }
            AgentEvent::ResponseComplete(response) => {
                if !line.is_empty() {
                    println!("model: {line}");
                }
                let diag = response.loop_diagnostics.expect("a managed run");
                completed = response.status == RunStatus::Completed
                    && diag.status == Some(WorkflowStatus::Completed);
                println!(
                    "status: {:?}; workflow: {:?}; reason: {:?}",
                    response.status, diag.status, diag.reason
                );
                println!(
                    "verdict: {:?}",
                    diag.last_verdict.and_then(|v| v.into_parts().reason)
                );
                println!(
                    "recovery attempts: {}/{}",
                    diag.recovery_attempts_used, diag.recovery_attempts_allowed
                );
            }
            AgentEvent::Failed(error) => println!("failed: {error}"),
            _ => {}
        }
    }
    drop(fake);
    dir.close().unwrap();
    println!("cleaned up {}", root.display());
    if !completed {
        eprintln!("error: the story did not end with a completed workflow");
        std::process::exit(1);
    }
}
