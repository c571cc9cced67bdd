//! Issue 34: the cost of recording a check. A fresh check (no ready
//! instance) of `artifact-ready`, small and max packet, four ways taking
//! turns in one run: not recorded; taped (the trace kept, nothing
//! written); recorded into a record directory (the writer thread keeps
//! the artifact bytes, writes the JSON and appends the audit line off the
//! checking thread); and recorded, then waiting for the record to be on
//! disk (what the checking thread would pay writing it itself).

use super::{Stats, measure_alternately, tenant, verifier_for};
use std::time::{Duration, Instant};
use verdict_policy::{CheckContext, CheckPacket};
use verdict_records::{RecordDir, Recorder, check_recorded};
use verdict_sandbox::{HostConfig, Tape, VerifierHost};

pub(crate) fn record_rows(
    wasm: &[u8],
    small: &CheckPacket,
    large: &CheckPacket,
) -> Vec<(String, Stats)> {
    let host = VerifierHost::new(HostConfig::default()).unwrap_or_else(|e| panic!("host: {e}"));
    let verifier = verifier_for(&host, wasm);
    let tenant = tenant();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let recorder = Recorder::open(RecordDir::new(dir.path())).unwrap_or_else(|e| panic!("{e}"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    // One recorded check (its record handed to the writer).
    let recorded = |packet: &CheckPacket| {
        let r = rt
            .block_on(check_recorded(
                &verifier,
                &tenant,
                packet,
                &CheckContext::new(),
                &recorder,
            ))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(r.report.result.is_ok_and(|v| v.complete));
    };
    let mut rows = Vec::new();
    for (name, packet) in [("small", small), ("max", large)] {
        let timed = |f: &mut dyn FnMut()| {
            let started = Instant::now();
            f();
            started.elapsed()
        };
        let mut calls: [Box<dyn FnMut() -> Duration>; 3] = [
            Box::new(|| {
                timed(&mut || {
                    let r =
                        rt.block_on(verifier.check_async(&tenant, packet, &CheckContext::new()));
                    assert!(r.result.is_ok_and(|v| v.complete));
                })
            }),
            Box::new(|| {
                timed(&mut || {
                    let r = rt.block_on(verifier.check_taped(
                        &tenant,
                        packet,
                        &CheckContext::new(),
                        Tape::Record,
                    ));
                    assert!(r.report.result.is_ok_and(|v| v.complete));
                })
            }),
            Box::new(|| timed(&mut || recorded(packet))),
        ];
        let stats = measure_alternately(3000, &mut calls);
        drop(calls);
        let labels = [
            "not recorded",
            "taped (trace kept, nothing written)",
            "recorded (written off the checking thread)",
        ];
        for (label, stats) in labels.into_iter().zip(stats) {
            rows.push((format!("(rec) fresh check, {name} packet, {label}"), stats));
        }
        // Apart: its sleep until the disk is done would slow the next call.
        let mut flushed: [Box<dyn FnMut() -> Duration>; 1] = [Box::new(|| {
            timed(&mut || {
                recorded(packet);
                recorder.flush().unwrap_or_else(|e| panic!("{e}"));
            })
        })];
        let stats = measure_alternately(300, &mut flushed);
        for stats in stats {
            rows.push((
                format!("(rec) fresh check, {name} packet, recorded, waiting until written"),
                stats,
            ));
        }
    }
    recorder.flush().unwrap_or_else(|e| panic!("{e}"));
    let written = recorder.written();
    let bytes: u64 = std::fs::read_dir(dir.path())
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0);
    println!(
        "records written: {written}, {} KiB in {} (average {} bytes per record file)",
        bytes / 1024,
        dir.path().display(),
        bytes / written.max(1)
    );
    rows
}
