//! The integration tests, as one test binary (linking one binary per file
//! dominated the build): `cargo test -p verdict-providers --test providers`,
//! one file's tests with `-- FILE::`. Each file is a module; `common/` holds
//! what they share.

mod common;
mod fake_fidelity;
mod faults;
mod golden_requests;
mod live;
mod round_trip;
mod samples_anthropic;
mod samples_gemini;
mod samples_openai_chat;
mod samples_openai_responses;
mod scripted_model;
