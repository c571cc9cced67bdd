//! Responses answers errors with OpenAI's error object; in a stream it sends
//! an `error` event.

use serde_json::json;

use crate::protocols::openai_error::error_kind;
use crate::sse::SseFrame;

pub(super) use crate::protocols::openai_error::render_error;

/// An `error` stream event.
pub(super) fn render_error_event(status: u16, message: &str) -> SseFrame {
    SseFrame::named(
        "error",
        json!({"type": "error", "code": error_kind(status), "message": message, "param": null})
            .to_string(),
    )
}
