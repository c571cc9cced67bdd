//! Guest traps on threads that block signals. wasmtime delivers a guest's
//! out-of-bounds access, `unreachable` and division by zero as signals; a
//! fault signal blocked on its thread kills the process. Embedders often
//! block every signal on their threads (and take them on one thread with
//! `sigwait`): on such a caller these guests are still ordinary `trap`s, the
//! caller's mask is as it was afterwards, and the host serves on.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use verdict_policy::{CheckContext, Verdict};
use verdict_sandbox::{CheckError, Limits, LoadedVerifier, TrapKind};
use verdict_test_support::{
    assert_good_verifier_still_works, core_guest, host, read_packet, ready_tenant,
};

/// The good core verifier with a start function made of `items`.
fn verifier_with(items: &str) -> LoadedVerifier {
    let wat = core_guest::with_items(&core_guest::source("good"), items);
    host()
        .load_bytes(&core_guest::component(&wat))
        .unwrap_or_else(|e| panic!("loads: {e}"))
        .0
}

fn limits() -> Limits {
    Limits {
        fuel: u64::MAX / 2,
        timeout_ms: 10_000,
        ..Limits::default()
    }
}

/// Runs `check` on a new thread that blocks every signal; returns its
/// result and whether the thread still blocked `SIGSEGV` and `SIGILL` after.
fn on_a_thread_blocking_all_signals<T: Send + 'static>(
    check: impl FnOnce() -> T + Send + 'static,
) -> (T, bool) {
    std::thread::spawn(move || {
        pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&SigSet::all()), None).unwrap();
        let out = check();
        let mut now = SigSet::empty();
        pthread_sigmask(SigmaskHow::SIG_BLOCK, None, Some(&mut now)).unwrap();
        (
            out,
            now.contains(Signal::SIGSEGV) && now.contains(Signal::SIGILL),
        )
    })
    .join()
    .unwrap()
}

fn blocking_check(items: &str) -> (Result<Verdict, CheckError>, bool) {
    let verifier = verifier_with(items);
    on_a_thread_blocking_all_signals(move || {
        let (tenant, _) = ready_tenant("signals");
        verifier
            .check(
                &tenant.with_limits(limits()),
                &read_packet(),
                &CheckContext::new(),
            )
            .result
    })
}

fn assert_trap(result: Result<Verdict, CheckError>, kind: TrapKind) {
    match result {
        Err(CheckError::Trap { kind: found, .. }) => assert_eq!(found, kind),
        other => panic!("expected a {kind:?} trap, got {other:?}"),
    }
}

#[test]
fn guest_faults_on_a_caller_blocking_every_signal_are_traps() {
    for (items, kind) in [
        ("(func $f unreachable) (start $f)", TrapKind::Unreachable),
        (
            "(func $f (drop (i32.load (i32.const 0x7ffffff0)))) (start $f)",
            TrapKind::MemoryOutOfBounds,
        ),
        (
            "(global $zero (mut i32) (i32.const 0)) \
             (func $f (drop (i32.div_u (i32.const 1) (global.get $zero)))) (start $f)",
            TrapKind::DivisionByZero,
        ),
    ] {
        let (result, still_blocked) = blocking_check(items);
        assert_trap(result, kind);
        assert!(still_blocked, "{items}: the caller's mask was not restored");
    }
    assert_good_verifier_still_works();
}

/// A guest that runs past its first epoch tick moves to a call thread
/// (started by this caller when none is idle, so inheriting its mask) and
/// traps there.
#[test]
fn a_guest_that_faults_after_moving_off_its_caller_is_a_trap() {
    let (result, still_blocked) = blocking_check(
        "(func $f (local $n i32) (local.set $n (i32.const 30000000)) \
         (loop $l (local.set $n (i32.sub (local.get $n) (i32.const 1))) \
         (br_if $l (local.get $n))) unreachable) (start $f)",
    );
    assert_trap(result, TrapKind::Unreachable);
    assert!(still_blocked);
    assert_good_verifier_still_works();
}

#[test]
fn through_the_async_api_too() {
    let verifier = verifier_with("(func $f unreachable) (start $f)");
    let (result, still_blocked) = on_a_thread_blocking_all_signals(move || {
        let (tenant, _) = ready_tenant("signals-async");
        let tenant = tenant.with_limits(limits());
        let packet = read_packet();
        let ctx = CheckContext::new();
        futures::executor::block_on(verifier.check_async(&tenant, &packet, &ctx)).result
    });
    assert_trap(result, TrapKind::Unreachable);
    assert!(still_blocked);
}
