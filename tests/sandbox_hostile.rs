//! Hostile verifiers, built from source: each yields its typed error, and
//! after each the same host still serves the good verifier correctly.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::Arc;
use std::time::Duration;
use verdict_policy::{CancelHandle, CheckContext, CheckPacket, PacketError, VerdictError};
use verdict_sandbox::{CheckError, DirStore, Limits, LoadError, MemoryStore, Tenant, TrapKind};
use verdict_test_support::{
    assert_good_verifier_still_works, guests, host, load, read_packet, read_parts, ready_tenant,
};

fn tenant_with(limits: Limits) -> Tenant {
    let (tenant, _) = ready_tenant("hostile");
    tenant.with_limits(limits)
}

fn check_err(path: &str, limits: Limits) -> CheckError {
    let verifier = load(path);
    let outcome = verifier.check(&tenant_with(limits), &read_packet(), &CheckContext::new());
    outcome.result.expect_err("hostile verifier must fail")
}

#[test]
fn spinning_guest_is_preempted_by_the_deadline() {
    let limits = Limits {
        fuel: u64::MAX / 2,
        timeout_ms: 50,
        ..Limits::default()
    };
    assert_eq!(
        check_err(guests::HOSTILE_SPIN, limits),
        CheckError::Timeout { limit_ms: 50 }
    );
    assert_good_verifier_still_works();
}

#[test]
fn spinning_guest_is_stopped_by_fuel() {
    let limits = Limits {
        fuel: 5_000_000,
        timeout_ms: 60_000,
        ..Limits::default()
    };
    assert_eq!(
        check_err(guests::HOSTILE_SPIN, limits),
        CheckError::OutOfFuel { budget: 5_000_000 }
    );
    assert_good_verifier_still_works();
}

#[test]
fn cancellation_stops_a_spinning_guest_before_its_deadline() {
    let verifier = load(guests::HOSTILE_SPIN);
    let tenant = tenant_with(Limits {
        fuel: u64::MAX / 2,
        timeout_ms: 60_000,
        ..Limits::default()
    });
    let cancel = CancelHandle::new();
    let canceller = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            cancel.cancel();
        })
    };
    let outcome = verifier.check(
        &tenant,
        &read_packet(),
        &CheckContext::new().with_cancel(cancel.clone()),
    );
    canceller.join().unwrap();
    assert_eq!(outcome.result, Err(CheckError::Cancelled));
    // Stopped by cancellation, far from the 60 s deadline: the wall clock
    // is reported, not asserted against a tight bound.
    assert!(outcome.metrics.duration < Duration::from_secs(30));
    // A handle cancelled before the call stops it without running the guest.
    let outcome = verifier.check(
        &tenant,
        &read_packet(),
        &CheckContext::new().with_cancel(cancel.clone()),
    );
    assert_eq!(outcome.result, Err(CheckError::Cancelled));
    assert_eq!(outcome.metrics.fuel_used, 0);
    assert_good_verifier_still_works();
}

#[test]
fn a_timeout_in_one_call_does_not_fail_concurrent_calls() {
    let spin = load(guests::HOSTILE_SPIN);
    let spinner = std::thread::spawn(move || {
        let tenant = tenant_with(Limits {
            fuel: u64::MAX / 2,
            timeout_ms: 100,
            ..Limits::default()
        });
        spin.check(&tenant, &read_packet(), &CheckContext::new())
            .result
    });
    let good = load(guests::ARTIFACT_READY);
    let (tenant, _) = ready_tenant("neighbour");
    for _ in 0..50 {
        let verdict = good
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap();
        assert!(verdict.complete);
    }
    assert_eq!(
        spinner.join().unwrap(),
        Err(CheckError::Timeout { limit_ms: 100 })
    );
}

#[test]
fn unbounded_allocation_hits_the_memory_cap() {
    let limits = Limits {
        memory_bytes: 16 * 1024 * 1024,
        ..Limits::default()
    };
    let verifier = load(guests::HOSTILE_ALLOC_BOMB);
    let outcome = verifier.check(&tenant_with(limits), &read_packet(), &CheckContext::new());
    assert_eq!(
        outcome.result,
        Err(CheckError::OutOfMemory {
            cap_bytes: 16 * 1024 * 1024
        })
    );
    assert!(outcome.metrics.peak_memory_bytes <= 16 * 1024 * 1024);
    assert_good_verifier_still_works();
}

