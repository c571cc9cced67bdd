//! `[mcp.NAME]` (and a tenant's `[tenants.T.mcp.NAME]`): the MCP servers
//! whose tools the agent gets, checked before anything runs and turned
//! into [`verdict::mcp::ServerConfig`]s.

use super::locate::Seg;
use super::{ConfigError, ConfigFile};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use verdict::mcp::{EffectOverride, ServerConfig, ToolSettings};

fn key(k: &str) -> Seg {
    Seg::Key(k.to_owned())
}

/// Longest deadline of a call or a start, in milliseconds (one hour).
pub const MAX_TIMEOUT_MS: u64 = 3_600_000;
/// Most tools one server may be allowed to list.
pub const MAX_TOOLS: usize = 100_000;

/// `[mcp.NAME]`: one MCP server started as a child process over stdio
/// (`command`), or reached over streamable HTTP (`url`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpSection {
    /// The program (a bare name is looked up in `PATH`; a path is resolved
    /// against the configuration's directory).
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Its environment: these variables, `PATH` and `HOME`, nothing else.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables passed through from verdict's own environment (a token:
    /// never written in the file).
    #[serde(default)]
    pub env_pass: Vec<String>,
    /// Its working directory (resolved against the configuration's directory).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// A streamable HTTP endpoint (`http://` or `https://`), instead of
    /// `command`.
    #[serde(default)]
    pub url: Option<String>,
    /// Headers sent with every HTTP request (with `url`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The variable of verdict's environment holding a bearer token for
    /// the HTTP server (read when it starts; never written in the file).
    #[serde(default)]
    pub token_env: Option<String>,
    /// Tool names get `PREFIX__` in front (default: the server's name;
    /// `""` keeps the server's names).
    #[serde(default)]
    pub prefix: Option<String>,
    /// Only these tools (by the server's name), when not empty.
    #[serde(default)]
    pub include: Vec<String>,
    /// Never these tools.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Whether the server's annotations decide effects (default true).
    #[serde(default)]
    pub trust_annotations: Option<bool>,
    /// A call's deadline in milliseconds (default 60000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Start-up and listing deadline in milliseconds (default 30000).
    #[serde(default)]
    pub start_timeout_ms: Option<u64>,
    /// At most this many tools (default 512).
    #[serde(default)]
    pub max_tools: Option<usize>,
    /// At most this many bytes of one result kept (default 1 MiB).
    #[serde(default)]
    pub max_result_bytes: Option<usize>,
    /// Per tool (the server's name): `effect` and `timeout_ms`.
    #[serde(default)]
    pub tools: BTreeMap<String, McpToolSection>,
}

