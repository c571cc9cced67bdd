//! Verifiers named `oci://…`: fetched through the local cache (pulled,
//! verified and cached by digest when not there), then loaded by the host.
//!
//! Identity: a loaded verifier's digest (`verifierDigest`, the diagnostics'
//! checker identity) stays the SHA-256 of the component bytes — which is
//! the OCI layer digest. The manifest digest a tag resolved to is reported
//! beside it (`oci.manifestDigest`, the pinned `oci.resolved` reference),
//! and is what `@sha256:` pins and `allowed_digests` name.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use verdict::registry::{
    Fetched, OciRef, Options, Origin, Registry, RegistryError, RegistrySettings,
};
use verdict::{LoadError, LoadSource, LoadedVerifier, VerifierHost};

/// What `--cache-dir`/`--no-cache` and `--offline` chose for this process
/// (set once by [`crate::commands::HostArgs::host`]).
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    /// The cache root (pulled components go to `DIR/oci/`).
    pub cache_dir: Option<PathBuf>,
    /// Use only the cache.
    pub offline: bool,
}

static DEFAULTS: OnceLock<Defaults> = OnceLock::new();

/// The `oci` objects of the verifiers this process loaded from registries
/// (for `run --json`), each with its tenant and role.
static LOADED: Mutex<Vec<serde_json::Value>> = Mutex::new(Vec::new());

/// Records a configured verifier loaded from a registry.
pub fn record(tenant: &str, role: &str, loaded: &Loaded, reference: &OciRef) {
    let mut value = loaded.to_json(reference);
    value["tenant"] = tenant.into();
    value["role"] = role.into();
    LOADED.lock().unwrap_or_else(|p| p.into_inner()).push(value);
}

/// What [`record`] recorded, in load order.
pub fn recorded() -> Vec<serde_json::Value> {
    LOADED.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Records this process's cache and offline choice (the first call wins).
pub fn set_defaults(defaults: Defaults) {
    let _ = DEFAULTS.set(defaults);
}

/// The bound on one push or pull: `$VERDICT_REGISTRY_TIMEOUT_MS`, else 60 s
/// (a registry's `timeout_ms` overrides it).
fn timeout() -> Duration {
    std::env::var("VERDICT_REGISTRY_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| (1..=600_000).contains(ms))
        .map_or(
            verdict::registry::settings::OPERATION_TIMEOUT,
            Duration::from_millis,
        )
}

/// A registry client with this process's cache, `--offline` and the
/// configuration's `[registries]`.
pub fn registry(registries: &BTreeMap<String, RegistrySettings>) -> Registry {
    let defaults = DEFAULTS.get().cloned().unwrap_or_default();
    Registry::new(Options {
        registries: registries.clone(),
        cache_dir: defaults.cache_dir,
        offline: defaults.offline,
        timeout: timeout(),
        max_blob_bytes: verdict::LoadLimits::default().max_component_bytes,
        ..Options::default()
    })
}

/// The configuration's `[registries]`, each `ca_file` resolved against
/// the file's directory.
pub fn registries<C: crate::config::TenantsConfig>(
    file: &crate::config::ConfigFile<C>,
) -> BTreeMap<String, RegistrySettings> {
    resolve_registries(file, file.config.registries())
}

/// `given` (a configuration's `[registries]`), each `ca_file` resolved
/// against `file`'s directory.
pub fn resolve_registries<C>(
    file: &crate::config::ConfigFile<C>,
    given: &BTreeMap<String, RegistrySettings>,
) -> BTreeMap<String, RegistrySettings> {
    let mut registries = given.clone();
    for settings in registries.values_mut() {
        if let Some(path) = &settings.ca_file {
            settings.ca_file = Some(file.resolve(path));
        }
    }
    registries
}

/// A verifier loaded from a registry, and how.
pub struct Loaded {
    /// The verifier.
    pub verifier: LoadedVerifier,
    /// The fetch (reference, digests, origin).
    pub fetched: Fetched,
    /// How the host got its compiled code.
    pub source: LoadSource,
}

/// Why an `oci://` verifier did not load.
#[derive(Debug, thiserror::Error)]
pub enum OciLoadError {
    /// Fetching it failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The host refused the bytes.
    #[error("{reference} is rejected: {error}")]
    Rejected {
        /// The reference, pinned.
        reference: String,
        /// Why.
        error: LoadError,
    },
}

/// Fetches and loads `reference` (a non-empty `allowed` lists the only
/// manifest digests accepted).
pub fn load(
    host: &VerifierHost,
    registries: &BTreeMap<String, RegistrySettings>,
    reference: &OciRef,
    allowed: &[String],
) -> Result<Loaded, OciLoadError> {
    let fetched = registry(registries).fetch_blocking(reference, allowed)?;
    let (verifier, source) =
        host.load_bytes(&fetched.bytes)
            .map_err(|error| OciLoadError::Rejected {
                reference: fetched.reference.canonical(),
                error,
            })?;
    Ok(Loaded {
        verifier,
        fetched,
        source,
    })
}

impl Loaded {
    /// True when the component's code was compiled now.
    pub fn compiled(&self) -> bool {
        self.source == LoadSource::Compiled
    }

    /// One line: what the reference resolved to and what was pulled or
    /// compiled.
    pub fn describe(&self, reference: &OciRef) -> String {
        format!(
            "{reference} is {} (component sha256:{}; {}, {})",
            self.fetched.reference.canonical(),
            self.verifier.digest(),
            match self.fetched.origin {
                Origin::Registry => "pulled",
                Origin::Cache => "from the local cache, not pulled",
            },
            if self.compiled() {
                "compiled"
            } else {
                "compile cache hit, not compiled"
            }
        )
    }

    /// The `oci` object of `check --json`.
    pub fn to_json(&self, reference: &OciRef) -> serde_json::Value {
        serde_json::json!({
            "ref": reference.to_string(),
            "resolved": self.fetched.reference.canonical(),
            "manifestDigest": self.fetched.digest,
            "layerDigest": self.fetched.layer_digest,
            "pulled": self.fetched.origin == Origin::Registry,
            "compiled": self.compiled(),
        })
    }
}
