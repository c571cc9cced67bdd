//! Bounded retries with exponential backoff for 429 and 5xx answers.

use std::time::{Duration, SystemTime};

#[cfg(feature = "http")]
use reqwest::header::HeaderMap;

use crate::errors::ProviderError;
use crate::model::{Attempt, CallContext};

/// How often and how long to retry a failed attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 disables retrying). Default 2.
    pub max_retries: u32,
    /// Delay before the first retry; doubled for each next one. Default 500 ms.
    pub base_delay: Duration,
    /// No single wait is longer than this. A provider asking for a longer
    /// `retry-after` gets no retry: the error goes to the caller. Default 30 s.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 2,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The wait before retry number `retry` (1-based) after `error`, or
    /// `None` when the call must not be retried.
    pub fn delay_for(&self, retry: u32, error: &ProviderError) -> Option<Duration> {
        if !error.is_retryable() {
            return None;
        }
        self.backoff(retry, error)
    }

    /// The wait before retry number `retry` after `error`, whatever kind
    /// of error it is; `None` once the retries are spent or the provider
    /// asks for a longer wait than `max_delay`.
    fn backoff(&self, retry: u32, error: &ProviderError) -> Option<Duration> {
        if retry > self.max_retries {
            return None;
        }
        if let ProviderError::RateLimited {
            retry_after: Some(wait),
            ..
        } = error
        {
            return (*wait <= self.max_delay).then_some(*wait);
        }
        let exp = self
            .base_delay
            .saturating_mul(1u32 << retry.saturating_sub(1).min(16));
        let capped = exp.min(self.max_delay);
        // Jitter in [50%, 100%] so parallel callers do not retry in lockstep.
        let jitter = 0.5 + fastrand::f64() * 0.5;
        Some(capped.mul_f64(jitter))
    }
}

/// Run `attempt` (given its 1-based number) until it succeeds, fails with
/// an error `retryable` refuses, or the policy gives up. Every attempt is
/// reported to the call's hook first (which may refuse it); waits between
/// attempts end early on cancellation. Returns the value and the attempt count.
pub(crate) async fn with_retries<T, F, Fut>(
    policy: &RetryPolicy,
    ctx: &CallContext,
    retryable: impl Fn(&ProviderError) -> bool,
    mut attempt: F,
) -> Result<(T, u32), ProviderError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, ProviderError>>,
{
    let mut number = 1u32;
    let mut retry_of = None;
    loop {
        ctx.report(&Attempt { number, retry_of })?;
        let error = match attempt(number).await {
            Ok(value) => return Ok((value, number)),
            Err(e) => e,
        };
        let delay = if retryable(&error) {
            policy.backoff(number, &error)
        } else {
            None
        };
        let Some(delay) = delay else {
            return Err(error);
        };
        tracing::debug!(attempt = number, ?delay, %error, "retrying model call");
        tokio::select! {
            () = ctx.cancel.cancelled() => return Err(ProviderError::Cancelled),
            () = tokio::time::sleep(delay) => {}
        }
        number += 1;
        retry_of = Some(error);
    }
}

/// Whether a stream that failed with `error` before its first event is
/// tried again: transient errors, and a body cut short (the caller has seen
/// nothing of it).
pub(crate) fn retryable_before_first_event(error: &ProviderError) -> bool {
    error.is_retryable() || matches!(error, ProviderError::TruncatedStream { .. })
}

/// Read `retry-after-ms` (OpenAI) or `retry-after` (seconds or HTTP date).
#[cfg(feature = "http")]
pub(crate) fn retry_after_from_headers(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        return duration_from_secs(ms / 1000.0);
    }
    let value = text("retry-after")?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return duration_from_secs(secs);
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(
        date.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// Parse a protobuf duration string such as `"30s"` or `"1.5s"` (Gemini's
/// `RetryInfo.retryDelay`).
pub(crate) fn parse_proto_duration(text: &str) -> Option<Duration> {
    duration_from_secs(text.strip_suffix('s')?.parse::<f64>().ok()?)
}

fn duration_from_secs(secs: f64) -> Option<Duration> {
    (0.0..1e9)
        .contains(&secs)
        .then(|| Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::TimeoutPhase;
    use reqwest::header::HeaderValue;

    fn server_error() -> ProviderError {
        ProviderError::Server {
            status: 503,
            message: "x".into(),
        }
    }

    #[test]
    fn backoff_grows_and_stops_after_max_retries() {
        let policy = RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(250),
        };
        let d1 = policy.delay_for(1, &server_error());
        let d3 = policy.delay_for(3, &server_error());
        assert!(
            matches!(d1, Some(d) if d >= Duration::from_millis(50) && d <= Duration::from_millis(100))
        );
        assert!(
            matches!(d3, Some(d) if d >= Duration::from_millis(125) && d <= Duration::from_millis(250))
        );
        assert_eq!(policy.delay_for(4, &server_error()), None);
    }

    #[test]
    fn a_connect_timeout_is_retried_and_a_slow_answer_is_not() {
        let timeout = |phase| ProviderError::Timeout {
            phase,
            after: Duration::from_secs(1),
        };
        let policy = RetryPolicy::default();
        assert!(
            policy
                .delay_for(1, &timeout(TimeoutPhase::Connect))
                .is_some()
        );
        for phase in [
            TimeoutPhase::FirstByte,
            TimeoutPhase::Idle,
            TimeoutPhase::Total,
        ] {
            assert_eq!(policy.delay_for(1, &timeout(phase)), None, "{phase}");
        }
    }

    #[test]
    fn bad_requests_are_not_retried() {
        let err = ProviderError::BadRequest {
            status: 400,
            message: "no".into(),
        };
        assert_eq!(RetryPolicy::default().delay_for(1, &err), None);
    }

    #[test]
    fn retry_after_is_honoured_unless_too_long() {
        let policy = RetryPolicy::default();
        let short = ProviderError::RateLimited {
            retry_after: Some(Duration::from_secs(2)),
            message: String::new(),
        };
        let long = ProviderError::RateLimited {
            retry_after: Some(Duration::from_secs(120)),
            message: String::new(),
        };
        assert_eq!(policy.delay_for(1, &short), Some(Duration::from_secs(2)));
        assert_eq!(policy.delay_for(1, &long), None);
    }

    #[test]
    fn retry_after_headers_parse() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(
            retry_after_from_headers(&headers),
            Some(Duration::from_secs(7))
        );
        headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(
            retry_after_from_headers(&headers),
            Some(Duration::from_millis(1500))
        );
        let mut dated = HeaderMap::new();
        dated.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after_from_headers(&dated), Some(Duration::ZERO));
        assert_eq!(
            parse_proto_duration("1.5s"),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_proto_duration("soon"), None);
    }
}
