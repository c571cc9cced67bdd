//! The four wire protocols, dispatched by [`Protocol`], and helpers they share.

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::errors::ProviderError;
use crate::model::{ModelRequest, ModelResponse};
use crate::retry::{parse_proto_duration, retry_after_from_headers};
use crate::sse::{SseFrame, StreamDecoder};
use crate::{anthropic, gemini, openai_chat, openai_responses};

/// A provider wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// OpenAI Chat Completions (and OpenAI-compatible servers).
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini `generateContent`.
    Gemini,
}

impl Protocol {
    /// All protocols.
    pub const ALL: [Protocol; 4] = [
        Protocol::OpenAiChat,
        Protocol::OpenAiResponses,
        Protocol::Anthropic,
        Protocol::Gemini,
    ];

    /// The vendor's public API base URL.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenAiChat | Self::OpenAiResponses => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com/v1",
            Self::Gemini => "https://generativelanguage.googleapis.com/v1beta",
        }
    }

    /// The environment variable holding the vendor's key by default.
    pub fn default_env_var(self) -> &'static str {
        match self {
            Self::OpenAiChat | Self::OpenAiResponses => "OPENAI_API_KEY",
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::Gemini => "GEMINI_API_KEY",
        }
    }

    /// The endpoint URL for `model` under `base` (no trailing slash).
    pub fn url(self, base: &str, model: &str, stream: bool) -> String {
        let base = base.trim_end_matches('/');
        match self {
            Self::OpenAiChat => format!("{base}/chat/completions"),
            Self::OpenAiResponses => format!("{base}/responses"),
            Self::Anthropic => format!("{base}/messages"),
            Self::Gemini if stream => {
                format!("{base}/models/{model}:streamGenerateContent?alt=sse")
            }
            Self::Gemini => format!("{base}/models/{model}:generateContent"),
        }
    }

    /// The header carrying the key, and whether it is a bearer token.
    pub(crate) fn auth_header(self) -> (&'static str, bool) {
        match self {
            Self::OpenAiChat | Self::OpenAiResponses => ("authorization", true),
            Self::Anthropic => ("x-api-key", false),
            Self::Gemini => ("x-goog-api-key", false),
        }
    }

    /// Headers every request of this protocol carries.
    pub(crate) fn fixed_headers(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Anthropic => &[("anthropic-version", "2023-06-01")],
            _ => &[],
        }
    }

    /// The JSON body for `request`.
    pub fn encode_request(self, request: &ModelRequest, stream: bool) -> Value {
        match self {
            Self::OpenAiChat => openai_chat::encode_request(request, stream),
            Self::OpenAiResponses => openai_responses::encode_request(request, stream),
            Self::Anthropic => anthropic::encode_request(request, stream),
            Self::Gemini => gemini::encode_request(request),
        }
    }

    /// Decode a non-streaming success body.
    pub fn decode_response(self, body: &[u8]) -> Result<ModelResponse, ProviderError> {
        match self {
            Self::OpenAiChat => openai_chat::decode_response(body),
            Self::OpenAiResponses => openai_responses::decode_response(body),
            Self::Anthropic => anthropic::decode_response(body),
            Self::Gemini => gemini::decode_response(body),
        }
    }

    /// A fresh decoder for a streamed body.
    pub fn stream_decoder(self) -> Box<dyn StreamDecoder> {
        match self {
            Self::OpenAiChat => Box::new(openai_chat::ChatStreamDecoder::new()),
            Self::OpenAiResponses => Box::new(openai_responses::ResponsesStreamDecoder::new()),
            Self::Anthropic => Box::new(anthropic::MessagesStreamDecoder::new()),
            Self::Gemini => Box::new(gemini::GeminiStreamDecoder::new()),
        }
    }

    /// Read a request body back into the neutral form (fake server side).
    pub fn decode_request(self, body: &Value, model: &str) -> Result<ModelRequest, ProviderError> {
        match self {
            Self::OpenAiChat => openai_chat::server::decode_request(body),
            Self::OpenAiResponses => openai_responses::server::decode_request(body),
            Self::Anthropic => anthropic::server::decode_request(body),
            Self::Gemini => gemini::server::decode_request(body, model),
        }
    }

    /// A success body for `response` (fake server side).
    pub fn render_response(self, response: &ModelResponse, model: &str) -> Value {
        match self {
            Self::OpenAiChat => openai_chat::server::render_response(response, model),
            Self::OpenAiResponses => openai_responses::server::render_response(response, model),
            Self::Anthropic => anthropic::server::render_response(response, model),
            Self::Gemini => gemini::server::render_response(response, model),
        }
    }

    /// The SSE frames of a stream for `response`, text and argument
    /// fragments split every `chunk` characters (fake server side).
    pub fn render_stream(
        self,
        response: &ModelResponse,
        model: &str,
        chunk: usize,
    ) -> Vec<SseFrame> {
        let chunk = chunk.max(1);
        match self {
            Self::OpenAiChat => openai_chat::server::render_stream(response, model, chunk),
            Self::OpenAiResponses => {
                openai_responses::server::render_stream(response, model, chunk)
            }
            Self::Anthropic => anthropic::server::render_stream(response, model, chunk),
            Self::Gemini => gemini::server::render_stream(response, model, chunk),
        }
    }

    /// An error body in the vendor's shape (fake server side).
    pub fn render_error(self, status: u16, message: &str) -> Value {
        let kind = error_kind(self, status);
        match self {
            Self::Anthropic => {
                serde_json::json!({"type": "error", "error": {"type": kind, "message": message}})
            }
            Self::Gemini => {
                serde_json::json!({"error": {"code": status, "message": message, "status": kind}})
            }
            _ => {
                serde_json::json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
            }
        }
    }

    /// A mid-stream error event in the vendor's shape (fake server side).
    pub fn render_error_event(self, status: u16, message: &str) -> SseFrame {
        let kind = error_kind(self, status);
        match self {
            Self::OpenAiChat => openai_chat::server::render_error_event(message, kind),
            Self::OpenAiResponses => openai_responses::server::render_error_event(message, kind),
            Self::Anthropic => anthropic::server::render_error_event(message, kind),
            Self::Gemini => SseFrame::data(self.render_error(status, message).to_string()),
        }
    }

    /// Whether this protocol's streams use `\r\n` line endings (Gemini does).
    pub fn stream_uses_crlf(self) -> bool {
        self == Self::Gemini
    }
}

