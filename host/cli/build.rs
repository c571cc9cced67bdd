//! Builds the sample verifiers to wasm and embeds them as `builtin:NAME`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Sample verifiers shipped inside the binary.
const SAMPLES: &[&str] = &["artifact-ready", "receipt-required", "revision-progress"];

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
    let mut src = String::from("&[\n");
    for guest in &guests {
        writeln!(
            src,
            "    ({:?}, include_bytes!({:?}) as &[u8]),",
            guest.package,
            guest.path.display().to_string()
        )?;
    }
    src.push(']');
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("builtins.rs");
    std::fs::write(out, src)?;
    Ok(())
}
