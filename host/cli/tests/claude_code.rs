//! `verdict hook claude-code` as the `Stop` hook of the real Claude Code
//! (`@anthropic-ai/claude-code` from npm, installed by
//! scripts/claude-code.sh), in print mode against the fake provider's
//! Anthropic endpoint; and the hook alone on hand-made inputs: a spinning
//! verifier, a 100 MB transcript, a missing or malformed one.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use serde_json::{Value, json};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::{Fake, Running, Setup};
use verdict::fake::{Script, ScriptedTurn};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The installed `claude`, or `None` (SKIPPED) unless
/// `VERDICT_REQUIRE_CLAUDE_CODE=1`.
pub(crate) fn claude() -> Option<PathBuf> {
    let script = root().join("scripts/claude-code.sh");
    let ok = Command::new("bash")
        .arg(&script)
        .arg("install")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("VERDICT_REQUIRE_CLAUDE_CODE").as_deref() != Ok("1"),
            "scripts/claude-code.sh install failed and VERDICT_REQUIRE_CLAUDE_CODE=1"
        );
        eprintln!("SKIPPED: Claude Code could not be installed (npm?)");
        return None;
    }
    let out = Command::new("bash")
        .arg(&script)
        .arg("bin")
        .output()
        .unwrap();
    Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// A tenant judging A42 with `verifier`; Claude Code's `Read` is the
/// verifier's `read_artifact`.
fn config(verifier: &str, extra: &str) -> String {
    format!(
        r#"[loop_policy]
max_recovery_attempts = 2

[tenants.acme]
artifact_root = "workspace"
completion = {verifier:?}
{extra}
[claude_code.tools.Read]
name = "read_artifact"
"#
    )
}

/// Runs the real Claude Code once in `setup` (its own HOME) with the hook
/// installed from `--print-settings`: its JSON answer and the session's
/// transcript.
fn claude_run(claude: &Path, setup: &Setup, fake: &Fake) -> (Value, String) {
    let config = setup.write("verdict.toml", &config("builtin:artifact-ready", ""));
    let printed = support::verdict(
        &[
            "hook",
            "claude-code",
            "--config",
            config.to_str().unwrap(),
            "--print-settings",
        ],
        &setup.path("cache"),
    );
    assert_eq!(
        printed.status.code(),
        Some(0),
        "{}",
        support::stderr(&printed)
    );
    let settings = setup.write("settings.json", &support::stdout(&printed));
    let home = setup.path("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut command = Command::new(claude);
    command
        .current_dir(setup.path(""))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("VERDICT_CACHE_DIR", setup.path("cache"))
        .env("ANTHROPIC_BASE_URL", fake.anthropic_base())
        .env("ANTHROPIC_API_KEY", "sk-fake-not-secret")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .args(["-p", "Verify that artifact A42 is ready."])
        .args(["--output-format", "json", "--model", "claude-sonnet-4-5"])
        .arg("--settings")
        .arg(&settings);
    let output = Running::spawn(command).output();
    let out = support::stdout(&output);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{out}{}",
        support::stderr(&output)
    );
    let value: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let session = value["session_id"].as_str().unwrap();
    let transcript = walk(&home.join(".claude/projects"))
        .into_iter()
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n == format!("{session}.jsonl").as_str())
        })
        .expect("the session's transcript");
    (value, std::fs::read_to_string(transcript).unwrap())
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// The last user message of a request body, as text.
fn last_user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

