//! The configuration file: connectors, the agent, built-in tools, the loop
//! policy and per-tenant verifiers (TOML, or JSON when the file ends in
//! `.json`).
//!
//! [`load`] parses, rejects unknown keys and invalid values, validates the
//! loop policy with [`LoopPolicy::validate`], and checks that every
//! verifier and directory exists — all before anything runs. Every error is
//! one [`ConfigError`] naming the file, the line and the field; it is also a
//! `miette` diagnostic spanning the offending text.

mod error;
mod hook;
pub mod locate;
mod mcp;
mod restate;
mod sections;
mod serve;

pub use error::ConfigError;
pub use hook::defaults as hook_defaults;
pub use hook::{ClaudeToolSection, HookConfig, OnError, load_hook};
pub use mcp::McpSection;
pub use restate::{DEFAULT_INGRESS, RestateSettings, load_restate};
pub use sections::{
    AgentSection, ConnectorSection, LimitsSection, RemoteSection, TenantSection, ToolName,
    ToolsSection, VerifierRef,
};
pub use serve::load_serve;

use locate::Seg;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use verdict::LoopPolicy;

/// The parsed configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Model connectors by name.
    #[serde(default)]
    pub connectors: BTreeMap<String, ConnectorSection>,
    /// The agent.
    pub agent: AgentSection,
    /// Built-in workspace tools (none when absent).
    #[serde(default)]
    pub tools: Option<ToolsSection>,
    /// The loop policy; absent means off (no default policy).
    #[serde(default)]
    pub loop_policy: Option<LoopPolicy>,
    /// MCP servers whose tools the agent gets, by name.
    #[serde(default)]
    pub mcp: BTreeMap<String, McpSection>,
    /// Verifiers per tenant.
    #[serde(default)]
    pub tenants: BTreeMap<String, TenantSection>,
    /// OCI registries by `HOST[:PORT]`: credentials, plain HTTP, bounds.
    #[serde(default)]
    pub registries: BTreeMap<String, verdict::registry::RegistrySettings>,
    /// `verdict serve`'s listener and limits (`ServerSection`, read by
    /// [`load_serve`]; other commands ignore it).
    #[serde(default, rename = "server")]
    _server: Option<serde::de::IgnoredAny>,
    /// Where Restate and the worker are (`RestateSection`, read by
    /// [`load_restate`]; other commands ignore it).
    #[serde(default, rename = "restate")]
    _restate: Option<serde::de::IgnoredAny>,
}

/// What loading a tenant's verifiers reads from a configuration: `run`'s
/// whole file, or only the sections `hook` reads.
pub trait TenantsConfig {
    /// Verifiers per tenant.
    fn tenants(&self) -> &BTreeMap<String, TenantSection>;
    /// OCI registries by `HOST[:PORT]`.
    fn registries(&self) -> &BTreeMap<String, verdict::registry::RegistrySettings>;
}

impl TenantsConfig for Config {
    fn tenants(&self) -> &BTreeMap<String, TenantSection> {
        &self.tenants
    }

    fn registries(&self) -> &BTreeMap<String, verdict::registry::RegistrySettings> {
        &self.registries
    }
}

/// Where a verifier comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifierSource {
    /// A sample verifier embedded in the binary (`builtin:NAME`).
    Builtin(String),
    /// A `.wasm` file (resolved against the configuration's directory).
    File(PathBuf),
    /// A component in an OCI registry (`oci://…`, parsed when loaded).
    Oci(String),
}

/// A loaded configuration file: the text is kept so later errors (a corrupt
/// `.wasm`) can still name their line.
#[derive(Debug, Clone)]
pub struct ConfigFile<C = Config> {
    /// The file.
    pub path: PathBuf,
    text: Arc<str>,
    json: bool,
    /// The configuration.
    pub config: C,
}

impl<C> ConfigFile<C> {
    /// An error about the field at `path`.
    pub fn error(&self, path: &[Seg], message: impl Into<String>) -> ConfigError {
        let span = if self.json {
            locate::json_span(&self.text, path)
        } else {
            locate::toml_span(&self.text, path)
        };
        ConfigError::at(
            &self.path,
            &self.text,
            span,
            locate::render(path),
            message.into(),
        )
    }

    /// Resolves a path written in the file against the file's directory.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            return path.to_owned();
        }
        self.path
            .parent()
            .map(|dir| dir.join(path))
            .unwrap_or_else(|| path.to_owned())
    }

    /// The source of a verifier spec (`builtin:NAME`, `oci://…` or a path).
    pub fn verifier_source(&self, spec: &str) -> VerifierSource {
        if verdict::registry::is_oci(spec) {
            return VerifierSource::Oci(spec.to_owned());
        }
        match spec.strip_prefix("builtin:") {
            Some(name) => VerifierSource::Builtin(name.to_owned()),
            None => VerifierSource::File(self.resolve(Path::new(spec))),
        }
    }
}

/// Reads, parses and validates the configuration at `path`.
pub fn load(path: &Path) -> Result<ConfigFile, ConfigError> {
    let file = parse(path)?;
    validate(&file)?;
    Ok(file)
}

