//! Shared helpers of the `run`, `demo` and configuration tests: a fake
//! provider on loopback, a config in a temporary directory, the binary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use verdict_providers::Protocol;
use verdict_providers::fake::{FakeProvider, Script};

/// A fake provider served by its own runtime while the binary runs.
pub struct Fake {
    pub runtime: tokio::runtime::Runtime,
    pub server: FakeProvider,
}

impl Fake {
    pub fn start(script: Script) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(FakeProvider::start(script)).unwrap();
        Self { runtime, server }
    }

    pub fn base_url(&self) -> String {
        self.server.base_url(Protocol::OpenAiChat)
    }

    pub fn requests(&self) -> usize {
        self.server.requests().len()
    }
}

/// A temporary directory with `workspace/A42` ready and a config file.
pub struct Setup {
    pub dir: tempfile::TempDir,
}

impl Setup {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("workspace")).unwrap();
        std::fs::write(
            dir.path().join("workspace/A42"),
            r#"{"id":"A42","ready":true}"#,
        )
        .unwrap();
        Self { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `text` as `name` and returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// The connector and agent sections pointing at `base_url`.
pub fn base_config(base_url: &str, max_iterations: u32) -> String {
    format!(
        r#"[connectors.fake]
protocol = "openai-chat"
base_url = "{base_url}"
no_api_key = true

[agent]
connector = "fake"
model = "test-model"
max_iterations = {max_iterations}

[tools]
workspace = "workspace"
"#
    )
}

/// A loop policy and an `artifact-ready` tenant.
pub fn verified(max_recovery_attempts: u32) -> String {
    format!(
        r#"
[loop_policy]
max_recovery_attempts = {max_recovery_attempts}

[tenants.acme]
artifact_root = "workspace"
completion = "builtin:artifact-ready"
"#
    )
}

/// Runs the built binary with `args`, with a private verifier cache.
pub fn verdict(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(args)
        .env("VERDICT_CACHE_DIR", cache)
        .output()
        .unwrap()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
