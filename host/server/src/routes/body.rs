//! Request bodies read under a bound: an announced length over it is
//! refused before reading, a streamed one as soon as it passes it.

use crate::error::ApiError;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, header};
use http_body_util::{BodyExt, LengthLimitError, Limited};

/// The whole body, at most `limit` bytes (413 past it).
pub async fn read(headers: &HeaderMap, body: Body, limit: usize) -> Result<Bytes, ApiError> {
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > limit as u64) {
        return Err(ApiError::too_large(limit));
    }
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(ApiError::too_large(limit)),
        Err(e) => Err(ApiError::invalid(
            "unreadable_body",
            format!("cannot read the body: {e}"),
        )),
    }
}
