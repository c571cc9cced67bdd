//! OpenAI Chat Completions (`POST /v1/chat/completions`), also spoken by
//! OpenAI-compatible servers (vLLM, llama.cpp, Ollama).
//!
//! Tools go in `tools[].function`; calls come back in `message.tool_calls`
//! with string `arguments`; results go back as `role: "tool"` messages.
//! Streams are `chat.completion.chunk` events whose tool-call fragments are
//! accumulated by `index`, a usage chunk (`stream_options.include_usage`),
//! then `data: [DONE]`.

mod client;
#[cfg(feature = "fake")]
mod fake;

pub(super) use client::OpenAiChat;
