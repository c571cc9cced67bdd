//! `GET /v1/openapi.json`: the API's OpenAPI document (checked in beside
//! the crate's manifest).

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// The OpenAPI document, as served.
pub const OPENAPI: &str = include_str!("../../openapi.json");

/// Serves [`OPENAPI`].
pub async fn document() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}
