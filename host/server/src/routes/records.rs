//! `GET /v1/tenants/{tenant}/checks/{id}`: the record of one of the
//! tenant's checks, when the tenant records them (`record_dir`); with
//! `?bundle=1` (or `Accept: application/vnd.verdict.check-bundle+json`)
//! the record with the blobs it names, which `verdict replay` takes.
//!
//! An id is looked up without a flush of the recorder: a record still on
//! its way to disk is waited for (that record only, at most
//! [`PENDING_WAIT`]); any other id is read from disk or is a 404 at once.
//! A store error is logged, never handed to the tenant.

use super::guard;
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use verdict_records::{BUNDLE_MEDIA_TYPE, CheckBundle, CheckRecord, is_check_id};

/// How long a request waits for a record handed to the writer and not
/// yet written.
pub const PENDING_WAIT: Duration = Duration::from_secs(2);

/// The record `id` of `tenant`, as written (its integrity checked), or
/// its bundle.
pub async fn get(
    State(state): State<Arc<AppState>>,
    Path((name, id)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let bundle = query
        .get("bundle")
        .is_some_and(|v| matches!(v.as_str(), "1" | "true"))
        || headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains(BUNDLE_MEDIA_TYPE));
    match find(&state, &name, &id, &headers, bundle).await {
        Ok(Found::Record(record)) => axum::Json(record).into_response(),
        Ok(Found::Bundle(bundle)) => {
            let mut response = axum::Json(bundle).into_response();
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(BUNDLE_MEDIA_TYPE),
            );
            response
        }
        Err(e) => {
            state.metrics.reject("", e.code);
            e.into_response()
        }
    }
}

enum Found {
    Record(Box<CheckRecord>),
    Bundle(Box<CheckBundle>),
}

async fn find(
    state: &Arc<AppState>,
    name: &str,
    id: &str,
    headers: &HeaderMap,
    bundle: bool,
) -> Result<Found, ApiError> {
    let (tenant, _) = guard::tenant(state, headers, name)?;
    let Some(recorder) = tenant.recorder.clone() else {
        return Err(ApiError::not_recording());
    };
    if !is_check_id(id) {
        return Err(ApiError::no_record());
    }
    let tenant_name = tenant.name.clone();
    // Asked before the file: a record leaves the pending set only once
    // it is on disk (or failed).
    if let Some(owner) = recorder.is_pending(id) {
        if owner != tenant_name {
            return Err(ApiError::no_record());
        }
        let waited = tokio::time::timeout(PENDING_WAIT, recorder.settled(id)).await;
        if waited.is_err() {
            return Err(ApiError::record_pending());
        }
    }
    let id = id.to_owned();
    let found = tokio::task::spawn_blocking(
        move || -> Result<Option<Found>, verdict_records::RecordError> {
            let dir = recorder.dir();
            let record = match dir.load(&id)? {
                // A record directory may be shared: another tenant's record
                // is not this one's.
                Some(record) if record.tenant == tenant_name => record,
                _ => return Ok(None),
            };
            Ok(Some(if bundle {
                Found::Bundle(Box::new(CheckBundle::of(dir, record)?))
            } else {
                Found::Record(Box::new(record))
            }))
        },
    )
    .await
    .map_err(|e| {
        tracing::error!(error = %e, "the record task failed");
        ApiError::record_store()
    })?;
    match found {
        Ok(Some(found)) => Ok(found),
        Ok(None) => Err(ApiError::no_record()),
        Err(e) => {
            // The details name files (and maybe another tenant's record):
            // the log's, not the answer's.
            tracing::error!(tenant = %tenant.name, error = %e, "reading a check record failed");
            Err(ApiError::record_store())
        }
    }
}
