//! The per-call policy cost beside the raw cost, measured by alternating
//! them in rounds so that load from other processes falls on both alike.
//! Prints a table of the best round (load only ever adds time) and the
//! median round. Run: `cargo bench -p verdict-policy --bench policy_ratio`.

// `harness = false` bench binary: no public items to document.
#![allow(missing_docs)]

mod support;

use serde_json::json;
use std::hint::black_box;
use std::time::Instant;
use support::{arguments, policy_call, raw};
use verdict_policy::{CheckerIdentities, Fingerprint, LoopPolicy, PolicyExecution};

const ROUNDS: usize = 61;

/// Nanoseconds per call of `f`, over `calls` calls.
fn per_call(calls: usize, mut f: impl FnMut(usize)) -> f64 {
    let start = Instant::now();
    for i in 0..calls {
        f(i);
    }
    start.elapsed().as_nanos() as f64 / calls as f64
}

fn best_and_median(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    (samples[0], samples[samples.len() / 2])
}

fn main() {
    let policy = LoopPolicy::default();
    let result = json!({ "status": "ok", "id": 42 });
    println!(
        "| arguments | raw to_vec + SHA-256 | Fingerprint::of alone | policy admit + observe | policy / raw (best) | policy / raw (median) |"
    );
    println!("|---|---|---|---|---|---|");
    for (label, target, calls) in [("1 KiB", 1024, 2000), ("64 KiB", 64 * 1024 - 64, 40)] {
        let args = arguments(target);
        let (mut raws, mut prints, mut policies) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            raws.push(per_call(calls, |_| {
                black_box(raw(black_box(&args)));
            }));
            prints.push(per_call(calls, |_| {
                black_box(Fingerprint::of(black_box(&args)).is_ok());
            }));
            // Fresh executions are made outside the timed loop.
            let mut execs: Vec<PolicyExecution> = (0..calls)
                .filter_map(|_| {
                    PolicyExecution::start(&policy, &CheckerIdentities::default(), "bench", None)
                        .ok()
                })
                .collect();
            policies.push(per_call(execs.len(), |i| {
                policy_call(&mut execs[i], black_box(&args), &result);
            }));
        }
        let (raw_best, raw_median) = best_and_median(raws);
        let (print_best, _) = best_and_median(prints);
        let (policy_best, policy_median) = best_and_median(policies);
        println!(
            "| {label} | {:.2} µs | {:.2} µs | {:.2} µs | {:.2}× | {:.2}× |",
            raw_best / 1000.0,
            print_best / 1000.0,
            policy_best / 1000.0,
            policy_best / raw_best,
            policy_median / raw_median,
        );
    }
}
