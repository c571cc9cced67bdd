//! OpenAI Responses (`POST /v1/responses`).
//!
//! History goes in `input` as messages, `function_call` and
//! `function_call_output` items; calls come back as `function_call` output
//! items. Streams carry `response.output_text.delta`,
//! `response.function_call_arguments.delta/.done`, and end with
//! `response.completed`, `response.incomplete` or `response.failed`.

mod client;
#[cfg(feature = "fake")]
mod fake;

pub(super) use client::OpenAiResponses;
