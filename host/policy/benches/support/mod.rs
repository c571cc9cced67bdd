//! Shared by the benches: argument values and the measured operations.
#![allow(dead_code)]

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::hint::black_box;
use verdict_policy::{
    Admission, Effect, ObservedOutcome, OutcomeStatus, PolicyExecution, ToolCallRequest,
};

/// Tool arguments of about `target` canonical bytes: records with strings,
/// integers, floats, booleans and nested objects, keys out of order.
pub fn arguments(target: usize) -> Value {
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

pub fn raw(value: &Value) -> [u8; 32] {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    Sha256::digest(&bytes).into()
}

pub fn jcs_crate(value: &Value) -> [u8; 32] {
    let bytes = serde_json_canonicalizer::to_vec(value).unwrap_or_default();
    Sha256::digest(&bytes).into()
}

pub fn policy_call(exec: &mut PolicyExecution, args: &Value, result: &Value) {
    let request = ToolCallRequest {
        sequence: 1,
        call_id: "call-1",
        tool_name: "update_record",
        effect: Effect::Write,
        arguments: args,
    };
    let admitted = exec.admit(&request);
    debug_assert_eq!(admitted, Admission::Run);
    let outcome = ObservedOutcome {
        status: OutcomeStatus::Succeeded,
        failure: None,
        executed: true,
        result_fingerprint: None,
    };
    black_box(exec.observe(1, Some(outcome), Some(result)));
}
