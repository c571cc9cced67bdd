//! Builds the sample verifiers the examples load to `wasm32-wasip2`
//! components and writes `$OUT_DIR/guests.rs`: one `pub const NAME: &str`
//! (absolute `.wasm` path) per verifier.

use std::process::ExitCode;

/// The sample verifiers `feedback-agent` runs.
const SAMPLES: &[&str] = &["artifact-ready", "receipt-required"];

fn main() -> ExitCode {
    verdict_guest_build::write_guest_consts(SAMPLES)
}
