//! The worker the durable tests start and kill: the feedback-agent story
//! (a read, a write, a native completion verifier) served as a Restate
//! endpoint, with pause points the tests kill it at.
//!
//! ```text
//! verdict-durable-test-worker --listen ADDR --provider URL --workspace DIR
//!     [--pause-model N:FILE] [--pause-read FILE] [--pause-write FILE]
//!     [--pause-check N:FILE] [--idempotent]
//!     [--without-read] [--with-progress] [--noting-checker]
//!     [--identity-key KEY]... [--allow-unsigned] [--tls CERT KEY]
//!     [--tool-delay-ms MS]
//! ```
//!
//! `--without-read`, `--with-progress` and `--noting-checker` change the
//! agent under a running execution (a removed tool, an added progress
//! checker) or make its checker note a fresh record id per check, as a
//! recording checker does (logged to DIR/records.log).
//! `--identity-key` (repeatable) serves only requests signed by one of the
//! keys; `--allow-unsigned` serves unsigned ones (loopback only); with
//! neither the worker refuses to start, exit 1. `--tool-delay-ms` makes
//! every read and write take that long after its effect (the chaos test's
//! window for a kill inside a tool).
//!
//! A pause point makes FILE at the N-th event of this process and from
//! then on never returns: model calls (before they reach the provider),
//! reads and writes (after their effect), completion checks. Every read
//! and check is logged to DIR/reads.log and DIR/checks.log first.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fixture: fail loudly

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use verdict_agent::{Checkers, CompletionFn, ProgressFn, Tool, ToolError};
use verdict_durable::{Blueprint, Worker};
use verdict_policy::{Effect, LoopPolicy, OutcomeStatus, Verdict};
use verdict_providers::{
    ApiKey, CallContext, Connector, ConnectorConfig, Credential, EventStream, Model, ModelRequest,
    ModelResponse, Protocol, ProviderError,
};

/// A pause point: the `n`-th event creates `file` and hangs.
#[derive(Clone)]
struct Pause {
    n: u64,
    file: PathBuf,
    seen: Arc<AtomicU64>,
}

impl Pause {
    fn parse(text: &str) -> Self {
        let (n, file) = text.split_once(':').unwrap_or(("1", text));
        Self {
            n: n.parse().expect("N:FILE"),
            file: PathBuf::from(file),
            seen: Arc::new(AtomicU64::new(0)),
        }
    }

    /// True from the `n`-th event on (the file is made at the `n`-th).
    fn hit(&self) -> bool {
        let seen = self.seen.fetch_add(1, Ordering::SeqCst) + 1;
        if seen == self.n {
            std::fs::write(&self.file, b"paused").unwrap();
        }
        seen >= self.n
    }
}

/// The connector, paused at one call.
struct PausingModel {
    inner: Connector,
    pause: Option<Pause>,
}

impl Model for PausingModel {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        if self.pause.as_ref().is_some_and(Pause::hit) {
            return std::future::pending().boxed();
        }
        self.inner.complete(request, ctx)
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<EventStream, ProviderError>> {
        self.inner.stream(request, ctx)
    }
}

