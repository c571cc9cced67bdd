//! Sandbox benchmark: prints one table, all rows measured in one run.
//!
//! `cargo bench -p verdict-tests --bench sandbox`
//!
//! (a) fresh-sandbox check (new store + instantiate + call), small and
//!     maximal packets, with and without the pooling allocator; with it,
//!     through the packed entry point (the default) and through the
//!     standard export, taking turns; and the default alone (one host, one
//!     verifier, back to back, as the issue's rows were first measured);
//! (b) the same check logic as a native Rust closure, direct and with JSON
//!     in/out (what a JSON plugin ABI pays);
//! (c) the same logic in a native process spawned per check (this binary,
//!     re-executed as a child that reads the packet on stdin);
//! (d) compiling a verifier vs loading it from the compile cache (bytes
//!     the host loaded before, found by comparison, and bytes new to it,
//!     hashed; an unchanged file, mapped), each timed until the verifier is
//!     ready, and dropping a loaded verifier;
//! (e) preemption overshoot of a spinning verifier with a 10 ms deadline
//!     (on the caller's clock: from the call to its return), on a quiet
//!     machine and with the CPU 2x oversubscribed (two busy threads per core
//!     beside the call), through the blocking and the async API;
//! (f) a verifier sleeping 100,000 s with a 100 ms deadline: time until its
//!     `timeout`, alone (50 runs) and as 8 such calls at once beside a
//!     thread of good checks (no crosstalk: every good check completes).
//!
//! Then the stage breakdown of (a) (median per stage, from each call's
//! `CallMetrics::stages`) and the ratio lines.
//!
//! `VERDICT_BENCH_ONLY=a,e` runs only the named sections (for profiling;
//! `a-pooled` is (a) with the pooling allocator only; `ready` the rows with
//! and without ready instances, their throughput and memory (`sandbox/ready.rs`,
//! Python and JavaScript too with `VERDICT_POLYGLOT_DIR`); `poly` the table
//! per language; `record` the cost of recording a check,
//! `sandbox/record.rs`; `tier` a large component on Winch and then on
//! Cranelift compiled in the background, side by side, `sandbox/tier.rs`).
//!
//! Loading bounds (compile bombs, worst admitted loads) have their own
//! benchmark: `cargo bench -p verdict-tests --bench load_bounds`.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use verdict_policy::{CheckContext, CheckPacket, OutcomeStatus, Verdict};
use verdict_sandbox::{
    CallStages, CheckError, HostConfig, Limits, MemoryStore, Tenant, VerifierHost,
};
use verdict_test_support::{guests, lean_guests, max_packet, read_packet};

#[path = "sandbox/ready.rs"]
mod ready;
#[path = "sandbox/record.rs"]
mod record;
#[path = "sandbox/tier.rs"]
mod tier;

const CHILD_ENV: &str = "VERDICT_BENCH_CHILD";
const ONLY_ENV: &str = "VERDICT_BENCH_ONLY";

/// Whether section `name` runs (all of them unless `VERDICT_BENCH_ONLY`
/// names some).
fn runs(name: &str) -> bool {
    std::env::var(ONLY_ENV).map_or(true, |only| only.split(',').any(|s| s.trim() == name))
}

/// Runs `f` with `n` threads spinning beside it.
fn oversubscribed<T>(n: usize, f: impl FnOnce() -> T) -> T {
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..n {
            scope.spawn(|| {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        let out = f();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        out
    })
}
const A42: &[u8] = br#"{"id":"A42","ready":true}"#;

/// The host packet as the guest SDK's packet (its observations' strings
/// borrowed): what a native adapter of the same verifier source does before
/// calling it.
fn sdk_packet(p: &CheckPacket) -> verdict_guest::Packet<'_> {
    use verdict_guest::{Effect as E, Observation as O, Outcome as X, OutcomeStatus as S};
    let mut packet = verdict_guest::Packet::new(p.execution_id.clone());
    packet.iteration = p.iteration;
    packet.output_text = p.output_text.clone();
    packet.output_truncated = p.output_truncated;
    packet.observed_tool_calls = p.observed_tool_calls;
    packet.observations_truncated = p.observations_truncated;
    packet.observations = p
        .observations
        .iter()
        .map(|o| {
            let effect = match o.effect {
                verdict_policy::Effect::Read => E::Read,
                verdict_policy::Effect::Write => E::Write,
                verdict_policy::Effect::Unknown => E::Unknown,
            };
            let mut obs = O::new(o.tool_name.as_str(), o.call_id.as_str(), effect);
            obs.outcome = o.outcome.as_ref().map(|x| X {
                status: match x.status {
                    OutcomeStatus::Succeeded => S::Succeeded,
                    OutcomeStatus::Failed => S::Failed,
                    OutcomeStatus::NotStarted => S::NotStarted,
                    OutcomeStatus::Unknown => S::Unknown,
                },
                failure: None,
                executed: x.executed,
                result_fingerprint: x.result_fingerprint.as_deref().map(Into::into),
            });
            obs
        })
        .collect();
    packet
}

/// The `artifact-ready` sample's own logic (its rlib), run natively.
fn native_check(packet: &CheckPacket, store: &verdict_guest::MemoryArtifacts) -> Verdict {
    use verdict_guest::Verifier as _;
    let v = artifact_ready::ArtifactReady.check(&sdk_packet(packet), store);
    Verdict::new(v.complete, v.reason, v.feedback)
        .unwrap_or_else(|e| panic!("the sample answers within the bounds: {e}"))
}

