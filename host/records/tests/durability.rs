//! Recording survives a crash: a torn audit tail is cut off and kept, a
//! failed append is retried, a truncated blob is rewritten.

use std::path::Path;
use verdict_policy::CheckContext;
use verdict_records::{Cas, RecordDir, Recorder, check_recorded, sha256_hex, verify_dir};
use verdict_test_support::{guests, load};

async fn check(recorder: &Recorder) -> String {
    let verifier = load(guests::ARTIFACT_READY);
    let (tenant, _store) = verdict_test_support::ready_tenant("acme");
    let r = check_recorded(
        &verifier,
        &tenant,
        &verdict_test_support::read_packet(),
        &CheckContext::new(),
        recorder,
    )
    .await
    .unwrap();
    r.id
}

fn assert_agrees(dir: &RecordDir, lines: u64) {
    let audit = verify_dir(dir).unwrap();
    assert!(audit.problems.is_empty(), "{:?}", audit.problems);
    assert_eq!(audit.head.lines, lines);
    assert_eq!(audit.records, lines);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_torn_audit_tail_does_not_stop_recording() {
    let records = tempfile::tempdir().unwrap();
    let dir = RecordDir::new(records.path());
    {
        let recorder = Recorder::open(dir.clone()).unwrap();
        check(&recorder).await;
        recorder.flush().unwrap();
    }
    // A crash mid-append: half a line at the end.
    let mut bytes = std::fs::read(dir.audit_path()).unwrap();
    let whole = bytes.len();
    bytes.extend_from_slice(br#"{"seq":1,"prev":"0f3a"#);
    std::fs::write(dir.audit_path(), &bytes).unwrap();

    let recorder = Recorder::open(dir.clone()).unwrap();
    check(&recorder).await;
    recorder.flush().unwrap();
    assert_eq!(recorder.written(), 1);
    assert_agrees(&dir, 2);
    let kept = records.path().join(format!("audit.jsonl.torn-{whole}"));
    assert_eq!(std::fs::read(kept).unwrap(), br#"{"seq":1,"prev":"0f3a"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_append_is_retried_not_dropped() {
    let records = tempfile::tempdir().unwrap();
    let dir = RecordDir::new(records.path());
    let recorder = Recorder::open(dir.clone()).unwrap();
    // The log cannot be opened for appending: a directory in its place.
    std::fs::create_dir(dir.audit_path()).unwrap();
    let id = check(&recorder).await;
    assert!(recorder.flush().is_err());
    assert!(dir.record_path(&id).unwrap().is_file());
    std::fs::remove_dir(dir.audit_path()).unwrap();
    // The next pass appends the line kept from the failed batch.
    recorder.flush().unwrap();
    assert_eq!(recorder.written(), 1);
    assert_agrees(&dir, 1);
}

#[test]
fn a_truncated_blob_is_rewritten_not_trusted() {
    let root = tempfile::tempdir().unwrap();
    let cas = Cas::new(root.path());
    let hash = cas.put(b"artifact bytes").unwrap();
    let path: &Path = &root.path().join("sha256").join(&hash[..2]).join(&hash[2..]);
    // What a power loss can leave of an unsynced write.
    std::fs::write(path, b"").unwrap();
    assert_eq!(cas.put(b"artifact bytes").unwrap(), hash);
    assert_eq!(cas.get(&hash, "blob").unwrap(), b"artifact bytes");
    assert_eq!(sha256_hex(&std::fs::read(path).unwrap()), hash);
}
