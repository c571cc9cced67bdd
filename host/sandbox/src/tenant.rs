//! Tenants: who a check runs for, with what limits and which artifacts.

use crate::artifacts::ArtifactStore;
use crate::limits::Limits;
use std::sync::Arc;

/// The most ready instances a tenant may ask for, per verifier.
pub const MAX_READY_INSTANCES: usize = 64;

/// Ready instances a tenant keeps per verifier unless told otherwise: one
/// caller checking steadily (each check after the last one's refill) never
/// waits for an instantiation; two at once find one ready and one being
/// made.
pub const DEFAULT_READY_INSTANCES: usize = 1;

/// A tenant: an id, per-call limits and an artifact scope. A verifier called
/// for a tenant reads only that tenant's store.
#[derive(Debug, Clone)]
pub struct Tenant {
    id: String,
    limits: Limits,
    artifacts: Arc<dyn ArtifactStore>,
    ready_instances: usize,
}

impl Tenant {
    /// A tenant with the given id, limits and artifact store.
    pub fn new(id: impl Into<String>, limits: Limits, artifacts: Arc<dyn ArtifactStore>) -> Self {
        Self {
            id: id.into(),
            limits,
            artifacts,
            ready_instances: DEFAULT_READY_INSTANCES,
        }
    }

    /// The tenant's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The tenant's per-call limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Replaces the tenant's limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Keeps `n` instances of each verifier this tenant calls instantiated
    /// ahead of its checks (at most [`MAX_READY_INSTANCES`]; default
    /// [`DEFAULT_READY_INSTANCES`]), each used for exactly one check and
    /// refilled off the caller's path: a check then starts without
    /// instantiating. 0 instantiates in every check, on the caller's path.
    /// Each ready instance holds what its start-up touched (measured: 13–22
    /// KiB resident for a Rust verifier, 29 KiB JavaScript, 390 KiB Python)
    /// and an instance slot of the host's pool while it waits.
    pub fn with_ready_instances(mut self, n: usize) -> Self {
        self.ready_instances = n.min(MAX_READY_INSTANCES);
        self
    }

    /// How many ready instances this tenant keeps per verifier.
    pub fn ready_instances(&self) -> usize {
        self.ready_instances
    }

    /// The tenant's artifact store.
    pub fn artifacts(&self) -> &Arc<dyn ArtifactStore> {
        &self.artifacts
    }
}
