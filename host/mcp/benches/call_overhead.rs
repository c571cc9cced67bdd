//! Per-call overhead of an MCP tool: server-everything's `echo` over stdio
//! and over streamable HTTP (loopback) against a built-in Rust echo, one
//! run, printed as a table. Needs `scripts/mcp-dev.sh install`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use verdict_mcp::{McpServer, ServerConfig};
use verdict_policy::CancelHandle;

const CALLS: u32 = 300;

async fn builtin_echo(args: Value) -> Value {
    json!({"content": [{"type": "text", "text": format!("Echo: {}", args["message"])}]})
}

fn report(name: &str, total: Duration) {
    let per = total / CALLS;
    println!(
        "| {name:<28} | {CALLS:>5} | {:>10.1} |",
        per.as_secs_f64() * 1e6
    );
}

#[tokio::main]
async fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join(
        "target/mcp-tools/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(script.exists(), "run scripts/mcp-dev.sh install first");
    let cancel = CancelHandle::new();
    let deadline = Duration::from_secs(20);
    let args = json!({"message": "ping"});
    println!("| tool                         | calls | us / call  |");
    println!("|------------------------------|-------|------------|");

    let start = Instant::now();
    for _ in 0..CALLS {
        std::hint::black_box(builtin_echo(args.clone()).await);
    }
    report("built-in Rust echo", start.elapsed());

    let stdio = ServerConfig::stdio(
        "everything",
        "node",
        vec![script.display().to_string(), "stdio".into()],
    );
    let server = McpServer::start(stdio).await.unwrap();
    let start = Instant::now();
    for _ in 0..CALLS {
        server
            .call("echo", args.clone(), None, deadline, &cancel)
            .await
            .unwrap();
    }
    report("MCP echo over stdio", start.elapsed());
    drop(server);

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new("node")
        .arg("--require")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loopback.cjs"))
        .arg(&script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let http = ServerConfig::http("everything", format!("http://127.0.0.1:{port}/mcp"));
    let server = McpServer::start(http).await.unwrap();
    let start = Instant::now();
    for _ in 0..CALLS {
        server
            .call("echo", args.clone(), None, deadline, &cancel)
            .await
            .unwrap();
    }
    report("MCP echo over HTTP (loopback)", start.elapsed());
    drop(server);
    let _ = child.kill();
    let _ = child.wait();
}
