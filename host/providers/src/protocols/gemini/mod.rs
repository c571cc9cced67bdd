//! Google Gemini (`models/{model}:generateContent` and
//! `:streamGenerateContent?alt=sse`).
//!
//! Tools are `functionDeclarations`; calls are `functionCall` parts with an
//! object `args` (and a `thoughtSignature` that must be echoed back); results
//! are `functionResponse` parts. Every SSE `data:` is a whole response chunk;
//! the stream has no end marker, so the last chunk must carry `finishReason`.

mod client;
#[cfg(feature = "fake")]
mod fake;
mod partial_args;

pub(super) use client::Gemini;
#[cfg(feature = "wire")]
pub use client::SYNTHETIC_ID_PREFIX;
