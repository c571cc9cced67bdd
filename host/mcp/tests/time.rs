//! `mcp-server-time`, a Python server from PyPI.

use std::time::Duration;

use serde_json::json;
use verdict_mcp::{McpServer, McpToolset};
use verdict_policy::CancelHandle;

use crate::support;

#[tokio::test]
async fn the_python_time_server_lists_and_answers() {
    let Some(config) = support::time() else {
        return;
    };
    let set = McpToolset::start(vec![config.clone()]).await.unwrap();
    let names: Vec<_> = set.listing().into_iter().map(|l| l.tool).collect();
    assert!(names.iter().any(|n| n == "get_current_time"), "{names:?}");
    assert!(names.iter().any(|n| n == "convert_time"), "{names:?}");

    let server = McpServer::start(config).await.unwrap();
    let answer = server
        .call(
            "convert_time",
            json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
            None,
            Duration::from_secs(20),
            &CancelHandle::new(),
        )
        .await
        .unwrap();
    let value = verdict_mcp::result::to_loop_result(&answer, 1 << 20).unwrap();
    assert!(value.to_string().contains("21:00"), "{value}");

    // A bad timezone is the tool's own error (isError), with its message.
    let answer = server
        .call(
            "get_current_time",
            json!({"timezone": "Nowhere/Atlantis"}),
            None,
            Duration::from_secs(20),
            &CancelHandle::new(),
        )
        .await;
    let message = match answer {
        Ok(v) => verdict_mcp::result::to_loop_result(&v, 1 << 20).unwrap_err(),
        Err(e) => e.to_string(),
    };
    assert!(message.contains("Atlantis"), "{message}");
}
