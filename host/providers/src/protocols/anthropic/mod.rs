//! Anthropic Messages (`POST /v1/messages`).
//!
//! Calls are `tool_use` blocks with an object `input`; results go back as
//! `tool_result` blocks (with `is_error`) in a user message. Streams are
//! `message_start`, `content_block_start/delta/stop` (`text_delta`,
//! `input_json_delta`), `message_delta` (stop reason, usage), `message_stop`,
//! with `ping` keep-alives and `error` events.

mod client;
#[cfg_attr(not(feature = "fake"), allow(dead_code))]
mod errors;
#[cfg_attr(not(feature = "fake"), allow(dead_code))]
mod fake;

use serde_json::Value;

use crate::errors::ProviderError;
use crate::model::{ModelRequest, ModelResponse};
use crate::protocols::wire_protocol::{KeyHeader, WireProtocol};
use crate::sse::{SseFrame, StreamDecoder};

#[cfg(feature = "wire")]
pub use client::DEFAULT_MAX_TOKENS;

/// Messages.
pub(super) struct Anthropic;

impl WireProtocol for Anthropic {
    fn default_base_url(&self) -> &'static str {
        "https://api.anthropic.com/v1"
    }

    fn default_env_var(&self) -> &'static str {
        "ANTHROPIC_API_KEY"
    }

    fn key_header(&self) -> KeyHeader {
        KeyHeader::Plain("x-api-key")
    }

    fn fixed_headers(&self) -> &'static [(&'static str, &'static str)] {
        &[("anthropic-version", "2023-06-01")]
    }

    fn url(&self, base: &str, _model: &str, _stream: bool) -> String {
        format!("{base}/messages")
    }

    fn encode_request(&self, request: &ModelRequest, stream: bool) -> Value {
        client::encode_request(request, stream)
    }

    fn decode_response(&self, body: &[u8]) -> Result<ModelResponse, ProviderError> {
        client::decode_response(body)
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(client::MessagesStreamDecoder::new())
    }

    fn fake_routes(&self) -> &'static [&'static str] {
        &["/v1/messages"]
    }

    fn decode_request(&self, body: &Value, _model: &str) -> Result<ModelRequest, ProviderError> {
        fake::decode_request(body)
    }

    fn render_response(&self, response: &ModelResponse, model: &str) -> Value {
        fake::render_response(response, model)
    }

    fn render_stream(&self, response: &ModelResponse, model: &str, chunk: usize) -> Vec<SseFrame> {
        fake::render_stream(response, model, chunk)
    }

    fn render_error(&self, status: u16, message: &str) -> Value {
        errors::render_error(status, message)
    }

    fn render_error_event(&self, status: u16, message: &str) -> SseFrame {
        errors::render_error_event(status, message)
    }
}
