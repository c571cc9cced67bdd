//! What durability costs: the feedback-agent story with a write (4 turns:
//! a premature answer the verifier refuses, a write, a read, the confirmed
//! answer) in-process and as durable executions on a real Restate server
//! (started by `scripts/restate-dev.sh run` on 127.0.0.1; the worker is
//! served in this process), then 100 executions at once on one worker.
//! The model is scripted in-process, so the difference is the journal's
//! round trips.
//!
//! Beside it, the anchor: a bare restate-sdk virtual object served from
//! this process, registered with the same server and invoked the same way,
//! whose handler makes the journal one verdict execution made (the same
//! `ctx.run` entries, state gets and writes, of the same sizes: read back
//! from the server's `sys_journal` after a verdict execution), and the
//! same object with no entries at all. Every comparison runs interleaved
//! in one process, round by round. Prints tables; run with
//! `cargo bench -p verdict-durable --bench overhead`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: fail loudly

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "overhead/anchor.rs"]
mod anchor;
#[path = "overhead/shape.rs"]
mod shape;
use verdict_agent::{Agent, Checkers, CompletionFn, RunOptions, Tool, ToolError};
use verdict_durable::{Blueprint, ExecutionRef, RequestIdentity, RestateClient, Worker};
use verdict_policy::{Effect, LoopPolicy, OutcomeStatus, StopReason, Verdict};
use verdict_providers::fake::{Conversation, Script, ScriptedModel, ScriptedTurn};

const TURNS: u32 = 4;
const SEQUENTIAL: usize = 60;
const CONCURRENT: usize = 100;

fn story(tag: &str) -> Conversation {
    Conversation {
        first_user_contains: Some(format!("[{tag}]")),
        turns: vec![
            ScriptedTurn::text("A42 is ready."),
            ScriptedTurn::tool_call(
                "w",
                "write_artifact",
                json!({"id": "report", "content": "ok"}),
            ),
            ScriptedTurn::tool_call("r", "read_artifact", json!({"id": "A42"})),
            ScriptedTurn::text("A42 is ready; report written."),
        ],
    }
}

fn tools(dir: &Path) -> Vec<Tool> {
    let d = dir.to_owned();
    let read = Tool::new(
        "read_artifact",
        json!({"type": "object"}),
        move |args: Value, _| {
            let path = d.join(args["id"].as_str().unwrap_or_default());
            async move {
                let content =
                    std::fs::read_to_string(path).map_err(|e| ToolError::new(e.to_string()))?;
                Ok(json!({ "content": content }))
            }
        },
    )
    .unwrap()
    .with_effect(Effect::Read);
    let d = dir.to_owned();
    let write = Tool::new(
        "write_artifact",
        json!({"type": "object"}),
        move |_args: Value, ctx| {
            let path = d.join(
                format!("report-{}", ctx.idempotency_key.unwrap_or(ctx.call_id)).replace('/', "_"),
            );
            async move {
                std::fs::write(path, "ok").map_err(|e| ToolError::new(e.to_string()))?;
                Ok(json!({ "written": true }))
            }
        },
    )
    .unwrap()
    .with_effect(Effect::Write);
    vec![read, write]
}

fn checkers() -> Checkers {
    Checkers::new().with_completion(Arc::new(CompletionFn::inline(|packet, _| {
        let read = packet.observations.iter().any(|o| {
            o.tool_name == "read_artifact"
                && o.outcome
                    .as_ref()
                    .is_some_and(|x| x.status == OutcomeStatus::Succeeded)
        });
        Ok(if read {
            Verdict::bare(true)
        } else {
            Verdict::new(false, None, Some("Read A42 first.".to_owned())).unwrap()
        })
    })))
}

