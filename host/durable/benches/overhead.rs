//! What durability costs: the feedback-agent story with a write (4 turns:
//! a premature answer the verifier refuses, a write, a read, the confirmed
//! answer) in-process and as durable executions on a real Restate server
//! (started by `scripts/restate-dev.sh run` on 127.0.0.1; the worker is
//! served in this process), then 100 executions at once on one worker.
//! The model is scripted in-process, so the difference is the journal's
//! round trips. Prints tables; run with
//! `cargo bench -p verdict-durable --bench overhead`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: fail loudly

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use verdict_agent::{Agent, Checkers, CompletionFn, RunOptions, Tool, ToolError};
use verdict_durable::{Blueprint, ExecutionRef, RequestIdentity, RestateClient, Worker};
use verdict_policy::{Effect, LoopPolicy, OutcomeStatus, StopReason, Verdict};
use verdict_providers::fake::{Conversation, Script, ScriptedModel, ScriptedTurn};

const TURNS: u32 = 4;
const SEQUENTIAL: usize = 30;
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
    let mut conversations: Vec<Conversation> = (0..SEQUENTIAL)
        .map(|i| story(&format!("inproc-{i}")))
        .collect();
    conversations.extend((0..SEQUENTIAL).map(|i| story(&format!("seq-{i}"))));
    conversations.extend((0..CONCURRENT).map(|i| story(&format!("conc-{i}"))));
    let model = Arc::new(ScriptedModel::new(Script { conversations }).without_records());

    // In-process: the same agent, no journal.
    let mut inproc = Vec::new();
    for i in 0..SEQUENTIAL {
        let mut builder = Agent::builder()
            .model(model.clone())
            .model_name("m")
            .max_iterations(8);
        for tool in tools(dir.path()) {
            builder = builder.tool(tool);
        }
        let agent = builder
            .loop_policy(policy())
            .checkers(checkers())
            .build()
            .unwrap();
        let start = Instant::now();
        let response = agent
            .run(format!("[inproc-{i}] verify A42"), RunOptions::default())
            .await
            .unwrap();
        inproc.push(start.elapsed());
        assert_eq!(response.iterations, TURNS);
    }

    // Durable: a Restate server, the worker in this process.
    let data = tempfile::tempdir().unwrap();
    // The server signs its requests with this key; the worker checks them.
    let keygen = Command::new("bash")
        .arg(script_path())
        .arg("keygen")
        .arg(data.path().join("identity.pem"))
        .output()
        .unwrap();
    assert!(keygen.status.success(), "keygen: {keygen:?}");
    let key = String::from_utf8(keygen.stdout).unwrap();
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
    let mut blueprint = Blueprint::new(model.clone(), "m").max_iterations(8);
    for tool in tools(dir.path()) {
        blueprint = blueprint.tool(tool);
    }
    let blueprint = blueprint.loop_policy(policy(), checkers());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let worker_url = format!("http://{}", listener.local_addr().unwrap());
    let identity = RequestIdentity::new().key(key.trim()).unwrap();
    let worker = Worker::new(blueprint).identity(identity);
    tokio::spawn(worker.serve(listener, std::future::pending::<()>()));
    let client = RestateClient::new(
        &format!("http://127.0.0.1:{ingress}"),
        &format!("http://127.0.0.1:{admin}"),
    )
    .unwrap();
    let end = Instant::now() + Duration::from_secs(60);
    while let Err(e) = client.register(&worker_url).await {
        assert!(Instant::now() < end, "register: {e}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The ingress learns the service shortly after registration.
    let warm = ExecutionRef::new("warmup").unwrap();
    let end = Instant::now() + Duration::from_secs(60);
    while client.status(&warm).await.is_err() {
        assert!(Instant::now() < end, "the ingress never served the service");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let mut durable = Vec::new();
    for i in 0..SEQUENTIAL {
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

    inproc.sort();
    durable.sort();
    concurrent.sort();
    let per_turn = |d: Duration| d / TURNS;
    let (ip50, dp50) = (percentile(&inproc, 0.5), percentile(&durable, 0.5));
    println!(
        "\nOne execution ({TURNS} turns: 4 model calls, 2 tools, 2 checks; {SEQUENTIAL} runs each, sequential)\n"
    );
    println!("| | p50 execution (ms) | p99 execution (ms) | p50 per turn (ms) |");
    println!("|---|---|---|---|");
    println!(
        "| in-process | {} | {} | {} |",
        ms(ip50),
        ms(percentile(&inproc, 0.99)),
        ms(per_turn(ip50))
    );
    println!(
        "| durable (Restate) | {} | {} | {} |",
        ms(dp50),
        ms(percentile(&durable, 0.99)),
        ms(per_turn(dp50))
    );
    println!(
        "| overhead per turn | | | {} |",
        ms(per_turn(dp50.saturating_sub(ip50)))
    );
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
