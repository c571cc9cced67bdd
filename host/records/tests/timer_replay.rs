//! A guest racing timers (`subscribe-duration`, `pollable.ready()`, `poll`,
//! `block`) replays to the answers it gave when recorded: the readiness of
//! its timers is on the tape.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use verdict_policy::{CheckContext, CheckPacket};
use verdict_records::{
    CheckRecord, RecordDir, RecordRole, RecordedAnswer, Recorder, check_recorded,
    progress_key_recorded, replay,
};
use verdict_sandbox::{Limits, LoadedVerifier, MemoryStore, Tenant};
use verdict_test_support::{guests, load};

fn race_packet(ms: u64) -> CheckPacket {
    let mut parts = verdict_test_support::read_parts();
    parts.output_text = format!("race {ms}");
    CheckPacket::from_parts(parts).unwrap()
}

fn tenant() -> Tenant {
    Tenant::new("acme", Limits::default(), Arc::new(MemoryStore::new()))
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

/// Records `count` races of `ms` milliseconds in `role`; returns the
/// record directory and the answers given.
async fn record_races(
    verifier: &LoadedVerifier,
    role: RecordRole,
    count: usize,
    ms: u64,
) -> (tempfile::TempDir, Vec<RecordedAnswer>) {
    let records = tempfile::tempdir().unwrap();
    let recorder = Recorder::open(RecordDir::new(records.path())).unwrap();
    let tenant = tenant();
    let packet = race_packet(ms);
    let mut answers = Vec::new();
    for _ in 0..count {
        let ctx = CheckContext::new();
        answers.push(match role {
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
        });
    }
    recorder.flush().unwrap();
    drop(recorder);
    (records, answers)
}

fn spins(answer: &RecordedAnswer) -> String {
    let text = match answer {
        RecordedAnswer::Verdict { verdict } => verdict.reason.clone().unwrap_or_default(),
        RecordedAnswer::Key { key } => key.clone(),
        RecordedAnswer::Error { class, .. } => panic!("the race failed: {class}"),
    };
    text.split(';').next().unwrap_or_default().to_owned()
}

async fn races_replay_identically(role: RecordRole) {
    let verifier = load(guests::HOSTILE_TIMER_RACE);
    let (dir, answers) = record_races(&verifier, role, 12, 3).await;
    // The guest really raced a live timer: it asked `ready()` many times,
    // a number that follows the host's speed.
    let counts: std::collections::HashSet<String> = answers.iter().map(spins).collect();
    assert!(counts.iter().all(|c| c != "spins=0"), "{counts:?}");
    let cas = RecordDir::new(dir.path()).cas();
    let files = record_files(dir.path());
    assert_eq!(files.len(), answers.len());
    for file in &files {
        let record = CheckRecord::load(file).unwrap();
        assert!(record.complete, "{}", file.display());
        // Replayed twice: the same answer each time, the recorded one.
        for _ in 0..2 {
            let outcome = replay(&record, &cas, &verifier, true).await.unwrap();
            assert!(
                outcome.identical(),
                "{}: {:?}",
                file.display(),
                outcome.differences
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_racing_timers_replays_its_recorded_answers() {
    races_replay_identically(RecordRole::Completion).await;
    races_replay_identically(RecordRole::Progress).await;
}
