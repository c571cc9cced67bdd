//! `GET /v1/tenants/{tenant}/checks/{id}`: the record of one of the
//! tenant's checks, when the tenant records them (`record_dir`).

use super::guard;
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use verdict_records::{CheckRecord, RecordError};

/// The record `id` of `tenant`, as written (its integrity checked).
pub async fn get(
    State(state): State<Arc<AppState>>,
    Path((name, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    match find(&state, &name, &id, &headers).await {
        Ok(record) => axum::Json(record).into_response(),
        Err(e) => {
            state.metrics.reject("", e.code);
            e.into_response()
        }
    }
}

async fn find(
    state: &Arc<AppState>,
    name: &str,
    id: &str,
    headers: &HeaderMap,
) -> Result<CheckRecord, ApiError> {
    let (tenant, _) = guard::tenant(state, headers, name)?;
    let Some(recorder) = tenant.recorder.clone() else {
        return Err(ApiError::not_recording());
    };
    let tenant_name = tenant.name.clone();
    let id = id.to_owned();
    // Files, and a flush when the record is still on its way to disk.
    let found = tokio::task::spawn_blocking(move || {
        let dir = recorder.dir();
        match dir.load(&id)? {
            Some(record) => Ok(Some(record)),
            None if verdict_records::is_check_id(&id) => {
                recorder.flush()?;
                dir.load(&id)
            }
            None => Ok(None),
        }
    })
    .await
    .map_err(|e| ApiError::internal(format!("the record task failed: {e}")))?;
    match found {
        // A record directory may be shared: another tenant's record is
        // not this one's.
        Ok(Some(record)) if record.tenant == tenant_name => Ok(record),
        Ok(_) => Err(ApiError::no_record()),
        Err(e @ RecordError::Tampered { .. }) => Err(ApiError::internal(e.to_string())),
        Err(e) => Err(ApiError::internal(format!("record store: {e}"))),
    }
}
