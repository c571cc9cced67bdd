//! Google Gemini (`models/{model}:generateContent` and
//! `:streamGenerateContent?alt=sse`).
//!
//! Tools are `functionDeclarations`; calls are `functionCall` parts with an
//! object `args` (and a `thoughtSignature` that must be echoed back); results
//! are `functionResponse` parts. Every SSE `data:` is a whole response chunk;
//! the stream has no end marker, so the last chunk must carry `finishReason`.

mod client;
#[cfg_attr(not(feature = "fake"), allow(dead_code))]
mod errors;
#[cfg_attr(not(feature = "fake"), allow(dead_code))]
mod fake;
mod partial_args;

use serde_json::Value;

use crate::errors::ProviderError;
use crate::model::{ModelRequest, ModelResponse};
use crate::protocols::wire_protocol::{FakeTarget, KeyHeader, WireProtocol};
use crate::sse::{SseFrame, StreamDecoder};

#[cfg(feature = "wire")]
pub use client::SYNTHETIC_ID_PREFIX;

/// Gemini `generateContent`.
pub(super) struct Gemini;

impl WireProtocol for Gemini {
    fn default_base_url(&self) -> &'static str {
        "https://generativelanguage.googleapis.com/v1beta"
    }

    fn default_env_var(&self) -> &'static str {
        "GEMINI_API_KEY"
    }

    fn key_header(&self) -> KeyHeader {
        KeyHeader::Plain("x-goog-api-key")
    }

    fn url(&self, base: &str, model: &str, stream: bool) -> String {
        if stream {
            format!("{base}/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("{base}/models/{model}:generateContent")
        }
    }

    /// The stream flag is in the URL, not the body.
    fn encode_request(&self, request: &ModelRequest, _stream: bool) -> Value {
        client::encode_request(request)
    }

    fn decode_response(&self, body: &[u8]) -> Result<ModelResponse, ProviderError> {
        client::decode_response(body)
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(client::GeminiStreamDecoder::new())
    }

    /// google-genai defaults to `v1beta`; its `http_options` can pick `v1`.
    fn fake_routes(&self) -> &'static [&'static str] {
        &["/v1beta/models/{target}", "/v1/models/{target}"]
    }

    /// The model and the method are the path's last segment,
    /// `{model}:generateContent` or `{model}:streamGenerateContent?alt=sse`.
    fn fake_target(
        &self,
        target: Option<&str>,
        query: Option<&str>,
        _body: &Value,
    ) -> Result<FakeTarget, &'static str> {
        let Some((model, method)) = target.and_then(|t| t.split_once(':')) else {
            return Err("expected models/{model}:{method}");
        };
        let stream = match method {
            "generateContent" => false,
            "streamGenerateContent" if query == Some("alt=sse") => true,
            _ => return Err("unknown method"),
        };
        Ok(FakeTarget {
            model: model.to_owned(),
            stream,
        })
    }

    fn decode_request(&self, body: &Value, model: &str) -> Result<ModelRequest, ProviderError> {
        fake::decode_request(body, model)
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

    fn stream_uses_crlf(&self) -> bool {
        true
    }
}
