//! The WASI interfaces linked deny-all grant nothing at run time: a guest
//! that opens a file, connects or sends on a socket, resolves a name or
//! sends an HTTP request (`tests/guests/wasi-deny`) gets a WASI error back,
//! while a real server listens on 127.0.0.1 and never sees it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::net::{TcpListener, UdpSocket};
use verdict_policy::{CheckContext, Verdict};
use verdict_test_support::{
    assert_good_verifier_still_works, check_packet, guests, load, read_parts, ready_tenant,
};

/// Runs the guest on `attempt` (see the guest's docs) and returns its
/// verdict, which must be a refusal.
fn attempt(attempt: &str) -> Verdict {
    let (tenant, _) = ready_tenant("wasi-deny");
    let mut parts = read_parts();
    parts.output_text = attempt.to_owned();
    let verdict = load(guests::HOSTILE_WASI_DENY)
        .check(&tenant, &check_packet(parts), &CheckContext::new())
        .result
        .unwrap_or_else(|e| panic!("{attempt}: the guest answers: {e}"));
    assert!(!verdict.complete, "{attempt}: {verdict:?}");
    assert_eq!(verdict.feedback.as_deref(), Some("refused"), "{attempt}");
    verdict
}

fn reason(verdict: &Verdict) -> &str {
    verdict.reason.as_deref().unwrap_or_default()
}

/// A listener that must never see a connection.
fn listener() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    (listener, addr)
}

fn assert_never_connected(listener: &TcpListener) {
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the guest reached the host's listener: {other:?}"),
    }
}

#[test]
fn a_file_cannot_be_opened_without_preopens() {
    // There is a file, and the host process can read it.
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "secret").unwrap();
    let verdict = attempt(&format!("file {}", secret.display()));
    // No preopened directory (else the guest answers "escaped"), and the
    // path resolves against none.
    assert!(reason(&verdict).starts_with("NotFound"), "{verdict:?}");
    assert_good_verifier_still_works();
}

#[test]
fn a_tcp_connection_is_refused() {
    let (listener, addr) = listener();
    let verdict = attempt(&format!("tcp {addr}"));
    assert!(
        reason(&verdict).starts_with("PermissionDenied"),
        "{verdict:?}"
    );
    assert_never_connected(&listener);
}

#[test]
fn a_udp_datagram_is_refused() {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.set_nonblocking(true).unwrap();
    let addr = socket.local_addr().unwrap();
    let verdict = attempt(&format!("udp {addr}"));
    assert!(
        reason(&verdict).starts_with("PermissionDenied"),
        "{verdict:?}"
    );
    let mut buf = [0u8; 16];
    match socket.recv_from(&mut buf) {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the guest reached the host's socket: {other:?}"),
    }
}

#[test]
fn a_name_cannot_be_resolved() {
    let verdict = attempt("lookup localhost:80");
    // wasi-libc maps `permanent-resolver-failure` to an EAI error, which
    // Rust's std reports as an uncategorized error.
    assert!(!reason(&verdict).starts_with("escaped"), "{verdict:?}");
    assert!(reason(&verdict).contains("failed to lookup"), "{verdict:?}");
}

#[test]
fn an_http_request_is_refused() {
    let (listener, addr) = listener();
    let verdict = attempt(&format!("http {addr}"));
    assert_eq!(
        reason(&verdict),
        "response: ErrorCode::HttpRequestDenied",
        "{verdict:?}"
    );
    assert_never_connected(&listener);
    assert_good_verifier_still_works();
}
