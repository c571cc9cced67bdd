//! `--record`, `verdict replay` and `verdict audit verify` end to end: a
//! run's checks recorded and listed in its diagnostics, replayed after the
//! artifacts are gone, against another build, and tampered with.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use support::{Fake, Setup, base_config, verified};
use verdict::fake::{Script, ScriptedTurn};

fn records_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

fn replay(setup: &Setup, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["replay"];
    args.extend_from_slice(extra);
    let output = support::verdict(&args, &setup.path("cache"));
    (
        output.status.code(),
        support::stdout(&output) + &support::stderr(&output),
    )
}

#[test]
fn a_recorded_run_lists_its_checks_and_they_replay_identically() {
    let fake = Fake::start(Script::new(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call("read-1", "read_artifact", json!({"id": "A42"})),
        ScriptedTurn::text("I read A42: it is ready."),
    ]));
    let setup = Setup::new();
    let config = setup.write(
        "verdict.toml",
        &(base_config(&fake.base_url(), 6) + &verified(2)),
    );
    let recs = setup.path("recs");
    let output = support::verdict(
        &[
            "run",
            "--config",
            config.to_str().unwrap(),
            "--json",
            "--record",
            recs.to_str().unwrap(),
            "Verify that artifact A42 is ready.",
        ],
        &setup.path("cache"),
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        support::stderr(&output)
    );
    let value: Value = serde_json::from_str(&support::stdout(&output)).unwrap();
    // Two checks (the premature answer, then the confirmed one), each
    // listed by its record id, each on disk.
    let ids: Vec<String> = value["loop"]["check_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 2, "{value}");
    assert_eq!(value["checker"]["checks"], 2);
    let files = records_in(&recs);
    assert_eq!(files.len(), 2);
    for id in &ids {
        assert!(recs.join(format!("{id}.json")).is_file(), "{id}");
    }
    // The artifacts change after the run: the replay reads the record store.
    std::fs::write(setup.path("workspace/A42"), r#"{"ready":false}"#).unwrap();
    let paths: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let (code, out) = replay(&setup, &paths);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("2 of 2 identical"), "{out}");
    assert!(
        out.contains("not complete  not complete  identical"),
        "{out}"
    );

    let audit = recs.join("audit.jsonl");
    let output = support::verdict(
        &["audit", "verify", audit.to_str().unwrap()],
        &setup.path("cache"),
    );
    assert_eq!(output.status.code(), Some(0));
    assert!(support::stdout(&output).starts_with("ok: 2 lines, head "));
}

/// `verdict check --record` of artifact-ready on the example packet.
fn recorded_check(setup: &Setup) -> PathBuf {
    let examples = support::examples();
    let recs = setup.path("recs");
    let output = support::verdict(
        &[
            "check",
            "--verifier",
            "builtin:artifact-ready",
            "--packet",
            examples.join("packets/ready.json").to_str().unwrap(),
            "--artifacts",
            setup.path("workspace").to_str().unwrap(),
            "--record",
            recs.to_str().unwrap(),
            "--json",
        ],
        &setup.path("cache"),
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        support::stderr(&output)
    );
    let value: Value = serde_json::from_str(&support::stdout(&output)).unwrap();
    let id = value["record"].as_str().unwrap();
    recs.join(format!("{id}.json"))
}

