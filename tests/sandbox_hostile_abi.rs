//! Hostile components written as core modules (`tests/guests/core-*.wat`)
//! and generated compile bombs: every canonical-ABI violation is a `trap`
//! with a precise kind, every structural excess is `load_rejected` naming
//! its limit, oversized answers are refused with their measured length, and
//! none of them is a `host_error`. After each, the same host serves the
//! good verifier.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use verdict_policy::{CheckContext, CheckPacket, VerdictError};
use verdict_sandbox::{CheckError, Limits, LoadError, LoadedVerifier, Tenant};
use verdict_test_support::{
    assert_good_verifier_still_works, check_packet, core_guest, guests, host, load, read_packet,
    read_parts, ready_tenant,
};

fn tenant_with(limits: Limits) -> Tenant {
    let (tenant, _) = ready_tenant("hostile");
    tenant.with_limits(limits)
}

fn core(name: &str) -> LoadedVerifier {
    host()
        .load_bytes(&core_guest::load(name))
        .unwrap_or_else(|e| panic!("{name} loads: {e}"))
        .0
}

/// The error code and trap kind code of a failed check.
fn failure(verifier: &LoadedVerifier, limits: Limits) -> (String, String) {
    match verifier
        .check(&tenant_with(limits), &read_packet(), &CheckContext::new())
        .result
    {
        Ok(v) => panic!("expected a failure, got {v:?}"),
        Err(CheckError::Trap { kind, .. }) => ("trap".into(), kind.code().into()),
        Err(other) => (other.code().into(), String::new()),
    }
}

#[test]
fn a_hand_written_core_module_is_a_working_verifier() {
    let outcome = core("good").check(
        &tenant_with(Limits::default()),
        &read_packet(),
        &CheckContext::new(),
    );
    let verdict = outcome.result.unwrap();
    assert!(verdict.complete);
    assert_eq!(verdict.reason.as_deref(), Some("ok"));
}

#[test]
fn invalid_answers_are_traps_with_their_kind() {
    for (guest, kind) in [
        ("string-len-2gib", "invalid_pointer"),
        ("string-wraps", "invalid_pointer"),
        ("invalid-utf8", "invalid_encoding"),
        ("bad-option-tag", "invalid_discriminant"),
        ("verdict-oob", "invalid_pointer"),
    ] {
        assert_eq!(
            failure(&core(guest), Limits::default()),
            ("trap".into(), kind.into()),
            "{guest}"
        );
        assert_good_verifier_still_works();
    }
}

#[test]
fn the_trap_names_the_value_at_fault() {
    let result = core("invalid-utf8")
        .check(
            &tenant_with(Limits::default()),
            &read_packet(),
            &CheckContext::new(),
        )
        .result;
    let message = result.unwrap_err().to_string();
    assert_eq!(message, "verifier trapped: invalid UTF-8 in verdict.reason");
}

#[test]
fn a_progress_key_outside_memory_is_an_invalid_pointer() {
    let outcome = core("key-oob").progress_key(
        &tenant_with(Limits::default()),
        &read_packet(),
        &CheckContext::new(),
    );
    match outcome.result {
        Err(CheckError::Trap { kind, .. }) => assert_eq!(kind.code(), "invalid_pointer"),
        other => panic!("expected a trap, got {other:?}"),
    }
    assert_good_verifier_still_works();
}

#[test]
fn an_allocator_returning_a_pointer_outside_memory_is_a_bad_allocation() {
    assert_eq!(
        failure(&core("realloc-oob"), Limits::default()),
        ("trap".into(), "bad_allocation".into())
    );
    assert_good_verifier_still_works();
}

#[test]
fn invalid_arguments_to_a_host_import_are_an_abi_violation() {
    assert_eq!(
        failure(&core("import-oob"), Limits::default()),
        ("trap".into(), "abi_violation".into())
    );
    assert_good_verifier_still_works();
}

#[test]
fn an_initial_table_of_a_million_entries_is_refused_at_load() {
    let error = host()
        .load_bytes(&core_guest::load("table-1m"))
        .unwrap_err();
    assert_eq!(
        error,
        LoadError::OverLimit {
            limit: "max_table_elements",
            found: 1_000_000,
            max: 100_000
        }
    );
    assert_eq!(CheckError::from(error).code(), "load_rejected");
    assert_good_verifier_still_works();
}

#[test]
fn twenty_memories_are_refused_at_load() {
    let error = host()
        .load_bytes(&core_guest::load("memories-20"))
        .unwrap_err();
    assert_eq!(
        error,
        LoadError::OverLimit {
            limit: "max_memories",
            found: 20,
            max: 4
        }
    );
    assert_good_verifier_still_works();
}