fn child_main() {
    let mut input = String::new();
    if std::io::stdin().read_to_string(&mut input).is_err() {
        std::process::exit(2);
    }
    let Ok(packet) = serde_json::from_str::<CheckPacket>(&input) else {
        std::process::exit(2);
    };
    let store = verdict_guest::MemoryArtifacts::new().with("A42", A42);
    let verdict = native_check(&packet, &store);
    let out = serde_json::to_string(&verdict).unwrap_or_default();
    let _ = std::io::stdout().write_all(out.as_bytes());
}

struct Stats {
    p50: Duration,
    p99: Duration,
    /// The slowest sample.
    max: Duration,
    /// Samples over [`TAIL`], and of how many.
    over_tail: usize,
    samples: usize,
}

/// The overshoot bound the (e) rows are held to: their tail table counts
/// the samples past it (a p99 of 200 samples is the second-worst one, so
/// two late wake-ups make a row's p99; the count shows how rare they are).
const TAIL: Duration = Duration::from_millis(2);

fn measure(iters: usize, mut f: impl FnMut() -> Duration) -> Stats {
    for _ in 0..iters.div_ceil(10) {
        f();
    }
    stats((0..iters).map(|_| f()).collect())
}

/// Like [`measure`] for several calls, taking turns (call 1, call 2, …,
/// call 1, …), so that a change in the machine's load affects them alike.
fn measure_alternately(iters: usize, calls: &mut [impl FnMut() -> Duration]) -> Vec<Stats> {
    for _ in 0..iters.div_ceil(10) {
        calls.iter_mut().for_each(|f| {
            f();
        });
    }
    let mut samples = vec![Vec::with_capacity(iters); calls.len()];
    for _ in 0..iters {
        for (f, samples) in calls.iter_mut().zip(&mut samples) {
            samples.push(f());
        }
    }
    samples.into_iter().map(stats).collect()
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    if samples.is_empty() {
        samples.push(Duration::ZERO);
    }
    Stats {
        p50: samples[samples.len() / 2],
        p99: samples[(samples.len() * 99 / 100).min(samples.len() - 1)],
        max: samples[samples.len() - 1],
        over_tail: samples.iter().filter(|&&d| d > TAIL).count(),
        samples: samples.len(),
    }
}

fn verifier_for(host: &VerifierHost, wasm: &[u8]) -> verdict_sandbox::LoadedVerifier {
    host.load_bytes(wasm).unwrap_or_else(|e| panic!("{e}")).0
}

fn timed(mut f: impl FnMut()) -> impl FnMut() -> Duration {
    move || {
        let t = Instant::now();
        f();
        t.elapsed()
    }
}

/// Like [`timed`], for a call whose result is dropped after the clock
/// stops (a load's time is until the verifier is ready, not until it is
/// gone again).
fn timed_keep<T>(mut f: impl FnMut() -> T) -> impl FnMut() -> Duration {
    move || {
        let t = Instant::now();
        let kept = f();
        let elapsed = t.elapsed();
        drop(kept);
        elapsed
    }
}

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.1} µs")
    }
}

/// The bench's tenant, without ready instances: every row instantiates in
/// the check unless it says otherwise (the ready-instance rows, section
/// `ready`).
fn tenant() -> Tenant {
    let store = Arc::new(MemoryStore::new());
    let _ = store.insert("A42", A42.to_vec());
    Tenant::new("bench", Limits::default(), store).with_ready_instances(0)
}

fn host(pooling: bool, cache: Option<std::path::PathBuf>) -> VerifierHost {
    host_with(HostConfig {
        pooling,
        cache_dir: cache,
        ..HostConfig::default()
    })
}

fn host_with(config: HostConfig) -> VerifierHost {
    VerifierHost::new(config).unwrap_or_else(|e| panic!("host: {e}"))
}

