//! The routes of the API and the middleware every request passes: the
//! access log, the request timeout and the drain.

mod admin;
mod body;
mod check;
mod guard;
mod health;
mod openapi;
mod verifiers;

pub(crate) use openapi::OPENAPI;

use crate::access;
use crate::error::ApiError;
use crate::state::AppState;
use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use std::sync::Arc;

/// Every route with its middleware.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(health::metrics))
        .route("/v1/openapi.json", get(openapi::document))
        .route("/v1/tenants/{tenant}/completion", post(check::completion))
        .route("/v1/tenants/{tenant}/progress", post(check::progress))
        .route("/v1/tenants/{tenant}/verifiers", get(verifiers::list))
        .route(
            "/v1/tenants/{tenant}/verifiers/{role}",
            put(verifiers::upload),
        )
        .route("/v1/admin/reload", post(admin::reload))
        .fallback(|| async { ApiError::no_route() })
        .method_not_allowed_fallback(|| async {
            ApiError {
                status: axum::http::StatusCode::METHOD_NOT_ALLOWED,
                code: "method_not_allowed",
                message: "this route does not take this method".into(),
                retry_after: None,
            }
        })
        .layer(middleware::from_fn_with_state(state.clone(), bounded))
        .layer(middleware::from_fn_with_state(state.clone(), access::log))
        .with_state(state)
}

/// 503 while draining (but `/healthz`); 408 past the request timeout.
async fn bounded(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    if state.is_draining() && request.uri().path() != "/healthz" {
        return ApiError::draining().into_response();
    }
    match tokio::time::timeout(state.server.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::request_timeout().into_response(),
    }
}
