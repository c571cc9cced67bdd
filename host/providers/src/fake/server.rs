//! The fake provider's HTTP server: all four endpoints, JSON and SSE, on
//! loopback only, recording every request.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use axum::routing::post;
use serde_json::Value;

use crate::connector::{ConnectorConfig, Timeouts};
use crate::fake::answer::{Answer, error};
use crate::fake::engine::ScriptEngine;
use crate::fake::error::FakeServerError;
use crate::fake::script::{Action, Script};
use crate::model::ModelRequest;
use crate::protocols::{FakeTarget, Protocol};
use crate::retry::RetryPolicy;
use crate::secret::{ApiKey, Credential};

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
        let mut app = Router::new();
        for protocol in Protocol::ALL {
            for route in protocol.fake().routes() {
                app = app.route(
                    route,
                    post(move |s, target, query, uri, headers, body| {
                        handle(s, protocol, target, query, uri, headers, body)
                    }),
                );
            }
        }
        let app = app.with_state(shared.clone());
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

    /// The base URL a connector of `protocol` should use: the vendor's own
    /// base path (`/v1`, Gemini's `/v1beta`) at this fake's address.
    pub fn base_url(&self, protocol: Protocol) -> String {
        let vendor = protocol.default_base_url();
        let path = vendor.splitn(4, '/').nth(3).unwrap_or("");
        format!("http://{}/{path}", self.addr)
    }

    /// A connector config pointed at this fake: fixed key, short timeouts and
    /// fast retries, so fault tests stay quick and bounded.
    pub fn connector_config(&self, protocol: Protocol) -> ConnectorConfig {
        Self::connector_config_at(protocol, self.base_url(protocol))
    }

    /// [`FakeProvider::connector_config`] for a fake served at `base_url`
    /// (one in another process, say).
    pub fn connector_config_at(protocol: Protocol, base_url: impl Into<String>) -> ConnectorConfig {
        ConnectorConfig::new(format!("fake-{protocol:?}"), protocol)
            .with_base_url(base_url)
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

/// Answer one request to `protocol`'s endpoint: record it, find the turn
/// that answers it, and render that turn in the protocol's wire format.
async fn handle(
    State(shared): State<Arc<Shared>>,
    protocol: Protocol,
    target: Option<Path<String>>,
    RawQuery(query): RawQuery,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let wire = protocol.fake();
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let target = target.as_ref().map(|Path(t)| t.as_str());
    let FakeTarget { model, stream } = match wire.target(target, query.as_deref(), &json) {
        Ok(t) => t,
        Err(message) => return error(wire, 404, message, None),
    };
    let decoded = wire.decode_request(&json, &model);
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
        Err(e) => return error(wire, 400, &e.to_string(), None),
    };
    let (turn, number) = match shared.engine.next_turn(&request) {
        Ok(t) => t,
        Err(miss) => return error(wire, 400, &miss.to_string(), None),
    };
    if turn.first_byte_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(turn.first_byte_delay_ms)).await;
    }
    let answer = Answer {
        wire,
        model,
        stream,
    };
    match turn.action {
        Action::Reply(reply) => answer.reply(&reply, number),
        Action::Fault(fault) => answer.fault(&fault, number),
    }
}
