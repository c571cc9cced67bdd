//! The MCP conformance suite's client scenarios (`scripts/mcp-conformance.sh`)
//! and the client bug it found: `initialize` offered rmcp's default
//! `2026-07-28`, a version without the `initialize` handshake.

use std::path::Path;
use std::process::Command;

use crate::faults::python;
use crate::support::faulty;

#[tokio::test]
async fn initialize_offers_the_newest_version_with_an_initialize_handshake() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The fixture answers with the version the client offered.
    let server = verdict_mcp::McpServer::start(faulty("hang", &dir.path().join("log")))
        .await
        .unwrap();
    assert_eq!(server.protocol_version().as_deref(), Some("2025-11-25"));
}

#[test]
fn the_conformance_suites_client_scenarios_pass() {
    // The example is built with the tests, next to this binary's directory.
    let exe = std::env::current_exe().unwrap();
    let client = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("examples/conformance_client"))
        .filter(|p| p.exists());
    let Some(client) = client else {
        eprintln!("SKIPPED: the conformance_client example is not built");
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("bash")
        .arg(root.join("scripts/mcp-conformance.sh"))
        .env("CONFORMANCE_CLIENT", &client)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    if !text.contains("conformance score") {
        assert!(
            std::env::var("VERDICT_REQUIRE_MCP").as_deref() != Ok("1"),
            "the conformance suite could not run and VERDICT_REQUIRE_MCP=1"
        );
        eprintln!("SKIPPED: the conformance suite could not be installed (npm?)");
        return;
    }
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("3/3 in-scope client scenarios passed"),
        "{text}"
    );
}
