//! The fake server's trait: what the fake provider needs from a protocol
//! (its routes, reading requests back, rendering answers, streams and errors
//! in the vendor's shapes). Each protocol folder implements it in its
//! `fake.rs`, behind the `fake` feature like the fake provider itself.

use serde_json::Value;

use crate::errors::ProviderError;
use crate::model::{ModelRequest, ModelResponse};
use crate::sse::SseFrame;

/// What the fake provider needs from a request's URL and body to answer it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FakeTarget {
    /// The model the request names.
    pub model: String,
    /// Whether it asks for a stream.
    pub stream: bool,
}

/// The fake provider's side of one provider wire protocol.
pub(crate) trait FakeProtocol: Sync {
    /// The paths the fake provider serves this protocol on, distinct from
    /// every other protocol's (axum syntax; a `{target}` segment is handed
    /// to [`FakeProtocol::target`]).
    fn routes(&self) -> &'static [&'static str];

    /// The model and stream flag of a request, from the path's `{target}`
    /// segment, the query and the body; `Err` is a 404 message. By default
    /// both come from the body (`model`, `stream`).
    fn target(
        &self,
        _target: Option<&str>,
        _query: Option<&str>,
        body: &Value,
    ) -> Result<FakeTarget, &'static str> {
        Ok(FakeTarget {
            model: body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
        })
    }

    /// Read a request body back into the neutral form (`model` is the one
    /// [`FakeProtocol::target`] found).
    fn decode_request(&self, body: &Value, model: &str) -> Result<ModelRequest, ProviderError>;

    /// A success body for `response`.
    fn render_response(&self, response: &ModelResponse, model: &str) -> Value;

    /// The SSE frames of a stream for `response`, text and argument
    /// fragments split every `chunk` characters.
    fn render_stream(&self, response: &ModelResponse, model: &str, chunk: usize) -> Vec<SseFrame>;

    /// An HTTP error body in the vendor's shape.
    fn render_error(&self, status: u16, message: &str) -> Value;

    /// A mid-stream error event in the vendor's shape.
    fn render_error_event(&self, status: u16, message: &str) -> SseFrame;

    /// Whether this protocol's streams use `\r\n` line endings.
    fn stream_uses_crlf(&self) -> bool {
        false
    }
}
