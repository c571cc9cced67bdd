//! A client of Restate for verdict's executions: registers a worker with
//! the admin API, submits executions through the ingress, reads their
//! records.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Deserialize;

use crate::error::DurableError;
use crate::object::SERVICE;
use crate::record::{ExecutionRecord, ExecutionState, Submission, check_id};
use crate::retry::Backoff;

/// How long one HTTP request to Restate may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How much of an error body is kept.
const MAX_ERROR_BODY: usize = 2000;

/// An execution: its conversation and its id there, shown as
/// `CONVERSATION/EXECUTION`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionRef {
    /// The conversation (the virtual object's key).
    pub conversation: String,
    /// The execution's id in the conversation.
    pub execution: String,
}

impl fmt::Display for ExecutionRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.conversation, self.execution)
    }
}

impl FromStr for ExecutionRef {
    type Err = DurableError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (conversation, execution) =
            text.split_once('/')
                .ok_or_else(|| DurableError::InvalidId {
                    what: "execution reference (CONVERSATION/EXECUTION)",
                    value: text.to_owned(),
                })?;
        check_id("conversation id", conversation)?;
        check_id("execution id", execution)?;
        Ok(Self {
            conversation: conversation.to_owned(),
            execution: execution.to_owned(),
        })
    }
}

impl ExecutionRef {
    /// A new execution of `conversation`, with a fresh id.
    pub fn new(conversation: &str) -> Result<Self, DurableError> {
        check_id("conversation id", conversation)?;
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default();
        Ok(Self {
            conversation: conversation.to_owned(),
            execution: format!("ex-{millis:x}-{:016x}", fastrand::u64(..)),
        })
    }
}

/// Restate's ingress and admin APIs.
#[derive(Debug, Clone)]
pub struct RestateClient {
    ingress: String,
    admin: String,
    http: reqwest::Client,
}

#[derive(Deserialize)]
struct Sent {
    #[serde(rename = "invocationId")]
    invocation_id: String,
    #[serde(default)]
    status: Option<String>,
}

/// What Restate answered to a submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submitted {
    /// Restate's invocation id.
    pub invocation_id: String,
    /// True when the execution had been submitted before (same
    /// conversation and execution id): this submission attached to it and
    /// started nothing.
    pub attached: bool,
}

/// The header Restate's ingress deduplicates requests by.
const IDEMPOTENCY_KEY: &str = "idempotency-key";

impl ExecutionRef {
    /// The idempotency key its submissions carry: a repeated submission
    /// of the same execution attaches to the first (Restate keeps the key
    /// for its idempotency retention, a day by default; after that the
    /// conversation object still returns the first's record).
    pub fn idempotency_key(&self) -> String {
        self.to_string()
    }
}

