//! [`RemoteChecker`]: a completion and progress checker over the service's
//! API, for the loop (or any embedder) using verifiers served elsewhere.
//!
//! The check context's deadline travels as the
//! [`DEADLINE_HEADER`](crate::DEADLINE_HEADER) (the server takes the earlier
//! of it and the tenant's own timeout), and its cancellation drops the
//! request, which cancels the check on the server.

use crate::DEADLINE_HEADER;
use std::time::Duration;
use verdict_policy::{
    CheckContext, CheckFuture, CheckPacket, CheckerError, CompletionChecker, ProgressChecker,
    Verdict,
};

/// Why a [`RemoteChecker`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// The URL is not `http://` or `https://`.
    #[error("the verifier URL must start with http:// or https://: {0}")]
    Url(String),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// A tenant's verifiers served by `verdict serve`: `url` is the tenant's
/// (`https://host:8700/v1/tenants/NAME`); checks go to its `/completion`
/// and `/progress`.
#[derive(Debug, Clone)]
pub struct RemoteChecker {
    client: reqwest::Client,
    tenant_url: String,
    token: Option<String>,
}

/// Extra time past the deadline the client waits for the server's own
/// timeout answer.
const GRACE: Duration = Duration::from_millis(500);

impl RemoteChecker {
    /// A checker of the tenant at `tenant_url` (a trailing `/completion` or
    /// `/progress` is dropped), sending `token` as its bearer token.
    pub fn new(tenant_url: &str, token: Option<String>) -> Result<Self, RemoteError> {
        if !(tenant_url.starts_with("http://") || tenant_url.starts_with("https://")) {
            return Err(RemoteError::Url(tenant_url.to_owned()));
        }
        let trimmed = tenant_url.trim_end_matches('/');
        let trimmed = trimmed
            .strip_suffix("/completion")
            .or_else(|| trimmed.strip_suffix("/progress"))
            .unwrap_or(trimmed);
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| RemoteError::Client(e.to_string()))?;
        Ok(Self {
            client,
            tenant_url: trimmed.to_owned(),
            token,
        })
    }

    /// The tenant's URL.
    pub fn url(&self) -> &str {
        &self.tenant_url
    }

    async fn call(
        &self,
        role: &str,
        packet: &CheckPacket,
        ctx: &CheckContext,
    ) -> Result<serde_json::Value, CheckerError> {
        let body = serde_json::to_vec(packet)
            .map_err(|e| CheckerError::Failed(format!("cannot encode the packet: {e}")))?;
        let mut request = self
            .client
            .post(format!("{}/{role}", self.tenant_url))
            .header("content-type", "application/json")
            .body(body);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(left) = ctx.remaining() {
            if left.is_zero() {
                return Err(CheckerError::Timeout);
            }
            let ms = u64::try_from(left.as_millis()).unwrap_or(u64::MAX).max(1);
            request = request
                .header(DEADLINE_HEADER, ms.to_string())
                .timeout(left + GRACE);
        }
        let exchange = async {
            let response = request.send().await.map_err(transport)?;
            let status = response.status();
            let bytes = bounded_body(response).await?;
            let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| {
                CheckerError::Failed(format!("http_{}: not a JSON answer", status.as_u16()))
            })?;
            if !status.is_success() {
                let code = value["code"].as_str().unwrap_or("unknown");
                return Err(CheckerError::Failed(format!(
                    "http_{}: {code}",
                    status.as_u16()
                )));
            }
            Ok(value)
        };
        // Cancelled (or past the deadline): the request is dropped, which
        // closes its connection and cancels the check on the server.
        tokio::select! {
            answer = exchange => answer,
            () = ctx.cancelled() => Err(match ctx.remaining() {
                Some(left) if left.is_zero() => CheckerError::Timeout,
                _ => CheckerError::Cancelled,
            }),
        }
    }
}

/// The most of an answer read: a verdict is at most 16 KiB and a progress
/// key 4,000 characters, the rest of the object a few hundred bytes.
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// The answer's body, refused (never read further) past
/// [`MAX_ANSWER_BYTES`], announced or sent.
async fn bounded_body(mut response: reqwest::Response) -> Result<Vec<u8>, CheckerError> {
    let status = response.status().as_u16();
    let too_large = || {
        CheckerError::Failed(format!(
            "http_{status}: the answer is over {MAX_ANSWER_BYTES} bytes"
        ))
    };
    if response
        .content_length()
        .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport)? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn transport(e: reqwest::Error) -> CheckerError {
    if e.is_timeout() {
        CheckerError::Timeout
    } else {
        CheckerError::Failed(format!("remote verifier unreachable: {e}"))
    }
}

/// The checker error of a `checker_error` answer.
fn checker_error(value: &serde_json::Value) -> CheckerError {
    match value["error"]["code"].as_str().unwrap_or("unknown") {
        "timeout" => CheckerError::Timeout,
        "out_of_fuel" => CheckerError::OutOfFuel,
        "cancelled" => CheckerError::Cancelled,
        other => CheckerError::Failed(other.to_owned()),
    }
}

impl CompletionChecker for RemoteChecker {
    fn check<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, Verdict> {
        Box::pin(async move {
            let value = self.call("completion", packet, ctx).await?;
            match value["status"].as_str() {
                Some("complete" | "not_complete") => {
                    serde_json::from_value(value["verdict"].clone()).map_err(|e| {
                        CheckerError::Failed(format!("the server's verdict is invalid: {e}"))
                    })
                }
                _ => Err(checker_error(&value)),
            }
        })
    }

    fn identity(&self) -> String {
        format!("remote:{}/completion", self.tenant_url)
    }
}

impl ProgressChecker for RemoteChecker {
    fn progress_key<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, String> {
        Box::pin(async move {
            let value = self.call("progress", packet, ctx).await?;
            match (value["status"].as_str(), value["progressKey"].as_str()) {
                (Some("progress_key"), Some(key)) => Ok(key.to_owned()),
                _ => Err(checker_error(&value)),
            }
        })
    }

    fn identity(&self) -> String {
        format!("remote:{}/progress", self.tenant_url)
    }
}
