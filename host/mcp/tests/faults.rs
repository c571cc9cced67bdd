//! Faults, from a server of ours that misbehaves on purpose: each is a
//! clear error or bounded behaviour, never a panic or a hang.

use std::time::Duration;

use serde_json::json;
use verdict_mcp::{CallError, McpError, McpServer, McpToolset, ServerConfig};
use verdict_policy::CancelHandle;

use crate::support::faulty;

pub(crate) fn python() -> bool {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("VERDICT_REQUIRE_MCP").as_deref() != Ok("1"),
            "python3 is missing and VERDICT_REQUIRE_MCP=1"
        );
        eprintln!("SKIPPED: python3 is missing");
    }
    ok
}

async fn call(server: &McpServer, deadline: Duration) -> Result<serde_json::Value, CallError> {
    server
        .call("wait", json!({}), None, deadline, &CancelHandle::new())
        .await
}

#[tokio::test]
async fn a_server_that_does_not_start_is_a_clear_error() {
    let missing = ServerConfig::stdio("gone", "/nonexistent/mcp-server", vec![]);
    let error = McpServer::start(missing).await.unwrap_err();
    assert!(matches!(error, McpError::Spawn { .. }), "{error}");
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let error = McpServer::start(faulty("nostart", &dir.path().join("log")))
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, McpError::Initialize { .. }), "{text}");
    assert!(
        text.contains("configuration missing"),
        "stderr is quoted: {text}"
    );
}

#[tokio::test]
async fn a_server_exiting_mid_call_is_gone_with_its_stderr() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = McpServer::start(faulty("exit", &dir.path().join("log")))
        .await
        .unwrap();
    let error = call(&server, Duration::from_secs(20)).await.unwrap_err();
    assert!(matches!(error, CallError::Gone(_)), "{error}");
    assert!(error.to_string().contains("exiting mid-call"), "{error}");
}

#[tokio::test]
async fn a_hung_call_is_cancelled_at_its_deadline_and_the_server_told() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let server = McpServer::start(faulty("hang", &log)).await.unwrap();
    let error = call(&server, Duration::from_millis(300)).await.unwrap_err();
    assert!(matches!(error, CallError::Timeout(_)), "{error}");

    // The loop's own cancellation cancels too.
    let cancel = CancelHandle::new();
    let cancelling = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancelling.cancel();
    });
    let error = server
        .call("wait", json!({}), None, Duration::from_secs(60), &cancel)
        .await
        .unwrap_err();
    assert!(matches!(error, CallError::Cancelled), "{error}");

    // Both requests were cancelled at the server, by their ids.
    let mut cancelled = Vec::new();
    for _ in 0..100 {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let calls: Vec<_> = lines
            .iter()
            .filter(|m| m["method"] == "tools/call")
            .map(|m| m["id"].clone())
            .collect();
        cancelled = lines
            .iter()
            .filter(|m| m["method"] == "notifications/cancelled")
            .map(|m| m["params"]["requestId"].clone())
            .collect();
        if cancelled.len() == 2 {
            assert_eq!(cancelled, calls);
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server saw {cancelled:?} cancelled");
}

#[tokio::test]
async fn a_flood_on_stdout_is_dropped_unread_and_the_call_goes_on() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = McpServer::start(faulty("flood", &dir.path().join("log")))
        .await
        .unwrap();
    // 20 MiB without a newline, then the answer: the line is dropped at
    // 4 MiB (never buffered whole) and the answer still arrives.
    let answer = call(&server, Duration::from_secs(30)).await.unwrap();
    assert!(answer.to_string().contains("after the flood"), "{answer}");
}

#[tokio::test]
async fn a_result_over_the_message_bound_is_a_clear_error() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = McpServer::start(faulty("big", &dir.path().join("log")))
        .await
        .unwrap();
    let error = call(&server, Duration::from_secs(3)).await.unwrap_err();
    assert!(matches!(error, CallError::TooLarge(_)), "{error}");

    // Within a larger message bound, the result is kept cut to the
    // result bound.
    let mut config = faulty("big", &dir.path().join("log2"));
    config.max_message_bytes = 16 << 20;
    config.max_result_bytes = 1 << 20;
    let server = McpServer::start(config).await.unwrap();
    let answer = call(&server, Duration::from_secs(30)).await.unwrap();
    let value = verdict_mcp::result::to_loop_result(&answer, 1 << 20).unwrap();
    let text = value.to_string();
    assert!(text.len() < (1 << 20) + 1024, "{}", text.len());
    assert!(text.len() > 1 << 19, "{}", text.len());
}

