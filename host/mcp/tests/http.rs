//! Streamable HTTP: the real server-everything in its HTTP mode on
//! loopback (tools, annotations, calls, the message bound), and the
//! headers and bearer token a server is sent.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use verdict_mcp::{CallError, EffectSource, McpError, McpServer, McpToolset, ServerConfig};
use verdict_policy::{CancelHandle, Effect};

use crate::support;

#[tokio::test]
async fn server_everything_over_http_lists_calls_and_decides_effects_as_over_stdio() {
    let Some(http) = support::everything_http() else {
        return;
    };
    let Some(stdio) = support::everything() else {
        return;
    };
    let over_http = McpToolset::start(vec![http.config()]).await.unwrap();
    let over_stdio = McpToolset::start(vec![stdio]).await.unwrap();
    let effects = |set: &McpToolset| {
        let mut rows: Vec<_> = set
            .listing()
            .iter()
            .map(|l| (l.loop_name.clone(), l.effect))
            .collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows
    };
    let rows = effects(&over_http);
    assert!(rows.len() > 5, "{rows:?}");
    assert_eq!(
        rows,
        effects(&over_stdio),
        "the same tools, the same effects"
    );
    let echo = rows.iter().find(|r| r.0 == "everything__echo").unwrap().1;
    assert_eq!(
        (echo.effect, echo.source),
        (Effect::Read, EffectSource::Annotation)
    );

    let server = McpServer::start(http.config()).await.unwrap();
    let answer = server
        .call(
            "echo",
            json!({"message": "over http"}),
            None,
            Duration::from_secs(20),
            &CancelHandle::new(),
        )
        .await
        .unwrap();
    let value = verdict_mcp::result::to_loop_result(&answer, 1 << 20).unwrap();
    assert!(value.to_string().contains("over http"), "{value}");
}

#[tokio::test]
async fn an_http_answer_over_the_message_bound_is_a_clear_error() {
    let Some(http) = support::everything_http() else {
        return;
    };
    let mut config = http.config();
    config.max_message_bytes = 256 * 1024;
    let server = McpServer::start(config).await.unwrap();
    let error = server
        .call(
            "echo",
            json!({"message": "z".repeat(512 * 1024)}),
            None,
            Duration::from_secs(20),
            &CancelHandle::new(),
        )
        .await
        .unwrap_err();
    // A JSON body over the bound is `TooLarge`; an SSE event over it ends
    // rmcp's session (server-everything answers in SSE), so it is `Gone`.
    // Either way the answer was never taken in.
    assert!(
        matches!(error, CallError::TooLarge(_) | CallError::Gone(_)),
        "{error}"
    );
}

/// One HTTP request's head from a loopback listener answering 401.
async fn capture_one(listener: tokio::net::TcpListener) -> String {
    let (mut socket, _) = listener.accept().await.unwrap();
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = socket.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let _ = socket
        .write_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        .await;
    String::from_utf8_lossy(&head).to_lowercase()
}

#[tokio::test]
async fn headers_and_the_bearer_token_are_sent_and_a_missing_token_is_named() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let captured = tokio::spawn(capture_one(listener));
    let mut config = ServerConfig::http("web", url.clone());
    config.start_timeout = Duration::from_secs(10);
    let endpoint = config.http.as_mut().unwrap();
    endpoint.headers.insert("X-Tenant".into(), "acme".into());
    // The token comes from a variable (setting one is unsafe in edition
    // 2024, so one the test process has: PATH).
    endpoint.token_env = Some("PATH".into());
    let error = McpServer::start(config.clone()).await.unwrap_err();
    assert!(matches!(error, McpError::Initialize { .. }), "{error}");
    let head = tokio::time::timeout(Duration::from_secs(10), captured)
        .await
        .unwrap()
        .unwrap();
    let path = std::env::var("PATH").unwrap().to_lowercase();
    assert!(head.contains("x-tenant: acme"), "{head}");
    assert!(
        head.contains(&format!("authorization: bearer {path}")),
        "{head}"
    );

    let endpoint = config.http.as_mut().unwrap();
    endpoint.token_env = Some("VERDICT_MCP_NO_SUCH_TOKEN_VAR".into());
    let error = McpServer::start(config).await.unwrap_err();
    assert!(matches!(error, McpError::Config { .. }), "{error}");
    assert!(
        error.to_string().contains("VERDICT_MCP_NO_SUCH_TOKEN_VAR"),
        "{error}"
    );
}

#[tokio::test]
async fn nothing_listening_at_the_url_is_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = ServerConfig::http("web", format!("http://127.0.0.1:{port}/mcp"));
    config.start_timeout = Duration::from_secs(10);
    let error = McpServer::start(config).await.unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, McpError::Initialize { .. }), "{text}");
    assert!(text.contains("MCP server web"), "{text}");
    let bad = McpServer::start(ServerConfig::http("web", "ftp://x/"))
        .await
        .unwrap_err();
    assert!(matches!(bad, McpError::Config { .. }), "{bad}");
}
