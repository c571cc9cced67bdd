//! The wire protocols, one folder each with the same files, behind two
//! traits, one per side of the wire:
//!
//! - `client.rs` (`ClientProtocol`): the connector's side, the endpoint
//!   and key header, request encoding, response and stream decoding;
//! - `fake.rs` (`FakeProtocol`, feature `fake`): the fake provider's side,
//!   its routes, reading requests back, rendering responses, streams and
//!   errors in the vendor's shapes.
//!
//! A folder's `mod.rs` holds the protocol's doc and re-exports; each of its
//! files implements the trait of the same name for the protocol's type.
//! `registry.rs` lists the protocols and dispatches; `shared.rs`,
//! `assemble.rs` and `openai.rs` (the endpoint and error object both OpenAI
//! protocols share) sit below the folders, so nothing imports back up.

mod anthropic;
mod assemble;
mod client;
#[cfg(feature = "fake")]
mod fake;
mod gemini;
mod openai;
mod openai_chat;
mod openai_responses;
mod registry;
mod shared;

#[cfg(feature = "http")]
pub(crate) use client::KeyHeader;
#[cfg(feature = "fake")]
pub(crate) use fake::{FakeProtocol, FakeTarget};
pub use registry::Protocol;
#[cfg(feature = "http")]
pub(crate) use shared::classify_error;
#[cfg(feature = "fake")]
pub(crate) use shared::split_chunks;

#[cfg(feature = "wire")]
pub use anthropic::DEFAULT_MAX_TOKENS as ANTHROPIC_DEFAULT_MAX_TOKENS;
#[cfg(feature = "wire")]
pub use gemini::SYNTHETIC_ID_PREFIX as GEMINI_SYNTHETIC_ID_PREFIX;
