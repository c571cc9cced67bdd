//! An MCP server's tools as tools of the loop, each with the effect its
//! annotations (or the configuration) decide.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;
use verdict_agent::{Tool, ToolContext, ToolError};

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

/// The tools of started MCP servers, ready to add to an agent
/// (`AgentBuilder::tool` for each of [`McpToolset::tools`]). The servers
/// live as long as the toolset or a tool of it. A server that dies is
/// restarted once, at the next call; a second death is final.
#[derive(Debug)]
pub struct McpToolset {
    tools: Vec<Tool>,
    listing: Vec<ToolListing>,
}

impl McpToolset {
    /// Starts every server, lists its tools and makes them loop tools. Any
    /// server that fails to start or list fails the whole set (a half set
    /// of tools would change what the model can do without saying so).
    pub async fn start(configs: Vec<ServerConfig>) -> Result<Self, McpError> {
        let mut set = Self {
            tools: Vec::new(),
            listing: Vec::new(),
        };
        let mut names = BTreeSet::new();
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
            for tool in listed.into_iter().filter(|t| config.admits(&t.name)) {
                let (loop_tool, listing) = make_tool(&server, &config, tool)?;
                if !names.insert(listing.loop_name.clone()) {
                    return Err(McpError::Tool {
                        server: config.name.clone(),
                        tool: listing.tool,
                        detail: format!("the name {} is taken by another tool", listing.loop_name),
                    });
                }
                set.tools.push(loop_tool);
                set.listing.push(listing);
            }
        }
        Ok(set)
    }

    /// The loop tools.
    pub fn tools(&self) -> Vec<Tool> {
        self.tools.clone()
    }

    /// Each tool with its effect and where it came from.
    pub fn listing(&self) -> &[ToolListing] {
        &self.listing
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
