//! Faults in what the binary is given, each refused up front or survived:
//! a stream cut before its first event (retried), a blank prompt, an
//! invalid UTF-8 console line, out-of-range `check` limits, unreadable or
//! system directories as workspace or artifact root.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use serde_json::{Value, json};
use std::io::Write;
use std::process::Stdio;
use support::{Fake, Running, Setup, base_config, verified};
use verdict::fake::{Fault, Reply, Script, ScriptedTurn};

const PROMPT: &str = "Verify that artifact A42 is ready.";

fn run_json(setup: &Setup, config: &str) -> (Option<i32>, Value, String) {
    let path = setup.write("verdict.toml", config);
    let output = support::verdict(
        &["run", "--config", path.to_str().unwrap(), "--json", PROMPT],
        &setup.path("cache"),
    );
    let value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    (output.status.code(), value, support::stderr(&output))
}

#[test]
fn a_stream_cut_before_its_first_event_is_retried() {
    let cut = ScriptedTurn::fault(Fault::CutStream {
        after_frames: 0,
        reply: Reply {
            text: Some("lost".into()),
            ..Reply::default()
        },
    });
    let fake = Fake::start(Script::new(vec![cut, ScriptedTurn::text("A42 is ready.")]));
    let setup = Setup::new();
    let (code, value, err) = run_json(&setup, &base_config(&fake.base_url(), 6));
    assert_eq!(code, Some(4), "{value}\n{err}");
    assert_eq!(value["output"], "A42 is ready.");
    assert_eq!(fake.requests(), 2, "one retry");
}

#[test]
fn an_empty_or_blank_prompt_is_refused_before_any_model_call() {
    let fake = Fake::start(Script::new(vec![ScriptedTurn::text("A42 is ready.")]));
    let setup = Setup::new();
    let config = setup.write("verdict.toml", &base_config(&fake.base_url(), 6));
    for prompt in ["", "   ", " \n\t "] {
        let output = support::verdict(
            &["run", "--config", config.to_str().unwrap(), prompt],
            &setup.path("cache"),
        );
        assert_eq!(output.status.code(), Some(2), "{prompt:?}");
        assert_eq!(
            support::stderr(&output),
            "error: the prompt is empty: give the task as the last argument\n"
        );
        assert_eq!(support::stdout(&output), "");
    }
    assert_eq!(fake.requests(), 0);
}

#[test]
fn an_invalid_utf8_console_line_is_refused_and_the_session_goes_on() {
    let fake = Fake::start(Script::new(vec![ScriptedTurn::text("A42 is ready.")]));
    let setup = Setup::new();
    let config = setup.write("verdict.toml", &base_config(&fake.base_url(), 6));
    let saved = setup.path("conversation.json");
    let mut command = support::command(
        &["console", "--config", config.to_str().unwrap()],
        &setup.path("cache"),
    );
    command.stdin(Stdio::piped());
    let mut running = Running::spawn(command);
    let mut stdin = running.take_stdin();
    stdin.write_all(b"Verify \xff\xfe A42.\n").unwrap();
    writeln!(stdin, "{PROMPT}\n/save {}\n/quit", saved.display()).unwrap();
    drop(stdin);
    let (code, out, err) = running.finish();
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert_eq!(
        out.matches("refused: the line is not valid UTF-8 text (nothing ran)")
            .count(),
        1,
        "{out}"
    );
    assert!(out.contains("saved 2 messages"), "{out}");
    assert_eq!(err, "");
    assert_eq!(fake.requests(), 1, "only the valid task ran");
}

