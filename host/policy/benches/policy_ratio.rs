//! The per-call policy cost as a ratio of the raw cost, measured by
//! alternating both in rounds so that load from other processes falls on
//! both alike. Prints a table; run with `cargo bench -p verdict-policy --bench policy_ratio`.

mod support;

use serde_json::json;
use std::hint::black_box;
use std::time::Instant;
use support::{arguments, policy_call, raw};
use verdict_policy::{LoopPolicy, PolicyExecution};

const ROUNDS: usize = 41;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    let policy = LoopPolicy::default();
    let result = json!({ "status": "ok", "id": 42 });
    println!(
        "| arguments | raw to_vec + SHA-256 | Fingerprint::of alone | policy admit + observe | policy / raw |"
    );
    println!("|---|---|---|---|---|");
    for (label, target, per_round) in [("1 KiB", 1024, 2000), ("64 KiB", 64 * 1024 - 64, 40)] {
        let args = arguments(target);
        let (mut raws, mut policies, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let mut prints = Vec::new();
        for _ in 0..ROUNDS {
            let start = Instant::now();
            for _ in 0..per_round {
                black_box(raw(black_box(&args)));
            }
            let raw_ns = start.elapsed().as_nanos() as f64 / per_round as f64;
            let start = Instant::now();
            for _ in 0..per_round {
                black_box(verdict_policy::Fingerprint::of(black_box(&args)).is_ok());
            }
            prints.push(start.elapsed().as_nanos() as f64 / per_round as f64);
            // Fresh executions are made outside the timed loop.
            let mut execs: Vec<PolicyExecution> = (0..per_round)
                .filter_map(|_| PolicyExecution::start(&policy, "bench", None).ok())
                .collect();
            let start = Instant::now();
            for exec in &mut execs {
                policy_call(exec, black_box(&args), &result);
            }
            let policy_ns = start.elapsed().as_nanos() as f64 / per_round as f64;
            drop(execs);
            raws.push(raw_ns);
            policies.push(policy_ns);
            ratios.push(policy_ns / raw_ns);
        }
        println!(
            "| {label} | {:.2} µs | {:.2} µs | {:.2} µs | {:.2}× |",
            median(raws) / 1000.0,
            median(prints) / 1000.0,
            median(policies) / 1000.0,
            median(ratios)
        );
    }
}
