//! `verdict componentize`: make a verifier built lean (a core module for
//! `wasm32-unknown-unknown`, with the `verdict-guest` SDK) a component, as
//! `wasm-tools component new` does, and say whether this host accepts it.

use super::HostArgs;
use crate::exit::Exit;
use anyhow::{Context, bail};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use verdict_sandbox::WasmKind;

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
/// accepted, 1 when written but rejected by this host (the reason printed).
pub fn run(args: ComponentizeArgs) -> anyhow::Result<Exit> {
    let shown = args.module.display();
    let core = crate::files::read::read(&args.module, crate::files::Bound::component())?;
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
    let output = args.output.unwrap_or_else(|| beside(&args.module));
    write_new(&args.module, &output, &component)?;
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

/// `DIR/NAME.wasm` → `DIR/NAME.component.wasm`.
fn beside(module: &Path) -> PathBuf {
    let stem = module
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    module.with_file_name(format!("{stem}.component.wasm"))
}

/// Writes `bytes` to `output` through a temporary file in its directory
/// (renamed into place: a failed write leaves any earlier file whole),
/// refusing to replace `module`.
fn write_new(module: &Path, output: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same(module, output) {
        bail!(
            "{} is the module itself: give another --output",
            output.display()
        );
    }
    let dir = match output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let context = || format!("cannot write {}", output.display());
    let mut builder = tempfile::Builder::new();
    // A file for others to read, as a compiler's output is (the umask
    // applies), not the temporary file's private mode.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let mut file = builder.tempfile_in(dir).with_context(context)?;
    file.write_all(bytes).with_context(context)?;
    file.persist(output)
        .map_err(|e| e.error)
        .with_context(context)?;
    Ok(())
}
