//! Hostile guests that wait in host imports, read the clocks, flood stderr,
//! spin in their allocator or find a FIFO among the artifacts: each ends by
//! its deadline with its typed class and its fuel reported, and the same
//! host then serves the good verifier.
//!
//! Durations are compared only against bounds many times the deadline (they
//! tell "stopped at the deadline" from "ran to the end of a 10 s sleep");
//! the precise overshoot is measured by the sandbox benchmark.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;
use verdict_policy::{CancelHandle, CheckContext, CheckPacket};
use verdict_sandbox::{
    CheckError, DirStore, HostConfig, Limits, LoadedVerifier, Tenant, VerifierHost,
};
use verdict_test_support::{
    assert_good_verifier_still_works, check_packet, core_guest, guests, host, load, read_packet,
    read_parts, ready_tenant,
};

fn tenant_with(limits: Limits) -> Tenant {
    let (tenant, _) = ready_tenant("hostile");
    tenant.with_limits(limits)
}

fn host_calls() -> LoadedVerifier {
    load(guests::HOSTILE_HOST_CALLS)
}

/// The read packet with `command` as its output text.
fn command(command: &str) -> CheckPacket {
    let mut packet = read_parts();
    packet.output_text = command.into();
    check_packet(packet)
}

fn deadline(ms: u64) -> Limits {
    Limits {
        timeout_ms: ms,
        fuel: u64::MAX / 2,
        ..Limits::default()
    }
}

/// Runs `f` on a thread and waits at most 60 s for it, so that a hang is
/// a failure rather than a stuck test run.
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the call returned within a minute")
}

#[test]
fn a_sleep_past_the_deadline_is_stopped_at_the_deadline() {
    let verifier = host_calls();
    let outcome = within_a_minute(move || {
        verifier.check(
            &tenant_with(deadline(200)),
            &command("sleep-ms 10000"),
            &CheckContext::new(),
        )
    });
    assert_eq!(outcome.result, Err(CheckError::Timeout { limit_ms: 200 }));
    assert!(
        outcome.metrics.duration < Duration::from_secs(5),
        "stopped at the deadline, not after the 10 s sleep: {:?}",
        outcome.metrics.duration
    );
    assert_good_verifier_still_works();
}

#[test]
fn a_sleep_of_a_hundred_thousand_seconds_is_stopped_at_the_deadline() {
    let verifier = host_calls();
    let outcome = within_a_minute(move || {
        verifier.check(
            &tenant_with(deadline(100)),
            &command("sleep-ms 100000000"),
            &CheckContext::new(),
        )
    });
    assert_eq!(outcome.result, Err(CheckError::Timeout { limit_ms: 100 }));
    assert_good_verifier_still_works();
}

#[test]
fn a_sleep_within_the_deadline_completes() {
    let outcome = host_calls().check(
        &tenant_with(deadline(5_000)),
        &command("sleep-ms 5"),
        &CheckContext::new(),
    );
    let verdict = outcome.result.unwrap();
    assert_eq!(verdict.reason.as_deref(), Some("woke up"));
}

#[test]
fn stdin_is_closed_and_reading_it_returns_at_once() {
    let outcome = host_calls().check(
        &tenant_with(deadline(5_000)),
        &command("stdin"),
        &CheckContext::new(),
    );
    let verdict = outcome.result.unwrap();
    assert_eq!(verdict.reason.as_deref(), Some("stdin=Ok(0)"));
}

#[test]
fn cancellation_wakes_and_stops_a_sleeping_guest() {
    let verifier = host_calls();
    let cancel = CancelHandle::new();
    let canceller = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            cancel.cancel();
        })
    };
    let outcome = within_a_minute(move || {
        verifier.check(
            &tenant_with(deadline(60_000)),
            &command("sleep-ms 10000"),
            &CheckContext::new().with_cancel(cancel.clone()),
        )
    });
    canceller.join().unwrap();
    assert_eq!(outcome.result, Err(CheckError::Cancelled));
    assert!(
        outcome.metrics.duration < Duration::from_secs(5),
        "stopped when cancelled, not after the sleep: {:?}",
        outcome.metrics.duration
    );
    assert_good_verifier_still_works();
}

