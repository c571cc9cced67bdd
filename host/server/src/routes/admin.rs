//! `POST /v1/admin/reload`: re-reads the configuration (admin only).

use super::guard;
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Reloads; a failure keeps the running configuration (409 with why).
pub async fn reload(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Err(e) = guard::admin(&state, &headers) {
        state.metrics.reject("", e.code);
        return e.into_response();
    }
    match crate::reload::reload(&state).await {
        Ok(tenants) => axum::Json(serde_json::json!({ "status": "reloaded", "tenants": tenants }))
            .into_response(),
        Err(message) => ApiError::reload_failed(message).into_response(),
    }
}
