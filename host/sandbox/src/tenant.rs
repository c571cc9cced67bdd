//! Tenants: who a check runs for, with what limits and which artifacts.

use crate::artifacts::ArtifactStore;
use crate::limits::Limits;
use std::sync::Arc;

/// A tenant: an id, per-call limits and an artifact scope. A verifier called
/// for a tenant reads only that tenant's store.
#[derive(Debug, Clone)]
pub struct Tenant {
    id: String,
    limits: Limits,
    artifacts: Arc<dyn ArtifactStore>,
}

impl Tenant {
    /// A tenant with the given id, limits and artifact store.
    pub fn new(id: impl Into<String>, limits: Limits, artifacts: Arc<dyn ArtifactStore>) -> Self {
        Self {
            id: id.into(),
            limits,
            artifacts,
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

    /// The tenant's artifact store.
    pub fn artifacts(&self) -> &Arc<dyn ArtifactStore> {
        &self.artifacts
    }
}
