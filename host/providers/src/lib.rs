//! Model provider connectors for verdict.
//!
//! - [`model`]: the provider-neutral interface the agent loop calls
//!   ([`Model`], [`ModelRequest`], [`ModelResponse`], [`StreamEvent`]).
//! - [`Connector`]: a named HTTP connector for one of four [`Protocol`]s
//!   (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Google
//!   Gemini), with typed [`ProviderError`]s, bounded waits and retries.
//! - [`fake`]: a local fake provider speaking all four wire formats over
//!   HTTP, and the same scripted model in-process.

pub mod anthropic;
pub mod connector;
pub mod errors;
pub mod fake;
pub mod gemini;
pub mod model;
pub mod openai_chat;
pub mod openai_responses;
pub mod protocol;
pub mod retry;
pub mod secret;
pub mod sse;
mod turn;

pub use connector::{Connector, ConnectorConfig, Timeouts};
pub use errors::{AttemptRefusal, FakeServerError, ProviderError, TimeoutPhase};
pub use model::{
    Attempt, AttemptHook, CallContext, EventStream, FinishReason, Message, Model, ModelRequest,
    ModelResponse, OutputSchema, StreamEvent, ToolCall, ToolChoice, ToolDefinition, ToolResult,
    Usage,
};
pub use protocol::Protocol;
pub use retry::RetryPolicy;
pub use secret::{ApiKey, Credential};
