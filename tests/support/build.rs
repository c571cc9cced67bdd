//! Builds every sample verifier and hostile guest to a `wasm32-wasip2`
//! component and writes `$OUT_DIR/guests.rs`: one `pub const NAME: &str`
//! (absolute `.wasm` path) per guest, plus `ALL`.

use std::path::PathBuf;
use std::process::ExitCode;

/// The guest packages, in the order `ALL` lists them.
const GUESTS: &[&str] = &[
    "artifact-ready",
    "receipt-required",
    "revision-progress",
    "good-both",
    "hostile-spin",
    "hostile-alloc-bomb",
    "hostile-deep-recursion",
    "hostile-panic",
    "hostile-huge-reason",
    "hostile-huge-feedback",
    "hostile-huge-progress-key",
    "hostile-cross-tenant",
    "hostile-forbidden-import",
    "hostile-wasi-deny",
    "hostile-read-many",
    "hostile-host-calls",
    "packet-echo",
];

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
    let guests = verdict_guest_build::build_guests(GUESTS)?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out_dir.join("guests.rs"),
        verdict_guest_build::rust_consts(&guests),
    )?;
    Ok(())
}
