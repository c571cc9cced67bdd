//! A real Restate server on 127.0.0.1 for the `worker`/`submit`/`status`
//! tests, started through `scripts/restate-dev.sh run` (installed by its
//! `install`) in a temporary directory, killed on drop.

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

fn wait_port(port: u16) {
    let end = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200))
        .is_err()
    {
        assert!(Instant::now() < end, "nothing answers on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A Restate server.
pub struct Restate {
    child: Child,
    _dir: tempfile::TempDir,
    pub ingress: u16,
    pub admin: u16,
}

impl Restate {
    /// Starts one; `None` (SKIPPED printed) when it cannot be installed
    /// here, unless `VERDICT_RESTATE_TESTS=required`.
    pub fn start() -> Option<Self> {
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
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let (ingress, admin, node) = (free_port(), free_port(), free_port());
        let child = Command::new("bash")
            .arg(script())
            .arg("run")
            .arg(dir.path())
            .args([ingress, admin, node].map(|p| p.to_string()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_port(admin);
        wait_port(ingress);
        Some(Self {
            child,
            _dir: dir,
            ingress,
            admin,
        })
    }

    /// Whether `GET path` on the admin API answers 200.
    pub fn get(&self, path: &str) -> bool {
        use std::io::{Read, Write};
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.admin)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        if stream.write_all(request.as_bytes()).is_err() {
            return false;
        }
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer.starts_with("HTTP/1.1 200")
    }

    /// The `[restate]` section for a worker listening on `listen`.
    pub fn section(&self, listen: u16) -> String {
        format!(
            "\n[restate]\ningress = \"http://127.0.0.1:{}\"\nadmin = \"http://127.0.0.1:{}\"\nlisten = \"127.0.0.1:{listen}\"\n",
            self.ingress, self.admin
        )
    }
}

impl Drop for Restate {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