/// The vendor's error type name for an HTTP status.
fn error_kind(protocol: Protocol, status: u16) -> &'static str {
    match (protocol, status) {
        (Protocol::Gemini, 429) => "RESOURCE_EXHAUSTED",
        (Protocol::Gemini, 401 | 403) => "PERMISSION_DENIED",
        (Protocol::Gemini, 500..=599) => "INTERNAL",
        (Protocol::Gemini, _) => "INVALID_ARGUMENT",
        (Protocol::Anthropic, 429) => "rate_limit_error",
        (Protocol::Anthropic, 529) => "overloaded_error",
        (Protocol::Anthropic, 401) => "authentication_error",
        (Protocol::Anthropic, 500..=599) => "api_error",
        (Protocol::Anthropic, _) => "invalid_request_error",
        (_, 429) => "rate_limit_exceeded",
        (_, 401) => "invalid_api_key",
        (_, 500..=599) => "server_error",
        _ => "invalid_request_error",
    }
}

/// Longest provider message kept in an error.
const MAX_ERROR_MESSAGE: usize = 2000;

/// Classify an HTTP error answer (status, headers, body), keeping the
/// provider's message and any retry-after hint.
pub fn classify_error(status: u16, headers: &HeaderMap, body: &[u8]) -> ProviderError {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    let message = error
        .and_then(|e| e.get("message").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    let retry_after = retry_after_from_headers(headers).or_else(|| error.and_then(retry_delay));
    ProviderError::from_status(status, truncate(message), retry_after)
}

/// Gemini's `RetryInfo.retryDelay` inside `error.details`.
fn retry_delay(error: &Value) -> Option<Duration> {
    error
        .get("details")?
        .as_array()?
        .iter()
        .find_map(|d| d.get("retryDelay").and_then(Value::as_str))
        .and_then(parse_proto_duration)
}

/// Classify an `error` object received inside a stream.
pub(crate) fn error_from_event(error: &Value) -> ProviderError {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("provider error event")
        .to_owned();
    let kind = ["type", "code", "status"]
        .iter()
        .find_map(|k| error.get(*k).and_then(Value::as_str))
        .unwrap_or("");
    let status = match kind {
        "rate_limit_error" | "rate_limit_exceeded" | "RESOURCE_EXHAUSTED" => 429,
        "overloaded_error" => 529,
        "authentication_error" | "invalid_api_key" | "PERMISSION_DENIED" => 401,
        "invalid_request_error" | "INVALID_ARGUMENT" => 400,
        _ => error
            .get("code")
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok())
            .unwrap_or(500),
    };
    ProviderError::from_status(status, truncate(message), retry_delay(error))
}

fn truncate(mut message: String) -> String {
    if message.len() > MAX_ERROR_MESSAGE {
        let mut end = MAX_ERROR_MESSAGE;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    message
}

/// `value[key]` as an owned string.
pub(crate) fn str_of(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Tool arguments sent as a JSON string or an object.
pub(crate) fn arguments_of(value: Option<&Value>) -> Result<Value, ProviderError> {
    match value {
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Value::Object(Default::default())),
        Some(Value::String(s)) => serde_json::from_str(s)
            .map_err(|e| ProviderError::malformed(format!("tool arguments: {e}"))),
        Some(v) => Ok(v.clone()),
        None => Ok(Value::Object(Default::default())),
    }
}

/// Split `text` into pieces of at most `size` characters.
pub(crate) fn split_chunks(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size.max(1))
        .map(|c| c.iter().collect())
        .collect()
}
