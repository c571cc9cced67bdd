//! A real Restate server and worker processes on 127.0.0.1 for the tests:
//! the server through `scripts/restate-dev.sh run` (installed by its
//! `install`), the worker as `verdict-durable-test-worker`; both killed on
//! drop. Every wait is bounded.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::json;
use verdict_durable::{ExecutionRecord, ExecutionRef, RestateClient};
use verdict_providers::fake::{Conversation, FakeProvider, Script, ScriptedTurn};

/// The longest any single wait in these tests may take.
pub const WAIT: Duration = Duration::from_secs(90);

/// The script beside the workspace root.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|d| d.join("scripts/restate-dev.sh").is_file())
        .expect("scripts/restate-dev.sh above the crate")
        .join("scripts/restate-dev.sh")
}

/// True once the pinned server is installed (tried once per process,
/// bounded); false, with SKIPPED printed, when it cannot be.
pub fn installed() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        let out = Command::new("timeout")
            .args(["300", "bash"])
            .arg(script())
            .arg("install")
            .output();
        let ok = out.as_ref().is_ok_and(|o| o.status.success());
        // CI installs it first: there a missing server is a failure.
        assert!(
            ok || std::env::var_os("VERDICT_RESTATE_TESTS").is_none_or(|v| v != "required"),
            "VERDICT_RESTATE_TESTS=required but the Restate server is not installed: {out:?}"
        );
        if !ok {
            eprintln!(
                "SKIPPED: the Restate server cannot be installed here ({}); run `scripts/restate-dev.sh install`",
                out.map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                    .unwrap_or_else(|e| e.to_string())
            );
        }
        ok
    })
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

