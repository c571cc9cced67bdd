//! How a run ended, its exit code, its JSON result and its text summary.

use crate::checker::CheckerTotals;
use crate::exit::Exit;
use serde_json::{Value, json};
use verdict_agent::{AgentResponse, RunError, RunStatus, SettledCall, ToolOutcome};
use verdict_policy::{LoopDiagnostics, Phase, StopReason, WorkflowStatus};
use verdict_providers::Usage;

/// The outcome classes `run` distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The completion checker confirmed the work.
    Completed,
    /// A final answer came back without verification.
    AnswerReturned,
    /// The loop policy or the iteration bound stopped the run.
    Stopped,
    /// The run failed.
    Error,
}

impl Outcome {
    /// The name used in JSON and summaries.
    pub fn name(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::AnswerReturned => "answer_returned",
            Self::Stopped => "stopped",
            Self::Error => "error",
        }
    }
}

/// Classifies a finished run.
pub fn classify(result: &Result<AgentResponse, RunError>) -> (Outcome, Exit) {
    let Ok(response) = result else {
        return (Outcome::Error, Exit::RunFailed);
    };
    let diag = response.r#loop.as_ref();
    match response.status {
        RunStatus::Completed => {
            let verified = diag.is_some_and(|d| {
                d.reason == Some(StopReason::Completed)
                    && d.status == Some(WorkflowStatus::Completed)
            });
            if verified {
                (Outcome::Completed, Exit::Complete)
            } else {
                (Outcome::AnswerReturned, Exit::Unverified)
            }
        }
        RunStatus::MaxIterations => (Outcome::Stopped, Exit::Stopped),
        RunStatus::Stopped(StopReason::CheckerError) => (Outcome::Stopped, Exit::CheckerError),
        RunStatus::Stopped(_) => (Outcome::Stopped, Exit::Stopped),
    }
}

fn snake(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn stop_reason(response: &AgentResponse) -> Value {
    match (&response.r#loop, response.status) {
        (Some(d), _) if d.reason.is_some() => snake(d.reason),
        (_, RunStatus::MaxIterations) => json!("max_iterations"),
        (_, RunStatus::Stopped(reason)) => snake(reason),
        (None, RunStatus::Completed) => json!("answer_returned"),
        _ => Value::Null,
    }
}

fn outcome_name(outcome: &ToolOutcome) -> &'static str {
    match outcome {
        ToolOutcome::Succeeded { .. } => "succeeded",
        ToolOutcome::Failed { .. } => "failed",
        ToolOutcome::NotStarted { .. } => "not_started",
        ToolOutcome::Unknown { .. } => "unknown",
    }
}

/// The verifier's feedback when the run ended waiting for evidence the
/// host requires (never an approval request).
fn input_needed(diag: &LoopDiagnostics) -> Option<String> {
    if diag.phase != Phase::InputNeeded {
        return None;
    }
    let feedback = diag.last_verdict.as_ref().and_then(|v| v.feedback.clone());
    Some(feedback.unwrap_or_else(|| "no feedback given".to_owned()))
}

/// What a run settled, from its response or, when it failed, its error.
struct Settled<'a> {
    output: &'a str,
    tool_calls: &'a [SettledCall],
    usage: &'a Usage,
    iterations: u32,
    diag: Option<&'a LoopDiagnostics>,
}

fn settled(result: &Result<AgentResponse, RunError>) -> Option<Settled<'_>> {
    match result {
        Ok(r) => Some(Settled {
            output: &r.output_text,
            tool_calls: &r.tool_calls,
            usage: &r.usage,
            iterations: r.iterations,
            diag: r.r#loop.as_ref(),
        }),
        Err(e) => e.settled.as_deref().map(|s| Settled {
            output: &s.output_text,
            tool_calls: &s.tool_calls,
            usage: &s.usage,
            iterations: s.iterations,
            diag: s.r#loop.as_ref(),
        }),
    }
}

