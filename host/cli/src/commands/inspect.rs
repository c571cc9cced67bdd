//! `verdict inspect`: describe a .wasm file and whether this host accepts it.

use super::HostArgs;
use crate::exit::Exit;

/// Arguments of `verdict inspect`.
#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    /// The .wasm file, builtin:NAME, or oci://HOST[:PORT]/REPO[:TAG|@sha256:DIGEST].
    wasm: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    host: HostArgs,
}

/// Runs `verdict inspect`; exits 0 when accepted, 1 when rejected.
pub fn run(args: InspectArgs) -> anyhow::Result<Exit> {
    let host = args.host.host()?;
    let mut fetched = None;
    let bytes = if verdict::registry::is_oci(&args.wasm) {
        let reference = verdict::registry::OciRef::parse(&args.wasm)?;
        let f = crate::oci::registry(&Default::default()).fetch_blocking(&reference, &[])?;
        let bytes = f.bytes.clone();
        fetched = Some(f);
        bytes
    } else {
        super::read_verifier(&args.wasm)?
    };
    if host.would_compile(&bytes) {
        crate::stdout::note_line(format_args!(
            "compiling {} to inspect it (seconds for a Python or JavaScript verifier)...",
            args.wasm
        ));
    }
    let info = host.inspect(&bytes);
    if args.json {
        let mut value = serde_json::to_value(&info)?;
        if let Some(f) = &fetched {
            value["oci"] = serde_json::json!({
                "resolved": f.reference.canonical(),
                "manifestDigest": f.digest,
                "layerDigest": f.layer_digest,
                "annotations": f.annotations,
            });
        }
        crate::outln!("{}", serde_json::to_string_pretty(&value)?)?;
    } else {
        if let Some(f) = &fetched {
            crate::outln!("oci:     {}", f.reference.canonical())?;
            for (key, value) in &f.annotations {
                crate::outln!("  {key}: {value}")?;
            }
        }
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
        if info.warm_up {
            crate::outln!("warm-up: yes (warm runs on each fresh instance before its call)")?;
        }
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