fn main() {
    if std::env::var_os(CHILD_ENV).is_some() {
        child_main();
        return;
    }
    let small = read_packet();
    let large = max_packet();
    let wasm = std::fs::read(guests::ARTIFACT_READY).unwrap_or_else(|e| panic!("{e}"));
    let lean = std::fs::read(lean_guests::ARTIFACT_READY).unwrap_or_else(|e| panic!("{e}"));
    let tenant = tenant();
    let mut rows: Vec<(String, Stats)> = Vec::new();

    // (a) fresh sandbox per check, with the stages of the pooled calls:
    // with the pooling allocator, the packed entry point (the default) and
    // the standard export, and (pooled) the same verifier built lean,
    // measured alternately.
    let mut breakdown: Vec<(String, Vec<CallStages>)> = Vec::new();
    for pooling in [true, false]
        .into_iter()
        .filter(|&pooling| runs("a") || (pooling && runs("a-pooled")))
    {
        let alloc = if pooling { "pooling" } else { "on-demand" };
        if pooling {
            alone_rows(
                &mut rows,
                &wasm,
                &tenant,
                [("small", &small), ("max", &large)],
            );
        }
        let mut entries = vec![("", host(pooling, None), &wasm)];
        if pooling {
            entries.push((
                ", standard export",
                host_with(HostConfig {
                    packed_packets: false,
                    ..HostConfig::default()
                }),
                &wasm,
            ));
            entries.push((", lean build", host(pooling, None), &lean));
        }
        let verifiers: Vec<_> = entries
            .iter()
            .map(|(entry, host, bytes)| (*entry, verifier_for(host, bytes)))
            .collect();
        for (name, packet) in [("small", &small), ("max", &large)] {
            let mut stages = vec![Vec::new(); verifiers.len()];
            let mut calls: Vec<_> = verifiers
                .iter()
                .zip(&mut stages)
                .map(|((_, verifier), stages)| {
                    timed(|| {
                        let report = verifier.check(&tenant, packet, &CheckContext::new());
                        assert!(report.result.is_ok_and(|v| v.complete));
                        stages.push(report.metrics.stages);
                    })
                })
                .collect();
            let stats = measure_alternately(3000, &mut calls);
            drop(calls);
            for (((entry, _), stats), stages) in verifiers.iter().zip(stats).zip(stages) {
                rows.push((
                    format!("(a) wasm, fresh store per check, {alloc}, {name} packet{entry}"),
                    stats,
                ));
                if pooling {
                    breakdown.push((format!("{name}{entry}"), stages));
                }
            }
        }
    }

    // (rec) the cost of recording a check (issue 34).
    if runs("a") || runs("record") {
        rows.extend(record::record_rows(&wasm, &small, &large));
    }

    // (a) with and without ready instances, alternated (issue 37).
    if runs("a") || runs("ready") {
        rows.extend(ready::ready_rows(&ready_samples(), &small, &large));
    }

    // (tier) Winch then Cranelift in the background, side by side (issue 46).
    if runs("tier") {
        rows.extend(tier::tier_rows(&small));
    }

    // (b) the same logic as a native closure: the logic alone on a prebuilt
    // SDK packet, with the packet conversion, and with JSON in/out.
    let store = verdict_guest::MemoryArtifacts::new().with("A42", A42);
    let closure = |p: &CheckPacket| native_check(p, &store);
    for (name, packet) in [("small", &small), ("max", &large)]
        .into_iter()
        .filter(|_| runs("b"))
    {
        let prebuilt = sdk_packet(packet);
        rows.push((
            format!("(b) native closure, logic only, {name} packet"),
            measure(
                20000,
                timed(|| {
                    use verdict_guest::Verifier as _;
                    let v = artifact_ready::ArtifactReady
                        .check(std::hint::black_box(&prebuilt), &store);
                    assert!(v.complete);
                }),
            ),
        ));
        rows.push((
            format!("(b) native closure, with packet conversion, {name} packet"),
            measure(
                20000,
                timed(|| assert!(closure(std::hint::black_box(packet)).complete)),
            ),
        ));
        rows.push((
            format!("(b) native closure, JSON in/out, {name} packet"),
            measure(
                5000,
                timed(|| {
                    let json = serde_json::to_vec(packet).unwrap_or_default();
                    let p: CheckPacket =
                        serde_json::from_slice(&json).unwrap_or_else(|e| panic!("{e}"));
                    let v = closure(&p);
                    let out = serde_json::to_vec(&v).unwrap_or_default();
                    assert!(!out.is_empty() && v.complete);
                }),
            ),
        ));
    }

    // (c) a native process spawned per check.
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    for (name, packet) in [("small", &small), ("max", &large)]
        .into_iter()
        .filter(|_| runs("c"))
    {
        let json = serde_json::to_vec(packet).unwrap_or_default();
        rows.push((
            format!("(c) native process per check, {name} packet"),
            measure(
                200,
                timed(|| {
                    let mut child = Command::new(&exe)
                        .env(CHILD_ENV, "1")
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .spawn()
                        .unwrap_or_else(|e| panic!("{e}"));
                    if let Some(mut stdin) = child.stdin.take() {
                        let _ = stdin.write_all(&json);
                    }
                    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
                    let v: Verdict =
                        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
                    assert!(v.complete);
                }),
            ),
        ));
    }

    // (d) compile vs cached load.
    let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    if runs("d") {
        load_rows(&mut rows, &wasm, &lean, cache.path());
    }

    // (e) preemption overshoot past a 10 ms deadline.
    let host = host(true, None);
    if runs("e") {
        overshoot_rows(&mut rows, &host, &tenant, &small);
    }
    if runs("f") {
        sleep_rows(&mut rows, &host, &tenant, &small, &wasm);
    }
    if std::env::var(ONLY_ENV).is_ok_and(|o| o.split(',').any(|s| s.trim() == "sat")) {
        saturation_rows(
            &small,
            &large,
            &[
                ("no ready instances", tenant.clone().with_ready_instances(0)),
                (
                    "1 ready instance (default)",
                    tenant.clone().with_ready_instances(1),
                ),
            ],
        );
    }
    print_table(&rows, &breakdown);
}

/// The Rust sample, and the Python and JavaScript ones when
/// `VERDICT_POLYGLOT_DIR` holds them.
fn ready_samples() -> Vec<(&'static str, std::path::PathBuf)> {
    let mut samples = vec![("rust", std::path::PathBuf::from(guests::ARTIFACT_READY))];
    if let Some(dir) = std::env::var_os("VERDICT_POLYGLOT_DIR").map(std::path::PathBuf::from) {
        for (lang, file) in [
            ("python", "artifact-ready-python.wasm"),
            ("js", "artifact-ready-js.wasm"),
        ] {
            if dir.join(file).is_file() {
                samples.push((lang, dir.join(file)));
            }
        }
    }
    samples
}

/// The default fresh check (pooling, packed entry point) of one verifier,
/// back to back, with no other host in the process: how the issue's rows
/// were first measured, and what a host serving one verifier sees. (The
/// rows after it take turns between three hosts, to compare them under the
/// same machine state.)
fn alone_rows(
    rows: &mut Vec<(String, Stats)>,
    wasm: &[u8],
    tenant: &Tenant,
    packets: [(&str, &CheckPacket); 2],
) {
    let host = host(true, None);
    let verifier = verifier_for(&host, wasm);
    for (name, packet) in packets {
        let stats = measure(
            3000,
            timed(|| {
                let report = verifier.check(tenant, packet, &CheckContext::new());
                assert!(report.result.is_ok_and(|v| v.complete));
            }),
        );
        rows.push((
            format!("(a) wasm, fresh store per check, pooling, {name} packet, one verifier alone, back to back"),
            stats,
        ));
    }
}

