//! Anthropic's error object, as an HTTP body and as a stream `error` event.

use serde_json::{Value, json};

use crate::sse::SseFrame;

/// Anthropic's error `type` for an HTTP status.
fn error_kind(status: u16) -> &'static str {
    match status {
        429 => "rate_limit_error",
        529 => "overloaded_error",
        401 => "authentication_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    }
}

/// An HTTP error body.
pub(super) fn render_error(status: u16, message: &str) -> Value {
    json!({"type": "error", "error": {"type": error_kind(status), "message": message}})
}

/// An `error` stream event (the same object as the HTTP body).
pub(super) fn render_error_event(status: u16, message: &str) -> SseFrame {
    SseFrame::named("error", render_error(status, message).to_string())
}
