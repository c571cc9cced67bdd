//! verdict library facade: the policy engine, the wasm sandbox, the model
//! connectors and the managed agent loop, under one crate.
pub use verdict_agent as agent;
pub use verdict_policy as policy;
pub use verdict_providers as providers;
pub use verdict_sandbox as sandbox;
