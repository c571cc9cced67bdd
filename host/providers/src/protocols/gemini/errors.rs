//! Google's error object (`google.rpc.Status`), as an HTTP body and as a
//! stream chunk.

use serde_json::{Value, json};

use crate::sse::SseFrame;

/// Google's error `status` for an HTTP status.
fn error_kind(status: u16) -> &'static str {
    match status {
        429 => "RESOURCE_EXHAUSTED",
        401 | 403 => "PERMISSION_DENIED",
        500..=599 => "INTERNAL",
        _ => "INVALID_ARGUMENT",
    }
}

/// An HTTP error body.
pub(super) fn render_error(status: u16, message: &str) -> Value {
    json!({"error": {"code": status, "message": message, "status": error_kind(status)}})
}

/// A stream chunk carrying the error (the same object as the HTTP body).
pub(super) fn render_error_event(status: u16, message: &str) -> SseFrame {
    SseFrame::data(render_error(status, message).to_string())
}
