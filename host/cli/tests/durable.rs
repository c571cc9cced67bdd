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

/// A worker with no request identity key and no `allow_unsigned` refuses
/// to start, naming both settings; `allow_unsigned` off loopback is
/// refused too; on loopback it serves.
#[test]
fn a_worker_without_a_request_identity_refuses_to_start() {
    let setup = Setup::new();
    let cache = setup.path("cache");
    let restate = "\n[restate]\nadmin = \"http://127.0.0.1:9\"\n";
    let base = base_config("http://127.0.0.1:9/v1", 6) + &verified(2);

    let path = setup.write(
        "none.toml",
        &format!("{base}{restate}listen = \"127.0.0.1:0\"\n"),
    );
    let out = support::verdict(&["worker", "--config", path.to_str().unwrap()], &cache);
    let err = support::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no request identity key"), "{err}");
    assert!(
        err.contains("identity_keys") && err.contains("allow_unsigned"),
        "{err}"
    );

    let path = setup.write(
        "open.toml",
        &format!("{base}{restate}listen = \"0.0.0.0:0\"\nallow_unsigned = true\n"),
    );
    let out = support::verdict(&["worker", "--config", path.to_str().unwrap()], &cache);
    let err = support::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a loopback address"), "{err}");

    let path = setup.write(
        "bad-key.toml",
        &format!(
            "{base}{restate}listen = \"127.0.0.1:0\"\nidentity_keys = [\"publickeyv1_abc\"]\n"
        ),
    );
    let out = support::verdict(&["worker", "--config", path.to_str().unwrap()], &cache);
    let err = support::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("publickeyv1_abc") && err.contains("identity_keys"),
        "{err}"
    );

    let port = free_port();
    let path = setup.write(
        "dev.toml",
        &format!("{base}{restate}listen = \"127.0.0.1:{port}\"\nallow_unsigned = true\n"),
    );
    let worker = Running::spawn(support::command(
        &[
            "worker",
            "--config",
            path.to_str().unwrap(),
            "--no-register",
        ],
        &cache,
    ));
    support::wait_until("the unsigned worker serves", || {
        support::restate::get(port, verdict::durable::READYZ).is_some_and(|(s, _)| s == 200)
    });
    worker.signal("TERM");
    let (code, _, err) = worker.finish();
    assert_eq!(code, Some(0), "{err}");
}

/// The same submission twice (same conversation and execution id, the
/// second after the first's answer, as after a lost one): it runs once.
/// The fake provider has turns for two runs, each writing its own file,
/// so a second run would show as 8 model requests and two files.
#[test]
fn the_same_submission_twice_runs_once() {
    let Some(restate) = Restate::start() else {
        return;
    };
    let mut turns = story();
    let mut again = story();
    again[1] = ScriptedTurn::tool_call(
        "write-1",
        "write_artifact",
        json!({"id": "report-2", "content": "A42 verified again"}),
    );
    turns[1] = ScriptedTurn::tool_call(
        "write-1",
        "write_artifact",
        json!({"id": "report-1", "content": "A42 verified"}),
    );
    turns.extend(again);
    let fake = Fake::start(Script::new(turns));
    let setup = Setup::new();
    let config = base_config(&fake.base_url(), 6) + &verified(2) + &restate.section(free_port());
    let path = setup.write("verdict.toml", &config);
    let path = path.to_str().unwrap();
    let cache = setup.path("cache");
    let _worker = Running::spawn(support::command(&["worker", "--config", path], &cache));
    support::wait_until("the worker registered", || {
        restate.get(&format!("/services/{}", verdict::durable::SERVICE))
    });
    let submit = |wait: bool| {
        let mut args = vec![
            "submit",
            "--config",
            path,
            "--conversation",
            "conv-i",
            "--execution-id",
            "ex-once",
        ];
        if wait {
            args.push("--wait");
        }
        args.push("Verify A42 and write the report.");
        support::verdict(&args, &cache)
    };

    let first = submit(false);
    assert_eq!(first.status.code(), Some(0), "{}", support::stderr(&first));
    assert_eq!(support::stdout(&first).trim(), "conv-i/ex-once");
    // The reference is told before the request is sent.
    assert!(
        support::stderr(&first).contains("[verdict] submitting conv-i/ex-once"),
        "{}",
        support::stderr(&first)
    );
    // Again, waiting: it attaches to the first and waits for its end.
    let second = submit(true);
    let err = support::stderr(&second);
    assert_eq!(second.status.code(), Some(0), "{err}");
    assert_eq!(support::stdout(&second).trim(), "conv-i/ex-once");
    assert!(err.contains("submitted before: attached to it"), "{err}");
    assert!(err.contains("[verdict] stop reason: completed"), "{err}");
    // And once more after its end: the same record, nothing new.
    let third = submit(true);
    assert_eq!(third.status.code(), Some(0), "{}", support::stderr(&third));

    assert_eq!(fake.requests(), 4, "one run's model requests");
    let written: Vec<String> = std::fs::read_dir(setup.path("workspace"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("report"))
        .collect();
    assert_eq!(written, vec!["report-1".to_owned()], "one run's write");
}

/// `submit --wait` while the Restate server is killed (SIGKILL) and
/// started again under it: the client retries through the outage and
/// exits with the final record's code. The first model call is slow, so
/// the kill lands while it is in flight; the call is asked again after
/// the restart (it was never journaled), and the script answers it alike.
#[test]
fn submit_wait_rides_out_a_restart_of_restate() {
    let Some(mut restate) = Restate::start() else {
        return;
    };
    let mut turns = story();
    turns[0] = ScriptedTurn::text("A42 is ready.").delayed(4000);
    turns.insert(1, ScriptedTurn::text("A42 is ready."));
    let fake = Fake::start(Script::new(turns));
    let setup = Setup::new();
    let config = base_config(&fake.base_url(), 6) + &verified(2) + &restate.section(free_port());
    let path = setup.write("verdict.toml", &config);
    let path = path.to_str().unwrap();
    let cache = setup.path("cache");
    let _worker = Running::spawn(support::command(&["worker", "--config", path], &cache));
    support::wait_until("the worker registered", || {
        restate.get(&format!("/services/{}", verdict::durable::SERVICE))
    });

    let waiting = Running::spawn(support::command(
        &[
            "submit",
            "--config",
            path,
            "--conversation",
            "conv-r",
            "--wait",
            "Verify A42 and write the report.",
        ],
        &cache,
    ));
    support::wait_until("the first model call in flight", || fake.requests() == 1);
    restate.crash();
    std::thread::sleep(std::time::Duration::from_secs(1));
    restate.restart();

    let (code, out, err) = waiting.finish();
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.trim().starts_with("conv-r/ex-"), "{out}");
    assert!(err.contains("still waiting for conv-r/"), "{err}");
    assert!(err.contains("[verdict] stop reason: completed"), "{err}");
    assert_eq!(fake.requests(), 5);
}

