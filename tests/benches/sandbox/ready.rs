//! Issue 37: ready instances, with and without, in one run, alternated.
//!
//! - latency at low load: one caller, each check followed by a pause until
//!   the pool is full again (the same pause for the rows without a pool);
//! - throughput at saturation: two callers back to back for a fixed time;
//! - resident memory per ready instance, and the CPU an idle host burns
//!   with a full pool and without one.

use super::{Stats, fmt, measure_alternately, tenant};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use verdict_policy::{CheckContext, CheckPacket};
use verdict_sandbox::{CallStages, HostConfig, LoadedVerifier, Tenant, VerifierHost};

/// Ready instances per verifier in the rows with a pool.
const READY: usize = 2;

/// A loaded sample: its language and verifier.
struct Sample {
    lang: String,
    verifier: LoadedVerifier,
    packets: Vec<(&'static str, CheckPacket)>,
    iters: usize,
}

pub(crate) fn ready_rows(
    samples: &[(&str, PathBuf)],
    small: &CheckPacket,
    large: &CheckPacket,
) -> Vec<(String, Stats)> {
    let host = VerifierHost::new(HostConfig::default()).unwrap_or_else(|e| panic!("host: {e}"));
    let loaded: Vec<Sample> = samples
        .iter()
        .map(|(lang, path)| {
            let verifier = host
                .load_file(path)
                .unwrap_or_else(|e| panic!("{lang}: {e}"));
            let rust = *lang == "rust";
            let mut packets = vec![("small", small.clone())];
            if rust {
                packets.push(("max", large.clone()));
            }
            Sample {
                lang: (*lang).to_owned(),
                verifier,
                packets,
                iters: if rust { 2000 } else { 100 },
            }
        })
        .collect();
    let plain = tenant();
    let pooled = tenant_named("bench-ready").with_ready_instances(READY);

    let mut rows = Vec::new();
    let mut breakdown = Vec::new();
    for sample in &loaded {
        for (name, packet) in &sample.packets {
            let verifier = &sample.verifier;
            // Spaced, not asleep: the caller keeps its core (as a busy
            // caller would), the other core is left for the refills.
            let pause = || spin(Duration::from_micros(100));
            let stages = std::cell::RefCell::new([Vec::new(), Vec::new()]);
            let check = |tenant: &Tenant| {
                let faults = minor_faults();
                let started = Instant::now();
                let report = verifier.check(tenant, packet, &CheckContext::new());
                let took = started.elapsed();
                let faults = minor_faults().saturating_sub(faults);
                stages.borrow_mut()[usize::from(tenant.ready_instances() > 0)]
                    .push((report.metrics.stages, faults));
                assert!(
                    report.result.is_ok_and(|v| v.complete),
                    "{}: the ready packet is complete",
                    sample.lang
                );
                took
            };
            let mut calls: [Box<dyn FnMut() -> Duration>; 2] = [
                Box::new(|| {
                    let took = check(&plain);
                    pause();
                    took
                }),
                Box::new(|| {
                    let took = check(&pooled);
                    wait_full(verifier);
                    pause();
                    took
                }),
            ];
            let stats = measure_alternately(sample.iters, &mut calls);
            drop(calls);
            let lang = &sample.lang;
            for (kind, stages) in ["no ready instances", "ready instances"]
                .iter()
                .zip(stages.into_inner())
            {
                breakdown.push((format!("{lang}, {kind}, {name} packet"), stages));
            }
            for (stats, kind) in stats
                .into_iter()
                .zip(["no ready instances", "ready instances"])
            {
                rows.push((
                    format!("(a) {lang}, {kind}, {name} packet, one caller at low load"),
                    stats,
                ));
            }
        }
    }
    print_breakdown(&breakdown);
    print_throughput(&loaded, &plain, &pooled);
    print_memory(&host, samples);
    rows
}

/// The median of each stage of the low-load checks, and of the minor page
/// faults the calling thread took during each check.
fn print_breakdown(breakdown: &[(String, Vec<(CallStages, u64)>)]) {
    println!(
        "\nStages of the low-load checks (median of each; faults: minor page faults of the \
         calling thread during the check):\n"
    );
    println!(
        "| checks | setup | instantiate | lower | guest | lift | validate | teardown | sum | faults |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (name, calls) in breakdown {
        let stages: Vec<CallStages> = calls.iter().map(|(s, _)| *s).collect();
        let mut faults: Vec<u64> = calls.iter().map(|(_, f)| *f).collect();
        faults.sort_unstable();
        let faults = faults.get(faults.len() / 2).copied().unwrap_or(0);
        println!("| {name} | {} | {faults} |", super::stage_cells(&stages));
    }
}

fn tenant_named(id: &str) -> Tenant {
    let base = tenant();
    Tenant::new(id, *base.limits(), std::sync::Arc::clone(base.artifacts()))
}

/// Waits (untimed, spinning) until `verifier` holds [`READY`] ready
/// instances.
fn wait_full(verifier: &LoadedVerifier) {
    let until = Instant::now() + Duration::from_secs(10);
    while verifier.ready_instances() < READY && Instant::now() < until {
        std::hint::spin_loop();
    }
}

fn spin(time: Duration) {
    let until = Instant::now() + time;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// Checks per second of two callers back to back for `time`, and the share
/// of checks that instantiated in under 1 µs (took a ready instance).
fn saturated(
    verifier: &LoadedVerifier,
    tenant: &Tenant,
    packet: &CheckPacket,
    time: Duration,
) -> (f64, f64) {
    let done = AtomicU64::new(0);
    let ready = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let report = verifier.check(tenant, packet, &CheckContext::new());
                    if let Err(e) = &report.result {
                        panic!("saturated check failed: {e:?}");
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                    if report.metrics.stages.instantiate < Duration::from_micros(1) {
                        ready.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
        std::thread::sleep(time);
        stop.store(true, Ordering::Relaxed);
    });
    let done = done.load(Ordering::Relaxed) as f64;
    (
        done / started.elapsed().as_secs_f64(),
        ready.load(Ordering::Relaxed) as f64 / done.max(1.0),
    )
}

fn print_throughput(loaded: &[Sample], plain: &Tenant, pooled: &Tenant) {
    println!(
        "\nThroughput at saturation (2 callers back to back, {READY} ready instances; medians of 9 \
         pairs of runs of 1 s (rust) or 5 of 2 s, each pair run in alternating order; the change \
         is the median of the pairs' ratios):\n"
    );
    println!(
        "| sample | no ready instances | ready instances | change | checks on a ready instance |"
    );
    println!("|---|---|---|---|---|");
    for sample in loaded {
        let (time, pairs) = if sample.lang == "rust" {
            (Duration::from_secs(1), 9)
        } else {
            (Duration::from_secs(2), 5)
        };
        for (name, packet) in &sample.packets {
            let (mut without, mut with, mut taken, mut ratios) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for pair in 0..pairs {
                // Alternate which goes first, so a drift of the machine's
                // speed within a pair favours neither.
                let plain_first = pair % 2 == 0;
                let mut plain_rate = 0.0;
                if plain_first {
                    plain_rate = saturated(&sample.verifier, plain, packet, time).0;
                }
                let (rate, share) = saturated(&sample.verifier, pooled, packet, time);
                if !plain_first {
                    plain_rate = saturated(&sample.verifier, plain, packet, time).0;
                }
                without.push(plain_rate);
                with.push(rate);
                taken.push(share);
                ratios.push(rate / plain_rate);
            }
            let median = |mut v: Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let (without, with) = (median(without), median(with));
            println!(
                "| {}, {name} packet | {without:.0} checks/s | {with:.0} checks/s | {:+.1}% | {:.0}% |",
                sample.lang,
                (median(ratios) - 1.0) * 100.0,
                median(taken) * 100.0
            );
        }
    }
}

/// Minor page faults of the calling thread so far (Linux; 0 elsewhere).
fn minor_faults() -> u64 {
    super::minor_faults_in("/proc/thread-self/stat")
}

/// Resident set size of this process, in bytes (Linux; 0 elsewhere).
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// CPU time (user + system) of this process so far (Linux; 0 elsewhere).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let ticks: u64 = stat
        .rsplit_once(')')
        .map(|(_, rest)| {
            rest.split_whitespace()
                .skip(11)
                .take(2)
                .filter_map(|f| f.parse::<u64>().ok())
                .sum()
        })
        .unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

fn print_memory(host: &VerifierHost, samples: &[(&str, PathBuf)]) {
    println!(
        "\nResident memory per ready instance (RSS growth while a tenant's pool fills, over the \
         instances), and the CPU the process burns idle for 2 s (epoch ticker included) with \
         the pools full and with none:\n"
    );
    println!(
        "| sample | ready instances | RSS per ready instance | idle CPU, pools full | idle CPU, no pools |"
    );
    println!("|---|---|---|---|---|");
    let packet = super::read_packet();
    for (lang, path) in samples {
        let n = if *lang == "rust" { 32 } else { 8 };
        let verifier = host
            .load_file(path)
            .unwrap_or_else(|e| panic!("{lang}: {e}"));
        // Warm: one check without a pool.
        let _ = verifier.check(&tenant(), &packet, &CheckContext::new());
        std::thread::sleep(Duration::from_millis(50));
        let idle = |verifier: &LoadedVerifier| {
            let _ = verifier;
            let before = cpu_time();
            std::thread::sleep(Duration::from_secs(2));
            cpu_time().saturating_sub(before)
        };
        let idle_without = idle(&verifier);
        let before = rss();
        let tenant = tenant_named(&format!("bench-memory-{lang}")).with_ready_instances(n);
        let _ = verifier.check(&tenant, &packet, &CheckContext::new());
        let until = Instant::now() + Duration::from_secs(120);
        while verifier.ready_instances() < n && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(100));
        let per = rss().saturating_sub(before) / n as u64;
        let idle_with = idle(&verifier);
        println!(
            "| {lang} | {n} | {:.1} KiB | {} | {} |",
            per as f64 / 1024.0,
            fmt(idle_with),
            fmt(idle_without),
        );
    }
}
