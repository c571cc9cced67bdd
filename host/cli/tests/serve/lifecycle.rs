//! The lifecycle: SIGTERM drains what was accepted, SIGHUP and the admin
//! route reload the configuration under load, `hash-token`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::client::{connect, get, post, read_reply, request, send};
use super::server::{ADMIN, ALPHA, Served, config, packet, spinning_config};
use nix::sys::signal::Signal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[test]
fn hash_token_prints_the_sha256_hex_as_its_last_line() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(["serve", "hash-token", ALPHA])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().last(),
        Some(verdict_server::hash_token(ALPHA).as_str())
    );
    assert_eq!(
        verdict_server::hash_token("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn sigterm_answers_every_accepted_request_then_exits_zero() {
    // Checks that spin to their 1.5 s deadline are in flight at SIGTERM.
    let text = spinning_config(
        "drain_grace_ms = 200",
        "[tenants.alpha.limits]\ntimeout_ms = 1500\nfuel = 100000000000000",
    );
    let mut served = Served::start(&text);
    let mut streams: Vec<_> = (0..6)
        .map(|_| {
            let mut s = connect(served.addr);
            send(
                &mut s,
                "POST",
                "/v1/tenants/alpha/completion",
                Some(ALPHA),
                &[],
                &packet("ready.json"),
            );
            s
        })
        .collect();
    let started = Instant::now();
    let in_flight = r#"verdict_checks_in_flight{tenant="alpha"} 6"#;
    while !get(served.addr, "/metrics", Some(ADMIN))
        .text()
        .contains(in_flight)
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the checks never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    served.signal(Signal::SIGTERM);
    for s in &mut streams {
        let reply = read_reply(s).unwrap();
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert_eq!(reply.json()["error"]["code"], "timeout");
    }
    let status = served.wait(Duration::from_secs(10)).expect("still running");
    assert_eq!(status.code(), Some(0), "{}", served.log());
    assert!(
        served.log().contains("verdict serve: draining"),
        "{}",
        served.log()
    );
    // Nothing listens any more.
    assert!(std::net::TcpStream::connect_timeout(&served.addr, Duration::from_secs(1)).is_err());
}

#[test]
fn a_reload_adds_a_tenant_under_load_and_a_bad_one_keeps_the_running_config() {
    let served = Served::start(&config("", ""));
    let addr = served.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let load: Vec<_> = (0..3)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut answered = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    let r = post(
                        addr,
                        "/v1/tenants/alpha/completion",
                        Some(ALPHA),
                        &packet("ready.json"),
                    );
                    assert_eq!(r.status, 200, "{}", r.text());
                    assert_eq!(r.json()["status"], "complete");
                    answered += 1;
                }
                answered
            })
        })
        .collect();
    const GAMMA: &str = "gamma-token-3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d";
    let before = post(
        addr,
        "/v1/tenants/gamma/completion",
        Some(GAMMA),
        &packet("ready.json"),
    );
    assert_eq!(before.status, 401);
    // SIGHUP: gamma appears.
    let mut text = config("", "");
    text.push_str(&format!(
        "\n[tenants.gamma]\nartifact_root = \"alpha\"\ncompletion = \"builtin:artifact-ready\"\ntoken_hash = \"{}\"\n",
        verdict_server::hash_token(GAMMA)
    ));
    std::fs::write(served.path("verdict.toml"), &text).unwrap();
    served.signal(Signal::SIGHUP);
    assert!(
        served.wait_log(
            "configuration reloaded (3 tenants)",
            Duration::from_secs(20)
        ),
        "{}",
        served.log()
    );
    let gamma = post(
        addr,
        "/v1/tenants/gamma/completion",
        Some(GAMMA),
        &packet("ready.json"),
    );
    assert_eq!(gamma.json()["status"], "complete", "{}", gamma.text());

    // A broken file: the reload is refused, with the reason; gamma stays.
    std::fs::write(
        served.path("verdict.toml"),
        text.replace("[tenants.gamma]", "[tenants.gamma]\nbogus = 1"),
    )
    .unwrap();
    let refused = post(addr, "/v1/admin/reload", Some(ADMIN), b"");
    assert_eq!(refused.status, 409, "{}", refused.text());
    assert_eq!(refused.code(), "reload_failed");
    assert!(
        refused.json()["message"]
            .as_str()
            .unwrap()
            .contains("bogus"),
        "{}",
        refused.text()
    );
    served.signal(Signal::SIGHUP);
    assert!(
        served.wait_log("reload refused", Duration::from_secs(20)),
        "{}",
        served.log()
    );
    let still = post(
        addr,
        "/v1/tenants/gamma/completion",
        Some(GAMMA),
        &packet("ready.json"),
    );
    assert_eq!(still.status, 200);
    // Through the admin route, back to two tenants.
    std::fs::write(served.path("verdict.toml"), config("", "")).unwrap();
    let ok = request(addr, "POST", "/v1/admin/reload", Some(ADMIN), &[], b"");
    assert_eq!(ok.json()["tenants"], 2, "{}", ok.text());
    assert_eq!(
        post(
            addr,
            "/v1/tenants/gamma/completion",
            Some(GAMMA),
            &packet("ready.json")
        )
        .status,
        401
    );

    stop.store(true, Ordering::Relaxed);
    let total: u32 = load.into_iter().map(|t| t.join().unwrap()).sum();
    assert!(total > 3, "{total}");
    let metrics = get(addr, "/metrics", Some(ADMIN)).text();
    assert!(metrics.contains("verdict_reloads_total 2"), "{metrics}");
    assert!(
        metrics.contains("verdict_reload_failures_total 2"),
        "{metrics}"
    );
}

#[test]
fn tls_serves_https_with_the_configured_certificate() {
    // A self-signed certificate for 127.0.0.1 (openssl and curl: the
    // machine's own tools).
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
        ])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let served = Served::start(&config(
        &format!("tls_cert = {:?}\ntls_key = {:?}", cert, key),
        "",
    ));
    let out = std::process::Command::new("curl")
        .args(["-sS", "--max-time", "20", "--cacert"])
        .arg(&cert)
        .args([
            "-H",
            &format!("Authorization: Bearer {ALPHA}"),
            "--data-binary",
        ])
        .arg(format!(
            "@{}",
            super::server::examples()
                .join("packets/ready.json")
                .display()
        ))
        .arg(format!(
            "https://{}/v1/tenants/alpha/completion",
            served.addr
        ))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["status"], "complete");
    // Plain HTTP on the TLS port gets no answer.
    let mut plain = connect(served.addr);
    send(&mut plain, "GET", "/healthz", None, &[], b"");
    assert!(read_reply(&mut plain).map_or(true, |r| r.status != 200));
}
