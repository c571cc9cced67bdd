//! A local fake provider: serves a [`Script`] over all four wire protocols
//! ([`FakeProvider`], loopback HTTP, JSON and SSE), records the requests it
//! received, and injects faults. [`ScriptedModel`] runs the same script
//! in-process without HTTP.

mod answer;
pub mod engine;
pub mod script;
pub mod scripted;
pub mod server;

pub use engine::{ScriptEngine, ScriptMiss};
pub use script::{Action, Conversation, Fault, Matcher, Reply, Script, ScriptedCall, ScriptedTurn};
pub use scripted::ScriptedModel;
pub use server::{FAKE_API_KEY, FakeProvider, RecordedRequest};
