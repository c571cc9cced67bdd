//! Why a server could not be used.

/// An MCP server could not be started, listed or turned into tools.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The process did not start.
    #[error("MCP server {server}: cannot start {command}: {source}")]
    Spawn {
        /// The server.
        server: String,
        /// The program.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// `initialize` failed: the server exited, spoke no MCP, or timed out.
    #[error("MCP server {server}: initialize failed: {detail}{stderr}")]
    Initialize {
        /// The server.
        server: String,
        /// What went wrong.
        detail: String,
        /// The end of its stderr, when it wrote any (`": ..."`).
        stderr: String,
    },
    /// The configuration cannot be used (an HTTP header or URL, a
    /// bearer token's variable not set).
    #[error("MCP server {server}: {detail}")]
    Config {
        /// The server.
        server: String,
        /// What is wrong.
        detail: String,
    },
    /// `tools/list` failed.
    #[error("MCP server {server}: tools/list failed: {detail}")]
    List {
        /// The server.
        server: String,
        /// What went wrong.
        detail: String,
    },
    /// The server listed more than the configuration allows.
    #[error("MCP server {server}: lists more than {limit} {what}")]
    TooMany {
        /// The server.
        server: String,
        /// The limit.
        limit: usize,
        /// What: `tools`, or the tool's schema bytes.
        what: String,
    },
    /// A tool could not become a loop tool (bad name, bad schema, collision).
    #[error("MCP server {server}: tool {tool}: {detail}")]
    Tool {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// Why.
        detail: String,
    },
    /// The configuration names a tool the server does not list.
    #[error(
        "MCP server {server}: the configuration names tool {tool}, which the server does not list"
    )]
    UnknownTool {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
}

impl McpError {
    /// The name of the server the error is about.
    pub fn server(&self) -> &str {
        match self {
            Self::Spawn { server, .. }
            | Self::Initialize { server, .. }
            | Self::Config { server, .. }
            | Self::List { server, .. }
            | Self::TooMany { server, .. }
            | Self::Tool { server, .. }
            | Self::UnknownTool { server, .. } => server,
        }
    }
}
