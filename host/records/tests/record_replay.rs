//! Recorded checks replay to identical answers, whatever happened to the
//! live artifacts since; tampering is detected; another build's changed
//! answers are reported.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use verdict_policy::{CheckContext, CheckPacket, Effect, OutcomeStatus, PacketParts};
use verdict_records::{
    CheckRecord, RecordDir, RecordError, RecordRole, RecordedAnswer, Recorder, audit,
    check_recorded, progress_key_recorded, recorded_component, replay,
};
use verdict_sandbox::{DirStore, Limits, LoadedVerifier, Tenant};
use verdict_test_support::{guests, host, load, observation};

/// A generated packet: `n`-th of a deterministic series of outputs and
/// histories (reads, writes, failures).
fn packet(rng: &mut fastrand::Rng, n: usize) -> CheckPacket {
    let calls = rng.usize(0..6);
    let observations = (0..calls)
        .map(|i| {
            let (tool, effect) = match rng.u8(0..3) {
                0 => ("read_artifact", Effect::Read),
                1 => ("write_file", Effect::Write),
                _ => ("list_files", Effect::Read),
            };
            let status = if rng.u8(0..4) == 0 {
                OutcomeStatus::Failed
            } else {
                OutcomeStatus::Succeeded
            };
            observation(tool, &format!("call-{n}-{i}"), effect, status)
        })
        .collect::<Vec<_>>();
    let parts = PacketParts {
        execution_id: format!("exec-{n}"),
        iteration: rng.u32(1..20),
        output_text: format!("answer {n}: {}", "x".repeat(rng.usize(0..200))),
        output_truncated: false,
        observed_tool_calls: observations.len() as u32,
        observations,
        observations_truncated: false,
        task_state: None,
    };
    CheckPacket::from_parts(parts).expect("a generated packet is within bounds")
}

