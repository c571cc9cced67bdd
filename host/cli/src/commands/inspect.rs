//! `verdict inspect`: describe a .wasm file and whether this host accepts it.

use super::HostArgs;
use crate::exit::Exit;
use sha2::{Digest, Sha256};
use std::path::Path;
use verdict::WasmKind;

/// Arguments of `verdict inspect`.
#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    /// The .wasm file, or builtin:NAME.
    wasm: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    host: HostArgs,
}

/// Runs `verdict inspect`; exits 0 when accepted, 1 when rejected.
pub fn run(args: InspectArgs) -> anyhow::Result<Exit> {
    let bytes = super::read_verifier(&args.wasm)?;
    let host = args.host.host()?;
    if matches!(WasmKind::of(&bytes), WasmKind::Component)
        && !compiled_before(args.host.cache_dir().as_deref(), &bytes)
    {
        crate::stdout::note_line(format_args!(
            "compiling {} to inspect it (seconds for a Python or JavaScript verifier)...",
            args.wasm
        ));
    }
    let info = host.inspect(&bytes);
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&info)?)?;
    } else {
        crate::outln!("digest:  sha256:{}", info.digest)?;
        crate::outln!("size:    {} bytes", info.size)?;
        crate::outln!("kind:    {:?}", info.kind)?;
        let roles: Vec<String> = info
            .roles
            .iter()
            .map(|r| {
                let name = format!("{r:?}").to_lowercase();
                if info.packed.contains(r) {
                    format!("{name} (packed entry point)")
                } else {
                    name
                }
            })
            .collect();
        crate::outln!(
            "roles:   {}",
            if roles.is_empty() {
                "none".into()
            } else {
                roles.join(", ")
            }
        )?;
        crate::outln!("exports:")?;
        for e in &info.exports {
            crate::outln!("  {e}")?;
        }
        crate::outln!("imports:")?;
        for i in &info.imports {
            crate::outln!("  {i}")?;
        }
        match &info.rejected {
            None => crate::outln!("accepted: yes")?,
            Some(why) => crate::outln!("accepted: no ({why})")?,
        }
    }
    Ok(if info.rejected.is_none() {
        Exit::Complete
    } else {
        Exit::NotComplete
    })
}

/// True when the compile cache under `cache` holds `bytes` compiled (for
/// some engine configuration: `<cache>/<engine>/<sha256>.cwasm`, the
/// sandbox's layout), so inspecting them loads instead of compiling.
fn compiled_before(cache: Option<&Path>, bytes: &[u8]) -> bool {
    let Some(Ok(engines)) = cache.map(std::fs::read_dir) else {
        return false;
    };
    let entry = format!("{}.cwasm", hex::encode(Sha256::digest(bytes)));
    engines
        .flatten()
        .any(|engine| engine.path().join(&entry).is_file())
}
