//! Both compiler tiers stop a guest the same way: the hostile guests run
//! under a host forced to Cranelift and one forced to Winch (the tier of
//! large components, see `CompilerChoice`), and each is stopped by its
//! deadline (spinning or sleeping), its fuel, cancellation, its memory cap
//! and the stack limit, with the same typed errors; the good verifier
//! answers the same under both.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::OnceLock;
use std::time::Duration;
use verdict_policy::{CancelHandle, CheckContext, CheckPacket};
use verdict_sandbox::{
    CheckError, CompilerChoice, HostConfig, Limits, LoadedVerifier, TrapKind, VerifierHost,
};
use verdict_test_support::{
    cache_dir, check_packet, guests, read_packet, read_parts, ready_tenant,
};

const TIERS: [CompilerChoice; 2] = [CompilerChoice::Cranelift, CompilerChoice::Winch];

fn host(tier: CompilerChoice) -> &'static VerifierHost {
    static HOSTS: [OnceLock<VerifierHost>; 2] = [OnceLock::new(), OnceLock::new()];
    let at = TIERS.iter().position(|t| *t == tier).unwrap();
    HOSTS[at].get_or_init(|| {
        VerifierHost::new(HostConfig {
            cache_dir: Some(cache_dir()),
            compiler: tier,
            ..HostConfig::default()
        })
        .unwrap()
    })
}

fn load(tier: CompilerChoice, path: &str) -> LoadedVerifier {
    host(tier).load_file(path).unwrap()
}

fn check(tier: CompilerChoice, path: &str, limits: Limits, packet: &CheckPacket) -> CheckError {
    let (tenant, _) = ready_tenant("tiers");
    load(tier, path)
        .check(&tenant.with_limits(limits), packet, &CheckContext::new())
        .result
        .expect_err("the hostile guest is stopped")
}

fn command(command: &str) -> CheckPacket {
    let mut parts = read_parts();
    parts.output_text = command.into();
    check_packet(parts)
}

#[test]
fn the_good_verifier_answers_the_same_under_both_tiers() {
    let (tenant, _) = ready_tenant("tiers");
    let verdicts: Vec<_> = TIERS
        .iter()
        .map(|tier| {
            load(*tier, guests::ARTIFACT_READY)
                .check(&tenant, &read_packet(), &CheckContext::new())
                .result
                .unwrap()
        })
        .collect();
    assert!(verdicts[0].complete, "{:?}", verdicts[0]);
    assert_eq!(verdicts[0], verdicts[1]);
}

#[test]
fn a_spinning_guest_is_preempted_by_its_deadline_under_both_tiers() {
    for tier in TIERS {
        let limits = Limits {
            fuel: u64::MAX / 2,
            timeout_ms: 50,
            ..Limits::default()
        };
        assert_eq!(
            check(tier, guests::HOSTILE_SPIN, limits, &read_packet()),
            CheckError::Timeout { limit_ms: 50 },
            "{tier:?}"
        );
    }
}

#[test]
fn a_spinning_guest_runs_out_of_fuel_under_both_tiers() {
    for tier in TIERS {
        let limits = Limits {
            fuel: 5_000_000,
            timeout_ms: 60_000,
            ..Limits::default()
        };
        assert_eq!(
            check(tier, guests::HOSTILE_SPIN, limits, &read_packet()),
            CheckError::OutOfFuel { budget: 5_000_000 },
            "{tier:?}"
        );
    }
}

#[test]
fn a_sleeping_guest_is_stopped_at_its_deadline_under_both_tiers() {
    for tier in TIERS {
        let limits = Limits {
            fuel: u64::MAX / 2,
            timeout_ms: 50,
            ..Limits::default()
        };
        assert_eq!(
            check(
                tier,
                guests::HOSTILE_HOST_CALLS,
                limits,
                &command("sleep-ms 10000")
            ),
            CheckError::Timeout { limit_ms: 50 },
            "{tier:?}"
        );
    }
}

#[test]
fn a_spinning_guest_is_stopped_by_cancellation_under_both_tiers() {
    for tier in TIERS {
        let cancel = CancelHandle::new();
        let ctx = CheckContext::new().with_cancel(cancel.clone());
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            cancel.cancel();
        });
        let (tenant, _) = ready_tenant("tiers");
        let limits = Limits {
            fuel: u64::MAX / 2,
            timeout_ms: 60_000,
            ..Limits::default()
        };
        let outcome = load(tier, guests::HOSTILE_SPIN).check(
            &tenant.with_limits(limits),
            &read_packet(),
            &ctx,
        );
        canceller.join().unwrap();
        assert_eq!(outcome.result, Err(CheckError::Cancelled), "{tier:?}");
    }
}

#[test]
fn memory_and_stack_limits_hold_under_both_tiers() {
    for tier in TIERS {
        let limits = Limits {
            memory_bytes: 16 * 1024 * 1024,
            ..Limits::default()
        };
        assert_eq!(
            check(tier, guests::HOSTILE_ALLOC_BOMB, limits, &read_packet()),
            CheckError::OutOfMemory {
                cap_bytes: 16 * 1024 * 1024
            },
            "{tier:?}"
        );
        match check(
            tier,
            guests::HOSTILE_DEEP_RECURSION,
            Limits::default(),
            &read_packet(),
        ) {
            CheckError::Trap { kind, .. } => assert_eq!(kind, TrapKind::StackOverflow, "{tier:?}"),
            other => panic!("{tier:?}: expected a stack overflow, got {other:?}"),
        }
    }
}
