//! The service's Prometheus metrics and their text exposition, filtered to
//! one tenant's series for a tenant's token.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

/// Labels of one tenant's verifier role.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RoleLabels {
    /// The tenant.
    pub tenant: String,
    /// `completion` or `progress`.
    pub role: String,
}

/// Labels of a finished check.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CheckLabels {
    /// The tenant.
    pub tenant: String,
    /// `completion` or `progress`.
    pub role: String,
    /// `complete`, `not_complete`, `progress_key`, `checker_error`,
    /// `cancelled` (the client went away) or `record_failed` (the check
    /// ran, its record could not be kept: answered 500).
    pub status: String,
}

/// Labels of a refused request.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RejectLabels {
    /// The tenant, when the caller reached one (else empty).
    pub tenant: String,
    /// The error code (`too_many_requests`, `unauthorized`, ...).
    pub reason: String,
}

/// Labels of one tenant.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TenantLabels {
    /// The tenant.
    pub tenant: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn duration_histogram() -> Histogram {
    // 50 µs .. ~100 s.
    Histogram::new(exponential_buckets(0.000_05, 2.0, 22))
}

/// Every metric the service exports.
pub struct Metrics {
    registry: Registry,
    /// Finished checks.
    pub checks: Family<CheckLabels, Counter>,
    /// Check durations (the sandbox's, in seconds).
    pub duration: HistogramFamily<RoleLabels>,
    /// Fuel the checks used.
    pub fuel: Family<RoleLabels, Counter>,
    /// Checks running now.
    pub in_flight: Family<TenantLabels, Gauge>,
    /// Refused requests.
    pub rejections: Family<RejectLabels, Counter>,
    /// Time to load (compile or map) each verifier, in seconds.
    pub load_seconds: HistogramFamily<RoleLabels>,
    /// Successful config reloads.
    pub reloads: Counter,
    /// Failed config reloads.
    pub reload_failures: Counter,
    /// Open connections.
    pub connections: Gauge<i64, std::sync::atomic::AtomicI64>,
    /// Verifier uploads refused.
    pub uploads_refused: Family<TenantLabels, Counter<u64, AtomicU64>>,
    /// Checks refused because their record could not be queued.
    pub records_refused: Family<TenantLabels, Counter<u64, AtomicU64>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// Registers every metric.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("verdict");
        let checks = Family::<CheckLabels, Counter>::default();
        let duration = HistogramFamily::<RoleLabels>::new_with_constructor(duration_histogram);
        let fuel = Family::<RoleLabels, Counter>::default();
        let in_flight = Family::<TenantLabels, Gauge>::default();
        let rejections = Family::<RejectLabels, Counter>::default();
        let load_seconds = HistogramFamily::<RoleLabels>::new_with_constructor(duration_histogram);
        let reloads = Counter::default();
        let reload_failures = Counter::default();
        let connections = Gauge::default();
        let uploads_refused = Family::default();
        let records_refused = Family::default();
        registry.register("checks", "Finished checks", checks.clone());
        registry.register(
            "check_duration_seconds",
            "Check duration in the sandbox",
            duration.clone(),
        );
        registry.register("check_fuel", "Fuel used by checks", fuel.clone());
        registry.register("checks_in_flight", "Checks running now", in_flight.clone());
        registry.register(
            "rejections",
            "Requests refused, by reason",
            rejections.clone(),
        );
        registry.register(
            "verifier_load_seconds",
            "Time to load (compile or map) a verifier",
            load_seconds.clone(),
        );
        registry.register("reloads", "Configuration reloads", reloads.clone());
        registry.register(
            "reload_failures",
            "Configuration reloads refused",
            reload_failures.clone(),
        );
        registry.register(
            "open_connections",
            "Connections open now",
            connections.clone(),
        );
        registry.register(
            "uploads_refused",
            "Verifier uploads refused",
            uploads_refused.clone(),
        );
        registry.register(
            "records_refused",
            "Checks refused because the record queue was full",
            records_refused.clone(),
        );
        Self {
            registry,
            checks,
            duration,
            fuel,
            in_flight,
            rejections,
            load_seconds,
            reloads,
            reload_failures,
            connections,
            uploads_refused,
            records_refused,
        }
    }

    /// Counts a refused request.
    pub fn reject(&self, tenant: &str, reason: &str) {
        self.rejections
            .get_or_create(&RejectLabels {
                tenant: tenant.to_owned(),
                reason: reason.to_owned(),
            })
            .inc();
    }

    /// The text exposition: every series (`only: None`), or the series
    /// without a tenant label and those of tenant `only` (not those of
    /// other tenants, nor refusals of no tenant, `tenant=""`).
    pub fn render(&self, only: Option<&str>) -> String {
        let mut text = String::new();
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            return String::new();
        }
        let Some(tenant) = only else { return text };
        let mine = format!("tenant=\"{}\"", escape_label(tenant));
        let mut out = String::with_capacity(text.len());
        for line in text.lines() {
            if keeps(line, &mine) {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// A sample line is kept when it has no tenant label, or exactly `mine`.
fn keeps(line: &str, mine: &str) -> bool {
    if line.starts_with('#') {
        return true;
    }
    let Some(at) = line.find("tenant=\"") else {
        return true;
    };
    let rest = &line[at..];
    rest.starts_with(mine)
        && matches!(rest.as_bytes().get(mine.len()), Some(b',') | Some(b'}'))
        && (at == 0 || matches!(line.as_bytes().get(at - 1), Some(b'{') | Some(b',')))
}

/// The exposition format's label escaping.
fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenant_sees_only_its_series_and_the_global_ones() {
        let m = Metrics::new();
        m.reject("alpha", "too_many_requests");
        m.reject("beta", "too_many_requests");
        m.reject("", "unauthorized");
        let all = m.render(None);
        assert!(all.contains("tenant=\"beta\""), "{all}");
        let alpha = m.render(Some("alpha"));
        assert!(alpha.contains("tenant=\"alpha\""), "{alpha}");
        // Refusals of no tenant are the admin's to see.
        assert!(!alpha.contains("unauthorized"), "{alpha}");
        assert!(all.contains("unauthorized"), "{all}");
        assert!(!alpha.contains("beta"), "{alpha}");
        // A name that is a prefix of another is not confused with it.
        let alp = m.render(Some("alp"));
        assert!(!alp.contains("alpha"), "{alp}");
    }
}
