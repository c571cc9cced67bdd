//! The configuration `verdict serve` reads: `[server]` and `[tenants.*]`
//! of the same file `run` reads (its other sections are ignored), turned
//! into the service's settings.

use super::locate::Seg;
use super::{ConfigError, ConfigFile, TenantSection, VerifierRef, VerifierSource};
use serde::Deserialize;
use serde::de::IgnoredAny;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use verdict_server::{ServerSettings, Settings, TenantSettings, TlsFiles, VerifierSpec};

fn key(k: &str) -> Seg {
    Seg::Key(k.to_owned())
}

/// `[server]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// Where to listen (default 127.0.0.1:8700).
    #[serde(default)]
    pub listen: Option<String>,
    /// The hash of the admin token (`verdict serve hash-token TOKEN`).
    #[serde(default)]
    pub admin_token_hash: Option<String>,
    /// Checks at once over all tenants (default 64).
    #[serde(default)]
    pub max_concurrent_checks: Option<usize>,
    /// Open connections at once (default 10000).
    #[serde(default)]
    pub max_connections: Option<usize>,
    /// A request's whole time in milliseconds (default 70000).
    #[serde(default)]
    pub request_timeout_ms: Option<u64>,
    /// Time to send the request headers in milliseconds (default 5000).
    #[serde(default)]
    pub header_read_timeout_ms: Option<u64>,
    /// How long SIGTERM waits for accepted requests, in ms (default 30000).
    #[serde(default)]
    pub drain_timeout_ms: Option<u64>,
    /// After SIGTERM, how long new connections are still accepted (and
    /// answered 503 with `Connection: close`), in ms (default 5000).
    #[serde(default)]
    pub drain_grace_ms: Option<u64>,
    /// Threads serving connections (default: half the cores, at least 1).
    #[serde(default)]
    pub http_threads: Option<usize>,
    /// Threads running checks, 0 for none: each check on its connection's
    /// thread (default: half the cores, at least 1).
    #[serde(default)]
    pub check_threads: Option<usize>,
    /// Bytes of each pooled instance's memory kept resident between checks
    /// (default 4194304; at most `pool_max_memory_bytes`, 256 MiB).
    #[serde(default)]
    pub keep_resident_bytes: Option<u64>,
    /// HTTPS: the certificate chain (PEM).
    #[serde(default)]
    pub tls_cert: Option<PathBuf>,
    /// HTTPS: the private key (PEM).
    #[serde(default)]
    pub tls_key: Option<PathBuf>,
}

/// The sections `serve` reads; the loop's are accepted and ignored.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeConfig {
    /// The listener and limits.
    #[serde(default)]
    pub server: ServerSection,
    /// The tenants.
    #[serde(default)]
    pub tenants: BTreeMap<String, TenantSection>,
    /// OCI registries by `HOST[:PORT]`, for `oci://` verifiers.
    #[serde(default)]
    pub registries: BTreeMap<String, verdict::registry::RegistrySettings>,
    #[serde(default, rename = "connectors")]
    _connectors: Option<IgnoredAny>,
    #[serde(default, rename = "agent")]
    _agent: Option<IgnoredAny>,
    #[serde(default, rename = "tools")]
    _tools: Option<IgnoredAny>,
    #[serde(default, rename = "loop_policy")]
    _loop_policy: Option<IgnoredAny>,
    #[serde(default, rename = "restate")]
    _restate: Option<IgnoredAny>,
}

/// Default checks at once per tenant.
const TENANT_CONCURRENCY: usize = 64;

