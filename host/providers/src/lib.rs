#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
// Without `http` the wire formats' encoders and decoders have no caller (the
// connector is theirs); they stay compiled, unused.
#![cfg_attr(not(feature = "http"), allow(dead_code, unused_imports))]

#[cfg(feature = "http")]
mod connector;
mod errors;
#[cfg(feature = "fake")]
pub mod fake;
mod model;
mod protocols;
mod retry;
mod secret;
mod sse;
#[cfg(feature = "wire")]
pub mod wire;

#[cfg(feature = "http")]
pub use connector::{
    Connector, ConnectorConfig, DEFAULT_MAX_IDLE_CONNECTIONS, MAX_BODY_BYTES, Timeouts,
};
pub use errors::{AttemptRefusal, ProviderError, TimeoutPhase};
pub use model::{
    Attempt, AttemptHook, CallContext, EventStream, FinishReason, Message, Model, ModelRequest,
    ModelResponse, OutputSchema, StreamEvent, ToolCall, ToolChoice, ToolDefinition, ToolResult,
    Usage,
};
pub use protocols::Protocol;
pub use retry::RetryPolicy;
pub use secret::{ApiKey, Credential};
// The cancellation of a call (`CallContext::cancel`): verdict-policy's
// handle, re-exported so a `Model` needs no other crate to name it.
pub use verdict_policy::{CancelHandle, Cancelled};