#[test]
fn eight_sleepers_time_out_while_good_checks_beside_them_pass() {
    let sleepers: Vec<_> = (0..8)
        .map(|_| {
            let verifier = host_calls();
            std::thread::spawn(move || {
                verifier.check(
                    &tenant_with(deadline(300)),
                    &command("sleep-ms 10000"),
                    &CheckContext::new(),
                )
            })
        })
        .collect();
    let good = load(guests::ARTIFACT_READY);
    let (tenant, _) = ready_tenant("neighbour");
    for _ in 0..20 {
        assert!(
            good.check(&tenant, &read_packet(), &CheckContext::new())
                .result
                .unwrap()
                .complete
        );
    }
    for sleeper in sleepers {
        let outcome = sleeper.join().unwrap();
        assert_eq!(outcome.result, Err(CheckError::Timeout { limit_ms: 300 }));
        assert!(
            outcome.metrics.duration < Duration::from_secs(5),
            "stopped at the deadline, not after the 10 s sleep: {:?}",
            outcome.metrics.duration
        );
    }
}

#[test]
fn fuel_burned_before_a_deadline_is_reported() {
    let outcome = load(guests::HOSTILE_SPIN).check(
        &tenant_with(deadline(200)),
        &read_packet(),
        &CheckContext::new(),
    );
    assert_eq!(outcome.result, Err(CheckError::Timeout { limit_ms: 200 }));
    // A spin burns billions of units per second; before the fix about 2k
    // (the fuel of the last call made) were reported.
    assert!(
        outcome.metrics.fuel_used > 10_000_000,
        "fuel used: {}",
        outcome.metrics.fuel_used
    );
    assert_good_verifier_still_works();
}

#[test]
fn an_allocator_that_never_returns_is_stopped_with_its_fuel_reported() {
    let (verifier, _) = host()
        .load_bytes(&core_guest::load("realloc-spin"))
        .unwrap();
    let outcome = within_a_minute(move || {
        verifier.check(
            &tenant_with(deadline(200)),
            &read_packet(),
            &CheckContext::new(),
        )
    });
    assert_eq!(outcome.result, Err(CheckError::Timeout { limit_ms: 200 }));
    assert!(
        outcome.metrics.fuel_used > 10_000_000,
        "fuel used: {}",
        outcome.metrics.fuel_used
    );
    assert_good_verifier_still_works();
}

#[test]
fn fuel_is_exact_when_it_runs_out_in_the_allocator() {
    let (verifier, _) = host()
        .load_bytes(&core_guest::load("realloc-spin"))
        .unwrap();
    let limits = Limits {
        fuel: 3_000_000,
        timeout_ms: 60_000,
        ..Limits::default()
    };
    let outcome = verifier.check(&tenant_with(limits), &read_packet(), &CheckContext::new());
    assert_eq!(
        outcome.result,
        Err(CheckError::OutOfFuel { budget: 3_000_000 })
    );
    assert_eq!(outcome.metrics.fuel_used, 3_000_000);
}

#[test]
fn a_stderr_flood_leaves_a_tail_of_at_most_4_kib_cut_on_a_character() {
    // 0 to 3 trailing bytes: one of the four shifts the 4 KiB window off
    // the emoji's boundaries, whatever the panic message's length.
    for xs in 0..4 {
        let outcome = host_calls().check(
            &tenant_with(Limits::default()),
            &command(&format!("stderr-flood 8 {xs}")),
            &CheckContext::new(),
        );
        match outcome.result {
            Err(CheckError::Trap { kind, stderr_tail }) => {
                assert_eq!(kind.code(), "unreachable");
                assert!(stderr_tail.len() <= 4096, "{} bytes", stderr_tail.len());
                assert!(
                    !stderr_tail.contains('\u{FFFD}'),
                    "no character is split: {:?}",
                    stderr_tail.chars().take(4).collect::<String>()
                );
                assert!(stderr_tail.contains("flooded stderr"), "{stderr_tail:?}");
                assert!(stderr_tail.starts_with('😀'), "{xs}");
            }
            other => panic!("expected a trap, got {other:?}"),
        }
    }
    assert_good_verifier_still_works();
}