fn is_hash(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Reads `path` and makes the service's settings (`listen` overrides
/// `[server] listen`).
pub fn load_serve(path: &Path, listen: Option<SocketAddr>) -> Result<Settings, ConfigError> {
    let file: ConfigFile<ServeConfig> = super::parse(path)?;
    settings(&file, listen)
}

fn positive<T: Copy + Default + PartialEq>(
    file: &ConfigFile<ServeConfig>,
    value: Option<T>,
    field: &str,
) -> Result<Option<T>, ConfigError> {
    if value == Some(T::default()) {
        return Err(file.error(&[key("server"), key(field)], "must be positive"));
    }
    Ok(value)
}

/// Most threads of either kind: more only cost memory and wake-ups.
const MAX_THREADS: usize = 256;

fn at_most(file: &ConfigFile<ServeConfig>, n: usize, field: &str) -> Result<usize, ConfigError> {
    if n > MAX_THREADS {
        return Err(file.error(
            &[key("server"), key(field)],
            format!("must be at most {MAX_THREADS}"),
        ));
    }
    Ok(n)
}

fn settings(
    file: &ConfigFile<ServeConfig>,
    listen: Option<SocketAddr>,
) -> Result<Settings, ConfigError> {
    let s = &file.config.server;
    let at = |field: &str| [key("server"), key(field)];
    let mut server = ServerSettings::default();
    if let Some(addr) = listen {
        server.listen = addr;
    } else if let Some(text) = &s.listen {
        server.listen = text
            .parse()
            .map_err(|_| file.error(&at("listen"), "must be an address like 127.0.0.1:8700"))?;
    }
    if let Some(hash) = &s.admin_token_hash {
        if !is_hash(hash) {
            return Err(file.error(
                &at("admin_token_hash"),
                "must be 64 hex digits (`verdict serve hash-token TOKEN`)",
            ));
        }
        server.admin_token_hash = Some(hash.clone());
    }
    if let Some(n) = positive(file, s.max_concurrent_checks, "max_concurrent_checks")? {
        server.max_concurrent_checks = n;
    }
    if let Some(n) = positive(file, s.max_connections, "max_connections")? {
        server.max_connections = n;
    }
    if let Some(n) = positive(file, s.http_threads, "http_threads")? {
        server.http_threads = at_most(file, n, "http_threads")?;
    }
    if let Some(n) = s.check_threads {
        server.check_threads = at_most(file, n, "check_threads")?;
    }
    if let Some(n) = s.keep_resident_bytes {
        let most = verdict::HostConfig::default().pool_max_memory_bytes;
        if n > most {
            return Err(file.error(
                &at("keep_resident_bytes"),
                format!("must be at most {most}"),
            ));
        }
        server.keep_resident_bytes = n;
    }
    let ms = Duration::from_millis;
    if let Some(n) = positive(file, s.request_timeout_ms, "request_timeout_ms")? {
        server.request_timeout = ms(n);
    }
    if let Some(n) = positive(file, s.header_read_timeout_ms, "header_read_timeout_ms")? {
        server.header_read_timeout = ms(n);
    }
    if let Some(n) = s.drain_timeout_ms {
        server.drain_timeout = ms(n);
    }
    if let Some(n) = s.drain_grace_ms {
        server.drain_grace = ms(n);
    }
    server.tls = match (&s.tls_cert, &s.tls_key) {
        (None, None) => None,
        (Some(cert), Some(key_file)) => {
            let (cert, key_file) = (file.resolve(cert), file.resolve(key_file));
            for (field, path) in [("tls_cert", &cert), ("tls_key", &key_file)] {
                if !path.is_file() {
                    return Err(
                        file.error(&at(field), format!("{} does not exist", path.display()))
                    );
                }
            }
            Some(TlsFiles {
                cert,
                key: key_file,
            })
        }
        (Some(_), None) => return Err(file.error(&at("tls_cert"), "needs tls_key too")),
        (None, Some(_)) => return Err(file.error(&at("tls_key"), "needs tls_cert too")),
    };
    if file.config.tenants.contains_key("") {
        return Err(file.error(
            &[key("tenants"), key("")],
            "a tenant name must not be empty",
        ));
    }
    let mut tenants = Vec::new();
    for (name, t) in &file.config.tenants {
        let at = |field: &str| [key("tenants"), key(name), key(field)];
        // Verifiers are served without a loop policy.
        t.validate(file, name, true)?;
        if let Some(hash) = &t.token_hash
            && !is_hash(hash)
        {
            return Err(file.error(
                &at("token_hash"),
                "must be 64 hex digits (`verdict serve hash-token TOKEN`)",
            ));
        }
        if t.max_concurrent_checks == Some(0) {
            return Err(file.error(&at("max_concurrent_checks"), "must be positive"));
        }
        let spec = |field: &str, given: &Option<VerifierRef>| -> Result<_, ConfigError> {
            let Some(given) = given else { return Ok(None) };
            let Some(text) = given.local() else {
                return Err(file.error(
                    &at(field),
                    "serve runs verifiers itself: name a .wasm file, builtin:NAME or oci://…",
                ));
            };
            Ok(Some(match file.verifier_source(text) {
                VerifierSource::File(path) => VerifierSpec::File(path),
                VerifierSource::Builtin(b) => VerifierSpec::Bytes {
                    label: format!("builtin:{b}"),
                    bytes: crate::builtin_verifiers::get(&b)
                        .ok_or_else(|| {
                            file.error(&at(field), format!("no built-in verifier `{b}`"))
                        })?
                        .into(),
                },
                // Resolved to a digest now (pulled unless cached, verified);
                // the bytes are what the server loads.
                VerifierSource::Oci(text) => {
                    let reference = verdict::registry::OciRef::parse(&text)
                        .map_err(|e| file.error(&at(field), e.to_string()))?;
                    let fetched = crate::oci::registry(&crate::oci::resolve_registries(
                        file,
                        &file.config.registries,
                    ))
                    .fetch_blocking(&reference, &t.allowed_digests)
                    .map_err(|e| file.error(&at(field), e.to_string()))?;
                    VerifierSpec::Bytes {
                        label: fetched.reference.canonical(),
                        bytes: fetched.bytes.into(),
                    }
                }
            }))
        };
        tenants.push(TenantSettings {
            name: name.clone(),
            token_hash: t.token_hash.clone(),
            artifact_root: file.resolve(&t.artifact_root),
            limits: t.limits.to_limits(),
            max_concurrent_checks: t.max_concurrent_checks.unwrap_or(TENANT_CONCURRENCY),
            ready_instances: t
                .ready_instances
                .unwrap_or(verdict::DEFAULT_READY_INSTANCES),
            completion: spec("completion", &t.completion)?,
            progress: spec("progress", &t.progress)?,
            record_dir: t.record_dir.as_ref().map(|d| file.resolve(d)),
            record_queue_bytes: record_queue_bytes(file, name, t.record_queue_mib)?,
        });
    }
    Ok(Settings { server, tenants })
}

/// The most `record_queue_mib` may be (16 GiB).
const MAX_RECORD_QUEUE_MIB: u64 = 16 * 1024;

/// `record_queue_mib` in bytes: positive and at most
/// [`MAX_RECORD_QUEUE_MIB`].
fn record_queue_bytes(
    file: &ConfigFile<ServeConfig>,
    tenant: &str,
    mib: Option<u64>,
) -> Result<Option<usize>, ConfigError> {
    let Some(mib) = mib else {
        return Ok(None);
    };
    if mib == 0 || mib > MAX_RECORD_QUEUE_MIB {
        return Err(file.error(
            &[key("tenants"), key(tenant), key("record_queue_mib")],
            format!("must be between 1 and {MAX_RECORD_QUEUE_MIB}"),
        ));
    }
    Ok(usize::try_from(mib * 1024 * 1024).ok())
}