/// The machine-readable result of one run (`--json`). A failed run reports
/// what settled before the failure too; its `stopReason`, `phase` and
/// `workflowStatus` are null (the loop never decided).
pub fn to_json(
    result: &Result<AgentResponse, RunError>,
    tenant: Option<&str>,
    totals: &CheckerTotals,
) -> Value {
    let (outcome, exit) = classify(result);
    let mut out = json!({
        "outcome": outcome.name(),
        "exitCode": exit as u8,
        "tenant": tenant,
        "checker": totals,
        "stopReason": null,
        "phase": null,
        "workflowStatus": null,
        "inputNeeded": null,
    });
    let settled = settled(result);
    let diag = settled.as_ref().and_then(|s| s.diag);
    out["verdict"] = diag.map_or(Value::Null, |d| snake(&d.last_verdict));
    out["recovery"] = diag.map_or(
        Value::Null,
        |d| json!({"used": d.recovery_attempts_used, "allowed": d.recovery_attempts_allowed}),
    );
    out["checkerError"] = diag.map_or(Value::Null, |d| snake(d.checker_error));
    out["output"] = settled.as_ref().map_or(Value::Null, |s| json!(s.output));
    out["iterations"] = json!(settled.as_ref().map_or(0, |s| s.iterations));
    out["toolCalls"] = settled
        .as_ref()
        .map_or(&[][..], |s| s.tool_calls)
        .iter()
        .map(|c| {
            json!({"id": c.call.id, "name": c.call.name, "effect": snake(c.effect),
                   "outcome": outcome_name(&c.outcome), "receipt": c.receipt.is_some()})
        })
        .collect();
    out["usage"] = settled.as_ref().map_or(Value::Null, |s| snake(s.usage));
    out["loop"] = snake(diag);
    match result {
        Ok(response) => {
            out["stopReason"] = stop_reason(response);
            out["phase"] = diag.map_or(Value::Null, |d| snake(d.phase));
            out["workflowStatus"] = diag.map_or(Value::Null, |d| snake(d.status));
            out["inputNeeded"] = diag
                .and_then(input_needed)
                .map_or(Value::Null, |feedback| json!({"feedback": feedback}));
        }
        Err(error) => {
            out["error"] = json!({"message": error.to_string()});
        }
    }
    out
}

/// The human summary lines of one run.
pub fn summary(result: &Result<AgentResponse, RunError>, totals: &CheckerTotals) -> Vec<String> {
    let (outcome, exit) = classify(result);
    let mut lines = vec![format!("outcome: {} (exit {})", outcome.name(), exit as u8)];
    match result {
        Ok(response) => {
            let reason = stop_reason(response);
            let reason = reason.as_str().unwrap_or("none");
            match &response.r#loop {
                Some(d) => {
                    lines.push(format!(
                        "phase: {}; reason: {reason}; recovery used: {}/{}",
                        snake(d.phase).as_str().unwrap_or("?"),
                        d.recovery_attempts_used,
                        d.recovery_attempts_allowed
                    ));
                    if let Some(kind) = d.checker_error {
                        lines.push(format!(
                            "checker error: {}",
                            snake(kind).as_str().unwrap_or("?")
                        ));
                    }
                    if let Some(feedback) = input_needed(d) {
                        lines.push(format!(
                            "input needed: the verifier still lacks evidence: {feedback}"
                        ));
                    }
                    if let Some(v) = &d.last_verdict {
                        lines.push(format!(
                            "last verdict: {}{}",
                            if v.complete {
                                "complete"
                            } else {
                                "not complete"
                            },
                            v.reason
                                .as_deref()
                                .map(|r| format!(" ({r})"))
                                .unwrap_or_default()
                        ));
                    }
                }
                None => lines.push(format!("no loop policy; reason: {reason}")),
            }
            lines.push(format!(
                "calls: {} model turns, {} tool calls; tokens in {} / out {}",
                response.iterations,
                response.tool_calls.len(),
                response.usage.input_tokens,
                response.usage.output_tokens
            ));
        }
        Err(error) => {
            lines.push(format!("error: {error}"));
            if let Some(s) = settled(result) {
                lines.push(format!(
                    "settled before the error: {} model turns, {} tool calls ({} ran); tokens in {} / out {}",
                    s.iterations,
                    s.tool_calls.len(),
                    s.tool_calls.iter().filter(|c| c.receipt.is_some()).count(),
                    s.usage.input_tokens,
                    s.usage.output_tokens
                ));
            }
        }
    }
    if totals.checks + totals.progress_samples > 0 {
        lines.push(format!(
            "checker: {} checks, {} progress samples, {} errors, {:.3} ms, fuel {}, peak memory {} KiB",
            totals.checks,
            totals.progress_samples,
            totals.errors,
            totals.duration_us as f64 / 1e3,
            totals.fuel_used,
            totals.peak_memory_bytes / 1024
        ));
    }
    lines
}
