//! `verdict submit`: starts a durable execution through Restate's ingress
//! and prints its id; with `--wait`, waits for it, printing only notices.
//!
//! The execution's reference is told (stderr) before the request is sent,
//! and the request carries an idempotency key made of it: repeating the
//! same submission (`--conversation C --execution-id E`) after a lost
//! answer attaches to the first and runs nothing twice. Errors a restart
//! of Restate explains are retried with backoff, sending and waiting,
//! within `--timeout`.

use crate::exit::Exit;
use crate::stdout::note_line;
use anyhow::Context;
use std::path::PathBuf;
use std::time::Duration;
use verdict::durable::{
    Backoff, DurableError, ExecutionRecord, ExecutionRef, ExecutionState, RestateClient,
};
use verdict::{Phase, StopReason};

/// How often `--wait` reads the record.
const POLL: Duration = Duration::from_millis(200);

/// Arguments of `verdict submit`.
#[derive(Debug, clap::Args)]
pub struct SubmitArgs {
    /// The configuration file (its `[restate]` section says where Restate is).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The conversation (default: a new one). Executions of a conversation
    /// run one at a time, in order, on its messages so far.
    #[arg(long, value_name = "ID")]
    conversation: Option<String>,
    /// The execution's id in the conversation (default: a new one, told
    /// before the request is sent). Give the id of an earlier submission to
    /// attach to it (after a lost answer, say): it never runs twice.
    #[arg(long, value_name = "ID", requires = "conversation")]
    execution_id: Option<String>,
    /// The tenant whose verifiers decide (default: the conversation's, else
    /// the worker's only one).
    #[arg(long, value_name = "T")]
    tenant: Option<String>,
    /// Wait until the execution ends; print its notices and summary.
    #[arg(long)]
    wait: bool,
    /// Give up after this many seconds: retrying the submission while
    /// Restate cannot be reached, and with --wait, waiting (the execution
    /// goes on).
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    timeout: u64,
    /// The task for the agent.
    prompt: String,
}

/// The exit code of a finished execution, as `verdict run` gives it.
pub(crate) fn exit_of(record: &ExecutionRecord) -> Exit {
    if record.state == ExecutionState::Failed {
        return Exit::RunFailed;
    }
    match record.stop_reason() {
        Some(StopReason::Completed) => Exit::Complete,
        None | Some(StopReason::AnswerReturned) => Exit::Unverified,
        Some(StopReason::CheckerError) => Exit::CheckerError,
        Some(_) => Exit::Stopped,
    }
}

/// Runs `verdict submit`.
pub fn run(args: SubmitArgs) -> anyhow::Result<Exit> {
    if args.prompt.trim().is_empty() {
        anyhow::bail!("the prompt is empty: give the task as the last argument");
    }
    let settings = crate::config::load_restate(&args.config, None)?;
    let client = RestateClient::new(&settings.ingress, &settings.admin)?;
    let conversation = args
        .conversation
        .clone()
        .unwrap_or_else(|| format!("c-{:016x}", fastrand_u64()));
    let execution = match &args.execution_id {
        Some(id) => format!("{conversation}/{id}").parse::<ExecutionRef>()?,
        None => ExecutionRef::new(&conversation)?,
    };
    let runtime = super::runtime()?;
    runtime.block_on(async {
        let end = tokio::time::Instant::now() + Duration::from_secs(args.timeout);
        // Told before anything is sent: a lost answer still leaves the id.
        note_line(format_args!(
            "[verdict] submitting {execution} (to attach to it again: --conversation {} --execution-id {})",
            execution.conversation, execution.execution
        ));
        let submitted = send(&client, &execution, &args, end).await.with_context(|| {
            format!(
                "cannot submit {execution}; it may have been received: run the same command with \
                 --conversation {} --execution-id {} to attach to it without running it twice",
                execution.conversation, execution.execution
            )
        })?;
        if submitted.attached {
            note_line(format_args!(
                "[verdict] {execution} was submitted before: attached to it (nothing new runs)"
            ));
        }
        crate::outln!("{execution}").map_err(|e| e.losing(format!("submitted {execution}")))?;
        if !args.wait {
            return Ok(Exit::Complete);
        }
        wait(&client, &execution, end, args.timeout).await
    })
}

/// Sends the submission, retrying what a restart of Restate explains
/// until `end` (the idempotency key makes a repeat harmless).
async fn send(
    client: &RestateClient,
    execution: &ExecutionRef,
    args: &SubmitArgs,
    end: tokio::time::Instant,
) -> Result<verdict::durable::Submitted, DurableError> {
    let mut backoff = Backoff::default();
    let mut told = false;
    loop {
        let left = end.saturating_duration_since(tokio::time::Instant::now());
        let sent = tokio::time::timeout(
            left,
            client.submit(execution, &args.prompt, args.tenant.as_deref()),
        )
        .await
        .unwrap_or_else(|_| {
            Err(DurableError::Unreachable {
                url: "Restate's ingress".to_owned(),
                detail: format!("no answer within {} s", args.timeout),
            })
        });
        match sent {
            Err(error) if error.is_transient() && tokio::time::Instant::now() < end => {
                if !told {
                    note_line(format_args!(
                        "[verdict] {error}; retrying for up to {} s",
                        args.timeout
                    ));
                    told = true;
                }
                tokio::time::sleep(backoff.delay()).await;
            }
            other => return other,
        }
    }
}