#[test]
fn check_limits_have_the_configuration_files_ranges() {
    let cache = tempfile::tempdir().unwrap();
    let packet = support::examples().join("packets/ready.json");
    let check = |flag: &str, value: &str| {
        support::verdict(
            &[
                "check",
                "--verifier",
                "builtin:artifact-ready",
                "--packet",
                packet.to_str().unwrap(),
                flag,
                value,
            ],
            cache.path(),
        )
    };
    let max = u64::MAX.to_string();
    let cases = [
        (
            "--fuel",
            "0",
            "fuel",
            "0 is outside 1..=18446744073709551615",
        ),
        ("--timeout-ms", "0", "timeout_ms", "0 is outside 1..=60000"),
        (
            "--timeout-ms",
            "100000000",
            "timeout_ms",
            "100000000 is outside 1..=60000",
        ),
        ("--memory-mib", "0", "memory_mib", "0 is outside 1..=4096"),
        (
            "--memory-mib",
            "1000000",
            "memory_mib",
            "1000000 is outside 1..=4096",
        ),
        ("--instances", "0", "instances", "0 is outside 1..=1024"),
        (
            "--instances",
            "1025",
            "instances",
            "1025 is outside 1..=1024",
        ),
        (
            "--table-elements",
            "100001",
            "table_elements",
            "100001 is outside 1..=100000",
        ),
        (
            "--artifact-reads",
            "0",
            "artifact_reads",
            "0 is outside 1..=100000",
        ),
        (
            "--artifact-bytes",
            "0",
            "artifact_bytes",
            "0 is outside 1..=67108864",
        ),
        (
            "--list-max-entries",
            "100001",
            "list_max_entries",
            "100001 is outside 1..=100000",
        ),
    ];
    for (flag, value, field, message) in cases {
        let output = check(flag, value);
        assert_eq!(output.status.code(), Some(2), "{flag} {value}");
        assert_eq!(
            support::stderr(&output),
            format!("error: {flag}: {message}\n")
        );
        // The same value in a configuration file: the same message.
        let setup = Setup::new();
        let config = base_config("http://127.0.0.1:9/v1", 6)
            + &verified(2)
            + &format!("[tenants.acme.limits]\n{field} = {value}\n");
        let path = setup.write("verdict.toml", &config);
        let output = support::verdict(
            &["run", "--config", path.to_str().unwrap(), PROMPT],
            &setup.path("cache"),
        );
        assert_eq!(output.status.code(), Some(2));
        let err = support::stderr(&output);
        assert!(
            err.ends_with(&format!(": tenants.acme.limits.{field}: {message}\n")),
            "{err}"
        );
    }
    let output = check("--memory-mib", &max);
    assert_eq!(
        support::stderr(&output),
        format!("error: --memory-mib: {max} is outside 1..=4096\n")
    );
    // In range, the check runs (not complete: no artifacts given).
    let output = check("--memory-mib", "4096");
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        support::stderr(&output)
    );
    assert!(support::stdout(&output).starts_with("verdict: not complete\n"));
}

/// A configuration whose workspace and artifact root are `workspace` and
/// `artifacts` (both readable, the artifact ready in each).
fn two_roots(setup: &Setup, fake: &Fake) -> std::path::PathBuf {
    std::fs::create_dir(setup.path("artifacts")).unwrap();
    std::fs::write(setup.path("artifacts/A42"), r#"{"id":"A42","ready":true}"#).unwrap();
    let config = base_config(&fake.base_url(), 6)
        + "\n[loop_policy]\nmax_recovery_attempts = 2\n\n[tenants.acme]\nartifact_root = \"artifacts\"\ncompletion = \"builtin:artifact-ready\"\n";
    setup.write("verdict.toml", &config)
}

/// `verdict run --config CONFIG --json PROMPT` as a user whom file
/// permissions bind.
fn run_unprivileged(setup: &Setup, config: &std::path::Path) -> std::process::Output {
    let args = [
        "run",
        "--config",
        config.to_str().unwrap(),
        "--json",
        PROMPT,
    ];
    Running::spawn(support::unprivileged(&args, &setup.path("cache"))).output()
}

#[test]
fn unreadable_roots_are_refused_up_front_as_denied_not_missing() {
    for (dir, field) in [
        ("workspace", "tools.workspace"),
        ("artifacts", "tenants.acme.artifact_root"),
    ] {
        for mode in [0o000, 0o300, 0o600] {
            let fake = Fake::start(Script::new(vec![ScriptedTurn::text("A42 is ready.")]));
            let setup = Setup::new();
            let config = two_roots(&setup, &fake);
            support::chmod(&setup.path(dir), mode);
            let output = run_unprivileged(&setup, &config);
            support::chmod(&setup.path(dir), 0o755);
            let err = support::stderr(&output);
            assert_eq!(output.status.code(), Some(2), "{dir} {mode:o}: {err}");
            assert!(
                err.contains(&format!(
                    "{field}: {}: permission denied (the directory must be readable)",
                    setup.path(dir).display()
                )),
                "{dir} {mode:o}: {err}"
            );
            assert!(!err.contains("not exist"), "{err}");
            assert_eq!(fake.requests(), 0, "nothing sent to the model");
        }
    }
}

#[test]
fn an_unwritable_workspace_is_refused_when_write_artifact_is_offered() {
    let fake = Fake::start(Script::new(vec![ScriptedTurn::text("A42 is ready.")]));
    let setup = Setup::new();
    let config = setup.write("verdict.toml", &base_config(&fake.base_url(), 6));
    support::chmod(&setup.path("workspace"), 0o555);
    let output = run_unprivileged(&setup, &config);
    let err = support::stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("permission denied (write_artifact needs a writable directory)"),
        "{err}"
    );
    // Read-only tools are fine with it.
    let config = setup.write(
        "verdict.toml",
        &base_config(&fake.base_url(), 6).replace(
            "workspace = \"workspace\"\n",
            "workspace = \"workspace\"\nbuiltin = [\"read_artifact\"]\n",
        ),
    );
    let output = run_unprivileged(&setup, &config);
    support::chmod(&setup.path("workspace"), 0o755);
    assert_eq!(
        output.status.code(),
        Some(4),
        "{}",
        support::stderr(&output)
    );
}