#[test]
fn a_component_over_the_tenants_instance_or_table_limits_is_load_rejected() {
    let verifier = load(guests::ARTIFACT_READY);
    for limits in [
        Limits {
            instances: 1,
            ..Limits::default()
        },
        Limits {
            table_elements: 0,
            ..Limits::default()
        },
    ] {
        assert_eq!(
            failure(&verifier, limits),
            ("load_rejected".into(), String::new()),
            "{limits:?}"
        );
    }
    assert_good_verifier_still_works();
}

/// A core module text with `functions` tiny functions besides the good
/// verifier's.
fn with_functions(functions: usize) -> String {
    let items: String = (0..functions)
        .map(|i| format!("  (func (result i32) (i32.const {i}))\n"))
        .collect();
    core_guest::with_items(&core_guest::source("good"), &items)
}

#[test]
fn a_compile_bomb_is_refused_before_compiling() {
    let bomb = core_guest::component(&with_functions(100_000));
    let error = host().load_bytes(&bomb).unwrap_err();
    assert_eq!(
        error,
        LoadError::OverLimit {
            limit: "max_functions",
            found: 100_002,
            max: 20_000
        }
    );
    // `inspect` refuses it the same way, without compiling either.
    let inspection = host().inspect(&bomb);
    assert_eq!(inspection.rejected, Some(error.to_string()));
    assert_good_verifier_still_works();
}

#[test]
fn a_loop_bomb_small_in_bytes_is_refused_by_its_compile_cost() {
    // 20,000 loops in one function: 240 KB, but minutes to compile with
    // fuel and epoch checks in every loop.
    let body: String = (0..20_000)
        .map(|_| "loop local.get 0 i32.const 1 i32.sub local.tee 0 br_if 0 end\n")
        .collect();
    let items = format!("  (func (local i32)\n{body})\n");
    let bomb = core_guest::component(&core_guest::with_items(&core_guest::source("good"), &items));
    match host().load_bytes(&bomb) {
        Err(LoadError::OverLimit {
            limit: "max_compile_cost",
            max,
            ..
        }) => assert_eq!(max, host().load_limits().max_compile_cost),
        other => panic!("expected the compile-cost limit, got {other:?}"),
    }
    assert_good_verifier_still_works();
}

#[test]
fn a_component_over_the_size_limit_is_refused() {
    let mut bytes = core_guest::load("good");
    let max = host().load_limits().max_component_bytes;
    // A custom section makes it large without changing what it does.
    let padding = usize::try_from(max).unwrap();
    bytes.push(0); // custom section id
    let mut size = padding + 1 + 1; // name length byte + name
    let mut leb = Vec::new();
    loop {
        let byte = (size & 0x7f) as u8;
        size >>= 7;
        if size == 0 {
            leb.push(byte);
            break;
        }
        leb.push(byte | 0x80);
    }
    bytes.extend_from_slice(&leb);
    bytes.extend_from_slice(&[1, b'p']);
    bytes.resize(bytes.len() + padding, 0);
    match host().load_bytes(&bytes) {
        Err(LoadError::OverLimit {
            limit: "max_component_bytes",
            found,
            max: m,
        }) => {
            assert_eq!(found, bytes.len() as u64);
            assert_eq!(m, max);
        }
        other => panic!("expected the size limit, got {other:?}"),
    }
    assert_good_verifier_still_works();
}

#[test]
fn a_component_within_the_limits_loads_and_runs() {
    let (verifier, _) = host()
        .load_bytes(&core_guest::component(&with_functions(2_000)))
        .unwrap();
    let verdict = verifier
        .check(
            &tenant_with(Limits::default()),
            &read_packet(),
            &CheckContext::new(),
        )
        .result
        .unwrap();
    assert!(verdict.complete);
}

fn command(command: &str) -> CheckPacket {
    let mut packet = read_parts();
    packet.output_text = command.into();
    check_packet(packet)
}

fn big_memory() -> Limits {
    Limits {
        memory_bytes: 200 * 1024 * 1024,
        ..Limits::default()
    }
}

#[test]
fn a_hundred_mib_reason_feedback_or_key_is_refused_with_its_length() {
    const MIB_100: usize = 100 * 1024 * 1024;
    let verifier = load(guests::HOSTILE_HOST_CALLS);
    let tenant = tenant_with(big_memory());
    assert_eq!(
        verifier
            .check(&tenant, &command("reason-mib 100"), &CheckContext::new())
            .result,
        Err(CheckError::InvalidVerdict(VerdictError::ReasonTooLong {
            chars: MIB_100
        }))
    );
    assert_eq!(
        verifier
            .check(&tenant, &command("feedback-mib 100"), &CheckContext::new())
            .result,
        Err(CheckError::InvalidVerdict(VerdictError::FeedbackTooLong {
            chars: MIB_100
        }))
    );
    assert_eq!(
        verifier
            .progress_key(&tenant, &command("key-mib 100"), &CheckContext::new())
            .result,
        Err(CheckError::InvalidProgressKey { chars: MIB_100 })
    );
    assert_good_verifier_still_works();
}