#[test]
fn claude_code_is_held_until_it_reads_the_artifact() {
    let Some(claude) = claude() else {
        return;
    };
    let setup = Setup::new();
    let a42 = setup.path("workspace/A42").canonicalize().unwrap();
    let fake = Fake::start(Script::new(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call(
            "toolu_read_1",
            "Read",
            json!({"file_path": a42.to_str().unwrap()}),
        ),
        ScriptedTurn::text("I read A42: it is ready."),
    ]));
    let (answer, transcript) = claude_run(&claude, &setup, &fake);
    assert_eq!(answer["result"], "I read A42: it is ready.", "{answer}");
    assert_eq!(answer["is_error"], false);
    // Exactly the turns expected: the premature answer, the one after the
    // hook's feedback (a Read), the one after the Read's result.
    let bodies = fake.bodies();
    assert_eq!(bodies.len(), 3, "{bodies:#?}");
    let feedback = last_user(&bodies[1]);
    assert!(
        feedback.contains("Read and verify artifact A42 before finishing."),
        "{feedback}"
    );
    let result = last_user(&bodies[2]);
    assert!(
        result.contains("toolu_read_1") && result.contains("tool_result"),
        "{result}"
    );
    // Claude Code ran its own Read, and the hook's last word was complete.
    assert!(transcript.contains(r#""name":"Read""#), "{transcript}");
    assert!(
        transcript.contains("verdict: complete - artifact A42 is ready"),
        "{transcript}"
    );
}

#[test]
fn after_the_recovery_bound_the_stop_is_allowed_and_said_why() {
    let Some(claude) = claude() else {
        return;
    };
    let setup = Setup::new();
    let fake = Fake::start(Script::new(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::text("A42 is ready, really."),
        ScriptedTurn::text("A42 is ready, trust me."),
        ScriptedTurn::text("never asked for"),
    ]));
    let (answer, transcript) = claude_run(&claude, &setup, &fake);
    // Two blocks (max_recovery_attempts = 2), then the stop goes through.
    assert_eq!(fake.requests(), 3);
    assert_eq!(answer["result"], "A42 is ready, trust me.", "{answer}");
    assert!(
        transcript.contains(
            "after 2 block(s), the recovery bound (max_recovery_attempts = 2): allowing the stop"
        ),
        "{transcript}"
    );
}

/// Runs the hook on `input` with `config`: (exit code, stdout, stderr).
fn hook(setup: &Setup, config: &str, input: &str) -> (Option<i32>, String, String) {
    let path = setup.write("verdict.toml", config);
    let mut command = support::command(
        &["hook", "claude-code", "--config", path.to_str().unwrap()],
        &setup.path("cache"),
    );
    command.stdin(Stdio::piped());
    let mut running = Running::spawn(command);
    let mut stdin = running.take_stdin();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let (code, out, err) = running.finish();
    (code, out, err)
}

fn input(transcript: &Path, active: bool) -> String {
    json!({
        "session_id": "s-1",
        "transcript_path": transcript,
        "hook_event_name": "Stop",
        "stop_hook_active": active,
        "cwd": "/",
    })
    .to_string()
}

const READ: &str = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"A42"}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ready","is_error":false}]}}
"#;
const DONE: &str = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"A42 is ready."}]}}
"#;

#[test]
fn a_spinning_verifier_is_answered_within_its_deadline() {
    let setup = Setup::new();
    let transcript = setup.write("t.jsonl", &format!("{READ}{DONE}"));
    let limits = "[tenants.acme.limits]\ntimeout_ms = 300\nfuel = 100000000000000\n";
    let spin = verdict_test_support::guests::HOSTILE_SPIN;
    let (code, out, err) = hook(&setup, &config(spin, limits), &input(&transcript, false));
    assert_eq!(code, Some(0), "{err}");
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["decision"], "block");
    assert!(
        answer["reason"].as_str().unwrap().contains("timed out"),
        "{answer}"
    );
    // Failing open instead, when the configuration says so.
    let open = config(spin, limits) + "[claude_code]\non_error = \"allow\"\n";
    let (code, out, err) = hook(&setup, &open, &input(&transcript, false));
    assert_eq!((code, out.as_str()), (Some(0), ""), "{err}");
    assert!(
        err.contains("on_error = \"allow\": allowing the stop"),
        "{err}"
    );
}

