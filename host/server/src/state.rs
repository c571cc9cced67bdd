//! The state every request shares: the catalog (swapped whole on reload),
//! the verifier host, metrics, the global permits and the lifecycle flags.

use crate::catalog::Catalog;
use crate::metrics::Metrics;
use crate::settings::{Reloader, ServerSettings};
use crate::threads::RuntimeThreads;
use arc_swap::ArcSwap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use tokio::sync::{Mutex, Semaphore};
use verdict_sandbox::VerifierHost;

/// Shared by every request.
pub struct AppState {
    /// The tenants now served.
    pub catalog: ArcSwap<Catalog>,
    /// Loads and compiles verifiers.
    pub host: VerifierHost,
    /// The metrics.
    pub metrics: Metrics,
    /// Checks at once over all tenants.
    pub permits: Arc<Semaphore>,
    /// The server settings in force.
    pub server: ServerSettings,
    /// Set once shutdown began: new requests get 503.
    pub draining: AtomicBool,
    /// Re-reads the settings.
    pub reloader: Option<Reloader>,
    /// One reload (or upload) at a time.
    pub reload_lock: Mutex<()>,
    /// Access log lines as JSON.
    pub log_json: bool,
    /// The threads checks run on (none: on their connection's thread).
    pub(crate) check_threads: Option<RuntimeThreads>,
    next_check: AtomicU64,
    epoch: u64,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState").finish_non_exhaustive()
    }
}

impl AppState {
    /// The state for `catalog`.
    pub fn new(
        catalog: Catalog,
        host: VerifierHost,
        metrics: Metrics,
        server: ServerSettings,
        reloader: Option<Reloader>,
        log_json: bool,
        check_threads: Option<RuntimeThreads>,
    ) -> Self {
        let epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Self {
            catalog: ArcSwap::from_pointee(catalog),
            host,
            metrics,
            permits: Arc::new(Semaphore::new(server.max_concurrent_checks)),
            server,
            draining: AtomicBool::new(false),
            reloader,
            reload_lock: Mutex::new(()),
            log_json,
            check_threads,
            next_check: AtomicU64::new(1),
            epoch,
        }
    }

    /// A new check id, unique within this process (`<start>-<n>` in hex).
    pub fn check_id(&self) -> String {
        let n = self.next_check.fetch_add(1, Ordering::Relaxed);
        format!("{:x}-{n:x}", self.epoch)
    }

    /// True once shutdown began.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }
}
