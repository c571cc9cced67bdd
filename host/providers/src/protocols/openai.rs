//! What both OpenAI protocols share: the endpoint (base URL, key variable,
//! bearer key) and, for the fake's side, the error object they answer with.

#[cfg(feature = "fake")]
use serde_json::{Value, json};

use crate::protocols::client::{Endpoint, KeyHeader};

/// OpenAI's public API.
pub(super) const ENDPOINT: Endpoint = Endpoint::new(
    "https://api.openai.com/v1",
    "OPENAI_API_KEY",
    KeyHeader::Bearer,
);

/// OpenAI's error `type` for an HTTP status.
#[cfg(feature = "fake")]
pub(super) fn error_kind(status: u16) -> &'static str {
    match status {
        429 => "rate_limit_exceeded",
        401 => "invalid_api_key",
        500..=599 => "server_error",
        _ => "invalid_request_error",
    }
}

/// An HTTP error body.
#[cfg(feature = "fake")]
pub(super) fn render_error(status: u16, message: &str) -> Value {
    json!({"error": {"message": message, "type": error_kind(status), "param": null, "code": null}})
}
