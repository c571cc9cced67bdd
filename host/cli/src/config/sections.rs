//! The sections of the configuration file and their value rules.

use super::locate::Seg;
use super::{ConfigError, ConfigFile, VerifierSource};
use serde::Deserialize;
use std::path::PathBuf;
use verdict::Protocol;

fn key(k: &str) -> Seg {
    Seg::Key(k.to_owned())
}

/// Largest `agent.max_iterations` accepted.
pub const MAX_ITERATIONS: u32 = 1_000;

/// A connector's wire protocol (vendor names accepted as aliases).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProtocolName {
    /// OpenAI Chat Completions and compatible servers (llama.cpp, vLLM).
    #[serde(alias = "openai", alias = "openai-compatible")]
    OpenaiChat,
    /// OpenAI Responses.
    OpenaiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini.
    #[serde(alias = "google")]
    Gemini,
}

impl From<ProtocolName> for Protocol {
    fn from(name: ProtocolName) -> Self {
        match name {
            ProtocolName::OpenaiChat => Protocol::OpenAiChat,
            ProtocolName::OpenaiResponses => Protocol::OpenAiResponses,
            ProtocolName::Anthropic => Protocol::Anthropic,
            ProtocolName::Gemini => Protocol::Gemini,
        }
    }
}

/// `[connectors.NAME]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectorSection {
    /// Wire protocol (`openai-chat`, `openai-responses`, `anthropic`,
    /// `gemini`; `vendor` and the aliases `openai`, `google` work too).
    #[serde(alias = "vendor")]
    pub protocol: ProtocolName,
    /// API base URL (default: the vendor's).
    #[serde(default)]
    pub base_url: Option<String>,
    /// Environment variable holding the key (default: the vendor's).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Send no key (local servers).
    #[serde(default)]
    pub no_api_key: bool,
}

impl ConnectorSection {
    pub(super) fn validate(&self, file: &ConfigFile, name: &str) -> Result<(), ConfigError> {
        let at = |field: &str| [key("connectors"), key(name), key(field)];
        if let Some(url) = &self.base_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(file.error(&at("base_url"), "must start with http:// or https://"));
        }
        if let Some(var) = &self.api_key_env {
            if var.trim().is_empty() {
                return Err(file.error(&at("api_key_env"), "must be a nonempty variable name"));
            }
            if self.no_api_key {
                return Err(file.error(&at("api_key_env"), "conflicts with no_api_key = true"));
            }
        }
        Ok(())
    }
}

/// `[agent]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSection {
    /// The connector's name.
    pub connector: String,
    /// The provider's model id.
    pub model: String,
    /// System instructions.
    #[serde(default)]
    pub instructions: Option<String>,
    /// Model turns per run (1..=1000; default the agent's).
    #[serde(default)]
    pub max_iterations: Option<u32>,
    /// Upper bound on generated tokens per call.
    #[serde(default)]
    pub max_tokens: Option<u32>,
}

impl AgentSection {
    pub(super) fn validate(&self, file: &ConfigFile) -> Result<(), ConfigError> {
        if self.model.trim().is_empty() {
            return Err(file.error(&[key("agent"), key("model")], "must be nonempty"));
        }
        if let Some(n) = self.max_iterations
            && !(1..=MAX_ITERATIONS).contains(&n)
        {
            return Err(file.error(
                &[key("agent"), key("max_iterations")],
                format!("{n} is outside 1..={MAX_ITERATIONS}"),
            ));
        }
        if self.max_tokens == Some(0) {
            return Err(file.error(&[key("agent"), key("max_tokens")], "must be positive"));
        }
        Ok(())
    }
}

/// A built-in tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolName {
    /// `read_artifact {id}` (effect: read).
    ReadArtifact,
    /// `write_artifact {id, content}` (effect: write).
    WriteArtifact,
    /// `list_artifacts {}` (effect: read).
    ListArtifacts,
}