#[test]
fn another_build_prints_the_changed_verdicts_and_exits_1() {
    let setup = Setup::new();
    let record = recorded_check(&setup);
    std::fs::remove_file(setup.path("workspace/A42")).unwrap();
    let path = record.to_str().unwrap();
    let (code, out) = replay(&setup, &[path]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = replay(&setup, &[path, "--verifier", "builtin:receipt-required"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("complete  not complete  changed"), "{out}");
    assert!(
        out.contains("complete: recorded true, replayed false"),
        "{out}"
    );
    assert!(out.contains("0 of 1 identical, 1 not"), "{out}");
}

#[test]
fn tampered_records_and_audit_lines_are_detected() {
    let setup = Setup::new();
    let record = recorded_check(&setup);
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(
        &record,
        text.replacen("\"iteration\": ", "\"iteration\": 1", 1),
    )
    .unwrap();
    let (code, out) = replay(&setup, &[record.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("tampered"), "{out}");
    assert!(out.contains("was changed after it was recorded"), "{out}");

    let audit = record.parent().unwrap().join("audit.jsonl");
    let line = std::fs::read_to_string(&audit).unwrap();
    std::fs::write(&audit, line.replace("\"complete\"", "\"incomplete\"")).unwrap();
    let output = support::verdict(
        &["audit", "verify", audit.to_str().unwrap()],
        &setup.path("cache"),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(
        support::stdout(&output).contains("line 1"),
        "{}",
        support::stdout(&output)
    );
}

/// A forger who knows the format: the packet changed, its hash and the
/// record's integrity recomputed, so only the audit log can tell.
fn forge(record: &Path) {
    use verdict::records::{CheckRecord, sha256_hex};
    let mut r: CheckRecord = serde_json::from_slice(&std::fs::read(record).unwrap()).unwrap();
    r.packet.output_text = "forged: A42 is ready, trust me".into();
    r.packet_sha256 = sha256_hex(&serde_json::to_vec(&r.packet).unwrap());
    r.integrity = String::new();
    r.integrity = sha256_hex(&serde_json::to_vec(&r).unwrap());
    std::fs::write(record, serde_json::to_vec_pretty(&r).unwrap()).unwrap();
}

fn audit_verify(setup: &Setup, path: &Path) -> (Option<i32>, String) {
    let output = support::verdict(
        &["audit", "verify", path.to_str().unwrap()],
        &setup.path("cache"),
    );
    (output.status.code(), support::stdout(&output))
}

#[test]
fn a_resealed_record_is_caught_by_the_audit_log() {
    let setup = Setup::new();
    let record = recorded_check(&setup);
    let dir = record.parent().unwrap().to_owned();
    let (code, out) = audit_verify(&setup, &dir);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("1 records matching their lines"), "{out}");

    forge(&record);
    let (code, out) = replay(&setup, &[record.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("unanchored"), "{out}");
    assert!(out.contains("it was rewritten"), "{out}");
    // Asked for, it replays, and says so.
    let (code, out) = replay(&setup, &[record.to_str().unwrap(), "--allow-unanchored"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("identical (unanchored)"), "{out}");
    assert!(
        out.contains("warning: replaying an unanchored record"),
        "{out}"
    );

    for path in [dir.clone(), dir.join("audit.jsonl")] {
        let (code, out) = audit_verify(&setup, &path);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains("the record was rewritten"), "{out}");
    }

    // A record no line names (copied under a new id), and a deleted one.
    let copy = dir.join(format!("{}.json", "ab".repeat(16)));
    std::fs::copy(&record, &copy).unwrap();
    std::fs::remove_file(&record).unwrap();
    let (code, out) = audit_verify(&setup, &dir);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("its audit line has no record"), "{out}");
    assert!(out.contains("a record no audit line names"), "{out}");
    // Its inner id is still the old one: refused as not in the chain.
    let (code, out) = replay(&setup, &[copy.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("unanchored"), "{out}");
}

#[test]
fn a_torn_record_file_is_reported_and_the_batch_goes_on() {
    let setup = Setup::new();
    let first = recorded_check(&setup);
    let second = recorded_check(&setup);
    assert_ne!(first, second);
    // A power loss mid-write: half the file.
    let bytes = std::fs::read(&first).unwrap();
    std::fs::write(&first, &bytes[..bytes.len() / 2]).unwrap();
    let (code, out) = replay(&setup, &[first.to_str().unwrap(), second.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("unreadable"), "{out}");
    assert!(out.contains("1 of 2 identical"), "{out}");
}

#[test]
fn a_record_asking_for_a_year_is_refused_and_the_batch_goes_on() {
    use verdict::records::{CheckRecord, sha256_hex};
    let setup = Setup::new();
    let hostile = recorded_check(&setup);
    let fine = recorded_check(&setup);
    let mut r: CheckRecord = serde_json::from_slice(&std::fs::read(&hostile).unwrap()).unwrap();
    r.limits.timeout_ms = 365 * 24 * 3_600_000;
    r.integrity = String::new();
    r.integrity = sha256_hex(&serde_json::to_vec(&r).unwrap());
    std::fs::write(&hostile, serde_json::to_vec_pretty(&r).unwrap()).unwrap();
    let (code, out) = replay(
        &setup,
        &[
            hostile.to_str().unwrap(),
            fine.to_str().unwrap(),
            "--allow-unanchored",
        ],
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("refused"), "{out}");
    assert!(out.contains("timeout_ms is 31536000000"), "{out}");
    assert!(out.contains("1 of 2 identical"), "{out}");
}
