//! The integration tests, as one test binary (linking one binary per file
//! dominated the build): `cargo test -p verdict-cli --test cli`,
//! one file's tests with `-- FILE::`. Each file is a module; `support/` holds
//! what they share.

mod claude_code;
mod cli;
mod componentize;
mod componentize_output;
mod config_errors;
mod console;
mod console_example;
mod demo;
mod durable;
mod durable_mcp;
mod fake_provider;
mod file_args;
mod inputs;
mod mcp;
mod new_verifier;
mod new_verifier_args;
mod output_errors;
mod polyglot;
mod python_package;
mod records;
mod registry;
mod run;
mod run_mcp;
mod run_settled;
mod serve;
mod signals;
mod stderr_notes;
mod support;
