//! The JSON object of one check: what `verdict check --json` prints and
//! what the service answers (the service adds `checkId` and `witVersion`).

use serde::Serialize;
use serde_json::Value;
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
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricsReport {
    artifact_bytes: u64,
    artifact_reads: u32,
    duration_us: u64,
    fuel_used: u64,
    peak_memory_bytes: u64,
    wall_clock_ms: u64,
}

impl From<&CallMetrics> for MetricsReport {
    fn from(m: &CallMetrics) -> Self {
        Self {
            artifact_bytes: m.artifact_bytes,
            artifact_reads: m.artifact_reads,
            duration_us: u64::try_from(m.duration.as_micros()).unwrap_or(u64::MAX),
            fuel_used: m.fuel_used,
            peak_memory_bytes: m.peak_memory_bytes,
            wall_clock_ms: m.wall_clock_ms,
        }
    }
}

/// The `metrics` object of a check, as a JSON value.
pub fn metrics_json(m: &CallMetrics) -> Value {
    serde_json::to_value(MetricsReport::from(m)).unwrap_or(Value::Null)
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

/// The `error` object of a failed check.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ErrorReport<'a> {
    code: &'static str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    stderr_tail: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trap: Option<&'static str>,
}

/// The object of one check (fields in the order a JSON map sorts them):
/// `tenant`, `verifierDigest`, `metrics`, `status`, and `verdict`,
/// `progressKey` or `error` (`code`, `message`, and for a trap `trap` and
/// `stderrTail`); the service adds `checkId` and `witVersion`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport<'a> {
    /// The service's id of the check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorReport<'a>>,
    metrics: MetricsReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    progress_key: Option<&'a str>,
    status: &'static str,
    tenant: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict: Option<&'a Verdict>,
    verifier_digest: Option<&'a str>,
    /// The verifier interface the service runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wit_version: Option<&'a str>,
}

impl<'a> CheckReport<'a> {
    /// The report of `result` (no `checkId` or `witVersion`).
    pub fn new(
        tenant: &'a str,
        digest: Option<&'a str>,
        result: &'a Result<CheckAnswer, CheckError>,
        metrics: &CallMetrics,
    ) -> Self {
        let (mut verdict, mut progress_key, mut error) = (None, None, None);
        match result {
            Ok(CheckAnswer::Verdict(v)) => verdict = Some(v),
            Ok(CheckAnswer::Key(key)) => progress_key = Some(key.as_str()),
            Err(err) => {
                let trap = match err {
                    CheckError::Trap { kind, stderr_tail } => {
                        Some((kind.code(), stderr_tail.as_str()))
                    }
                    _ => None,
                };
                error = Some(ErrorReport {
                    code: err.code(),
                    message: err.to_string(),
                    stderr_tail: trap.map(|(_, tail)| tail),
                    trap: trap.map(|(code, _)| code),
                });
            }
        }
        Self {
            check_id: None,
            error,
            metrics: MetricsReport::from(metrics),
            progress_key,
            status: status(result),
            tenant,
            verdict,
            verifier_digest: digest,
            wit_version: None,
        }
    }
}

/// The object of [`CheckReport::new`] as a JSON value.
pub fn check_json(
    tenant: &str,
    digest: Option<&str>,
    result: &Result<CheckAnswer, CheckError>,
    metrics: &CallMetrics,
) -> Value {
    serde_json::to_value(CheckReport::new(tenant, digest, result, metrics)).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use verdict_sandbox::TrapKind;

    fn metrics() -> CallMetrics {
        CallMetrics {
            duration: std::time::Duration::from_micros(42),
            fuel_used: 7,
            peak_memory_bytes: 65536,
            artifact_reads: 1,
            artifact_bytes: 26,
            wall_clock_ms: 1_700_000_000_000,
            ..CallMetrics::default()
        }
    }

    #[test]
    fn each_answer_has_its_fields_and_nothing_else() {
        let m = json!({
            "artifactBytes": 26, "artifactReads": 1, "durationUs": 42, "fuelUsed": 7,
            "peakMemoryBytes": 65536, "wallClockMs": 1_700_000_000_000u64,
        });
        let verdict: Verdict = serde_json::from_value(json!({"complete": true, "reason": "ok"}))
            .unwrap_or_else(|e| panic!("{e}"));
        let done = Ok(CheckAnswer::Verdict(verdict));
        assert_eq!(
            check_json("t", Some("d"), &done, &metrics()),
            json!({"tenant": "t", "verifierDigest": "d", "metrics": m, "status": "complete",
                   "verdict": {"complete": true, "reason": "ok"}})
        );
        let key = Ok(CheckAnswer::Key("k1".into()));
        assert_eq!(
            check_json("t", None, &key, &metrics()),
            json!({"tenant": "t", "verifierDigest": null, "metrics": m,
                   "status": "progress_key", "progressKey": "k1"})
        );
        let trap = Err(CheckError::Trap {
            kind: TrapKind::Unreachable,
            stderr_tail: "panicked".into(),
        });
        let mut served = CheckReport::new("t", Some("d"), &trap, &metrics());
        served.check_id = Some("c1");
        served.wit_version = Some("w");
        assert_eq!(
            serde_json::to_value(&served).unwrap_or_default(),
            json!({"tenant": "t", "verifierDigest": "d", "metrics": m,
                   "status": "checker_error", "checkId": "c1", "witVersion": "w",
                   "error": {"code": "trap", "message": trap.as_ref().err().map(ToString::to_string),
                             "trap": "unreachable", "stderrTail": "panicked"}})
        );
    }
}
