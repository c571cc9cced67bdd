//! Runnable, credential-free examples (no API keys, loopback only):
//!
//! - `cargo run -p verdict-examples --example feedback-agent`: the spec's
//!   feedback agent — premature prose rejected, a failed read recovered, the
//!   artifact and the write receipt verified by sample wasm verifiers.
//! - `cargo run -p verdict-examples --example loop-equivalence`: the same
//!   scripted task with no policy and with a never-intervening policy; the
//!   semantic hook/action traces must be equal.
//!
//! The folder also holds sample packets (`packets/`), artifacts
//! (`artifacts/`), fake-provider scripts (`scripts/`) and configuration files
//! for the `verdict` CLI.