/// `verdict worker` started before the Restate server: it keeps serving,
/// `/readyz` says why it is not registered, and once the server is up it
/// registers by itself and an execution completes.
#[test]
fn a_worker_started_before_restate_registers_by_itself() {
    let Some(mut restate) = Restate::prepare() else {
        return;
    };
    let fake = Fake::start(Script::new(story()));
    let setup = Setup::new();
    let port = free_port();
    let config = base_config(&fake.base_url(), 6) + &verified(2) + &restate.section(port);
    let path = setup.write("verdict.toml", &config);
    let path = path.to_str().unwrap();
    let cache = setup.path("cache");
    let worker = Running::spawn(support::command(&["worker", "--config", path], &cache));

    let mut seen = None;
    support::wait_until("the worker answers /readyz", || {
        seen = support::restate::get(port, verdict::durable::READYZ);
        seen.is_some()
    });
    let (status, body) = seen.unwrap();
    assert_eq!(status, 503, "{body}");
    assert!(body.starts_with("not registered: "), "{body}");
    assert!(
        body.contains(&format!("127.0.0.1:{}", restate.admin)),
        "{body}"
    );
    // Still serving a while later, still not registered.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let (status, _) = support::restate::get(port, verdict::durable::READYZ).expect("still up");
    assert_eq!(status, 503);

    restate.restart();
    support::wait_until("the worker registered by itself", || {
        support::restate::get(port, verdict::durable::READYZ).is_some_and(|(s, _)| s == 200)
    });
    let (_, body) = support::restate::get(port, verdict::durable::READYZ).unwrap();
    assert!(body.starts_with("registered http://127.0.0.1:"), "{body}");
    let run = support::verdict(
        &[
            "submit",
            "--config",
            path,
            "--wait",
            "Verify A42 and write the report.",
        ],
        &cache,
    );
    assert_eq!(run.status.code(), Some(0), "{}", support::stderr(&run));
    assert_eq!(fake.requests(), 4);

    worker.signal("TERM");
    let (code, _, err) = worker.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("cannot register the worker with Restate's admin API (attempt 1)"),
        "{err}"
    );
    assert!(
        err.contains("[verdict] registered http://127.0.0.1:"),
        "{err}"
    );
}

/// `--execution-id` names an execution of a conversation: without
/// `--conversation` it is refused before anything is sent.
#[test]
fn an_execution_id_needs_its_conversation() {
    let setup = Setup::new();
    let path = setup.write("verdict.toml", &base_config("http://127.0.0.1:9/v1", 6));
    let out = support::verdict(
        &[
            "submit",
            "--config",
            path.to_str().unwrap(),
            "--execution-id",
            "ex-1",
            "Verify A42.",
        ],
        &setup.path("cache"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        support::stderr(&out).contains("--conversation"),
        "{}",
        support::stderr(&out)
    );
}
