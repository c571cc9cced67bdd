//! One running MCP server: started as a child process (or reached over
//! streamable HTTP), initialized, its
//! tools listed (bounded), its tools called with a deadline.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, ClientConfig, PaginatedRequestParams, ProtocolVersion, Tool as McpTool,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::Mutex;
use verdict_policy::CancelHandle;

use crate::config::ServerConfig;
use crate::error::McpError;
use crate::http;
use crate::lines::{LineWatch, Oversized};
use crate::notices::{ToolsChanged, Watched};

/// The most bytes of a server's stderr kept (its tail), for error messages.
pub const STDERR_TAIL_BYTES: usize = 16 * 1024;
/// The most pages of `tools/list` followed.
const MAX_LIST_PAGES: usize = 1000;

/// A started, initialized MCP server. Dropping it kills the process.
pub struct McpServer {
    pub(crate) config: ServerConfig,
    service: RunningService<RoleClient, ClientConfig>,
    stderr: Arc<Mutex<Vec<u8>>>,
    oversized: Oversized,
    /// Marked when the server sends `notifications/tools/list_changed`.
    tools_changed: ToolsChanged,
    /// Held so the process lives as long as the server (killed on drop);
    /// none over HTTP.
    _child: Option<Child>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.config.name)
            .finish_non_exhaustive()
    }
}

/// Why one call did not give a result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The deadline passed; the request was cancelled
    /// (`notifications/cancelled` sent).
    #[error("timed out after {0:?} (cancelled)")]
    Timeout(Duration),
    /// The loop cancelled the call; the request was cancelled
    /// (`notifications/cancelled` sent).
    #[error("cancelled")]
    Cancelled,
    /// The connection is gone: the server exited or closed its stdout.
    #[error("the server is gone{0}")]
    Gone(String),
    /// The server answered with a JSON-RPC error.
    #[error("the server refused the call: {0}")]
    Refused(String),
    /// The server's answer was longer than `max_message_bytes`: it was
    /// dropped unread (never held in memory), so the call had no answer.
    #[error("the server's answer was longer than {0} bytes and was dropped")]
    TooLarge(usize),
    /// The server died a second time in this toolset's lifetime: it is
    /// restarted only once.
    #[error("the server died again and is not restarted a second time")]
    Dead,
    /// Anything else the transport reported.
    #[error("transport error: {0}")]
    Transport(String),
}

impl McpServer {
    /// Starts the server (or connects to its HTTP endpoint) and
    /// initializes it.
    pub async fn start(config: ServerConfig) -> Result<Self, McpError> {
        let tail = Arc::new(Mutex::new(Vec::new()));
        let oversized = Oversized::default();
        let tools_changed = ToolsChanged::default();
        let (started, child) = if let Some(endpoint) = &config.http {
            let transport =
                Watched::new(http::transport(&config, endpoint)?, tools_changed.clone());
            let started =
                tokio::time::timeout(config.start_timeout, client_config().serve(transport)).await;
            (started, None)
        } else {
            let (transport, child) = spawn(&config, &tail, &oversized)?;
            let transport = Watched::new(transport, tools_changed.clone());
            let started =
                tokio::time::timeout(config.start_timeout, client_config().serve(transport)).await;
            (started, Some(child))
        };
        let service = match started {
            Ok(Ok(service)) => service,
            Ok(Err(e)) => {
                return Err(McpError::Initialize {
                    server: config.name.clone(),
                    detail: e.to_string(),
                    stderr: stderr_note(&tail).await,
                });
            }
            Err(_) => {
                return Err(McpError::Initialize {
                    server: config.name.clone(),
                    detail: format!("no answer within {:?}", config.start_timeout),
                    stderr: stderr_note(&tail).await,
                });
            }
        };
        Ok(Self {
            config,
            service,
            stderr: tail,
            oversized,
            tools_changed,
            _child: child,
        })
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// The configuration it was started with.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Whether the server said its tool list changed since the last time
    /// this was asked (`notifications/tools/list_changed`); clears it.
    pub fn take_tools_changed(&self) -> bool {
        self.tools_changed.take()
    }

    /// Marks the tool list changed again (a refresh that failed retries).
    pub(crate) fn mark_tools_changed(&self) {
        self.tools_changed.mark();
    }

    /// The protocol version the server answered `initialize` with.
    pub fn protocol_version(&self) -> Option<String> {
        let info = self.service.peer_info()?;
        serde_json::to_value(&info.protocol_version)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
    }

    /// Every tool the server lists, following pagination, bounded by
    /// `max_tools` (more is an error, not a silent cut) and
    /// `max_schema_bytes` per tool.
    pub async fn list_tools(&self) -> Result<Vec<McpTool>, McpError> {
        let name = &self.config.name;
        let list_error = |detail: String| McpError::List {
            server: name.clone(),
            detail,
        };
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = match &cursor {
                None => None,
                Some(c) => Some(
                    serde_json::from_value::<PaginatedRequestParams>(json!({ "cursor": c }))
                        .map_err(|e| list_error(e.to_string()))?,
                ),
            };
            let page = tokio::time::timeout(
                self.config.start_timeout,
                self.service.peer().list_tools(params),
            )
            .await
            .map_err(|_| list_error(format!("no answer within {:?}", self.config.start_timeout)))?
            .map_err(|e| list_error(e.to_string()))?;
            for tool in page.tools {
                if tools.len() == self.config.max_tools {
                    return Err(McpError::TooMany {
                        server: name.clone(),
                        limit: self.config.max_tools,
                        what: "tools".into(),
                    });
                }
                let schema_bytes = serde_json::to_vec(&*tool.input_schema)
                    .map(|b| b.len())
                    .unwrap_or(usize::MAX);
                if schema_bytes > self.config.max_schema_bytes {
                    return Err(McpError::TooMany {
                        server: name.clone(),
                        limit: self.config.max_schema_bytes,
                        what: format!("bytes of input schema for tool {}", tool.name),
                    });
                }
                tools.push(tool);
            }
            match page.next_cursor {
                Some(next) if cursor.as_ref() != Some(&next) => cursor = Some(next),
                _ => return Ok(tools),
            }
        }
        Err(list_error(format!("more than {MAX_LIST_PAGES} pages")))
    }