#[test]
fn the_clocks_are_virtual_coarse_and_fixed_for_the_call() {
    let outcome = host_calls().check(
        &tenant_with(deadline(5_000)),
        &command("clocks"),
        &CheckContext::new(),
    );
    let verdict = outcome.result.unwrap();
    let reason = verdict.into_parts().reason.unwrap();
    let field = |name: &str| {
        reason
            .split(';')
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("{name} in {reason}"))
            .to_owned()
    };
    // The wall clock does not move during the call, and it is the call's
    // start as recorded in the metrics.
    assert_eq!(field("same_wall"), "true", "{reason}");
    assert_eq!(
        field("wall_ms").parse::<u64>().unwrap(),
        outcome.metrics.wall_clock_ms
    );
    // Monotonic time has a 1 ms resolution.
    let slept: u64 = field("slept_ns").parse().unwrap();
    assert_eq!(slept % 1_000_000, 0, "{reason}");
    assert!(slept >= 2_000_000, "{reason}");
}

#[cfg(unix)]
#[test]
fn a_fifo_among_the_artifacts_is_not_found_and_never_blocks() {
    let root = tempfile::tempdir().unwrap();
    let fifo = root.path().join("A42");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let tenant = Tenant::new(
        "fifo",
        Limits::default(),
        Arc::new(DirStore::open(root.path()).unwrap()),
    );
    let verifier = load(guests::ARTIFACT_READY);
    let outcome =
        within_a_minute(move || verifier.check(&tenant, &read_packet(), &CheckContext::new()));
    let verdict = outcome.result.unwrap();
    assert!(!verdict.complete);
    assert_eq!(
        verdict.reason.as_deref(),
        Some("artifact A42 does not exist")
    );
    assert_good_verifier_still_works();
}

/// An artifact store whose reads block until released (a slow network
/// file system, say): the thread in a read runs no guard.
#[derive(Debug)]
struct BlockingStore {
    entered: std::sync::Mutex<mpsc::Sender<()>>,
    release: std::sync::Mutex<mpsc::Receiver<()>>,
}

impl verdict_sandbox::ArtifactStore for BlockingStore {
    fn read(
        &self,
        _id: &str,
        _max_bytes: u64,
    ) -> Result<verdict_sandbox::ArtifactData, verdict_sandbox::ArtifactError> {
        let _ = self.entered.lock().unwrap().send(());
        let _ = self
            .release
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(120));
        Err(verdict_sandbox::ArtifactError::NotFound)
    }

    fn list(
        &self,
        _prefix: &str,
        _max: usize,
    ) -> Result<Vec<String>, verdict_sandbox::ArtifactError> {
        Ok(Vec::new())
    }
}

#[test]
fn the_caller_returns_at_the_deadline_while_the_guests_thread_is_stuck() {
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    let store = Arc::new(BlockingStore {
        entered: std::sync::Mutex::new(entered_tx),
        release: std::sync::Mutex::new(release_rx),
    });
    let tenant = Tenant::new("slow-store", deadline(300), store);
    let verifier = host_calls();
    // The guest sleeps (so its call moves off the caller's thread), then
    // reads from the store, which holds that thread until released.
    let outcome = within_a_minute(move || {
        verifier.check(&tenant, &command("sleep-then-read 1"), &CheckContext::new())
    });
    assert_eq!(outcome.result, Err(CheckError::Timeout { limit_ms: 300 }));
    assert!(
        entered.try_recv().is_ok(),
        "the guest was inside the store's read when its caller returned"
    );
    // Let the abandoned call end (it stops at its next guard point).
    let _ = release.send(());
    assert_good_verifier_still_works();
}

