//! `verdict run` with the reference MCP filesystem server (npm, installed
//! by scripts/mcp-dev.sh): the feedback story through MCP. The model
//! claims done, the wasm verifier refuses, the model writes A42 through
//! the server and reads it back through it, and the verifier, reading the
//! same directory, confirms.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use serde_json::{Value, json};
use support::{Fake, Setup, base_config};
use verdict::fake::{Script, ScriptedTurn};

/// A tenant whose verifier is `artifact-ready` reading `workspace`, and
/// the filesystem server rooted at the same directory.
fn config(fake: &Fake, workspace: &std::path::Path) -> Option<String> {
    let server = support::mcp::bin("server-filesystem")?;
    Some(
        base_config(&fake.base_url(), 8)
            + &format!(
                r#"
[loop_policy]
max_recovery_attempts = 2

[tenants.acme]
artifact_root = "workspace"
completion = "builtin:artifact-ready"

[mcp.fs]
command = "node"
args = [{server:?}, {root:?}]
include = ["write_file", "read_text_file"]
"#,
                server = server.to_str().unwrap(),
                root = workspace.to_str().unwrap(),
            ),
    )
}

#[test]
fn the_feedback_story_runs_through_the_filesystem_server() {
    let setup = Setup::new();
    let workspace = setup.path("workspace").canonicalize().unwrap();
    let a42 = workspace.join("A42");
    std::fs::write(&a42, r#"{"id":"A42","ready":false}"#).unwrap();
    let path = a42.to_str().unwrap();
    let fake = Fake::start(Script::new(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call(
            "write-1",
            "fs__write_file",
            json!({"path": path, "content": r#"{"id":"A42","ready":true}"#}),
        ),
        ScriptedTurn::tool_call("read-1", "fs__read_text_file", json!({"path": path})),
        ScriptedTurn::tool_call("read-2", "read_artifact", json!({"id": "A42"})),
        ScriptedTurn::text("A42 is ready now."),
    ]));
    let Some(config) = config(&fake, &workspace) else {
        return;
    };
    let file = setup.write("verdict.toml", &config);
    let output = support::verdict(
        &[
            "run",
            "--config",
            file.to_str().unwrap(),
            "--json",
            "Mark A42 ready, then verify it.",
        ],
        &setup.path("cache"),
    );
    let out = support::stdout(&output);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{out}{}",
        support::stderr(&output)
    );
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["outcome"], "completed", "{value}");
    assert_eq!(value["recovery"], json!({"used": 1, "allowed": 2}));
    assert_eq!(value["verdict"]["complete"], true);
    // The effects come from the server's annotations: write_file a write
    // (`idempotentHint`, which `verdict mcp list` shows; the run report
    // names the effect only), read_text_file read-only.
    let calls: Vec<(String, String, String)> = value["toolCalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["effect"].as_str().unwrap().to_owned(),
                c["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("fs__write_file", "write", "succeeded"),
        ("fs__read_text_file", "read", "succeeded"),
        ("read_artifact", "read", "succeeded"),
    ];
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect();
    assert_eq!(calls, expected, "{value}");
    assert_eq!(
        std::fs::read_to_string(&a42).unwrap(),
        r#"{"id":"A42","ready":true}"#
    );
    // Refused, write, read through MCP, read, confirmed.
    assert_eq!(fake.requests(), 5);
    assert_eq!(value["checker"]["checks"], 2);
}