#[test]
fn deep_recursion_is_a_stack_overflow_trap() {
    match check_err(guests::HOSTILE_DEEP_RECURSION, Limits::default()) {
        CheckError::Trap { kind, .. } => assert_eq!(kind, TrapKind::StackOverflow),
        other => panic!("expected a stack overflow trap, got {other:?}"),
    }
    assert_good_verifier_still_works();
}

#[test]
fn panic_is_a_trap_carrying_the_guest_stderr_tail() {
    match check_err(guests::HOSTILE_PANIC, Limits::default()) {
        CheckError::Trap { kind, stderr_tail } => {
            assert_eq!(kind, TrapKind::Unreachable);
            assert!(
                stderr_tail.contains("hostile verifier panicked on purpose"),
                "stderr tail: {stderr_tail:?}"
            );
        }
        other => panic!("expected a trap, got {other:?}"),
    }
    assert_good_verifier_still_works();
}

#[test]
fn verdict_strings_over_the_bounds_are_invalid() {
    assert_eq!(
        check_err(guests::HOSTILE_HUGE_REASON, Limits::default()),
        CheckError::InvalidVerdict(VerdictError::ReasonTooLong { chars: 401 })
    );
    assert_eq!(
        check_err(guests::HOSTILE_HUGE_FEEDBACK, Limits::default()),
        CheckError::InvalidVerdict(VerdictError::FeedbackTooLong { chars: 2001 })
    );
    assert_good_verifier_still_works();
}

