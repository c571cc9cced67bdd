//! `verdict console` driven through a pseudo-terminal (util-linux
//! `script` gives it one): a task runs, `/policy set` is refused while it
//! runs and applied when idle, `/context loop` shows the execution,
//! `/save` and `/load` round-trip the conversation, `/verifier reload`
//! picks up a changed `.wasm` and keeps the old one when the new is corrupt.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use serde_json::json;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{Fake, Setup, base_config};
use verdict::fake::{Script, ScriptedTurn};

/// A sample verifier built with this crate (see build.rs).
fn guest(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/wasm-guests/wasm32-wasip2/release")
        .join(name)
}

struct Pty {
    child: Child,
    stdin: ChildStdin,
    output: Arc<Mutex<String>>,
}

impl Pty {
    fn spawn(command: &str, cache: &Path) -> Self {
        Self::spawn_on(command, cache, "dumb")
    }

    /// With `term` as `TERM` (a real terminal type puts the line editor in
    /// raw mode, where Ctrl-C reaches it as a key).
    fn spawn_on(command: &str, cache: &Path, term: &str) -> Self {
        let mut child = Command::new("script")
            .args(["-qfec", command, "/dev/null"])
            .env("VERDICT_CACHE_DIR", cache)
            .env("TERM", term)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("util-linux `script` provides the pseudo-terminal");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let output = Arc::new(Mutex::new(String::new()));
        let sink = output.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Self {
            child,
            stdin,
            output,
        }
    }

