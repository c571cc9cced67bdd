//! The optional `verdict:verifier/warm-up` export (WIT `0.1.1`): `warm` runs
//! once on every fresh instance before its one call, ahead of the check on a
//! ready instance and right after instantiating otherwise. Either way the
//! check sees the same instance state, is charged the same fuel, and is
//! stopped by the same limits.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::time::Duration;
use verdict_policy::CheckContext;
use verdict_sandbox::{CheckError, LoadError, LoadedVerifier, Tenant, TrapKind};
use verdict_test_support::{
    assert_spin_stopped, core_guest, host, read_packet, ready_tenant, spin_stoppers, wait_for_ready,
};

/// A verifier (module fields, with a bump allocator) exporting `warm-up` whose `warm` counts its calls in a global
/// and then runs `WARM_BODY`, and whose `check` (or `progress-key`) answers
/// two digits: the warm-ups and the calls its instance has seen.
const WARMED: &str = r#"  (global $warms (mut i32) (i32.const 0))
  (global $calls (mut i32) (i32.const 0))
  (func (export "verdict:verifier/warm-up@0.1.1#warm")
    (local $i i32)
    (global.set $warms (i32.add (global.get $warms) (i32.const 1)))
    WARM_BODY)
  (func $count
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (i32.store8 (i32.const 64) (i32.add (i32.const 48) (global.get $warms)))
    (i32.store8 (i32.const 65) (i32.add (i32.const 48) (global.get $calls))))
  ENTRY"#;

/// `check`: complete, reason the two digits.
const CHECK: &str = r#"(func (export "verdict:verifier/completion@0.1.1#check") (param i32) (result i32)
    (call $count)
    (i32.store8 (i32.const 16) (i32.const 1))
    (i32.store8 (i32.const 20) (i32.const 1))
    (i32.store (i32.const 24) (i32.const 64))
    (i32.store (i32.const 28) (i32.const 2))
    (i32.store8 (i32.const 32) (i32.const 0))
    (i32.const 16))"#;

/// `progress-key`: the two digits.
const PROGRESS_KEY: &str = r#"(func (export "verdict:verifier/progress@0.1.1#progress-key") (param i32) (result i32)
    (call $count)
    (i32.store (i32.const 16) (i32.const 64))
    (i32.store (i32.const 20) (i32.const 2))
    (i32.const 16))"#;

/// A `warm` that counts down from `n` (about 5 instructions a step).
fn burn(n: u32) -> String {
    format!(
        "(local.set $i (i32.const {n}))
         (block $done (loop $l
           (br_if $done (i32.eqz (local.get $i)))
           (local.set $i (i32.sub (local.get $i) (i32.const 1)))
           (br $l)))"
    )
}

fn warmed(warm_body: &str, entry: &str) -> LoadedVerifier {
    let wat = core_guest::with_bump_allocator(WARMED)
        .replace("WARM_BODY", warm_body)
        .replace("ENTRY", entry);
    host()
        .load_bytes(&core_guest::component(&wat))
        .expect("the warmed verifier loads")
        .0
}

fn pooled(id: &str, n: usize) -> Tenant {
    ready_tenant(id).0.with_ready_instances(n)
}

fn reason(verifier: &LoadedVerifier, tenant: &Tenant) -> String {
    let report = verifier.check(tenant, &read_packet(), &CheckContext::new());
    let verdict = report.result.expect("the check answers");
    verdict.reason.clone().expect("a reason")
}

#[test]
fn warm_runs_once_on_each_instance_before_its_call() {
    let verifier = warmed("", CHECK);
    assert!(verifier.warms_up());
    // Without ready instances: warmed right after instantiating.
    let plain = pooled("warm-plain", 0);
    for round in 0..5 {
        assert_eq!(reason(&verifier, &plain), "11", "round {round}");
    }
    // On ready instances: warmed ahead of the check, and not again.
    let tenant = pooled("warm-ready", 2);
    for round in 0..10 {
        if round > 0 {
            wait_for_ready(&verifier, 1, || {
                assert_eq!(reason(&verifier, &tenant), "11");
            });
        }
        assert_eq!(reason(&verifier, &tenant), "11", "round {round}");
    }
}