/// Appends `line` in one write (`writeln!` on a file writes the text and
/// the newline apart: a SIGKILL between them left a line without its end,
/// and the next process's line was glued to it, so neither was counted).
fn append(path: &Path, line: &str) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    file.write_all(format!("{line}\n").as_bytes()).unwrap();
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut listen, mut provider, mut workspace) = (None, None, None);
    let (mut pause_model, mut pause_write, mut pause_check) = (None, None, None);
    let mut pause_read = None;
    let mut idempotent = false;
    let (mut without_read, mut with_progress, mut noting) = (false, false, false);
    let mut identity = verdict_durable::RequestIdentity::new();
    let mut tls = None;
    let mut tool_delay = std::time::Duration::ZERO;
    while let Some(arg) = args.next() {
        let mut value = || args.next().expect("a value");
        match arg.as_str() {
            "--listen" => listen = Some(value()),
            "--provider" => provider = Some(value()),
            "--workspace" => workspace = Some(PathBuf::from(value())),
            "--pause-model" => pause_model = Some(Pause::parse(&value())),
            "--pause-read" => pause_read = Some(Pause::parse(&format!("1:{}", value()))),
            "--pause-write" => pause_write = Some(Pause::parse(&format!("1:{}", value()))),
            "--pause-check" => pause_check = Some(Pause::parse(&value())),
            "--idempotent" => idempotent = true,
            "--without-read" => without_read = true,
            "--with-progress" => with_progress = true,
            "--noting-checker" => noting = true,
            "--identity-key" => identity = identity.key(&value()).expect("a key"),
            "--allow-unsigned" => identity = identity.allow_unsigned(),
            "--tls" => tls = Some((PathBuf::from(value()), PathBuf::from(value()))),
            "--tool-delay-ms" => {
                tool_delay = std::time::Duration::from_millis(value().parse().expect("MS"));
            }
            other => panic!("unknown argument {other}"),
        }
    }
    let listen = listen.expect("--listen");
    let workspace = workspace.expect("--workspace");
    let config = ConnectorConfig::new("fake", Protocol::OpenAiChat)
        .with_base_url(provider.expect("--provider"))
        .with_credential(Credential::Key(ApiKey::new("fake-key-not-secret")));
    let model = PausingModel {
        inner: Connector::new(config).unwrap(),
        pause: pause_model,
    };

    let dir = workspace.clone();
    let read = Tool::new(
        "read_artifact",
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        move |args: Value, _| {
            let path = dir.join(args["id"].as_str().unwrap_or_default());
            let log = dir.join("reads.log");
            let pause = pause_read.clone();
            async move {
                append(&log, "read");
                let content =
                    std::fs::read_to_string(&path).map_err(|e| ToolError::new(e.to_string()))?;
                tokio::time::sleep(tool_delay).await;
                if pause.as_ref().is_some_and(Pause::hit) {
                    std::future::pending::<()>().await;
                }
                Ok(json!({"content": content}))
            }
        },
    )
    .unwrap()
    .with_effect(Effect::Read);

    // Every run logs its key to attempts.log; the effect (writes.log and
    // the artifact) happens once per key when idempotent, else every run.
    let dir = workspace.clone();
    let write = Tool::new(
        "write_artifact",
        json!({"type": "object", "properties": {"id": {"type": "string"}, "content": {"type": "string"}}, "required": ["id", "content"]}),
        move |args: Value, ctx| {
            let dir = dir.clone();
            let pause = pause_write.clone();
            async move {
                let key = ctx.idempotency_key.unwrap_or_default();
                append(&dir.join("attempts.log"), &key);
                let writes = dir.join("writes.log");
                let done = std::fs::read_to_string(&writes).unwrap_or_default();
                if !(idempotent && done.lines().any(|l| l == key)) {
                    append(&writes, &key);
                    let id = args["id"].as_str().unwrap_or_default();
                    std::fs::write(dir.join(id), args["content"].as_str().unwrap_or_default())
                        .map_err(|e| ToolError::new(e.to_string()))?;
                }
                tokio::time::sleep(tool_delay).await;
                if pause.as_ref().is_some_and(Pause::hit) {
                    std::future::pending::<()>().await;
                }
                Ok(json!({"written": true}))
            }
        },
    )
    .unwrap()
    .with_effect(Effect::Write);
    let write = if idempotent {
        write.idempotent()
    } else {
        write
    };

    // The verifier: complete once artifact A42 was read (a succeeded
    // read_artifact observation) and says it is ready.
    let dir = workspace.clone();
    let checker = CompletionFn::new(move |packet, ctx| {
        append(&dir.join("checks.log"), "check");
        if noting {
            let id = format!("{:032x}", fastrand::u128(..));
            append(&dir.join("records.log"), &id);
            ctx.note_record(id);
        }
        if pause_check.as_ref().is_some_and(Pause::hit) {
            loop {
                std::thread::park();
            }
        }
        let read = packet.observations.iter().any(|o| {
            o.tool_name == "read_artifact"
                && o.outcome
                    .as_ref()
                    .is_some_and(|x| x.status == OutcomeStatus::Succeeded)
        });
        let ready = std::fs::read_to_string(dir.join("A42")).is_ok_and(|c| c.contains("ready"));
        if read && ready {
            Ok(Verdict::bare(true))
        } else {
            Ok(Verdict::new(
                false,
                Some("A42 was not verified".to_owned()),
                Some("Read and verify artifact A42 before finishing.".to_owned()),
            )
            .unwrap())
        }
    });
    let mut checkers = Checkers::new().with_completion(Arc::new(checker));
    if with_progress {
        // A key that changes with every tool batch.
        checkers = checkers.with_progress(Arc::new(ProgressFn::inline(|packet, _| {
            Ok(packet.observed_tool_calls.to_string())
        })));
    }
    let mut blueprint = Blueprint::new(Arc::new(model), "demo-model").max_iterations(8);
    if !without_read {
        blueprint = blueprint.tool(read);
    }
    let blueprint = blueprint.tool(write).loop_policy(
        LoopPolicy {
            max_recovery_attempts: 2,
            ..LoopPolicy::default()
        },
        checkers,
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&listen).await.unwrap();
        println!("listening {}", listener.local_addr().unwrap());
        let mut worker = Worker::new(blueprint).identity(identity);
        if let Some((cert, key)) = tls {
            worker = worker.tls(&cert, &key).expect("TLS");
        }
        worker.readiness().ready("not registering itself");
        if let Err(error) = worker.serve(listener, std::future::pending::<()>()).await {
            eprintln!("verdict-durable-test-worker: {error}");
            std::process::exit(1);
        }
    });
}
