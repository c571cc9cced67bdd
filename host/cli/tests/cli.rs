//! End-to-end tests of the `verdict` binary: verdicts, exit codes, JSON
//! shape, and one-line errors for bad input.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn verdict(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(args)
        .env("VERDICT_CACHE_DIR", cache)
        .output()
        .unwrap()
}

fn check(packet: &str, extra: &[&str], cache: &Path) -> Output {
    let packet = examples().join("packets").join(packet);
    let artifacts = examples().join("artifacts");
    let mut args = vec![
        "check",
        "--verifier",
        "builtin:artifact-ready",
        "--packet",
        packet.to_str().unwrap(),
        "--artifacts",
        artifacts.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    verdict(&args, cache)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn complete_packet_exits_zero_and_prints_the_verdict_and_metrics() {
    let cache = tempfile::tempdir().unwrap();
    let out = check("ready.json", &[], cache.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("verdict: complete"), "{text}");
    assert!(text.contains("artifact reads 1"), "{text}");
}

#[test]
fn premature_packet_exits_one_with_feedback_in_json() {
    let cache = tempfile::tempdir().unwrap();
    let out = check("premature.json", &["--json"], cache.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["status"], "not_complete");
    assert_eq!(json["verdict"]["complete"], false);
    assert_eq!(
        json["verdict"]["feedback"],
        "Read and verify artifact A42 before finishing."
    );
    assert_eq!(json["tenant"], "default");
    assert_eq!(json["verifierDigest"].as_str().unwrap().len(), 64);
    assert!(json["metrics"]["fuelUsed"].as_u64().unwrap() > 0);
}

#[test]
fn checker_errors_exit_three_with_a_typed_code() {
    let cache = tempfile::tempdir().unwrap();
    // Fuel too small for any check to finish.
    let out = check("ready.json", &["--fuel", "100", "--json"], cache.path());
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["status"], "checker_error");
    assert_eq!(json["error"]["code"], "out_of_fuel");

    let bad = cache.path().join("bad.wasm");
    std::fs::write(&bad, b"\0asm\x01\0\0\0").unwrap();
    let packet = examples().join("packets/ready.json");
    let out = verdict(
        &[
            "check",
            "--verifier",
            bad.to_str().unwrap(),
            "--packet",
            packet.to_str().unwrap(),
        ],
        cache.path(),
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stdout(&out).contains("core WebAssembly module"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn bad_paths_and_malformed_packets_are_one_line_errors() {
    let cache = tempfile::tempdir().unwrap();
    let packet = examples().join("packets/ready.json");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "check".into(),
                "--verifier".into(),
                "/nonexistent/x.wasm".into(),
                "--packet".into(),
                packet.display().to_string(),
            ],
            "cannot read /nonexistent/x.wasm",
        ),
        (
            vec![
                "check".into(),
                "--verifier".into(),
                "builtin:artifact-ready".into(),
                "--packet".into(),
                "/nonexistent/p.json".into(),
            ],
            "cannot read /nonexistent/p.json",
        ),
        (
            vec![
                "check".into(),
                "--verifier".into(),
                "builtin:nope".into(),
                "--packet".into(),
                packet.display().to_string(),
            ],
            "no built-in verifier `nope`",
        ),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = verdict(&args, cache.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(expected),
            "{err}"
        );
    }
    let malformed = cache.path().join("p.json");
    std::fs::write(&malformed, b"{\"executionId\": 5}").unwrap();
    let out = verdict(
        &[
            "check",
            "--verifier",
            "builtin:artifact-ready",
            "--packet",
            malformed.to_str().unwrap(),
        ],
        cache.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("is not a valid check packet"), "{err}");

    // A packet over a bound is refused as input, not cut and checked.
    let long = cache.path().join("long.json");
    let text = format!(
        r#"{{"executionId":"e","iteration":1,"outputText":"{}","observations":[],"observedToolCalls":0}}"#,
        "x".repeat(32_769)
    );
    std::fs::write(&long, text).unwrap();
    let out = verdict(
        &[
            "check",
            "--verifier",
            "builtin:artifact-ready",
            "--packet",
            long.to_str().unwrap(),
        ],
        cache.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("is not a valid check packet") && err.contains("32769 characters"),
        "{err}"
    );
}

#[test]
fn progress_key_and_inspect() {
    let cache = tempfile::tempdir().unwrap();
    let packet = examples().join("packets/ready.json");
    let artifacts = examples().join("artifacts");
    let out = verdict(
        &[
            "check",
            "--progress",
            "--verifier",
            "builtin:revision-progress",
            "--packet",
            packet.to_str().unwrap(),
            "--artifacts",
            artifacts.to_str().unwrap(),
            "--json",
        ],
        cache.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["status"], "progress_key");
    assert_eq!(json["progressKey"].as_str().unwrap().len(), 32);

    let out = verdict(
        &["inspect", "builtin:artifact-ready", "--json"],
        cache.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["kind"], "component");
    assert_eq!(json["roles"], serde_json::json!(["completion"]));
    assert_eq!(json["packed"], serde_json::json!(["completion"]));
    // The Rust sample needs no warm-up (its start-up is its instantiation).
    assert_eq!(json["warm_up"], false);
    assert!(json["rejected"].is_null());
}
