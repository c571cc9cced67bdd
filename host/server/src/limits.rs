//! Concurrency limits: a check takes a server-wide and a per-tenant permit
//! without waiting (none free: 429), and the in-flight gauge follows it.

use crate::catalog::TenantState;
use crate::error::ApiError;
use crate::metrics::{Metrics, TenantLabels};
use crate::state::AppState;
use std::sync::Arc;
use tokio::sync::OwnedSemaphorePermit;

/// The permits of one running check; dropping it frees them.
pub struct CheckPermit {
    _global: OwnedSemaphorePermit,
    _tenant: OwnedSemaphorePermit,
    state: Arc<AppState>,
    tenant: String,
}

impl Drop for CheckPermit {
    fn drop(&mut self) {
        in_flight(&self.state.metrics, &self.tenant, -1);
    }
}

fn in_flight(metrics: &Metrics, tenant: &str, delta: i64) {
    metrics
        .in_flight
        .get_or_create(&TenantLabels {
            tenant: tenant.to_owned(),
        })
        .inc_by(delta);
}

/// Takes a permit of the server and of `tenant`, or says 429.
pub fn admit(state: &Arc<AppState>, tenant: &TenantState) -> Result<CheckPermit, ApiError> {
    let global = state
        .permits
        .clone()
        .try_acquire_owned()
        .map_err(|_| ApiError::busy("server"))?;
    let own = tenant
        .permits
        .clone()
        .try_acquire_owned()
        .map_err(|_| ApiError::busy("tenant"))?;
    in_flight(&state.metrics, &tenant.name, 1);
    Ok(CheckPermit {
        _global: global,
        _tenant: own,
        state: state.clone(),
        tenant: tenant.name.clone(),
    })
}

/// Checks running now over all tenants (the admitted ones).
pub fn running(state: &AppState) -> usize {
    state
        .server
        .max_concurrent_checks
        .saturating_sub(state.permits.available_permits())
}