/// One timed `load_bytes` of `bytes`, asserting where the code came from.
fn timed_load_bytes<'a>(
    host: &'a VerifierHost,
    bytes: &'a [u8],
    expected: verdict_sandbox::LoadSource,
) -> impl FnMut() -> Duration + 'a {
    timed_keep(move || {
        let (verifier, source) = host.load_bytes(bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(source, expected);
        verifier
    })
}

fn load_rows(rows: &mut Vec<(String, Stats)>, wasm: &[u8], lean: &[u8], cache: &std::path::Path) {
    // A fresh host without a cache compiles `bytes` every time.
    let compiles = |bytes: &[u8]| {
        measure(
            10,
            timed(|| assert!(host(false, None).load_bytes(bytes).is_ok())),
        )
    };
    rows.push(("(d) load: compile (no cache)".into(), compiles(wasm)));
    // The same verifier built lean (wasm32-unknown-unknown, made a
    // component: from WASI only standard error), compiled and loaded
    // beside it.
    let lean_name = format!(
        "the same verifier built lean ({} KB, only stderr from WASI; this one {} KB)",
        lean.len() / 1000,
        wasm.len() / 1000
    );
    rows.push((
        format!("(d) load: compile (no cache), {lean_name}"),
        compiles(lean),
    ));
    let cached_host = host(false, Some(cache.to_owned()));
    // The same cache through a host that keeps no copies of the bytes it
    // loaded: every load hashes them (BLAKE3), as a process's first load of
    // them does.
    let hashing_host = host_with(HostConfig {
        pooling: false,
        cache_dir: Some(cache.to_owned()),
        content_memo_bytes: 0,
        ..HostConfig::default()
    });
    let _ = cached_host.load_bytes(wasm);
    let _ = cached_host.load_bytes(lean);
    let load_bytes = |expected| measure(200, timed_load_bytes(&cached_host, wasm, expected));
    // The builds and hosts alternately, under the same machine state.
    let cache_hit = verdict_sandbox::LoadSource::Cache;
    let [wasip2_stats, lean_stats, hashed_stats] = measure_alternately(
        200,
        &mut [
            timed_load_bytes(&cached_host, wasm, cache_hit),
            timed_load_bytes(&cached_host, lean, cache_hit),
            timed_load_bytes(&hashing_host, wasm, cache_hit),
        ],
    )
    .try_into()
    .unwrap_or_else(|_| panic!("three rows"));
    rows.push(("(d) load: from compile cache".into(), wasip2_stats));
    rows.push((
        format!("(d) load: from compile cache, {lean_name}"),
        lean_stats,
    ));
    rows.push((
        "(d) load: from compile cache, bytes new to the host (hashed with BLAKE3)".into(),
        hashed_stats,
    ));
    let file = std::env::temp_dir().join(format!("verdict-bench-{}.wasm", std::process::id()));
    std::fs::write(&file, wasm).unwrap_or_else(|e| panic!("{e}"));
    let _ = cached_host.load_file(&file);
    let load_file = || {
        measure(
            200,
            timed_keep(|| {
                cached_host
                    .load_file(&file)
                    .unwrap_or_else(|e| panic!("{e}"))
            }),
        )
    };
    rows.push((
        "(d) load: unchanged file from compile cache (load_file, mapped)".into(),
        load_file(),
    ));
    // The same loads while a verifier of the component is live: shared,
    // nothing loaded (load_bytes still hashes the bytes to know them).
    let held = cached_host
        .load_file(&file)
        .unwrap_or_else(|e| panic!("{e}"));
    rows.push((
        "(d) load: again while a verifier of it is live (load_bytes, shared)".into(),
        load_bytes(verdict_sandbox::LoadSource::Live),
    ));
    rows.push((
        "(d) load: again while a verifier of it is live (load_file, shared)".into(),
        load_file(),
    ));
    drop(held);
    rows.push((
        "(d) load: dropping a loaded verifier".into(),
        measure(200, || {
            let verifier = cached_host
                .load_file(&file)
                .unwrap_or_else(|e| panic!("{e}"));
            let t = Instant::now();
            drop(verifier);
            t.elapsed()
        }),
    ));
    let _ = std::fs::remove_file(&file);
}

