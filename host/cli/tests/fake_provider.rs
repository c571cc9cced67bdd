//! `verdict fake-provider` serves the scripted model over real HTTP on
//! loopback, in the OpenAI Chat Completions wire format among others.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn serves_the_script_on_loopback() {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scripts/feedback-agent.json");
    let mut child = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_verdict"))
            .args(["fake-provider", "--script", script.to_str().unwrap()])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let first = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("base URLs printed");
    let base = first
        .strip_prefix("OpenAiChat http://")
        .expect("OpenAI chat first");
    let authority = base.trim_end_matches("/v1");
    assert!(authority.starts_with("127.0.0.1:"), "{authority}");

    let body = r#"{"model":"m","messages":[{"role":"user","content":"Verify artifact A42."}]}"#;
    let mut stream = TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAuthorization: Bearer test\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("Reading the artifact."), "{response}");
    assert!(response.contains("read_artifact"), "{response}");
}
