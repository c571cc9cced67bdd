//! Host overhead of the managed loop, printed as tables.
//!
//! 1. Per loop turn with the in-process scripted model (zero model latency;
//!    the scripted model keeps no copy of the requests; its script lookup is
//!    included): without a policy, with an empty policy, with a native
//!    completion checker (a blocking closure run on the blocking pool, and
//!    an inline one), and with the `artifact-ready` wasm verifier. Each run
//!    is 5 turns (4 tool turns, one final answer checked once).
//! 2. 1,000 concurrent executions × 5 turns against the fake HTTP provider
//!    on loopback (OpenAI Chat Completions): turns per second and the
//!    process's peak resident memory.
//! 3. Memory per idle execution: 1,000 executions each parked in its third
//!    model call (two tool turns behind it): the heap bytes they hold (a
//!    counting allocator) and the resident memory above the process's
//!    before they started, per execution; against the in-process scripted
//!    model, against the fake HTTP provider in a child process (what this
//!    process holds is then the library's share alone: agent, execution,
//!    HTTP client and its connection pool), and against the fake in this
//!    process (its server connections and its record of every request
//!    included). Measured first, on a fresh heap, printed last.
//!
//! Agents are built per run (their conversations are their own); the tool
//! is defined once and cloned into each, as a host defines its tools once
//! (its schema compiled once).
//!
//! Run: `cargo bench -p verdict-agent --bench loop_overhead`
//! (`VERDICT_BENCH_ONLY=native,idle` runs only the named parts).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: fail loudly

use std::alloc::System;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use tokio::sync::RwLock;

use serde_json::json;
use verdict_agent::{
    Agent, Checkers, CompletionFn, ConnectorRegistry, RunOptions, RunStatus, Tool, ToolError,
};
use verdict_policy::{CompletionChecker, Effect, LoopPolicy, Verdict};
use verdict_providers::fake::{Conversation, FakeProvider, Script, ScriptedModel, ScriptedTurn};
use verdict_providers::{
    CallContext, Connector, EventStream, Model, ModelRequest, ModelResponse, Protocol,
    ProviderError,
};
use verdict_sandbox::{Limits, MemoryStore, Tenant, WasmChecker};

const TURNS: u32 = 5;

/// The system allocator with counters (stats_alloc): the heap an idle
/// execution holds is the bytes allocated minus freed in a region.
#[global_allocator]
static ALLOCATOR: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes held now beyond what was held when `region` began.
fn held(region: &Region<'_, System>) -> isize {
    let change = region.change();
    change.bytes_allocated as isize - change.bytes_deallocated as isize + change.bytes_reallocated
}

/// Whether section `key` runs: all unless `VERDICT_BENCH_ONLY` names some
/// (`none`, `empty`, `native`, `inline`, `wasm`, `concurrent`, `idle`).
fn runs(key: &str) -> bool {
    std::env::var("VERDICT_BENCH_ONLY")
        .map_or(true, |only| only.split(',').any(|s| s.trim() == key))
}

/// A run's policy and checkers (`None`: no policy).
type Managed = Option<(LoopPolicy, Checkers)>;

fn turns() -> Vec<ScriptedTurn> {
    let mut turns: Vec<ScriptedTurn> = (1..TURNS)
        .map(|n| ScriptedTurn::tool_call(format!("c{n}"), "read_artifact", json!({"step": n})))
        .collect();
    turns.push(ScriptedTurn::text("A42 is ready."));
    turns
}

/// The bench's one tool, defined once (its schema compiled once) and
/// cloned into every agent, as a host defines its tools once.
static READ_TOOL: LazyLock<Tool> = LazyLock::new(|| {
    Tool::new(
        "read_artifact",
        json!({"type": "object", "properties": {"step": {"type": "integer"}}}),
        |args, _| async move {
            Ok::<_, ToolError>(json!({"id": "A42", "ready": true, "step": args["step"]}))
        },
    )
    .unwrap()
    .with_effect(Effect::Read)
});

fn read_tool() -> Tool {
    READ_TOOL.clone()
}

