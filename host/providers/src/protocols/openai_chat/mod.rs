//! OpenAI Chat Completions (`POST /v1/chat/completions`), also spoken by
//! OpenAI-compatible servers (vLLM, llama.cpp, Ollama).
//!
//! Tools go in `tools[].function`; calls come back in `message.tool_calls`
//! with string `arguments`; results go back as `role: "tool"` messages.
//! Streams are `chat.completion.chunk` events whose tool-call fragments are
//! accumulated by `index`, a usage chunk (`stream_options.include_usage`),
//! then `data: [DONE]`.

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

/// Chat Completions.
pub(super) struct OpenAiChat;

impl WireProtocol for OpenAiChat {
    fn default_base_url(&self) -> &'static str {
        "https://api.openai.com/v1"
    }

    fn default_env_var(&self) -> &'static str {
        "OPENAI_API_KEY"
    }

    fn key_header(&self) -> KeyHeader {
        KeyHeader::Bearer
    }

    fn url(&self, base: &str, _model: &str, _stream: bool) -> String {
        format!("{base}/chat/completions")
    }

    fn encode_request(&self, request: &ModelRequest, stream: bool) -> Value {
        client::encode_request(request, stream)
    }

    fn decode_response(&self, body: &[u8]) -> Result<ModelResponse, ProviderError> {
        client::decode_response(body)
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(client::ChatStreamDecoder::new())
    }

    fn fake_routes(&self) -> &'static [&'static str] {
        &["/v1/chat/completions"]
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
