//! MCP servers' tools as tools of verdict's loop.
//!
//! [`McpToolset::start`] starts each configured server (a child process
//! spoken to over stdio with the official Rust SDK, `rmcp`), initializes
//! it, lists its tools (bounded) and makes each a [`verdict_agent::Tool`]
//! whose effect comes from the server's annotations ([`effect`] has the
//! table), a per-tool override, or the safe default. Calls carry the
//! loop's deadline (a call past it is cancelled with
//! `notifications/cancelled`) and, when the execution gives one, its
//! idempotency key in `_meta` as `verdict/idempotencyKey`.

pub mod config;
pub mod effect;
mod error;
mod http;
mod lines;
mod notices;
pub mod result;
mod server;
mod supervised;
mod toolset;

pub use config::{HttpEndpoint, ServerConfig, ToolSettings};
pub use effect::{EffectOverride, EffectSource, Hints, ToolEffect};
pub use error::McpError;
pub use server::{CallError, McpServer, STDERR_TAIL_BYTES};
pub use toolset::{McpToolset, ToolListing};
