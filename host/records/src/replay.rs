//! Replaying a record: its call again in a fresh sandbox, with what the
//! guest saw then, and the answers compared field by field.

use crate::cas::Cas;
use crate::error::RecordError;
use crate::format::{CheckRecord, RecordRole, RecordedAnswer};
use std::sync::Arc;
use verdict_policy::CheckContext;
use verdict_sandbox::{Limits, LoadedVerifier, MemoryStore, Tape, TapeMismatch, Tenant};

/// Most fuel a replay gives a call by default (100 times the default
/// budget): a record asking for more is run with this much.
pub const MAX_REPLAY_FUEL: u64 = 100_000_000_000;

/// The limits a replay runs within by default: every limit's largest
/// accepted value ([`Limits::MAX_TIMEOUT_MS`], ...), fuel
/// [`MAX_REPLAY_FUEL`].
pub fn default_replay_caps() -> Limits {
    Limits {
        fuel: MAX_REPLAY_FUEL,
        timeout_ms: Limits::MAX_TIMEOUT_MS,
        memory_bytes: Limits::MAX_MEMORY_BYTES,
        artifact_bytes_per_read: Limits::MAX_ARTIFACT_BYTES,
        artifact_reads_per_call: Limits::MAX_ARTIFACT_OPS,
        list_max_entries: Limits::MAX_ARTIFACT_OPS,
        table_elements: Limits::MAX_TABLE_ELEMENTS,
        instances: Limits::MAX_INSTANCES,
    }
}

/// The limits `record` is replayed under: its own, refused when one is out
/// of a sandbox's range ([`Limits::validate`]), each cut to `caps`. Also
/// the names of the fields that were cut (a replay of a cut record that
/// needed more answers differently, and says so).
pub fn replay_limits(
    record: &CheckRecord,
    caps: &Limits,
) -> Result<(Limits, Vec<&'static str>), RecordError> {
    let given = record.limits;
    given.validate().map_err(|source| RecordError::Limits {
        id: record.id.clone(),
        source,
    })?;
    let mut cut = Vec::new();
    let mut cap = |field: &'static str, value: u64, max: u64| {
        if value > max {
            cut.push(field);
        }
        value.min(max)
    };
    let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let limits = Limits {
        fuel: cap("fuel", given.fuel, caps.fuel),
        timeout_ms: cap("timeout_ms", given.timeout_ms, caps.timeout_ms),
        memory_bytes: cap("memory_bytes", given.memory_bytes, caps.memory_bytes),
        artifact_bytes_per_read: cap(
            "artifact_bytes_per_read",
            given.artifact_bytes_per_read,
            caps.artifact_bytes_per_read,
        ),
        artifact_reads_per_call: small(cap(
            "artifact_reads_per_call",
            given.artifact_reads_per_call.into(),
            caps.artifact_reads_per_call.into(),
        )),
        list_max_entries: small(cap(
            "list_max_entries",
            given.list_max_entries.into(),
            caps.list_max_entries.into(),
        )),
        table_elements: small(cap(
            "table_elements",
            given.table_elements.into(),
            caps.table_elements.into(),
        )),
        instances: small(cap(
            "instances",
            given.instances.into(),
            caps.instances.into(),
        )),
    };
    Ok((limits, cut))
}

/// One field whose replayed value differs from the recorded one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// `answer`, `complete`, `reason`, `feedback`, `key`, `error`, or
    /// `tape` (the replay's questions about its timers left the recorded
    /// ones: [`TapeMismatch`]).
    pub field: String,
    /// The recorded value.
    pub recorded: String,
    /// The replayed value.
    pub replayed: String,
}

/// What a replay found.
#[derive(Debug, Clone)]
pub struct ReplayOutcome {
    /// The replayed call's answer.
    pub answer: RecordedAnswer,
    /// The fields that differ (none: the answer is identical).
    pub differences: Vec<Difference>,
    /// Fuel the replay used (the record holds the original's).
    pub fuel_used: u64,
    /// The digest of the verifier replayed.
    pub verifier: String,
    /// The record's limits that were cut to the replay's caps.
    pub capped: Vec<&'static str>,
}

impl ReplayOutcome {
    /// True when the answer is identical.
    pub fn identical(&self) -> bool {
        self.differences.is_empty()
    }
}

/// The bytes of the record's verifier, from `cas` (checked against its
/// digest).
pub fn recorded_component(record: &CheckRecord, cas: &Cas) -> Result<Vec<u8>, RecordError> {
    cas.get(
        &record.verifier.digest,
        &format!("verifier {}", record.verifier.digest),
    )
}