    /// Calls `tool` (the server's name) with `arguments`, passing
    /// `idempotency_key` as `_meta` `verdict/idempotencyKey`. Past
    /// `deadline`, or when `cancel` fires, the request is dropped, which
    /// sends `notifications/cancelled` to the server.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Value,
        idempotency_key: Option<&str>,
        deadline: Duration,
        cancel: &CancelHandle,
    ) -> Result<Value, CallError> {
        let mut request = json!({ "name": tool, "arguments": arguments });
        if let Some(key) = idempotency_key {
            request["_meta"] = json!({ "verdict/idempotencyKey": key });
        }
        let params: CallToolRequestParams = serde_json::from_value(request)
            .map_err(|e| CallError::Transport(format!("cannot build the request: {e}")))?;
        let dropped_before = self.oversized.count();
        // Dropping rmcp's request future (at the deadline or on
        // cancellation) sends `notifications/cancelled` for it.
        let call = tokio::time::timeout(deadline, self.service.peer().call_tool(params));
        let answer = tokio::select! {
            answer = call => answer,
            () = cancel.cancelled() => return Err(CallError::Cancelled),
        };
        match answer {
            Err(_) if self.oversized.count() > dropped_before => {
                Err(CallError::TooLarge(self.config.max_message_bytes))
            }
            Err(_) => Err(CallError::Timeout(deadline)),
            Ok(Err(ServiceError::McpError(e))) => Err(CallError::Refused(e.message.to_string())),
            Ok(Err(ServiceError::TransportClosed)) => {
                Err(CallError::Gone(stderr_note(&self.stderr).await))
            }
            Ok(Err(ServiceError::TransportSend(e))) if http::too_large(&e) => {
                Err(CallError::TooLarge(self.config.max_message_bytes))
            }
            Ok(Err(e)) => Err(CallError::Transport(e.to_string())),
            Ok(Ok(result)) => serde_json::to_value(result)
                .map_err(|e| CallError::Transport(format!("unreadable result: {e}"))),
        }
    }
}

/// What the client says in `initialize`: the newest protocol version that
/// still has the `initialize` handshake (rmcp's default, `2026-07-28`, has
/// none and scopes `tools/list_changed` to listen streams; offering it in an
/// `initialize` failed the conformance suite's `initialize` scenario).
fn client_config() -> ClientConfig {
    ClientConfig::default().with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// The transport of a child process's pipes.
type StdioTransport = AsyncRwTransport<RoleClient, LineWatch<ChildStdout>, ChildStdin>;

/// Starts the server's process, its stdout watched for over-long lines
/// and its stderr's tail kept in `tail`.
fn spawn(
    config: &ServerConfig,
    tail: &Arc<Mutex<Vec<u8>>>,
    oversized: &Oversized,
) -> Result<(StdioTransport, Child), McpError> {
    let mut command = Command::new(&config.command);
    command.args(&config.args).env_clear();
    for keep in ["PATH", "HOME"] {
        if let Some(value) = std::env::var_os(keep) {
            command.env(keep, value);
        }
    }
    command
        .envs(&config.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = &config.cwd {
        command.current_dir(cwd);
    }
    let mut child = command.spawn().map_err(|source| McpError::Spawn {
        server: config.name.clone(),
        command: config.command.display().to_string(),
        source,
    })?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(McpError::Initialize {
            server: config.name.clone(),
            detail: "its stdin or stdout is not a pipe".into(),
            stderr: String::new(),
        });
    };
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(keep_tail(stderr, Arc::clone(tail)));
    }
    // rmcp drops a line longer than the bound without buffering it; the
    // watch counts such lines, so a call left without its answer says why.
    let stdout = LineWatch::new(stdout, config.max_message_bytes, oversized.clone());
    let transport =
        AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(config.max_message_bytes);
    Ok((transport, child))
}

/// Keeps the last [`STDERR_TAIL_BYTES`] of the server's stderr.
async fn keep_tail(mut stderr: ChildStderr, tail: Arc<Mutex<Vec<u8>>>) {
    let mut buf = vec![0u8; 8192];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let mut tail = tail.lock().await;
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > STDERR_TAIL_BYTES {
            let cut = tail.len() - STDERR_TAIL_BYTES;
            tail.drain(..cut);
        }
    }
}

/// `": <the end of stderr>"`, or nothing when the server wrote none.
async fn stderr_note(tail: &Mutex<Vec<u8>>) -> String {
    let tail = tail.lock().await;
    let text = String::from_utf8_lossy(&tail);
    let text = text.trim();
    if text.is_empty() {
        return String::new();
    }
    let last: Vec<&str> = text.lines().rev().take(5).collect();
    let last: Vec<&str> = last.into_iter().rev().collect();
    format!(" (stderr: {})", last.join(" | "))
}
