//! Hostile start functions: a core module's `start` runs while the component
//! is instantiated, before the export is called. Instantiation is part of the
//! call, under the same deadline, fuel and memory cap: a start function that
//! spins is stopped at the deadline, one that traps is a `trap` with its
//! kind, and none of them is a `host_error`. After each, the same host serves
//! the good verifier.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use verdict_policy::{CheckContext, Verdict};
use verdict_sandbox::{CheckError, Limits, TrapKind};
use verdict_test_support::{
    assert_good_verifier_still_works, core_guest, host, read_packet, ready_tenant,
};

/// Checks the ready packet with the good core verifier plus `items`.
fn check_with(items: &str, limits: Limits) -> Result<Verdict, CheckError> {
    let wat = core_guest::with_items(&core_guest::source("good"), items);
    let verifier = host()
        .load_bytes(&core_guest::component(&wat))
        .unwrap_or_else(|e| panic!("loads: {e}"))
        .0;
    let (tenant, _) = ready_tenant("start");
    verifier
        .check(
            &tenant.with_limits(limits),
            &read_packet(),
            &CheckContext::new(),
        )
        .result
}

fn short_deadline() -> Limits {
    Limits {
        timeout_ms: 200,
        ..Limits::default()
    }
}

#[test]
fn a_start_function_that_never_returns_is_stopped_at_the_deadline() {
    let result = check_with(
        "(func $spin (loop $l (br $l))) (start $spin)",
        short_deadline(),
    );
    assert_eq!(result, Err(CheckError::Timeout { limit_ms: 200 }));
    assert_good_verifier_still_works();
}

#[test]
fn a_start_function_that_traps_is_a_trap_with_its_kind() {
    for (items, kind) in [
        (
            "(func $boom unreachable) (start $boom)",
            TrapKind::Unreachable,
        ),
        ("(func $r (call $r)) (start $r)", TrapKind::StackOverflow),
        // An active data segment past the memory's end fails instantiation.
        (
            r#"(data (i32.const 0x7ffffff0) "0123456789abcdef0123")"#,
            TrapKind::MemoryOutOfBounds,
        ),
    ] {
        match check_with(items, short_deadline()) {
            Err(CheckError::Trap { kind: found, .. }) => assert_eq!(found, kind, "{items}"),
            other => panic!("{items}: expected a {kind:?} trap, got {other:?}"),
        }
    }
    assert_good_verifier_still_works();
}

#[test]
fn a_start_function_growing_past_the_memory_cap_is_refused_the_growth_not_the_call() {
    // 60,000 pages (3.9 GiB) is far over the default cap: memory.grow
    // returns -1 to the guest (anything else traps here), which then answers.
    let verdict = check_with(
        "(func $g (if (i32.ne (memory.grow (i32.const 60000)) (i32.const -1)) \
         (then unreachable))) (start $g)",
        short_deadline(),
    )
    .unwrap();
    assert!(verdict.complete);
}
