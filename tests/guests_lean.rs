//! A verifier built lean (`wasm32-unknown-unknown`, made a component by
//! `verdict-guest-build`) imports from WASI only standard error (for its
//! panic messages), decides exactly as its `wasm32-wasip2` build does, and
//! with the SDK's allocator grows no memory for a small check.

use std::sync::Arc;
use verdict_policy::{CheckContext, Effect, OutcomeStatus};
use verdict_sandbox::{CheckError, Limits, MemoryStore, Role, Tenant, TrapKind};
use verdict_test_support::{
    check_packet, guests, host, lean_guests, load, observation, read_parts,
};

/// What a lean SDK verifier may import from WASI: standard error and the
/// two stream interfaces its type needs.
const LEAN_WASI: [&str; 3] = [
    "wasi:cli/stderr@0.2.0",
    "wasi:io/error@0.2.0",
    "wasi:io/streams@0.2.0",
];

#[test]
fn a_lean_verifier_imports_only_verdicts_interfaces_and_stderr_and_is_smaller() {
    let lean = std::fs::read(lean_guests::ARTIFACT_READY).unwrap_or_else(|e| panic!("{e}"));
    let wasip2 = std::fs::read(guests::ARTIFACT_READY).unwrap_or_else(|e| panic!("{e}"));
    let seen = host().inspect(&lean);
    assert_eq!(seen.rejected, None, "the host accepts it");
    assert_eq!(seen.roles, vec![Role::Completion]);
    assert_eq!(seen.packed, vec![Role::Completion]);
    let (wasi, verdict): (Vec<_>, Vec<_>) = seen
        .imports
        .iter()
        .partition(|import| import.starts_with("wasi:"));
    assert!(!verdict.is_empty());
    for import in verdict {
        assert!(import.starts_with("verdict:verifier/"), "imports {import}");
    }
    let mut wasi: Vec<&str> = wasi.into_iter().map(String::as_str).collect();
    wasi.sort_unstable();
    assert_eq!(wasi, LEAN_WASI);
    // The same source built for wasm32-wasip2 imports much more of WASI
    // (Rust's std: environment, exit, the terminal, stdin and stdout...).
    let full = host().inspect(&wasip2);
    let full_wasi = full
        .imports
        .iter()
        .filter(|import| import.starts_with("wasi:"))
        .count();
    assert!(full_wasi > LEAN_WASI.len(), "{:?}", full.imports);
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
fn a_lean_verifier_that_panics_reports_the_message_as_its_wasip2_build_does() {
    let (tenant, _) = verdict_test_support::ready_tenant("lean-panic");
    let packet = check_packet(read_parts());
    let [wasip2, lean] =
        [guests::HOSTILE_PANIC, lean_guests::HOSTILE_PANIC].map(|path| {
            match load(path)
                .check(&tenant, &packet, &CheckContext::new())
                .result
            {
                Err(CheckError::Trap { kind, stderr_tail }) => {
                    assert_eq!(kind, TrapKind::Unreachable, "{path}");
                    stderr_tail
                }
                other => panic!("{path}: expected a trap, got {other:?}"),
            }
        });
    // Both name the panic's place and message (std's hook also names the
    // thread and suggests RUST_BACKTRACE; the SDK's says no more).
    let place_and_message =
        "panicked at tests/guests/panic/src/lib.rs:15:9:\nhostile verifier panicked on purpose\n";
    assert!(wasip2.contains(place_and_message), "wasip2: {wasip2:?}");
    assert_eq!(lean, place_and_message);
}

/// Initial pages of the one memory a lean component's core module defines.
fn initial_memory_bytes(component: &[u8]) -> u64 {
    let mut memories = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(component) {
        if let Ok(wasmparser::Payload::MemorySection(reader)) = payload {
            memories.extend(reader.into_iter().map(|m| m.map(|m| m.initial)));
        }
    }
    match memories.as_slice() {
        [Ok(pages)] => pages * 64 * 1024,
        other => panic!("expected one memory, found {other:?}"),
    }
}

#[test]
fn a_lean_verifier_checks_in_its_initial_memory() {
    // Rust's own allocator on wasm32-unknown-unknown grows memory for a
    // fresh instance's first allocation; the SDK's starts in the initial
    // memory above the static data, so a small check grows nothing.
    let bytes = std::fs::read(lean_guests::ARTIFACT_READY).unwrap_or_else(|e| panic!("{e}"));
    let initial = initial_memory_bytes(&bytes);
    let (tenant, _) = verdict_test_support::ready_tenant("lean-memory");
    let outcome = load(lean_guests::ARTIFACT_READY).check(
        &tenant,
        &check_packet(read_parts()),
        &CheckContext::new(),
    );
    assert!(outcome.result.is_ok_and(|v| v.complete));
    assert_eq!(outcome.metrics.peak_memory_bytes, initial);
}

#[test]
fn a_lean_verifier_grows_memory_up_to_the_cap() {
    // Past the initial memory the SDK's allocator grows pages as it needs
    // them (extending its heap): the host's cap stops it as it stops the
    // wasip2 build (`sandbox_hostile`).
    let cap_bytes = 16 * 1024 * 1024;
    let limits = Limits {
        memory_bytes: cap_bytes,
        ..Limits::default()
    };
    let tenant = Tenant::new("lean-bomb", limits, Arc::new(MemoryStore::new()));
    let outcome = load(lean_guests::HOSTILE_ALLOC_BOMB).check(
        &tenant,
        &check_packet(read_parts()),
        &CheckContext::new(),
    );
    assert_eq!(outcome.result, Err(CheckError::OutOfMemory { cap_bytes }));
    // It reached the cap (within one 1 MiB block and its overhead).
    assert!(outcome.metrics.peak_memory_bytes <= cap_bytes);
    assert!(
        outcome.metrics.peak_memory_bytes > cap_bytes - 2 * 1024 * 1024,
        "peak {}",
        outcome.metrics.peak_memory_bytes
    );
}

#[test]
fn a_lean_verifier_sees_every_packet_as_its_wasip2_build_does() {
    // The echo guest serializes the packet it got to JSON (and hashes an
    // echo too long to answer): thousands of allocations, reallocations
    // and frees of every size, up to the largest packet's 32 KiB of output
    // and 100 observations, through the SDK's lean allocator.
    let (tenant, _) = verdict_test_support::ready_tenant("lean-echo");
    let builds = [load(guests::PACKET_ECHO), load(lean_guests::PACKET_ECHO)];
    for packet in [
        verdict_test_support::read_packet(),
        verdict_test_support::max_packet(),
    ] {
        let [wasip2, lean] = builds.each_ref().map(|verifier| {
            let key = verifier
                .progress_key(&tenant, &packet, &CheckContext::new())
                .result;
            let verdict = verifier
                .check(&tenant, &packet, &CheckContext::new())
                .result;
            (key, verdict)
        });
        assert!(wasip2.0.is_ok() && wasip2.1.is_ok(), "{wasip2:?}");
        assert_eq!(lean, wasip2);
    }
}
