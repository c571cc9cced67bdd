//! `POST /v1/tenants/{tenant}/completion` and `/progress`: one check of a
//! packet, answered with the object `verdict check --json` prints plus
//! `checkId` and `witVersion`.

use super::{body, guard};
use crate::access::CheckInfo;
use crate::catalog::{Slot, TenantState, role_name};
use crate::error::ApiError;
use crate::limits;
use crate::metrics::{CheckLabels, Metrics, RoleLabels};
use crate::report::{self, CheckAnswer};
use crate::state::AppState;
use crate::{CHECK_ID_HEADER, DEADLINE_HEADER, WIT_VERSION};
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument;
use verdict_policy::{CancelHandle, CheckContext, CheckPacket, MAX_PACKET_BYTES};
use verdict_records::{RecordError, check_recorded, progress_key_recorded};
use verdict_sandbox::{CallMetrics, CheckError, Role};

/// `POST /v1/tenants/{tenant}/completion`.
pub async fn completion(
    state: State<Arc<AppState>>,
    tenant: Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    run(state, tenant, headers, body, Role::Completion).await
}

/// `POST /v1/tenants/{tenant}/progress`.
pub async fn progress(
    state: State<Arc<AppState>>,
    tenant: Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    run(state, tenant, headers, body, Role::Progress).await
}

/// Cancels the check and counts it `cancelled` when the request is dropped
/// (the client went away) before it finished, `record_failed` when its
/// record could not be kept.
struct Abandoned<'a> {
    cancel: CancelHandle,
    metrics: &'a Metrics,
    tenant: &'a str,
    role: Role,
    /// What an unfinished check is counted as (`cancelled` but when its
    /// record failed).
    status: &'static str,
    finished: bool,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.cancel.cancel();
            self.metrics
                .checks
                .get_or_create(&CheckLabels {
                    tenant: self.tenant.to_owned(),
                    role: role_name(self.role).to_owned(),
                    status: self.status.to_owned(),
                })
                .inc();
        }
    }
}

/// The `status` of a check whose record could not be kept.
pub(crate) const RECORD_FAILED: &str = "record_failed";

/// The check's answer, or, when its record could not be kept, an error
/// counted `record_failed` (the check ran: it was not cancelled): a 503
/// `record_backlog` (and `verdict_records_refused_total`) when the record
/// queue was full, else a 500 whose details go to the log only.
fn settle(
    abandoned: &mut Abandoned<'_>,
    answered: Result<Answered, RecordError>,
) -> Result<Answered, ApiError> {
    match answered {
        Ok(answered) => {
            abandoned.finished = true;
            Ok(answered)
        }
        Err(RecordError::Backlog {
            queued,
            record,
            budget,
        }) => {
            abandoned.status = RECORD_FAILED;
            abandoned
                .metrics
                .records_refused
                .get_or_create(&crate::metrics::TenantLabels {
                    tenant: abandoned.tenant.to_owned(),
                })
                .inc();
            tracing::warn!(
                tenant = abandoned.tenant,
                queued,
                record,
                budget,
                "check refused: the record queue is full"
            );
            Err(ApiError::record_backlog())
        }
        Err(e) => {
            abandoned.status = RECORD_FAILED;
            tracing::error!(tenant = abandoned.tenant, error = %e, "a check's record failed");
            Err(ApiError::record_store())
        }
    }
}

fn deadline(headers: &HeaderMap) -> Result<Option<Duration>, ApiError> {
    let Some(value) = headers.get(DEADLINE_HEADER) else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|ms| Some(Duration::from_millis(ms)))
        .ok_or_else(|| {
            ApiError::invalid(
                "invalid_deadline",
                format!("{DEADLINE_HEADER} must be a whole number of milliseconds"),
            )
        })
}

async fn run(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Body,
    role: Role,
) -> Response {
    let result = check(&state, &name, &headers, body, role).await;
    match result {
        Ok(response) => response,
        Err((error, tenant)) => {
            state
                .metrics
                .reject(tenant.as_deref().unwrap_or(""), error.code);
            error.into_response()
        }
    }
}

type Refused = (ApiError, Option<String>);

/// A check's answer, resource use and record id (when its tenant records).
type Answered = (Result<CheckAnswer, CheckError>, CallMetrics, Option<String>);

