//! A worker serving TLS: Restate reaches it at an `https://` URL (trusting
//! the worker's self-signed certificate), its signed requests run the
//! story to completion, and `/readyz` answers over HTTPS too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::path::Path;
use std::process::Command;

use verdict_durable::ExecutionState;
use verdict_policy::StopReason;

use crate::support::*;

/// A self-signed certificate for 127.0.0.1 (not a CA: rustls refuses a CA
/// certificate as a server's) and its key, by openssl.
fn certificate(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let out = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(out.status.success(), "openssl: {out:?}");
    (cert, key)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tls_worker_is_reached_over_https_and_runs_the_story() {
    let certs = tempfile::tempdir().unwrap();
    let (cert, key) = certificate(certs.path());
    let Some(restate) = Restate::start_trusting(Some(&cert)) else {
        return;
    };
    let client = restate.client();
    let ws = workspace();
    let (fake, url) = provider(vec![story("A42")]).await;
    let port = free_port();
    let _worker = WorkerProc::start(
        port,
        &url,
        ws.path(),
        &restate.key,
        &["--tls", cert.to_str().unwrap(), key.to_str().unwrap()],
    );

    // HTTPS with the certificate trusted, HTTP/1.1 and HTTP/2 by ALPN.
    let pem = std::fs::read(&cert).unwrap();
    let https = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .build()
        .unwrap();
    let ready = https
        .get(format!("https://127.0.0.1:{port}/readyz"))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status().as_u16(), 200);
    // Plain HTTP on the TLS port is not served.
    let plain = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}/readyz"))
        .send()
        .await;
    assert!(plain.is_err() || plain.unwrap().status().as_u16() != 200);

    let end = std::time::Instant::now() + WAIT;
    while let Err(e) = client.register(&format!("https://127.0.0.1:{port}")).await {
        assert!(std::time::Instant::now() < end, "register over https: {e}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let execution = submit(&client, "conv-tls", "Verify A42 and write the report.").await;
    let record = finished(&client, &execution).await;
    assert_eq!(record.state, ExecutionState::Finished, "{record:?}");
    assert_eq!(
        record.stop_reason(),
        Some(StopReason::Completed),
        "{record:?}"
    );
    assert_eq!(
        lines(ws.path(), "writes.log"),
        vec![format!("{execution}:1")]
    );
    assert_eq!(fake.requests().len(), 4);
}