#[test]
fn a_progress_key_call_is_warmed_up_too() {
    let verifier = warmed("", PROGRESS_KEY);
    let tenant = pooled("warm-progress", 1);
    for round in 0..4 {
        let key = || {
            let report = verifier.progress_key(&tenant, &read_packet(), &CheckContext::new());
            assert_eq!(report.result.as_deref(), Ok("11"), "round {round}");
        };
        if round > 1 {
            wait_for_ready(&verifier, 1, key);
        }
        key();
    }
}

#[test]
fn warming_up_is_charged_to_the_check_with_or_without_ready_instances() {
    let idle = warmed(&burn(0), CHECK);
    let busy = warmed(&burn(200_000), CHECK);
    let fuel = |verifier: &LoadedVerifier, tenant: &Tenant| {
        let report = verifier.check(tenant, &read_packet(), &CheckContext::new());
        assert_eq!(report.result.unwrap().reason.as_deref(), Some("11"));
        report.metrics.fuel_used
    };
    let plain = pooled("warm-fuel-plain", 0);
    let (idle_plain, busy_plain) = (fuel(&idle, &plain), fuel(&busy, &plain));
    // The count-down ran inside the check's budget.
    assert!(
        busy_plain >= idle_plain + 200_000,
        "{busy_plain} against {idle_plain}"
    );
    let tenant = pooled("warm-fuel-ready", 1);
    for verifier in [&idle, &busy] {
        fuel(verifier, &tenant);
        wait_for_ready(verifier, 1, || {
            fuel(verifier, &tenant);
        });
    }
    assert_eq!(fuel(&idle, &tenant), idle_plain);
    assert_eq!(fuel(&busy, &tenant), busy_plain);
}

#[test]
fn a_trap_in_warm_fails_the_check_and_no_instance_is_kept() {
    let verifier = warmed("unreachable", CHECK);
    let tenant = pooled("warm-trap", 2);
    for _ in 0..3 {
        let report = verifier.check(&tenant, &read_packet(), &CheckContext::new());
        match report.result {
            Err(CheckError::Trap { kind, .. }) => assert_eq!(kind, TrapKind::Unreachable),
            other => panic!("expected a trap, got {other:?}"),
        }
        // The refills failed too: nothing is kept for the next check.
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(verifier.ready_instances(), 0);
    }
}

#[test]
fn a_spinning_warm_is_stopped_by_the_deadline_and_by_fuel() {
    let verifier = warmed("(loop $l (br $l))", CHECK);
    let stoppers = spin_stoppers("warm-spin", 1);
    for _ in 0..2 {
        assert_spin_stopped(&verifier, &stoppers);
    }
}

#[test]
fn a_warm_up_export_of_another_type_is_refused_at_load() {
    let wit = std::fs::read_to_string(core_guest::wit_dir_of("0.1.1").join("verifier.wit"))
        .expect("the 0.1.1 WIT reads");
    let changed = wit.replace("warm: func();", "warm: func() -> u32;");
    assert_ne!(changed, wit, "the WIT declares `warm: func();`");
    let mut resolve = wit_parser::Resolve::default();
    let package = resolve
        .push_str("verifier.wit", &changed)
        .expect("the changed WIT parses");
    let world = resolve
        .select_world(&[package], Some("warm-completion-checker"))
        .expect("the world exists");
    let wat = core_guest::with_bump_allocator(WARMED)
        .replace("WARM_BODY", "(drop (i32.const 0))")
        .replace("ENTRY", CHECK)
        .replace(
            "(func (export \"verdict:verifier/warm-up@0.1.1#warm\")",
            "(func (export \"verdict:verifier/warm-up@0.1.1#warm\") (result i32)",
        )
        .replace("(local $i i32)\n", "(local $i i32)\n    (i32.const 7)\n");
    let bytes = core_guest::encode(&wat, &resolve, world);
    match host().load_bytes(&bytes) {
        Err(LoadError::Link(message)) => assert!(
            message.contains("verdict:verifier/warm-up@0.1.1#warm"),
            "{message}"
        ),
        Err(other) => panic!("expected a link error, got {other}"),
        Ok(_) => panic!("a `warm` returning u32 loaded"),
    }
}
