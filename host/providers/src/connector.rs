//! Named connectors: a protocol, a base URL, a credential, default headers,
//! timeouts and a retry policy, speaking HTTP with reqwest (rustls).

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use futures::future::BoxFuture;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use verdict_policy::CancelHandle;

use crate::errors::{ProviderError, TimeoutPhase};
use crate::model::{CallContext, EventStream, Model, ModelRequest, ModelResponse};
use crate::protocols::{KeyHeader, Protocol, classify_error};
use crate::retry::{RetryPolicy, retryable_before_first_event, with_retries};
use crate::secret::{ApiKey, Credential};
use crate::sse;

/// Largest response body read into memory (non-streaming answers, errors).
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Every wait of a call, bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Opening a connection: DNS, TCP connect and TLS handshake
    /// ([`TimeoutPhase::Connect`], retried). Default 10 s.
    pub connect: Duration,
    /// From sending the request to the response headers, connecting
    /// included. Default 600 s: a non-streaming answer from a reasoning
    /// model sends its headers only when the whole turn is generated.
    pub first_byte: Duration,
    /// Between two chunks of a body. Default 120 s.
    pub idle: Duration,
    /// Whole non-streaming call, per attempt. Default 600 s.
    pub total: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(600),
            idle: Duration::from_secs(120),
            total: Duration::from_secs(600),
        }
    }
}

/// Everything that defines a named connector.
#[derive(Debug, Clone)]
pub struct ConnectorConfig {
    /// The name the host refers to it by (e.g. `openai-main`).
    pub name: String,
    /// Wire protocol.
    pub protocol: Protocol,
    /// API base, e.g. `https://api.openai.com/v1` or a local server.
    pub base_url: String,
    /// Where the key comes from.
    pub credential: Credential,
    /// Extra headers sent with every request.
    pub headers: Vec<(String, String)>,
    /// Bounds on every wait.
    pub timeouts: Timeouts,
    /// Retries for 429/5xx.
    pub retry: RetryPolicy,
    /// Idle connections kept for reuse (the rest close when their call
    /// ends). Default [`DEFAULT_MAX_IDLE_CONNECTIONS`]: a burst of
    /// concurrent calls leaves that many open, not one per call, while
    /// executions wait between calls (each keeps ~40 KiB of buffers).
    pub max_idle_connections: usize,
}

/// The default [`ConnectorConfig::max_idle_connections`].
pub const DEFAULT_MAX_IDLE_CONNECTIONS: usize = 64;

impl ConnectorConfig {
    /// The vendor defaults: public base URL, key from the vendor's usual
    /// environment variable.
    pub fn new(name: impl Into<String>, protocol: Protocol) -> Self {
        Self {
            name: name.into(),
            protocol,
            base_url: protocol.default_base_url().to_owned(),
            credential: Credential::Env(protocol.default_env_var().to_owned()),
            headers: Vec::new(),
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            max_idle_connections: DEFAULT_MAX_IDLE_CONNECTIONS,
        }
    }

    /// Use another base URL (an OpenAI-compatible server, the fake provider).
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// Use another credential source.
    pub fn with_credential(mut self, credential: Credential) -> Self {
        self.credential = credential;
        self
    }

    /// Add a header sent with every request.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Replace the timeouts.
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Replace the retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Keep at most `max` idle connections for reuse.
    pub fn with_max_idle_connections(mut self, max: usize) -> Self {
        self.max_idle_connections = max;
        self
    }
}