/// Replays `record` against `verifier`. With `same_build`, the verifier
/// must be the recorded one (its digest is checked); without, it is
/// another build of it (regression testing against old records).
/// Artifact bytes come from `cas`, each checked against its recorded hash.
/// The record's limits are checked and cut to [`default_replay_caps`]
/// ([`replay_within`] takes other caps).
pub async fn replay(
    record: &CheckRecord,
    cas: &Cas,
    verifier: &LoadedVerifier,
    same_build: bool,
) -> Result<ReplayOutcome, RecordError> {
    replay_within(record, cas, verifier, same_build, &default_replay_caps()).await
}

/// [`replay`] within `caps` ([`replay_limits`]).
pub async fn replay_within(
    record: &CheckRecord,
    cas: &Cas,
    verifier: &LoadedVerifier,
    same_build: bool,
    caps: &Limits,
) -> Result<ReplayOutcome, RecordError> {
    record.verify()?;
    let (limits, capped) = replay_limits(record, caps)?;
    if same_build && verifier.digest() != record.verifier.digest {
        return Err(RecordError::Tampered {
            what: "verifier".into(),
            detail: format!(
                "the component's digest is {}, recorded {}",
                verifier.digest(),
                record.verifier.digest
            ),
        });
    }
    let trace = record.trace(cas)?;
    let packet = record.check_packet()?;
    // The trace answers every artifact read: the tenant's store is unused.
    let tenant = Tenant::new(record.tenant.clone(), limits, Arc::new(MemoryStore::new()));
    let ctx = CheckContext::new();
    let (answer, fuel_used, mismatch) = match record.role {
        RecordRole::Completion => {
            let taped = verifier
                .check_taped(&tenant, &packet, &ctx, Tape::Replay(&trace))
                .await;
            (
                RecordedAnswer::of_verdict(&taped.report.result),
                taped.report.metrics.fuel_used,
                taped.trace.mismatch,
            )
        }
        RecordRole::Progress => {
            let taped = verifier
                .progress_key_taped(&tenant, &packet, &ctx, Tape::Replay(&trace))
                .await;
            (
                RecordedAnswer::of_key(&taped.report.result),
                taped.report.metrics.fuel_used,
                taped.trace.mismatch,
            )
        }
    };
    let mut differences = differences(&record.answer, &answer);
    if let Some(mismatch) = mismatch.filter(|m| counts(m, record.complete)) {
        differences.push(Difference {
            field: "tape".into(),
            recorded: "the recorded timer questions".into(),
            replayed: mismatch.to_string(),
        });
    }
    Ok(ReplayOutcome {
        differences,
        answer,
        fuel_used,
        verifier: verifier.digest().to_owned(),
        capped,
    })
}

/// Whether a replay's tape mismatch is a difference: always, except for a
/// record stopped at its deadline (`complete` false), whose tape may end
/// before the guest's questions did.
fn counts(mismatch: &TapeMismatch, complete: bool) -> bool {
    complete
        || !matches!(
            mismatch,
            TapeMismatch::Unrecorded { .. } | TapeMismatch::Unasked { .. }
        )
}

fn kind(answer: &RecordedAnswer) -> String {
    match answer {
        RecordedAnswer::Verdict { .. } => "verdict".into(),
        RecordedAnswer::Key { .. } => "key".into(),
        RecordedAnswer::Error { class, .. } => format!("error ({class})"),
    }
}

fn shown(value: Option<&str>) -> String {
    value.map_or_else(|| "(none)".to_owned(), |v| format!("{v:?}"))
}

/// The fields where `replayed` differs from `recorded` (an error's message
/// is not compared, its class is).
pub fn differences(recorded: &RecordedAnswer, replayed: &RecordedAnswer) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut field = |name: &str, a: String, b: String| {
        if a != b {
            out.push(Difference {
                field: name.to_owned(),
                recorded: a,
                replayed: b,
            });
        }
    };
    match (recorded, replayed) {
        (RecordedAnswer::Verdict { verdict: a }, RecordedAnswer::Verdict { verdict: b }) => {
            field("complete", a.complete.to_string(), b.complete.to_string());
            field(
                "reason",
                shown(a.reason.as_deref()),
                shown(b.reason.as_deref()),
            );
            field(
                "feedback",
                shown(a.feedback.as_deref()),
                shown(b.feedback.as_deref()),
            );
        }
        (RecordedAnswer::Key { key: a }, RecordedAnswer::Key { key: b }) => {
            field("key", format!("{a:?}"), format!("{b:?}"));
        }
        (RecordedAnswer::Error { class: a, .. }, RecordedAnswer::Error { class: b, .. }) => {
            field("error", a.clone(), b.clone());
        }
        (a, b) => field("answer", kind(a), kind(b)),
    }
    out
}
