//! Per-call overhead of a tool through the loop's `ToolManager` (argument
//! validation, permission, deadline, outcome and receipt): a built-in Rust
//! echo, and server-everything's `echo` over stdio and over streamable
//! HTTP (loopback), each a `verdict_agent::Tool` executed the same way, in
//! one run, printed as a table (p50 and mean per call). Needs
//! `scripts/mcp-dev.sh install`; run with
//! `cargo bench -p verdict-mcp --bench call_overhead` (release profile).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use verdict_agent::{Tool, ToolManager, ToolOutcome};

#[allow(dead_code)] // the bench uses two of the tests' servers
#[path = "../tests/support.rs"]
mod support;
use verdict_mcp::{McpToolset, ServerConfig};
use verdict_policy::CancelHandle;
use verdict_providers::ToolCall;

const WARMUP: usize = 30;
const CALLS: usize = 500;

/// The built-in twin of server-everything's `echo`.
fn builtin_echo() -> Tool {
    Tool::new(
        "builtin__echo",
        json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
        |args, _ctx| async move {
            Ok(json!({"content": [{"type": "text", "text": format!("Echo: {}", args["message"])}]}))
        },
    )
    .unwrap()
}

/// Times `CALLS` executions of `name` through `manager`; prints p50 and mean.
async fn measure(label: &str, manager: &ToolManager, name: &str) {
    let cancel = CancelHandle::new();
    let tool = Arc::clone(manager.get(name).unwrap());
    let call = ToolCall {
        id: "bench".into(),
        name: name.into(),
        arguments: json!({"message": "ping"}),
        signature: None,
    };
    let mut times = Vec::with_capacity(CALLS);
    for i in 0..WARMUP + CALLS {
        let start = Instant::now();
        let settled = manager
            .execute(call.clone(), Some(Arc::clone(&tool)), &cancel)
            .await;
        let took = start.elapsed();
        assert!(
            matches!(&settled.outcome, ToolOutcome::Succeeded { value } if value.to_string().contains("ping")),
            "{:?}",
            settled.outcome
        );
        if i >= WARMUP {
            times.push(took);
        }
    }
    times.sort();
    let mean = times.iter().sum::<Duration>() / u32::try_from(CALLS).unwrap();
    let p50 = times[CALLS / 2];
    println!(
        "| {label:<30} | {CALLS:>5} | {:>10.1} | {:>10.1} |",
        p50.as_secs_f64() * 1e6,
        mean.as_secs_f64() * 1e6
    );
}

async fn manager_of(config: ServerConfig) -> (ToolManager, McpToolset) {
    let set = McpToolset::start(vec![config]).await.unwrap();
    let mut manager = ToolManager::new();
    for tool in set.tools() {
        manager.register(tool).unwrap();
    }
    (manager, set)
}

#[tokio::main]
async fn main() {
    // The same servers the tests start: installed by scripts/mcp-dev.sh.
    let (Some(stdio), Some(http)) = (support::everything(), support::everything_http()) else {
        println!("SKIPPED: server-everything is not installed (scripts/mcp-dev.sh install)");
        return;
    };
    println!("| tool (through ToolManager)     | calls | p50 us     | mean us    |");
    println!("|--------------------------------|-------|------------|------------|");

    let mut builtin = ToolManager::new();
    builtin.register(builtin_echo()).unwrap();
    measure("built-in Rust echo", &builtin, "builtin__echo").await;

    let (manager, set) = manager_of(stdio).await;
    measure("MCP echo over stdio", &manager, "everything__echo").await;
    drop((manager, set));

    let http = http.config();
    let (manager, set) = manager_of(http).await;
    measure(
        "MCP echo over HTTP (loopback)",
        &manager,
        "everything__echo",
    )
    .await;
    drop((manager, set));
}
