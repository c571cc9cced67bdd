//! What the service keeps true around reloads and at its edges: an upload
//! racing a reload is never lost, a verifier file rebuilt in place is read
//! again, tenant names need no escaping, and the remote checker reads a
//! bounded answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::client::{connect, get, post, read_reply, request};
use super::server::{ADMIN, ALPHA, Served, config, packet};
use std::io::{Read, Write};
use std::time::{Duration, Instant};
use verdict_test_support::guests;

fn served_digest(served: &Served) -> (String, String) {
    let v = get(served.addr, "/v1/tenants/alpha/verifiers", Some(ALPHA)).json();
    let completion = v["verifiers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "completion")
        .unwrap()
        .clone();
    (
        completion["digest"].as_str().unwrap().to_owned(),
        completion["origin"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn an_upload_whose_body_arrives_across_a_reload_is_the_verifier_served() {
    let served = Served::start(&config("", ""));
    let (builtin, _) = served_digest(&served);
    let good = std::fs::read(guests::GOOD_BOTH).unwrap();
    let half = good.len() / 2;
    let mut upload = connect(served.addr);
    upload
        .write_all(
            format!(
                "PUT /v1/tenants/alpha/verifiers/completion HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                 Connection: close\r\nAuthorization: Bearer {ADMIN}\r\n\
                 Content-Length: {}\r\n\r\n",
                good.len()
            )
            .as_bytes(),
        )
        .unwrap();
    upload.write_all(&good[..half]).unwrap();
    // The upload's handler has its headers; a reload completes meanwhile.
    std::thread::sleep(Duration::from_millis(200));
    let reload = post(served.addr, "/v1/admin/reload", Some(ADMIN), b"");
    assert_eq!(reload.status, 200, "{}", reload.text());
    upload.write_all(&good[half..]).unwrap();
    let answer = read_reply(&mut upload).unwrap();
    assert_eq!(answer.status, 200, "{}", answer.text());
    let uploaded = answer.json()["digest"].as_str().unwrap().to_owned();
    assert_ne!(uploaded, builtin);
    // What the answer said is what is served, and what checks run on.
    assert_eq!(served_digest(&served), (uploaded.clone(), "upload".into()));
    let check = post(
        served.addr,
        "/v1/tenants/alpha/completion",
        Some(ALPHA),
        &packet("ready.json"),
    );
    assert_eq!(check.json()["verifierDigest"], uploaded.as_str());
}

#[test]
fn a_reload_rereads_a_verifier_file_rebuilt_in_place_and_keeps_an_unchanged_one() {
    let wasm = tempfile::tempdir().unwrap();
    let file = wasm.path().join("completion.wasm");
    std::fs::copy(guests::ARTIFACT_READY, &file).unwrap();
    let text = config("", "").replacen(
        "completion = \"builtin:artifact-ready\"",
        &format!("completion = {:?}", file.display().to_string()),
        1,
    );
    let served = Served::start(&text);
    let (first, origin) = served_digest(&served);
    assert_eq!(origin, file.display().to_string());
    // Rebuilt in place: same path, same inode, other bytes.
    let rebuilt = std::fs::read(guests::GOOD_BOTH).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&file)
        .unwrap();
    f.write_all(&rebuilt).unwrap();
    drop(f);
    let reload = post(served.addr, "/v1/admin/reload", Some(ADMIN), b"");
    assert_eq!(reload.status, 200, "{}", reload.text());
    let (second, _) = served_digest(&served);
    assert_ne!(second, first, "the rebuilt file was not read again");

    // An upload stays across a reload while the file is unchanged...
    let up = request(
        served.addr,
        "PUT",
        "/v1/tenants/alpha/verifiers/completion",
        Some(ADMIN),
        &[],
        &std::fs::read(guests::ARTIFACT_READY).unwrap(),
    );
    assert_eq!(up.status, 200, "{}", up.text());
    let reload = post(served.addr, "/v1/admin/reload", Some(ADMIN), b"");
    assert_eq!(reload.status, 200, "{}", reload.text());
    assert_eq!(served_digest(&served).1, "upload");
    // ...and the file wins once it is rebuilt again.
    std::fs::copy(guests::ARTIFACT_READY, &file).unwrap();
    let reload = post(served.addr, "/v1/admin/reload", Some(ADMIN), b"");
    assert_eq!(reload.status, 200, "{}", reload.text());
    assert_eq!(served_digest(&served), (first, file.display().to_string()));
}

#[test]
fn tenant_names_a_metrics_label_would_have_to_escape_are_a_config_error() {
    for name in [r#"al\"pha"#, r"al\\pha", "al pha"] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("alpha")).unwrap();
        std::fs::create_dir(dir.path().join("beta")).unwrap();
        let text = config("", "").replacen("[tenants.alpha]", &format!("[tenants.\"{name}\"]"), 1);
        std::fs::write(dir.path().join("verdict.toml"), &text).unwrap();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(dir.path().join("verdict.toml"))
            .env("VERDICT_CACHE_DIR", dir.path().join("cache"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = status.unwrap_or_else(|| panic!("{name}: served: {stderr}"));
        assert!(!status.success(), "{name}: {stderr}");
        assert!(
            stderr.contains("a tenant name is 1 to 64 ASCII letters, digits"),
            "{name}: {stderr}"
        );
    }
    // A reload bringing such a name is refused; the running tenants stay.
    let served = Served::start(&config("", ""));
    std::fs::write(
        served.path("verdict.toml"),
        config("", "").replacen("[tenants.beta]", "[tenants.\"be\\\"ta\"]", 1),
    )
    .unwrap();
    let refused = post(served.addr, "/v1/admin/reload", Some(ADMIN), b"");
    assert_eq!(refused.status, 409, "{}", refused.text());
    assert!(
        refused.text().contains("a tenant name is"),
        "{}",
        refused.text()
    );
    let metrics = get(served.addr, "/metrics", Some(ADMIN)).text();
    assert!(!metrics.contains("be\\\"ta"), "{metrics}");
}

/// A fake `verdict serve` answering every request with `head` then
/// `body_bytes` of JSON (a progress key padded with spaces).
fn fake_server(head: &'static str, body_bytes: usize) -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { return };
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                let mut seen = Vec::new();
                // Headers and the (small) packet body.
                s.set_read_timeout(Some(Duration::from_millis(500)))
                    .unwrap();
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    if seen.ends_with(b"}") {
                        break;
                    }
                }
                let json = br#"{"status":"progress_key","progressKey":"k"}"#;
                let _ = s.write_all(head.as_bytes());
                let _ = s.write_all(json);
                let pad = vec![b' '; 64 * 1024];
                let mut sent = json.len();
                while sent < body_bytes {
                    if s.write_all(&pad).is_err() {
                        return;
                    }
                    sent += pad.len();
                }
            });
        }
    });
    addr
}

