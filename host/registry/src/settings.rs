//! `[registries."HOST"]` and the bounds of every registry operation.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The largest component pulled or pushed: the CLI's bound on a `.wasm`
/// file (24 MiB).
pub const MAX_BLOB_BYTES: u64 = 24 * 1024 * 1024;
/// The largest manifest accepted (the distribution spec's 4 MiB).
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;
/// Default bound on connecting to a registry.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Default bound on one whole push or pull (manifest and blob).
pub const OPERATION_TIMEOUT: Duration = Duration::from_secs(60);

/// `[registries."HOST[:PORT]"]`: how to reach and log in to one registry.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistrySettings {
    /// The user name (with `password` or `password_env`).
    #[serde(default)]
    pub username: Option<String>,
    /// The password or token, written in the file (prefer `password_env`).
    #[serde(default)]
    pub password: Option<String>,
    /// The environment variable holding the password or token.
    #[serde(default)]
    pub password_env: Option<String>,
    /// `true`: plain HTTP (needed for a registry not on loopback without
    /// TLS); `false`: TLS even on loopback. Absent: plain HTTP on loopback
    /// (`localhost`, 127.0.0.0/8, `::1`), TLS elsewhere.
    #[serde(default)]
    pub insecure: Option<bool>,
    /// A PEM file of extra root certificates to trust for this registry
    /// (a private CA, a self-signed registry).
    #[serde(default)]
    pub ca_file: Option<PathBuf>,
    /// Bound on one whole push or pull, in milliseconds (default 60000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl std::fmt::Debug for RegistrySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistrySettings")
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("password_env", &self.password_env)
            .field("insecure", &self.insecure)
            .field("ca_file", &self.ca_file)
            .field("timeout_ms", &self.timeout_ms)
            .finish()
    }
}

impl RegistrySettings {
    /// Checks the section on its own; `Err` names the field and why.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.password.is_some() && self.password_env.is_some() {
            return Err(("password_env", "conflicts with password".to_owned()));
        }
        if self.username.is_none() && (self.password.is_some() || self.password_env.is_some()) {
            return Err(("username", "a password needs a username".to_owned()));
        }
        if self.username.is_some() && self.password.is_none() && self.password_env.is_none() {
            return Err(("username", "needs password_env (or password)".to_owned()));
        }
        if let Some(var) = &self.password_env
            && var.trim().is_empty()
        {
            return Err((
                "password_env",
                "must be a nonempty variable name".to_owned(),
            ));
        }
        if self.ca_file.is_some() && self.insecure == Some(true) {
            return Err((
                "ca_file",
                "conflicts with insecure = true (plain HTTP)".to_owned(),
            ));
        }
        if let Some(ms) = self.timeout_ms
            && !(1..=600_000).contains(&ms)
        {
            return Err(("timeout_ms", format!("{ms} is outside 1..=600000")));
        }
        Ok(())
    }
}

/// What a [`Registry`](crate::Registry) works with.
#[derive(Debug, Clone)]
pub struct Options {
    /// Per-registry settings, keyed by `HOST[:PORT]`.
    pub registries: BTreeMap<String, RegistrySettings>,
    /// The cache root: pulled components live in `DIR/oci/` by digest.
    /// `None` pulls every time and keeps nothing.
    pub cache_dir: Option<PathBuf>,
    /// Use only the cache; never contact a registry.
    pub offline: bool,
    /// Bound on connecting.
    pub connect_timeout: Duration,
    /// Bound on one whole operation (a registry's `timeout_ms` overrides it).
    pub timeout: Duration,
    /// The largest layer accepted.
    pub max_blob_bytes: u64,
    /// The Docker credentials file (`None`: `$DOCKER_CONFIG/config.json`,
    /// else `~/.docker/config.json`).
    pub docker_config: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            registries: BTreeMap::new(),
            cache_dir: None,
            offline: false,
            connect_timeout: CONNECT_TIMEOUT,
            timeout: OPERATION_TIMEOUT,
            max_blob_bytes: MAX_BLOB_BYTES,
            docker_config: None,
        }
    }
}

impl Options {
    /// The bound on one operation against `registry`.
    pub(crate) fn timeout_for(&self, registry: &str) -> Duration {
        self.registries
            .get(registry)
            .and_then(|s| s.timeout_ms)
            .map_or(self.timeout, Duration::from_millis)
    }
}
