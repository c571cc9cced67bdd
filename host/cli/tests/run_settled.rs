//! `verdict run` reports everything that settled, on every outcome: after a
//! model error or a cancellation the `--json` object and the summary still
//! carry the tool calls, iterations, usage and loop diagnostics; and a
//! checker's fuel exhaustion stays `out_of_fuel`, apart from `timeout`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use serde_json::{Value, json};
use support::{Fake, Setup, base_config, verified};
use verdict::Usage;
use verdict::fake::{Fault, Reply, Script, ScriptedCall, ScriptedTurn};

const PROMPT: &str = "Verify that artifact A42 is ready.";

fn run(setup: &Setup, config: &str, json: bool) -> (Option<i32>, String, String) {
    let path = setup.write("verdict.toml", config);
    let mut args = vec!["run", "--config", path.to_str().unwrap()];
    if json {
        args.push("--json");
    }
    args.push(PROMPT);
    let output = support::verdict(&args, &setup.path("cache"));
    (
        output.status.code(),
        support::stdout(&output),
        support::stderr(&output),
    )
}

/// A read that runs, then a model error (401: not retried).
fn read_then_model_error() -> Script {
    Script::new(vec![
        ScriptedTurn::reply(Reply {
            tool_calls: vec![ScriptedCall {
                id: Some("read-1".into()),
                name: "read_artifact".into(),
                arguments: json!({"id": "A42"}),
            }],
            usage: Usage {
                input_tokens: 40,
                output_tokens: 7,
                ..Usage::default()
            },
            ..Reply::default()
        }),
        ScriptedTurn::fault(Fault::Status {
            status: 401,
            message: "bad key".into(),
            retry_after_secs: None,
        }),
    ])
}

#[test]
fn json_after_a_model_error_reports_what_settled() {
    let fake = Fake::start(read_then_model_error());
    let setup = Setup::new();
    let config = base_config(&fake.base_url(), 6) + &verified(2);
    let (code, out, _) = run(&setup, &config, true);
    assert_eq!(code, Some(6), "{out}");
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["outcome"], "error");
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("model call failed"),
        "{value}"
    );
    // The read that already ran is reported, with its receipt.
    assert_eq!(
        value["toolCalls"],
        json!([{"id": "read-1", "name": "read_artifact", "effect": "read",
                "outcome": "succeeded", "receipt": true}])
    );
    assert_eq!(value["iterations"], 2);
    assert_eq!(value["usage"]["input_tokens"], 40);
    assert_eq!(value["usage"]["output_tokens"], 7);
    assert_eq!(value["loop"]["counters"]["admissions"], 1);
    assert_eq!(value["loop"]["counters"]["observations"], 1);
    assert_eq!(value["recovery"], json!({"used": 0, "allowed": 2}));
    // The loop never decided: no stop reason, no phase, no workflow status.
    assert_eq!(value["stopReason"], Value::Null);
    assert_eq!(value["phase"], Value::Null);
    assert_eq!(value["workflowStatus"], Value::Null);
    assert_eq!(fake.requests(), 2);
}

#[test]
fn the_summary_after_a_model_error_reports_what_settled() {
    let fake = Fake::start(read_then_model_error());
    let setup = Setup::new();
    let config = base_config(&fake.base_url(), 6) + &verified(2);
    let (code, _, err) = run(&setup, &config, false);
    assert_eq!(code, Some(6), "{err}");
    for line in [
        "[verdict] outcome: error (exit 6)",
        "[verdict] error: model call failed",
        // The second turn's model call failed: one turn settled.
        "[verdict] settled before the error: 1 model turns, 1 tool calls (1 ran); tokens in 40 / out 7",
    ] {
        assert!(err.contains(line), "missing {line:?} in:\n{err}");
    }
    assert!(!err.contains("phase: running"), "{err}");
}

#[test]
fn out_of_fuel_stays_distinct_from_timeout() {
    let fake = Fake::start(Script::new(vec![ScriptedTurn::text("A42 is ready.")]));
    let setup = Setup::new();
    let config =
        base_config(&fake.base_url(), 6) + &verified(2) + "[tenants.acme.limits]\nfuel = 10\n";
    let (code, out, _) = run(&setup, &config, true);
    assert_eq!(code, Some(3), "{out}");
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["stopReason"], "checker_error");
    assert_eq!(value["checkerError"], "out_of_fuel");
    assert_eq!(value["loop"]["checker_error"], "out_of_fuel");

    let fake = Fake::start(Script::new(vec![ScriptedTurn::text("A42 is ready.")]));
    let config =
        base_config(&fake.base_url(), 6) + &verified(2) + "[tenants.acme.limits]\nfuel = 10\n";
    let (code, _, err) = run(&setup, &config, false);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("[verdict] checker error: out_of_fuel"),
        "{err}"
    );
    assert!(!err.contains("timeout"), "{err}");
}

#[test]
fn a_refused_connection_settles_no_model_turn() {
    // A port on loopback that nobody listens on any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let setup = Setup::new();
    let config = base_config(&format!("http://127.0.0.1:{port}"), 6) + &verified(2);
    let (code, _, err) = run(&setup, &config, false);
    assert_eq!(code, Some(6), "{err}");
    assert!(err.contains("[verdict] error: model call failed"), "{err}");
    assert!(
        err.contains("[verdict] settled before the error: 0 model turns, 0 tool calls (0 ran)"),
        "{err}"
    );
}
