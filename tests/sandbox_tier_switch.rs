//! A component loaded on Winch is compiled again with Cranelift in the
//! background and its verifier switched to that code (issue 46): the same
//! verdicts and fuel on both tiers, checks in flight across the switch
//! never see a half-compiled module, a failed background compile leaves
//! the verifier on Winch without failing a check, and the compile cache
//! gives the next host the Cranelift code at once.
//!
//! The Rust sample is forced onto the Winch tier by a low
//! `max_cranelift_code_bytes` (the Python and JavaScript components take
//! the same path because of their size). A gated compile child (a shell
//! that waits for a file before running the compile child) decides when
//! the Cranelift code arrives, so no assertion depends on timing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use verdict_policy::{CheckContext, Verdict};
use verdict_sandbox::{
    BackgroundCompile, ChildCompiler, CompileIn, HostConfig, Limits, LoadLimits, LoadSource,
    LoadedVerifier, MemoryStore, Tenant, Tier, TierStatus, VerifierHost,
};
use verdict_test_support::{guests, read_packet, ready_tenant};

const CHILD: &str = env!("CARGO_BIN_EXE_verdict-test-compile-child");
/// Long enough for a debug build's compile on a busy machine.
const SETTLE: Duration = Duration::from_secs(300);

/// A host under which the Rust sample loads on Winch.
fn config(optimize: bool) -> HostConfig {
    HostConfig {
        load: LoadLimits {
            max_cranelift_code_bytes: 1024,
            ..LoadLimits::default()
        },
        optimize_in_background: optimize,
        ..HostConfig::default()
    }
}

fn host(config: HostConfig) -> VerifierHost {
    VerifierHost::new(config).unwrap()
}

/// A compile child that compiles for Cranelift only once `gate` exists
/// (and for Winch at once).
fn gated_child(gate: &Path) -> ChildCompiler {
    let script = "if [ \"$VERDICT_COMPILE_CHILD_TIER\" = cranelift ]; then \
                  while [ ! -e \"$0\" ]; do sleep 0.01; done; fi; exec \"$1\"";
    ChildCompiler::new(
        "/bin/sh",
        vec![
            "-c".into(),
            script.into(),
            gate.as_os_str().to_owned(),
            CHILD.into(),
        ],
    )
}

