//! Standard output that cannot be written — a full disk (`/dev/full`) or a
//! closed pipe (`verdict … | head -1`) — is one `error:` line on stderr and
//! exit code 7 on every print path, never a panic.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use support::{Fake, Setup, base_config, verified};
use verdict::fake::{Script, ScriptedTurn};

const PROMPT: &str = "Verify that artifact A42 is ready.";

/// Asserts the one-line report of a failed write.
fn assert_output_error(what: &str, code: Option<i32>, err: &str) {
    assert_eq!(code, Some(7), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("[verdict] "))
        .collect();
    assert_eq!(lines.len(), 1, "{what}: {err}");
    assert!(
        lines[0].starts_with("error: cannot write to standard output: "),
        "{what}: {err}"
    );
}

/// Every command's arguments, with what it needs served or written.
struct Cases {
    fake: Fake,
    setup: Setup,
}

impl Cases {
    fn new() -> Self {
        let fake = Fake::start(Script::new(
            (0..20)
                .map(|_| ScriptedTurn::text("A42 is ready."))
                .collect(),
        ));
        let setup = Setup::new();
        setup.write("verdict.toml", &base_config(&fake.base_url(), 6));
        setup.write(
            "script.json",
            r#"{"conversations": [{"turns": [{"action": {"reply": {"text": "hi"}}}]}]}"#,
        );
        Self { fake, setup }
    }

    fn all(&self) -> Vec<(&'static str, Vec<String>)> {
        let examples = support::examples();
        let s = |p: &std::path::Path| p.to_str().unwrap().to_owned();
        let config = s(&self.setup.path("verdict.toml"));
        let check = vec![
            "check".into(),
            "--verifier".into(),
            "builtin:artifact-ready".into(),
            "--packet".into(),
            s(&examples.join("packets/ready.json")),
            "--artifacts".into(),
            s(&examples.join("artifacts")),
        ];
        let with = |mut v: Vec<String>, extra: &str| {
            v.push(extra.into());
            v
        };
        vec![
            ("help", vec!["--help".into()]),
            ("demo", vec!["demo".into()]),
            ("check", check.clone()),
            ("check --json", with(check, "--json")),
            (
                "inspect",
                vec!["inspect".into(), "builtin:artifact-ready".into()],
            ),
            (
                "inspect --json",
                vec![
                    "inspect".into(),
                    "builtin:artifact-ready".into(),
                    "--json".into(),
                ],
            ),
            (
                "run",
                vec![
                    "run".into(),
                    "--config".into(),
                    config.clone(),
                    PROMPT.into(),
                ],
            ),
            (
                "run --json",
                vec![
                    "run".into(),
                    "--config".into(),
                    config.clone(),
                    "--json".into(),
                    PROMPT.into(),
                ],
            ),
            ("console", vec!["console".into(), "--config".into(), config]),
            (
                "fake-provider",
                vec![
                    "fake-provider".into(),
                    "--script".into(),
                    s(&self.setup.path("script.json")),
                ],
            ),
        ]
    }

    fn command(&self, args: &[String]) -> Command {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut command = support::command(&args, &self.setup.path("cache"));
        // The console gets a task and a command on a pipe.
        command.stdin(Stdio::piped());
        command
    }
}

#[test]
fn a_full_disk_is_one_error_line_and_exit_7_on_every_print_path() {
    let cases = Cases::new();
    for (what, args) in cases.all() {
        let mut command = cases.command(&args);
        command.stdout(std::fs::File::create("/dev/full").unwrap());
        let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
        {
            let mut stdin = child.stdin.take().unwrap();
            if what == "console" {
                use std::io::Write;
                let _ = writeln!(stdin, "{PROMPT}\n/help");
            }
        }
        let output = wait_output(child);
        assert_output_error(what, output.status.code(), &support::stderr(&output));
    }
    assert!(
        cases.fake.requests() <= 2,
        "each run stopped at its first write"
    );
}

#[test]
fn a_closed_pipe_after_the_first_line_is_one_error_line_and_exit_7() {
    let cases = Cases::new();
    for (what, args) in cases.all() {
        // `verdict … | head -1`: read one line, then close the pipe.
        let mut command = cases.command(&args);
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        {
            let mut stdin = child.stdin.take().unwrap();
            if what == "console" {
                use std::io::Write;
                let _ = writeln!(stdin, "{PROMPT}\n/help\n/help");
            }
        }
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        drop(stdout);
        if what == "fake-provider" {
            // A server whose four lines all fitted in the pipe before it
            // closed has nothing left to write and serves on, as any
            // server piped into `head -1` would: end it as a user does.
            let status = Command::new("kill")
                .args(["-s", "TERM", &child.id().to_string()])
                .status()
                .unwrap();
            assert!(status.success(), "kill -s TERM");
        }
        let output = wait_output(child);
        let (status, err) = (output.status, support::stderr(&output));
        // A command whose whole output fits in the pipe before it closes
        // ends normally; any that meets the closed pipe says so once.
        if status.code() == Some(7) {
            assert_output_error(what, status.code(), &err);
        } else {
            assert!(!err.contains("panicked"), "{what}: {err}");
            assert!(
                matches!(status.code(), Some(0 | 1 | 4)),
                "{what}: {status:?} {err}"
            );
        }
    }
}

#[test]
fn a_run_whose_reader_went_away_is_cancelled_and_says_what_was_lost() {
    // Streamed text: the closed pipe cancels the run (nobody reads it).
    let fake = Fake::start(Script::new(vec![
        ScriptedTurn::text("A42 is ready.").delayed(500),
        // The stream is back-pressured and the loop starts a model call only
        // once every earlier event was taken: the failed write of the first
        // text cancels the run before the next call. (Were it asked anyway,
        // it would be held, not answered.)
        ScriptedTurn::text("never asked").delayed(10_000),
    ]));
    let setup = Setup::new();
    let config = setup.write(
        "verdict.toml",
        &(base_config(&fake.base_url(), 6) + &verified(2)),
    );
    let mut command = support::command(
        &["run", "--config", config.to_str().unwrap(), PROMPT],
        &setup.path("cache"),
    );
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    drop(child.stdout.take());
    let output = wait_output(child);
    assert_output_error("run", output.status.code(), &support::stderr(&output));
    assert!(
        support::stderr(&output).contains("[verdict] outcome: error (exit 6)"),
        "the summary still goes to stderr: {}",
        support::stderr(&output)
    );
    assert_eq!(
        fake.requests(),
        1,
        "no model call is started after the failed write"
    );

    // `--json` to a full disk: the lost result is named on stderr.
    let fake = Fake::start(Script::new(vec![ScriptedTurn::text("A42 is ready.")]));
    let setup = Setup::new();
    let config = setup.write("verdict.toml", &base_config(&fake.base_url(), 6));
    let mut command = support::command(
        &[
            "run",
            "--config",
            config.to_str().unwrap(),
            "--json",
            PROMPT,
        ],
        &setup.path("cache"),
    );
    command
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .stderr(Stdio::piped());
    let output = wait_output(command.spawn().unwrap());
    let err = support::stderr(&output);
    assert_output_error("run --json", output.status.code(), &err);
    assert!(err.contains("(outcome: answer_returned, exit 4)"), "{err}");
}

/// Waits (bounded) for `child` and collects its output.
fn wait_output(mut child: std::process::Child) -> std::process::Output {
    let deadline = std::time::Instant::now() + support::BOUND;
    while child.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "verdict hung");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}
