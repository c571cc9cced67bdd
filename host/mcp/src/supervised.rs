//! A server the toolset restarts once per lifetime (one run): when it
//! dies (the process exits, the HTTP session fails), the call fails as
//! gone, the next call starts it again; a second death is final.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Mutex;
use verdict_policy::CancelHandle;

use rmcp::model::Tool as McpTool;

use crate::config::ServerConfig;
use crate::error::McpError;
use crate::server::{CallError, McpServer};

/// A server and its one restart.
#[derive(Debug)]
pub(crate) struct Supervised {
    config: ServerConfig,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The live server; `None` once it died.
    server: Option<Arc<McpServer>>,
    /// Whether the one restart was used.
    restarted: bool,
    /// Set by the restart: the new process's tools are listed again at
    /// the next refresh.
    relist: bool,
}

impl Supervised {
    pub(crate) fn new(server: McpServer) -> Self {
        Self {
            config: server.config().clone(),
            state: Mutex::new(State {
                server: Some(Arc::new(server)),
                restarted: false,
                relist: false,
            }),
        }
    }

    /// The configuration it runs with.
    pub(crate) fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The server's name.
    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    /// The live server's tools listed again when it said its list changed
    /// (or was restarted) since the last time; `None` when nothing changed
    /// or the server is dead. A failed listing is retried next time.
    pub(crate) async fn relist_if_changed(&self) -> Option<Result<Vec<McpTool>, McpError>> {
        let server = {
            let mut state = self.state.lock().await;
            let server = Arc::clone(state.server.as_ref()?);
            let relist = std::mem::take(&mut state.relist);
            if !(server.take_tools_changed() || relist) {
                return None;
            }
            server
        };
        let listed = server.list_tools().await;
        if listed.is_err() {
            server.mark_tools_changed();
        }
        Some(listed)
    }

    /// Calls `tool` on the live server, restarting a dead one first when
    /// the restart is not used yet.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: Value,
        idempotency_key: Option<&str>,
        deadline: Duration,
        cancel: &CancelHandle,
    ) -> Result<Value, CallError> {
        let server = {
            let mut state = self.state.lock().await;
            match &state.server {
                Some(server) => Arc::clone(server),
                None if state.restarted => return Err(CallError::Dead),
                None => {
                    state.restarted = true;
                    tracing::warn!(server = %self.config.name, "restarting the MCP server once");
                    let server = McpServer::start(self.config.clone())
                        .await
                        .map(Arc::new)
                        .map_err(|e| CallError::Gone(format!(" and its restart failed: {e}")))?;
                    state.server = Some(Arc::clone(&server));
                    state.relist = true;
                    server
                }
            }
        };
        let answer = server
            .call(tool, arguments, idempotency_key, deadline, cancel)
            .await;
        if let Err(CallError::Gone(_) | CallError::Transport(_)) = &answer {
            let mut state = self.state.lock().await;
            if state
                .server
                .as_ref()
                .is_some_and(|s| Arc::ptr_eq(s, &server))
            {
                state.server = None;
            }
        }
        answer
    }
}