#[test]
fn an_unreadable_artifact_is_reported_to_the_model_as_denied() {
    let fake = Fake::start(Script::new(vec![
        ScriptedTurn::tool_call("read-1", "read_artifact", json!({"id": "A42"})),
        ScriptedTurn::text("I could not read it."),
    ]));
    let setup = Setup::new();
    let config = setup.write("verdict.toml", &base_config(&fake.base_url(), 6));
    support::chmod(&setup.path("workspace/A42"), 0o000);
    let output = run_unprivileged(&setup, &config);
    support::chmod(&setup.path("workspace/A42"), 0o644);
    assert_eq!(
        output.status.code(),
        Some(4),
        "{}",
        support::stderr(&output)
    );
    let sent = fake.server.requests()[1].body.to_string();
    assert!(sent.contains("artifact A42: permission denied"), "{sent}");
    assert!(!sent.contains("does not exist"), "{sent}");
}

#[test]
fn the_filesystem_root_and_system_directories_are_refused() {
    let fake = Fake::start(Script::new(vec![ScriptedTurn::text("A42 is ready.")]));
    let setup = Setup::new();
    let depth = setup.dir.path().components().count();
    let up = vec![".."; depth + 2].join("/");
    let cases = [
        ("tools.workspace", "/".to_owned(), "the filesystem root"),
        ("tools.workspace", up.clone(), "the filesystem root"),
        ("tools.workspace", "/etc".to_owned(), "a system directory"),
        (
            "tenants.acme.artifact_root",
            "/".to_owned(),
            "the filesystem root",
        ),
        ("tenants.acme.artifact_root", up, "the filesystem root"),
        (
            "tenants.acme.artifact_root",
            "/proc/self".to_owned(),
            "a system directory",
        ),
    ];
    for (field, dir, what) in cases {
        let config = (base_config(&fake.base_url(), 6) + &verified(2)).replace(
            if field == "tools.workspace" {
                "workspace = \"workspace\""
            } else {
                "artifact_root = \"workspace\""
            },
            &format!("{} = \"{dir}\"", field.rsplit('.').next().unwrap()),
        );
        let path = setup.write("verdict.toml", &config);
        let output = support::verdict(
            &["run", "--config", path.to_str().unwrap(), PROMPT],
            &setup.path("cache"),
        );
        let err = support::stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{field} = {dir}: {err}");
        assert!(
            err.contains(&format!("{field}: ")) && err.contains(&format!(" is {what}: ")),
            "{field} = {dir}: {err}"
        );
    }
    // `check --artifacts` keeps the same rule.
    let output = support::verdict(
        &[
            "check",
            "--verifier",
            "builtin:artifact-ready",
            "--packet",
            support::examples()
                .join("packets/ready.json")
                .to_str()
                .unwrap(),
            "--artifacts",
            "/",
        ],
        &setup.path("cache"),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        support::stderr(&output).contains("/ is the filesystem root"),
        "{}",
        support::stderr(&output)
    );
    assert_eq!(fake.requests(), 0);
}
