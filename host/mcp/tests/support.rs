//! Installing and starting the servers the tests use.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use verdict_mcp::ServerConfig;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Installs the servers once per test binary (the script is idempotent and
/// cached); `None` (the tests skip, saying so) when it cannot, unless
/// `VERDICT_REQUIRE_MCP=1`, as in CI.
fn installed() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        let status = Command::new("bash")
            .arg(root().join("scripts/mcp-dev.sh"))
            .arg("install")
            .status();
        let ok = matches!(status, Ok(s) if s.success());
        if !ok {
            assert!(
                std::env::var("VERDICT_REQUIRE_MCP").as_deref() != Ok("1"),
                "scripts/mcp-dev.sh install failed and VERDICT_REQUIRE_MCP=1"
            );
            eprintln!("SKIPPED: the MCP servers could not be installed (npm, python3?)");
        }
        ok
    })
}

fn bin(name: &str) -> Option<PathBuf> {
    if !installed() {
        return None;
    }
    let out = Command::new("bash")
        .arg(root().join("scripts/mcp-dev.sh"))
        .args(["bin", name])
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    path.exists().then_some(path)
}

/// `@modelcontextprotocol/server-everything` over stdio.
pub fn everything() -> Option<ServerConfig> {
    let script = bin("server-everything")?;
    Some(ServerConfig::stdio(
        "everything",
        "node",
        vec![script.display().to_string(), "stdio".into()],
    ))
}

/// `@modelcontextprotocol/server-filesystem` rooted at `dir`.
pub fn filesystem(dir: &Path) -> Option<ServerConfig> {
    let script = bin("server-filesystem")?;
    Some(ServerConfig::stdio(
        "fs",
        "node",
        vec![script.display().to_string(), dir.display().to_string()],
    ))
}

/// `mcp-server-time` (Python, from PyPI).
pub fn time() -> Option<ServerConfig> {
    let program = bin("mcp-server-time")?;
    Some(ServerConfig::stdio(
        "time",
        program,
        vec!["--local-timezone".into(), "UTC".into()],
    ))
}

/// Our faulty server in `mode`, logging what it receives to `log`.
pub fn faulty(mode: &str, log: &Path) -> ServerConfig {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fault_server.py");
    let mut config = ServerConfig::stdio(
        "fault",
        "python3",
        vec![script.display().to_string(), mode.into()],
    );
    config
        .env
        .insert("FAULT_LOG".into(), log.display().to_string());
    config
}

/// server-everything in its streamable HTTP mode on a loopback port; the
/// process is killed when the guard drops.
pub struct HttpEverything {
    child: std::process::Child,
    /// The endpoint.
    pub url: String,
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HttpEverything {
    /// A configuration of this server.
    pub fn config(&self) -> ServerConfig {
        ServerConfig::http("everything", self.url.clone())
    }
}

/// Starts server-everything over streamable HTTP (`None`: not installed).
pub fn everything_http() -> Option<HttpEverything> {
    let script = bin("server-everything")?;
    let preload = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loopback.cjs");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("node")
        .arg("--require")
        .arg(&preload)
        .arg(&script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let server = HttpEverything {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(server);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("server-everything did not listen on {port}");
}
