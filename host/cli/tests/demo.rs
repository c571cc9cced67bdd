//! `verdict demo` end to end: offline, exits 0 with the verified outcome.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

#[test]
fn demo_rejects_the_premature_answer_then_verifies() {
    let cache = tempfile::tempdir().unwrap();
    let output = support::verdict(&["demo"], cache.path());
    let out = support::stdout(&output);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{out}{}",
        support::stderr(&output)
    );
    // The story, in order.
    let steps = [
        "model: A42 is ready.",
        "verdict: false (not complete) - no successful read_artifact call",
        "[host feedback]",
        "tool call read_artifact (read-1) succeeded",
        "verdict: true (complete) - artifact A42 is ready",
        "outcome: completed (exit 0)",
        "recovery used: 1/2",
        "cleaned up ",
    ];
    support::assert_in_order(&out, &steps);
    // The temporary workspace is gone.
    let cleaned = out
        .lines()
        .last()
        .unwrap()
        .trim_start_matches("cleaned up ");
    assert!(
        !std::path::Path::new(cleaned).exists(),
        "{cleaned} still exists"
    );
}

/// `--mcp`: A42 starts not ready; the model marks it ready through the
/// reference filesystem server (its installed entry point instead of npx)
/// and the wasm verifier confirms from the file the server wrote.
#[test]
fn demo_with_the_mcp_filesystem_server_writes_through_it() {
    let Some(server) = support::mcp::bin("server-filesystem") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let output = support::verdict(
        &["demo", "--mcp-server", "node", server.to_str().unwrap()],
        cache.path(),
    );
    let out = support::stdout(&output);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{out}{}",
        support::stderr(&output)
    );
    let steps = [
        "fs__* from the MCP filesystem server rooted at the workspace",
        "user: Mark artifact A42 ready, then verify it.",
        "verdict: false (not complete) - no successful read_artifact call",
        "tool call fs__write_file (write-1) succeeded",
        "tool call read_artifact (read-1) succeeded",
        "verdict: true (complete) - artifact A42 is ready",
        "outcome: completed (exit 0)",
        "cleaned up ",
    ];
    support::assert_in_order(&out, &steps);
}
