//! Runs one scripted task twice — without a policy, and with an opted-in
//! policy that never intervenes — and compares the semantic traces: the
//! requests sent to the model, the hook calls and the tool actions. The
//! unconfigured trace must equal the legacy one exactly.
//!
//! Run: `cargo run -p verdict-examples --example loop-equivalence`
#![allow(clippy::unwrap_used, clippy::expect_used)] // an example: fail loudly

use std::sync::{Arc, Mutex};

use serde_json::json;
use verdict::fake::{Reply, Script, ScriptedCall, ScriptedModel, ScriptedTurn};
use verdict::{Agent, BeforeTool, Effect, Hooks, LoopPolicy, Model, RunOptions, Tool, ToolError};

fn script() -> Script {
    Script::new(vec![
        ScriptedTurn::reply(Reply {
            text: Some("Looking up both.".into()),
            tool_calls: vec![
                ScriptedCall {
                    id: Some("r1".into()),
                    name: "lookup".into(),
                    arguments: json!({"q": "alpha"}),
                },
                ScriptedCall {
                    id: Some("r2".into()),
                    name: "lookup".into(),
                    arguments: json!({"q": "beta"}),
                },
            ],
            ..Reply::default()
        }),
        ScriptedTurn::tool_call("w1", "save", json!({"summary": "alpha+beta"})),
        ScriptedTurn::text("Saved the summary."),
    ])
}

async fn trace(policy: Option<LoopPolicy>) -> (Vec<String>, String) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = Arc::new(ScriptedModel::new(script()));
    let (before, after, actions) = (log.clone(), log.clone(), log.clone());
    let hooks = Hooks::default()
        .before_tool(Arc::new(move |call| {
            before
                .lock()
                .unwrap()
                .push(format!("hook before {} {}", call.name, call.arguments));
            BeforeTool::Proceed
        }))
        .after_tool(Arc::new(move |s| {
            after.lock().unwrap().push(format!(
                "hook after {} {:?}",
                s.call.name,
                s.policy_outcome().status
            ));
        }));
    let lookup = Tool::new("lookup", json!({"type": "object"}), move |args, _| {
        actions
            .lock()
            .unwrap()
            .push(format!("action lookup {args}"));
        async move { Ok::<_, ToolError>(json!({"hits": 1})) }
    })
    .unwrap()
    .with_effect(Effect::Read);
    let save = Tool::new("save", json!({"type": "object"}), |_, _| async {
        Ok::<_, ToolError>(json!({"saved": true}))
    })
    .unwrap()
    .with_effect(Effect::Write);
    let dyn_model: Arc<dyn Model> = model.clone();
    let mut builder = Agent::builder()
        .model(dyn_model)
        .model_name("scripted")
        .tool(lookup)
        .tool(save)
        .hooks(hooks);
    if let Some(policy) = policy {
        builder = builder.loop_policy(policy);
    }
    let agent = builder.build().unwrap();
    let response = agent
        .run("Summarize alpha and beta.", RunOptions::default())
        .await
        .unwrap();
    let mut lines = log.lock().unwrap().clone();
    for (n, request) in model.requests().iter().enumerate() {
        lines.push(format!(
            "request {n}: {}",
            serde_json::to_string(request).unwrap()
        ));
    }
    lines.push(format!(
        "status {:?}: {}",
        response.status, response.output_text
    ));
    let diag = response
        .loop_diagnostics
        .map(|d| d.to_json())
        .unwrap_or_else(|| "none".into());
    (lines, diag)
}

#[tokio::main]
async fn main() {
    let (legacy, legacy_diag) = trace(None).await;
    let (managed, managed_diag) = trace(Some(LoopPolicy::default())).await;
    for line in &legacy {
        let shown: String = line.chars().take(110).collect();
        println!("  {shown}");
    }
    println!("legacy diagnostics: {legacy_diag}");
    println!("policy diagnostics: {managed_diag}");
    if legacy == managed {
        println!("equal: {} trace lines match exactly", legacy.len());
    } else {
        for (a, b) in legacy.iter().zip(&managed) {
            if a != b {
                println!("differs:\n  legacy: {a}\n  policy: {b}");
            }
        }
        std::process::exit(1);
    }
}
