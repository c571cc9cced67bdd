//! The MCP servers the tests run: installed by `scripts/mcp-dev.sh`
//! (pinned, cached in target/mcp-tools), and the repository's own
//! fixtures written on the official SDKs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Installs the servers once per process; false (the caller prints
/// SKIPPED) when they cannot be installed, unless `VERDICT_REQUIRE_MCP=1`.
pub fn installed() -> bool {
    static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *INSTALLED.get_or_init(|| {
        let ok = Command::new("bash")
            .arg(root().join("scripts/mcp-dev.sh"))
            .arg("install")
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok || !required(),
            "scripts/mcp-dev.sh install failed and VERDICT_REQUIRE_MCP=1"
        );
        if !ok {
            eprintln!("SKIPPED: the MCP servers could not be installed (npm?)");
        }
        ok
    })
}

/// An installed server's entry point (`server-everything`,
/// `server-filesystem`, `mcp-server-time`), or `None` when not installed.
pub fn bin(name: &str) -> Option<PathBuf> {
    if !installed() {
        return None;
    }
    let out = Command::new("bash")
        .arg(root().join("scripts/mcp-dev.sh"))
        .args(["bin", name])
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let found = path.exists();
    assert!(
        found || !required(),
        "{name} is not at {} and VERDICT_REQUIRE_MCP=1",
        path.display()
    );
    found.then_some(path)
}

fn required() -> bool {
    std::env::var("VERDICT_REQUIRE_MCP").as_deref() == Ok("1")
}

/// The Python of the venv the servers are installed in (it has the
/// official `mcp` SDK the fixtures are written on).
pub fn python() -> Option<PathBuf> {
    let time = bin("mcp-server-time")?;
    let python = time.parent()?.join("python");
    python.exists().then_some(python)
}

/// A fixture server in host/cli/tests/fixtures.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}