/// `[mcp.NAME.tools.TOOL]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpToolSection {
    /// `read`, `idempotent_write`, `write` or `unknown`: wins over the
    /// server's annotations.
    #[serde(default)]
    pub effect: Option<EffectOverride>,
    /// The tool's own deadline in milliseconds.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl McpSection {
    /// Checks the section at `at` (`["mcp", NAME]` or
    /// `["tenants", T, "mcp", NAME]`).
    pub(super) fn validate<C>(
        &self,
        file: &ConfigFile<C>,
        at: &[Seg],
        name: &str,
    ) -> Result<(), ConfigError> {
        let field = |f: &str| {
            let mut path = at.to_vec();
            path.push(key(f));
            path
        };
        if !valid_name(name) {
            return Err(file.error(
                at,
                "an MCP server's name is 1 to 64 letters, digits, '_' or '-' (it prefixes its tools' names)",
            ));
        }
        if let Some(url) = &self.url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(file.error(&field("url"), "an http:// or https:// URL"));
            }
            let stdio = [
                ("command", self.command.is_some()),
                ("args", !self.args.is_empty()),
                ("env", !self.env.is_empty()),
                ("env_pass", !self.env_pass.is_empty()),
                ("cwd", self.cwd.is_some()),
            ];
            if let Some((f, _)) = stdio.iter().find(|(_, set)| *set) {
                return Err(file.error(
                    &field(f),
                    "a server with `url` is reached over HTTP: it has no command, args, env, env_pass or cwd",
                ));
            }
            for name in self.headers.keys() {
                if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
                    return Err(
                        file.error(&field("headers"), format!("{name:?} is not a header name"))
                    );
                }
            }
            if let Some(var) = &self.token_env
                && (var.is_empty() || var.contains('='))
            {
                return Err(file.error(
                    &field("token_env"),
                    format!("{var:?} is not a variable name"),
                ));
            }
        } else {
            for (f, set) in [
                ("headers", !self.headers.is_empty()),
                ("token_env", self.token_env.is_some()),
            ] {
                if set {
                    return Err(file.error(&field(f), "only a server with `url` (HTTP) has it"));
                }
            }
            match &self.command {
                None => {
                    return Err(file.error(
                        at,
                        "needs `command` (the program to start) or `url` (an HTTP endpoint)",
                    ));
                }
                Some(c) if c.trim().is_empty() => {
                    return Err(file.error(&field("command"), "must be nonempty"));
                }
                Some(_) => {}
            }
        }
        if let Some(prefix) = &self.prefix
            && !prefix.is_empty()
            && !valid_name(prefix)
        {
            return Err(file.error(
                &field("prefix"),
                "1 to 64 letters, digits, '_' or '-' (or \"\" for none)",
            ));
        }
        for var in &self.env_pass {
            if var.is_empty() || var.contains('=') {
                return Err(file.error(
                    &field("env_pass"),
                    format!("{var:?} is not a variable name"),
                ));
            }
        }
        let timeout = |ms: Option<u64>, path: Vec<Seg>| match ms {
            Some(ms) if !(1..=MAX_TIMEOUT_MS).contains(&ms) => Err(file.error(
                &path,
                format!("{ms} is outside 1..={MAX_TIMEOUT_MS} milliseconds"),
            )),
            _ => Ok(()),
        };
        timeout(self.timeout_ms, field("timeout_ms"))?;
        timeout(self.start_timeout_ms, field("start_timeout_ms"))?;
        if let Some(n) = self.max_tools
            && !(1..=MAX_TOOLS).contains(&n)
        {
            return Err(file.error(
                &field("max_tools"),
                format!("{n} is outside 1..={MAX_TOOLS}"),
            ));
        }
        if self.max_result_bytes == Some(0) {
            return Err(file.error(&field("max_result_bytes"), "must be positive"));
        }
        for (tool, section) in &self.tools {
            let mut path = field("tools");
            path.push(key(tool));
            path.push(key("timeout_ms"));
            timeout(section.timeout_ms, path)?;
        }
        Ok(())
    }

    /// The library's configuration of this server; `trust` false refuses
    /// the server's hints whatever the section says (a tenant's choice).
    pub fn to_server_config(
        &self,
        dir: &Path,
        name: &str,
        trust: bool,
    ) -> Result<ServerConfig, String> {
        let command = self.command.as_deref().unwrap_or_default();
        let program = if command.contains('/') {
            dir.join(command)
        } else {
            PathBuf::from(command)
        };
        let mut config = ServerConfig::stdio(name, program, self.args.clone());
        if let Some(url) = &self.url {
            config = ServerConfig::http(name, url.clone());
            if let Some(endpoint) = config.http.as_mut() {
                endpoint.headers = self.headers.clone();
                endpoint.token_env = self.token_env.clone();
            }
        }
        config.env = self.env.clone();
        for var in &self.env_pass {
            let value = std::env::var(var)
                .map_err(|_| format!("env_pass: the environment variable {var} is not set"))?;
            config.env.insert(var.clone(), value);
        }
        config.cwd = self.cwd.as_ref().map(|c| dir.join(c));
        config.prefix = self.prefix.clone();
        config.include = self.include.clone();
        config.exclude = self.exclude.clone();
        config.trust_annotations = trust && self.trust_annotations.unwrap_or(true);
        if let Some(ms) = self.timeout_ms {
            config.call_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = self.start_timeout_ms {
            config.start_timeout = Duration::from_millis(ms);
        }
        if let Some(n) = self.max_tools {
            config.max_tools = n;
        }
        if let Some(n) = self.max_result_bytes {
            config.max_result_bytes = n;
        }
        config.tools = self
            .tools
            .iter()
            .map(|(tool, s)| {
                (
                    tool.clone(),
                    ToolSettings {
                        effect: s.effect,
                        timeout: s.timeout_ms.map(Duration::from_millis),
                    },
                )
            })
            .collect();
        Ok(config)
    }
}

impl ConfigFile {
    /// The MCP servers of a run for `tenant`: the agent's `[mcp.*]` and
    /// the tenant's own `[tenants.T.mcp.*]` (which replaces an agent server
    /// of the same name). Each run starts its own processes: nothing is
    /// shared across runs or tenants.
    pub fn mcp_servers(&self, tenant: Option<&str>) -> Result<Vec<ServerConfig>, ConfigError> {
        let section = tenant.and_then(|t| self.config.tenants.get(t));
        let trust = section.is_none_or(|s| s.trust_mcp_annotations.unwrap_or(true));
        let mut servers: BTreeMap<&str, (Vec<Seg>, &McpSection)> = BTreeMap::new();
        for (name, s) in &self.config.mcp {
            servers.insert(name, (vec![key("mcp"), key(name)], s));
        }
        if let (Some(t), Some(section)) = (tenant, section) {
            for (name, s) in &section.mcp {
                servers.insert(
                    name,
                    (vec![key("tenants"), key(t), key("mcp"), key(name)], s),
                );
            }
        }
        let dir = self.resolve(Path::new(""));
        servers
            .into_iter()
            .map(|(name, (at, s))| {
                s.to_server_config(&dir, name, trust)
                    .map_err(|e| self.error(&at, e))
            })
            .collect()
    }

    /// Where the MCP server `name` of a run for `tenant` is configured.
    pub fn mcp_location(&self, tenant: Option<&str>, name: &str) -> Vec<Seg> {
        match tenant {
            Some(t)
                if self
                    .config
                    .tenants
                    .get(t)
                    .is_some_and(|s| s.mcp.contains_key(name)) =>
            {
                vec![key("tenants"), key(t), key("mcp"), key(name)]
            }
            _ => vec![key("mcp"), key(name)],
        }
    }
}