    fn send(&mut self, line: &str) {
        write!(self.stdin, "{line}\r").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Waits until `needle` has appeared `count` times.
    fn wait_for(&self, needle: &str, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let seen = self.output.lock().unwrap().matches(needle).count();
            if seen >= count {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {needle:?} x{count} in:\n{}",
                self.output.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn console_session_through_a_pty() {
    let fake = Fake::start(Script::new(vec![
        ScriptedTurn::text("A42 is ready.").delayed(1500),
        ScriptedTurn::tool_call("read-1", "read_artifact", json!({"id": "A42"})),
        ScriptedTurn::text("Verified."),
    ]));
    let setup = Setup::new();
    std::fs::copy(guest("artifact_ready.wasm"), setup.path("verifier.wasm")).unwrap();
    let config = base_config(&fake.base_url(), 6)
        + "\n[loop_policy]\nmax_recovery_attempts = 2\n\n[tenants.acme]\nartifact_root = \"workspace\"\ncompletion = \"verifier.wasm\"\n";
    let config = setup.write("verdict.toml", &config);
    let policy = setup.write("policy.json", r#"{"max_recovery_attempts": 1}"#);
    let conversation = setup.path("conversation.json");
    let command = format!(
        "{} console --config {}",
        env!("CARGO_BIN_EXE_verdict"),
        config.display()
    );
    let mut pty = Pty::spawn(&command, &setup.path("cache"));
    pty.wait_for("verdict> ", 1);

    // A task; while its first model call is pending, /policy set is refused.
    pty.send("Verify that artifact A42 is ready.");
    pty.send(&format!("/policy set {}", policy.display()));
    pty.wait_for("refused: an execution is running", 1);
    pty.wait_for("[verdict] outcome: completed (exit 0)", 1);

    pty.send("/context loop");
    pty.wait_for("stopping reason: completed", 1);
    pty.wait_for("recovery: 1/2 attempts used", 1);
    pty.wait_for("diagnostics: {\"execution_id\"", 1);

    // Idle now: the override applies, in memory.
    pty.send(&format!("/policy set {}", policy.display()));
    pty.wait_for("applied to the next execution (in memory only", 1);
    pty.send("/policy show");
    pty.wait_for("\"max_recovery_attempts\":1,", 1);

    pty.send(&format!("/save {}", conversation.display()));
    pty.wait_for("saved 6 messages", 1);
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&conversation).unwrap()).unwrap();
    assert_eq!(saved.as_array().unwrap().len(), 6);
    assert!(
        !saved.to_string().contains("max_recovery_attempts"),
        "no policy in it"
    );
    pty.send(&format!("/load {}", conversation.display()));
    pty.wait_for("loaded 6 messages", 1);

    // A fresh verifier on disk is picked up; a corrupt one is refused.
    std::fs::copy(guest("receipt_required.wasm"), setup.path("verifier.wasm")).unwrap();
    pty.send("/verifier reload");
    pty.wait_for("reloaded for the next execution", 1);
    std::fs::write(setup.path("verifier.wasm"), b"not wasm").unwrap();
    pty.send("/verifier reload");
    pty.wait_for("(the previous verifiers stay)", 1);

    pty.send("/quit");
    let status = pty.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let output = pty.output.lock().unwrap().clone();
    let reloaded = output
        .lines()
        .find(|l| l.contains("reloaded for the next execution"))
        .unwrap();
    assert!(!reloaded.contains("(unchanged)"), "{reloaded}");
    assert_eq!(fake.requests(), 3);
}

impl Pty {
    /// Sends bytes as typed, without a line end (e.g. Ctrl-C).
    fn type_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }
}

/// `verdict console` on a piped stdin: each task runs to its end first.
fn piped_console(config: &Path, cache: &Path, input: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(["console", "--config", config.to_str().unwrap()])
        .env("VERDICT_CACHE_DIR", cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn context_loop_after_a_failed_task_does_not_say_running() {
    let fake = Fake::start(Script::new(vec![ScriptedTurn::fault(
        verdict::fake::Fault::Status {
            status: 401,
            message: "bad key".into(),
            retry_after_secs: None,
        },
    )]));
    let setup = Setup::new();
    let config = setup.write(
        "verdict.toml",
        &(base_config(&fake.base_url(), 6) + &support::verified(2)),
    );
    let out = piped_console(
        &config,
        &setup.path("cache"),
        "Verify that artifact A42 is ready.\n/context loop\n/quit\n",
    );
    assert!(out.contains("[verdict] outcome: error (exit 6)"), "{out}");
    let context = &out[out.find("[verdict] outcome: error").unwrap()..];
    assert!(context.contains("phase: ended by an error"), "{out}");
    assert!(
        context.contains("stopping reason: none (the execution failed: model call failed"),
        "{out}"
    );
    assert!(!context.contains("phase: running"), "{out}");
    assert!(!context.contains("still running"), "{out}");
    assert!(context.contains("diagnostics: {\"execution_id\""), "{out}");
}

#[test]
fn context_loop_after_a_cancelled_task_does_not_say_running() {
    let fake = Fake::start(Script::new(vec![
        ScriptedTurn::text("slow").delayed(20_000),
    ]));
    let setup = Setup::new();
    let config = setup.write(
        "verdict.toml",
        &(base_config(&fake.base_url(), 6) + &support::verified(2)),
    );
    let command = format!(
        "{} console --config {}",
        env!("CARGO_BIN_EXE_verdict"),
        config.display()
    );
    let mut pty = Pty::spawn_on(&command, &setup.path("cache"), "xterm");
    pty.wait_for("verdict> ", 1);
    pty.send("Verify that artifact A42 is ready.");
    let deadline = Instant::now() + Duration::from_secs(30);
    while fake.requests() == 0 {
        assert!(Instant::now() < deadline, "no model call");
        std::thread::sleep(Duration::from_millis(20));
    }
    pty.type_raw(b"\x03");
    pty.wait_for("cancelling the running execution", 1);
    pty.wait_for("[verdict] outcome: error (exit 6)", 1);
    pty.send("/context loop");
    pty.wait_for("diagnostics: {\"execution_id\"", 1);
    pty.send("/quit");
    let _ = pty.child.wait();
    let output = pty.output.lock().unwrap().clone();
    let context = &output[output.find("[verdict] outcome: error").unwrap()..];
    assert!(context.contains("phase: ended by cancellation"), "{output}");
    assert!(
        context.contains("stopping reason: none (the execution was cancelled)"),
        "{output}"
    );
    assert!(!context.contains("phase: running"), "{output}");
    assert!(!context.contains("still running"), "{output}");
}
