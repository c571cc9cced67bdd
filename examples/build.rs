//! Builds the sample verifiers the examples load to `wasm32-wasip2`
//! components and writes `$OUT_DIR/guests.rs`: one `pub const NAME: &str`
//! (absolute `.wasm` path) per verifier.

use std::path::PathBuf;
use std::process::ExitCode;

/// The sample verifiers `feedback-agent` runs.
const SAMPLES: &[&str] = &["artifact-ready", "receipt-required"];

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let guests = verdict_guest_build::build_guests(SAMPLES)?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out_dir.join("guests.rs"),
        verdict_guest_build::rust_consts(&guests),
    )?;
    Ok(())
}