/// A tenant whose artifact A42 is not ready: an incomplete verdict.
fn not_ready_tenant() -> Tenant {
    let store = Arc::new(MemoryStore::new());
    store
        .insert("A42", br#"{"id":"A42","ready":false}"#.to_vec())
        .unwrap();
    Tenant::new("tiers-not-ready", Limits::default(), store)
}

/// The verdicts, fuel and tiers of one check per tenant.
fn checks(verifier: &LoadedVerifier, tenants: &[&Tenant]) -> Vec<(Verdict, u64, Option<Tier>)> {
    let packet = read_packet();
    tenants
        .iter()
        .map(|tenant| {
            let report = verifier.check(tenant, &packet, &CheckContext::new());
            (
                report.result.unwrap(),
                report.metrics.fuel_used,
                report.metrics.tier,
            )
        })
        .collect()
}

#[test]
fn a_check_gets_the_same_verdict_and_fuel_on_both_tiers() {
    let (ready, _) = ready_tenant("tiers-ready");
    let not_ready = not_ready_tenant();
    // Ready instances off, then on (their fuel includes instantiating).
    let tenants = [
        ready.clone().with_ready_instances(0),
        not_ready.clone().with_ready_instances(0),
        ready,
        not_ready,
    ];
    let tenants: Vec<&Tenant> = tenants.iter().collect();

    let stays = host(config(false))
        .load_file(guests::ARTIFACT_READY)
        .unwrap();
    assert_eq!(stays.tier_status(), TierStatus::Winch);
    let mut winch = checks(&stays, &tenants);
    // A second round takes the ready instances the first one left.
    winch.extend(checks(&stays, &tenants));

    let switched = host(config(true))
        .load_file(guests::ARTIFACT_READY)
        .unwrap();
    assert_eq!(switched.wait_for_tier(SETTLE), TierStatus::Optimized);
    let mut cranelift = checks(&switched, &tenants);
    cranelift.extend(checks(&switched, &tenants));

    // The two compilers count fuel alike but for a small constant per
    // check: the Rust sample's checks take 10 units more on Cranelift
    // (9,857 and 9,867), whatever the verdict, with or without a ready
    // instance (the host module's docs).
    let offset = cranelift[0].1 as i64 - winch[0].1 as i64;
    for ((w, c), tenant) in winch.iter().zip(&cranelift).zip(tenants.iter().cycle()) {
        let id = tenant.id();
        assert_eq!(w.2, Some(Tier::Winch), "{id}");
        assert_eq!(c.2, Some(Tier::Cranelift), "{id}");
        assert_eq!(w.0, c.0, "{id}: the same verdict on both tiers");
        // Fuel is wasmtime's count of the guest's operators, the same
        // whichever compiler made the code (the host module's docs).
        assert_eq!(c.1 as i64 - w.1 as i64, offset, "{id}: the same offset");
        assert!(offset.unsigned_abs() * 100 <= w.1, "{id}: within 1%");
        assert!(w.1 > 0, "{id}");
    }
    assert!(winch[0].0.complete && !winch[1].0.complete, "{winch:?}");
}

#[test]
fn a_verifier_switched_mid_stream_never_sees_a_half_compiled_module() {
    let gate_dir = tempfile::tempdir().unwrap();
    let gate = gate_dir.path().join("open");
    let cache = tempfile::tempdir().unwrap();
    let host = host(HostConfig {
        cache_dir: Some(cache.path().to_owned()),
        compile_in: CompileIn::Child(gated_child(&gate)),
        ..config(true)
    });
    let verifier = host.load_file(guests::ARTIFACT_READY).unwrap();
    let (tenant, _) = ready_tenant("tiers-stream");
    let expected = checks(&verifier, &[&tenant]).remove(0);
    assert_eq!(expected.2, Some(Tier::Winch));
    assert!(expected.0.complete);
    // The gate is shut: still compiling, still on Winch.
    assert_eq!(verifier.tier_status(), TierStatus::Optimizing);

    let packet = read_packet();
    let tiers: Vec<Vec<Tier>> = std::thread::scope(|scope| {
        let callers: Vec<_> = (0..3)
            .map(|_| {
                scope.spawn(|| {
                    let mut seen = Vec::new();
                    let mut on_cranelift = 0;
                    let mut cranelift_fuel = None;
                    // Bounded by count, never by time.
                    for _ in 0..200_000 {
                        let report = verifier.check(&tenant, &packet, &CheckContext::new());
                        assert_eq!(report.result.as_ref(), Ok(&expected.0), "{report:?}");
                        let (fuel, tier) = (report.metrics.fuel_used, report.metrics.tier.unwrap());
                        if tier == Tier::Cranelift {
                            on_cranelift += 1;
                            // One count per tier (see the test above).
                            assert_eq!(fuel, *cranelift_fuel.get_or_insert(fuel));
                            assert!(fuel.abs_diff(expected.1) * 100 <= expected.1);
                        } else {
                            assert_eq!(fuel, expected.1);
                        }
                        if seen.last() != Some(&tier) {
                            seen.push(tier);
                        }
                        if on_cranelift == 50 {
                            break;
                        }
                    }
                    seen
                })
            })
            .collect();
        // Every caller is checking on Winch when the compile starts.
        std::fs::write(&gate, b"").unwrap();
        callers.into_iter().map(|c| c.join().unwrap()).collect()
    });
    for seen in &tiers {
        // Winch until the switch, Cranelift from then on, and nothing else.
        assert!(
            seen == &[Tier::Winch, Tier::Cranelift] || seen == &[Tier::Cranelift],
            "{seen:?}"
        );
    }
    assert_eq!(verifier.tier_status(), TierStatus::Optimized);
}

#[test]
fn a_failed_background_compile_leaves_winch_and_checks_go_on() {
    // The gate never opens: the Cranelift compile outlasts its deadline.
    let gate_dir = tempfile::tempdir().unwrap();
    let never = gated_child(&gate_dir.path().join("never"));
    let host = host(HostConfig {
        compile_in: CompileIn::Child(never),
        background_compile: BackgroundCompile {
            timeout: Duration::from_millis(200),
            ..BackgroundCompile::default()
        },
        ..config(true)
    });
    let verifier = host.load_file(guests::ARTIFACT_READY).unwrap();
    let (tenant, _) = ready_tenant("tiers-failed");
    let TierStatus::OptimizeFailed(why) = verifier.wait_for_tier(SETTLE) else {
        panic!("{:?}", verifier.tier_status());
    };
    assert!(why.contains("compile_timeout_ms"), "{why}");
    let (verdict, _, tier) = checks(&verifier, &[&tenant]).remove(0);
    assert!(verdict.complete);
    assert_eq!(tier, Some(Tier::Winch));
}

#[test]
fn the_next_host_loads_the_optimized_code_from_the_cache() {
    let cache = tempfile::tempdir().unwrap();
    let with_cache = || {
        host(HostConfig {
            cache_dir: Some(cache.path().to_owned()),
            ..config(true)
        })
    };
    let bytes = std::fs::read(guests::ARTIFACT_READY).unwrap();
    let first = with_cache();
    let (verifier, source) = first.load_bytes(&bytes).unwrap();
    assert_eq!(source, LoadSource::Compiled);
    assert_eq!(verifier.wait_for_tier(SETTLE), TierStatus::Optimized);
    drop((verifier, first));

    let (tenant, _) = ready_tenant("tiers-next");
    let next = with_cache();
    assert!(!next.would_compile(&bytes));
    for load in [
        next.load_bytes(&bytes).unwrap(),
        (
            with_cache().load_file(guests::ARTIFACT_READY).unwrap(),
            LoadSource::Cache,
        ),
    ] {
        let (verifier, source) = load;
        assert_eq!(source, LoadSource::Cache);
        assert_eq!(verifier.tier_status(), TierStatus::Cranelift);
        let (verdict, _, tier) = checks(&verifier, &[&tenant]).remove(0);
        assert!(verdict.complete);
        assert_eq!(tier, Some(Tier::Cranelift));
    }
    // Told not to optimize, a host loads the Winch code as before.
    let plain = host(HostConfig {
        cache_dir: Some(cache.path().to_owned()),
        ..config(false)
    })
    .load_file(guests::ARTIFACT_READY)
    .unwrap();
    assert_eq!(plain.tier_status(), TierStatus::Winch);
}
