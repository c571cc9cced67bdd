//! A run's exit code, its JSON result and its text summary, from the
//! agent's one classification of it ([`RunOutcome`]).

use crate::exit::Exit;
use serde_json::{Value, json};
use verdict::CheckerTotals;
use verdict::Usage;
use verdict::{
    AgentError, AgentResponse, RunError, RunOutcome, RunStatus, SettledCall, ToolOutcome,
};
use verdict::{LoopDiagnostics, Phase, StopReason};

/// The outcome's name in JSON and summaries.
pub fn name(outcome: RunOutcome) -> &'static str {
    match outcome {
        RunOutcome::Verified => "completed",
        RunOutcome::AnswerReturned => "answer_returned",
        RunOutcome::Failed => "error",
        _ => "stopped",
    }
}

/// The outcome of a finished run and its exit code.
pub fn classify(result: &Result<AgentResponse, RunError>) -> (RunOutcome, Exit) {
    let outcome = RunOutcome::of(result);
    let exit = match outcome {
        RunOutcome::Verified => Exit::Complete,
        RunOutcome::AnswerReturned => Exit::Unverified,
        RunOutcome::Stopped {
            reason: StopReason::CheckerError,
        } => Exit::CheckerError,
        RunOutcome::Failed => Exit::RunFailed,
        _ => Exit::Stopped,
    };
    (outcome, exit)
}

fn snake(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn stop_reason(response: &AgentResponse) -> Value {
    match (&response.loop_diagnostics, response.status) {
        (Some(d), _) if d.reason.is_some() => snake(d.reason),
        (_, RunStatus::MaxIterations) => json!("max_iterations"),
        (_, RunStatus::Stopped(reason)) => snake(reason),
        (None, RunStatus::Completed) => json!("answer_returned"),
        _ => Value::Null,
    }
}

fn tool_outcome_name(outcome: &ToolOutcome) -> &'static str {
    match outcome {
        ToolOutcome::Succeeded { .. } => "succeeded",
        ToolOutcome::Failed { .. } => "failed",
        ToolOutcome::NotStarted { .. } => "not_started",
        ToolOutcome::Unknown { .. } => "unknown",
        _ => "other",
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
            diag: r.loop_diagnostics.as_ref(),
        }),
        Err(e) => e.settled.as_deref().map(|s| Settled {
            output: &s.output_text,
            tool_calls: &s.tool_calls,
            usage: &s.usage,
            iterations: s.iterations,
            diag: s.loop_diagnostics.as_ref(),
        }),
    }
}

/// The model turns that settled before `error`, of the `begun` ones: a
/// failed model call is the last turn begun, and it never settled.
fn settled_turns(error: &RunError, begun: u32) -> u32 {
    match error.error {
        AgentError::Provider(_) | AgentError::BudgetExhausted { .. } => begun.saturating_sub(1),
        _ => begun,
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
        "outcome": name(outcome),
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
                   "outcome": tool_outcome_name(&c.outcome), "receipt": c.receipt.is_some()})
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
    let mut lines = vec![format!("outcome: {} (exit {})", name(outcome), exit as u8)];
    match result {
        Ok(response) => {
            let reason = stop_reason(response);
            let reason = reason.as_str().unwrap_or("none");
            match &response.loop_diagnostics {
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
                    settled_turns(error, s.iterations),
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
