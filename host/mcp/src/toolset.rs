//! An MCP server's tools as tools of the loop, each with the effect its
//! annotations (or the configuration) decide.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};

use futures::future::BoxFuture;

use serde_json::Value;
use verdict_agent::{Tool, ToolContext, ToolError, ToolSource};

use crate::config::ServerConfig;
use crate::effect::{Hints, ToolEffect};
use crate::error::McpError;
use crate::result::to_loop_result;
use crate::server::McpServer;
use crate::supervised::Supervised;

/// One listed tool: its names, effect and where the effect came from.
#[derive(Debug, Clone)]
pub struct ToolListing {
    /// The server's name.
    pub server: String,
    /// The tool's name at the server.
    pub tool: String,
    /// The tool's name in the loop (with the prefix).
    pub loop_name: String,
    /// Its effect.
    pub effect: ToolEffect,
}

/// The tools of started MCP servers, ready to add to an agent: as a
/// [`ToolSource`] (`AgentBuilder::tool_source(Arc::new(set))`), whose list
/// follows the servers' `notifications/tools/list_changed` between turns,
/// or as fixed tools (`AgentBuilder::tool` for each of
/// [`McpToolset::tools`]), listed once. The servers live as long as the
/// toolset or a tool of it. A server that dies is restarted once, at the
/// next call; a second death is final.
#[derive(Debug)]
pub struct McpToolset {
    servers: Vec<Arc<Supervised>>,
    offered: RwLock<Offered>,
    /// One refresh at a time.
    refreshing: tokio::sync::Mutex<()>,
}

/// What the toolset offers now.
#[derive(Debug, Default)]
struct Offered {
    /// Each tool with its listing and the index of its server.
    tools: Vec<(usize, Arc<Tool>, ToolListing)>,
    /// Loop names a server offered once and no longer does, with the
    /// server's name.
    withdrawn: BTreeMap<String, String>,
}

impl McpToolset {
    /// Starts every server, lists its tools and makes them loop tools. Any
    /// server that fails to start or list fails the whole set (a half set
    /// of tools would change what the model can do without saying so).
    pub async fn start(configs: Vec<ServerConfig>) -> Result<Self, McpError> {
        let mut offered = Offered::default();
        let mut servers = Vec::new();
        for config in configs {
            let started = McpServer::start(config).await?;
            let listed = started.list_tools().await?;
            let config = started.config().clone();
            let server = Arc::new(Supervised::new(started));
            for named in config.tools.keys() {
                if !listed.iter().any(|t| t.name == named.as_str()) {
                    return Err(McpError::UnknownTool {
                        server: config.name.clone(),
                        tool: named.clone(),
                    });
                }
            }
            let index = servers.len();
            for tool in listed.into_iter().filter(|t| config.admits(&t.name)) {
                let (loop_tool, listing) = make_tool(&server, &config, tool)?;
                if offered
                    .tools
                    .iter()
                    .any(|(_, _, l)| l.loop_name == listing.loop_name)
                {
                    return Err(McpError::Tool {
                        server: config.name.clone(),
                        tool: listing.tool,
                        detail: format!("the name {} is taken by another tool", listing.loop_name),
                    });
                }
                offered.tools.push((index, Arc::new(loop_tool), listing));
            }
            servers.push(server);
        }
        Ok(Self {
            servers,
            offered: RwLock::new(offered),
            refreshing: tokio::sync::Mutex::new(()),
        })
    }

    /// The loop tools offered now, as fixed tools.
    pub fn tools(&self) -> Vec<Tool> {
        self.read()
            .tools
            .iter()
            .map(|(_, t, _)| (**t).clone())
            .collect()
    }

    /// Each tool offered now with its effect and where it came from.
    pub fn listing(&self) -> Vec<ToolListing> {
        self.read()
            .tools
            .iter()
            .map(|(_, _, l)| l.clone())
            .collect()
    }

