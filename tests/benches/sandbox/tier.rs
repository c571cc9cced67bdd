//! `VERDICT_BENCH_ONLY=tier` (issue 46): the two compiler tiers of a large
//! component side by side. Per sample (the Python and JavaScript ones with
//! `VERDICT_POLYGLOT_DIR`, else only the Rust sample forced onto Winch):
//! the load on Winch until its first check, the background Cranelift
//! compile (in a compile child, the default bounds) until the switch, the
//! host's resident memory meanwhile, the ready-instance check p50 on each
//! tier (taking turns, one caller, the same machine state), the fuel on
//! each, and the next host's load from the compile cache.

use super::{Stats, fmt, measure_alternately, stage_cells, tenant};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use verdict_policy::{CheckContext, CheckPacket};
use verdict_sandbox::{
    ChildCompiler, CompileIn, HostConfig, LoadLimits, LoadedVerifier, Tenant, Tier, TierStatus,
    VerifierHost,
};

const CHILD: &str = env!("CARGO_BIN_EXE_verdict-test-compile-child");
/// Ready instances per tenant in the timed checks.
const READY: usize = 2;

/// Resident set size of this process, in bytes (Linux; 0 elsewhere).
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse::<u64>().ok())
        .unwrap_or(0)
        * 4096
}

fn config(cache: &std::path::Path, load: LoadLimits, optimize: bool) -> HostConfig {
    HostConfig {
        cache_dir: Some(cache.to_owned()),
        compile_in: CompileIn::Child(ChildCompiler::new(CHILD, Vec::new())),
        load,
        optimize_in_background: optimize,
        ..HostConfig::default()
    }
}

fn wait_full(verifier: &LoadedVerifier) {
    let until = Instant::now() + Duration::from_secs(10);
    while verifier.ready_instances() < READY && Instant::now() < until {
        std::hint::spin_loop();
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1 << 20) as f64)
}

