//! `examples/console-loop/run.sh`: the scripted console session runs offline,
//! blocks at the checkpoint, reloads a fresh verifier, completes, cleans up.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::process::Command;

#[test]
fn console_loop_example() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/console-loop/run.sh");
    let output = Command::new("bash")
        .arg(&script)
        .env("VERDICT", env!("CARGO_BIN_EXE_verdict"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let steps = [
        "[verdict] verdict: false (not complete) - no write call succeeded",
        "[verdict] outcome: stopped (exit 5)",
        "phase: input-needed",
        "input needed: the verifier still lacks evidence: Perform the write",
        "reloaded for the next execution: completion sha256:",
        "[verdict] tool call read_artifact (read-1) succeeded",
        "[verdict] verdict: true (complete) - artifact A42 is ready",
        "[verdict] outcome: completed (exit 0)",
        "saved 8 messages",
        "cleaned up ",
    ];
    crate::support::assert_in_order(&out, &steps);
    assert!(!out.contains("approv"), "no approval request is invented");
    let reload = out.lines().find(|l| l.contains("reloaded")).unwrap();
    assert!(!reload.contains("(unchanged)"), "{reload}");
    let dir = out
        .lines()
        .last()
        .unwrap()
        .trim_start_matches("cleaned up ");
    assert!(!Path::new(dir).exists(), "{dir} still exists");
}