impl ToolName {
    /// Every built-in tool.
    pub const ALL: [ToolName; 3] = [
        ToolName::ReadArtifact,
        ToolName::WriteArtifact,
        ToolName::ListArtifacts,
    ];
}

fn all_tools() -> Vec<ToolName> {
    ToolName::ALL.to_vec()
}

/// `[tools]`: the built-in workspace tools.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsSection {
    /// The workspace directory the tools read and write (relative paths
    /// resolve against the configuration file's directory); see
    /// [`crate::roots`] for what it may be.
    pub workspace: PathBuf,
    /// Which built-in tools to offer (default: all three).
    #[serde(default = "all_tools")]
    pub builtin: Vec<ToolName>,
}

impl ToolsSection {
    pub(super) fn validate(&self, file: &ConfigFile) -> Result<(), ConfigError> {
        let dir = file.resolve(&self.workspace);
        let writes = self.builtin.contains(&ToolName::WriteArtifact);
        crate::roots::check(&dir, writes)
            .map_err(|e| file.error(&[key("tools"), key("workspace")], e.to_string()))?;
        Ok(())
    }
}

/// `[tenants.NAME.limits]` (and the same-named `check` flags, e.g.
/// `--timeout-ms`): sandbox limits of a tenant's verifiers. Each is
/// optional (the sandbox default applies) and has one range, checked by
/// [`LimitsSection::validate`] for the file and the flags alike.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsSection {
    /// Fuel budget per check (1..).
    #[serde(default)]
    pub fuel: Option<u64>,
    /// Wall-clock deadline per check in milliseconds (1..=60000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Memory cap in MiB (1..=4096).
    #[serde(default)]
    pub memory_mib: Option<u64>,
    /// Core module instances a verifier may create (1..=1024).
    #[serde(default)]
    pub instances: Option<u64>,
    /// Table elements cap (1..=100000, the host's largest table).
    #[serde(default)]
    pub table_elements: Option<u64>,
    /// Artifact operations per check (1..=100000).
    #[serde(default)]
    pub artifact_reads: Option<u64>,
    /// Largest artifact one read returns, in bytes (1..=67108864).
    #[serde(default)]
    pub artifact_bytes: Option<u64>,
    /// Most ids one `list` returns (1..=100000).
    #[serde(default)]
    pub list_max_entries: Option<u64>,
}

/// A limit outside its range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value} is outside 1..={max}")]
pub struct LimitError {
    /// The field (`fuel`, `timeout_ms`, `memory_mib`, `instances`, ...).
    pub field: &'static str,
    /// The value given.
    pub value: u64,
    /// The largest value accepted.
    pub max: u64,
}

impl LimitsSection {
    /// Checks every limit given against its range (the one rule for the
    /// configuration file and `verdict check`): the sandbox's
    /// [`Limits::validate`](verdict::Limits::validate), said in this
    /// section's names and units.
    pub fn validate(&self) -> Result<(), LimitError> {
        let Err(error) = self.to_limits().validate() else {
            return Ok(());
        };
        const MIB: u64 = 1024 * 1024;
        let (field, given, max) = match error.field {
            "memory_bytes" => ("memory_mib", self.memory_mib, error.max / MIB),
            "artifact_reads_per_call" => ("artifact_reads", self.artifact_reads, error.max),
            "artifact_bytes_per_read" => ("artifact_bytes", self.artifact_bytes, error.max),
            "fuel" => ("fuel", self.fuel, error.max),
            "timeout_ms" => ("timeout_ms", self.timeout_ms, error.max),
            "instances" => ("instances", self.instances, error.max),
            "table_elements" => ("table_elements", self.table_elements, error.max),
            "list_max_entries" => ("list_max_entries", self.list_max_entries, error.max),
            other => (other, None, error.max),
        };
        // The defaults are within range: the limit out of it was given (a
        // value too large for the sandbox's field saturated; say the given).
        Err(LimitError {
            field,
            value: given.unwrap_or(error.value),
            max,
        })
    }

