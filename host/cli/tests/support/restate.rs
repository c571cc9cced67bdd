//! A real Restate server on 127.0.0.1 for the `worker`/`submit`/`status`
//! tests, started through `scripts/restate-dev.sh run` (installed by its
//! `install`) in a temporary directory, signing its requests to workers
//! with its own request-identity key; killed on drop.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|d| d.join("scripts/restate-dev.sh").is_file())
        .expect("scripts/restate-dev.sh above the crate")
        .join("scripts/restate-dev.sh")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn answers(port: u16) -> bool {
    TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200)).is_ok()
}

fn wait_port(port: u16) {
    let end = Instant::now() + Duration::from_secs(60);
    while !answers(port) {
        assert!(Instant::now() < end, "nothing answers on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Installs the pinned server (bounded); false, with SKIPPED printed,
/// when it cannot be here, unless `VERDICT_RESTATE_TESTS=required`.
fn installed() -> bool {
    let out = Command::new("timeout")
        .args(["300", "bash"])
        .arg(script())
        .arg("install")
        .output();
    let ok = out.as_ref().is_ok_and(|o| o.status.success());
    assert!(
        ok || std::env::var_os("VERDICT_RESTATE_TESTS").is_none_or(|v| v != "required"),
        "VERDICT_RESTATE_TESTS=required but the Restate server is not installed: {out:?}"
    );
    if !ok {
        eprintln!(
            "SKIPPED: the Restate server cannot be installed here; run `scripts/restate-dev.sh install`"
        );
    }
    ok
}

/// A Restate server.
pub struct Restate {
    child: Option<Child>,
    dir: tempfile::TempDir,
    pub ingress: u16,
    pub admin: u16,
    node: u16,
    /// The public key of the server's request identity.
    pub key: String,
}

impl Restate {
    /// Starts one; `None` (SKIPPED printed) when it cannot be installed
    /// here, unless `VERDICT_RESTATE_TESTS=required`.
    pub fn start() -> Option<Self> {
        let mut restate = Self::prepare()?;
        restate.restart();
        Some(restate)
    }

    /// One with its ports, directory and key chosen, not started yet
    /// ([`Restate::restart`] starts it).
    pub fn prepare() -> Option<Self> {
        if !installed() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let key = keygen(&dir.path().join("identity.pem"));
        Some(Self {
            child: None,
            dir,
            ingress: free_port(),
            admin: free_port(),
            node: free_port(),
            key,
        })
    }

    /// Starts the server (again) on its data directory and ports.
    pub fn restart(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("log"))
            .unwrap();
        let child = Command::new("bash")
            .arg(script())
            .arg("run")
            .arg(self.dir.path())
            .args([self.ingress, self.admin, self.node].map(|p| p.to_string()))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        wait_port(self.admin);
        wait_port(self.ingress);
    }

    /// Kills the server (SIGKILL); waits until its ports are closed.
    pub fn crash(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        let end = Instant::now() + Duration::from_secs(60);
        while answers(self.admin) || answers(self.ingress) {
            assert!(Instant::now() < end, "the killed server still answers");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether `GET path` on the admin API answers 200.
    pub fn get(&self, path: &str) -> bool {
        get(self.admin, path).is_some_and(|(status, _)| status == 200)
    }

    /// The `[restate]` section for a worker listening on `listen`, taking
    /// this server's signed requests.
    pub fn section(&self, listen: u16) -> String {
        format!(
            "\n[restate]\ningress = \"http://127.0.0.1:{}\"\nadmin = \"http://127.0.0.1:{}\"\nlisten = \"127.0.0.1:{listen}\"\nidentity_keys = [\"{}\"]\n",
            self.ingress, self.admin, self.key
        )
    }
}

impl Drop for Restate {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `scripts/restate-dev.sh keygen FILE`: the public key of a new (or the
/// existing) request-identity key pair in FILE.
pub fn keygen(file: &Path) -> String {
    let out = Command::new("bash")
        .arg(script())
        .arg("keygen")
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "keygen: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// `GET path` over HTTP/1.1 on 127.0.0.1:`port`: the status and body,
/// `None` when nothing answers.
pub fn get(port: u16, path: &str) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = answer.get(9..12)?.parse().ok()?;
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Some((status, body))
}
