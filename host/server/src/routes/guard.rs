//! Who may reach what: a tenant's token reaches its own tenant, the admin
//! token every tenant; any other tenant is "not found", never named.

use crate::auth::{Caller, identify, matches, presented};
use crate::catalog::{Catalog, TenantState};
use crate::error::ApiError;
use crate::state::AppState;
use axum::http::HeaderMap;
use std::sync::Arc;

/// The tenant a request names, if the caller may reach it.
pub fn tenant(
    state: &AppState,
    headers: &HeaderMap,
    name: &str,
) -> Result<(Arc<TenantState>, Caller), ApiError> {
    let hash = presented(headers).ok_or_else(ApiError::unauthorized)?;
    let catalog = state.catalog.load();
    let found = catalog.tenants.get(name);
    if let Some(t) = found
        && matches(&hash, t.token_hash.as_ref())
    {
        return Ok((t.clone(), Caller::Tenant(t.name.clone())));
    }
    match identify(&catalog, &hash) {
        Some(Caller::Admin) => found
            .map(|t| (t.clone(), Caller::Admin))
            .ok_or_else(ApiError::no_tenant),
        // Another tenant's token: the same answer as for a missing tenant.
        Some(Caller::Tenant(_)) => Err(ApiError::no_tenant()),
        None => Err(ApiError::unauthorized()),
    }
}

/// The caller, whoever it is (401 without a valid token).
pub fn caller(state: &AppState, headers: &HeaderMap) -> Result<Caller, ApiError> {
    let hash = presented(headers).ok_or_else(ApiError::unauthorized)?;
    let catalog: Arc<Catalog> = state.catalog.load_full();
    identify(&catalog, &hash).ok_or_else(ApiError::unauthorized)
}

/// The admin (401 without a valid token, 403 with a tenant's).
pub fn admin(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    match caller(state, headers)? {
        Caller::Admin => Ok(()),
        Caller::Tenant(_) => Err(ApiError::forbidden()),
    }
}