/// Runs one check; owns what it uses, so it can run on a check thread.
async fn answer(
    role: Role,
    tenant: Arc<TenantState>,
    slot: Arc<Slot>,
    packet: CheckPacket,
    ctx: CheckContext,
) -> Result<Answered, RecordError> {
    let verifier = &slot.verifier;
    let recorder = tenant.recorder.as_deref();
    Ok(match (role, recorder) {
        (Role::Completion, None) => {
            let r = verifier.check_async(&tenant.tenant, &packet, &ctx).await;
            (r.result.map(CheckAnswer::Verdict), r.metrics, None)
        }
        (Role::Progress, None) => {
            let r = verifier
                .progress_key_async(&tenant.tenant, &packet, &ctx)
                .await;
            (r.result.map(CheckAnswer::Key), r.metrics, None)
        }
        (Role::Completion, Some(recorder)) => {
            let r = check_recorded(verifier, &tenant.tenant, &packet, &ctx, recorder).await?;
            let answer = r.report.result.map(CheckAnswer::Verdict);
            (answer, r.report.metrics, Some(r.id))
        }
        (Role::Progress, Some(recorder)) => {
            let r =
                progress_key_recorded(verifier, &tenant.tenant, &packet, &ctx, recorder).await?;
            let answer = r.report.result.map(CheckAnswer::Key);
            (answer, r.report.metrics, Some(r.id))
        }
    })
}

/// Bodies up to this size are parsed on the connection's thread, where
/// the parse costs no more than a hand-over; larger ones on the check
/// thread (the load bench's max packet: 1.0 MiB).
const PARSE_HERE_BYTES: usize = 16 * 1024;

/// The packet in a request's body; parsing validates: a packet over a
/// bound is refused, never cut.
fn parse(bytes: &[u8]) -> Result<CheckPacket, ApiError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| ApiError::invalid("invalid_packet", "the body is not UTF-8"))?;
    CheckPacket::from_json(text)
        .map_err(|e| ApiError::invalid("invalid_packet", format!("not a valid check packet: {e}")))
}

