//! One access log line per request on stderr: text, or JSON with
//! `--log-format json`; checks add their tenant, role, digest, status and
//! check id.

use crate::state::AppState;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

/// What a check adds to its access log line (a response extension).
#[derive(Debug, Clone)]
pub struct CheckInfo {
    /// The tenant.
    pub tenant: String,
    /// `completion` or `progress`.
    pub role: &'static str,
    /// The verifier's digest.
    pub digest: String,
    /// The check's id.
    pub check_id: String,
    /// The check's status word.
    pub status: &'static str,
}

/// Logs the request once it is answered.
pub async fn log(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().to_string();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    let status = response.status().as_u16();
    let check = response.extensions().get::<CheckInfo>();
    let line = if state.log_json {
        let mut v = serde_json::json!({
            "msg": "access",
            "method": method,
            "path": path,
            "status": status,
            "durationUs": micros,
        });
        if let Some(c) = check {
            v["tenant"] = c.tenant.clone().into();
            v["role"] = c.role.into();
            v["verifierDigest"] = c.digest.clone().into();
            v["checkId"] = c.check_id.clone().into();
            v["checkStatus"] = c.status.into();
        }
        v.to_string()
    } else {
        let mut l =
            format!("access method={method} path={path} status={status} duration_us={micros}");
        if let Some(c) = check {
            l.push_str(&format!(
                " tenant={} role={} digest={} check_id={} check_status={}",
                c.tenant, c.role, c.digest, c.check_id, c.status
            ));
        }
        l
    };
    tracing::info!(target: "verdict_server::access", method, path, status, duration_us = micros);
    let _ = writeln!(std::io::stderr().lock(), "{line}");
    response
}