    /// The sandbox limits: the defaults, overridden by what is given.
    pub fn to_limits(self) -> verdict::Limits {
        let mut limits = verdict::Limits::default();
        if let Some(fuel) = self.fuel {
            limits.fuel = fuel;
        }
        if let Some(ms) = self.timeout_ms {
            limits.timeout_ms = ms;
        }
        if let Some(mib) = self.memory_mib {
            limits.memory_bytes = mib.saturating_mul(1024 * 1024);
        }
        // Each is within u32 once validated; an unvalidated one saturates.
        let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        if let Some(n) = self.instances {
            limits.instances = small(n);
        }
        if let Some(n) = self.table_elements {
            limits.table_elements = small(n);
        }
        if let Some(n) = self.artifact_reads {
            limits.artifact_reads_per_call = small(n);
        }
        if let Some(n) = self.artifact_bytes {
            limits.artifact_bytes_per_read = n;
        }
        if let Some(n) = self.list_max_entries {
            limits.list_max_entries = small(n);
        }
        limits
    }
}

/// A tenant's verifier: a `.wasm` component, `builtin:NAME` or `oci://…`,
/// or one served by `verdict serve` (`{ url = "...", token_env = "..." }`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum VerifierRef {
    /// A `.wasm` component, `builtin:NAME` or `oci://…`.
    Local(String),
    /// A served verifier.
    Remote(RemoteSection),
}

/// `completion = { url = "...", token_env = "..." }`: the tenant's
/// verifiers on a `verdict serve` (`url` is the tenant's,
/// `https://host:8700/v1/tenants/NAME`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteSection {
    /// The tenant's URL on the service.
    pub url: String,
    /// The environment variable holding the tenant's bearer token.
    #[serde(default)]
    pub token_env: Option<String>,
}

impl VerifierRef {
    /// The local spec, if it is one.
    pub fn local(&self) -> Option<&str> {
        match self {
            Self::Local(spec) => Some(spec),
            Self::Remote(_) => None,
        }
    }
}

/// `[tenants.NAME]`: the tenant's verifiers and artifacts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantSection {
    /// The directory the tenant's verifiers may read.
    pub artifact_root: PathBuf,
    /// The completion checker: a `.wasm` component, `builtin:NAME`,
    /// `oci://HOST[:PORT]/REPO[:TAG|@sha256:DIGEST]`, or a served one
    /// (`{ url = "...", token_env = "..." }`).
    #[serde(default)]
    pub completion: Option<VerifierRef>,
    /// The progress checker: a `.wasm` component, `builtin:NAME`,
    /// `oci://…`, or a served one.
    #[serde(default)]
    pub progress: Option<VerifierRef>,
    /// The only manifest digests (`sha256:…`) an `oci://` verifier of this
    /// tenant may resolve to (empty: any).
    #[serde(default)]
    pub allowed_digests: Vec<String>,
    /// Instances of each verifier kept instantiated ahead of the checks
    /// (0..=64; default 1).
    #[serde(default)]
    pub ready_instances: Option<usize>,
    /// Sandbox limits.
    #[serde(default)]
    pub limits: LimitsSection,
    /// `verdict serve`: the hash of the tenant's bearer token (`verdict
    /// serve hash-token TOKEN`); other commands ignore it.
    #[serde(default)]
    pub token_hash: Option<String>,
    /// `verdict serve`: record every check of the tenant into this
    /// directory (`GET /v1/tenants/NAME/checks/ID` serves them); other
    /// commands record with `--record`.
    #[serde(default)]
    pub record_dir: Option<PathBuf>,
    /// `verdict serve`: MiB the tenant's records waiting for the disk may
    /// hold (default 256); a check that finds no room is refused (503
    /// `record_backlog`).
    #[serde(default)]
    pub record_queue_mib: Option<u64>,
    /// `verdict serve`: the tenant's checks at once (default 64).
    #[serde(default)]
    pub max_concurrent_checks: Option<usize>,
    /// The tenant's own MCP servers (`[tenants.T.mcp.NAME]`), started for
    /// its runs only.
    #[serde(default)]
    pub mcp: std::collections::BTreeMap<String, super::McpSection>,
    /// `false`: MCP servers' annotations decide no effect in this tenant's
    /// runs (every tool unknown unless an override names its effect).
    #[serde(default)]
    pub trust_mcp_annotations: Option<bool>,
}

