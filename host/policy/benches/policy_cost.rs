//! Policy cost per tool call (admission + observation) beside the raw cost
//! of `serde_json::to_vec` + SHA-256 of the same arguments.
//!
//! Run: `cargo bench -p verdict-policy` (about a minute). Target: policy ≤ 2× raw.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::hint::black_box;
use std::time::Duration;
use verdict_policy::{
    Admission, Effect, LoopPolicy, Outcome, OutcomeStatus, PolicyExecution, ToolCallRequest,
};

/// Tool arguments of about `target` canonical bytes: records with strings,
/// integers, floats, booleans and nested objects, keys out of order.
fn arguments(target: usize) -> Value {
    let mut rows = Vec::new();
    let mut value = json!({ "query": "status", "rows": [] });
    let mut i = 0u64;
    loop {
        rows.push(json!({
            "zeta": format!("row {i}: the quick brown fox"),
            "id": i,
            "score": (i as f64) * 1.25 + 0.1,
            "tags": ["a", "b", "é"],
            "active": i.is_multiple_of(2),
            "meta": { "owner": "team-α", "rev": i * 7 },
        }));
        value["rows"] = Value::Array(rows.clone());
        let size = verdict_policy::canonical_json(&value).map_or(usize::MAX, |b| b.len());
        if size >= target {
            rows.pop();
            value["rows"] = Value::Array(rows);
            return value;
        }
        i += 1;
    }
}

fn raw(value: &Value) -> [u8; 32] {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    Sha256::digest(&bytes).into()
}

fn jcs_crate(value: &Value) -> [u8; 32] {
    let bytes = serde_json_canonicalizer::to_vec(value).unwrap_or_default();
    Sha256::digest(&bytes).into()
}

fn policy_call(exec: &mut PolicyExecution, args: &Value, result: &Value) {
    let request = ToolCallRequest {
        call_id: "call-1",
        tool_name: "update_record",
        effect: Effect::Write,
        arguments: args,
    };
    let admitted = exec.admit(&request);
    debug_assert_eq!(admitted, Admission::Run);
    let outcome = Outcome {
        status: OutcomeStatus::Succeeded,
        failure: None,
        executed: true,
        result_fingerprint: None,
    };
    black_box(exec.observe("call-1", Some(outcome), Some(result)));
}

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
                    || PolicyExecution::start(&policy, "bench", None),
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
