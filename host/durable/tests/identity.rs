//! Restate's request identity: a worker given a key serves only requests
//! signed by its private key. An unsigned request that speaks the service
//! protocol (a start message and an input, as Restate sends them) runs
//! nothing; the same request to an unprotected worker runs the handler (up
//! to its first journaled step, which a forger would acknowledge next);
//! a server signing with another key is refused; the matching server
//! drives the story through.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::time::Duration;

use verdict_durable::ExecutionState;
use verdict_policy::StopReason;

use crate::support::*;

/// A protobuf field: key (tag, wire type), then the value.
fn field(out: &mut Vec<u8>, tag: u32, wire: u8, value: &[u8]) {
    varint(out, u64::from(tag << 3 | u32::from(wire)));
    if wire == 2 {
        varint(out, value.len() as u64);
    }
    out.extend_from_slice(value);
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// A service-protocol frame: type and length in a big-endian u64 header.
fn frame(out: &mut Vec<u8>, ty: u16, message: &[u8]) {
    let header = (u64::from(ty) << 48) | message.len() as u64;
    out.extend_from_slice(&header.to_be_bytes());
    out.extend_from_slice(message);
}

/// What Restate sends to start `Conversation/{conversation}.execute`
/// with `submission`: a start message (one known entry, the complete
/// and empty state) and the input command carrying the submission.
fn invocation(conversation: &str, submission: &str) -> Vec<u8> {
    let mut start = Vec::new();
    field(&mut start, 1, 2, b"forged-invocation-id");
    field(&mut start, 2, 2, b"inv_forged");
    let mut known = Vec::new();
    varint(&mut known, 1);
    field(&mut start, 3, 0, &known);
    field(&mut start, 6, 2, conversation.as_bytes());
    let mut value = Vec::new();
    field(&mut value, 1, 2, submission.as_bytes());
    let mut input = Vec::new();
    field(&mut input, 14, 2, &value);
    let mut body = Vec::new();
    frame(&mut body, 0x0000, &start);
    frame(&mut body, 0x0400, &input);
    body
}

/// Posts the forged invocation to the worker on `port` over HTTP/2 (as
/// Restate does), unsigned, and reads the answer for at most a few
/// seconds (a served invocation streams on: dropping it early would cancel
/// the handler); the status and the bytes streamed back, `None` when no
/// answer came.
async fn forge(port: u16) -> Result<Option<(u16, Vec<u8>)>, String> {
    let client = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let submission = r#"{"execution_id":"ex-forged","prompt":"Verify A42 and write the report."}"#;
    let sent = client
        .post(format!(
            "http://127.0.0.1:{port}/invoke/Conversation/execute"
        ))
        .header("content-type", "application/vnd.restate.invocation.v5")
        .header("x-restate-signature-scheme", "unsigned")
        .body(invocation("conv-forged", submission))
        .send();
    let end = tokio::time::Instant::now() + Duration::from_secs(5);
    match tokio::time::timeout_at(end, sent).await {
        Ok(Ok(mut answer)) => {
            let status = answer.status().as_u16();
            let mut body = Vec::new();
            while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(end, answer.chunk()).await {
                body.extend_from_slice(&chunk);
            }
            Ok(Some((status, body)))
        }
        Ok(Err(error)) => Err(format!("{error:?}")),
        Err(_) => Ok(None),
    }
}

/// The forged request, without the server in between: refused by a
/// worker with a key (no model request, no tool file), while the same
/// bytes make a worker that allows unsigned requests run the handler — it
/// streams back its first journaled step (`step 0`, the execution's setup,
/// which the forger would acknowledge to drive it on) — so the refusal is
/// the key's doing, not a malformed request's.
#[tokio::test(flavor = "multi_thread")]
async fn an_unsigned_invocation_is_refused_and_runs_nothing() {
    let keys = tempfile::tempdir().unwrap();
    let key = keygen(&keys.path().join("identity.pem"));

    let ws = workspace();
    let (fake, url) = provider(vec![story("A42")]).await;
    let port = free_port();
    let _guarded = WorkerProc::start(port, &url, ws.path(), &key, &[]);
    let answer = forge(port).await;
    let status = answer
        .as_ref()
        .map(|a| a.as_ref().map(|(status, _)| *status));
    assert_eq!(
        status,
        Ok(Some(401)),
        "the worker with a key must refuse it"
    );
    let body = answer
        .ok()
        .flatten()
        .map(|(_, body)| body)
        .unwrap_or_default();
    assert!(!contains(&body, b"step 0"), "the refused handler ran");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(fake.requests().len(), 0, "no model request");
    for file in [
        "writes.log",
        "attempts.log",
        "reads.log",
        "checks.log",
        "report",
    ] {
        assert!(!ws.path().join(file).exists(), "{file} was written");
    }

    // The control: the same bytes to an unprotected worker run the loop.
    let open_ws = workspace();
    let (open_fake, open_url) = provider(vec![story("A42")]).await;
    let open_port = free_port();
    let mut open = WorkerProc::spawn_with(
        worker_binary()
            .args(["--listen", &format!("127.0.0.1:{open_port}")])
            .args(["--provider", &open_url])
            .arg("--workspace")
            .arg(open_ws.path())
            .arg("--allow-unsigned"),
        open_port,
    );
    let answer = forge(open_port).await;
    let ran = matches!(&answer, Ok(Some((200, body))) if contains(body, b"step 0"));
    assert!(
        ran,
        "the forged invocation did not run the handler of an unprotected worker: {answer:?}"
    );
    open.kill();
    drop(open_fake);
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A worker with no key and no `--allow-unsigned` refuses to start,
/// naming both settings; `--allow-unsigned` off loopback is refused too.
#[test]
fn a_worker_without_a_key_refuses_to_start() {
    let ws = workspace();
    let out = worker_binary()
        .args(["--listen", &format!("127.0.0.1:{}", free_port())])
        .args(["--provider", "http://127.0.0.1:9/v1"])
        .arg("--workspace")
        .arg(ws.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no request identity key"), "{err}");
    assert!(
        err.contains("identity_keys") && err.contains("allow_unsigned"),
        "{err}"
    );

    let out = worker_binary()
        .args(["--listen", "0.0.0.0:0"])
        .args(["--provider", "http://127.0.0.1:9/v1"])
        .arg("--workspace")
        .arg(ws.path())
        .arg("--allow-unsigned")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a loopback address"), "{err}");
}

/// A Restate server signing with another key than the worker's: the
/// worker refuses its discovery (registration fails) and its invocations
/// (an execution submitted while the wrong worker holds the port runs
/// nothing); once the worker with the server's key takes the port, the
/// same execution runs through the story to completion.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_with_another_key_is_refused_and_the_matching_one_runs_the_story() {
    let Some(restate) = Restate::start() else {
        return;
    };
    let client = restate.client();
    let keys = tempfile::tempdir().unwrap();
    let other = keygen(&keys.path().join("other.pem"));
    assert_ne!(other, restate.key);
    let ws = workspace();
    let (fake, url) = provider(vec![story("A42")]).await;
    let port = free_port();

    // Discovery signed with the server's key, refused by the worker.
    let mut worker = WorkerProc::start(port, &url, ws.path(), &other, &[]);
    let url_of_worker = worker.url();
    let refused = client.register(&url_of_worker).await;
    let error = refused.expect_err("a worker with another key must refuse discovery");
    assert!(error.to_string().contains("401"), "{error}");

    // Registered through the right worker, then the wrong one takes over.
    worker.kill();
    let mut worker = WorkerProc::start(port, &url, ws.path(), &restate.key, &[]);
    register(&client, &worker).await;
    worker.kill();
    let _wrong = WorkerProc::start(port, &url, ws.path(), &other, &[]);
    let execution = submit(&client, "conv-1", "Verify A42 and write the report.").await;
    // Restate keeps retrying the invocation; the worker refuses each try.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        fake.requests().len(),
        0,
        "the wrong key's worker ran a model call"
    );
    assert!(!ws.path().join("writes.log").exists());
    assert!(!ws.path().join("checks.log").exists());
    drop(_wrong);

    // The worker with the server's key: the same execution, to the end.
    let _right = WorkerProc::start(port, &url, ws.path(), &restate.key, &[]);
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
