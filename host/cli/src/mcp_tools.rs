//! Starting the MCP servers of a run (`[mcp.*]` and the tenant's own) on
//! the runtime that will drive the run: their connections are tasks of it.

use crate::config::{ConfigError, ConfigFile};
use verdict::mcp::McpToolset;

/// Starts the servers of a run for `tenant` on `runtime` (none configured:
/// an empty set, nothing started). A server that fails to start or list
/// fails the run before anything ran, with the error at its section.
pub fn start(
    file: &ConfigFile,
    tenant: Option<&str>,
    runtime: &tokio::runtime::Handle,
) -> Result<Option<McpToolset>, ConfigError> {
    let configs = file.mcp_servers(tenant)?;
    if configs.is_empty() {
        return Ok(None);
    }
    // Waited on from a thread of its own, so the caller may be a task of
    // `runtime` itself (the demo builds its session inside it).
    let started = std::thread::scope(|scope| {
        scope
            .spawn(|| runtime.block_on(McpToolset::start(configs)))
            .join()
    });
    match started {
        Ok(Ok(set)) => Ok(Some(set)),
        Ok(Err(error)) => {
            let at = file.mcp_location(tenant, error.server());
            Err(file.error(&at, error.to_string()))
        }
        Err(_) => Err(file.error(
            &[crate::config::locate::Seg::Key("mcp".into())],
            "starting the MCP servers failed unexpectedly",
        )),
    }
}