/// Waits until the execution ends (or `end`), riding out restarts of
/// Restate; exits with the final record's code.
async fn wait(
    client: &RestateClient,
    execution: &ExecutionRef,
    end: tokio::time::Instant,
    timeout: u64,
) -> anyhow::Result<Exit> {
    let mut seen = (None, 0);
    let mut backoff = Backoff::default();
    let mut unreachable = false;
    loop {
        match client.status_until(execution, end.into_std()).await {
            Ok(record) => {
                if unreachable {
                    note_line(format_args!("[verdict] Restate answers again"));
                    unreachable = false;
                }
                backoff = Backoff::default();
                if let Some(record) = record {
                    notice_changes(&record, &mut seen);
                    if record.state != ExecutionState::Running {
                        for line in summary(&record) {
                            note_line(format_args!("[verdict] {line}"));
                        }
                        return Ok(exit_of(&record));
                    }
                }
            }
            Err(error) if error.is_transient() => {
                if !unreachable {
                    note_line(format_args!(
                        "[verdict] {error}; still waiting for {execution} (retrying with backoff)"
                    ));
                    unreachable = true;
                }
            }
            Err(error) => {
                return Err(error).context(format!("cannot read the record of {execution}"));
            }
        }
        if tokio::time::Instant::now() >= end {
            if unreachable {
                note_line(format_args!(
                    "[verdict] Restate did not answer again within {timeout} s; {execution} goes on \
                     (`verdict status {execution}`)"
                ));
            } else {
                note_line(format_args!(
                    "[verdict] {execution} still running after {timeout} s (`verdict status {execution}`)"
                ));
            }
            return Ok(Exit::RunFailed);
        }
        let pause = if unreachable { backoff.delay() } else { POLL };
        tokio::time::sleep(pause.min(end.saturating_duration_since(tokio::time::Instant::now())))
            .await;
    }
}

/// Prints a notice when the phase or the recovery count changed.
fn notice_changes(record: &ExecutionRecord, seen: &mut (Option<Phase>, u32)) {
    let Some(d) = &record.diagnostics else {
        return;
    };
    if d.recovery_attempts_used > seen.1 {
        note_line(format_args!(
            "[verdict] recovering (attempt {}/{})",
            d.recovery_attempts_used, d.recovery_attempts_allowed
        ));
    }
    *seen = (Some(d.phase), d.recovery_attempts_used);
}

/// The lines `submit --wait` and `status` print about a record.
pub(crate) fn summary(record: &ExecutionRecord) -> Vec<String> {
    let mut lines = vec![format!("execution: {}", record.execution_id)];
    lines.push(format!("state: {}", json_name(&record.state)));
    if let Some(tenant) = &record.tenant {
        lines.push(format!("tenant: {tenant}"));
    }
    match &record.diagnostics {
        Some(d) => {
            lines.push(format!("phase: {}", json_name(&d.phase)));
            if let Some(reason) = d.reason {
                lines.push(format!("stop reason: {}", json_name(&reason)));
            }
            lines.push(format!(
                "recovery used: {}/{}",
                d.recovery_attempts_used, d.recovery_attempts_allowed
            ));
            lines.push(match &d.last_verdict {
                Some(v) => format!(
                    "verdict: {}{}",
                    if v.complete {
                        "complete"
                    } else {
                        "not complete"
                    },
                    v.reason
                        .as_deref()
                        .map(|r| format!(" - {r}"))
                        .unwrap_or_default()
                ),
                None => "verdict: none".to_owned(),
            });
            lines.push(format!("admissions: {}", d.counters.admissions));
        }
        None => lines.push("no loop policy: the answer was not verified".to_owned()),
    }
    if let Some(call) = &record.uncertain {
        lines.push(format!(
            "uncertain effect: call {} {} ({}), idempotency key {}: started before a crash, never run again",
            call.sequence, call.tool, call.call_id, call.idempotency_key
        ));
    }
    for key in &record.reruns {
        lines.push(format!(
            "run again after a crash (a read, or idempotent): {key}"
        ));
    }
    lines.push(format!(
        "journaled: {} model calls, {} tool calls, {} checks",
        record.model_calls, record.tool_calls, record.checks
    ));
    if let Some(error) = &record.error {
        lines.push(format!("error: {error}"));
    }
    lines
}

/// A serde enum's name (`complete`, `uncertain_effect`).
fn json_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// A random number for a new conversation id (not a secret).
fn fastrand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    hasher.finish()
}
