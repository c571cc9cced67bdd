//! The integration tests, as one test binary (linking one binary per file
//! dominated the build): `cargo test -p verdict-agent --test agent`,
//! one file's tests with `-- FILE::`. Each file is a module; `common/` holds
//! what they share.

mod async_tools;
mod call_ids;
mod cancellation;
mod closure_checkers;
mod commit;
mod common;
mod equivalence;
mod failed_runs;
mod helper_checks;
mod http;
mod import_bounds;
mod lifecycle;
mod loop_reporting;
mod recovery_accounting;
mod routing;
mod saved_transcripts;
mod scenarios;
mod stream;
mod structured_output;
mod suspension;
mod task_state;
mod tool_layers;
mod tools;
mod wasm;