fn overshoot_rows(
    rows: &mut Vec<(String, Stats)>,
    host: &VerifierHost,
    tenant: &Tenant,
    small: &CheckPacket,
) {
    let spin = host
        .load_file(guests::HOSTILE_SPIN)
        .unwrap_or_else(|e| panic!("{e}"));
    let spin_tenant = tenant.clone().with_limits(Limits {
        fuel: u64::MAX / 2,
        timeout_ms: 10,
        ..Limits::default()
    });
    let deadline = Duration::from_millis(10);
    // Overshoot is the caller's own clock: from the call to its return,
    // past the deadline.
    let overshoot_of = |v: &verdict_sandbox::LoadedVerifier| {
        let called = Instant::now();
        let outcome = v.check(&spin_tenant, small, &CheckContext::new());
        let returned = called.elapsed();
        assert_eq!(outcome.result, Err(CheckError::Timeout { limit_ms: 10 }));
        returned.saturating_sub(deadline)
    };
    let overshoot = || measure(200, || overshoot_of(&spin));
    rows.push((
        "(e) overshoot past a 10 ms deadline, spinning guest, quiet".into(),
        overshoot(),
    ));
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    // The same with the caller's thread left as it is while it waits (no
    // short slice, no small timer slack, one sleep to the deadline instead
    // of a check-in every millisecond): what `prompt_wakeups` buys,
    // alternated with the default under the same load.
    let plain = VerifierHost::new(HostConfig {
        prompt_wakeups: false,
        ..HostConfig::default()
    })
    .unwrap_or_else(|e| panic!("host: {e}"));
    let plain_spin = plain
        .load_file(guests::HOSTILE_SPIN)
        .unwrap_or_else(|e| panic!("{e}"));
    let overshoot_by = |v| move || overshoot_of(v);
    let both = oversubscribed(2 * cores, || {
        measure_alternately(200, &mut [overshoot_by(&spin), overshoot_by(&plain_spin)])
    });
    let names = [
        "(e) overshoot past a 10 ms deadline, spinning guest",
        "(e) the same, prompt wake-ups off (the caller keeps its slice, sleeps to the deadline)",
    ];
    for (name, stats) in names.into_iter().zip(both) {
        rows.push((
            format!("{name}, {} busy threads on {cores} cores", 2 * cores),
            stats,
        ));
    }
    // The same from a real-time caller (SCHED_FIFO, where this process may
    // make one): the kernel wakes it at its deadline, preempting the busy
    // threads and the spinning guest's worker (which runs at the normal
    // policy), so this is verdict's own overshoot under the load.
    if let Some(stats) = oversubscribed(2 * cores, || {
        real_time(|| measure(200, || overshoot_of(&spin)))
    }) {
        rows.push((
            format!(
                "(e) the same from a real-time (SCHED_FIFO) caller, {} busy threads on {cores} cores",
                2 * cores
            ),
            stats,
        ));
    } else {
        println!(
            "(e) no real-time caller row: this process may not use SCHED_FIFO (root, CAP_SYS_NICE or RLIMIT_RTPRIO)"
        );
    }
    // The floor: a bare 10 ms sleep of this thread under the same load (how
    // late the kernel runs a thread woken by its timer).
    rows.push((
        format!(
            "(e) floor: a bare std::thread::sleep(10 ms), overshoot, {} busy threads on {cores} cores",
            2 * cores
        ),
        oversubscribed(2 * cores, || {
            measure(200, || {
                let called = Instant::now();
                std::thread::sleep(deadline);
                called.elapsed().saturating_sub(deadline)
            })
        }),
    ));
    // The same with one more busy thread: the spinning guest, which runs
    // beside its waiting caller until its guard stops it at the first epoch
    // tick past the deadline, is a busy thread too.
    rows.push((
        format!(
            "(e) floor: the same sleep, {} busy threads (+1 for the guest) on {cores} cores",
            2 * cores + 1
        ),
        oversubscribed(2 * cores + 1, || {
            measure(200, || {
                let called = Instant::now();
                std::thread::sleep(deadline);
                called.elapsed().saturating_sub(deadline)
            })
        }),
    ));
    // The async API on an executor that only parks (futures' block_on):
    // the caller is woken at the deadline by the epoch ticker's timers,
    // which wake it at that instant, not at the next tick.
    rows.push((
        format!(
            "(e) the same through check_async, {} busy threads on {cores} cores",
            2 * cores
        ),
        oversubscribed(2 * cores, || {
            measure(200, || {
                let called = Instant::now();
                let ctx = CheckContext::new();
                let outcome =
                    futures::executor::block_on(spin.check_async(&spin_tenant, small, &ctx));
                let returned = called.elapsed();
                assert_eq!(outcome.result, Err(CheckError::Timeout { limit_ms: 10 }));
                returned.saturating_sub(deadline)
            })
        }),
    ));
    // The same awaited in a task on a tokio multi-thread runtime with a
    // worker per core, as the agent loop's wasm checker does; the task
    // reads its own clock, so the row is the worker's wake-up alone.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores)
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"));
    rows.push((
        format!(
            "(e) the same through check_async in a task on tokio ({cores} workers), {} busy threads on {cores} cores",
            2 * cores
        ),
        oversubscribed(2 * cores, || {
            measure(200, || {
                let (verifier, tenant, packet) =
                    (spin.clone(), spin_tenant.clone(), small.clone());
                let task = runtime.spawn(async move {
                    let called = Instant::now();
                    let ctx = CheckContext::new();
                    let outcome = verifier.check_async(&tenant, &packet, &ctx).await;
                    (called.elapsed(), outcome.result)
                });
                let (returned, result) = runtime
                    .block_on(task)
                    .unwrap_or_else(|e| panic!("the task: {e}"));
                assert_eq!(result, Err(CheckError::Timeout { limit_ms: 10 }));
                returned.saturating_sub(deadline)
            })
        }),
    ));
    drop(runtime);
    // The same with the guard checking the deadline 10x as often: what a
    // smaller fuel yield interval buys when the call's own thread waits
    // for a core.
    let frequent = VerifierHost::new(HostConfig {
        fuel_yield_interval: 100_000,
        ..HostConfig::default()
    })
    .unwrap_or_else(|e| panic!("host: {e}"));
    let frequent_spin = frequent
        .load_file(guests::HOSTILE_SPIN)
        .unwrap_or_else(|e| panic!("{e}"));
    rows.push((
        format!(
            "(e) the same, {} busy threads, fuel yield every 100,000 units (default 1,000,000)",
            2 * cores
        ),
        oversubscribed(2 * cores, || measure(200, || overshoot_of(&frequent_spin))),
    ));
}

