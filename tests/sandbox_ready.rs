//! Ready instances (`Tenant::with_ready_instances`): instantiated ahead of
//! their check, each used once. A check on a ready instance sees no state
//! of an earlier one, is charged what instantiating cost, sees the clock of
//! its own start, and is stopped by the same limits and deadlines.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use verdict_policy::CheckContext;
use verdict_sandbox::{CheckError, Limits, LoadedVerifier, Tenant};
use verdict_test_support::{
    assert_spin_stopped, core_guest, guests, host, load, read_packet, ready_tenant, spin_stoppers,
    wait_for_ready,
};

/// A verifier (module fields, with a bump allocator) that counts its calls
/// in a global and answers complete only on the first call of its instance
/// (reason: the count, as one digit).
const COUNTER: &str = r#"  (global $calls (mut i32) (i32.const 0))
  (func (export "verdict:verifier/completion@0.1.0#check") (param i32) (result i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (i32.store8 (i32.const 64) (i32.add (i32.const 48) (global.get $calls)))
    (i32.store8 (i32.const 16) (i32.eq (global.get $calls) (i32.const 1)))
    (i32.store8 (i32.const 20) (i32.const 1))
    (i32.store (i32.const 24) (i32.const 64))
    (i32.store (i32.const 28) (i32.const 1))
    (i32.store8 (i32.const 32) (i32.const 0))
    (i32.const 16))"#;

fn counter() -> LoadedVerifier {
    host()
        .load_bytes(&core_guest::component(&core_guest::with_bump_allocator(
            COUNTER,
        )))
        .expect("the counter loads")
        .0
}

fn pooled(id: &str, n: usize) -> Tenant {
    ready_tenant(id).0.with_ready_instances(n)
}

#[test]
fn every_check_sees_a_fresh_instance() {
    let verifier = counter();
    let tenant = pooled("ready-counter", 2);
    let packet = read_packet();
    for round in 0..20 {
        if round > 0 {
            wait_for_ready(&verifier, 1, || {
                let report = verifier.check(&tenant, &packet, &CheckContext::new());
                assert_eq!(report.result.unwrap().reason.as_deref(), Some("1"));
            });
        }
        let report = verifier.check(&tenant, &packet, &CheckContext::new());
        let verdict = report.result.expect("the counter answers");
        assert_eq!(verdict.reason.as_deref(), Some("1"), "round {round}");
        assert!(verdict.complete);
    }
}

#[test]
fn a_ready_check_is_charged_what_instantiating_cost() {
    let verifier = load(guests::ARTIFACT_READY);
    let packet = read_packet();
    let plain = verifier.check(
        &ready_tenant("ready-fuel-plain").0,
        &packet,
        &CheckContext::new(),
    );
    let tenant = pooled("ready-fuel", 1);
    let ask = || {
        verifier.check(&tenant, &packet, &CheckContext::new());
    };
    ask();
    wait_for_ready(&verifier, 1, ask);
    let ready = verifier.check(&tenant, &packet, &CheckContext::new());
    assert!(ready.result.unwrap().complete);
    assert!(plain.result.unwrap().complete);
    assert_eq!(ready.metrics.fuel_used, plain.metrics.fuel_used);
    assert_eq!(
        ready.metrics.peak_memory_bytes,
        plain.metrics.peak_memory_bytes
    );
    assert_eq!(ready.metrics.artifact_reads, plain.metrics.artifact_reads);
}

#[test]
fn a_ready_check_sees_the_clock_of_its_own_start() {
    let verifier = load(guests::ARTIFACT_READY);
    let tenant = pooled("ready-clock", 1);
    let ask = || {
        verifier.check(&tenant, &read_packet(), &CheckContext::new());
    };
    ask();
    wait_for_ready(&verifier, 1, ask);
    std::thread::sleep(Duration::from_millis(30));
    let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let report = verifier.check(&tenant, &read_packet(), &CheckContext::new());
    assert!(report.result.is_ok());
    assert!(
        u128::from(report.metrics.wall_clock_ms) + 1 >= before.as_millis(),
        "the guest saw {} ms, the check began at {} ms",
        report.metrics.wall_clock_ms,
        before.as_millis()
    );
}

#[test]
fn deadlines_and_fuel_stop_a_ready_check_as_any_other() {
    let verifier = load(guests::HOSTILE_SPIN);
    let stoppers = spin_stoppers("ready-spin", 1);
    for round in 0..3 {
        if round > 0 {
            wait_for_ready(&verifier, 2, || {
                verifier.check(&stoppers.0, &read_packet(), &CheckContext::new());
                verifier.check(&stoppers.1, &read_packet(), &CheckContext::new());
            });
        }
        assert_spin_stopped(&verifier, &stoppers);
    }
}

#[test]
fn memory_caps_hold_on_a_ready_instance() {
    let verifier = load(guests::HOSTILE_ALLOC_BOMB);
    let limits = Limits {
        memory_bytes: 8 << 20,
        ..Limits::default()
    };
    let tenant = pooled("ready-alloc-bomb", 1).with_limits(limits);
    for round in 0..3 {
        if round > 0 {
            wait_for_ready(&verifier, 1, || {
                verifier.check(&tenant, &read_packet(), &CheckContext::new());
            });
        }
        let report = verifier.check(&tenant, &read_packet(), &CheckContext::new());
        assert_eq!(
            report.result,
            Err(CheckError::OutOfMemory { cap_bytes: 8 << 20 })
        );
    }
}

#[test]
fn changed_limits_drop_the_stale_instances() {
    let verifier = counter();
    let roomy = pooled("ready-limits", 3);
    let ask = || {
        verifier.check(&roomy, &read_packet(), &CheckContext::new());
    };
    ask();
    wait_for_ready(&verifier, 3, ask);
    // The same tenant with a fuel budget too small to run the check: a
    // stale instance (made for the roomy budget) would answer.
    let starved = roomy.clone().with_limits(Limits {
        fuel: 1,
        ..Limits::default()
    });
    for _ in 0..4 {
        let report = verifier.check(&starved, &read_packet(), &CheckContext::new());
        assert_eq!(report.result, Err(CheckError::OutOfFuel { budget: 1 }));
    }
}

/// Waits until `count()` is `want`.
fn wait_until(want: usize, count: impl Fn() -> usize) {
    let until = Instant::now() + Duration::from_secs(30);
    while count() != want {
        assert!(Instant::now() < until, "still {} (want {want})", count());
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_dropped_verifier_drops_its_ready_instances() {
    // Every ready instance's store holds the tenant's artifact store.
    let (tenant, artifacts) = ready_tenant("ready-drop");
    let tenant = tenant.with_ready_instances(2);
    let baseline = Arc::strong_count(&artifacts);
    let bytes = core_guest::component(&core_guest::with_bump_allocator(
        &COUNTER.replace("(i32.const 48)", "(i32.const 47)"),
    ));
    let (verifier, _) = host().load_bytes(&bytes).expect("loads");
    let ask = || {
        verifier.check(&tenant, &read_packet(), &CheckContext::new());
    };
    ask();
    wait_for_ready(&verifier, 2, ask);
    assert!(Arc::strong_count(&artifacts) >= baseline + 2);
    drop(verifier);
    wait_until(baseline, || Arc::strong_count(&artifacts));
}

/// A thread lending its idle time to the teardown work
/// (`run_waiting_jobs`, what `verdict serve`'s threads do before they
/// sleep) is not held long by a verifier whose instantiation runs long:
/// here its start function counts down for most of a second, and the
/// refill made there is given up after a few milliseconds.
#[test]
fn an_idle_thread_gives_up_a_slow_instantiation() {
    let wat = core_guest::with_items(
        &core_guest::source("good"),
        "(func $count (local $i i32) (local.set $i (i32.const 600000000)) \
         (loop $l (local.set $i (i32.sub (local.get $i) (i32.const 1))) \
         (br_if $l (local.get $i)))) (start $count)",
    );
    let verifier = host()
        .load_bytes(&core_guest::component(&wat))
        .expect("loads")
        .0;
    let tenant = pooled("ready-slow-start", 1).with_limits(Limits {
        timeout_ms: 30_000,
        fuel: u64::MAX / 2,
        ..Limits::default()
    });
    let started = Instant::now();
    let report = verifier.check(&tenant, &read_packet(), &CheckContext::new());
    assert!(report.result.is_ok(), "{:?}", report.result);
    let instantiating = started.elapsed();
    // Its store is dropped and the refill queued a moment after the
    // answer: lend this thread often meanwhile.
    let until = Instant::now() + Duration::from_millis(200);
    let mut longest = Duration::ZERO;
    while Instant::now() < until {
        let lent = Instant::now();
        verdict_sandbox::run_waiting_jobs();
        longest = longest.max(lent.elapsed());
    }
    assert!(
        longest < instantiating / 4,
        "lent for {longest:?}; instantiating takes {instantiating:?}"
    );
}
