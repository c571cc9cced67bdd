//! The configuration `verdict hook claude-code` reads: the tenants and
//! their verifiers, the loop policy's recovery bound and `[claude_code]`
//! of the same file `run` reads (its other sections are ignored, and none
//! is required: a Claude Code user has no `[agent]`).

use super::locate::Seg;
use super::{ConfigError, ConfigFile, TenantSection, TenantsConfig};
use serde::Deserialize;
use serde::de::IgnoredAny;
use std::collections::BTreeMap;
use std::path::Path;
use verdict::{Effect, LoopPolicy};

/// The defaults of `[claude_code]`.
pub mod defaults {
    /// Transcript entries read at most, from the end.
    pub const MAX_ENTRIES: usize = 2_000;
    /// Transcript bytes read at most, from the end (8 MiB).
    pub const MAX_TRANSCRIPT_BYTES: u64 = 8 * 1024 * 1024;
}
/// The largest `max_transcript_bytes` allowed (256 MiB).
pub const MAX_TRANSCRIPT_BYTES: u64 = 256 * 1024 * 1024;

/// What the hook answers when it cannot check (a verifier error or
/// timeout, an unreadable transcript).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    /// Block the stop with the reason (fail closed; the default). Bounded
    /// like every block by the recovery attempts.
    #[default]
    Block,
    /// Allow the stop and say why on stderr (fail open).
    Allow,
}

/// `[claude_code.tools.NAME]`: how one of Claude Code's tools appears in
/// the packet.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaudeToolSection {
    /// Its effect (`read`, `write`, `unknown`), over the default map.
    #[serde(default)]
    pub effect: Option<Effect>,
    /// The name the verifier sees (e.g. `read_artifact` for `Read`, so a
    /// verifier written for verdict's loop judges Claude Code's reads).
    #[serde(default)]
    pub name: Option<String>,
}

/// `[claude_code]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaudeCodeSection {
    /// The tenant whose verifier judges (default: the only one).
    #[serde(default)]
    pub tenant: Option<String>,
    /// Transcript entries read at most, the last ones (default 2000).
    #[serde(default)]
    pub max_entries: Option<usize>,
    /// Transcript bytes read at most, from the end (default 8 MiB).
    #[serde(default)]
    pub max_transcript_bytes: Option<u64>,
    /// When the check cannot be made: `block` (default) or `allow`.
    #[serde(default)]
    pub on_error: OnError,
    /// Per tool (Claude Code's name): effect and the name in the packet.
    #[serde(default)]
    pub tools: BTreeMap<String, ClaudeToolSection>,
}

/// The sections the hook reads.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    /// The tenants.
    #[serde(default)]
    pub tenants: BTreeMap<String, TenantSection>,
    /// OCI registries by `HOST[:PORT]`, for `oci://` verifiers.
    #[serde(default)]
    pub registries: BTreeMap<String, verdict::registry::RegistrySettings>,
    /// Its `max_recovery_attempts` bounds the blocks per stop.
    #[serde(default)]
    pub loop_policy: Option<LoopPolicy>,
    /// The hook's own settings.
    #[serde(default)]
    pub claude_code: ClaudeCodeSection,
    #[serde(default, rename = "connectors")]
    _connectors: Option<IgnoredAny>,
    #[serde(default, rename = "agent")]
    _agent: Option<IgnoredAny>,
    #[serde(default, rename = "tools")]
    _tools: Option<IgnoredAny>,
    #[serde(default, rename = "mcp")]
    _mcp: Option<IgnoredAny>,
    #[serde(default, rename = "server")]
    _server: Option<IgnoredAny>,
    #[serde(default, rename = "restate")]
    _restate: Option<IgnoredAny>,
}

impl TenantsConfig for HookConfig {
    fn tenants(&self) -> &BTreeMap<String, TenantSection> {
        &self.tenants
    }

    fn registries(&self) -> &BTreeMap<String, verdict::registry::RegistrySettings> {
        &self.registries
    }
}

/// Reads the hook's sections of the file at `path` and checks them.
pub fn load_hook(path: &Path) -> Result<ConfigFile<HookConfig>, ConfigError> {
    let file: ConfigFile<HookConfig> = super::parse(path)?;
    let at = |k: &str| [Seg::Key("claude_code".into()), Seg::Key(k.into())];
    let section = &file.config.claude_code;
    if section.max_entries == Some(0) {
        return Err(file.error(&at("max_entries"), "must be positive"));
    }
    match section.max_transcript_bytes {
        Some(0) => return Err(file.error(&at("max_transcript_bytes"), "must be positive")),
        Some(n) if n > MAX_TRANSCRIPT_BYTES => {
            return Err(file.error(
                &at("max_transcript_bytes"),
                format!("must be at most {MAX_TRANSCRIPT_BYTES}"),
            ));
        }
        _ => {}
    }
    if let Some(policy) = &file.config.loop_policy {
        policy
            .validate()
            .map_err(|e| file.error(&[Seg::Key("loop_policy".into())], e.to_string()))?;
    }
    if file.config.tenants.is_empty() {
        return Err(file.error(
            &[Seg::Key("tenants".into())],
            "the hook needs a tenant with a completion verifier",
        ));
    }
    Ok(file)
}