impl RestateClient {
    /// A client of the Restate server with these ingress and admin base
    /// URLs (e.g. `http://127.0.0.1:8080`, `http://127.0.0.1:9070`).
    pub fn new(ingress: &str, admin: &str) -> Result<Self, DurableError> {
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| DurableError::Unreachable {
                url: ingress.to_owned(),
                detail: e.to_string(),
            })?;
        Ok(Self {
            ingress: ingress.trim_end_matches('/').to_owned(),
            admin: admin.trim_end_matches('/').to_owned(),
            http,
        })
    }

    async fn post(
        &self,
        url: String,
        body: String,
        idempotency_key: Option<String>,
    ) -> Result<String, DurableError> {
        let mut request = self
            .http
            .post(&url)
            .header("content-type", "application/json");
        if let Some(key) = idempotency_key {
            request = request.header(IDEMPOTENCY_KEY, key);
        }
        let answer = request
            .body(body)
            .send()
            .await
            .map_err(|e| DurableError::Unreachable {
                url: url.clone(),
                detail: e.to_string(),
            })?;
        let status = answer.status();
        let text = answer.text().await.map_err(|e| DurableError::Unreachable {
            url: url.clone(),
            detail: e.to_string(),
        })?;
        if !status.is_success() {
            let mut body = text;
            if body.len() > MAX_ERROR_BODY {
                let mut end = MAX_ERROR_BODY;
                while !body.is_char_boundary(end) {
                    end -= 1;
                }
                body.truncate(end);
            }
            return Err(DurableError::Refused {
                url,
                status: status.as_u16(),
                body,
            });
        }
        Ok(text)
    }

    /// Registers (or re-registers) the worker serving at `worker_url` with
    /// the admin API.
    pub async fn register(&self, worker_url: &str) -> Result<(), DurableError> {
        let body = serde_json::json!({ "uri": worker_url, "force": true }).to_string();
        self.post(format!("{}/deployments", self.admin), body, None)
            .await
            .map(drop)
    }

    /// Runs `execution` with `prompt` (for `tenant`, or the default) and
    /// waits for its record in the same request (bounded by the client's
    /// request timeout: for short executions; [`RestateClient::submit`] and
    /// [`RestateClient::wait`] otherwise). Sent with the execution's
    /// idempotency key: repeating it attaches to the first.
    pub async fn execute(
        &self,
        execution: &ExecutionRef,
        prompt: &str,
        tenant: Option<&str>,
    ) -> Result<ExecutionRecord, DurableError> {
        let body = submission(execution, prompt, tenant);
        let url = format!(
            "{}/{SERVICE}/{}/execute",
            self.ingress, execution.conversation
        );
        let text = self
            .post(url.clone(), body, Some(execution.idempotency_key()))
            .await?;
        serde_json::from_str(&text).map_err(|e| DurableError::Unexpected {
            url,
            detail: e.to_string(),
        })
    }

    /// Starts `execution` with `prompt` (for `tenant`, or the default;
    /// queued behind a running execution of the same conversation). Sent
    /// with the execution's idempotency key
    /// ([`ExecutionRef::idempotency_key`]): submitting the same execution
    /// again (after a lost answer, say) attaches to the first and runs
    /// nothing, whatever the prompt.
    pub async fn submit(
        &self,
        execution: &ExecutionRef,
        prompt: &str,
        tenant: Option<&str>,
    ) -> Result<Submitted, DurableError> {
        let body = submission(execution, prompt, tenant);
        let url = format!(
            "{}/{SERVICE}/{}/execute/send",
            self.ingress, execution.conversation
        );
        let text = self
            .post(url.clone(), body, Some(execution.idempotency_key()))
            .await?;
        let sent: Sent = serde_json::from_str(&text).map_err(|e| DurableError::Unexpected {
            url,
            detail: e.to_string(),
        })?;
        Ok(Submitted {
            attached: sent.status.as_deref() == Some("PreviouslyAccepted"),
            invocation_id: sent.invocation_id,
        })
    }

    /// The record of `execution`, `None` before it started.
    pub async fn status(
        &self,
        execution: &ExecutionRef,
    ) -> Result<Option<ExecutionRecord>, DurableError> {
        let url = format!(
            "{}/{SERVICE}/{}/status",
            self.ingress, execution.conversation
        );
        let body = serde_json::Value::String(execution.execution.clone()).to_string();
        let text = self.post(url.clone(), body, None).await?;
        serde_json::from_str(&text).map_err(|e| DurableError::Unexpected {
            url,
            detail: e.to_string(),
        })
    }

    /// Polls `execution`'s record every `every` until it is finished or
    /// failed, for at most `limit`; `None` when the limit came first.
    /// Transient errors ([`DurableError::is_transient`]: Restate
    /// restarting, say) are retried with backoff within the limit; the
    /// last one is returned when the limit comes during them.
    pub async fn wait(
        &self,
        execution: &ExecutionRef,
        every: Duration,
        limit: Duration,
    ) -> Result<Option<ExecutionRecord>, DurableError> {
        let end = Instant::now() + limit;
        let mut backoff = Backoff::default();
        loop {
            match self.status_until(execution, end).await {
                Ok(Some(record)) if record.state != ExecutionState::Running => {
                    return Ok(Some(record));
                }
                Ok(_) => {
                    backoff = Backoff::default();
                    if Instant::now() >= end {
                        return Ok(None);
                    }
                    tokio::time::sleep(every.min(end.saturating_duration_since(Instant::now())))
                        .await;
                }
                Err(error) if error.is_transient() && Instant::now() < end => {
                    let delay = backoff.delay();
                    tokio::time::sleep(delay.min(end.saturating_duration_since(Instant::now())))
                        .await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// [`RestateClient::status`], cut off at `end` (then unreachable).
    pub async fn status_until(
        &self,
        execution: &ExecutionRef,
        end: Instant,
    ) -> Result<Option<ExecutionRecord>, DurableError> {
        let left = end.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, self.status(execution)).await {
            Ok(answer) => answer,
            Err(_elapsed) => Err(DurableError::Unreachable {
                url: format!(
                    "{}/{SERVICE}/{}/status",
                    self.ingress, execution.conversation
                ),
                detail: "no answer within the wait limit".to_owned(),
            }),
        }
    }
}

fn submission(execution: &ExecutionRef, prompt: &str, tenant: Option<&str>) -> String {
    serde_json::to_string(&Submission {
        execution_id: execution.execution.clone(),
        prompt: prompt.to_owned(),
        tenant: tenant.map(str::to_owned),
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_execution_ref_reads_back_as_it_is_shown() {
        let execution = ExecutionRef::new("conv-1").unwrap();
        assert!(execution.execution.starts_with("ex-"));
        let shown = execution.to_string();
        assert_eq!(shown.parse::<ExecutionRef>().unwrap(), execution);
    }

    #[test]
    fn ids_outside_the_alphabet_are_refused() {
        for text in ["conv", "/ex", "conv/", "a b/ex", "conv/ex/more", "c/ex:1"] {
            assert!(text.parse::<ExecutionRef>().is_err(), "{text}");
        }
        assert!(ExecutionRef::new("a/b").is_err());
        assert!(ExecutionRef::new(&"x".repeat(129)).is_err());
        assert!(ExecutionRef::new(&"x".repeat(128)).is_ok());
    }
}