fn agent(model: Arc<dyn Model>, managed: Managed) -> Agent {
    let mut builder = Agent::builder()
        .model(model)
        .model_name("bench")
        .tool(read_tool())
        .max_iterations(TURNS + 1);
    if let Some((policy, checkers)) = managed {
        builder = builder.loop_policy(policy).checkers(checkers);
    }
    builder.build().unwrap()
}

fn complete() -> Verdict {
    Verdict::bare(true)
}

async fn per_turn(name: &str, policy: Managed, runs: u32) -> (String, f64, f64) {
    // Rounds of `runs` executions; report the median and best round.
    let mut rounds = Vec::new();
    for _ in 0..7 {
        let start = Instant::now();
        for _ in 0..runs {
            let model: Arc<dyn Model> =
                Arc::new(ScriptedModel::new(Script::new(turns())).without_records());
            let agent = agent(model, policy.clone());
            let response = agent
                .run("Verify A42.", RunOptions::default())
                .await
                .unwrap();
            assert_eq!(response.status, RunStatus::Completed);
        }
        rounds.push(start.elapsed().as_secs_f64() * 1e6 / f64::from(runs * TURNS));
    }
    rounds.sort_by(f64::total_cmp);
    (name.to_owned(), rounds[rounds.len() / 2], rounds[0])
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn peak_rss_kib() -> u64 {
    status_kib("VmHWM:")
}

fn rss_kib() -> u64 {
    status_kib("VmRSS:")
}

/// A model that parks its `park_at`-th call (1-based) until the gate opens.
struct Gated {
    inner: Arc<dyn Model>,
    calls: AtomicUsize,
    park_at: usize,
    gate: Arc<RwLock<()>>,
    parked: Arc<AtomicUsize>,
}

impl Gated {
    async fn wait(&self) {
        if self.calls.fetch_add(1, Ordering::SeqCst) + 1 == self.park_at {
            self.parked.fetch_add(1, Ordering::SeqCst);
            drop(self.gate.read().await);
        }
    }
}

impl Model for Gated {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        Box::pin(async move {
            self.wait().await;
            self.inner.complete(request, ctx).await
        })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<EventStream, ProviderError>> {
        Box::pin(async move {
            self.wait().await;
            self.inner.stream(request, ctx).await
        })
    }
}

/// Heap and resident KiB per execution of `executions` runs parked in
/// their third model call, above the process's before they started (their
/// agents included); each run's model is made by `model(i)`. Heap bytes
/// freed by one execution and taken by another (or by the fake server)
/// net out.
async fn idle_kib(executions: usize, model: impl Fn(usize) -> Arc<dyn Model>) -> (f64, f64) {
    let gate = Arc::new(RwLock::new(()));
    let parked = Arc::new(AtomicUsize::new(0));
    let closed = gate.clone().write_owned().await;
    let before = rss_kib();
    let region = Region::new(ALLOCATOR);
    let tasks: Vec<_> = (0..executions)
        .map(|i| {
            let gated: Arc<dyn Model> = Arc::new(Gated {
                inner: model(i),
                calls: AtomicUsize::new(0),
                park_at: 3,
                gate: gate.clone(),
                parked: parked.clone(),
            });
            let agent = agent(gated, None);
            tokio::spawn(async move {
                agent
                    .run(format!("[task {i}] Verify A42."), RunOptions::default())
                    .await
            })
        })
        .collect();
    while parked.load(Ordering::SeqCst) < executions {
        // A run that ended before parking would leave this waiting forever.
        if let Some(ended) = tasks.iter().position(|t| t.is_finished()) {
            let task = tasks.into_iter().nth(ended).unwrap();
            panic!("execution {ended} ended before parking: {:?}", task.await);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let held = held(&region);
    let idle = rss_kib();
    drop(closed);
    for task in tasks {
        let response = task.await.unwrap().unwrap();
        assert_eq!(response.status, RunStatus::Completed);
    }
    let n = executions as f64;
    (
        held as f64 / 1024.0 / n,
        idle.saturating_sub(before) as f64 / n,
    )
}

fn script(executions: usize) -> Script {
    Script {
        conversations: (0..executions)
            .map(|i| Conversation {
                first_user_contains: Some(format!("[task {i}]")),
                turns: turns(),
            })
            .collect(),
    }
}

async fn concurrent(executions: usize, policy: Managed) -> (f64, Duration) {
    let fake = FakeProvider::start(script(executions)).await.unwrap();
    let mut registry = ConnectorRegistry::new();
    registry
        .register_connector(Connector::new(fake.connector_config(Protocol::OpenAiChat)).unwrap());
    let agents: Vec<Agent> = (0..executions)
        .map(|_| {
            let mut builder = Agent::builder()
                .connector(&registry, "fake-OpenAiChat")
                .model_name("bench")
                .tool(read_tool())
                .max_iterations(TURNS + 1);
            if let Some((policy, checkers)) = policy.clone() {
                builder = builder.loop_policy(policy).checkers(checkers);
            }
            builder.build().unwrap()
        })
        .collect();
    let start = Instant::now();
    let tasks: Vec<_> = agents
        .into_iter()
        .enumerate()
        .map(|(i, agent)| {
            tokio::spawn(async move {
                agent
                    .run(format!("[task {i}] Verify A42."), RunOptions::default())
                    .await
            })
        })
        .collect();
    for task in tasks {
        let response = task.await.unwrap().unwrap();
        assert_eq!(response.status, RunStatus::Completed);
        assert_eq!(response.iterations, TURNS);
    }
    let elapsed = start.elapsed();
    let turns = (executions as f64) * f64::from(TURNS);
    (turns / elapsed.as_secs_f64(), elapsed)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    if std::env::var_os(FAKE_CHILD).is_some() {
        return serve_fake_child().await;
    }
    let native: Arc<dyn CompletionChecker> =
        Arc::new(CompletionFn::new(|_: &_, _: &_| Ok(complete())));
    let inline: Arc<dyn CompletionChecker> =
        Arc::new(CompletionFn::inline(|_: &_, _: &_| Ok(complete())));
    // Loaded only when its row runs (selecting other rows skips compiling
    // the component).
    let wasm = || -> Arc<dyn CompletionChecker> {
        let store = Arc::new(MemoryStore::new());
        store
            .insert("A42", br#"{"id":"A42","ready":true}"#.to_vec())
            .unwrap();
        Arc::new(WasmChecker::new(
            verdict_test_support::load(verdict_test_support::guests::ARTIFACT_READY),
            Tenant::new("bench", Limits::default(), store),
        ))
    };

    // On a fresh heap, before the other parts grow it.
    let idle = if runs("idle") {
        Some(idle_rows().await)
    } else {
        None
    };
    let configurations: Vec<(&str, &str, Managed)> = vec![
        ("none", "no policy", None),
        (
            "empty",
            "empty policy",
            Some((LoopPolicy::default(), Checkers::new())),
        ),
        (
            "native",
            "policy + native checker (blocking closure, on the blocking pool)",
            Some((
                LoopPolicy::default(),
                Checkers::new().with_completion(native.clone()),
            )),
        ),
        (
            "inline",
            "policy + native checker (inline closure)",
            Some((
                LoopPolicy::default(),
                Checkers::new().with_completion(inline.clone()),
            )),
        ),
        (
            "wasm",
            "policy + wasm verifier (artifact-ready)",
            runs("wasm").then(|| {
                (
                    LoopPolicy::default(),
                    Checkers::new().with_completion(wasm()),
                )
            }),
        ),
    ];
    let mut rows = Vec::new();
    for (key, name, policy) in configurations {
        if runs(key) {
            rows.push(per_turn(name, policy, 200).await);
        }
    }
    println!(
        "\nHost overhead per loop turn (in-process scripted model, {TURNS} turns per run, 7 rounds of 200 runs)\n"
    );
    println!("| configuration | median µs/turn | best µs/turn |");
    println!("|---|---:|---:|");
    for (name, median, best) in &rows {
        println!("| {name} | {median:.1} | {best:.1} |");
    }

    if runs("concurrent") {
        concurrent_rows(&native).await;
    }
    if let Some(rows) = idle {
        println!(
            "\nMemory per idle execution (1000 executions parked in their third model call, no policy)\n"
        );
        println!("| model | heap KiB per idle execution | resident KiB per idle execution |");
        println!("|---|---:|---:|");
        for (model, (heap, resident)) in rows {
            println!("| {model} | {heap:.1} | {resident:.1} |");
        }
        let agent = agent(Arc::new(ScriptedModel::new(Script::new(turns()))), None);
        let run = agent.run("", RunOptions::default());
        println!(
            "\n(a run's future, which each spawned execution's task holds: {} bytes)",
            std::mem::size_of_val(&run)
        );
    }
}

async fn concurrent_rows(native: &Arc<dyn CompletionChecker>) {
    println!("\nConcurrent executions against the fake HTTP provider (OpenAI chat, loopback)\n");
    println!(
        "| executions × turns | policy | wall time | turns/s | peak RSS (MiB, process so far) |"
    );
    println!("|---|---|---:|---:|---:|");
    for (label, policy) in [
        ("none", None),
        (
            "native checker",
            Some((
                LoopPolicy::default(),
                Checkers::new().with_completion(native.clone()),
            )),
        ),
    ] {
        let (rate, elapsed) = concurrent(1_000, policy).await;
        println!(
            "| 1000 × {TURNS} | {label} | {:.2} s | {rate:.0} | {:.1} |",
            elapsed.as_secs_f64(),
            peak_rss_kib() as f64 / 1024.0
        );
    }
}

/// Heap KiB per agent (one tool, a model shared by all, as a connector is)
/// of `n` agents built and kept, not run.
fn agent_kib(n: usize) -> f64 {
    let model: Arc<dyn Model> = Arc::new(ScriptedModel::new(Script::new(turns())));
    let region = Region::new(ALLOCATOR);
    let agents: Vec<Agent> = (0..n).map(|_| agent(model.clone(), None)).collect();
    let held = held(&region);
    drop(agents);
    held as f64 / 1024.0 / n as f64
}

async fn idle_rows() -> Vec<(&'static str, (f64, f64))> {
    let built = agent_kib(1_000);
    // In-process first: the fake server's teardown frees memory for a while.
    let in_process = idle_kib(1_000, |_| {
        Arc::new(ScriptedModel::new(Script::new(turns())).without_records())
    })
    .await;
    // The fake in a child process: what this process holds is the
    // library's share alone (agent, execution, HTTP client and its pool).
    let (mut child, base_url) = fake_child();
    let config = FakeProvider::connector_config_at(Protocol::OpenAiChat, base_url);
    let client: Arc<dyn Model> = Arc::new(Connector::new(config).unwrap());
    let client_only = idle_kib(1_000, |_| client.clone()).await;
    drop(client);
    drop(child.stdin.take());
    child.wait().unwrap();
    let fake = FakeProvider::start(script(1_000)).await.unwrap();
    let mut registry = ConnectorRegistry::new();
    registry
        .register_connector(Connector::new(fake.connector_config(Protocol::OpenAiChat)).unwrap());
    let http = registry.get("fake-OpenAiChat").unwrap();
    let over_http = idle_kib(1_000, |_| http.clone()).await;
    vec![
        (
            "(its agent alone, built and not run: heap KiB; resident not measured)",
            (built, 0.0),
        ),
        ("in-process scripted model", in_process),
        (
            "fake HTTP provider in a child process (this process: agent, execution, HTTP client and its pool)",
            client_only,
        ),
        (
            "fake HTTP provider in this process (its server connections and request records included)",
            over_http,
        ),
    ]
}

/// Set in the child that serves the fake provider for the idle rows.
const FAKE_CHILD: &str = "VERDICT_BENCH_FAKE_CHILD";

/// Starts this bench again as a child serving the fake provider; returns it
/// and the base URL it printed.
fn fake_child() -> (Child, String) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(FAKE_CHILD, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line.trim().to_owned())
}

/// The child's part: serve the fake until stdin closes.
async fn serve_fake_child() {
    let fake = FakeProvider::start(script(1_000)).await.unwrap();
    println!("{}", fake.base_url(Protocol::OpenAiChat));
    std::io::stdout().flush().unwrap();
    tokio::task::spawn_blocking(|| std::io::read_to_string(std::io::stdin()))
        .await
        .unwrap()
        .unwrap();
}