/// Reads and parses the file at `path` as a `C` (not validated).
fn parse<C: serde::de::DeserializeOwned>(path: &Path) -> Result<ConfigFile<C>, ConfigError> {
    let text: Arc<str> = crate::files::read_text(path, crate::files::Bound::CONFIG)
        .map_err(|e| ConfigError::whole_file(path, format!("cannot read the file: {}", e.why)))?
        .into();
    let json = path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
    let config = if json {
        parse_json(path, &text)?
    } else {
        parse_toml(path, &text)?
    };
    Ok(ConfigFile {
        path: path.to_owned(),
        text,
        json,
        config,
    })
}

fn serde_field(path: &serde_path_to_error::Path, message: &str) -> String {
    let mut field = path.to_string();
    if field == "." {
        field.clear();
    }
    // Unknown keys: name the key itself.
    if let Some(rest) = message.strip_prefix("unknown field `")
        && let Some((key, _)) = rest.split_once('`')
    {
        if !field.is_empty() && !field.ends_with(key) {
            field.push('.');
            field.push_str(key);
        } else if field.is_empty() {
            field = key.to_owned();
        }
    }
    field
}

fn parse_toml<C: serde::de::DeserializeOwned>(
    path: &Path,
    text: &Arc<str>,
) -> Result<C, ConfigError> {
    let syntax = |e: toml::de::Error| {
        ConfigError::at(path, text, e.span(), String::new(), e.message().to_owned())
    };
    let deserializer = toml::Deserializer::parse(text).map_err(syntax)?;
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let field = serde_field(e.path(), e.inner().message());
        let inner = e.into_inner();
        ConfigError::at(path, text, inner.span(), field, inner.message().to_owned())
    })
}

fn parse_json<C: serde::de::DeserializeOwned>(
    path: &Path,
    text: &Arc<str>,
) -> Result<C, ConfigError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let inner_text = e.inner().to_string();
        // serde_json appends " at line L column C"; keep the message only.
        let message = inner_text
            .rsplit_once(" at line ")
            .map_or(inner_text.as_str(), |(m, _)| m)
            .to_owned();
        let at = locate::offset(text, e.inner().line(), e.inner().column());
        let field = serde_field(e.path(), &message);
        ConfigError::at(path, text, Some(at..at), field, message)
    })
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_owned())
}

/// Every rule that needs more than the types: references, bounds, the
/// policy, files and directories.
fn validate(file: &ConfigFile) -> Result<(), ConfigError> {
    let config = &file.config;
    let empty_names = [
        (
            "connectors",
            "connector",
            config.connectors.contains_key(""),
        ),
        ("tenants", "tenant", config.tenants.contains_key("")),
    ];
    for (section, what, found) in empty_names {
        if found {
            return Err(file.error(
                &[key(section), key("")],
                format!("a {what} name must not be empty"),
            ));
        }
    }
    for (name, connector) in &config.connectors {
        connector.validate(file, name)?;
    }
    if !config.connectors.contains_key(&config.agent.connector) {
        let known: Vec<&str> = config.connectors.keys().map(String::as_str).collect();
        return Err(file.error(
            &[key("agent"), key("connector")],
            format!(
                "no connector named {:?} (defined: {})",
                config.agent.connector,
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ),
        ));
    }
    config.agent.validate(file)?;
    if let Some(tools) = &config.tools {
        tools.validate(file)?;
    }
    if let Some(policy) = &config.loop_policy
        && let Err(error) = policy.validate()
    {
        let mut violations = error.0.iter();
        if let Some(first) = violations.next() {
            let mut path = vec![key("loop_policy")];
            path.extend(violation_path(&first.field));
            let rest = error.0.len() - 1;
            let mut message = first.message.clone();
            if rest > 0 {
                message.push_str(&format!(" (and {rest} more violation(s))"));
            }
            return Err(file.error(&path, message));
        }
    }
    for (host, registry) in &config.registries {
        if let Err((field, message)) = registry.validate() {
            return Err(file.error(&[key("registries"), key(host), key(field)], message));
        }
    }
    for (name, server) in &config.mcp {
        server.validate(file, &[key("mcp"), key(name)], name)?;
    }
    for (name, tenant) in &config.tenants {
        tenant.validate(file, name, config.loop_policy.is_some())?;
        for (server_name, server) in &tenant.mcp {
            let at = [key("tenants"), key(name), key("mcp"), key(server_name)];
            server.validate(file, &at, server_name)?;
        }
    }
    Ok(())
}

/// `read_allowlist[3]` → `read_allowlist`, `[3]`.
fn violation_path(field: &str) -> Vec<Seg> {
    match field.split_once('[') {
        Some((name, index)) => {
            let mut path = vec![key(name)];
            if let Ok(i) = index.trim_end_matches(']').parse() {
                path.push(Seg::Index(i));
            }
            path
        }
        None => vec![key(field)],
    }
}

#[cfg(test)]
mod tests;
