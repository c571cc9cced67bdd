//! Shared helpers of the `run`, `demo` and configuration tests: a fake
//! provider on loopback, a config in a temporary directory, the binary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use verdict::Protocol;
use verdict::fake::{FakeProvider, Script};

pub mod mcp;
pub mod restate;

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

    /// The Anthropic endpoint's base, as `ANTHROPIC_BASE_URL` takes it
    /// (without `/v1`).
    pub fn anthropic_base(&self) -> String {
        self.server
            .base_url(Protocol::Anthropic)
            .trim_end_matches("/v1")
            .to_owned()
    }

    /// The JSON bodies of the requests so far.
    pub fn bodies(&self) -> Vec<serde_json::Value> {
        self.server.requests().into_iter().map(|r| r.body).collect()
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

/// Runs the built binary with `args`, with a private verifier cache (the
/// wait bounded by [`BOUND`]).
pub fn verdict(args: &[&str], cache: &Path) -> Output {
    Running::spawn(command(args, cache)).output()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Upper bound on every wait for the binary: a hang fails the test.
pub const BOUND: std::time::Duration = std::time::Duration::from_secs(60);

/// The repository's `examples/` folder.
pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// `verdict check --json` of `verifier` on `examples/packets/{packet}.json`
/// with the example artifacts: (exit code, the JSON answer).
pub fn check_json(verifier: &str, packet: &str, cache: &Path) -> (Option<i32>, serde_json::Value) {
    let examples = examples();
    let packet = examples.join(format!("packets/{packet}.json"));
    let artifacts = examples.join("artifacts");
    let output = verdict(
        &[
            "check",
            "--verifier",
            verifier,
            "--packet",
            packet.to_str().unwrap(),
            "--artifacts",
            artifacts.to_str().unwrap(),
            "--json",
        ],
        cache,
    );
    let out = stdout(&output);
    let value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {}", stderr(&output)));
    (output.status.code(), value)
}

/// Polls `done` until it holds; panics naming `what` after [`BOUND`].
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + BOUND;
    while !done() {
        assert!(std::time::Instant::now() < deadline, "timed out: {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A running `verdict`: stdout and stderr collected on their own threads,
/// killed if dropped before [`Running::finish`].
pub struct Running {
    child: std::process::Child,
    out: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    err: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

fn collect(
    mut from: impl std::io::Read + Send + 'static,
) -> (
    std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    std::thread::JoinHandle<()>,
) {
    let sink = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let to = sink.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            to.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    (sink, reader)
}

impl Running {
    /// Spawns `command` (stdout and stderr are piped here).
    pub fn spawn(mut command: Command) -> Self {
        use std::process::Stdio;
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (out, r1) = collect(child.stdout.take().unwrap());
        let (err, r2) = collect(child.stderr.take().unwrap());
        Self {
            child,
            out,
            err,
            readers: vec![r1, r2],
        }
    }

    /// The child's stdin (spawned with `Stdio::piped()`).
    pub fn take_stdin(&mut self) -> std::process::ChildStdin {
        self.child.stdin.take().unwrap()
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends signal `name` (`INT`, `TERM`, `HUP`).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args(["-s", name, &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -s {name}");
    }

    /// Stdout so far.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.lock().unwrap()).into_owned()
    }

    /// Waits (bounded) for the exit: code, stdout, stderr.
    pub fn finish(self) -> (Option<i32>, String, String) {
        let output = self.output();
        (output.status.code(), stdout(&output), stderr(&output))
    }

    /// Waits (bounded) for the exit.
    pub fn output(mut self) -> Output {
        let deadline = std::time::Instant::now() + BOUND;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("verdict did not exit; stdout:\n{}", self.stdout());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        for reader in self.readers.drain(..) {
            reader.join().unwrap();
        }
        let take = |v: &std::sync::Mutex<Vec<u8>>| std::mem::take(&mut *v.lock().unwrap());
        Output {
            status,
            stdout: take(&self.out),
            stderr: take(&self.err),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The binary with `args` and a private verifier cache; no stdin.
pub fn command(args: &[&str], cache: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_verdict"));
    command
        .args(args)
        .env("VERDICT_CACHE_DIR", cache)
        .stdin(std::process::Stdio::null());
    command
}

/// The binary with `args`, run so that file permissions bind: as root
/// (which reads anything) it runs under `setpriv` without the capabilities
/// that bypass them.
pub fn unprivileged(args: &[&str], cache: &Path) -> Command {
    let root = std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false);
    if !root {
        return command(args, cache);
    }
    let mut command = Command::new("setpriv");
    command
        .args(["--bounding-set", "-dac_override,-dac_read_search"])
        .arg(env!("CARGO_BIN_EXE_verdict"))
        .args(args)
        .env("VERDICT_CACHE_DIR", cache)
        .stdin(std::process::Stdio::null());
    command
}

/// Sets the Unix mode bits of `path`.
pub fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The lines of a file, none when it does not exist.
pub fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Panics unless every one of `steps` is in `out`, in this order.
pub fn assert_in_order(out: &str, steps: &[&str]) {
    let mut from = 0;
    for step in steps {
        let at = out[from..]
            .find(step)
            .unwrap_or_else(|| panic!("missing (in order) {step:?} in:\n{out}"));
        from += at + step.len();
    }
}
