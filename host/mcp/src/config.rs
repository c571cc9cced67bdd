//! How to start one MCP server and which of its tools the loop gets.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::effect::EffectOverride;

/// The most tools one server may list; a longer list is refused.
pub const DEFAULT_MAX_TOOLS: usize = 512;
/// The largest input schema of one tool, in bytes of JSON.
pub const DEFAULT_MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// The largest result the loop keeps of one call, in bytes; more is cut.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 1024 * 1024;
/// The longest JSON-RPC message read from a server, in bytes; a longer
/// one is dropped unread.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// A call's deadline unless the server or tool names one.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the server may take to start and answer `initialize` and `tools/list`.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(30);

/// A server reached over streamable HTTP instead of started as a child.
#[derive(Debug, Clone)]
pub struct HttpEndpoint {
    /// The endpoint (`http://` or `https://`; TLS by rustls with the
    /// webpki roots).
    pub url: String,
    /// Headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// The environment variable holding a bearer token, read when the
    /// server is started (a missing variable is an error naming it).
    pub token_env: Option<String>,
}

/// One MCP server: a child process spoken to over stdio, or (when
/// [`ServerConfig::http`] is set) a streamable HTTP endpoint.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The server's name; also the default tool-name prefix.
    pub name: String,
    /// When set, the server is this HTTP endpoint and `command`, `args`,
    /// `env` and `cwd` are unused.
    pub http: Option<HttpEndpoint>,
    /// The program to start.
    pub command: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its environment: only these variables and `PATH` and `HOME`
    /// (a server gets no secret it was not given).
    pub env: BTreeMap<String, String>,
    /// Its working directory.
    pub cwd: Option<PathBuf>,
    /// Tool names get `PREFIX__` in front (`fs__read_file`), so two servers'
    /// tools never collide; `Some("")` keeps the server's names.
    pub prefix: Option<String>,
    /// Only these tools (by the server's name), when not empty.
    pub include: Vec<String>,
    /// Never these tools.
    pub exclude: Vec<String>,
    /// Per tool (server's name): an effect that wins over the annotations,
    /// and a deadline.
    pub tools: BTreeMap<String, ToolSettings>,
    /// Whether the server's annotations decide effects (default true).
    pub trust_annotations: bool,
    /// A call's deadline unless the tool names one.
    pub call_timeout: Duration,
    /// Start-up and listing deadline.
    pub start_timeout: Duration,
    /// At most this many tools.
    pub max_tools: usize,
    /// At most this many bytes of input schema per tool.
    pub max_schema_bytes: usize,
    /// At most this many bytes of one result.
    pub max_result_bytes: usize,
    /// At most this many bytes of one message from the server (over HTTP:
    /// of one JSON response body and of one SSE event).
    pub max_message_bytes: usize,
}

/// The configuration of one tool of a server.
#[derive(Debug, Clone, Default)]
pub struct ToolSettings {
    /// An effect that wins over the annotations.
    pub effect: Option<EffectOverride>,
    /// The tool's own deadline.
    pub timeout: Option<Duration>,
}

impl ServerConfig {
    /// A server started as `command args...`, with the defaults.
    pub fn stdio(name: impl Into<String>, command: impl Into<PathBuf>, args: Vec<String>) -> Self {
        Self {
            name: name.into(),
            http: None,
            command: command.into(),
            args,
            env: BTreeMap::new(),
            cwd: None,
            prefix: None,
            include: Vec::new(),
            exclude: Vec::new(),
            tools: BTreeMap::new(),
            trust_annotations: true,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            start_timeout: DEFAULT_START_TIMEOUT,
            max_tools: DEFAULT_MAX_TOOLS,
            max_schema_bytes: DEFAULT_MAX_SCHEMA_BYTES,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }

    /// A server at the streamable HTTP endpoint `url`, with the defaults.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        let mut config = Self::stdio(name, "", Vec::new());
        config.http = Some(HttpEndpoint {
            url: url.into(),
            headers: BTreeMap::new(),
            token_env: None,
        });
        config
    }

    /// Whether the loop gets this tool (the server's name).
    pub fn admits(&self, tool: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|t| t == tool))
            && !self.exclude.iter().any(|t| t == tool)
    }

    /// The loop's name of a server's tool.
    pub fn loop_name(&self, tool: &str) -> String {
        match self.prefix.as_deref().unwrap_or(&self.name) {
            "" => tool.to_owned(),
            prefix => format!("{prefix}__{tool}"),
        }
    }

    /// A tool's deadline.
    pub fn timeout_of(&self, tool: &str) -> Duration {
        self.tools
            .get(tool)
            .and_then(|t| t.timeout)
            .unwrap_or(self.call_timeout)
    }
}
