//! The JSON object of one check: what `verdict check --json` prints and
//! what the service answers (the service adds `checkId` and `witVersion`).

use serde_json::{Value, json};
use verdict_policy::Verdict;
use verdict_sandbox::{CallMetrics, CheckError};

/// What a verifier answered: a verdict (completion) or a key (progress).
#[derive(Debug, Clone)]
pub enum CheckAnswer {
    /// The completion check's verdict.
    Verdict(Verdict),
    /// The progress key.
    Key(String),
}

/// The `metrics` object of a check.
pub fn metrics_json(m: &CallMetrics) -> Value {
    json!({
        "durationUs": u64::try_from(m.duration.as_micros()).unwrap_or(u64::MAX),
        "fuelUsed": m.fuel_used,
        "peakMemoryBytes": m.peak_memory_bytes,
        "artifactReads": m.artifact_reads,
        "artifactBytes": m.artifact_bytes,
        "wallClockMs": m.wall_clock_ms,
    })
}

/// The status word of a result: `complete`, `not_complete`,
/// `progress_key` or `checker_error`.
pub fn status(result: &Result<CheckAnswer, CheckError>) -> &'static str {
    match result {
        Ok(CheckAnswer::Verdict(v)) if v.complete => "complete",
        Ok(CheckAnswer::Verdict(_)) => "not_complete",
        Ok(CheckAnswer::Key(_)) => "progress_key",
        Err(_) => "checker_error",
    }
}

/// The object: `tenant`, `verifierDigest`, `metrics`, `status`, and
/// `verdict`, `progressKey` or `error` (`code`, `message`, and for a trap
/// `trap` and `stderrTail`).
pub fn check_json(
    tenant: &str,
    digest: Option<&str>,
    result: &Result<CheckAnswer, CheckError>,
    metrics: &CallMetrics,
) -> Value {
    let mut out =
        json!({ "tenant": tenant, "verifierDigest": digest, "metrics": metrics_json(metrics) });
    out["status"] = json!(status(result));
    match result {
        Ok(CheckAnswer::Verdict(v)) => out["verdict"] = json!(v),
        Ok(CheckAnswer::Key(key)) => out["progressKey"] = json!(key),
        Err(err) => {
            let mut e = json!({ "code": err.code(), "message": err.to_string() });
            if let CheckError::Trap { kind, stderr_tail } = err {
                e["trap"] = json!(kind.code());
                e["stderrTail"] = json!(stderr_tail);
            }
            out["error"] = e;
        }
    }
    out
}