/// Waits (bounded) until `port` accepts connections.
pub fn wait_port(port: u16, what: &str) {
    let end = Instant::now() + WAIT;
    while !answers(port) {
        assert!(Instant::now() < end, "{what} does not answer on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits (bounded) until `path` exists.
pub async fn wait_file(path: &Path) {
    let end = Instant::now() + WAIT;
    while !path.exists() {
        assert!(Instant::now() < end, "{} never appeared", path.display());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Makes the request-identity key pair `file` (unless it exists) with
/// `scripts/restate-dev.sh keygen`; its public key.
pub fn keygen(file: &Path) -> String {
    let out = Command::new("bash")
        .arg(script())
        .arg("keygen")
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "keygen: {out:?}");
    let key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert!(key.starts_with("publickeyv1_"), "{key}");
    key
}

/// A Restate server, signing its requests to workers with its own key.
pub struct Restate {
    child: Child,
    pub dir: tempfile::TempDir,
    pub ingress: u16,
    pub admin: u16,
    node: u16,
    /// The public key of the server's request identity.
    pub key: String,
}

impl Restate {
    /// Starts one; `None` when it cannot be installed here.
    pub fn start() -> Option<Self> {
        Self::start_trusting(None)
    }

    /// Starts one that also trusts the PEM certificate `ca` (a TLS
    /// worker's, kept as DIR/ca.pem across restarts).
    pub fn start_trusting(ca: Option<&Path>) -> Option<Self> {
        if !installed() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        if let Some(ca) = ca {
            std::fs::copy(ca, dir.path().join("ca.pem")).unwrap();
        }
        let key = keygen(&dir.path().join("identity.pem"));
        let (ingress, admin, node) = (free_port(), free_port(), free_port());
        let child = Self::spawn(dir.path(), [ingress, admin, node]);
        Some(Self {
            child,
            dir,
            ingress,
            admin,
            node,
            key,
        })
    }

    fn spawn(dir: &Path, ports: [u16; 3]) -> Child {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("log"))
            .unwrap();
        let mut command = Command::new("bash");
        let ca = dir.join("ca.pem");
        if ca.exists() {
            command.env("RESTATE_DEV_CA", ca);
        }
        let child = command
            .arg(script())
            .arg("run")
            .arg(dir)
            .args(ports.map(|p| p.to_string()))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        wait_port(ports[1], "the Restate admin API");
        wait_port(ports[0], "the Restate ingress");
        child
    }

    /// Kills the server (SIGKILL) and starts it again on the same data
    /// directory and ports.
    pub fn crash_and_restart(&mut self) {
        self.crash();
        self.restart();
    }

    /// Kills the server (SIGKILL); waits until its ports are closed.
    pub fn crash(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).unwrap();
        self.child.wait().unwrap();
        let end = Instant::now() + WAIT;
        while answers(self.admin) || answers(self.ingress) {
            assert!(Instant::now() < end, "the killed server still answers");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts the killed server again on its data directory and ports.
    pub fn restart(&mut self) {
        self.child = Self::spawn(self.dir.path(), [self.ingress, self.admin, self.node]);
    }

    pub fn client(&self) -> RestateClient {
        RestateClient::new(
            &format!("http://127.0.0.1:{}", self.ingress),
            &format!("http://127.0.0.1:{}", self.admin),
        )
        .unwrap()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }
}

impl Drop for Restate {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A worker process.
pub struct WorkerProc {
    child: Child,
    pub port: u16,
}

/// The test worker's binary, no arguments yet.
pub fn worker_binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_verdict-durable-test-worker"));
    command.stdin(Stdio::null()).stdout(Stdio::null());
    command
}

/// The test worker's command: on `port`, the model at `provider`, tools
/// in `workspace`, serving requests signed by `key`.
pub fn worker_command(port: u16, provider: &str, workspace: &Path, key: &str) -> Command {
    let mut command = worker_binary();
    command
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--provider", provider])
        .arg("--workspace")
        .arg(workspace)
        .args(["--identity-key", key]);
    command
}

impl WorkerProc {
    /// Starts the test worker on `port` serving requests signed by `key`,
    /// with `extra` arguments, and waits until it listens.
    pub fn start(port: u16, provider: &str, workspace: &Path, key: &str, extra: &[&str]) -> Self {
        Self::spawn_with(
            worker_command(port, provider, workspace, key).args(extra),
            port,
        )
    }

    /// Starts `command` (a test worker listening on `port`) and waits
    /// until it listens.
    pub fn spawn_with(command: &mut Command, port: u16) -> Self {
        let child = command.spawn().unwrap();
        wait_port(port, "the worker");
        Self { child, port }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// SIGKILL, and reaps it.
    pub fn kill(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for WorkerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The story's turns for the conversation whose prompt contains `tag`:
/// a premature answer (the verifier says no), a write, a read, the answer
/// the verifier confirms.
pub fn story(tag: &str) -> Conversation {
    Conversation {
        first_user_contains: Some(tag.to_owned()),
        turns: vec![
            ScriptedTurn::text("A42 is ready."),
            ScriptedTurn::tool_call(
                "write-1",
                "write_artifact",
                json!({"id": "report", "content": "A42 verified"}),
            ),
            ScriptedTurn::tool_call("read-1", "read_artifact", json!({"id": "A42"})),
            ScriptedTurn::text("A42 is ready and the report is written."),
        ],
    }
}

/// A fake provider serving `conversations`, its URL for the OpenAI Chat
/// connector.
pub async fn provider(conversations: Vec<Conversation>) -> (FakeProvider, String) {
    let fake = FakeProvider::start(Script { conversations }).await.unwrap();
    let url = fake.base_url(verdict_providers::Protocol::OpenAiChat);
    (fake, url)
}

/// A workspace holding artifact A42, ready.
pub fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("A42"), r#"{"id":"A42","ready":true}"#).unwrap();
    dir
}

/// The lines of a file in the workspace (none when it does not exist).
pub fn lines(dir: &Path, name: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(name))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Registers `worker` (retried while the admin API settles).
pub async fn register(client: &RestateClient, worker: &WorkerProc) {
    let end = Instant::now() + WAIT;
    loop {
        match client.register(&worker.url()).await {
            Ok(()) => return,
            Err(e) if Instant::now() < end => {
                eprintln!("register: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("cannot register the worker: {e}"),
        }
    }
}

/// Submits `prompt` to `conversation` (retried while the ingress learns
/// the service).
pub async fn submit(client: &RestateClient, conversation: &str, prompt: &str) -> ExecutionRef {
    let execution = ExecutionRef::new(conversation).unwrap();
    let end = Instant::now() + WAIT;
    loop {
        match client.submit(&execution, prompt, None).await {
            Ok(_) => return execution,
            Err(e) if Instant::now() < end => {
                eprintln!("submit: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("cannot submit: {e}"),
        }
    }
}

/// Waits (bounded) until the execution finished; its record.
pub async fn finished(client: &RestateClient, execution: &ExecutionRef) -> ExecutionRecord {
    let end = Instant::now() + WAIT;
    loop {
        // A status call fails while no worker serves it: retried.
        match client
            .wait(execution, Duration::from_millis(100), WAIT)
            .await
        {
            Ok(Some(record)) => return record,
            Ok(None) => panic!("{execution} did not finish"),
            Err(e) if Instant::now() < end => {
                eprintln!("status: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("status of {execution}: {e}"),
        }
    }
}

/// The record of a running execution (bounded retries).
pub async fn status(client: &RestateClient, execution: &ExecutionRef) -> ExecutionRecord {
    let end = Instant::now() + WAIT;
    loop {
        match client.status(execution).await {
            Ok(Some(record)) => return record,
            _ if Instant::now() < end => tokio::time::sleep(Duration::from_millis(100)).await,
            other => panic!("no record of {execution}: {other:?}"),
        }
    }
}

/// A story on a real Restate server: a workspace, the fake provider, and
/// a first worker that pauses where its flags say (`{paused}` in a flag
/// stands for the file it creates when it gets there), registered.
pub struct Scenario {
    pub restate: Restate,
    pub client: RestateClient,
    pub ws: tempfile::TempDir,
    pub fake: FakeProvider,
    pub url: String,
    pub port: u16,
    pub worker: WorkerProc,
}

impl Scenario {
    /// `None` when the server cannot be installed here (SKIPPED printed).
    pub async fn start(conversations: Vec<Conversation>, flags: &[&str]) -> Option<Self> {
        let restate = Restate::start()?;
        let client = restate.client();
        let ws = workspace();
        let (fake, url) = provider(conversations).await;
        let port = free_port();
        let paused = ws.path().join("paused").display().to_string();
        let flags: Vec<String> = flags
            .iter()
            .map(|f| f.replace("{paused}", &paused))
            .collect();
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let worker = WorkerProc::start(port, &url, ws.path(), &restate.key, &flags);
        register(&client, &worker).await;
        Some(Self {
            restate,
            client,
            ws,
            fake,
            url,
            port,
            worker,
        })
    }

    /// Submits `prompt` to `conversation`.
    pub async fn submit(&self, conversation: &str, prompt: &str) -> ExecutionRef {
        submit(&self.client, conversation, prompt).await
    }

    /// Waits (bounded) until the first worker reached its pause.
    pub async fn paused(&self) {
        wait_file(&self.ws.path().join("paused")).await;
    }

    /// Kills the worker (SIGKILL) and starts a new one with `flags` on the
    /// same port, which Restate's retries reach.
    pub fn take_over(&mut self, flags: &[&str]) {
        self.worker.kill();
        self.worker = WorkerProc::start(
            self.port,
            &self.url,
            self.ws.path(),
            &self.restate.key,
            flags,
        );
    }

    /// The record of `execution` once it finished.
    pub async fn finished(&self, execution: &ExecutionRef) -> ExecutionRecord {
        finished(&self.client, execution).await
    }

    /// The lines of the workspace file `name`.
    pub fn lines(&self, name: &str) -> Vec<String> {
        lines(self.ws.path(), name)
    }
}
