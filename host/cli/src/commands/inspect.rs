//! `verdict inspect`: describe a .wasm file and whether this host accepts it.

use super::HostArgs;
use crate::exit::Exit;

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
    let info = host.inspect(&bytes);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        println!("digest:  sha256:{}", info.digest);
        println!("size:    {} bytes", info.size);
        println!("kind:    {:?}", info.kind);
        let roles: Vec<String> = info
            .roles
            .iter()
            .map(|r| format!("{r:?}").to_lowercase())
            .collect();
        println!(
            "roles:   {}",
            if roles.is_empty() {
                "none".into()
            } else {
                roles.join(", ")
            }
        );
        println!("exports:");
        for e in &info.exports {
            println!("  {e}");
        }
        println!("imports:");
        for i in &info.imports {
            println!("  {i}");
        }
        match &info.rejected {
            None => println!("accepted: yes"),
            Some(why) => println!("accepted: no ({why})"),
        }
    }
    Ok(if info.rejected.is_none() {
        Exit::Complete
    } else {
        Exit::NotComplete
    })
}
