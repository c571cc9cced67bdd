//! Chat Completions answers errors with OpenAI's error object; in a stream
//! it sends the object as a chunk.

use serde_json::json;

use crate::protocols::openai_error::error_kind;
use crate::sse::SseFrame;

pub(super) use crate::protocols::openai_error::render_error;

/// An in-stream error chunk.
pub(super) fn render_error_event(status: u16, message: &str) -> SseFrame {
    SseFrame::data(
        json!({"error": {"message": message, "type": error_kind(status), "code": null}})
            .to_string(),
    )
}
