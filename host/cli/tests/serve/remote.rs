//! The loop with a remote checker: the feedback-agent story completes
//! against a served verifier, and a cancelled run cancels its remote check.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::client::get;
use super::server::{ADMIN, ALPHA, Served, config, spinning_config};
use crate::support::{self, Fake, Running, Setup, base_config};
use serde_json::json;
use std::time::{Duration, Instant};
use verdict::fake::{Script, ScriptedTurn};

const PROMPT: &str = "Verify that artifact A42 is ready.";

fn remote_config(fake: &Fake, served: &Served) -> String {
    base_config(&fake.base_url(), 6)
        + &format!(
            r#"
[loop_policy]
max_recovery_attempts = 2

[tenants.acme]
artifact_root = "workspace"
completion = {{ url = "http://{}/v1/tenants/alpha", token_env = "VERDICT_TEST_ALPHA_TOKEN" }}
"#,
            served.addr
        )
}

#[test]
fn the_feedback_story_completes_with_a_remote_checker() {
    let served = Served::start(&config("", ""));
    let fake = Fake::start(Script::new(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call("read-1", "read_artifact", json!({"id": "A42"})),
        ScriptedTurn::text("I read A42: it is ready."),
    ]));
    let setup = Setup::new();
    let path = setup.write("verdict.toml", &remote_config(&fake, &served));
    let mut command = support::command(
        &["run", "--config", path.to_str().unwrap(), "--json", PROMPT],
        &setup.path("cache"),
    );
    command.env("VERDICT_TEST_ALPHA_TOKEN", ALPHA);
    let (code, out, err) = Running::spawn(command).finish();
    let value: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
    assert_eq!(code, Some(0), "{value} {err}");
    assert_eq!(value["outcome"], "completed");
    assert_eq!(value["verdict"]["complete"], true);
    assert_eq!(value["recovery"], json!({"used": 1, "allowed": 2}));
    // Both checks ran on the server, for alpha.
    let metrics = get(served.addr, "/metrics", Some(ADMIN)).text();
    for status in ["not_complete", "complete"] {
        let series = format!(
            r#"verdict_checks_total{{tenant="alpha",role="completion",status="{status}"}} 1"#
        );
        assert!(metrics.contains(&series), "{series}:\n{metrics}");
    }
}

#[test]
fn a_run_without_the_remote_token_is_a_config_error() {
    let served = Served::start(&config("", ""));
    let fake = Fake::start(Script::new(vec![ScriptedTurn::text("done")]));
    let setup = Setup::new();
    let path = setup.write("verdict.toml", &remote_config(&fake, &served));
    let mut command = support::command(
        &["run", "--config", path.to_str().unwrap(), PROMPT],
        &setup.path("cache"),
    );
    command.env_remove("VERDICT_TEST_ALPHA_TOKEN");
    let (code, _, err) = Running::spawn(command).finish();
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("VERDICT_TEST_ALPHA_TOKEN is not set"), "{err}");
    assert_eq!(fake.requests(), 0);
}

#[test]
fn a_cancelled_run_cancels_its_remote_check() {
    let text = spinning_config(
        "",
        "[tenants.alpha.limits]\ntimeout_ms = 20000\nfuel = 100000000000000",
    );
    let served = Served::start(&text);
    let fake = Fake::start(Script::new(vec![ScriptedTurn::text("Done.")]));
    let setup = Setup::new();
    let path = setup.write("verdict.toml", &remote_config(&fake, &served));
    let mut command = support::command(
        &["run", "--config", path.to_str().unwrap(), "--json", PROMPT],
        &setup.path("cache"),
    );
    command.env("VERDICT_TEST_ALPHA_TOKEN", ALPHA);
    let run = Running::spawn(command);
    let started = Instant::now();
    let in_flight = r#"verdict_checks_in_flight{tenant="alpha"} 1"#;
    while !get(served.addr, "/metrics", Some(ADMIN))
        .text()
        .contains(in_flight)
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the remote check never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    run.signal("INT");
    let (code, out, err) = run.finish();
    assert_eq!(code, Some(6), "{out} {err}");
    let cancelled =
        r#"verdict_checks_total{tenant="alpha",role="completion",status="cancelled"} 1"#;
    let idle = r#"verdict_checks_in_flight{tenant="alpha"} 0"#;
    let stopped = Instant::now();
    loop {
        let m = get(served.addr, "/metrics", Some(ADMIN)).text();
        if m.contains(cancelled) && m.contains(idle) {
            break;
        }
        assert!(stopped.elapsed() < Duration::from_secs(5), "{m}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