impl TenantSection {
    pub(super) fn validate<C>(
        &self,
        file: &ConfigFile<C>,
        name: &str,
        has_policy: bool,
    ) -> Result<(), ConfigError> {
        let at = |field: &str| [key("tenants"), key(name), key(field)];
        if let Some(n) = self.ready_instances
            && n > verdict::MAX_READY_INSTANCES
        {
            return Err(file.error(
                &at("ready_instances"),
                format!(
                    "ready_instances is {n}; it must be at most {}",
                    verdict::MAX_READY_INSTANCES
                ),
            ));
        }
        let root = file.resolve(&self.artifact_root);
        crate::roots::check(&root, false)
            .map_err(|e| file.error(&at("artifact_root"), e.to_string()))?;
        for (field, spec) in [
            ("completion", &self.completion),
            ("progress", &self.progress),
        ] {
            let Some(spec) = spec else { continue };
            if !has_policy {
                return Err(file.error(
                    &at(field),
                    "a verifier needs a [loop_policy] section (absent means the policy is off)",
                ));
            }
            let spec = match spec {
                VerifierRef::Local(spec) => spec,
                VerifierRef::Remote(remote) => {
                    if !(remote.url.starts_with("http://") || remote.url.starts_with("https://")) {
                        return Err(file.error(
                            &[key("tenants"), key(name), key(field), key("url")],
                            "must start with http:// or https://",
                        ));
                    }
                    if remote
                        .token_env
                        .as_ref()
                        .is_some_and(|v| v.trim().is_empty())
                    {
                        return Err(file.error(
                            &[key("tenants"), key(name), key(field), key("token_env")],
                            "must be a nonempty variable name",
                        ));
                    }
                    continue;
                }
            };
            match file.verifier_source(spec) {
                VerifierSource::Builtin(builtin) => {
                    if crate::builtin_verifiers::get(&builtin).is_none() {
                        return Err(file.error(
                            &at(field),
                            format!(
                                "no built-in verifier `{builtin}` (available: {})",
                                crate::builtin_verifiers::names().join(", ")
                            ),
                        ));
                    }
                }
                VerifierSource::File(path) => {
                    if !path.is_file() {
                        return Err(
                            file.error(&at(field), format!("{} does not exist", path.display()))
                        );
                    }
                }
                VerifierSource::Oci(text) => {
                    let reference = verdict::registry::OciRef::parse(&text)
                        .map_err(|e| file.error(&at(field), e.to_string()))?;
                    if let Some(pin) = &reference.digest
                        && !self.allowed_digests.is_empty()
                        && !self.allowed_digests.contains(pin)
                    {
                        return Err(file.error(
                            &at(field),
                            format!("{pin} is not in this tenant's allowed_digests"),
                        ));
                    }
                }
            }
        }
        for (i, digest) in self.allowed_digests.iter().enumerate() {
            if !verdict::registry::check_digest(digest) {
                return Err(file.error(
                    &[
                        key("tenants"),
                        key(name),
                        key("allowed_digests"),
                        Seg::Index(i),
                    ],
                    format!("{digest:?} is not a digest (sha256: and 64 lowercase hex digits)"),
                ));
            }
        }
        self.limits.validate().map_err(|e| {
            file.error(
                &[key("tenants"), key(name), key("limits"), key(e.field)],
                e.to_string(),
            )
        })
    }
}
