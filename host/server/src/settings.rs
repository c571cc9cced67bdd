//! What the service is told to serve: plain data the caller (the CLI's
//! configuration file) fills in, and the reloader that re-reads it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use verdict_sandbox::Limits;

/// Re-reads the settings (`SIGHUP`, `POST /v1/admin/reload`); an error is
/// reported and the running settings stay.
pub type Reloader = Arc<dyn Fn() -> Result<Settings, String> + Send + Sync>;

/// Everything the service serves.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The listener, limits and admin token.
    pub server: ServerSettings,
    /// The tenants, by name.
    pub tenants: Vec<TenantSettings>,
}

/// A certificate chain and private key, PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain.
    pub cert: PathBuf,
    /// The private key.
    pub key: PathBuf,
}

/// `[server]`: the listener and the service-wide limits.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// Where to listen.
    pub listen: SocketAddr,
    /// Hash of the admin token ([`crate::hash_token`]); none: no admin.
    pub admin_token_hash: Option<String>,
    /// Checks running at once, over all tenants (more: 429). The verifier
    /// host's instance pool should hold as many (`verdict serve` sizes it so).
    pub max_concurrent_checks: usize,
    /// Open connections at once (more wait in the listen backlog).
    pub max_connections: usize,
    /// A request's whole time, body read included (over it: 408).
    pub request_timeout: Duration,
    /// Time to send a request's headers (slow clients are cut).
    pub header_read_timeout: Duration,
    /// How long accepted requests may finish after SIGTERM.
    pub drain_timeout: Duration,
    /// After SIGTERM, how long new connections are still accepted (each
    /// request answered 503 with `Connection: close`) before the listener
    /// stops taking handshakes and what waits in its backlog is answered.
    pub drain_grace: Duration,
    /// Serve HTTPS with these files.
    pub tls: Option<TlsFiles>,
    /// Threads serving connections (at least 1).
    pub http_threads: usize,
    /// Threads running checks; 0 runs each check on its connection's
    /// thread (see `threads` for why they are apart).
    pub check_threads: usize,
    /// Bytes of each pooled instance's linear memory kept resident between
    /// checks (`HostConfig::pool_keep_resident_bytes` of the host `verdict
    /// serve` builds; read at start, not on reload). Default 4 MiB: a check
    /// of a large packet then reuses pages instead of faulting fresh zeroed
    /// ones in, at a cost of at most that much per pooled instance.
    pub keep_resident_bytes: u64,
}

/// The default thread counts for this machine: half the cores (at least
/// one) run checks, the rest (at least one) serve connections.
pub fn default_threads() -> (usize, usize) {
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    let checks = (cores / 2).max(1);
    (cores.saturating_sub(checks).max(1), checks)
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8700)),
            admin_token_hash: None,
            max_concurrent_checks: 64,
            max_connections: 10_000,
            request_timeout: Duration::from_secs(70),
            header_read_timeout: Duration::from_secs(5),
            drain_timeout: Duration::from_secs(30),
            drain_grace: Duration::from_secs(5),
            tls: None,
            http_threads: default_threads().0,
            check_threads: default_threads().1,
            keep_resident_bytes: 4 * 1024 * 1024,
        }
    }
}

/// Where a tenant's verifier comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifierSpec {
    /// A `.wasm` file.
    File(PathBuf),
    /// Component bytes (an embedded sample), with the name to report.
    Bytes {
        /// The name (`builtin:artifact-ready`).
        label: String,
        /// The component.
        bytes: Arc<[u8]>,
    },
}

/// `[tenants.NAME]`: one tenant's token, verifiers, limits and artifacts.
#[derive(Debug, Clone)]
pub struct TenantSettings {
    /// The tenant's name (its path segment).
    pub name: String,
    /// Hash of the tenant's bearer token; none: only the admin reaches it.
    pub token_hash: Option<String>,
    /// The directory its verifiers may read.
    pub artifact_root: PathBuf,
    /// Sandbox limits of its checks.
    pub limits: Limits,
    /// Checks of this tenant at once (more: 429).
    pub max_concurrent_checks: usize,
    /// Instances of each verifier kept instantiated ahead of its checks
    /// (`Tenant::with_ready_instances`).
    pub ready_instances: usize,
    /// The completion verifier.
    pub completion: Option<VerifierSpec>,
    /// The progress verifier.
    pub progress: Option<VerifierSpec>,
    /// Record every check of this tenant into this directory
    /// (`verdict-records`); each check's id then answers
    /// `GET /v1/tenants/{tenant}/checks/{id}`.
    pub record_dir: Option<PathBuf>,
    /// The bytes the records waiting for the disk may hold (default
    /// [`verdict_records::DEFAULT_QUEUE_BYTES`]).
    pub record_queue_bytes: Option<usize>,
}
