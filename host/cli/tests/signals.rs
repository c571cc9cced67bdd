//! Signals reach the built binary while a model call is pending: `run`
//! treats SIGINT, SIGTERM and SIGHUP alike (cancel, report, exit 6); a piped
//! console cancels the task on SIGINT and goes on with the queued lines,
//! and ends (exit 6) on SIGTERM.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use serde_json::Value;
use std::io::Write;
use std::process::Stdio;
use support::{Fake, Running, Setup, base_config, verified};
use verdict::fake::{Script, ScriptedTurn};

const PROMPT: &str = "Verify that artifact A42 is ready.";

/// A model whose first answer takes far longer than any test.
fn slow() -> Script {
    Script::new(vec![
        ScriptedTurn::text("too late").delayed(120_000),
        ScriptedTurn::text("A42 is ready."),
    ])
}

#[test]
fn run_is_cancelled_by_sigint_sigterm_and_sighup_and_still_reports() {
    for signal in ["INT", "TERM", "HUP"] {
        for json in [true, false] {
            let fake = Fake::start(slow());
            let setup = Setup::new();
            let config = setup.write(
                "verdict.toml",
                &(base_config(&fake.base_url(), 6) + &verified(2)),
            );
            let mut args = vec!["run", "--config", config.to_str().unwrap()];
            if json {
                args.push("--json");
            }
            args.push(PROMPT);
            let running = Running::spawn(support::command(&args, &setup.path("cache")));
            support::wait_until("the model call", || fake.requests() == 1);
            running.signal(signal);
            let (code, out, err) = running.finish();
            assert_eq!(code, Some(6), "SIG{signal} json={json}: {out}\n{err}");
            if json {
                let value: Value = serde_json::from_str(&out).unwrap();
                assert_eq!(value["outcome"], "error", "SIG{signal}");
                assert_eq!(value["exitCode"], 6);
                assert_eq!(value["error"]["message"], "the run was cancelled");
            } else {
                assert!(
                    err.contains("[verdict] outcome: error (exit 6)"),
                    "SIG{signal}: {err}"
                );
            }
            assert_eq!(fake.requests(), 1, "no model call after the signal");
        }
    }
}

/// `verdict console` with its input on a pipe (not a terminal).
fn piped_console(setup: &Setup, fake: &Fake) -> (Running, std::process::ChildStdin) {
    let config = setup.write(
        "verdict.toml",
        &(base_config(&fake.base_url(), 6) + &verified(2)),
    );
    let mut command = support::command(
        &["console", "--config", config.to_str().unwrap()],
        &setup.path("cache"),
    );
    command.stdin(Stdio::piped());
    let mut running = Running::spawn(command);
    let stdin = running.take_stdin();
    (running, stdin)
}

#[test]
fn piped_console_sigint_cancels_the_task_and_runs_the_queued_lines() {
    let fake = Fake::start(slow());
    let setup = Setup::new();
    let saved = setup.path("conversation.json");
    let (running, mut stdin) = piped_console(&setup, &fake);
    // The whole session is queued before the signal.
    writeln!(stdin, "{PROMPT}\n/save {}\n/quit", saved.display()).unwrap();
    support::wait_until("the model call", || fake.requests() == 1);
    running.signal("INT");
    let (code, out, err) = running.finish();
    drop(stdin);
    assert_eq!(code, Some(0), "{out}\n{err}");
    for step in [
        "cancelling the running execution",
        "[verdict] outcome: error (exit 6)",
        "saved 1 messages",
    ] {
        assert!(out.contains(step), "missing {step:?} in:\n{out}");
    }
    let conversation: Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(conversation[0]["text"], PROMPT, "{conversation}");
}

#[test]
fn piped_console_sigterm_cancels_the_task_and_ends_the_session() {
    let fake = Fake::start(slow());
    let setup = Setup::new();
    let saved = setup.path("conversation.json");
    let (running, mut stdin) = piped_console(&setup, &fake);
    writeln!(stdin, "{PROMPT}\n/save {}", saved.display()).unwrap();
    support::wait_until("the model call", || fake.requests() == 1);
    running.signal("TERM");
    let (code, out, err) = running.finish();
    drop(stdin);
    assert_eq!(code, Some(6), "{out}\n{err}");
    assert!(out.contains("[verdict] outcome: error (exit 6)"), "{out}");
    assert!(out.contains("session ended by a signal"), "{out}");
    assert!(!saved.exists(), "the queued lines do not run after SIGTERM");
}
