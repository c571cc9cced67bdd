//! The sample verifiers through the sandbox: verdicts, progress keys, dual
//! roles, metrics, the compile cache and inspection.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::Arc;
use verdict_policy::{CheckContext, Effect, OutcomeStatus};
use verdict_sandbox::{
    CheckError, HostConfig, Limits, LoadSource, MemoryStore, Role, Tenant, VerifierHost, WasmKind,
};
use verdict_test_support::{
    check_packet, guests, host, load, max_packet, observation, read_packet, read_parts,
    ready_tenant,
};

#[test]
fn artifact_ready_needs_both_the_artifact_and_a_successful_read() {
    let verifier = load(guests::ARTIFACT_READY);
    assert!(verifier.has_completion() && !verifier.has_progress());
    let (tenant, store) = ready_tenant("t");

    let outcome = verifier.check(&tenant, &read_packet(), &CheckContext::new());
    assert!(outcome.result.unwrap().complete);
    assert_eq!(outcome.metrics.artifact_reads, 1);
    assert!(outcome.metrics.fuel_used > 0);
    assert!(outcome.metrics.peak_memory_bytes > 0);

    // Premature prose: no read observed.
    let mut premature = read_parts();
    premature.observations.clear();
    premature.observed_tool_calls = 0;
    let premature = check_packet(premature);
    let verdict = verifier
        .check(&tenant, &premature, &CheckContext::new())
        .result
        .unwrap();
    assert!(!verdict.complete);
    assert_eq!(
        verdict.feedback.as_deref(),
        Some("Read and verify artifact A42 before finishing.")
    );

    // A failed read does not count.
    let mut failed = read_parts();
    failed.observations[0] = observation("read_artifact", "c", Effect::Read, OutcomeStatus::Failed);
    let failed = check_packet(failed);
    assert!(
        !verifier
            .check(&tenant, &failed, &CheckContext::new())
            .result
            .unwrap()
            .complete
    );

    // The artifact says not ready.
    store.insert("A42", br#"{"ready":false}"#.to_vec()).unwrap();
    assert!(
        !verifier
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap()
            .complete
    );

    // The maximal packet is accepted and checked.
    store.insert("A42", br#"{"ready":true}"#.to_vec()).unwrap();
    assert!(
        verifier
            .check(&tenant, &max_packet(), &CheckContext::new())
            .result
            .unwrap()
            .complete
    );
}

#[test]
fn artifact_over_the_per_read_limit_is_not_evidence() {
    let verifier = load(guests::ARTIFACT_READY);
    let (tenant, _) = ready_tenant("t");
    let tenant = tenant.with_limits(Limits {
        artifact_bytes_per_read: 4,
        ..Limits::default()
    });
    let outcome = verifier.check(&tenant, &read_packet(), &CheckContext::new());
    assert!(!outcome.result.unwrap().complete);
    assert_eq!(outcome.metrics.artifact_bytes, 0);
}

#[test]
fn receipt_required_needs_a_successful_write_and_its_receipt() {
    let verifier = load(guests::RECEIPT_REQUIRED);
    let store = Arc::new(MemoryStore::new());
    let tenant = Tenant::new("t", Limits::default(), store.clone());
    let mut packet = read_parts();
    packet.observations = vec![observation(
        "save",
        "w1",
        Effect::Write,
        OutcomeStatus::Succeeded,
    )];
    packet.observed_tool_calls = 1;
    let packet = check_packet(packet);
    assert!(
        !verifier
            .check(&tenant, &packet, &CheckContext::new())
            .result
            .unwrap()
            .complete
    );
    store
        .insert("receipts/w1.json", br#"{"call_id":"w1"}"#.to_vec())
        .unwrap();
    let verdict = verifier
        .check(&tenant, &packet, &CheckContext::new())
        .result
        .unwrap();
    assert!(verdict.complete, "{verdict:?}");
    // Without the write observation the receipt alone is not enough.
    assert!(
        !verifier
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap()
            .complete
    );
}

#[test]
fn revision_progress_key_follows_the_artifact_revision() {
    let verifier = load(guests::REVISION_PROGRESS);
    assert!(verifier.has_progress() && !verifier.has_completion());
    let store = Arc::new(MemoryStore::new());
    let tenant = Tenant::new("t", Limits::default(), store.clone());
    let key = |v: &verdict_sandbox::LoadedVerifier| {
        v.progress_key(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap()
    };
    assert_eq!(key(&verifier), "missing");
    store.insert("A42", b"v1".to_vec()).unwrap();
    let first = key(&verifier);
    assert_eq!(key(&verifier), first, "unchanged artifact, unchanged key");
    store.insert("A42", b"v2".to_vec()).unwrap();
    assert_ne!(key(&verifier), first);
    assert_eq!(
        verifier
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result,
        Err(CheckError::Unsupported("completion"))
    );
}

#[test]
fn one_component_can_implement_both_roles() {
    let verifier = load(guests::GOOD_BOTH);
    assert!(verifier.has_completion() && verifier.has_progress());
    let (tenant, store) = ready_tenant("t");
    assert!(
        verifier
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap()
            .complete
    );
    let before = verifier
        .progress_key(&tenant, &read_packet(), &CheckContext::new())
        .result
        .unwrap();
    store.insert("A42", b"{}".to_vec()).unwrap();
    let after = verifier
        .progress_key(&tenant, &read_packet(), &CheckContext::new())
        .result
        .unwrap();
    assert_ne!(before, after);
}

#[test]
fn compile_cache_is_used_and_a_damaged_entry_is_recompiled() {
    let dir = tempfile::tempdir().unwrap();
    let new_host = || {
        VerifierHost::new(HostConfig {
            cache_dir: Some(dir.path().to_owned()),
            pooling: false,
            ..HostConfig::default()
        })
        .unwrap()
    };
    let bytes = std::fs::read(guests::ARTIFACT_READY).unwrap();
    let (_, source) = new_host().load_bytes(&bytes).unwrap();
    assert_eq!(source, LoadSource::Compiled);
    let (verifier, source) = new_host().load_bytes(&bytes).unwrap();
    assert_eq!(source, LoadSource::Cache);
    let (tenant, _) = ready_tenant("t");
    assert!(
        verifier
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap()
            .complete
    );

    // Damage every cached file: the host must refuse it and recompile.
    let mut damaged = 0;
    for entry in walk(dir.path()) {
        // By rename, as damage can reach an entry that may be mapped.
        let replacement = entry.with_extension("replacement");
        std::fs::write(&replacement, b"not a compiled component").unwrap();
        std::fs::rename(&replacement, &entry).unwrap();
        damaged += 1;
    }
    assert_eq!(damaged, 1);
    let (verifier, source) = new_host().load_bytes(&bytes).unwrap();
    assert_eq!(source, LoadSource::Compiled);
    assert!(
        verifier
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap()
            .complete
    );
    let (_, source) = new_host().load_bytes(&bytes).unwrap();
    assert_eq!(source, LoadSource::Cache);
}

/// A component loaded again while a verifier of it is live is shared, not
/// loaded again (with or without a compile cache); once every clone is
/// dropped, the host does not keep it: the next load loads its code.
#[test]
fn a_live_verifier_is_shared_and_a_dropped_one_is_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(guests::ARTIFACT_READY).unwrap();
    let (tenant, _) = ready_tenant("live");
    for cache_dir in [None, Some(dir.path().to_owned())] {
        let cached = cache_dir.is_some();
        let host = VerifierHost::new(HostConfig {
            cache_dir,
            ..HostConfig::default()
        })
        .unwrap();
        let (first, source) = host.load_bytes(&bytes).unwrap();
        assert_eq!(source, LoadSource::Compiled, "cached: {cached}");
        let (again, source) = host.load_bytes(&bytes).unwrap();
        assert_eq!(source, LoadSource::Live, "cached: {cached}");
        assert_eq!(again.digest(), first.digest());
        // By path too (the file's identity is new here: read, then shared).
        let by_path = host.load_file(guests::ARTIFACT_READY).unwrap();
        assert_eq!(by_path.digest(), first.digest());
        drop(first);
        // A clone still holds it.
        let (_, source) = host.load_bytes(&bytes).unwrap();
        assert_eq!(source, LoadSource::Live, "cached: {cached}");
        let verdict = again
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap();
        assert!(verdict.complete, "{verdict:?}");
        drop((again, by_path));
        let (_, source) = host.load_bytes(&bytes).unwrap();
        let loaded = if cached {
            LoadSource::Cache
        } else {
            LoadSource::Compiled
        };
        assert_eq!(source, loaded, "nothing kept once dropped");
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "cwasm") {
            out.push(path);
        }
    }
    out
}

#[test]
fn inspect_reports_roles_imports_and_acceptance() {
    let bytes = std::fs::read(guests::GOOD_BOTH).unwrap();
    let info = host().inspect(&bytes);
    assert_eq!(info.kind, WasmKind::Component);
    assert_eq!(info.digest.len(), 64);
    assert!(info.roles.contains(&Role::Completion) && info.roles.contains(&Role::Progress));
    assert!(
        info.imports
            .iter()
            .any(|i| i.starts_with("verdict:verifier/artifacts@"))
    );
    assert_eq!(info.rejected, None);

    let bytes = std::fs::read(guests::HOSTILE_FORBIDDEN_IMPORT).unwrap();
    let info = host().inspect(&bytes);
    assert!(
        info.imports
            .iter()
            .any(|i| i.starts_with("wasi:filesystem/"))
    );
    // Linked deny-all (no preopens): accepted.
    assert_eq!(info.rejected, None);
    assert_eq!(info.footprint.map(|f| f.core_instances), Some(3));

    let info = host().inspect(b"\0asm\x01\0\0\0");
    assert_eq!(info.kind, WasmKind::CoreModule);
    assert!(info.rejected.is_some());
}

#[test]
fn wasm_checker_serves_the_policy_traits_and_sums_metrics() {
    use futures::executor::block_on;
    use std::sync::Mutex;
    use verdict_policy::{CheckerError, CompletionChecker, ProgressChecker};
    use verdict_sandbox::{CheckerTotals, WasmChecker};

    let ctx = CheckContext::new();

    let totals = Arc::new(Mutex::new(CheckerTotals::default()));
    let (tenant, _) = ready_tenant("t");
    let both =
        WasmChecker::new(load(guests::GOOD_BOTH), tenant.clone()).with_totals(totals.clone());
    assert!(block_on(both.check(&read_packet(), &ctx)).unwrap().complete);
    assert_eq!(
        block_on(ProgressChecker::progress_key(&both, &read_packet(), &ctx))
            .unwrap()
            .len(),
        1
    );
    assert_eq!(CompletionChecker::identity(&both).len(), 64);

    let spin_tenant = tenant.with_limits(Limits {
        fuel: 1_000_000,
        ..Limits::default()
    });
    let spin =
        WasmChecker::new(load(guests::HOSTILE_SPIN), spin_tenant).with_totals(totals.clone());
    assert_eq!(
        block_on(spin.check(&read_packet(), &ctx)),
        Err(CheckerError::OutOfFuel)
    );

    let totals = totals.lock().unwrap().clone();
    assert_eq!(
        (totals.checks, totals.progress_samples, totals.errors),
        (2, 1, 1)
    );
    assert!(totals.fuel_used >= 1_000_000);
    assert!(totals.artifact_reads >= 2);
}