#[test]
fn a_100_mb_transcript_is_read_from_its_end_only() {
    let setup = Setup::new();
    let path = setup.path("big.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    // A Read at the start, then 100 MB of chatter, then the claim.
    file.write_all(READ.as_bytes()).unwrap();
    let filler = format!(
        "{}\n",
        json!({"type":"assistant","message":{"content":[{"type":"text","text":"x".repeat(1000)}]}})
    );
    for _ in 0..(100 * 1024 * 1024 / filler.len()) {
        file.write_all(filler.as_bytes()).unwrap();
    }
    file.write_all(DONE.as_bytes()).unwrap();
    drop(file);
    assert!(std::fs::metadata(&path).unwrap().len() > 100 * 1024 * 1024);
    let (code, out, err) = hook(
        &setup,
        &config("builtin:artifact-ready", ""),
        &input(&path, false),
    );
    assert_eq!(code, Some(0), "{err}");
    // The Read is 100 MB back: outside the window, so not seen.
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["decision"], "block", "{err}");
    assert!(err.contains("only its end was read"), "{err}");

    // The same claim with the Read near the end: complete.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(READ.as_bytes()).unwrap();
    file.write_all(DONE.as_bytes()).unwrap();
    let (code, out, err) = hook(
        &setup,
        &config("builtin:artifact-ready", ""),
        &input(&path, false),
    );
    assert_eq!((code, out.as_str()), (Some(0), ""), "{err}");
    assert!(
        err.contains("verdict: complete - artifact A42 is ready"),
        "{err}"
    );
}

#[test]
fn missing_and_malformed_transcripts_and_inputs() {
    let setup = Setup::new();
    let text = config("builtin:artifact-ready", "");
    // Missing: the check cannot be made; the default blocks, naming why.
    let (code, out, err) = hook(&setup, &text, &input(&setup.path("none.jsonl"), false));
    assert_eq!(code, Some(0), "{err}");
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["decision"], "block");
    let reason = answer["reason"].as_str().unwrap();
    assert!(
        reason.contains("cannot read the transcript") && reason.contains("none.jsonl"),
        "{reason}"
    );
    // Blocked again when Claude goes on (stop_hook_active); the third
    // stop is past the bound (max_recovery_attempts = 2) and goes through.
    let (_, out, _) = hook(&setup, &text, &input(&setup.path("none.jsonl"), true));
    assert!(out.contains("block"), "{out}");
    let (_, out, err) = hook(&setup, &text, &input(&setup.path("none.jsonl"), true));
    assert_eq!(out, "", "{err}");
    assert!(err.contains("recovery bound"), "{err}");

    // Malformed lines are skipped and said; the verifier judges the rest.
    let bad = setup.write("bad.jsonl", &format!("garbage\n{{\"type\":\n{READ}{DONE}"));
    let (code, out, err) = hook(&setup, &text, &input(&bad, false));
    assert_eq!((code, out.as_str()), (Some(0), ""), "{err}");
    assert!(err.contains("2 transcript line(s) were not JSON"), "{err}");

    // Input that is not a hook's: exit 1 (Claude Code shows it, no block).
    let (code, out, err) = hook(&setup, &text, "not json");
    assert_eq!((code, out.as_str()), (Some(1), ""), "{err}");
    assert!(err.contains("not a Claude Code hook's JSON"), "{err}");
}

#[test]
fn a_recorded_hook_check_replays_identically() {
    let setup = Setup::new();
    let transcript = setup.write("t.jsonl", &format!("{READ}{DONE}"));
    let path = setup.write("verdict.toml", &config("builtin:artifact-ready", ""));
    let recs = setup.path("recs");
    let mut command = support::command(
        &[
            "hook",
            "claude-code",
            "--config",
            path.to_str().unwrap(),
            "--record",
            recs.to_str().unwrap(),
        ],
        &setup.path("cache"),
    );
    command.stdin(Stdio::piped());
    let mut running = Running::spawn(command);
    let mut stdin = running.take_stdin();
    stdin
        .write_all(input(&transcript, false).as_bytes())
        .unwrap();
    drop(stdin);
    let (code, out, err) = running.finish();
    assert_eq!((code, out.as_str()), (Some(0), ""), "{err}");
    let records: Vec<PathBuf> = std::fs::read_dir(&recs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(records.len(), 1);
    // The packet the hook built is in the record: Claude Code's Read under
    // the verifier's name.
    let record: Value = serde_json::from_slice(&std::fs::read(&records[0]).unwrap()).unwrap();
    assert_eq!(record["packet"]["executionId"], "claude-code/s-1");
    assert_eq!(
        record["packet"]["observations"][0]["toolName"],
        "read_artifact"
    );
    let output = support::verdict(
        &["replay", records[0].to_str().unwrap()],
        &setup.path("cache"),
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        support::stdout(&output)
    );
}