fn policy() -> LoopPolicy {
    LoopPolicy {
        max_recovery_attempts: 2,
        ..LoopPolicy::default()
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn script_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|d| d.join("scripts/restate-dev.sh").is_file())
        .unwrap()
        .join("scripts/restate-dev.sh")
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_port(port: u16) {
    let end = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < end, "nothing on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn agent(model: Arc<ScriptedModel>, dir: &Path) -> Agent {
    let mut builder = Agent::builder()
        .model(model)
        .model_name("m")
        .max_iterations(8);
    for tool in tools(dir) {
        builder = builder.tool(tool);
    }
    builder
        .loop_policy(policy())
        .checkers(checkers())
        .build()
        .unwrap()
}

/// Invokes the anchor on `key` with `shape` through the ingress, as
/// `RestateClient::execute` invokes verdict (a JSON body, an idempotency
/// key, the answer awaited in the same request).
async fn anchor_call(http: &reqwest::Client, ingress: &str, key: &str, shape: &anchor::Shape) {
    let answer = http
        .post(format!("{ingress}/{}/{key}/turns", anchor::SERVICE))
        .header("content-type", "application/json")
        .header(
            "idempotency-key",
            format!("{key}/{:016x}", fastrand::u64(..)),
        )
        .body(serde_json::to_string(shape).unwrap())
        .send()
        .await
        .unwrap();
    assert!(answer.status().is_success(), "anchor: {}", answer.status());
    let _: Value = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
}

/// The anchor with other journals than verdict's: other value sizes, fewer
/// entries, no state writes.
fn floor_variants(shaped: &anchor::Shape) -> Vec<(String, anchor::Shape)> {
    use anchor::Op;
    let resized = |bytes: usize| anchor::Shape {
        ops: shaped
            .ops
            .iter()
            .map(|op| match op {
                Op::Run { name, .. } => Op::Run {
                    name: name.clone(),
                    bytes,
                },
                Op::Set { key, .. } => Op::Set {
                    key: key.clone(),
                    bytes,
                },
                other => other.clone(),
            })
            .collect(),
        output: shaped.output,
    };
    let run_bytes: usize = shaped
        .ops
        .iter()
        .map(|op| match op {
            Op::Run { bytes, .. } => *bytes,
            _ => 0,
        })
        .sum();
    let runs = shaped
        .ops
        .iter()
        .filter(|op| matches!(op, Op::Run { .. }))
        .count();
    let merged = |entries: usize| anchor::Shape {
        ops: shaped
            .ops
            .iter()
            .filter(|op| !matches!(op, Op::Run { .. }))
            .cloned()
            .chain((0..entries).map(|n| Op::Run {
                name: format!("turn {n}"),
                bytes: run_bytes / entries,
            }))
            .collect(),
        output: shaped.output,
    };
    let unwritten = anchor::Shape {
        ops: shaped
            .ops
            .iter()
            .filter(|op| !matches!(op, Op::Set { .. }))
            .cloned()
            .collect(),
        output: shaped.output,
    };
    vec![
        (format!("{runs} runs, every value 100 B"), resized(100)),
        (
            format!("{runs} runs, every value 10 KiB"),
            resized(10 * 1024),
        ),
        (
            format!(
                "{} runs (merged: setup into the first step, finish into the last), the same bytes",
                runs - 2
            ),
            merged(runs - 2),
        ),
        (
            format!("{TURNS} runs (one per turn), the same bytes"),
            merged(TURNS as usize),
        ),
        (format!("{runs} runs, no state writes"), unwritten),
    ]
}

#[tokio::main]
async fn main() {
    let installed = Command::new("bash")
        .arg(script_path())
        .arg("install")
        .status();
    if !installed.is_ok_and(|s| s.success()) {
        println!("SKIPPED: the Restate server is not installed (scripts/restate-dev.sh install)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("A42"), "ready").unwrap();
    let mut conversations: Vec<Conversation> = vec![story("shape-0")];
    conversations.extend((0..SEQUENTIAL).map(|i| story(&format!("inproc-{i}"))));
    conversations.extend((0..SEQUENTIAL).map(|i| story(&format!("seq-{i}"))));
    conversations.extend((0..CONCURRENT).map(|i| story(&format!("conc-{i}"))));
    let model = Arc::new(ScriptedModel::new(Script { conversations }).without_records());

    // A Restate server; verdict's worker and the anchor in this process.
    let data = tempfile::tempdir().unwrap();
    // The server signs its requests with this key; the workers check them.
    let keygen = Command::new("bash")
        .arg(script_path())
        .arg("keygen")
        .arg(data.path().join("identity.pem"))
        .output()
        .unwrap();
    assert!(keygen.status.success(), "keygen: {keygen:?}");
    let key = String::from_utf8(keygen.stdout).unwrap();
    let key = key.trim().to_owned();
    let (ingress, admin, node) = (free_port(), free_port(), free_port());
    let _server = Server(
        Command::new("bash")
            .arg(script_path())
            .arg("run")
            .arg(data.path())
            .args([ingress, admin, node].map(|p| p.to_string()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_port(admin);
    wait_port(ingress);
    let (ingress, admin) = (
        format!("http://127.0.0.1:{ingress}"),
        format!("http://127.0.0.1:{admin}"),
    );
    let mut blueprint = Blueprint::new(model.clone(), "m").max_iterations(8);
    for tool in tools(dir.path()) {
        blueprint = blueprint.tool(tool);
    }
    let blueprint = blueprint.loop_policy(policy(), checkers());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let worker_url = format!("http://{}", listener.local_addr().unwrap());
    let identity = RequestIdentity::new().key(&key).unwrap();
    let worker = Worker::new(blueprint).identity(identity);
    tokio::spawn(worker.serve(listener, std::future::pending::<()>()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let anchor_url = format!("http://{}", listener.local_addr().unwrap());
    let anchor_key = key.clone();
    tokio::spawn(async move { anchor::serve(listener, &anchor_key).await });
    let client = RestateClient::new(&ingress, &admin).unwrap();
    for url in [&worker_url, &anchor_url] {
        let end = Instant::now() + Duration::from_secs(60);
        while let Err(e) = client.register(url).await {
            assert!(Instant::now() < end, "register {url}: {e}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    // The ingress learns the services shortly after registration.
    let warm = ExecutionRef::new("warmup").unwrap();
    let end = Instant::now() + Duration::from_secs(60);
    while client.status(&warm).await.is_err() {
        assert!(Instant::now() < end, "the ingress never served the service");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let http = reqwest::Client::new();
    let bare = anchor::Shape::default();
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        let answer = http
            .post(format!("{ingress}/{}/warmup/turns", anchor::SERVICE))
            .header("content-type", "application/json")
            .body(serde_json::to_string(&bare).unwrap())
            .send()
            .await;
        if answer.is_ok_and(|a| a.status().is_success()) {
            break;
        }
        assert!(Instant::now() < end, "the ingress never served the anchor");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The journal of one verdict execution, read back from the server.
    let execution = ExecutionRef::new("shape-0").unwrap();
    let record = client
        .execute(&execution, "[shape-0] verify A42", None)
        .await
        .unwrap();
    assert_eq!(record.stop_reason(), Some(StopReason::Completed));
    let id = shape::invocation(
        &http,
        &admin,
        verdict_durable::SERVICE,
        "shape-0",
        "execute",
    )
    .await;
    let journal = shape::journal(&http, &admin, &id).await;
    let shaped = shape::shape(&journal);
    shape::print(&journal);
    // The anchor's own journal, to show it matches.
    anchor_call(&http, &ingress, "anchor-shape", &shaped).await;
    let id = shape::invocation(&http, &admin, anchor::SERVICE, "anchor-shape", "turns").await;
    let anchored = shape::journal(&http, &admin, &id).await;
    shape::compare(&journal, &anchored);

    // The engine's floor: the anchor with other journals.
    let variants = floor_variants(&shaped);
    let mut floors: Vec<Vec<Duration>> = vec![Vec::new(); variants.len()];

    // Round by round: in-process, durable, anchor, bare anchor, variants.
    let (mut inproc, mut durable, mut anchors, mut bares) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..SEQUENTIAL {
        let agent = agent(model.clone(), dir.path());
        let start = Instant::now();
        let response = agent
            .run(format!("[inproc-{i}] verify A42"), RunOptions::default())
            .await
            .unwrap();
        inproc.push(start.elapsed());
        assert_eq!(response.iterations, TURNS);

        let execution = ExecutionRef::new(&format!("seq-{i}")).unwrap();
        let start = Instant::now();
        let record = client
            .execute(&execution, &format!("[seq-{i}] verify A42"), None)
            .await
            .unwrap();
        durable.push(start.elapsed());
        assert_eq!(
            record.stop_reason(),
            Some(StopReason::Completed),
            "{record:?}"
        );

        let start = Instant::now();
        anchor_call(&http, &ingress, &format!("anchor-{i}"), &shaped).await;
        anchors.push(start.elapsed());

        let start = Instant::now();
        anchor_call(&http, &ingress, &format!("bare-{i}"), &bare).await;
        bares.push(start.elapsed());

        for (n, (_, variant)) in variants.iter().enumerate() {
            let start = Instant::now();
            anchor_call(&http, &ingress, &format!("floor-{n}-{i}"), variant).await;
            floors[n].push(start.elapsed());
        }
    }

    // 100 executions at once, one conversation each, on one worker.
    let start = Instant::now();
    let runs = (0..CONCURRENT).map(|i| {
        let client = client.clone();
        async move {
            let execution = ExecutionRef::new(&format!("conc-{i}")).unwrap();
            let begun = Instant::now();
            let record = client
                .execute(&execution, &format!("[conc-{i}] verify A42"), None)
                .await
                .unwrap();
            assert_eq!(
                record.stop_reason(),
                Some(StopReason::Completed),
                "{record:?}"
            );
            begun.elapsed()
        }
    });
    let mut concurrent: Vec<Duration> = futures::future::join_all(runs).await;
    let total = start.elapsed();

    for v in [
        &mut inproc,
        &mut durable,
        &mut anchors,
        &mut bares,
        &mut concurrent,
    ] {
        v.sort();
    }
    for v in &mut floors {
        v.sort();
    }
    let per_turn = |d: Duration| d / TURNS;
    let p50 = |v: &[Duration]| percentile(v, 0.5);
    let runs = journal.iter().filter(|r| shape::is_run_command(r)).count();
    println!(
        "\nOne execution ({TURNS} turns: 4 model calls, 2 tools, 2 checks; {runs} ctx.run \
         entries; {SEQUENTIAL} rounds, each runs every row once, in order)\n"
    );
    println!("| | p50 execution (ms) | p99 execution (ms) | p50 per turn (ms) |");
    println!("|---|---|---|---|");
    let row = |name: &str, v: &[Duration]| {
        println!(
            "| {name} | {} | {} | {} |",
            ms(p50(v)),
            ms(percentile(v, 0.99)),
            ms(per_turn(p50(v)))
        );
    };
    row("verdict in-process", &inproc);
    row("verdict durable (Restate)", &durable);
    row("anchor (bare restate-sdk, the same journal)", &anchors);
    row("no-entry anchor (same object, no entries)", &bares);
    let verdict = per_turn(p50(&durable).saturating_sub(p50(&inproc)));
    let engine = per_turn(p50(&anchors).saturating_sub(p50(&bares)));
    let invocation = per_turn(p50(&bares));
    println!(
        "| verdict overhead per turn (durable − in-process) | | | {} |",
        ms(verdict)
    );
    println!(
        "| anchor overhead per turn (anchor − no-entry anchor) | | | {} |",
        ms(engine)
    );
    println!(
        "\nratio verdict overhead / anchor overhead: **{:.2}** (the target is ≤ 1.2). \
         Overhead per turn = p50 difference / {TURNS}. verdict's includes the bare \
         invocation (ingress, server, worker: {} ms per turn here, the no-entry anchor); \
         net of it, verdict's is {} ms per turn, {:.2}× the anchor's.",
        verdict.as_secs_f64() / engine.as_secs_f64(),
        ms(invocation),
        ms(verdict.saturating_sub(invocation)),
        verdict.saturating_sub(invocation).as_secs_f64() / engine.as_secs_f64(),
    );
    println!(
        "\nThe engine's floor: the anchor with other journals, in the same rounds \
         (overhead = p50 − no-entry anchor's p50, per turn; WAL fsync {})\n",
        if std::env::var("RESTATE_DEV_NO_FSYNC").as_deref() == Ok("1") {
            "OFF (RESTATE_DEV_NO_FSYNC=1: not durable against a machine crash)"
        } else {
            "on (the default)"
        }
    );
    println!(
        "| anchor journal | p50 execution (ms) | p99 execution (ms) | overhead per turn (ms) |"
    );
    println!("|---|---|---|---|");
    println!(
        "| the same as verdict's | {} | {} | {} |",
        ms(p50(&anchors)),
        ms(percentile(&anchors, 0.99)),
        ms(engine)
    );
    for ((name, _), v) in variants.iter().zip(&floors) {
        println!(
            "| {name} | {} | {} | {} |",
            ms(p50(v)),
            ms(percentile(v, 0.99)),
            ms(per_turn(p50(v).saturating_sub(p50(&bares))))
        );
    }
    println!("\n{CONCURRENT} durable executions at once on one worker\n");
    println!("| total (ms) | executions/s | p50 execution (ms) | p99 execution (ms) |");
    println!("|---|---|---|---|");
    println!(
        "| {} | {:.1} | {} | {} |",
        ms(total),
        CONCURRENT as f64 / total.as_secs_f64(),
        ms(percentile(&concurrent, 0.5)),
        ms(percentile(&concurrent, 0.99))
    );
}
