//! Checks handed to the check threads answered right under concurrency
//! (their cancellation: `abuse`), checks without check threads, and the
//! bounds of the thread counts and of the pool's resident bytes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::client::post;
use super::server::{ALPHA, BETA, Served, config, packet};
use std::process::Command;
use std::time::Duration;

#[test]
fn concurrent_checks_on_check_threads_get_their_own_answers() {
    let served = Served::start(&config(
        "http_threads = 2\ncheck_threads = 2\nkeep_resident_bytes = 16777216",
        "",
    ));
    let addr = served.addr;
    let callers: Vec<_> = (0..8)
        .map(|i| {
            std::thread::spawn(move || {
                let (tenant, token, ready) = if i % 2 == 0 {
                    ("alpha", ALPHA, true)
                } else {
                    ("beta", BETA, false)
                };
                for _ in 0..25 {
                    let reply = post(
                        addr,
                        &format!("/v1/tenants/{tenant}/completion"),
                        Some(token),
                        &packet("ready.json"),
                    );
                    assert_eq!(reply.status, 200, "{}", reply.text());
                    let v = reply.json();
                    assert_eq!(v["tenant"], tenant);
                    assert_eq!(v["verdict"]["complete"], ready, "{v}");
                }
            })
        })
        .collect();
    for caller in callers {
        caller.join().unwrap();
    }
    served.wait_metrics(
        &[
            r#"verdict_checks_total{tenant="alpha",role="completion",status="complete"} 100"#,
            r#"verdict_checks_total{tenant="beta",role="completion",status="not_complete"} 100"#,
            r#"verdict_checks_in_flight{tenant="alpha"} 0"#,
        ],
        Duration::from_secs(5),
    );
}

#[test]
fn checks_run_on_their_connections_threads_with_no_check_threads() {
    let served = Served::start(&config("check_threads = 0", ""));
    let addr = served.addr;
    let callers: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                for _ in 0..10 {
                    let reply = post(
                        addr,
                        "/v1/tenants/alpha/completion",
                        Some(ALPHA),
                        &packet("ready.json"),
                    );
                    assert_eq!(reply.json()["verdict"]["complete"], true);
                }
            })
        })
        .collect();
    for caller in callers {
        caller.join().unwrap();
    }
}

#[test]
fn thread_counts_and_resident_bytes_out_of_bounds_are_refused_with_the_field_named() {
    for (line, says) in [
        ("http_threads = 0", "must be positive"),
        ("http_threads = 257", "must be at most 256"),
        ("check_threads = 100000", "must be at most 256"),
        (
            "keep_resident_bytes = 268435457",
            "must be at most 268435456",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        for tenant in ["alpha", "beta"] {
            std::fs::create_dir(dir.path().join(tenant)).unwrap();
        }
        let file = dir.path().join("verdict.toml");
        std::fs::write(&file, config(line, "")).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_verdict"))
            .args(["serve", "--config"])
            .arg(&file)
            .args(["--listen", "127.0.0.1:0"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{line}: {stderr}");
        let field = line.split(' ').next().unwrap();
        assert!(
            stderr.contains(field) && stderr.contains(says),
            "{line}: {stderr}"
        );
    }
}
