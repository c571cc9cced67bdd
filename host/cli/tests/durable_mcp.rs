//! A worker SIGKILLed inside an MCP call: the server's annotations decide
//! what the next worker may send again. The server is ours
//! (`fixtures/mcp_writer.py`) on the official Python SDK, so the `_meta`
//! idempotency key is read by the SDK at the server and logged there.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use serde_json::{Value, json};
use support::restate::{Restate, free_port};
use support::{Fake, Running, Setup, base_config, verified};
use verdict::fake::{Script, ScriptedTurn};

const TOOL: &str = "writer__write_report";

fn story() -> Vec<ScriptedTurn> {
    vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call("write-1", TOOL, json!({"content": "A42 verified"})),
        ScriptedTurn::tool_call("read-1", "read_artifact", json!({"id": "A42"})),
        ScriptedTurn::text("A42 is ready; the report is written."),
    ]
}

struct Crash {
    /// The submit's exit code and stderr, the execution's record, and the
    /// lines of the server's attempts.log and writes.log.
    code: Option<i32>,
    err: String,
    record: Value,
    attempts: Vec<String>,
    writes: Vec<String>,
    requests: usize,
}

/// Submits the story to a worker whose MCP server hangs inside the first
/// `write_report` (after its effect), SIGKILLs the worker there, starts
/// another and waits for the execution's end.
fn crash_inside_the_mcp_call(idempotent: bool) -> Option<Crash> {
    let python = support::mcp::python()?;
    let restate = Restate::start()?;
    let fake = Fake::start(Script::new(story()));
    let setup = Setup::new();
    let workspace = setup.path("workspace");
    let paused = setup.path("paused");
    let server = format!(
        "\n[mcp.writer]\ncommand = {python:?}\nargs = [{script:?}]\nenv = {{ WRITER_DIR = {dir:?}, WRITER_PAUSE = {paused:?}, WRITER_IDEMPOTENT = \"{flag}\" }}\n",
        python = python.to_str().unwrap(),
        script = support::mcp::fixture("mcp_writer.py").to_str().unwrap(),
        dir = workspace.to_str().unwrap(),
        paused = paused.to_str().unwrap(),
        flag = if idempotent { "1" } else { "0" },
    );
    let config =
        base_config(&fake.base_url(), 8) + &verified(2) + &restate.section(free_port()) + &server;
    let path = setup.write("verdict.toml", &config);
    let path = path.to_str().unwrap();
    let cache = setup.path("cache");
    let worker = || Running::spawn(support::command(&["worker", "--config", path], &cache));

    let first = worker();
    support::wait_until("the worker registered", || {
        restate.get(&format!("/services/{}", verdict::durable::SERVICE))
    });
    let submit = Running::spawn(support::command(
        &[
            "submit",
            "--config",
            path,
            "--conversation",
            "conv-m",
            "--execution-id",
            "ex-m",
            "--wait",
            "Verify A42 and write the report.",
        ],
        &cache,
    ));
    support::wait_until("the MCP call to hang after its effect", || paused.exists());
    first.signal("KILL");
    let _ = first.finish();
    let second = worker();
    let output = submit.output();
    let status = support::verdict(
        &["status", "--config", path, "--json", "conv-m/ex-m"],
        &cache,
    );
    let record: Value = serde_json::from_str(&support::stdout(&status)).unwrap();
    second.signal("TERM");
    let (code, _, err) = second.finish();
    assert_eq!(code, Some(0), "{err}");
    Some(Crash {
        code: output.status.code(),
        err: support::stderr(&output),
        record,
        attempts: support::lines_of(&workspace.join("attempts.log")),
        writes: support::lines_of(&workspace.join("writes.log")),
        requests: fake.requests(),
    })
}

/// `destructiveHint: true`: the call's result was never journaled, so it
/// is never sent again; the execution stops with `uncertain_effect`
/// naming it.
#[test]
fn a_destructive_mcp_call_cut_by_a_crash_is_never_sent_again() {
    let Some(crash) = crash_inside_the_mcp_call(false) else {
        return;
    };
    assert_eq!(
        crash.record["diagnostics"]["reason"], "uncertain_effect",
        "{}",
        crash.record
    );
    assert_eq!(crash.record["uncertain"]["tool"], TOOL, "{}", crash.record);
    assert_eq!(crash.record["uncertain"]["sequence"], 1);
    assert!(crash.err.contains("uncertain"), "{}", crash.err);
    assert_ne!(crash.code, Some(0));
    // The server saw the call once, with the call's key.
    let key = crash.record["uncertain"]["idempotency_key"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(crash.attempts, vec![key.clone()]);
    assert_eq!(crash.writes, vec![key]);
    // No turn after the stop: the premature answer and the write's turn.
    assert_eq!(crash.requests, 2);
}

/// `idempotentHint: true`: the next worker sends the call again with the
/// same `_meta` key, the server does its effect once, and the execution
/// completes.
#[test]
fn an_idempotent_mcp_call_cut_by_a_crash_is_resent_with_the_same_key() {
    let Some(crash) = crash_inside_the_mcp_call(true) else {
        return;
    };
    assert_eq!(crash.code, Some(0), "{}", crash.err);
    assert_eq!(
        crash.record["diagnostics"]["reason"], "completed",
        "{}",
        crash.record
    );
    assert!(crash.record["uncertain"].is_null(), "{}", crash.record);
    assert_eq!(crash.attempts.len(), 2, "{:?}", crash.attempts);
    assert_eq!(crash.attempts[0], crash.attempts[1]);
    assert!(
        crash.attempts[0].starts_with("conv-m/ex-m"),
        "{:?}",
        crash.attempts
    );
    assert_eq!(crash.writes, vec![crash.attempts[0].clone()]);
    assert_eq!(crash.requests, 4);
}
