//! Anthropic Messages (`POST /v1/messages`).
//!
//! Calls are `tool_use` blocks with an object `input`; results go back as
//! `tool_result` blocks (with `is_error`) in a user message. Streams are
//! `message_start`, `content_block_start/delta/stop` (`text_delta`,
//! `input_json_delta`), `message_delta` (stop reason, usage), `message_stop`,
//! with `ping` keep-alives and `error` events.

mod client;
#[cfg(feature = "fake")]
mod fake;

pub(super) use client::Anthropic;
#[cfg(feature = "wire")]
pub use client::DEFAULT_MAX_TOKENS;
