//! Errors: [`ApiError`], the one JSON shape `{code, message}` of every
//! refused request, and [`ServeError`], why the service could not start or
//! reload.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A refused request: its status and the `{code, message}` body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status} {code}: {message}")]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A stable snake_case code.
    pub code: &'static str,
    /// A message for people; never names another tenant.
    pub message: String,
    /// Seconds for `Retry-After` (429, 503).
    pub retry_after: Option<u32>,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    /// 400: the body is not what the route reads.
    pub fn invalid(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 401: no token, or one that matches nothing.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a valid bearer token is required",
        )
    }

    /// 403: a valid token without the right (admin routes).
    pub fn forbidden() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "this route needs the admin token",
        )
    }

    /// 404: unknown tenant (or one the token does not reach: the same
    /// answer, so no other tenant's name is revealed).
    pub fn no_tenant() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "tenant_not_found",
            "no such tenant for this token",
        )
    }

    /// 404: the tenant has no verifier of this role.
    pub fn no_role(role: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "verifier_not_found",
            format!("this tenant has no {role} verifier"),
        )
    }

    /// 404: the tenant does not record its checks.
    pub fn not_recording() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "not_recording",
            "this tenant does not record its checks (no record_dir)",
        )
    }

    /// 404: no record of that id for this tenant.
    pub fn no_record() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "record_not_found",
            "no check record of that id for this tenant",
        )
    }

    /// 503: the record queue is full (the disk is slower than the
    /// checks); the check ran but is not answered, since it is not
    /// recorded.
    pub fn record_backlog() -> Self {
        let mut e = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "record_backlog",
            "the check's record could not be queued (the record store is behind): retry",
        );
        e.retry_after = Some(1);
        e
    }

    /// 503: the record is still on its way to disk after the route's wait.
    pub fn record_pending() -> Self {
        let mut e = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "record_pending",
            "the record is not written yet: retry",
        );
        e.retry_after = Some(1);
        e
    }

    /// 500: the record store failed (the details, which may name files,
    /// are in the server's log, never in the answer).
    pub fn record_store() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "record_store",
            "the record store failed (see the server's log)",
        )
    }

    /// 404: no such route.
    pub fn no_route() -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", "no such route")
    }

    /// 408: the request took longer than the server's request timeout.
    pub fn request_timeout() -> Self {
        Self::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            "the request was not complete within the server's request timeout",
        )
    }

    /// 413: the body is over the route's bound.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("the body is over {limit} bytes"),
        )
    }

    /// 429: over a concurrency limit (`what`: `server` or `tenant`).
    pub fn busy(what: &str) -> Self {
        let mut e = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_requests",
            format!("the {what}'s concurrent checks are at their limit"),
        );
        e.retry_after = Some(1);
        e
    }

    /// 503: the server is draining (shutting down).
    pub fn draining() -> Self {
        let mut e = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "draining",
            "the server is shutting down",
        );
        e.retry_after = Some(1);
        e
    }

    /// 503: not ready (verifiers still loading).
    pub fn not_ready() -> Self {
        let mut e = Self::new(StatusCode::SERVICE_UNAVAILABLE, "not_ready", "not ready");
        e.retry_after = Some(1);
        e
    }

    /// 422: an uploaded component was refused (nothing changed).
    pub fn rejected(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "verifier_rejected",
            message,
        )
    }

    /// 409: a reload failed (the running configuration stays).
    pub fn reload_failed(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "reload_failed", message)
    }

    /// 500: the server failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// The body's JSON.
    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({ "code": self.code, "message": self.message })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// Why the service could not start, or a reload was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The listener could not be opened.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The TLS certificate or key could not be used.
    #[error("TLS: {0}")]
    Tls(String),
    /// A tenant's verifier or artifact root could not be loaded.
    #[error("tenant {tenant:?}: {message}")]
    Tenant {
        /// The tenant.
        tenant: String,
        /// Why.
        message: String,
    },
    /// A setting is invalid.
    #[error("{0}")]
    Settings(String),
    /// The serving or checking threads could not be started.
    #[error("cannot start the {what} threads: {source}")]
    Threads {
        /// `http` or `check`.
        what: &'static str,
        /// Why.
        source: std::io::Error,
    },
}