/// The calling thread's id and its scheduler slice as the kernel shows it
/// (`se.slice` in `/proc/thread-self/sched`; `None` on a kernel without it).
fn this_thread() -> (String, Option<u64>) {
    let link = std::fs::read_link("/proc/thread-self").expect("/proc/thread-self");
    let tid = link
        .file_name()
        .map(|t| t.to_string_lossy().into_owned())
        .expect("a thread id");
    (tid.clone(), slice_of(&tid))
}

fn slice_of(tid: &str) -> Option<u64> {
    proc_number(&format!("/proc/self/task/{tid}/sched"), "se.slice")
}

/// The number on the `key` line of a `/proc` file of `key: value` lines.
fn proc_number(path: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    line.rsplit(':').next()?.trim().parse().ok()
}

/// Whether this kernel takes a slice request from a normal thread (6.12+).
fn custom_slices() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release
        .split(['.', '-'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (6, 12)
}

#[test]
fn a_blocking_caller_waits_with_the_shortest_slice_then_gets_its_own_back() {
    let (tid_tx, tid_rx) = mpsc::channel();
    let verifier = load(guests::HOSTILE_SPIN);
    let caller = std::thread::spawn(move || {
        let (tid, before) = this_thread();
        let _ = tid_tx.send(tid);
        let outcome = verifier.check(
            &tenant_with(deadline(500)),
            &read_packet(),
            &CheckContext::new(),
        );
        (outcome.result, before, this_thread().1)
    });
    let tid = tid_rx.recv_timeout(Duration::from_secs(60)).expect("tid");
    // Read the caller's slice while it waits for the spinning guest.
    let mut during = Vec::new();
    while !caller.is_finished() {
        if let Some(slice) = slice_of(&tid).filter(|s| !during.contains(s)) {
            during.push(slice);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let (result, before, after) = caller.join().expect("the caller thread");
    assert_eq!(result, Err(CheckError::Timeout { limit_ms: 500 }));
    assert_eq!(after, before, "the caller's own slice, restored");
    if let (Some(before), true) = (before, custom_slices()) {
        assert!(
            before > 100_000,
            "a default slice longer than 0.1 ms: {before}"
        );
        assert!(
            during.contains(&100_000),
            "the waiting caller asked for a 0.1 ms slice; slices seen: {during:?}"
        );
    }
}

/// How many times the calling thread has gone to sleep so far
/// (`voluntary_ctxt_switches` in `/proc/thread-self/status`).
fn sleeps_so_far() -> u64 {
    proc_number("/proc/thread-self/status", "voluntary_ctxt_switches")
        .expect("a voluntary_ctxt_switches line")
}

/// Times a blocking caller of `verifier` slept while a spinning guest ran
/// to its 300 ms deadline.
fn caller_sleeps_until_timeout(verifier: LoadedVerifier) -> u64 {
    within_a_minute(move || {
        let before = sleeps_so_far();
        let outcome = verifier.check(
            &tenant_with(deadline(300)),
            &read_packet(),
            &CheckContext::new(),
        );
        assert_eq!(outcome.result, Err(CheckError::Timeout { limit_ms: 300 }));
        sleeps_so_far() - before
    })
}

#[test]
fn a_blocking_caller_with_prompt_wakeups_checks_in_every_millisecond() {
    // One wake-up per millisecond would be 300; a loaded machine runs the
    // caller later, but not 10x later.
    let prompt = caller_sleeps_until_timeout(load(guests::HOSTILE_SPIN));
    assert!(
        prompt >= 30,
        "the caller woke to poll again while it waited: {prompt} sleeps in 300 ms"
    );
    // Without prompt wake-ups it sleeps to its deadline in one go.
    let host = VerifierHost::new(HostConfig {
        prompt_wakeups: false,
        ..HostConfig::default()
    })
    .expect("a host");
    let verifier = host.load_file(guests::HOSTILE_SPIN).expect("loads");
    let plain = caller_sleeps_until_timeout(verifier);
    assert!(
        plain < 10,
        "a caller without prompt wake-ups sleeps until its deadline: {plain} sleeps"
    );
}
