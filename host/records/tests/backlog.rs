//! The record queue is bounded by the bytes its records hold, and a check
//! that finds it full never blocks its thread: it awaits room, or is
//! refused with a typed error. Records are looked up one by one, without
//! a flush.

use nix::fcntl::{Flock, FlockArg};
use std::future::Future;
use std::task::{Context, Poll, Waker};
use verdict_records::{
    RecordDir, RecordError, RecordInput, RecordRole, RecordedAnswer, RecordedMetrics,
    RecordedVerifier, Recorder, RecorderOptions, WhenFull,
};
use verdict_sandbox::{ArtifactData, ArtifactOp, CallTrace, Limits};

const MIB: usize = 1 << 20;

/// A record of a check that read `n` MiB of artifact bytes.
fn record(seed: u8, n: usize) -> RecordInput {
    let mut trace = CallTrace::new([seed; 32], 1_700_000_000_000);
    trace.artifacts.push(ArtifactOp::Read {
        id: "A42".into(),
        result: Ok(ArtifactData {
            id: "A42".into(),
            revision: "r1".into(),
            size: (n * MIB) as u64,
            bytes: vec![seed; n * MIB],
        }),
    });
    RecordInput {
        id: verdict_records::check_id(&[seed; 32]),
        tenant: "acme".into(),
        role: RecordRole::Completion,
        verifier: RecordedVerifier {
            digest: "0".repeat(64),
            wit_version: "0.1".into(),
        },
        limits: Limits::default(),
        packet: verdict_test_support::read_packet(),
        trace,
        answer: RecordedAnswer::Key { key: "k".into() },
        metrics: RecordedMetrics {
            duration_us: 1,
            fuel_used: 1,
            peak_memory_bytes: 1,
            artifact_reads: 1,
            artifact_bytes: (n * MIB) as u64,
        },
    }
}

/// Holds the audit log's append lock: the writer stalls at its next
/// append, as on a disk slower than the checks.
fn stall(dir: &RecordDir) -> Flock<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(dir.audit_path())
        .unwrap();
    Flock::lock(file, FlockArg::LockExclusive).unwrap()
}

/// A recorder whose writer is stalled with one record of `n` MiB queued
/// behind it.
async fn stalled(
    when_full: WhenFull,
    n: usize,
) -> (tempfile::TempDir, Recorder, Flock<std::fs::File>) {
    let root = tempfile::tempdir().unwrap();
    let dir = RecordDir::new(root.path());
    let recorder = Recorder::open_with(
        dir.clone(),
        RecorderOptions {
            max_queued_bytes: 2 * MIB,
            when_full,
        },
    )
    .unwrap();
    let lock = stall(&dir);
    // The first record is written, then the writer waits for the lock to
    // append its line; the second waits in the queue behind it.
    let first = record(1, n);
    let first_id = first.id.clone();
    recorder.submit(first).await.unwrap();
    recorder.settled(&first_id).await;
    assert!(dir.record_path(&first_id).unwrap().is_file());
    recorder.submit(record(2, n)).await.unwrap();
    (root, recorder, lock)
}

#[tokio::test(flavor = "current_thread")]
async fn a_full_queue_refuses_a_record_by_its_bytes() {
    let (_root, recorder, lock) = stalled(WhenFull::Refuse, 1).await;
    let queued = recorder.queued_bytes();
    assert!((MIB..2 * MIB).contains(&queued), "{queued}");
    // 1 MiB more does not fit in 2 MiB: refused at once, not queued.
    let third = record(3, 1);
    let third_id = third.id.clone();
    match recorder.submit(third).await {
        Err(RecordError::Backlog {
            queued: q, budget, ..
        }) => {
            assert_eq!((q, budget), (queued, 2 * MIB));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(recorder.queued_bytes(), queued);
    assert_eq!(recorder.is_pending(&third_id), None);
    drop(lock);
    recorder.flush().unwrap();
    assert_eq!(recorder.written(), 2);
    assert_eq!(recorder.queued_bytes(), 0);
}

#[tokio::test(flavor = "current_thread")]
async fn a_full_queue_makes_a_check_await_room_without_blocking_its_thread() {
    let (_root, recorder, lock) = stalled(WhenFull::Wait, 1).await;
    let queued = recorder.queued_bytes();
    let third = record(3, 1);
    let third_id = third.id.clone();
    let mut submit = Box::pin(recorder.submit(third));
    // Polled on this thread: not ready, and it returns (the old recorder
    // waited on a condvar here, stalling every task of the thread).
    let mut cx = Context::from_waker(Waker::noop());
    assert!(matches!(submit.as_mut().poll(&mut cx), Poll::Pending));
    assert_eq!(recorder.queued_bytes(), queued);
    assert_eq!(recorder.is_pending(&third_id), None);
    // The disk catches up: room comes and the record is taken.
    drop(lock);
    submit.await.unwrap();
    recorder.settled(&third_id).await;
    recorder.flush().unwrap();
    assert_eq!(recorder.written(), 3);
}

#[tokio::test(flavor = "current_thread")]
async fn a_record_bigger_than_the_bound_is_taken_when_the_queue_is_empty() {
    let root = tempfile::tempdir().unwrap();
    let recorder = Recorder::open_with(
        RecordDir::new(root.path()),
        RecorderOptions {
            max_queued_bytes: MIB,
            when_full: WhenFull::Refuse,
        },
    )
    .unwrap();
    recorder.submit(record(4, 3)).await.unwrap();
    recorder.flush().unwrap();
    assert_eq!(recorder.written(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn a_pending_record_is_known_by_id_and_its_tenant_without_a_flush() {
    let (_root, recorder, lock) = stalled(WhenFull::Refuse, 1).await;
    let second = verdict_records::check_id(&[2; 32]);
    assert_eq!(recorder.is_pending(&second).as_deref(), Some("acme"));
    assert_eq!(recorder.is_pending(&"f".repeat(32)), None);
    // Waiting for an unknown id returns at once, even with the writer
    // stalled.
    recorder.settled(&"f".repeat(32)).await;
    drop(lock);
    recorder.settled(&second).await;
    assert_eq!(recorder.is_pending(&second), None);
}