/// Changes the live artifacts between checks: A42 ready, not ready, not
/// JSON or absent; a receipt for some of the packet's writes.
fn churn(root: &Path, rng: &mut fastrand::Rng, packet: &CheckPacket) {
    let a42 = root.join("A42");
    match rng.u8(0..4) {
        0 => std::fs::write(&a42, br#"{"ready":true}"#).unwrap(),
        1 => std::fs::write(&a42, br#"{"ready":false}"#).unwrap(),
        2 => std::fs::write(&a42, b"not json").unwrap(),
        _ => {
            let _ = std::fs::remove_file(&a42);
        }
    }
    let receipts = root.join("receipts");
    let _ = std::fs::remove_dir_all(&receipts);
    std::fs::create_dir_all(&receipts).unwrap();
    for o in &packet.observations {
        if o.effect == Effect::Write && rng.bool() {
            let body = format!(r#"{{"call_id":"{}"}}"#, o.call_id);
            std::fs::write(receipts.join(format!("{}.json", o.call_id)), body).unwrap();
        }
    }
}

/// Records `count` checks of `verifier` (in `role`) on generated packets
/// while the artifacts change under them; returns the record directory,
/// after deleting the live artifacts.
async fn record_series(
    verifier: &LoadedVerifier,
    role: RecordRole,
    count: usize,
) -> (tempfile::TempDir, Vec<RecordedAnswer>) {
    let records = tempfile::tempdir().unwrap();
    let live = tempfile::tempdir().unwrap();
    let store = Arc::new(DirStore::open(live.path()).unwrap());
    let tenant = Tenant::new("acme", Limits::default(), store);
    let recorder = Recorder::open(RecordDir::new(records.path())).unwrap();
    let mut rng = fastrand::Rng::with_seed(7);
    let mut answers = Vec::new();
    for n in 0..count {
        let packet = packet(&mut rng, n);
        churn(live.path(), &mut rng, &packet);
        let ctx = CheckContext::new();
        let answer = match role {
            RecordRole::Completion => {
                let r = check_recorded(verifier, &tenant, &packet, &ctx, &recorder)
                    .await
                    .unwrap();
                RecordedAnswer::of_verdict(&r.report.result)
            }
            RecordRole::Progress => {
                let r = progress_key_recorded(verifier, &tenant, &packet, &ctx, &recorder)
                    .await
                    .unwrap();
                RecordedAnswer::of_key(&r.report.result)
            }
        };
        answers.push(answer);
    }
    recorder.flush().unwrap();
    assert_eq!(recorder.written(), count as u64);
    drop(recorder);
    // The live artifacts are gone: a replay reads the record store only.
    drop(live);
    (records, answers)
}

fn record_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Replays every record in `dir` against `verifier`; returns how many
/// answers were identical, and the distinct answers seen.
async fn replay_all(dir: &Path, verifier: &LoadedVerifier) -> (usize, usize) {
    let cas = RecordDir::new(dir).cas();
    let files = record_files(dir);
    let mut identical = 0;
    let mut distinct = std::collections::HashSet::new();
    for file in &files {
        let record = CheckRecord::load(file).unwrap();
        let outcome = replay(&record, &cas, verifier, true).await.unwrap();
        assert!(
            outcome.identical(),
            "{}: {:?}",
            file.display(),
            outcome.differences
        );
        identical += 1;
        distinct.insert(format!("{:?}", record.answer));
    }
    (identical, distinct.len())
}

async fn determinism(path: &str, role: RecordRole, count: usize) {
    let verifier = load(path);
    let (dir, answers) = record_series(&verifier, role, count).await;
    assert_eq!(record_files(dir.path()).len(), count);
    let (identical, distinct) = replay_all(dir.path(), &verifier).await;
    assert_eq!(identical, count, "100% identical answers");
    assert!(
        distinct > 1,
        "the series exercises more than one answer: {answers:?}"
    );
    // Every record is on the audit chain, in order.
    let head = audit::verify(&RecordDir::new(dir.path()).audit_path()).unwrap();
    assert_eq!(head.lines, count as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_samples_replay_identically_after_the_artifacts_changed() {
    determinism(guests::ARTIFACT_READY, RecordRole::Completion, 1000).await;
    determinism(guests::RECEIPT_REQUIRED, RecordRole::Completion, 1000).await;
    determinism(guests::REVISION_PROGRESS, RecordRole::Progress, 1000).await;
}

/// The Python and JavaScript builds of `artifact-ready` (built by
/// `sample-verifiers/polyglot/build.sh` into `$VERDICT_POLYGLOT_DIR`; CI
/// runs this with `--include-ignored`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs VERDICT_POLYGLOT_DIR with the built Python and JS samples"]
async fn polyglot_samples_replay_identically() {
    let dir = std::env::var("VERDICT_POLYGLOT_DIR").expect("VERDICT_POLYGLOT_DIR is set");
    for name in ["artifact-ready-python.wasm", "artifact-ready-js.wasm"] {
        let path = Path::new(&dir).join(name);
        determinism(path.to_str().unwrap(), RecordRole::Completion, 1000).await;
    }
}

/// A tenant whose store holds artifacts `a` and `b`.
fn entropy_tenant() -> (Tenant, tempfile::TempDir) {
    let live = tempfile::tempdir().unwrap();
    std::fs::write(live.path().join("a"), b"first").unwrap();
    std::fs::write(live.path().join("b"), b"second artifact").unwrap();
    let store = Arc::new(DirStore::open(live.path()).unwrap());
    (Tenant::new("acme", Limits::default(), store), live)
}

fn entropy_packet(text: &str) -> CheckPacket {
    let mut parts = verdict_test_support::read_parts();
    parts.output_text = text.into();
    CheckPacket::from_parts(parts).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clocks_randomness_and_artifacts_replay_as_recorded() {
    let verifier = load(guests::HOSTILE_HOST_CALLS);
    let (tenant, live) = entropy_tenant();
    let records = tempfile::tempdir().unwrap();
    let recorder = Recorder::open(RecordDir::new(records.path())).unwrap();
    let packet = entropy_packet("entropy a b missing");
    let mut reasons = std::collections::HashSet::new();
    let mut outcomes = std::collections::HashSet::new();
    for i in 0..200 {
        if i == 100 {
            // Changed and deleted after the first half was recorded.
            std::fs::write(live.path().join("a"), b"changed!").unwrap();
            std::fs::remove_file(live.path().join("b")).unwrap();
        }
        let r = check_recorded(&verifier, &tenant, &packet, &CheckContext::new(), &recorder)
            .await
            .unwrap();
        let verdict = r.report.result.unwrap();
        outcomes.insert(verdict.complete);
        reasons.insert(verdict.reason.clone().unwrap());
    }
    recorder.flush().unwrap();
    drop(recorder);
    // The guest really saw fresh randomness and live clocks: every answer
    // differs, and both outcomes occur.
    assert_eq!(reasons.len(), 200);
    assert_eq!(outcomes.len(), 2);
    let sample = reasons.iter().next().unwrap();
    assert!(sample.contains("secure=true"), "{sample}");
    // Then the live artifacts change again and vanish.
    std::fs::write(live.path().join("a"), b"third").unwrap();
    drop(live);
    let (identical, distinct) = replay_all(records.path(), &verifier).await;
    assert_eq!((identical, distinct), (200, 200));
}

/// One recorded check of `artifact-ready` on a ready A42.
async fn one_record() -> (tempfile::TempDir, PathBuf, LoadedVerifier) {
    let verifier = load(guests::ARTIFACT_READY);
    let (tenant, _store) = verdict_test_support::ready_tenant("acme");
    let records = tempfile::tempdir().unwrap();
    let recorder = Recorder::open(RecordDir::new(records.path())).unwrap();
    recorder
        .keep_component(std::fs::read(guests::ARTIFACT_READY).unwrap().into())
        .unwrap();
    let r = check_recorded(
        &verifier,
        &tenant,
        &verdict_test_support::read_packet(),
        &CheckContext::new(),
        &recorder,
    )
    .await
    .unwrap();
    assert!(r.report.result.unwrap().complete);
    recorder.flush().unwrap();
    let path = records.path().join(format!("{}.json", r.id));
    (records, path, verifier)
}

fn edit(path: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut value);
    std::fs::write(path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
}

/// Rewrites the record's integrity hash after an edit (a forger who knows
/// the format), so the field-level checks are what must catch it.
fn reseal(path: &Path) {
    let mut record: CheckRecord = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    record.integrity = String::new();
    record.integrity = verdict_records::sha256_hex(&serde_json::to_vec(&record).unwrap());
    std::fs::write(path, serde_json::to_vec_pretty(&record).unwrap()).unwrap();
}

async fn replay_file(
    dir: &Path,
    path: &Path,
    verifier: &LoadedVerifier,
) -> Result<bool, RecordError> {
    let record = CheckRecord::load(path)?;
    let cas = RecordDir::new(dir).cas();
    Ok(replay(&record, &cas, verifier, true).await?.identical())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampering_is_detected_on_replay() {
    // The record as written replays, from its own copy of the component.
    let (dir, path, verifier) = one_record().await;
    let record = CheckRecord::load(&path).unwrap();
    let bytes = recorded_component(&record, &RecordDir::new(dir.path()).cas()).unwrap();
    let (from_store, _) = host().load_bytes(&bytes).unwrap();
    assert!(replay_file(dir.path(), &path, &from_store).await.unwrap());

    // A changed packet: the record's own hash no longer matches.
    edit(&path, |v| v["packet"]["outputText"] = "forged".into());
    let err = replay_file(dir.path(), &path, &verifier).await.unwrap_err();
    assert!(
        matches!(&err, RecordError::Tampered { what, .. } if what.starts_with("record")),
        "{err}"
    );
    // Resealed: the packet's own hash catches it.
    reseal(&path);
    let err = replay_file(dir.path(), &path, &verifier).await.unwrap_err();
    assert!(
        matches!(&err, RecordError::Tampered { what, .. } if what == "packet"),
        "{err}"
    );

    // Changed artifact bytes in the store.
    let (dir, path, verifier) = one_record().await;
    let record = CheckRecord::load(&path).unwrap();
    let hash = record
        .artifacts
        .iter()
        .find_map(|op| match op {
            verdict_records::RecordedArtifactOp::Read { sha256, .. } => sha256.clone(),
            _ => None,
        })
        .unwrap();
    let stored = dir
        .path()
        .join("cas/sha256")
        .join(&hash[..2])
        .join(&hash[2..]);
    std::fs::write(&stored, br#"{"id":"A42","ready":false}"#).unwrap();
    let err = replay_file(dir.path(), &path, &verifier).await.unwrap_err();
    assert!(
        matches!(&err, RecordError::Tampered { what, .. } if what == "artifact A42"),
        "{err}"
    );

    // A changed digest, resealed: the verifier run is not the one recorded.
    let (dir, path, verifier) = one_record().await;
    edit(&path, |v| v["verifier"]["digest"] = "ab".repeat(32).into());
    reseal(&path);
    let err = replay_file(dir.path(), &path, &verifier).await.unwrap_err();
    assert!(
        matches!(&err, RecordError::Tampered { what, .. } if what == "verifier"),
        "{err}"
    );

    // A changed answer, resealed: the replay reports the difference.
    let (dir, path, verifier) = one_record().await;
    edit(&path, |v| v["answer"]["verdict"]["complete"] = false.into());
    reseal(&path);
    assert!(!replay_file(dir.path(), &path, &verifier).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_build_shows_its_changed_answers() {
    let (dir, path, _) = one_record().await;
    let record = CheckRecord::load(&path).unwrap();
    let cas = RecordDir::new(dir.path()).cas();
    // receipt-required answers the same packet differently.
    let other = load(guests::RECEIPT_REQUIRED);
    let outcome = replay(&record, &cas, &other, false).await.unwrap();
    assert!(!outcome.identical());
    let fields: Vec<&str> = outcome
        .differences
        .iter()
        .map(|d| d.field.as_str())
        .collect();
    assert_eq!(fields, ["complete", "reason", "feedback"]);
    assert_eq!(outcome.differences[0].recorded, "true");
    assert_eq!(outcome.differences[0].replayed, "false");
    // As the same build, it is refused.
    assert!(matches!(
        replay(&record, &cas, &other, true).await,
        Err(RecordError::Tampered { .. })
    ));
}

/// A hostile record asking for a year of timeout is refused before
/// anything runs; one asking for 10^18 fuel (a value a sandbox accepts)
/// runs with the replay's cap and says so; one within the caps replays
/// unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_s_limits_are_checked_and_capped_by_the_replayer() {
    let (dir, path, verifier) = one_record().await;
    let cas = RecordDir::new(dir.path()).cas();
    let record = CheckRecord::load(&path).unwrap();
    let outcome = replay(&record, &cas, &verifier, true).await.unwrap();
    assert!(outcome.identical() && outcome.capped.is_empty());

    edit(&path, |v| {
        v["limits"]["timeout_ms"] = (365u64 * 24 * 3_600_000).into();
        v["limits"]["fuel"] = 1_000_000_000_000_000_000u64.into();
    });
    reseal(&path);
    let record = CheckRecord::load(&path).unwrap();
    let err = replay(&record, &cas, &verifier, true).await.unwrap_err();
    assert!(
        matches!(&err, RecordError::Limits { source, .. } if source.field == "timeout_ms"),
        "{err}"
    );

    edit(&path, |v| v["limits"]["timeout_ms"] = 1_000.into());
    reseal(&path);
    let record = CheckRecord::load(&path).unwrap();
    let outcome = replay(&record, &cas, &verifier, true).await.unwrap();
    assert_eq!(outcome.capped, vec!["fuel"]);
    assert!(outcome.identical(), "{:?}", outcome.differences);
    // A replayer's own, smaller caps win.
    let caps = Limits {
        fuel: 10,
        ..verdict_records::default_replay_caps()
    };
    let outcome = verdict_records::replay_within(&record, &cas, &verifier, true, &caps)
        .await
        .unwrap();
    assert_eq!(outcome.capped, vec!["fuel"]);
    assert!(!outcome.identical(), "10 fuel cannot answer the same");
}