#[tokio::test]
async fn invalid_json_rpc_at_initialize_is_a_clear_error() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut config = faulty("garbage", &dir.path().join("log"));
    config.start_timeout = Duration::from_secs(3);
    let error = McpServer::start(config).await.unwrap_err();
    assert!(matches!(error, McpError::Initialize { .. }), "{error}");
}

#[tokio::test]
async fn ten_thousand_tools_are_refused_at_the_bound() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let error = McpToolset::start(vec![faulty("many", &dir.path().join("log"))])
        .await
        .unwrap_err();
    assert!(
        matches!(error, McpError::TooMany { limit: 512, .. }),
        "{error}"
    );
    let mut config = faulty("many", &dir.path().join("log2"));
    config.max_tools = 10_000;
    let set = McpToolset::start(vec![config]).await.unwrap();
    assert_eq!(set.listing().len(), 10_000);
}

#[tokio::test]
async fn a_tool_list_changed_mid_run_leaves_the_listed_tools_working() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = McpServer::start(faulty("changing", &dir.path().join("log")))
        .await
        .unwrap();
    let first = call(&server, Duration::from_secs(20)).await.unwrap();
    assert!(first.to_string().contains("call 1"));
    let second = call(&server, Duration::from_secs(20)).await.unwrap();
    assert!(second.to_string().contains("call 2"));
    let listed = server.list_tools().await.unwrap();
    assert_eq!(listed.len(), 2, "a fresh listing sees the change");
}

#[tokio::test]
async fn two_toolsets_of_one_config_run_their_own_processes() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let a = McpServer::start(faulty("changing", &log)).await.unwrap();
    let b = McpServer::start(faulty("changing", &log)).await.unwrap();
    // Each process counts its own calls: nothing is shared.
    let one = call(&a, Duration::from_secs(20)).await.unwrap();
    let two = call(&a, Duration::from_secs(20)).await.unwrap();
    let other = call(&b, Duration::from_secs(20)).await.unwrap();
    assert!(one.to_string().contains("call 1"));
    assert!(two.to_string().contains("call 2"));
    assert!(other.to_string().contains("call 1"), "{other}");
}

#[tokio::test]
async fn a_dead_server_is_restarted_once_and_a_second_death_is_final() {
    use std::sync::Arc;
    use verdict_providers::fake::{Script, ScriptedModel, ScriptedTurn};
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let set = McpToolset::start(vec![faulty("dies", &dir.path().join("log"))])
        .await
        .unwrap();
    let mut turns: Vec<_> = (0..4)
        .map(|i| ScriptedTurn::tool_call(format!("c{i}"), "fault__wait", json!({})))
        .collect();
    turns.push(ScriptedTurn::text("done"));
    let model: Arc<dyn verdict_providers::Model> = Arc::new(ScriptedModel::new(Script::new(turns)));
    let mut builder = verdict_agent::Agent::builder()
        .model(model)
        .model_name("scripted")
        .max_iterations(8);
    for tool in set.tools() {
        builder = builder.tool(tool);
    }
    let response = builder
        .build()
        .unwrap()
        .run("Wait four times.", verdict_agent::RunOptions::default())
        .await
        .unwrap();
    let outcomes: Vec<String> = response
        .tool_calls
        .iter()
        .map(|c| format!("{:?}", c.outcome))
        .collect();
    assert_eq!(outcomes.len(), 4, "{outcomes:?}");
    assert!(outcomes[0].contains("the server is gone"), "{outcomes:?}");
    assert!(outcomes[0].contains("dying at call 1"), "{outcomes:?}");
    assert!(outcomes[1].contains("total 2"), "restarted: {outcomes:?}");
    assert!(outcomes[2].contains("dying at call 3"), "{outcomes:?}");
    assert!(
        outcomes[3].contains("not restarted a second time"),
        "{outcomes:?}"
    );
}
