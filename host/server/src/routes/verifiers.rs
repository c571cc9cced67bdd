//! `GET /v1/tenants/{tenant}/verifiers` and `PUT .../verifiers/{role}`: a
//! tenant's verifiers, and an admin's upload swapped in atomically.

use super::{body, guard};
use crate::catalog::{Slot, check_role, parse_role, role_name};
use crate::error::ApiError;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;
use verdict_sandbox::Role;

/// The tenant's roles with their digests, origins and load times, and its
/// limits.
pub async fn list(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    let (tenant, _) = match guard::tenant(&state, &headers, &name) {
        Ok(found) => found,
        Err(e) => {
            state.metrics.reject("", e.code);
            return e.into_response();
        }
    };
    let mut verifiers = Vec::new();
    for role in [Role::Completion, Role::Progress] {
        if let Some(slot) = tenant.slot(role).load_full() {
            verifiers.push(json!({
                "role": role_name(role),
                "digest": slot.verifier.digest(),
                "origin": slot.origin,
                "loadMs": slot.load_time.as_secs_f64() * 1e3,
            }));
        }
    }
    axum::Json(json!({
        "tenant": tenant.name,
        "verifiers": verifiers,
        "limits": tenant.tenant.limits(),
        "maxConcurrentChecks": tenant.max_concurrent,
    }))
    .into_response()
}

/// Validates and compiles the uploaded component, then swaps it in; a
/// refused one changes nothing (422 with the reason).
pub async fn upload(
    State(state): State<Arc<AppState>>,
    Path((name, role)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match put(&state, &name, &role, &headers, body).await {
        Ok(response) => response,
        Err(e) => {
            if e.code == "verifier_rejected" {
                state
                    .metrics
                    .uploads_refused
                    .get_or_create(&crate::metrics::TenantLabels {
                        tenant: name.clone(),
                    })
                    .inc();
            }
            state.metrics.reject("", e.code);
            e.into_response()
        }
    }
}

async fn put(
    state: &Arc<AppState>,
    name: &str,
    role: &str,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    guard::admin(state, headers)?;
    // Refused before its body is read when the tenant is unknown.
    guard::tenant(state, headers, name)?;
    let role = parse_role(role).ok_or_else(|| ApiError::no_role(role))?;
    let limit = usize::try_from(state.host.load_limits().max_component_bytes).unwrap_or(usize::MAX);
    let bytes = body::read(headers, body, limit).await?;
    // One upload or reload at a time: a reload never drops an upload. The
    // tenant is the one served now, looked up under the lock: one looked
    // up before may belong to a catalog a reload has since replaced (the
    // upload would go into a slot nobody serves).
    let _serial = state.reload_lock.lock().await;
    let (tenant, _) = guard::tenant(state, headers, name)?;
    // Kept in the tenant's record store when it records.
    let kept: Option<Arc<[u8]>> = tenant.recorder.as_ref().map(|_| Arc::from(&bytes[..]));
    let host = state.host.clone();
    let started = Instant::now();
    let loaded = tokio::task::spawn_blocking(move || {
        let (verifier, _) = host.load_bytes(&bytes).map_err(|e| e.to_string())?;
        check_role(&verifier, role)?;
        Ok::<_, String>(verifier)
    })
    .await
    .map_err(|e| ApiError::internal(format!("the compile task failed: {e}")))?
    .map_err(ApiError::rejected)?;
    let digest = loaded.digest().to_owned();
    if let (Some(recorder), Some(kept)) = (&tenant.recorder, kept) {
        recorder
            .keep_component(kept)
            .map_err(|e| ApiError::internal(format!("record store: {e}")))?;
    }
    let slot = Slot {
        verifier: loaded,
        origin: "upload".to_owned(),
        load_time: started.elapsed(),
        // A reload keeps the upload while the configured spec is unchanged.
        source: tenant
            .slot(role)
            .load()
            .as_ref()
            .and_then(|s| s.source.clone()),
    };
    // Checks holding the old slot finish on it.
    let previous = tenant.slot(role).swap(Some(Arc::new(slot)));
    Ok(axum::Json(json!({
        "tenant": tenant.name,
        "role": role_name(role),
        "digest": digest,
        "previousDigest": previous.map(|p| p.verifier.digest().to_owned()),
    }))
    .into_response())
}