/// Runs `f` on a thread of its own at the lowest real-time priority
/// (SCHED_FIFO 1); `None` when this process may not use it.
fn real_time<T: Send>(f: impl FnOnce() -> T + Send) -> Option<T> {
    use thread_priority::{
        RealtimeThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
        set_thread_priority_and_policy, thread_native_id,
    };
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let fifo = ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo);
                set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, fifo)
                    .ok()
                    .map(|()| f())
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

fn sleep_rows(
    rows: &mut Vec<(String, Stats)>,
    host: &VerifierHost,
    tenant: &Tenant,
    small: &CheckPacket,
    wasm: &[u8],
) {
    // (f) a guest sleeping far past a 100 ms deadline.
    let sleeper = host
        .load_file(guests::HOSTILE_HOST_CALLS)
        .unwrap_or_else(|e| panic!("{e}"));
    let sleep_tenant = tenant.clone().with_limits(Limits {
        timeout_ms: 100,
        ..Limits::default()
    });
    let mut sleep_packet = small.clone().into_parts();
    sleep_packet.output_text = "sleep-ms 100000000".into();
    let sleep_packet = CheckPacket::from_parts(sleep_packet).unwrap_or_else(|e| panic!("{e}"));
    let sleep_once = |v: &verdict_sandbox::LoadedVerifier| {
        let outcome = v.check(&sleep_tenant, &sleep_packet, &CheckContext::new());
        assert_eq!(outcome.result, Err(CheckError::Timeout { limit_ms: 100 }));
        outcome.metrics.duration
    };
    rows.push((
        "(f) sleeping guest, 100 ms deadline: call until timeout (50 runs)".into(),
        measure(50, || sleep_once(&sleeper)),
    ));
    let (concurrent, good_checks) = std::thread::scope(|scope| {
        let sleepers: Vec<_> = (0..8)
            .map(|_| {
                let sleeper = sleeper.clone();
                let sleep_once = &sleep_once;
                scope.spawn(move || (0..50).map(|_| sleep_once(&sleeper)).collect::<Vec<_>>())
            })
            .collect();
        let good = verifier_for(host, wasm);
        let mut good_times = Vec::new();
        while sleepers.iter().any(|s| !s.is_finished()) {
            let t = Instant::now();
            let v = good.check(tenant, small, &CheckContext::new()).result;
            assert!(
                v.is_ok_and(|v| v.complete),
                "a good check beside the sleepers failed"
            );
            good_times.push(t.elapsed());
        }
        let all: Vec<Duration> = sleepers
            .into_iter()
            .flat_map(|s| s.join().unwrap_or_default())
            .collect();
        (all, good_times)
    });
    rows.push((
        format!(
            "(f) 8 such calls at once ({} calls), beside good checks",
            concurrent.len()
        ),
        stats(concurrent),
    ));
    rows.push((
        format!(
            "(f) good checks beside the 8 sleepers ({} checks, all complete)",
            good_checks.len()
        ),
        stats(good_checks),
    ));
}

/// The median of one stage over the calls.
fn stage_p50(calls: &[CallStages], stage: fn(&CallStages) -> Duration) -> Duration {
    stats(calls.iter().map(stage).collect()).p50
}

/// The table cells of the stages' medians: setup, instantiate, lower,
/// guest, lift, validate, teardown and their sum, joined by ` | `.
fn stage_cells(calls: &[CallStages]) -> String {
    let stages: [fn(&CallStages) -> Duration; 8] = [
        |s| s.setup,
        |s| s.instantiate,
        |s| s.lower,
        |s| s.guest,
        |s| s.lift,
        |s| s.validate,
        |s| s.teardown,
        CallStages::total,
    ];
    stages
        .iter()
        .map(|f| fmt(stage_p50(calls, *f)))
        .collect::<Vec<_>>()
        .join(" | ")
}

