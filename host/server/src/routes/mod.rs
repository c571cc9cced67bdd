//! The routes of the API and the middleware every request passes: the
//! access log, the request timeout and the drain.

mod admin;
mod body;
mod check;
mod guard;
mod health;
mod openapi;
mod records;
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

const HEALTHZ: &str = "/healthz";
const READYZ: &str = "/readyz";
const METRICS: &str = "/metrics";
const OPENAPI_JSON: &str = "/v1/openapi.json";
const COMPLETION: &str = "/v1/tenants/{tenant}/completion";
const PROGRESS: &str = "/v1/tenants/{tenant}/progress";
const VERIFIERS: &str = "/v1/tenants/{tenant}/verifiers";
const VERIFIER: &str = "/v1/tenants/{tenant}/verifiers/{role}";
const RELOAD: &str = "/v1/admin/reload";
const CHECK_RECORD: &str = "/v1/tenants/{tenant}/checks/{id}";

/// Every (method, path) the router serves (the OpenAPI document must name
/// each: see the test below).
pub const ROUTES: [(&str, &str); 10] = [
    ("get", HEALTHZ),
    ("get", READYZ),
    ("get", METRICS),
    ("get", OPENAPI_JSON),
    ("post", COMPLETION),
    ("post", PROGRESS),
    ("get", VERIFIERS),
    ("put", VERIFIER),
    ("post", RELOAD),
    ("get", CHECK_RECORD),
];

/// Every route with its middleware.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route(HEALTHZ, get(health::healthz))
        .route(READYZ, get(health::readyz))
        .route(METRICS, get(health::metrics))
        .route(OPENAPI_JSON, get(openapi::document))
        .route(COMPLETION, post(check::completion))
        .route(PROGRESS, post(check::progress))
        .route(VERIFIERS, get(verifiers::list))
        .route(VERIFIER, put(verifiers::upload))
        .route(RELOAD, post(admin::reload))
        .route(CHECK_RECORD, get(records::get))
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
/// While draining every answer says `Connection: close`.
async fn bounded(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let mut response = if state.is_draining() && request.uri().path() != "/healthz" {
        ApiError::draining().into_response()
    } else {
        match tokio::time::timeout(state.server.request_timeout, next.run(request)).await {
            Ok(response) => response,
            Err(_) => ApiError::request_timeout().into_response(),
        }
    };
    if state.is_draining() {
        response.headers_mut().insert(
            axum::http::header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_openapi_document_names_exactly_the_served_routes() {
        let doc: serde_json::Value = serde_json::from_str(OPENAPI).unwrap_or_default();
        let paths = doc["paths"].as_object().cloned().unwrap_or_default();
        let mut documented = Vec::new();
        for (path, ops) in &paths {
            for method in ops.as_object().into_iter().flat_map(|o| o.keys()) {
                documented.push((method.clone(), path.clone()));
            }
        }
        documented.sort();
        let mut served: Vec<(String, String)> = ROUTES
            .iter()
            .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
            .collect();
        served.sort();
        assert_eq!(documented, served);
    }
}
