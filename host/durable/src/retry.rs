//! Riding out an engine restart: the backoff between attempts, which
//! errors are worth another attempt, and the worker's registration
//! retried until it succeeds.

use std::time::Duration;

use crate::client::RestateClient;
use crate::error::DurableError;
use crate::readiness::Readiness;

/// Exponential backoff with jitter: 200 ms, doubling, at most 5 s, each
/// delay drawn within ±20 %.
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
    max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new(Duration::from_millis(200), Duration::from_secs(5))
    }
}

impl Backoff {
    /// Starts at `first`, doubles up to `max`.
    pub fn new(first: Duration, max: Duration) -> Self {
        Self { next: first, max }
    }

    /// The delay before the next attempt.
    pub fn delay(&mut self) -> Duration {
        let base = self.next;
        self.next = (self.next * 2).min(self.max);
        base.mul_f64(0.8 + 0.4 * fastrand::f64())
    }
}

impl DurableError {
    /// Whether the same request may succeed later: Restate unreachable
    /// (restarting, say), or answering that it is not ready (408, 429, a
    /// 5xx, or 404 while a restarted ingress has not learnt its services
    /// yet).
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Unreachable { .. } => true,
            Self::Refused { status, .. } => {
                matches!(status, 404 | 408 | 429) || (500..600).contains(status)
            }
            _ => false,
        }
    }
}

/// Registers the worker serving at `worker_url` until the admin API takes
/// it, waiting `backoff` between attempts; `readiness` says "not
/// registered: WHY" meanwhile and ready once registered. `failed` hears
/// each failure with the attempt's number and the delay before the next.
/// An answer that will not change (the worker refused Restate's discovery
/// request, say) is retried too: the worker may be replaced meanwhile.
pub async fn register_until_done(
    client: &RestateClient,
    worker_url: &str,
    readiness: &Readiness,
    mut backoff: Backoff,
    mut failed: impl FnMut(u32, &DurableError, Duration),
) {
    let mut attempt = 0;
    loop {
        attempt += 1;
        match client.register(worker_url).await {
            Ok(()) => {
                readiness.ready(format!("registered {worker_url}"));
                return;
            }
            Err(error) => {
                readiness.not_registered(&error);
                let delay = backoff.delay();
                failed(attempt, &error, delay);
                tokio::time::sleep(delay).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_to_its_cap_with_bounded_jitter() {
        let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_millis(700));
        let delays: Vec<Duration> = (0..6).map(|_| backoff.delay()).collect();
        for (delay, base) in delays.iter().zip([100, 200, 400, 700, 700, 700]) {
            let base = Duration::from_millis(base);
            assert!(
                *delay >= base.mul_f64(0.8) && *delay <= base.mul_f64(1.2),
                "{delays:?}"
            );
        }
    }

    #[test]
    fn only_errors_a_restart_explains_are_transient() {
        let refused = |status| DurableError::Refused {
            url: "u".into(),
            status,
            body: String::new(),
        };
        assert!(
            DurableError::Unreachable {
                url: "u".into(),
                detail: "connection refused".into()
            }
            .is_transient()
        );
        for status in [404, 408, 429, 500, 502, 503] {
            assert!(refused(status).is_transient(), "{status}");
        }
        for status in [400, 401, 403, 409, 422] {
            assert!(!refused(status).is_transient(), "{status}");
        }
        assert!(!DurableError::Build("x".into()).is_transient());
    }
}