fn print_table(rows: &[(String, Stats)], breakdown: &[(String, Vec<CallStages>)]) {
    println!("| measurement | p50 | p99 |");
    println!("|---|---|---|");
    for (name, s) in rows {
        println!("| {name} | {} | {} |", fmt(s.p50), fmt(s.p99));
    }
    let overshoots: Vec<_> = rows.iter().filter(|(n, _)| n.starts_with("(e)")).collect();
    if !overshoots.is_empty() {
        println!("\nOvershoot tails of (e): the slowest sample, and the samples past {TAIL:?}:\n");
        println!("| measurement | p99 | max | past {TAIL:?} |");
        println!("|---|---|---|---|");
        for (name, s) in overshoots {
            let (p99, max) = (fmt(s.p99), fmt(s.max));
            println!(
                "| {name} | {p99} | {max} | {} of {} |",
                s.over_tail, s.samples
            );
        }
    }
    type Stage = (&'static str, fn(&CallStages) -> Duration);
    let stages: [Stage; 8] = [
        ("setup", |s| s.setup),
        ("instantiate", |s| s.instantiate),
        ("lower packet", |s| s.lower),
        ("guest run", |s| s.guest),
        ("lift answer", |s| s.lift),
        ("validate", |s| s.validate),
        ("store drop", |s| s.teardown),
        ("sum of stages", CallStages::total),
    ];
    if !breakdown.is_empty() {
        println!("\nStages of (a), pooling (median of each stage over the calls):\n");
        let names: Vec<&str> = stages.iter().map(|(n, _)| *n).collect();
        println!("| packet | {} |", names.join(" | "));
        println!("|---|{}", "---|".repeat(names.len()));
        for (packet, calls) in breakdown {
            let cells: Vec<String> = stages
                .iter()
                .map(|(_, f)| fmt(stage_p50(calls, *f)))
                .collect();
            println!("| {packet} | {} |", cells.join(" | "));
        }
    }
    let get = |name: &str| rows.iter().find(|(n, _)| n == name).map(|(_, s)| s.p50);
    if let (Some(a), Some(c)) = (
        get("(a) wasm, fresh store per check, pooling, small packet"),
        get("(c) native process per check, small packet"),
    ) {
        println!(
            "\nratio (c)/(a) small packet p50: {:.0}x",
            c.as_secs_f64() / a.as_secs_f64()
        );
    }
    if let (Some(a), Some(c)) = (
        get("(a) wasm, fresh store per check, pooling, max packet"),
        get("(c) native process per check, max packet"),
    ) {
        println!(
            "ratio (c)/(a) max packet p50: {:.0}x",
            c.as_secs_f64() / a.as_secs_f64()
        );
    }
    for name in ["small", "max"] {
        if let (Some(packed), Some(standard)) = (
            get(&format!(
                "(a) wasm, fresh store per check, pooling, {name} packet"
            )),
            get(&format!(
                "(a) wasm, fresh store per check, pooling, {name} packet, standard export"
            )),
        ) {
            println!(
                "ratio standard export/packed entry point, {name} packet p50: {:.2}x",
                standard.as_secs_f64() / packed.as_secs_f64()
            );
        }
    }
    if let (Some(compile), Some(cached)) = (
        get("(d) load: compile (no cache)"),
        get("(d) load: from compile cache"),
    ) {
        println!(
            "ratio compile/cached load p50: {:.0}x",
            compile.as_secs_f64() / cached.as_secs_f64()
        );
    }
    if runs("poly") {
        polyglot_rows();
    }
}

// ---------------------------------------------------------------------------
// Issue 14: a row set per language, the Rust sample beside the Python and
// JavaScript ones (default componentize-py / componentize-js builds, found
// in $VERDICT_POLYGLOT_DIR as artifact-ready-{python,js}.wasm; skipped with
// a note when absent).

/// Compile (the tier the host picks, once), cached load (`load_file` of an
/// unchanged file through the compile cache), and fresh-instance checks on
/// the ready packet (pooling), per language.
fn polyglot_rows() {
    let dir = std::env::var_os("VERDICT_POLYGLOT_DIR").map(std::path::PathBuf::from);
    let mut samples = vec![("rust", std::path::PathBuf::from(guests::ARTIFACT_READY))];
    // The empty checks (`build.sh --floor`) answer at once: each toolchain's
    // per-check cost before any verifier logic.
    for (lang, file) in [
        ("python", "artifact-ready-python.wasm"),
        ("python, empty check", "empty-python.wasm"),
        ("js", "artifact-ready-js.wasm"),
        ("js, empty check", "empty-js.wasm"),
    ] {
        match &dir {
            Some(dir) if dir.join(file).is_file() => samples.push((lang, dir.join(file))),
            _ => println!(
                "\n(note: no {lang} row: set VERDICT_POLYGLOT_DIR to the output of \
                 sample-verifiers/polyglot/build.sh{})",
                if lang.contains("empty") {
                    " --floor"
                } else {
                    ""
                }
            ),
        }
    }
    let tenant = tenant();
    let packet = read_packet();
    println!(
        "\n| language | size | compile | cached load, read p50 / p99 | cached load, mapped (default) p50 / p99 | fresh check p50 / p99 | fuel |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut details = Vec::new();
    for (lang, path) in &samples {
        let (lang, path) = (*lang, path.clone());
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let started = Instant::now();
        let compiled = host(true, Some(cache.path().to_owned()))
            .load_file(&path)
            .unwrap_or_else(|e| panic!("{lang}: {e}"));
        let compile = started.elapsed();
        drop(compiled);
        let cached_host = VerifierHost::new(HostConfig {
            cache_dir: Some(cache.path().to_owned()),
            map_cache_entries: false,
            ..HostConfig::default()
        })
        .unwrap_or_else(|e| panic!("host: {e}"));
        let iters = if size > 1_000_000 { 20 } else { 200 };
        let load = measure(
            iters,
            timed_keep(|| {
                cached_host
                    .load_file(&path)
                    .unwrap_or_else(|e| panic!("{lang}: {e}"))
            }),
        );
        let mapping_host = VerifierHost::new(HostConfig {
            cache_dir: Some(cache.path().to_owned()),
            map_cache_entries: true,
            ..HostConfig::default()
        })
        .unwrap_or_else(|e| panic!("host: {e}"));
        let mapped = measure(
            iters,
            timed_keep(|| {
                mapping_host
                    .load_file(&path)
                    .unwrap_or_else(|e| panic!("{lang}: {e}"))
            }),
        );
        let verifier = cached_host
            .load_file(&path)
            .unwrap_or_else(|e| panic!("{lang}: {e}"));
        let (check, fuel) = polyglot_checks(
            lang,
            "auto, keep 256 KiB (default)".into(),
            &verifier,
            &tenant,
            &packet,
            &mut details,
        );
        // The same with other amounts of each memory kept resident.
        for bytes in [16 << 20, 64 << 20] {
            let verifier = VerifierHost::new(HostConfig {
                cache_dir: Some(cache.path().to_owned()),
                pool_keep_resident_bytes: bytes,
                ..HostConfig::default()
            })
            .and_then(|h| h.load_file(&path))
            .unwrap_or_else(|e| panic!("{lang}: {e}"));
            let label = format!("auto, keep {} KiB", bytes >> 10);
            polyglot_checks(lang, label, &verifier, &tenant, &packet, &mut details);
        }
        println!(
            "| {lang} | {:.1} MB | {} | {} / {} | {} / {} | {} / {} | {fuel} |",
            size as f64 / 1e6,
            fmt(compile),
            fmt(load.p50),
            fmt(load.p99),
            fmt(mapped.p50),
            fmt(mapped.p99),
            fmt(check.p50),
            fmt(check.p99),
        );
    }
    if std::env::var_os(POLY_CRANELIFT_ENV).is_some() {
        for (lang, path) in &samples {
            let started = Instant::now();
            let verifier = VerifierHost::new(HostConfig {
                compiler: verdict_sandbox::CompilerChoice::Cranelift,
                load: verdict_sandbox::LoadLimits {
                    max_compile_cost: u64::MAX,
                    ..verdict_sandbox::LoadLimits::default()
                },
                ..HostConfig::default()
            })
            .and_then(|h| h.load_file(path))
            .unwrap_or_else(|e| panic!("{lang}: {e}"));
            println!("({lang}: Cranelift compile {})", fmt(started.elapsed()));
            polyglot_checks(
                lang,
                "cranelift".into(),
                &verifier,
                &tenant,
                &packet,
                &mut details,
            );
        }
    } else {
        println!("\n(set {POLY_CRANELIFT_ENV}=1 for Cranelift rows: a 15-20 s compile each)");
    }
    println!(
        "\nFresh check stages (median of each stage over the calls; faults: minor page \
         faults of the process per check, median):\n"
    );
    println!(
        "| language | compiler, pool | setup | instantiate | lower | guest | lift | validate | teardown | sum | faults |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for row in details {
        let mut faults = row.faults;
        faults.sort_unstable();
        println!(
            "| {} | {} | {} | {} |",
            row.lang,
            row.compiler,
            stage_cells(&row.stages),
            faults.get(faults.len() / 2).copied().unwrap_or(0),
        );
    }
}

/// Set to also compile the polyglot samples with Cranelift and time their
/// checks (each compile takes 15-20 s).
const POLY_CRANELIFT_ENV: &str = "VERDICT_BENCH_POLY_CRANELIFT";

/// Where one polyglot sample's fresh checks went.
struct PolyDetail {
    lang: &'static str,
    compiler: String,
    stages: Vec<CallStages>,
    faults: Vec<u64>,
}

/// Times 200 fresh checks of `verifier` (after a warm-up), recording each
/// call's stages and minor page faults; the check times and the fuel.
fn polyglot_checks(
    lang: &'static str,
    compiler: String,
    verifier: &verdict_sandbox::LoadedVerifier,
    tenant: &Tenant,
    packet: &CheckPacket,
    details: &mut Vec<PolyDetail>,
) -> (Stats, u64) {
    let mut fuel = 0;
    let mut stages = Vec::new();
    let mut faults = Vec::new();
    let check = measure(
        200,
        timed(|| {
            let before = minor_faults();
            let report = verifier.check(tenant, packet, &CheckContext::new());
            faults.push(minor_faults().saturating_sub(before));
            fuel = report.metrics.fuel_used;
            stages.push(report.metrics.stages);
            assert!(
                report.result.is_ok_and(|v| v.complete),
                "{lang}: the ready packet is complete"
            );
        }),
    );
    details.push(PolyDetail {
        lang,
        compiler,
        stages,
        faults,
    });
    (check, fuel)
}

/// The process's minor page faults so far (Linux; 0 elsewhere).
fn minor_faults() -> u64 {
    minor_faults_in("/proc/self/stat")
}

/// The minor page faults so far in `stat`, a `/proc` stat file
/// (`/proc/self/stat`, `/proc/thread-self/stat`; 0 when unreadable).
fn minor_faults_in(stat: &str) -> u64 {
    let stat = std::fs::read_to_string(stat).unwrap_or_default();
    // Field 10 (minflt), counted after the parenthesised command name.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(7))
        .and_then(|f| f.parse().ok())
        .unwrap_or(0)
}

/// `VERDICT_BENCH_ONLY=sat`: checks per second of two callers back to back
/// for 1 s, 5 runs, the small and the max packet (to compare builds).
fn saturation_rows(small: &CheckPacket, large: &CheckPacket, tenants: &[(&str, Tenant)]) {
    let host = host(true, None);
    let wasm = std::fs::read(guests::ARTIFACT_READY).unwrap_or_else(|e| panic!("{e}"));
    let verifier = verifier_for(&host, &wasm);
    for (name, packet) in [("small", small), ("max", large)] {
        for (label, tenant) in tenants {
            let mut rates = Vec::new();
            for _ in 0..5 {
                let done = std::sync::atomic::AtomicU64::new(0);
                let stop = std::sync::atomic::AtomicBool::new(false);
                let started = Instant::now();
                std::thread::scope(|scope| {
                    for _ in 0..2 {
                        scope.spawn(|| {
                            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                                let report = verifier.check(tenant, packet, &CheckContext::new());
                                assert!(report.result.is_ok());
                                done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                        });
                    }
                    std::thread::sleep(Duration::from_secs(1));
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                });
                rates.push(
                    done.load(std::sync::atomic::Ordering::Relaxed) as f64
                        / started.elapsed().as_secs_f64(),
                );
            }
            rates.sort_by(f64::total_cmp);
            println!(
                "| (sat) two callers back to back, {name} packet, {label} | {:.0} checks/s (median of 5; min {:.0}, max {:.0}) |",
                rates[2], rates[0], rates[4]
            );
        }
    }
}
