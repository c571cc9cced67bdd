//! The wire protocols, one folder each with the same files, behind one trait
//! ([`WireProtocol`]):
//!
//! - `mod.rs`: the protocol's endpoint and headers, and its trait impl;
//! - `client.rs`: the connector's side, request encoding, response and
//!   stream decoding;
//! - `errors.rs`: the vendor's error shapes (type names, error bodies and
//!   stream error events);
//! - `fake.rs`: the fake provider's side, reading requests back and
//!   rendering responses and streams.
//!
//! `registry.rs` lists them and dispatches; `shared.rs`, `assemble.rs` and
//! `openai_error.rs` (the error object both OpenAI protocols answer with) sit
//! below the folders, so nothing imports back up.

mod anthropic;
mod assemble;
mod gemini;
mod openai_chat;
mod openai_error;
mod openai_responses;
mod registry;
mod shared;
mod wire_protocol;

pub use registry::Protocol;
#[cfg(feature = "http")]
pub(crate) use shared::classify_error;
#[cfg(feature = "fake")]
pub(crate) use shared::split_chunks;
#[cfg(feature = "http")]
pub(crate) use wire_protocol::KeyHeader;
#[cfg(feature = "fake")]
pub(crate) use wire_protocol::{FakeTarget, WireProtocol};

#[cfg(feature = "wire")]
pub use anthropic::DEFAULT_MAX_TOKENS as ANTHROPIC_DEFAULT_MAX_TOKENS;
#[cfg(feature = "wire")]
pub use gemini::SYNTHETIC_ID_PREFIX as GEMINI_SYNTHETIC_ID_PREFIX;
