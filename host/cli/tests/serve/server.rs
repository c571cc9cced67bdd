//! A `verdict serve` process on 127.0.0.1 (any free port) with two
//! tenants, `alpha` and `beta`, each with its own artifact root and token.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const ALPHA: &str = "alpha-token-7c1e0b5a9d2f4e6a8b3c5d7e9f1a2b4c";
pub const BETA: &str = "beta-token-0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c";
pub const ADMIN: &str = "admin-token-5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b";

pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

pub fn packet(name: &str) -> Vec<u8> {
    std::fs::read(examples().join("packets").join(name)).unwrap()
}

/// The `[server]` section and both tenants; `extra` goes into `[server]`
/// and `alpha_extra` into `[tenants.alpha]`.
pub fn config(extra: &str, alpha_extra: &str) -> String {
    format!(
        r#"[server]
admin_token_hash = "{admin}"
{extra}

[tenants.alpha]
artifact_root = "alpha"
completion = "builtin:artifact-ready"
token_hash = "{alpha}"
{alpha_extra}

[tenants.beta]
artifact_root = "beta"
completion = "builtin:artifact-ready"
progress = "builtin:revision-progress"
token_hash = "{beta}"
"#,
        admin = verdict_server::hash_token(ADMIN),
        alpha = verdict_server::hash_token(ALPHA),
        beta = verdict_server::hash_token(BETA),
    )
}

/// [`config`] with alpha's completion checker spinning until its deadline
/// (the hostile `spin` guest), for checks that stay in flight.
pub fn spinning_config(extra: &str, alpha_extra: &str) -> String {
    config(extra, alpha_extra).replace(
        "completion = \"builtin:artifact-ready\"\ntoken_hash",
        &format!(
            "completion = {:?}\ntoken_hash",
            verdict_test_support::guests::HOSTILE_SPIN
        ),
    )
}

/// A running server and its directory; killed when dropped.
pub struct Served {
    child: Child,
    pub addr: SocketAddr,
    log: Arc<Mutex<String>>,
    pub dir: tempfile::TempDir,
    _cache: tempfile::TempDir,
}

impl Served {
    /// Starts `verdict serve` on `config` (written beside `alpha/` with A42
    /// ready and `beta/` with A42 not ready).
    pub fn start(config: &str) -> Self {
        Self::start_with(config, &[])
    }

    pub fn start_with(config: &str, args: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for (tenant, ready) in [("alpha", true), ("beta", false)] {
            std::fs::create_dir(dir.path().join(tenant)).unwrap();
            std::fs::write(
                dir.path().join(tenant).join("A42"),
                format!(r#"{{"id":"A42","ready":{ready}}}"#),
            )
            .unwrap();
        }
        std::fs::write(dir.path().join("verdict.toml"), config).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_verdict"))
            .args(["serve", "--config"])
            .arg(dir.path().join("verdict.toml"))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env("VERDICT_CACHE_DIR", cache.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(addr) = line.strip_prefix("verdict serve: listening on ") {
                    let _ = tx.send(addr.parse::<SocketAddr>().unwrap());
                }
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                panic!("verdict serve did not start: {}", log.lock().unwrap());
            }
        };
        Self {
            child,
            addr,
            log,
            dir,
            _cache: cache,
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Everything the server wrote to stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        nix::sys::signal::kill(pid, signal).unwrap();
    }

    /// Waits for the process to exit (at most `limit`).
    pub fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let started = Instant::now();
        while started.elapsed() < limit {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Polls until `log()` contains `text` (at most `limit`).
    /// Waits until `/metrics` (read as admin) shows every one of `series`;
    /// fails the test after `limit`.
    pub fn wait_metrics(&self, series: &[&str], limit: Duration) {
        let started = Instant::now();
        loop {
            let m = super::client::get(self.addr, "/metrics", Some(ADMIN)).text();
            if series.iter().all(|s| m.contains(s)) {
                return;
            }
            assert!(started.elapsed() < limit, "{series:?} not in:\n{m}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn wait_log(&self, text: &str, limit: Duration) -> bool {
        let started = Instant::now();
        while started.elapsed() < limit {
            if self.log().contains(text) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
