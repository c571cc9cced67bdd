//! `verdict componentize`: make a verifier built lean (a core module for
//! `wasm32-unknown-unknown`, with the `verdict-guest` SDK) a component, as
//! `wasm-tools component new` does, and say whether this host accepts it.

use super::HostArgs;
use crate::exit::Exit;
use crate::files;
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use verdict::WasmKind;

/// Arguments of `verdict componentize`.
#[derive(Debug, clap::Args)]
pub struct ComponentizeArgs {
    /// The core module: `target/wasm32-unknown-unknown/release/NAME.wasm`.
    module: PathBuf,
    /// Where to write the component (default: beside the module, named
    /// `NAME.component.wasm`). Replaced atomically; never the module itself.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    host: HostArgs,
}

/// Runs `verdict componentize`; exits 0 when the component is written and
/// accepted, 1 when written but rejected by this host (the reason printed),
/// 2 (writing nothing) when the input is no verifier module or the output
/// may not be replaced.
pub fn run(args: ComponentizeArgs) -> anyhow::Result<Exit> {
    let shown = args.module.display();
    let core = files::read::read(&args.module, files::Bound::component())?;
    match WasmKind::of(&core) {
        WasmKind::CoreModule => {}
        WasmKind::Component => bail!("{shown} is already a component: load it as it is"),
        WasmKind::NotWasm => bail!("{shown} is not a WebAssembly module"),
    }
    let component = verdict_guest_build::componentize_module(&core).with_context(|| {
        format!(
            "cannot make {shown} a component (a verifier built with the verdict-guest SDK \
             for wasm32-unknown-unknown carries what this needs)"
        )
    })?;
    if !exports_verdict(&component) {
        bail!(
            "{shown} carries no verdict WIT world (its component would export no \
             verdict:verifier interface): build it with the verdict-guest SDK"
        );
    }
    let output = args.output.unwrap_or_else(|| beside(&args.module));
    if same_file(&args.module, &output) {
        bail!(
            "{} is the module itself: give another --output",
            output.display()
        );
    }
    files::replace::write_replacing(&output, &component)?;
    crate::outln!(
        "wrote {} ({} bytes, from a {} byte module)",
        output.display(),
        component.len(),
        core.len()
    )?;
    let info = args.host.host()?.inspect(&component);
    Ok(match info.rejected {
        None => {
            crate::outln!("accepted: yes")?;
            Exit::Complete
        }
        Some(why) => {
            crate::outln!("accepted: no ({why})")?;
            Exit::NotComplete
        }
    })
}

/// True when the component exports a `verdict:verifier` interface at its
/// top level (the world `wit-bindgen` embedded in the module).
fn exports_verdict(component: &[u8]) -> bool {
    use wasmparser::{Parser, Payload};
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(component) {
        match payload {
            Ok(Payload::ModuleSection { .. } | Payload::ComponentSection { .. }) => depth += 1,
            Ok(Payload::End(_)) => depth = depth.saturating_sub(1),
            Ok(Payload::ComponentExportSection(exports)) if depth == 0 => {
                let ours = exports
                    .into_iter()
                    .flatten()
                    .any(|e| e.name.0.starts_with("verdict:verifier/"));
                if ours {
                    return true;
                }
            }
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

/// `DIR/NAME.wasm` → `DIR/NAME.component.wasm`.
fn beside(module: &Path) -> PathBuf {
    let stem = module
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    module.with_file_name(format!("{stem}.component.wasm"))
}

/// True when `a` and `b` are the same existing file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