#[test]
fn reading_another_tenants_artifacts_or_escaping_the_root_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let tenant_a = root.path().join("a");
    let tenant_b = root.path().join("other");
    std::fs::create_dir_all(&tenant_a).unwrap();
    std::fs::create_dir_all(&tenant_b).unwrap();
    std::fs::write(tenant_a.join("A42"), br#"{"ready":true}"#).unwrap();
    std::fs::write(tenant_b.join("secret.json"), br#"{"secret":true}"#).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(tenant_b.join("secret.json"), tenant_a.join("link.json")).unwrap();

    let store = Arc::new(DirStore::open(&tenant_a).unwrap());
    let tenant = Tenant::new("a", Limits::default(), store);
    let verifier = load(guests::HOSTILE_CROSS_TENANT);
    let verdict = verifier
        .check(&tenant, &read_packet(), &CheckContext::new())
        .result
        .unwrap();
    assert!(!verdict.complete, "no foreign bytes may be read");
    assert_eq!(
        verdict.reason.as_deref(),
        Some(
            "../other/secret.json=denied;/etc/passwd=denied;other/../../x=denied;secret.json=not-found"
        )
    );

    // The same verifier in tenant `other` sees `secret.json`: scoping is by
    // tenant store, not by verifier.
    let other = Tenant::new(
        "other",
        Limits::default(),
        Arc::new(DirStore::open(&tenant_b).unwrap()),
    );
    let verdict = verifier
        .check(&other, &read_packet(), &CheckContext::new())
        .result
        .unwrap();
    assert!(verdict.complete, "own artifact is readable: {verdict:?}");
    assert_good_verifier_still_works();
}

#[test]
fn reads_per_call_are_capped() {
    let verifier = load(guests::HOSTILE_READ_MANY);
    let outcome = verifier.check(
        &tenant_with(Limits {
            artifact_reads_per_call: 5,
            ..Limits::default()
        }),
        &read_packet(),
        &CheckContext::new(),
    );
    let verdict = outcome.result.unwrap();
    assert_eq!(
        verdict.reason.as_deref(),
        Some("ok=5;stopped=limit-reached")
    );
    assert_eq!(outcome.metrics.artifact_reads, 5);
    assert_good_verifier_still_works();
}

/// `wasi:filesystem` is linked without a single preopened directory: the
/// guest loads, and its read of a host file fails inside the guest.
#[test]
fn a_guest_reading_a_file_loads_and_reads_nothing() {
    let verdict = load(guests::HOSTILE_FORBIDDEN_IMPORT)
        .check(
            &tenant_with(Limits::default()),
            &read_packet(),
            &CheckContext::new(),
        )
        .result
        .unwrap();
    assert!(!verdict.complete, "{verdict:?}");
    assert_eq!(verdict.feedback.as_deref(), Some("no filesystem"));
    assert_good_verifier_still_works();
}

/// A component needing more core instances than the tenant allows is
/// refused at the call, naming the limit (the Rust sample needs 3).
#[test]
fn a_component_over_the_instance_limit_is_refused_naming_it() {
    let limits = Limits {
        instances: 2,
        ..Limits::default()
    };
    assert_eq!(
        check_err(guests::ARTIFACT_READY, limits),
        CheckError::LoadRejected(LoadError::OverLimit {
            limit: "instances",
            found: 3,
            max: 2
        })
    );
    assert_good_verifier_still_works();
}

#[test]
fn corrupt_bytes_are_refused_at_load() {
    assert!(matches!(
        host().load_bytes(b"definitely not wasm"),
        Err(LoadError::Corrupt(_))
    ));
    let mut bytes = std::fs::read(guests::ARTIFACT_READY).unwrap();
    bytes.truncate(bytes.len() / 2);
    assert!(matches!(
        host().load_bytes(&bytes),
        Err(LoadError::Corrupt(_))
    ));
    let mut flipped = std::fs::read(guests::ARTIFACT_READY).unwrap();
    for b in flipped.iter_mut().skip(8).take(64) {
        *b ^= 0xa5;
    }
    assert!(matches!(
        host().load_bytes(&flipped),
        Err(LoadError::Corrupt(_))
    ));
    assert_good_verifier_still_works();
}

#[test]
fn a_core_module_is_refused_at_load() {
    // The smallest valid core module: magic and version 1, no sections.
    let core = b"\0asm\x01\0\0\0";
    assert_eq!(host().load_bytes(core).err(), Some(LoadError::CoreModule));
    assert_good_verifier_still_works();
}

#[test]
fn oversized_packets_are_refused_before_the_guest_runs() {
    // A verifier is only ever handed a `CheckPacket`, which cannot be over
    // 1 MiB: the packet is refused where it is made, before any guest runs.
    let mut packet = read_parts();
    packet.task_state = Some(verdict_policy::TaskStateSnapshot {
        host_scope: "user:1".into(),
        revision: 1,
        generation: 0,
        payload: serde_json::json!({ "blob": "y".repeat(1024 * 1024) }),
    });
    assert!(matches!(
        CheckPacket::from_parts(packet),
        Err(PacketError::TooLarge { .. })
    ));
    assert_good_verifier_still_works();
}

#[test]
fn memory_store_tenants_are_isolated_from_each_other() {
    let verifier = load(guests::ARTIFACT_READY);
    let (ready, _) = ready_tenant("ready");
    let empty = Tenant::new("empty", Limits::default(), Arc::new(MemoryStore::new()));
    assert!(
        verifier
            .check(&ready, &read_packet(), &CheckContext::new())
            .result
            .unwrap()
            .complete
    );
    let verdict = verifier
        .check(&empty, &read_packet(), &CheckContext::new())
        .result
        .unwrap();
    assert!(!verdict.complete);
    assert_eq!(
        verdict.feedback.as_deref(),
        Some("Read and verify artifact A42 before finishing.")
    );
}

#[test]
fn progress_key_over_the_bound_is_invalid() {
    let verifier = load(guests::HOSTILE_HUGE_PROGRESS_KEY);
    let (tenant, _) = ready_tenant("keys");
    let outcome = verifier.progress_key(&tenant, &read_packet(), &CheckContext::new());
    assert_eq!(
        outcome.result,
        Err(CheckError::InvalidProgressKey { chars: 4001 })
    );
    assert_good_verifier_still_works();
}
