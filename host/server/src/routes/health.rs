//! `/healthz`, `/readyz` and `/metrics`.

use super::guard;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Alive: the process answers.
pub async fn healthz() -> Response {
    axum::Json(serde_json::json!({ "status": "ok" })).into_response()
}

/// Ready: every tenant's configured verifiers are loaded, not draining.
pub async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    if state.is_draining() {
        return ApiError::draining().into_response();
    }
    let catalog = state.catalog.load();
    let loaded = catalog.tenants.values().all(|t| {
        (t.settings.completion.is_none() || t.completion.load().is_some())
            && (t.settings.progress.is_none() || t.progress.load().is_some())
    });
    if !loaded {
        return ApiError::not_ready().into_response();
    }
    axum::Json(serde_json::json!({ "status": "ready" })).into_response()
}

/// The Prometheus text: every series for the admin, a tenant's own (and
/// the tenant-less ones) for a tenant's token.
pub async fn metrics(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let only = match guard::caller(&state, &headers) {
        Ok(Caller::Admin) => None,
        Ok(Caller::Tenant(name)) => Some(name),
        Err(e) => {
            state.metrics.reject("", e.code);
            return e.into_response();
        }
    };
    let text = state.metrics.render(only.as_deref());
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response()
}
