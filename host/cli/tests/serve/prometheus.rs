//! A real Prometheus (Debian's 2.42, `scripts/prometheus.sh`) scrapes
//! `verdict serve`'s `/metrics` on loopback, once with the admin token and
//! once with a tenant's: `rate()` of the checks counter and a histogram
//! quantile of the durations answer for the tenant through Prometheus's
//! HTTP API, and the tenant's scrape holds only its own series.
//!
//! Skipped (a `SKIPPED` line) when Prometheus cannot be installed here,
//! unless `VERDICT_REQUIRE_PROMETHEUS=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::client::post;
use super::server::{ADMIN, ALPHA, BETA, Served, config, packet};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The installed binary, or why not.
fn prometheus() -> Result<PathBuf, String> {
    let script = super::server::examples().join("../scripts/prometheus.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg("install")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match (out.status.success(), stdout.lines().last()) {
        (true, Some(path)) => Ok(PathBuf::from(path.trim())),
        _ => Err(format!(
            "{} exited {:?}: {}",
            script.display(),
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `GET path?query` on Prometheus's API (curl: its answers may be chunked).
fn api(port: u16, path: &str, query: Option<&str>) -> serde_json::Value {
    let mut curl = Command::new("curl");
    curl.args(["-sS", "--max-time", "10", "-G"])
        .arg(format!("http://127.0.0.1:{port}{path}"));
    if let Some(q) = query {
        curl.arg("--data-urlencode").arg(format!("query={q}"));
    }
    let out = curl.output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null)
}

/// The instant vector of `query` (empty until Prometheus has it).
fn vector(port: u16, query: &str) -> Vec<serde_json::Value> {
    let v = api(port, "/api/v1/query", Some(query));
    v["data"]["result"].as_array().cloned().unwrap_or_default()
}

/// Polls `query` until it answers one sample whose value satisfies `ok`.
fn wait_value(port: u16, query: &str, ok: impl Fn(f64) -> bool) -> f64 {
    let started = Instant::now();
    loop {
        let result = vector(port, query);
        if let [sample] = result.as_slice()
            && let Some(value) = sample["value"][1]
                .as_str()
                .and_then(|s| s.parse::<f64>().ok())
            && ok(value)
        {
            return value;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "{query} never answered: {result:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn a_real_prometheus_scrapes_rates_and_quantiles_per_tenant_and_a_tenant_sees_only_its_own() {
    let required = std::env::var("VERDICT_REQUIRE_PROMETHEUS").is_ok_and(|v| v == "1");
    let bin = match prometheus() {
        Ok(bin) => bin,
        Err(why) if !required => {
            println!(
                "SKIPPED: no Prometheus here ({why}); VERDICT_REQUIRE_PROMETHEUS=1 fails instead"
            );
            return;
        }
        Err(why) => panic!("VERDICT_REQUIRE_PROMETHEUS=1 and {why}"),
    };
    let served = Served::start(&config("", ""));
    let addr = served.addr;
    // Checks of both tenants all along, so every scrape sees new ones.
    let stop = Arc::new(AtomicBool::new(false));
    let load = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let a = post(
                    addr,
                    "/v1/tenants/alpha/completion",
                    Some(ALPHA),
                    &packet("ready.json"),
                );
                assert_eq!(a.status, 200, "{}", a.text());
                let b = post(
                    addr,
                    "/v1/tenants/beta/progress",
                    Some(BETA),
                    &packet("ready.json"),
                );
                assert_eq!(b.status, 200, "{}", b.text());
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };

    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let job = |name: &str, token: &str| {
        format!(
            "  - job_name: {name}\n    scrape_interval: 1s\n    scrape_timeout: 1s\n    \
             metrics_path: /metrics\n    authorization:\n      type: Bearer\n      \
             credentials: {token}\n    static_configs:\n      - targets: [\"{addr}\"]\n"
        )
    };
    let yml = format!(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n{}{}",
        job("verdict-admin", ADMIN),
        job("verdict-alpha", ALPHA)
    );
    std::fs::write(dir.path().join("prometheus.yml"), yml).unwrap();
    let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
    let _prometheus = Killed(
        Command::new(&bin)
            .arg(format!(
                "--config.file={}",
                dir.path().join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );

    // Both targets up: the bearer tokens were taken.
    let started = Instant::now();
    loop {
        let targets = api(port, "/api/v1/targets", None);
        let active = targets["data"]["activeTargets"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let up = active.iter().filter(|t| t["health"] == "up").count();
        if up == 2 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "targets not up: {active:?}\n{}",
            std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(250));
    }

    for job in ["verdict-admin", "verdict-alpha"] {
        let rate = wait_value(
            port,
            &format!(
                r#"sum(rate(verdict_checks_total{{job="{job}",tenant="alpha",role="completion",status="complete"}}[10s]))"#
            ),
            |v| v > 0.0,
        );
        let p90 = wait_value(
            port,
            &format!(
                r#"histogram_quantile(0.9, sum by (le) (rate(verdict_check_duration_seconds_bucket{{job="{job}",tenant="alpha",role="completion"}}[10s])))"#
            ),
            |v| v.is_finite() && v > 0.0,
        );
        println!(
            "{job}: alpha's checks at {rate:.1}/s, p90 {:.3} ms",
            p90 * 1e3
        );
    }
    // The admin's scrape holds both tenants; alpha's token only alpha.
    wait_value(
        port,
        r#"count(count by (tenant) (verdict_checks_total{job="verdict-admin"}))"#,
        |v| v == 2.0,
    );
    let alpha_sees: Vec<String> = vector(
        port,
        r#"count by (tenant) ({job="verdict-alpha",tenant!=""})"#,
    )
    .iter()
    .map(|s| {
        s["metric"]["tenant"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    })
    .collect();
    assert_eq!(alpha_sees, ["alpha"]);
    assert!(vector(port, r#"{job="verdict-alpha",tenant="beta"}"#).is_empty());

    stop.store(true, Ordering::Relaxed);
    load.join().unwrap();
}