pub(crate) fn tier_rows(packet: &CheckPacket) -> Vec<(String, Stats)> {
    let mut samples: Vec<(&str, PathBuf, LoadLimits)> = Vec::new();
    if let Some(dir) = std::env::var_os("VERDICT_POLYGLOT_DIR").map(PathBuf::from) {
        for (lang, file) in [
            ("python", "artifact-ready-python.wasm"),
            ("js", "artifact-ready-js.wasm"),
        ] {
            if dir.join(file).is_file() {
                samples.push((lang, dir.join(file), LoadLimits::default()));
            }
        }
    }
    if samples.is_empty() {
        println!("\n(tier: no VERDICT_POLYGLOT_DIR samples; the Rust sample forced onto Winch)");
        let forced = LoadLimits {
            max_cranelift_code_bytes: 1024,
            ..LoadLimits::default()
        };
        samples.push((
            "rust (forced)",
            PathBuf::from(verdict_test_support::guests::ARTIFACT_READY),
            forced,
        ));
    }
    println!(
        "\n| language | load → first check (Winch) | background compile → switch | host RSS after load → peak during compile (Δ) | ready check p50 Winch | ready check p50 Cranelift | Winch/Cranelift | fuel Winch / Cranelift | next host: load (Cranelift, cached) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    let mut breakdown = Vec::new();
    for (lang, path, load) in samples {
        let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let ready = tenant_named(&format!("bench-tier-{lang}")).with_ready_instances(READY);
        let check = |verifier: &LoadedVerifier, tenant: &Tenant| {
            let report = verifier.check(tenant, packet, &CheckContext::new());
            assert!(
                report.result.as_ref().is_ok_and(|v| v.complete),
                "{lang}: {report:?}"
            );
            report.metrics
        };

        let before = rss();
        let host = VerifierHost::new(config(cache.path(), load, true))
            .unwrap_or_else(|e| panic!("host: {e}"));
        let started = Instant::now();
        let optimized = host
            .load_file(&path)
            .unwrap_or_else(|e| panic!("{lang}: {e}"));
        let first = check(&optimized, &ready);
        let to_first = started.elapsed();
        assert_eq!(first.tier, Some(Tier::Winch), "{lang}");
        let after_load = rss();
        // The host's resident memory while the background compile runs.
        let peak = AtomicU64::new(after_load);
        let done = AtomicBool::new(false);
        let status = std::thread::scope(|scope| {
            scope.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    peak.fetch_max(rss(), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
            let status = optimized.wait_for_tier(Duration::from_secs(600));
            done.store(true, Ordering::Relaxed);
            status
        });
        let to_switch = started.elapsed();
        assert_eq!(status, TierStatus::Optimized, "{lang}");
        let peak = peak.load(Ordering::Relaxed);

        // The same component on Winch, for the side-by-side checks.
        let winch = VerifierHost::new(config(cache.path(), load, false))
            .and_then(|h| h.load_file(&path))
            .unwrap_or_else(|e| panic!("{lang}: {e}"));
        let fuel = std::cell::Cell::new([0u64; 2]);
        let stages = std::cell::RefCell::new([Vec::new(), Vec::new()]);
        let mut calls: [Box<dyn FnMut() -> Duration>; 2] = [
            Box::new(|| {
                let t = Instant::now();
                let m = check(&winch, &ready);
                let took = t.elapsed();
                assert_eq!(m.tier, Some(Tier::Winch));
                fuel.set([m.fuel_used, fuel.get()[1]]);
                stages.borrow_mut()[0].push(m.stages);
                wait_full(&winch);
                took
            }),
            Box::new(|| {
                let t = Instant::now();
                let m = check(&optimized, &ready);
                let took = t.elapsed();
                assert_eq!(m.tier, Some(Tier::Cranelift));
                fuel.set([fuel.get()[0], m.fuel_used]);
                stages.borrow_mut()[1].push(m.stages);
                wait_full(&optimized);
                took
            }),
        ];
        let stats = measure_alternately(200, &mut calls);
        drop(calls);
        let [fuel_winch, fuel_cranelift] = fuel.get();
        breakdown.push((lang, stages.into_inner()));

        // The next host finds the Cranelift code in the cache.
        drop((optimized, winch, host));
        let started = Instant::now();
        let next = VerifierHost::new(config(cache.path(), load, true))
            .and_then(|h| h.load_file(&path))
            .unwrap_or_else(|e| panic!("{lang}: {e}"));
        let next_load = started.elapsed();
        assert_eq!(next.tier_status(), TierStatus::Cranelift, "{lang}");

        println!(
            "| {lang} | {} | {} | {} → {} ({}; {} before the host) | {} | {} | {:.2}x | {fuel_winch} / {fuel_cranelift} | {} |",
            fmt(to_first),
            fmt(to_switch),
            mib(after_load),
            mib(peak),
            mib(peak.saturating_sub(after_load)),
            mib(before),
            fmt(stats[0].p50),
            fmt(stats[1].p50),
            stats[0].p50.as_secs_f64() / stats[1].p50.as_secs_f64(),
            fmt(next_load),
        );
        for (stats, tier) in stats.into_iter().zip(["Winch", "Cranelift"]) {
            rows.push((
                format!("(tier) {lang}, ready check, small packet, {tier}"),
                stats,
            ));
        }
    }
    println!("\nReady check stages per tier (median of each stage):\n");
    println!(
        "| language | tier | setup | instantiate | lower | guest | lift | validate | teardown | sum |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (lang, per_tier) in &breakdown {
        for (stages, tier) in per_tier.iter().zip(["Winch", "Cranelift"]) {
            println!("| {lang} | {tier} | {} |", stage_cells(stages));
        }
    }
    rows
}

fn tenant_named(id: &str) -> Tenant {
    let base = tenant();
    Tenant::new(id, *base.limits(), std::sync::Arc::clone(base.artifacts()))
}
