//! `verdict mcp list CONFIG`: starts the configuration's MCP servers, lists
//! their tools and prints each with the effect the loop will give it and
//! where that effect came from (annotation, override, default).

use crate::exit::Exit;
use crate::tool_rows::{mcp_row, table};
use anyhow::Context;
use std::path::PathBuf;

/// Arguments of `verdict mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    #[command(subcommand)]
    command: McpCommand,
}

#[derive(Debug, clap::Subcommand)]
enum McpCommand {
    /// Start the configured MCP servers and print each tool with its
    /// effect and where the effect came from.
    List(ListArgs),
}

#[derive(Debug, clap::Args)]
struct ListArgs {
    /// The configuration file (TOML, or JSON when it ends in .json).
    config: PathBuf,
    /// Include this tenant's own servers and its `trust_mcp_annotations`
    /// (default: the only tenant, if one).
    #[arg(long, value_name = "T")]
    tenant: Option<String>,
    /// One JSON array on stdout.
    #[arg(long)]
    json: bool,
}

/// Runs `verdict mcp`.
pub fn run(args: McpArgs) -> anyhow::Result<Exit> {
    let McpCommand::List(args) = args.command;
    let file = crate::config::load(&args.config)?;
    let tenant = match &args.tenant {
        Some(t) if !file.config.tenants.contains_key(t) => {
            anyhow::bail!("{}: no tenant named {t:?}", file.path.display())
        }
        Some(t) => Some(t.clone()),
        None if file.config.tenants.len() == 1 => file.config.tenants.keys().next().cloned(),
        None => None,
    };
    let runtime = super::runtime()?;
    let set = crate::mcp_tools::start(&file, tenant.as_deref(), runtime.handle())?;
    let listing = set.as_ref().map(|s| s.listing()).unwrap_or_default();
    if args.json {
        let rows: Vec<serde_json::Value> = listing
            .iter()
            .map(|l| {
                serde_json::json!({
                    "name": l.loop_name,
                    "server": l.server,
                    "tool": l.tool,
                    "effect": l.effect.label(),
                    "source": l.effect.source,
                })
            })
            .collect();
        let text = serde_json::to_string(&rows).context("cannot render the listing")?;
        crate::outln!("{text}")?;
    } else if listing.is_empty() {
        crate::outln!(
            "no MCP tools: the configuration has no [mcp.NAME] server, or they list none"
        )?;
    } else {
        let rows: Vec<_> = listing.iter().map(mcp_row).collect();
        crate::outln!("{}", table(&rows))?;
    }
    drop(set);
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    Ok(Exit::Complete)
}