/// A ready connector; implements [`Model`]. Cheap to clone.
#[derive(Clone)]
pub struct Connector {
    name: String,
    protocol: Protocol,
    base_url: String,
    client: reqwest::Client,
    headers: HeaderMap,
    timeouts: Timeouts,
    retry: RetryPolicy,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("name", &self.name)
            .field("protocol", &self.protocol)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

fn config_error(detail: impl Into<String>) -> ProviderError {
    ProviderError::Config {
        detail: detail.into(),
    }
}

impl Connector {
    /// Build the connector; reads the credential now.
    pub fn new(config: ConnectorConfig) -> Result<Self, ProviderError> {
        let key = match &config.credential {
            Credential::Env(var) => match std::env::var(var) {
                Ok(v) if !v.trim().is_empty() => Some(ApiKey::new(v.trim())),
                _ => {
                    return Err(ProviderError::MissingCredential {
                        env_var: var.clone(),
                    });
                }
            },
            Credential::Key(key) => Some(key.clone()),
            Credential::None => None,
        };
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in config.protocol.client().endpoint().fixed_headers {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        for (name, value) in &config.headers {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|_| config_error(format!("bad header name {name:?}")))?;
            let value = HeaderValue::try_from(value.as_str())
                .map_err(|_| config_error(format!("bad value for header {name}")))?;
            headers.insert(name, value);
        }
        if let Some(key) = key {
            let (name, text) = match config.protocol.client().endpoint().key_header {
                KeyHeader::Bearer => ("authorization", format!("Bearer {}", key.expose())),
                KeyHeader::Plain(name) => (name, key.expose().to_owned()),
            };
            // The message must not echo the key.
            let mut value = HeaderValue::try_from(text)
                .map_err(|_| config_error("the API key is not a valid header value"))?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let url = reqwest::Url::parse(&config.base_url)
            .map_err(|e| config_error(format!("base URL {:?}: {e}", config.base_url)))?;
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .connect_timeout(config.timeouts.connect)
            .tcp_nodelay(true)
            .pool_idle_timeout(Duration::from_secs(60))
            .pool_max_idle_per_host(config.max_idle_connections);
        let loopback = matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
        if loopback {
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| config_error(format!("HTTP client: {e}")))?;
        Ok(Self {
            name: config.name,
            protocol: config.protocol,
            base_url: config.base_url,
            client,
            headers,
            timeouts: config.timeouts,
            retry: config.retry,
        })
    }

    /// The connector's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The protocol it speaks.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The request's URL and encoded body.
    fn encode(
        &self,
        request: &ModelRequest,
        stream: bool,
    ) -> Result<(String, Bytes), ProviderError> {
        let body = Bytes::from(
            serde_json::to_vec(&self.protocol.client().encode_request(request, stream))
                .map_err(|e| config_error(format!("request body: {e}")))?,
        );
        Ok((
            self.protocol.url(&self.base_url, &request.model, stream),
            body,
        ))
    }

    /// One HTTP attempt: a 2xx response, or the classified error.
    async fn attempt(
        &self,
        url: &str,
        body: Bytes,
        cancel: &CancelHandle,
    ) -> Result<reqwest::Response, ProviderError> {
        let send = self
            .client
            .post(url)
            .headers(self.headers.clone())
            .body(body)
            .send();
        let first_byte = self.timeouts.first_byte;
        let response = tokio::select! {
            () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            r = tokio::time::timeout(first_byte, send) => match r {
                Err(_) => return Err(ProviderError::Timeout { phase: TimeoutPhase::FirstByte, after: first_byte }),
                // The client's only timeout is the connect timeout.
                Ok(Err(e)) if e.is_timeout() => return Err(ProviderError::Timeout { phase: TimeoutPhase::Connect, after: self.timeouts.connect }),
                Ok(Err(e)) => return Err(ProviderError::Transport { detail: e.to_string() }),
                Ok(Ok(response)) => response,
            },
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let headers = response.headers().clone();
        let body = self.read_body(response, cancel).await.unwrap_or_default();
        Err(classify_error(status.as_u16(), &headers, &body))
    }

    /// Read a whole body, every chunk wait bounded by the idle timeout.
    async fn read_body(
        &self,
        response: reqwest::Response,
        cancel: &CancelHandle,
    ) -> Result<Bytes, ProviderError> {
        let mut stream = response.bytes_stream();
        let mut body = BytesMut::new();
        let idle = self.timeouts.idle;
        loop {
            let next = tokio::select! {
                () = cancel.cancelled() => return Err(ProviderError::Cancelled),
                next = tokio::time::timeout(idle, stream.next()) => next,
            };
            match next {
                Err(_) => {
                    return Err(ProviderError::Timeout {
                        phase: TimeoutPhase::Idle,
                        after: idle,
                    });
                }
                Ok(None) => return Ok(body.freeze()),
                Ok(Some(Err(e))) => {
                    return Err(ProviderError::truncated(format!(
                        "body ended abnormally: {e}"
                    )));
                }
                Ok(Some(Ok(chunk))) => {
                    if body.len() + chunk.len() > MAX_BODY_BYTES {
                        return Err(ProviderError::malformed(format!(
                            "body larger than {MAX_BODY_BYTES} bytes"
                        )));
                    }
                    body.extend_from_slice(&chunk);
                }
            }
        }
    }

    async fn complete_inner(
        &self,
        request: &ModelRequest,
        ctx: &CallContext,
    ) -> Result<ModelResponse, ProviderError> {
        let (url, body) = self.encode(request, false)?;
        let (response, attempts) =
            with_retries(&self.retry, ctx, ProviderError::is_retryable, |_| {
                self.attempt(&url, body.clone(), &ctx.cancel)
            })
            .await?;
        let total = self.timeouts.total;
        let body = tokio::time::timeout(total, self.read_body(response, &ctx.cancel))
            .await
            .map_err(|_| ProviderError::Timeout {
                phase: TimeoutPhase::Total,
                after: total,
            })??;
        let mut decoded = self.protocol.client().decode_response(&body)?;
        decoded.attempts = attempts;
        Ok(decoded)
    }

    async fn stream_inner(
        &self,
        request: &ModelRequest,
        ctx: &CallContext,
    ) -> Result<EventStream, ProviderError> {
        let (url, body) = self.encode(request, true)?;
        // An attempt lasts until the stream's first event: a stream that
        // fails before it (cut, error event, 429/5xx) has shown the caller
        // nothing, so it is retried like a failed request.
        let ((first, rest), _) =
            with_retries(&self.retry, ctx, retryable_before_first_event, |number| {
                let body = body.clone();
                let url = &url;
                async move {
                    let response = self.attempt(url, body, &ctx.cancel).await?;
                    let mut events = sse::drive(
                        response.bytes_stream(),
                        self.protocol.client().stream_decoder(),
                        ctx.cancel.clone(),
                        self.timeouts.idle,
                        number,
                    );
                    match events.next().await {
                        Some(Ok(first)) => Ok((first, events)),
                        Some(Err(e)) => Err(e),
                        None => Err(ProviderError::truncated(
                            "the stream ended before any event",
                        )),
                    }
                }
            })
            .await?;
        Ok(Box::pin(futures::stream::iter([Ok(first)]).chain(rest)))
    }
}

impl Model for Connector {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        Box::pin(self.complete_inner(request, ctx))
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<EventStream, ProviderError>> {
        Box::pin(self.stream_inner(request, ctx))
    }
}
