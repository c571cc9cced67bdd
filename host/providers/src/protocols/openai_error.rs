//! OpenAI's error object, which both OpenAI protocols answer with.

use serde_json::{Value, json};

/// OpenAI's error `type` for an HTTP status.
pub(super) fn error_kind(status: u16) -> &'static str {
    match status {
        429 => "rate_limit_exceeded",
        401 => "invalid_api_key",
        500..=599 => "server_error",
        _ => "invalid_request_error",
    }
}

/// An HTTP error body.
pub(super) fn render_error(status: u16, message: &str) -> Value {
    json!({"error": {"message": message, "type": error_kind(status), "param": null, "code": null}})
}
