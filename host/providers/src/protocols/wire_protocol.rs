//! The one trait every protocol folder implements. The connector and the
//! fake provider reach a protocol only through it (see `registry.rs`).

use serde_json::Value;

use crate::errors::ProviderError;
use crate::model::{ModelRequest, ModelResponse};
use crate::sse::{SseFrame, StreamDecoder};

/// How a request carries the API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyHeader {
    /// `authorization: Bearer <key>`.
    Bearer,
    /// The key alone as the value of this header.
    Plain(&'static str),
}

/// What the fake provider needs from a request's URL and body to answer it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "fake"), allow(dead_code))]
pub(crate) struct FakeTarget {
    /// The model the request names.
    pub model: String,
    /// Whether it asks for a stream.
    pub stream: bool,
}

/// One provider wire protocol: its endpoint and headers, the connector's
/// side (encoding requests, decoding answers and streams) and the fake
/// provider's side (reading requests back, rendering answers, streams and
/// errors in the vendor's shapes).
// The fake's side is compiled without the `fake` feature too (plain
// functions, no dependency), unused then.
#[cfg_attr(not(feature = "fake"), allow(dead_code))]
pub(crate) trait WireProtocol: Sync {
    /// The vendor's public API base URL.
    fn default_base_url(&self) -> &'static str;

    /// The environment variable holding the vendor's key by default.
    fn default_env_var(&self) -> &'static str;

    /// The header carrying the key.
    fn key_header(&self) -> KeyHeader;

    /// Headers every request of this protocol carries.
    fn fixed_headers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// The endpoint URL for `model` under `base` (no trailing slash).
    fn url(&self, base: &str, model: &str, stream: bool) -> String;

    /// The JSON body for `request`.
    fn encode_request(&self, request: &ModelRequest, stream: bool) -> Value;

    /// Decode a non-streaming success body.
    fn decode_response(&self, body: &[u8]) -> Result<ModelResponse, ProviderError>;

    /// A fresh decoder for a streamed body.
    fn stream_decoder(&self) -> Box<dyn StreamDecoder>;

    /// The paths the fake provider serves this protocol on, distinct from
    /// every other protocol's (axum syntax; a `{target}` segment is handed
    /// to [`WireProtocol::fake_target`]).
    fn fake_routes(&self) -> &'static [&'static str];

    /// The model and stream flag of a request to the fake, from the path's
    /// `{target}` segment, the query and the body; `Err` is a 404 message.
    /// By default both come from the body (`model`, `stream`).
    fn fake_target(
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
    /// [`WireProtocol::fake_target`] found).
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
