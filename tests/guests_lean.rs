//! A verifier built lean (`wasm32-unknown-unknown`, made a component by
//! `verdict-guest-build`) imports nothing from WASI and decides exactly as
//! its `wasm32-wasip2` build does.

use std::sync::Arc;
use verdict_policy::{CheckContext, Effect, OutcomeStatus};
use verdict_sandbox::{CheckError, Limits, MemoryStore, Role, Tenant, TrapKind};
use verdict_test_support::{
    check_packet, guests, host, lean_guests, load, observation, read_parts,
};

#[test]
fn a_lean_verifier_imports_only_verdicts_interfaces_and_is_smaller() {
    let lean = std::fs::read(lean_guests::ARTIFACT_READY).unwrap_or_else(|e| panic!("{e}"));
    let wasip2 = std::fs::read(guests::ARTIFACT_READY).unwrap_or_else(|e| panic!("{e}"));
    let seen = host().inspect(&lean);
    assert_eq!(seen.rejected, None, "the host accepts it");
    assert_eq!(seen.roles, vec![Role::Completion]);
    assert_eq!(seen.packed, vec![Role::Completion]);
    assert!(!seen.imports.is_empty());
    for import in &seen.imports {
        assert!(import.starts_with("verdict:verifier/"), "imports {import}");
    }
    // The same source built for wasm32-wasip2 imports WASI (Rust's std).
    let full = host().inspect(&wasip2);
    assert!(
        full.imports
            .iter()
            .any(|import| import.starts_with("wasi:"))
    );
    assert!(
        lean.len() < wasip2.len(),
        "{} vs {} bytes",
        lean.len(),
        wasip2.len()
    );
}

#[test]
fn a_lean_verifier_decides_as_its_wasip2_build_does() {
    let builds = [
        load(guests::ARTIFACT_READY),
        load(lean_guests::ARTIFACT_READY),
    ];
    let store = Arc::new(MemoryStore::new());
    let tenant = Tenant::new("lean", Limits::default(), store.clone());
    let no_read = {
        let mut parts = read_parts();
        parts.observations = vec![observation(
            "read_artifact",
            "call-1",
            Effect::Read,
            OutcomeStatus::Failed,
        )];
        check_packet(parts)
    };
    let read = check_packet(read_parts());
    // No artifact, a read that failed, an artifact not ready, a ready one.
    let cases = [
        (None, &no_read),
        (None, &read),
        (Some(r#"{"ready": false}"#), &read),
        (Some("not json"), &read),
        (Some(r#"{"ready": true}"#), &read),
    ];
    let mut completed = 0;
    for (artifact, packet) in cases {
        if let Some(text) = artifact {
            store
                .insert("A42", text.as_bytes().to_vec())
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let [wasip2, lean] = builds
            .each_ref()
            .map(|verifier| verifier.check(&tenant, packet, &CheckContext::new()).result);
        let wasip2 = wasip2.unwrap_or_else(|e| panic!("wasip2 build: {e}"));
        assert_eq!(lean, Ok(wasip2.clone()), "artifact {artifact:?}");
        completed += usize::from(wasip2.complete);
    }
    assert_eq!(
        completed, 1,
        "only the ready artifact after a read completes"
    );
}

#[test]
fn a_lean_verifier_that_panics_traps_without_a_message() {
    // What a lean build gives up: standard error. Its wasm32-wasip2 build
    // leaves the panic message in the trap's stderr tail (`sandbox_hostile`).
    let verifier = load(lean_guests::HOSTILE_PANIC);
    let (tenant, _) = verdict_test_support::ready_tenant("lean-panic");
    let outcome = verifier.check(&tenant, &check_packet(read_parts()), &CheckContext::new());
    assert_eq!(
        outcome.result,
        Err(CheckError::Trap {
            kind: TrapKind::Unreachable,
            stderr_tail: String::new(),
        })
    );
}
