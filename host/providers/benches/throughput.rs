//! Streaming parse throughput (MB/s of SSE) per protocol, and per-request
//! overhead of the connector against the fake provider on loopback.
//!
//! Run with `cargo bench -p verdict-providers --bench throughput`. Prints
//! two markdown tables. Set `VERDICT_BENCH_QUICK=1` for a short run.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::StreamExt;
use verdict_providers::fake::{FakeProvider, Reply, Script, ScriptedTurn};
use verdict_providers::{CallContext, Connector, Model, ModelRequest, ModelResponse, Protocol};

fn samples_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/wire-samples"))
}

fn folder(p: Protocol) -> &'static str {
    match p {
        Protocol::OpenAiChat => "openai-chat",
        Protocol::OpenAiResponses => "openai-responses",
        Protocol::Anthropic => "anthropic",
        Protocol::Gemini => "gemini",
        other => panic!("no recorded samples for {other:?}"),
    }
}

/// Every recorded `.sse` body of a protocol.
fn recorded(p: Protocol) -> Vec<Vec<u8>> {
    let dir = samples_dir().join(folder(p));
    let mut bodies = Vec::new();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("wire samples missing at {}", dir.display());
        return bodies;
    };
    for entry in entries.flatten() {
        if entry.path().extension().is_some_and(|e| e == "sse")
            && let Ok(bytes) = std::fs::read(entry.path())
        {
            bodies.push(bytes);
        }
    }
    bodies
}

/// A large synthetic stream: 64 KiB of text in 16-character events plus a
/// tool call with 4 KiB of arguments in 16-character fragments.
fn synthetic(p: Protocol) -> Vec<u8> {
    let text: String = "The quick brown fox jumps over the lazy dog. "
        .chars()
        .cycle()
        .take(64 * 1024)
        .collect();
    let reply = Reply {
        text: Some(text),
        tool_calls: vec![verdict_providers::fake::ScriptedCall {
            id: Some("call_1".into()),
            name: "write".into(),
            arguments: serde_json::json!({"content": "x".repeat(4096)}),
        }],
        ..Reply::default()
    };
    verdict_providers::wire::render_stream_body(p, &reply.to_response(0), "bench-model", 16)
}

/// MB/s decoding `bodies` repeatedly for about `budget`.
fn parse_rate(p: Protocol, bodies: &[Vec<u8>], budget: Duration) -> (f64, usize) {
    let bytes_per_round: usize = bodies.iter().map(Vec::len).sum();
    if bytes_per_round == 0 {
        return (0.0, 0);
    }
    let start = Instant::now();
    let mut rounds = 0usize;
    let mut events = 0usize;
    while start.elapsed() < budget {
        for body in bodies {
            match verdict_providers::wire::decode_stream(p, body) {
                Ok(e) => events += e.len(),
                Err(e) => eprintln!("{p:?}: {e}"),
            }
        }
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    let mb = (bytes_per_round * rounds) as f64 / 1e6;
    (mb / secs, events / rounds.max(1))
}

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn us(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1e6)
}

async fn one_call(
    model: &Connector,
    request: &ModelRequest,
    stream: bool,
) -> Option<ModelResponse> {
    let ctx = CallContext::default();
    if !stream {
        return model.complete(request, &ctx).await.ok();
    }
    let mut events = model.stream(request, &ctx).await.ok()?;
    let mut last = None;
    while let Some(Ok(event)) = events.next().await {
        last = Some(event);
    }
    match last {
        Some(verdict_providers::StreamEvent::Completed(r)) => Some(r),
        _ => None,
    }
}

/// Latencies of `n` sequential connector calls and of `n` raw reqwest posts
/// of the same body to the same fake (the baseline without the connector).
async fn overhead(p: Protocol, stream: bool, n: usize) -> (Vec<Duration>, Vec<Duration>) {
    let reply = ScriptedTurn::text("Sunny and 21 degrees in Paris, with a light breeze.");
    let fake = match FakeProvider::start(Script::new(vec![reply; 2 * n + 20])).await {
        Ok(f) => f,
        Err(e) => {
            eprintln!("fake: {e}");
            return (Vec::new(), Vec::new());
        }
    };
    let Ok(model) = Connector::new(fake.connector_config(p)) else {
        return (Vec::new(), Vec::new());
    };
    let request = ModelRequest::new("bench-model", "What is the weather in Paris?");
    for _ in 0..10 {
        one_call(&model, &request, stream).await;
    }
    let mut with_connector = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        if one_call(&model, &request, stream).await.is_none() {
            eprintln!("{p:?} stream={stream}: call failed");
        }
        with_connector.push(t.elapsed());
    }
    let client = reqwest::Client::new();
    let url = p.url(&fake.base_url(p), "bench-model", stream);
    let body = verdict_providers::wire::encode_request(p, &request, stream).to_string();
    let (name, value) = match p {
        Protocol::Anthropic => ("x-api-key", "k".to_owned()),
        Protocol::Gemini => ("x-goog-api-key", "k".to_owned()),
        _ => ("authorization", "Bearer k".to_owned()),
    };
    let mut raw = Vec::with_capacity(n);
    for i in 0..n + 10 {
        let t = Instant::now();
        let sent = client
            .post(&url)
            .header("content-type", "application/json")
            .header(name, &value)
            .body(body.clone())
            .send()
            .await;
        if let Ok(response) = sent {
            let _ = response.bytes().await;
        }
        if i >= 10 {
            raw.push(t.elapsed());
        }
    }
    with_connector.sort();
    raw.sort();
    (with_connector, raw)
}

fn main() {
    let quick = std::env::var("VERDICT_BENCH_QUICK").is_ok();
    let budget = if quick {
        Duration::from_millis(300)
    } else {
        Duration::from_secs(2)
    };
    let n = if quick { 100 } else { 1000 };

    println!("## Streaming parse throughput (eventsource-stream + serde_json + decoder)\n");
    println!(
        "| protocol | recorded samples: KB | MB/s | synthetic 64 KiB text + 4 KiB args: events | MB/s |"
    );
    println!("|---|---|---|---|---|");
    for p in Protocol::ALL {
        let bodies = recorded(p);
        let kb = bodies.iter().map(Vec::len).sum::<usize>() as f64 / 1024.0;
        let (rate, _) = parse_rate(p, &bodies, budget);
        let big = vec![synthetic(p)];
        let (big_rate, big_events) = parse_rate(p, &big, budget);
        println!("| {p:?} | {kb:.1} | {rate:.1} | {big_events} | {big_rate:.1} |");
    }

    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        eprintln!("no tokio runtime");
        return;
    };
    println!("\n## Per-request latency on loopback, {n} sequential calls (µs)\n");
    println!(
        "| protocol | mode | connector p50 | p99 | raw reqwest p50 | p99 | connector overhead p50 |"
    );
    println!("|---|---|---|---|---|---|---|");
    for p in Protocol::ALL {
        for stream in [false, true] {
            let (c, r) = runtime.block_on(overhead(p, stream, n));
            let (c50, r50) = (percentile(&c, 0.5), percentile(&r, 0.5));
            let mode = if stream { "SSE" } else { "JSON" };
            println!(
                "| {p:?} | {mode} | {} | {} | {} | {} | {} |",
                us(c50),
                us(percentile(&c, 0.99)),
                us(r50),
                us(percentile(&r, 0.99)),
                us(c50.saturating_sub(r50)),
            );
        }
    }
}
