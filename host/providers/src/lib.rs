//! Model provider connectors for verdict.
//!
//! - The provider-neutral interface the agent loop calls: [`Model`],
//!   [`ModelRequest`], [`ModelResponse`], [`StreamEvent`].
//! - [`Connector`]: a named HTTP connector for one of four [`Protocol`]s
//!   (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Google
//!   Gemini), with typed [`ProviderError`]s, bounded waits ([`Timeouts`]) and
//!   retries ([`RetryPolicy`]).
//! - [`fake`]: a local fake provider speaking all four wire formats over
//!   HTTP, and the same scripted model in-process.
//!
//! With the `wire` feature, `wire` gives the crate's tests and benchmarks
//! the encoders, decoders and renderers behind these; it is not a stable API.

mod connector;
mod errors;
pub mod fake;
mod model;
mod protocols;
mod retry;
mod secret;
mod sse;
#[cfg(feature = "wire")]
pub mod wire;

pub use connector::{Connector, ConnectorConfig, MAX_BODY_BYTES, Timeouts};
pub use errors::{AttemptRefusal, ProviderError, TimeoutPhase};
pub use model::{
    Attempt, AttemptHook, CallContext, EventStream, FinishReason, Message, Model, ModelRequest,
    ModelResponse, OutputSchema, StreamEvent, ToolCall, ToolChoice, ToolDefinition, ToolResult,
    Usage,
};
pub use protocols::Protocol;
pub use retry::RetryPolicy;
pub use secret::{ApiKey, Credential};
