//! One access log line per request on stderr: text, or JSON with
//! `--log-format json`; checks add their tenant, role, digest, status and
//! check id.
//!
//! Lines are written in batches: a request appends its line to a buffer,
//! and the first line of a batch schedules a write [`LINGER`] later on the
//! request's own runtime (a timer, no other thread woken). A write per
//! request cost about 5% of a small check's CPU. The server writes what
//! is left when it stops ([`flush`]); a killed process loses at most the
//! last [`LINGER`] of lines.

use crate::state::AppState;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a batch of lines waits for more before it is written.
const LINGER: Duration = Duration::from_millis(2);
/// A batch this large is written at once, by the request that filled it.
const MAX_BATCH: usize = 64 * 1024;

/// Lines not yet written.
static PENDING: Mutex<Vec<u8>> = Mutex::new(Vec::new());
/// A write of [`PENDING`] is scheduled.
static SCHEDULED: AtomicBool = AtomicBool::new(false);

/// Writes the lines not yet written (the server calls it when it stops).
pub(crate) fn flush() {
    // A line appended from here on schedules a write of its own.
    SCHEDULED.store(false, Ordering::Release);
    // Taken under the stderr lock, batches are written in their order.
    let mut stderr = std::io::stderr().lock();
    let batch = std::mem::take(&mut *PENDING.lock().unwrap_or_else(PoisonError::into_inner));
    if !batch.is_empty() {
        // Nowhere to report a failed write of the log itself.
        let _ = stderr.write_all(&batch);
    }
}

fn append(line: &str) {
    let full = {
        let mut pending = PENDING.lock().unwrap_or_else(PoisonError::into_inner);
        pending.extend_from_slice(line.as_bytes());
        pending.push(b'\n');
        pending.len() >= MAX_BATCH
    };
    if full {
        flush();
    } else if !SCHEDULED.swap(true, Ordering::AcqRel) {
        tokio::spawn(async {
            tokio::time::sleep(LINGER).await;
            flush();
        });
    }
}

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
    append(&line);
    response
}
