//! The in-process side of `bench/load.sh`: the same checks `verdict serve`
//! answers, run by a `LoadedVerifier` in this process at concurrency 1, 16
//! and 64, with throughput and p50/p99/p99.9 latency.
//!
//! `in_process guest` prints the verifier's path; `in_process packets DIR`
//! writes `small.json` and `max.json` (a valid packet just under 1 MiB);
//! `in_process run PACKET ARTIFACTS N` measures.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: fail loudly

use std::sync::Arc;
use std::time::{Duration, Instant};
use verdict_policy::{CheckContext, CheckPacket, MAX_OBSERVATIONS, MAX_OUTPUT_CHARS};
use verdict_sandbox::{DirStore, HostConfig, Limits, Tenant, VerifierHost};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("guest") => println!("{}", verdict_test_support::guests::ARTIFACT_READY),
        Some("packets") => packets(std::path::Path::new(&args[1])),
        Some("run") => run(&args[1], &args[2], args[3].parse().unwrap()),
        _ => eprintln!("usage: in_process guest | packets DIR | run PACKET ARTIFACTS N"),
    }
}

fn packets(dir: &std::path::Path) {
    let observation = |i: usize, id: String| {
        serde_json::json!({
            "toolName": "read_artifact", "callId": id, "effect": "read",
            "outcome": { "status": "succeeded", "executed": true },
            "n": i,
        })
    };
    let small = serde_json::json!({
        "executionId": "bench", "iteration": 2,
        "outputText": "Artifact A42 is verified and ready.",
        "observations": [observation(0, "call-1".into())],
        "observedToolCalls": 1,
    });
    let mut max = small.clone();
    max["outputText"] = "x".repeat(MAX_OUTPUT_CHARS).into();
    max["observations"] = (0..MAX_OBSERVATIONS)
        .map(|i| observation(i, format!("call-{i}-{}", "c".repeat(9_900))))
        .collect();
    max["observedToolCalls"] = MAX_OBSERVATIONS.into();
    for (name, mut packet) in [("small", small), ("max", max)] {
        for o in packet["observations"].as_array_mut().unwrap() {
            o.as_object_mut().unwrap().remove("n");
        }
        let text = packet.to_string();
        CheckPacket::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        std::fs::write(dir.join(format!("{name}.json")), &text).unwrap();
        eprintln!("{name}.json: {} bytes", text.len());
    }
}

fn run(packet: &str, artifacts: &str, total: usize) {
    let host = VerifierHost::new(HostConfig {
        pooling: true,
        ..HostConfig::default()
    })
    .unwrap();
    let verifier = host
        .load_file(verdict_test_support::guests::ARTIFACT_READY)
        .unwrap();
    let store = DirStore::open(std::path::Path::new(artifacts)).unwrap();
    let tenant = Tenant::new("bench", Limits::default(), Arc::new(store));
    let text = std::fs::read_to_string(packet).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    for concurrency in [1usize, 16, 64] {
        let (verifier, tenant, text) = (verifier.clone(), tenant.clone(), text.clone());
        let (elapsed, mut latencies) = runtime.block_on(async move {
            let started = Instant::now();
            let workers: Vec<_> = (0..concurrency)
                .map(|w| {
                    let (verifier, tenant, text) = (verifier.clone(), tenant.clone(), text.clone());
                    tokio::spawn(async move {
                        let mut latencies = Vec::new();
                        let share = total / concurrency + usize::from(w < total % concurrency);
                        for _ in 0..share {
                            let t = Instant::now();
                            // A check that finishes in its first poll never
                            // gives the runtime back: without this, one task
                            // would run its whole share while the others
                            // wait, and a check that did yield (one that ran
                            // past an epoch tick) would wait for all of that.
                            // Yielding first queues each check behind the
                            // others, as a server's requests are, and its
                            // latency includes that wait.
                            tokio::task::yield_now().await;
                            // As the server does: parse (validate), then check.
                            let packet = CheckPacket::from_json(&text).unwrap();
                            let report = verifier
                                .check_async(&tenant, &packet, &CheckContext::new())
                                .await;
                            assert!(report.result.unwrap().complete);
                            latencies.push(t.elapsed());
                        }
                        latencies
                    })
                })
                .collect();
            let mut all = Vec::with_capacity(total);
            for w in workers {
                all.extend(w.await.unwrap());
            }
            (started.elapsed(), all)
        });
        latencies.sort();
        let q = |p: f64| {
            let i = ((latencies.len() as f64 * p).ceil() as usize).clamp(1, latencies.len()) - 1;
            latencies[i]
        };
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "in-process c={concurrency:<3} {:>7} checks  {:>9.0} checks/s  p50 {:.3} ms  p99 {:.3} ms  p99.9 {:.3} ms",
            latencies.len(),
            latencies.len() as f64 / elapsed.as_secs_f64(),
            ms(q(0.50)),
            ms(q(0.99)),
            ms(q(0.999)),
        );
    }
}
