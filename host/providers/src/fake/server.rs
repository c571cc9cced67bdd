//! The fake provider's HTTP server: all four endpoints, JSON and SSE, on
//! loopback only, recording every request.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use axum::routing::post;
use futures::StreamExt;
use serde_json::Value;

use crate::connector::{ConnectorConfig, Timeouts};
use crate::errors::FakeServerError;
use crate::fake::engine::ScriptEngine;
use crate::fake::script::{Action, Fault, Reply, Script};
use crate::model::ModelRequest;
use crate::protocol::Protocol;
use crate::retry::RetryPolicy;
use crate::secret::{ApiKey, Credential};
use crate::sse::SseFrame;

/// The key [`FakeProvider::connector_config`] uses.
pub const FAKE_API_KEY: &str = "fake-key-not-secret";

/// One request the fake received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// Which endpoint it hit.
    pub protocol: Protocol,
    /// Path and query.
    pub uri: String,
    /// Headers, lower-case names (values as sent: the fake's keys are not secret).
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Null` if it did not parse).
    pub body: Value,
    /// Whether it asked for a stream.
    pub stream: bool,
    /// The body read back into the neutral form, if it decoded.
    pub request: Option<ModelRequest>,
}

impl RecordedRequest {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

struct Shared {
    engine: ScriptEngine,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// A running fake provider. Stops when dropped.
pub struct FakeProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for FakeProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeProvider")
            .field("addr", &self.addr)
            .finish()
    }
}

impl FakeProvider {
    /// Serve `script` on `127.0.0.1` at a free port.
    pub async fn start(script: Script) -> Result<Self, FakeServerError> {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), script).await
    }

    /// Serve `script` on `addr`, which must be a loopback address.
    pub async fn start_on(addr: SocketAddr, script: Script) -> Result<Self, FakeServerError> {
        if !addr.ip().is_loopback() {
            return Err(FakeServerError::NotLoopback(addr));
        }
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(FakeServerError::Bind)?;
        let addr = listener.local_addr().map_err(FakeServerError::Bind)?;
        let shared = Arc::new(Shared {
            engine: ScriptEngine::new(script),
            requests: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/responses", post(responses))
            .route("/v1/messages", post(messages))
            .route("/v1beta/models/{target}", post(gemini))
            .with_state(shared.clone());
        // Small SSE frames must not wait for Nagle's algorithm (40 ms stalls).
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "fake provider: TCP_NODELAY not set");
            }
        });
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "fake provider stopped");
            }
        });
        Ok(Self { addr, shared, task })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL a connector of `protocol` should use.
    pub fn base_url(&self, protocol: Protocol) -> String {
        let version = if protocol == Protocol::Gemini {
            "v1beta"
        } else {
            "v1"
        };
        format!("http://{}/{version}", self.addr)
    }

    /// A connector config pointed at this fake: fixed key, short timeouts and
    /// fast retries, so fault tests stay quick and bounded.
    pub fn connector_config(&self, protocol: Protocol) -> ConnectorConfig {
        ConnectorConfig::new(format!("fake-{protocol:?}"), protocol)
            .with_base_url(self.base_url(protocol))
            .with_credential(Credential::Key(ApiKey::new(FAKE_API_KEY)))
            .with_timeouts(Timeouts {
                connect: Duration::from_secs(2),
                first_byte: Duration::from_secs(5),
                idle: Duration::from_secs(5),
                total: Duration::from_secs(10),
            })
            .with_retry(RetryPolicy {
                max_retries: 2,
                base_delay: Duration::from_millis(5),
                max_delay: Duration::from_secs(2),
            })
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Turns not served yet.
    pub fn remaining_turns(&self) -> usize {
        self.shared.engine.remaining()
    }

    /// Serve until the task ends (for the CLI subcommand).
    pub async fn wait(mut self) {
        let _ = (&mut self.task).await;
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn chat(State(s): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    handle(s, Protocol::OpenAiChat, uri, headers, body, None).await
}

async fn responses(
    State(s): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(s, Protocol::OpenAiResponses, uri, headers, body, None).await
}

async fn messages(
    State(s): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(s, Protocol::Anthropic, uri, headers, body, None).await
}

async fn gemini(
    State(s): State<Arc<Shared>>,
    Path(target): Path<String>,
    RawQuery(query): RawQuery,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some((model, method)) = target.split_once(':') else {
        return error(
            Protocol::Gemini,
            404,
            "expected models/{model}:{method}",
            None,
        );
    };
    let stream = match method {
        "generateContent" => false,
        "streamGenerateContent" if query.as_deref() == Some("alt=sse") => true,
        _ => return error(Protocol::Gemini, 404, "unknown method", None),
    };
    let target = GeminiTarget {
        model: model.to_owned(),
        stream,
    };
    handle(s, Protocol::Gemini, uri, headers, body, Some(target)).await
}

struct GeminiTarget {
    model: String,
    stream: bool,
}

async fn handle(
    shared: Arc<Shared>,
    protocol: Protocol,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
    gemini: Option<GeminiTarget>,
) -> Response {
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (model, stream) = match &gemini {
        Some(g) => (g.model.clone(), g.stream),
        None => (
            json.get("model")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            json.get("stream").and_then(Value::as_bool).unwrap_or(false),
        ),
    };
    let decoded = protocol.decode_request(&json, &model);
    shared
        .requests
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(RecordedRequest {
            protocol,
            uri: uri.to_string(),
            headers: headers
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_owned(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: json.clone(),
            stream,
            request: decoded.as_ref().ok().cloned(),
        });
    let request = match decoded {
        Ok(r) => r,
        Err(e) => return error(protocol, 400, &e.to_string(), None),
    };
    let (turn, number) = match shared.engine.next_turn(&request) {
        Ok(t) => t,
        Err(miss) => return error(protocol, 400, &miss.to_string(), None),
    };
    if turn.first_byte_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(turn.first_byte_delay_ms)).await;
    }
    let answer = Answer {
        protocol,
        model,
        stream,
    };
    match turn.action {
        Action::Reply(reply) => answer.reply(&reply, number),
        Action::Fault(fault) => answer.fault(&fault, number),
    }
}

struct Answer {
    protocol: Protocol,
    model: String,
    stream: bool,
}

impl Answer {
    fn frames(&self, reply: &Reply, number: usize) -> Vec<SseFrame> {
        self.protocol
            .render_stream(&reply.to_response(number), &self.model, reply.chunk())
    }

    fn encode(&self, frames: &[SseFrame]) -> Vec<Bytes> {
        let crlf = self.protocol.stream_uses_crlf();
        frames.iter().map(|f| Bytes::from(f.encode(crlf))).collect()
    }

    fn reply(&self, reply: &Reply, number: usize) -> Response {
        if self.stream {
            let chunks = self.encode(&self.frames(reply, number));
            return sse_response(chunks, false);
        }
        let body = self
            .protocol
            .render_response(&reply.to_response(number), &self.model);
        json_response(200, body.to_string())
    }

    fn fault(&self, fault: &Fault, number: usize) -> Response {
        match fault {
            Fault::Status {
                status,
                message,
                retry_after_secs,
            } => error(self.protocol, *status, message, *retry_after_secs),
            Fault::CutStream {
                after_frames,
                reply,
            } => {
                let whole = if self.stream {
                    self.encode(&self.frames(reply, number))
                } else {
                    let body = self
                        .protocol
                        .render_response(&reply.to_response(number), &self.model);
                    vec![Bytes::from(body.to_string())]
                };
                let keep = (*after_frames).min(whole.len().saturating_sub(1));
                let mut chunks: Vec<Bytes> = whole.iter().take(keep).cloned().collect();
                if let Some(next) = whole.get(keep) {
                    chunks.push(next.slice(..next.len() / 2));
                }
                let kind = if self.stream {
                    "text/event-stream"
                } else {
                    "application/json"
                };
                chunked_response(chunks, true, kind)
            }
            Fault::StallStream {
                after_frames,
                stall_ms,
                reply,
            } => {
                let mut chunks = if self.stream {
                    self.encode(&self.frames(reply, number))
                } else {
                    let body = self
                        .protocol
                        .render_response(&reply.to_response(number), &self.model);
                    vec![Bytes::from(body.to_string())]
                };
                let rest = chunks.split_off((*after_frames).min(chunks.len()));
                let kind = if self.stream {
                    "text/event-stream"
                } else {
                    "application/json"
                };
                stalled_response(chunks, Duration::from_millis(*stall_ms), rest, kind)
            }
            Fault::MalformedJson => {
                if self.stream {
                    let mut chunks = self.encode(&self.frames(&Reply::default(), number));
                    chunks.truncate(1);
                    chunks.push(Bytes::from(SseFrame::data("{\"oops\": ").encode(false)));
                    sse_response(chunks, false)
                } else {
                    json_response(200, "{\"id\": \"broken\", this is not json".to_owned())
                }
            }
            Fault::ErrorEvent {
                after_frames,
                status,
                message,
            } => {
                if !self.stream {
                    return error(self.protocol, *status, message, None);
                }
                let reply = Reply {
                    text: Some("partial answer that will be interrupted".into()),
                    ..Reply::default()
                };
                let mut frames = self.frames(&reply, number);
                frames.truncate(*after_frames);
                frames.push(self.protocol.render_error_event(*status, message));
                sse_response(self.encode(&frames), false)
            }
        }
    }
}

fn json_response(status: u16, body: String) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .unwrap_or_default()
}

fn error(protocol: Protocol, status: u16, message: &str, retry_after: Option<u64>) -> Response {
    let mut response = json_response(status, protocol.render_error(status, message).to_string());
    if let Some(secs) = retry_after
        && let Ok(value) = header::HeaderValue::from_str(&secs.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// An SSE body sending each chunk separately; `abort` ends it with an error,
/// so the connection drops without a clean end of body.
fn sse_response(chunks: Vec<Bytes>, abort: bool) -> Response {
    chunked_response(chunks, abort, "text/event-stream")
}

fn stalled_response(
    first: Vec<Bytes>,
    stall: Duration,
    rest: Vec<Bytes>,
    content_type: &str,
) -> Response {
    let first = futures::stream::iter(first.into_iter().map(Ok::<_, std::io::Error>));
    let rest = futures::stream::once(tokio::time::sleep(stall))
        .flat_map(move |()| futures::stream::iter(rest.clone().into_iter().map(Ok)));
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from_stream(first.chain(rest)))
        .unwrap_or_default()
}

fn chunked_response(chunks: Vec<Bytes>, abort: bool, content_type: &str) -> Response {
    let body = futures::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>));
    // The abort comes a moment after the last chunk, so the client has the
    // headers and the partial data before the connection drops.
    let tail = futures::stream::iter(abort.then_some(())).then(|()| async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "fake provider cut the stream",
        ))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(body.chain(tail)))
        .unwrap_or_default()
}