    /// Lists again the tools of every server that said its list changed
    /// (or was restarted) since the last refresh, with the same bounds,
    /// filters, prefix and effects as at the start; `true` when what the
    /// toolset offers changed. A server whose listing fails keeps its
    /// tools (and is listed again next time); a name another server's tool
    /// holds is skipped.
    pub async fn refresh(&self) -> bool {
        let _one = self.refreshing.lock().await;
        let mut changed = false;
        for (index, server) in self.servers.iter().enumerate() {
            let Some(listed) = server.relist_if_changed().await else {
                continue;
            };
            let listed = match listed {
                Ok(listed) => listed,
                Err(error) => {
                    tracing::warn!(server = %server.name(), %error, "the MCP server's new tool list could not be read; its tools stay as they were");
                    continue;
                }
            };
            let config = server.config();
            let mut fresh = Vec::new();
            for tool in listed.into_iter().filter(|t| config.admits(&t.name)) {
                match make_tool(server, config, tool) {
                    Ok((tool, listing)) => fresh.push((index, Arc::new(tool), listing)),
                    Err(error) => {
                        tracing::warn!(server = %config.name, %error, "a tool of the new list is left out");
                    }
                }
            }
            changed |= self.write().replace(index, &config.name, fresh);
        }
        changed
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Offered> {
        self.offered.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Offered> {
        self.offered.write().unwrap_or_else(|p| p.into_inner())
    }
}

impl Offered {
    /// Replaces the tools of server `index` by `fresh`; `true` when the
    /// names or definitions offered changed.
    fn replace(
        &mut self,
        index: usize,
        server: &str,
        fresh: Vec<(usize, Arc<Tool>, ToolListing)>,
    ) -> bool {
        let before: Vec<_> = self
            .tools
            .iter()
            .filter(|(i, _, _)| *i == index)
            .map(|(_, t, _)| t.definition())
            .collect();
        let taken: BTreeSet<String> = self
            .tools
            .iter()
            .filter(|(i, _, _)| *i != index)
            .map(|(_, _, l)| l.loop_name.clone())
            .collect();
        let old: Vec<String> = self
            .tools
            .iter()
            .filter(|(i, _, _)| *i == index)
            .map(|(_, _, l)| l.loop_name.clone())
            .collect();
        self.tools.retain(|(i, _, _)| *i != index);
        for entry in fresh {
            if taken.contains(&entry.2.loop_name) {
                tracing::warn!(server, tool = %entry.2.tool, "the name {} is taken by another tool; left out", entry.2.loop_name);
                continue;
            }
            self.withdrawn.remove(&entry.2.loop_name);
            self.tools.push(entry);
        }
        for name in old {
            if !self.tools.iter().any(|(_, _, l)| l.loop_name == name) {
                self.withdrawn.insert(name, server.to_owned());
            }
        }
        let after: Vec<_> = self
            .tools
            .iter()
            .filter(|(i, _, _)| *i == index)
            .map(|(_, t, _)| t.definition())
            .collect();
        before != after
    }
}

/// The loop's view: refreshed before each model call, never during a
/// batch (a batch keeps the tools its calls were prepared with).
impl ToolSource for McpToolset {
    fn tools(&self) -> Vec<Arc<Tool>> {
        self.read()
            .tools
            .iter()
            .map(|(_, t, _)| Arc::clone(t))
            .collect()
    }

    fn refresh(&self) -> BoxFuture<'_, bool> {
        Box::pin(McpToolset::refresh(self))
    }

    fn withdrawn(&self, name: &str) -> Option<String> {
        self.read().withdrawn.get(name).map(|server| {
            format!("the tool `{name}` is no longer offered by MCP server {server} (its tool list changed)")
        })
    }
}

fn make_tool(
    server: &Arc<Supervised>,
    config: &ServerConfig,
    tool: rmcp::model::Tool,
) -> Result<(Tool, ToolListing), McpError> {
    let hints = tool.annotations.as_ref().map(|a| Hints {
        read_only: a.read_only_hint,
        destructive: a.destructive_hint,
        idempotent: a.idempotent_hint,
    });
    let over = config.tools.get(tool.name.as_ref()).and_then(|t| t.effect);
    let effect = ToolEffect::decide(hints, over, config.trust_annotations);
    let loop_name = config.loop_name(&tool.name);
    let remote_name = tool.name.to_string();
    let deadline = config.timeout_of(&remote_name);
    let max_bytes = config.max_result_bytes;
    let parameters = Value::Object((*tool.input_schema).clone());
    let run_server = Arc::clone(server);
    let run_name = remote_name.clone();
    let tool_error = |detail: String| McpError::Tool {
        server: config.name.clone(),
        tool: remote_name.clone(),
        detail,
    };
    let mut loop_tool = Tool::new(
        loop_name.clone(),
        parameters,
        move |args, ctx: ToolContext| {
            let server = Arc::clone(&run_server);
            let name = run_name.clone();
            async move {
                let answer = server
                    .call(
                        &name,
                        args,
                        ctx.idempotency_key.as_deref(),
                        deadline,
                        &ctx.cancel,
                    )
                    .await
                    .map_err(|e| {
                        ToolError::new(format!("MCP server {}: {name}: {e}", server.name()))
                    })?;
                to_loop_result(&answer, max_bytes).map_err(ToolError::new)
            }
        },
    )
    .map_err(|e| tool_error(e.to_string()))?
    .with_effect(effect.effect)
    .with_deadline(deadline);
    if let Some(description) = &tool.description {
        loop_tool = loop_tool.with_description(description.to_string());
    }
    if effect.idempotent {
        loop_tool = loop_tool.idempotent();
    }
    Ok((
        loop_tool,
        ToolListing {
            server: config.name.clone(),
            tool: remote_name.clone(),
            loop_name,
            effect,
        },
    ))
}
