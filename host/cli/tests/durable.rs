//! `verdict worker`, `submit` and `status` against a real Restate server
//! on 127.0.0.1 and the fake provider: the feedback-agent story with a
//! write, verified by the built-in artifact-ready verifier.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use serde_json::{Value, json};
use support::restate::{Restate, free_port};
use support::{Fake, Running, Setup, base_config, verified};
use verdict::fake::{Script, ScriptedTurn};

fn story() -> Vec<ScriptedTurn> {
    vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call(
            "write-1",
            "write_artifact",
            json!({"id": "report", "content": "A42 verified"}),
        ),
        ScriptedTurn::tool_call("read-1", "read_artifact", json!({"id": "A42"})),
        ScriptedTurn::text("A42 is ready; the report is written."),
    ]
}

#[test]
fn a_worker_runs_submitted_executions_and_status_reads_their_records() {
    let Some(restate) = Restate::start() else {
        return;
    };
    let mut turns = story();
    // A second execution of the same conversation: one read, the answer.
    turns.push(ScriptedTurn::tool_call(
        "read-2",
        "read_artifact",
        json!({"id": "A42"}),
    ));
    turns.push(ScriptedTurn::text("Still ready."));
    let fake = Fake::start(Script::new(turns));
    let setup = Setup::new();
    let config = base_config(&fake.base_url(), 6) + &verified(2) + &restate.section(free_port());
    let path = setup.write("verdict.toml", &config);
    let path = path.to_str().unwrap();
    let cache = setup.path("cache");

    let worker = Running::spawn(support::command(&["worker", "--config", path], &cache));
    // The worker's stderr is only readable at its end: the admin API says
    // when the service is registered.
    support::wait_until("the worker registered", || {
        restate.get(&format!("/services/{}", verdict::durable::SERVICE))
    });

    let submit = |prompt: &str| {
        support::verdict(
            &[
                "submit",
                "--config",
                path,
                "--conversation",
                "conv-1",
                "--wait",
                prompt,
            ],
            &cache,
        )
    };
    let first = submit("Verify A42 and write the report.");
    let (out, err) = (support::stdout(&first), support::stderr(&first));
    assert_eq!(first.status.code(), Some(0), "{out}\n{err}");
    let id = out.trim().to_owned();
    assert!(id.starts_with("conv-1/ex-"), "{out}");
    for line in [
        "[verdict] recovering (attempt 1/2)",
        "[verdict] phase: complete",
        "[verdict] stop reason: completed",
        "[verdict] recovery used: 1/2",
        "[verdict] verdict: complete - artifact A42 is ready",
        "[verdict] journaled: 4 model calls, 2 tool calls, 2 checks",
    ] {
        assert!(err.contains(line), "{line} in:\n{err}");
    }
    assert_eq!(
        std::fs::read_to_string(setup.path("workspace/report")).unwrap(),
        "A42 verified"
    );

    // The next execution runs on the conversation so far.
    let second = submit("Is A42 still ready?");
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        support::stderr(&second)
    );
    assert_eq!(fake.requests(), 6);

    let status = support::verdict(&["status", "--config", path, &id], &cache);
    assert_eq!(status.status.code(), Some(0));
    let out = support::stdout(&status);
    assert!(
        out.starts_with(&format!(
            "execution: {id}\nstate: finished\ntenant: acme\nphase: complete\n"
        )),
        "{out}"
    );
    let status = support::verdict(&["status", "--config", path, "--json", &id], &cache);
    let record: Value = serde_json::from_str(&support::stdout(&status)).unwrap();
    assert_eq!(record["diagnostics"]["reason"], "completed");
    assert_eq!(record["diagnostics"]["recovery_attempts_used"], 1);
    assert_eq!(record["model_calls"], 4);

    let unknown = support::verdict(&["status", "--config", path, "conv-1/ex-none"], &cache);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(support::stderr(&unknown).contains("no execution conv-1/ex-none"));

    worker.signal("TERM");
    let (code, _, err) = worker.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("[verdict] registered http://127.0.0.1:"),
        "{err}"
    );
}

#[test]
fn a_worker_serves_every_tenant_and_a_conversation_stays_with_its_own() {
    let Some(restate) = Restate::start() else {
        return;
    };
    let fake = Fake::start(Script::new(story()));
    let setup = Setup::new();
    std::fs::create_dir(setup.path("globex")).unwrap();
    let config = base_config(&fake.base_url(), 6)
        + &verified(2)
        + "\n[tenants.globex]\nartifact_root = \"globex\"\ncompletion = \"builtin:artifact-ready\"\n"
        + &restate.section(free_port());
    let path = setup.write("verdict.toml", &config);
    let path = path.to_str().unwrap();
    let cache = setup.path("cache");
    let _worker = Running::spawn(support::command(&["worker", "--config", path], &cache));
    support::wait_until("the worker registered", || {
        restate.get(&format!("/services/{}", verdict::durable::SERVICE))
    });
    let submit = |extra: &[&str]| {
        let mut args = vec![
            "submit",
            "--config",
            path,
            "--conversation",
            "conv-t",
            "--wait",
        ];
        args.extend_from_slice(extra);
        args.push("Verify A42 and write the report.");
        support::verdict(&args, &cache)
    };

    // Two tenants: a conversation's first execution must name one.
    let unnamed = submit(&[]);
    assert_eq!(unnamed.status.code(), Some(6));
    assert!(
        support::stderr(&unnamed).contains("serves 2 tenants: name one"),
        "{}",
        support::stderr(&unnamed)
    );
    let acme = submit(&["--tenant", "acme"]);
    assert_eq!(acme.status.code(), Some(0), "{}", support::stderr(&acme));
    assert!(support::stderr(&acme).contains("[verdict] tenant: acme"));
    // The conversation is acme's now.
    let globex = submit(&["--tenant", "globex"]);
    assert_eq!(globex.status.code(), Some(6));
    assert!(
        support::stderr(&globex)
            .contains(r#"conversation conv-t belongs to tenant "acme", not "globex""#),
        "{}",
        support::stderr(&globex)
    );
    assert_eq!(fake.requests(), 4);
}
