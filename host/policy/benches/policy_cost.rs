//! Policy cost per tool call (admission + observation) beside the raw cost
//! of `serde_json::to_vec` + SHA-256 of the same arguments.
//!
//! Run: `cargo bench -p verdict-policy` (about a minute). Target: policy ≤ 2× raw.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

mod support;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;
use std::time::Duration;
use support::{arguments, jcs_crate, policy_call, raw};
use verdict_policy::{CheckerIdentities, LoopPolicy, PolicyExecution};

fn per_call(c: &mut Criterion) {
    let policy = LoopPolicy::default();
    let result = json!({ "status": "ok", "id": 42 });
    let mut group = c.benchmark_group("per_tool_call");
    group
        .warm_up_time(Duration::from_millis(800))
        .measurement_time(Duration::from_secs(3))
        .sample_size(40);
    for (label, target) in [("1KiB", 1024), ("64KiB", 64 * 1024 - 64)] {
        let args = arguments(target);
        group.bench_with_input(
            BenchmarkId::new("raw_to_vec_sha256", label),
            &args,
            |b, args| b.iter(|| raw(black_box(args))),
        );
        group.bench_with_input(
            BenchmarkId::new("policy_admit_observe", label),
            &args,
            |b, args| {
                b.iter_batched(
                    || {
                        PolicyExecution::start(
                            &policy,
                            &CheckerIdentities::default(),
                            "bench",
                            None,
                        )
                    },
                    |exec| {
                        if let Ok(mut exec) = exec {
                            policy_call(&mut exec, black_box(args), &result);
                            exec
                        } else {
                            panic!("policy is valid")
                        }
                    },
                    BatchSize::SmallInput,
                )
            },
        );
        group.bench_with_input(
            BenchmarkId::new("jcs_crate_sha256", label),
            &args,
            |b, args| b.iter(|| jcs_crate(black_box(args))),
        );
    }
    group.finish();
}

criterion_group!(benches, per_call);
criterion_main!(benches);
