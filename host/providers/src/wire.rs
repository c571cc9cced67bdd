//! Wire-level access for the crate's own tests and benchmarks (feature
//! `wire`): each protocol's request encoder, response and stream decoders,
//! and the fake provider's renderers, reached by [`Protocol`]. Not a stable
//! API: [`Connector`](crate::Connector) and [`fake`](crate::fake) are the
//! supported ways to speak a protocol.

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::errors::ProviderError;
use crate::model::{ModelRequest, ModelResponse, StreamEvent};
use crate::protocols::Protocol;

pub use crate::protocols::{ANTHROPIC_DEFAULT_MAX_TOKENS, GEMINI_SYNTHETIC_ID_PREFIX};
pub use crate::sse::SseFrame;

/// The JSON body a connector sends for `request`.
pub fn encode_request(protocol: Protocol, request: &ModelRequest, stream: bool) -> Value {
    protocol.client().encode_request(request, stream)
}

/// Decode a non-streaming success body.
pub fn decode_response(protocol: Protocol, body: &[u8]) -> Result<ModelResponse, ProviderError> {
    protocol.client().decode_response(body)
}

/// Decode a whole SSE body: the events a live stream of it yields, ending
/// with [`StreamEvent::Completed`].
pub fn decode_stream(protocol: Protocol, body: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
    crate::sse::decode_sse_bytes(body, protocol.client().stream_decoder())
}

/// Classify an HTTP error answer as the connector does.
pub fn classify_error(status: u16, headers: &HeaderMap, body: &[u8]) -> ProviderError {
    crate::protocols::classify_error(status, headers, body)
}

/// Read a request body back into the neutral form, as the fake does.
pub fn decode_request(
    protocol: Protocol,
    body: &Value,
    model: &str,
) -> Result<ModelRequest, ProviderError> {
    protocol.fake().decode_request(body, model)
}

/// The SSE frames the fake sends for `response`, text and argument
/// fragments split every `chunk` characters.
pub fn render_stream(
    protocol: Protocol,
    response: &ModelResponse,
    model: &str,
    chunk: usize,
) -> Vec<SseFrame> {
    protocol.fake().render_stream(response, model, chunk)
}

/// The bytes of the stream the fake sends for `response`.
pub fn render_stream_body(
    protocol: Protocol,
    response: &ModelResponse,
    model: &str,
    chunk: usize,
) -> Vec<u8> {
    let fake = protocol.fake();
    let crlf = fake.stream_uses_crlf();
    fake.render_stream(response, model, chunk)
        .iter()
        .map(|frame| frame.encode(crlf))
        .collect::<String>()
        .into_bytes()
}
