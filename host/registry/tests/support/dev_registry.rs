//! A real registry on 127.0.0.1 for the tests: Debian's docker-registry,
//! started through `scripts/registry-dev.sh run` (installed by its
//! `install` when missing) in a temporary directory, stopped on drop.
//! Shared by the registry crate's tests and the CLI's.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The script beside the workspace root.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|d| d.join("scripts/registry-dev.sh").is_file())
        .expect("scripts/registry-dev.sh above the crate")
        .join("scripts/registry-dev.sh")
}

fn on_path(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// True once docker-registry, skopeo and htpasswd are installed (tried
/// once per process, bounded); false, with the reason printed, when they
/// cannot be.
pub fn installed() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        if ["docker-registry", "skopeo", "htpasswd"].iter().all(|p| on_path(p)) {
            return true;
        }
        let out = Command::new("timeout")
            .args(["300", "bash"])
            .arg(script())
            .arg("install")
            .output();
        let ok = ["docker-registry", "skopeo", "htpasswd"].iter().all(|p| on_path(p));
        // CI installs them first: there a missing registry is a failure.
        assert!(
            ok || std::env::var_os("VERDICT_REGISTRY_TESTS").is_none_or(|v| v != "required"),
            "VERDICT_REGISTRY_TESTS=required but docker-registry is not installed"
        );
        if !ok {
            eprintln!(
                "SKIPPED: docker-registry cannot be installed here ({}); run `scripts/registry-dev.sh install` as root",
                out.map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                    .unwrap_or_else(|e| e.to_string())
            );
        }
        ok
    })
}

/// A registry process and its storage.
pub struct DevRegistry {
    child: Option<Child>,
    pub dir: tempfile::TempDir,
    pub port: u16,
    pub auth: Option<(String, String)>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl DevRegistry {
    /// Starts one (with htpasswd basic auth when `auth` is given); `None`
    /// when the registry cannot be installed here.
    pub fn start(auth: Option<(&str, &str)>) -> Option<Self> {
        Self::start_in(tempfile::tempdir().unwrap(), auth)
    }

    /// Starts one serving HTTPS with a self-signed certificate for
    /// 127.0.0.1 (its PEM at [`DevRegistry::certificate`]).
    pub fn start_tls(auth: Option<(&str, &str)>) -> Option<Self> {
        if !installed() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
            ])
            .args(["-nodes", "-days", "2", "-subj", "/CN=verdict-dev"])
            .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
            .args(["-addext", "basicConstraints=critical,CA:FALSE"])
            .arg("-keyout")
            .arg(dir.path().join("tls.key"))
            .arg("-out")
            .arg(dir.path().join("tls.crt"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "openssl: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Self::start_in(dir, auth)
    }

    /// The certificate of a [`DevRegistry::start_tls`] registry.
    pub fn certificate(&self) -> PathBuf {
        self.dir.path().join("tls.crt")
    }

    fn start_in(dir: tempfile::TempDir, auth: Option<(&str, &str)>) -> Option<Self> {
        if !installed() {
            return None;
        }
        let mut reg = Self {
            child: None,
            dir,
            port: 0,
            auth: auth.map(|(u, p)| (u.to_owned(), p.to_owned())),
        };
        for _ in 0..5 {
            reg.port = free_port();
            if reg.spawn() {
                return Some(reg);
            }
        }
        panic!("the registry did not start: {}", reg.log());
    }

    fn spawn(&mut self) -> bool {
        let mut cmd = Command::new("bash");
        cmd.arg(script())
            .arg("run")
            .arg(self.dir.path())
            .arg(self.port.to_string());
        if let Some((u, p)) = &self.auth {
            cmd.args([u, p]);
        }
        let log = std::fs::File::create(self.dir.path().join("log")).unwrap();
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(child) = self.child.as_mut()
                && child.try_wait().unwrap().is_some()
            {
                self.child = None;
                return false;
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.stop();
        false
    }

    /// Starts it again on the same port and storage.
    pub fn restart(&mut self) {
        self.stop();
        assert!(self.spawn(), "the registry did not restart: {}", self.log());
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `oci://127.0.0.1:PORT/REPO_AND_TAG`.
    pub fn reference(&self, repo_and_tag: &str) -> String {
        format!("oci://{}/{repo_and_tag}", self.addr())
    }

    /// The storage file of a blob (`sha256:…`).
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.dir
            .path()
            .join("data/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    /// Stops the process (the storage stays until drop).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for DevRegistry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Every file under `dir` (none when it does not exist).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Stands in for a registry that hangs: accepts connections on loopback
/// and never answers (until dropped).
pub struct Silent {
    pub addr: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Silent {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        listener.set_nonblocking(true).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok((stream, _)) = listener.accept() {
                    held.push(stream);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Self { addr, stop }
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}
