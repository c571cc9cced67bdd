//! `verdict run` end to end against the fake provider on loopback: every
//! stop kind with its exit code and `--json` shape.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use serde_json::{Value, json};
use support::{Fake, Setup, base_config, verified};
use verdict::fake::{Fault, Script, ScriptedTurn};

const PROMPT: &str = "Verify that artifact A42 is ready.";

/// Runs `verdict run --json` and parses its one JSON line.
fn run_json(setup: &Setup, config: &str, extra: &[&str]) -> (Option<i32>, Value, String) {
    let path = setup.write("verdict.toml", config);
    let mut args = vec!["run", "--config", path.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    args.push(PROMPT);
    let output = support::verdict(&args, &setup.path("cache"));
    let out = support::stdout(&output);
    assert_eq!(out.lines().count(), 1, "one JSON line: {out}");
    let value: Value = serde_json::from_str(&out).unwrap();
    (output.status.code(), value, support::stderr(&output))
}

fn story() -> Script {
    Script::new(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call("read-1", "read_artifact", json!({"id": "A42"})),
        ScriptedTurn::text("I read A42: it is ready."),
    ])
}

#[test]
fn completed_after_feedback_exits_0() {
    let fake = Fake::start(story());
    let setup = Setup::new();
    let config = base_config(&fake.base_url(), 6) + &verified(2);
    let (code, value, _) = run_json(&setup, &config, &[]);
    assert_eq!(code, Some(0), "{value}");
    assert_eq!(value["outcome"], "completed");
    assert_eq!(value["exitCode"], 0);
    assert_eq!(value["stopReason"], "completed");
    assert_eq!(value["phase"], "complete");
    assert_eq!(value["workflowStatus"], "completed");
    assert_eq!(value["verdict"]["complete"], true);
    assert_eq!(value["inputNeeded"], Value::Null);
    assert_eq!(value["recovery"], json!({"used": 1, "allowed": 2}));
    assert_eq!(value["output"], "I read A42: it is ready.");
    assert_eq!(value["iterations"], 3);
    assert_eq!(value["tenant"], "acme");
    assert_eq!(
        value["toolCalls"],
        json!([{"id": "read-1", "name": "read_artifact", "effect": "read",
                "outcome": "succeeded", "receipt": true}])
    );
    assert_eq!(value["checker"]["checks"], 2);
    assert!(value["checker"]["fuelUsed"].as_u64().unwrap() > 0);
    assert_eq!(value["loop"]["counters"]["completion_checks"], 2);
    assert_eq!(fake.requests(), 3);
}

#[test]
fn streamed_text_on_stdout_and_notices_on_stderr() {
    let fake = Fake::start(story());
    let setup = Setup::new();
    let path = setup.write(
        "verdict.toml",
        &(base_config(&fake.base_url(), 6) + &verified(2)),
    );
    let output = support::verdict(
        &["run", "--config", path.to_str().unwrap(), PROMPT],
        &setup.path("cache"),
    );
    assert_eq!(output.status.code(), Some(0));
    let (out, err) = (support::stdout(&output), support::stderr(&output));
    assert_eq!(out, "A42 is ready.\nI read A42: it is ready.\n");
    for notice in [
        "[verdict] verdict: false (not complete) - no successful read_artifact call",
        "[verdict] recovering (attempt 1/2)",
        "[verdict] feedback given to the model:",
        "[verdict] tool call read_artifact (read-1) succeeded",
        "[verdict] verdict: true (complete) - artifact A42 is ready",
        "[verdict] outcome: completed (exit 0)",
        "[verdict] phase: complete; reason: completed; recovery used: 1/2",
        "[verdict] checker: 2 checks",
    ] {
        assert!(err.contains(notice), "missing {notice:?} in:\n{err}");
    }
}

#[test]
fn answer_without_a_policy_is_unverified_exit_4() {
    let fake = Fake::start(Script::new(vec![ScriptedTurn::text("A42 is ready.")]));
    let setup = Setup::new();
    let (code, value, err) = run_json(&setup, &base_config(&fake.base_url(), 6), &[]);
    assert_eq!(code, Some(4), "{value}");
    assert_eq!(value["outcome"], "answer_returned");
    assert_eq!(value["stopReason"], "answer_returned");
    assert_eq!(value["loop"], Value::Null);
    assert_eq!(value["verdict"], Value::Null);
    assert_eq!(value["output"], "A42 is ready.");
    assert!(err.contains("no loop_policy configured"), "{err}");
}