fn remote_key(addr: std::net::SocketAddr) -> Result<String, String> {
    use verdict::{CheckContext, CheckPacket, ProgressChecker, RemoteChecker};
    let checker = RemoteChecker::new(&format!("http://{addr}/v1/tenants/alpha"), None).unwrap();
    let text = String::from_utf8(packet("ready.json")).unwrap();
    let packet = CheckPacket::from_json(&text).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let ctx = CheckContext::new().with_deadline(Instant::now() + Duration::from_secs(20));
        checker
            .progress_key(&packet, &ctx)
            .await
            .map_err(|e| e.to_string())
    })
}

#[test]
fn the_remote_checker_refuses_an_answer_over_its_bound() {
    // A small answer is read.
    let small = fake_server(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
        0,
    );
    assert_eq!(remote_key(small), Ok("k".to_owned()));
    // 8 MiB of a valid answer (padded) sent to EOF: refused, not read.
    let sent = fake_server(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
        8 * 1024 * 1024,
    );
    let err = remote_key(sent).unwrap_err();
    assert!(err.contains("over 1048576 bytes"), "{err}");
    // 1 GiB announced: refused at its headers.
    let announced = fake_server(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n",
        2 * 1024 * 1024,
    );
    let err = remote_key(announced).unwrap_err();
    assert!(err.contains("over 1048576 bytes"), "{err}");
}
