//! A server the toolset restarts once per lifetime (one run): when it
//! dies (the process exits, the HTTP session fails), the call fails as
//! gone, the next call starts it again; a second death is final.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Mutex;
use verdict_policy::CancelHandle;

use crate::config::ServerConfig;
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
}

impl Supervised {
    pub(crate) fn new(server: McpServer) -> Self {
        Self {
            config: server.config().clone(),
            state: Mutex::new(State {
                server: Some(Arc::new(server)),
                restarted: false,
            }),
        }
    }

    /// The server's name.
    pub(crate) fn name(&self) -> &str {
        &self.config.name
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