async fn check(
    state: &Arc<AppState>,
    name: &str,
    headers: &HeaderMap,
    body: Body,
    role: Role,
) -> Result<Response, Refused> {
    let (tenant, _) = guard::tenant(state, headers, name).map_err(|e| (e, None))?;
    let known = || Some(tenant.name.clone());
    let slot = tenant
        .slot(role)
        .load_full()
        .ok_or_else(|| (ApiError::no_role(role_name(role)), known()))?;
    let within = deadline(headers).map_err(|e| (e, known()))?;
    let bytes = body::read(headers, body, MAX_PACKET_BYTES)
        .await
        .map_err(|e| (e, known()))?;
    // Admitted before it is parsed: an overloaded server keeps no packet
    // waiting for a check thread (429 precedes 400).
    let permit = limits::admit(state, &tenant).map_err(|e| (e, known()))?;
    // A large packet is parsed where its check runs: its parse costs as
    // much as its check, and the connection's thread has the next bodies
    // to receive. A small one is parsed here, so a bad one is refused
    // without a hand-over.
    let parsed = if bytes.len() <= PARSE_HERE_BYTES {
        Some(parse(&bytes).map_err(|e| (e, known()))?)
    } else {
        None
    };

    // A recorded check is named by its record's id.
    let mut check_id = state.check_id();
    let digest = slot.verifier.digest().to_owned();
    let span = tracing::info_span!(
        "check",
        tenant = %tenant.name,
        role = role_name(role),
        digest = %digest,
        check_id = %check_id,
        status = tracing::field::Empty,
    );
    let cancel = CancelHandle::new();
    let mut ctx = CheckContext::new().with_cancel(cancel.clone());
    if let Some(within) = within {
        ctx = ctx.with_deadline(Instant::now() + within);
    }
    let mut abandoned = Abandoned {
        cancel,
        metrics: &state.metrics,
        tenant: &tenant.name,
        role,
        status: "cancelled",
        finished: false,
    };
    let answering = {
        let tenant = tenant.clone();
        async move {
            let packet = match parsed {
                Some(packet) => packet,
                None => parse(&bytes)?,
            };
            Ok(answer(role, tenant, slot, packet, ctx).await)
        }
        .instrument(span.clone())
    };
    // A check that finds its thread idle (it slept since the last one)
    // runs here: handing it over would cost two wake-ups, and there is
    // no other work to keep out of this core's caches.
    let idle = crate::threads::slept_since_last_asked();
    let answered = match &state.check_threads {
        Some(threads) if !idle || limits::running(state) > 1 => {
            let (sent, answer) = tokio::sync::oneshot::channel();
            // The permits go with the check: an abandoned one holds them
            // until it has stopped.
            threads.spawn(async move {
                let _permit = permit;
                let _ = sent.send(answering.await);
            });
            answer.await.map_err(|_| {
                (
                    ApiError::internal("the check's thread stopped before it answered"),
                    known(),
                )
            })?
        }
        _ => {
            let answered = answering.await;
            drop(permit);
            answered
        }
    };
    let answered = answered.map_err(|e| {
        // Refused before it ran: not a check.
        abandoned.finished = true;
        (e, known())
    })?;
    let (result, metrics, record) = settle(&mut abandoned, answered).map_err(|e| (e, known()))?;
    if let Some(id) = record {
        check_id = id;
    }

    let status = report::status(&result);
    span.record("status", status);
    let labels = RoleLabels {
        tenant: tenant.name.clone(),
        role: role_name(role).to_owned(),
    };
    let m = &state.metrics;
    m.checks
        .get_or_create(&CheckLabels {
            tenant: tenant.name.clone(),
            role: labels.role.clone(),
            status: status.to_owned(),
        })
        .inc();
    m.duration
        .get_or_create(&labels)
        .observe(metrics.duration.as_secs_f64());
    m.fuel.get_or_create(&labels).inc_by(metrics.fuel_used);

    let mut answer = report::CheckReport::new(&tenant.name, Some(&digest), &result, &metrics);
    answer.check_id = Some(&check_id);
    answer.wit_version = Some(WIT_VERSION);
    let mut response = axum::Json(answer).into_response();
    if let Ok(value) = HeaderValue::from_str(&check_id) {
        response.headers_mut().insert(CHECK_ID_HEADER, value);
    }
    response.extensions_mut().insert(CheckInfo {
        tenant: tenant.name.clone(),
        role: role_name(role),
        digest,
        check_id,
        status,
    });
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_store_failure_is_counted_as_its_own_class_not_cancelled() {
        let metrics = Metrics::new();
        let mut abandoned = Abandoned {
            cancel: CancelHandle::new(),
            metrics: &metrics,
            tenant: "alpha",
            role: Role::Completion,
            status: "cancelled",
            finished: false,
        };
        let failed = settle(
            &mut abandoned,
            Err(RecordError::WriterStopped("the disk is full".into())),
        );
        assert_eq!(failed.err().map(|e| e.status.as_u16()), Some(500));
        drop(abandoned);
        let text = metrics.render(None);
        assert!(
            text.contains(
                r#"verdict_checks_total{tenant="alpha",role="completion",status="record_failed"} 1"#
            ),
            "{text}"
        );
        assert!(!text.contains(r#"status="cancelled""#), "{text}");
    }

    #[test]
    fn a_full_record_queue_is_a_503_counted_apart() {
        let metrics = Metrics::new();
        let mut abandoned = Abandoned {
            cancel: CancelHandle::new(),
            metrics: &metrics,
            tenant: "alpha",
            role: Role::Completion,
            status: "cancelled",
            finished: false,
        };
        let refused = settle(
            &mut abandoned,
            Err(RecordError::Backlog {
                queued: 10,
                record: 5,
                budget: 12,
            }),
        );
        let e = refused.err().unwrap_or_else(ApiError::no_route);
        assert_eq!((e.status.as_u16(), e.code), (503, "record_backlog"));
        assert_eq!(e.retry_after, Some(1));
        drop(abandoned);
        let text = metrics.render(None);
        assert!(
            text.contains(r#"verdict_records_refused_total{tenant="alpha"} 1"#),
            "{text}"
        );
        assert!(text.contains(r#"status="record_failed""#), "{text}");
    }

    #[test]
    fn a_record_store_error_names_no_file() {
        let metrics = Metrics::new();
        let mut abandoned = Abandoned {
            cancel: CancelHandle::new(),
            metrics: &metrics,
            tenant: "alpha",
            role: Role::Completion,
            status: "cancelled",
            finished: false,
        };
        let failed = settle(
            &mut abandoned,
            Err(RecordError::WriterStopped(
                "/srv/records/cas: disk full".into(),
            )),
        );
        let e = failed.err().unwrap_or_else(ApiError::no_route);
        assert!(!e.message.contains("/srv"), "{}", e.message);
    }
}