#[test]
fn policy_without_a_verifier_is_unverified_exit_4() {
    let fake = Fake::start(Script::new(vec![ScriptedTurn::text("A42 is ready.")]));
    let setup = Setup::new();
    let config = base_config(&fake.base_url(), 6) + "\n[loop_policy]\n";
    let (code, value, _) = run_json(&setup, &config, &[]);
    assert_eq!(code, Some(4), "{value}");
    assert_eq!(value["outcome"], "answer_returned");
    assert_eq!(value["stopReason"], "answer_returned");
    assert_eq!(value["phase"], "complete");
    assert_eq!(value["workflowStatus"], Value::Null);
}

#[test]
fn recovery_exhausted_is_stopped_exit_5() {
    let fake = Fake::start(story());
    let setup = Setup::new();
    let config = base_config(&fake.base_url(), 6) + &verified(0);
    let (code, value, _) = run_json(&setup, &config, &[]);
    assert_eq!(code, Some(5), "{value}");
    assert_eq!(value["outcome"], "stopped");
    assert_eq!(value["stopReason"], "recovery_exhausted");
    assert_eq!(value["verdict"]["complete"], false);
    assert_eq!(value["recovery"], json!({"used": 0, "allowed": 0}));
    assert_eq!(value["phase"], "input-needed");
    assert_eq!(
        value["inputNeeded"],
        json!({"feedback": "Read and verify artifact A42 before finishing."})
    );
    assert_eq!(fake.requests(), 1, "no model call after the stop");
}

#[test]
fn repeated_read_is_stopped_exit_5() {
    let read = |id: &str| ScriptedTurn::tool_call(id, "read_artifact", json!({"id": "A42"}));
    let fake = Fake::start(Script::new(vec![
        read("r1"),
        read("r2"),
        read("r3"),
        ScriptedTurn::text("done"),
    ]));
    let setup = Setup::new();
    let config = base_config(&fake.base_url(), 6) + &verified(2);
    let (code, value, _) = run_json(&setup, &config, &[]);
    assert_eq!(code, Some(5), "{value}");
    assert_eq!(value["outcome"], "stopped");
    assert_eq!(value["stopReason"], "repeated_read");
}

#[test]
fn iteration_bound_is_stopped_exit_5() {
    let fake = Fake::start(story());
    let setup = Setup::new();
    let config = base_config(&fake.base_url(), 2) + &verified(2);
    let (code, value, _) = run_json(&setup, &config, &[]);
    assert_eq!(code, Some(5), "{value}");
    assert_eq!(value["outcome"], "stopped");
    assert_eq!(value["stopReason"], "max_iterations");
    assert_eq!(value["iterations"], 2);
}

#[test]
fn checker_out_of_fuel_stops_with_exit_3() {
    let fake = Fake::start(story());
    let setup = Setup::new();
    let config =
        base_config(&fake.base_url(), 6) + &verified(2) + "[tenants.acme.limits]\nfuel = 10\n";
    let (code, value, _) = run_json(&setup, &config, &[]);
    assert_eq!(code, Some(3), "{value}");
    assert_eq!(value["outcome"], "stopped");
    assert_eq!(value["stopReason"], "checker_error");
    assert_eq!(value["loop"]["checker_error"], "out_of_fuel");
    assert_eq!(value["checker"]["errors"], 1);
}

#[test]
fn model_error_is_a_failed_run_exit_6() {
    let fake = Fake::start(Script::new(vec![ScriptedTurn::fault(Fault::Status {
        status: 401,
        message: "bad key".into(),
        retry_after_secs: None,
    })]));
    let setup = Setup::new();
    let config = base_config(&fake.base_url(), 6) + &verified(2);
    let (code, value, _) = run_json(&setup, &config, &[]);
    assert_eq!(code, Some(6), "{value}");
    assert_eq!(value["outcome"], "error");
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("model call failed"),
        "{value}"
    );
}

#[test]
fn tenant_selection() {
    let fake = Fake::start(Script::new(vec![ScriptedTurn::text("A42 is ready.")]));
    let setup = Setup::new();
    let config = base_config(&fake.base_url(), 6)
        + &verified(0)
        + "\n[tenants.other]\nartifact_root = \"workspace\"\n";
    let path = setup.write("verdict.toml", &config);
    let cache = setup.path("cache");
    let config_arg = path.to_str().unwrap();
    // Two tenants: one must be chosen.
    let output = support::verdict(&["run", "--config", config_arg, PROMPT], &cache);
    assert_eq!(output.status.code(), Some(2));
    assert!(support::stderr(&output).contains("choose one with --tenant"));
    let output = support::verdict(
        &["run", "--config", config_arg, "--tenant", "nobody", PROMPT],
        &cache,
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(support::stderr(&output).contains("no tenant named \"nobody\""));
    assert_eq!(fake.requests(), 0, "nothing ran");
    // `other` has no completion checker: the answer is unverified.
    let (code, value, _) = run_json(&setup, &config, &["--tenant", "other"]);
    assert_eq!(code, Some(4), "{value}");
    assert_eq!(value["tenant"], "other");
}
