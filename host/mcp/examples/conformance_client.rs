//! The client `scripts/mcp-conformance.sh` runs under the MCP conformance
//! suite (`@modelcontextprotocol/conformance`): it gets the test server's
//! URL as its last argument and the scenario in `MCP_CONFORMANCE_SCENARIO`,
//! starts verdict's [`McpToolset`] on it over streamable HTTP, and calls
//! every listed tool through the loop's `ToolManager`, as the loop would.
#![allow(clippy::print_stdout, clippy::print_stderr, missing_docs)]

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use verdict_agent::{ToolManager, ToolSource};
use verdict_mcp::{McpToolset, ServerConfig};
use verdict_policy::CancelHandle;
use verdict_providers::ToolCall;

/// Arguments for a tool of a scenario (numbers where the schema asks).
fn arguments(schema: &Value) -> Value {
    let mut args = serde_json::Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let value = match prop.get("type").and_then(Value::as_str) {
                Some("number" | "integer") => json!(1),
                Some("boolean") => json!(true),
                Some("string") => json!("conformance"),
                _ => continue,
            };
            args.insert(name.clone(), value);
        }
    }
    Value::Object(args)
}

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args()
        .next_back()
        .filter(|a| a.starts_with("http"))
    else {
        eprintln!("usage: conformance_client <server-url>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("scenario {scenario:?} at {url}");
    let set = match McpToolset::start(vec![ServerConfig::http("conformance", url)]).await {
        Ok(set) => Arc::new(set),
        Err(error) => {
            eprintln!("start: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut manager = ToolManager::new();
    manager.add_source(set.clone());
    let cancel = CancelHandle::new();
    let mut failed = false;
    for (i, tool) in ToolSource::tools(&*set).into_iter().enumerate() {
        let definition = tool.definition();
        let call = ToolCall {
            id: format!("c{i}"),
            name: definition.name,
            arguments: arguments(&definition.parameters),
            signature: None,
        };
        let settled = manager.execute(call, Some(tool), &cancel).await;
        println!("{}: {:?}", settled.call.name, settled.outcome);
        failed |= !matches!(
            settled.outcome,
            verdict_agent::ToolOutcome::Succeeded { .. }
        );
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
