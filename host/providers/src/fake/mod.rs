//! A local fake provider: serves a [`Script`] over all four wire protocols
//! ([`FakeProvider`], loopback HTTP, JSON and SSE), records the requests it
//! received, and injects faults. [`ScriptedModel`] runs the same script
//! in-process without HTTP.

mod answer;
mod engine;
mod error;
mod script;
mod scripted;
mod server;

pub use error::FakeServerError;
pub use script::{Action, Conversation, Fault, Matcher, Reply, Script, ScriptedCall, ScriptedTurn};
pub use scripted::ScriptedModel;
pub use server::{FAKE_API_KEY, FakeProvider, RecordedRequest};
