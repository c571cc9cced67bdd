//! The check record: one JSON file per check (see the crate docs for what
//! it holds and its size bound).

use crate::cas::{Cas, sha256_hex};
use crate::error::RecordError;
use serde::{Deserialize, Serialize};
use std::path::Path;
use verdict_policy::{CheckPacket, PacketParts, Verdict};
use verdict_sandbox::{
    ArtifactData, ArtifactError, ArtifactOp, CallMetrics, CallTrace, CheckError, ClockRun, Limits,
    MAX_TIMER_RUNS, SEED_BYTES, TimerOp,
};

/// The `format` of the records this version writes and reads.
pub const RECORD_FORMAT: &str = "verdict.check-record/1";

/// Which export a record's call entered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordRole {
    /// `completion.check`: the answer is a verdict.
    Completion,
    /// `progress.progress-key`: the answer is a key.
    Progress,
}

/// The verifier a record's call ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedVerifier {
    /// Lowercase hex SHA-256 of the component's bytes (also its key in the
    /// record store's `cas/`, when the recorder kept it).
    pub digest: String,
    /// The WIT version it was built against (`0.1`).
    pub wit_version: String,
}

/// The clocks the guest saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedClock {
    /// `wall-clock.now`, milliseconds since the Unix epoch (fixed per call).
    pub wall_ms: u64,
    /// `monotonic-clock.now` readings in order, as `[nanoseconds, count]`
    /// runs of equal readings.
    pub monotonic: Vec<(u64, u32)>,
}

/// One artifact operation, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum RecordedArtifactOp {
    /// `artifacts.read`.
    Read {
        /// The id asked for.
        id: String,
        /// `ok`, `not_found`, `denied`, `too_large` or `limit_reached`.
        outcome: String,
        /// The artifact's revision (`ok`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        revision: Option<String>,
        /// Bytes returned (`ok`), or the artifact's size (`too_large`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
        /// SHA-256 of the bytes returned, their key in `cas/` (`ok`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sha256: Option<String>,
    },
    /// `artifacts.list`.
    List {
        /// The prefix asked for.
        prefix: String,
        /// `ok`, or why it was refused.
        outcome: String,
        /// The ids returned (`ok`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ids: Option<Vec<String>>,
    },
}

/// One run of questions about the guest's timers (`wasi:clocks`
/// subscriptions) and their answer, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum RecordedTimerOp {
    /// `pollable.ready()`, answered `ready`, `count` times in a row.
    Ready {
        /// The answer.
        ready: bool,
        /// Questions in the run.
        count: u32,
    },
    /// `pollable.block()` returned, `count` times in a row.
    Block {
        /// Questions in the run.
        count: u32,
    },
    /// `poll` of `asked` pollables (a timer among them) answered with the
    /// indices `ready`, `count` times in a row.
    Poll {
        /// The length of the list polled.
        asked: u32,
        /// The indices answered ready.
        ready: Vec<u32>,
        /// Questions in the run.
        count: u32,
    },
}

impl From<&TimerOp> for RecordedTimerOp {
    fn from(op: &TimerOp) -> Self {
        match op {
            TimerOp::Ready { ready, count } => Self::Ready {
                ready: *ready,
                count: *count,
            },
            TimerOp::Block { count } => Self::Block { count: *count },
            TimerOp::Poll {
                asked,
                ready,
                count,
            } => Self::Poll {
                asked: *asked,
                ready: ready.clone(),
                count: *count,
            },
        }
    }
}

impl RecordedTimerOp {
    /// The sandbox's entry, or why it cannot be one.
    fn to_op(&self) -> Result<TimerOp, String> {
        let op = match self {
            Self::Ready { ready, count } => TimerOp::Ready {
                ready: *ready,
                count: *count,
            },
            Self::Block { count } => TimerOp::Block { count: *count },
            Self::Poll {
                asked,
                ready,
                count,
            } => {
                if ready.is_empty() || ready.iter().any(|i| i >= asked) {
                    return Err(format!("a poll of {asked} answered {ready:?}"));
                }
                TimerOp::Poll {
                    asked: *asked,
                    ready: ready.clone(),
                    count: *count,
                }
            }
        };
        if op.count() == 0 {
            return Err("a run of 0 questions".into());
        }
        Ok(op)
    }
}

/// What the call answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RecordedAnswer {
    /// A completion verdict.
    Verdict {
        /// The verdict.
        verdict: Verdict,
    },
    /// A progress key.
    Key {
        /// The key.
        key: String,
    },
    /// No answer: the error's class (`timeout`, `trap:unreachable`, ...)
    /// and message.
    Error {
        /// The class replays compare.
        class: String,
        /// The sandbox's message (not compared).
        message: String,
    },
}

impl RecordedAnswer {
    /// The answer of a completion call.
    pub fn of_verdict(result: &Result<Verdict, CheckError>) -> Self {
        match result {
            Ok(verdict) => Self::Verdict {
                verdict: verdict.clone(),
            },
            Err(e) => Self::error(e),
        }
    }

    /// The answer of a progress call.
    pub fn of_key(result: &Result<String, CheckError>) -> Self {
        match result {
            Ok(key) => Self::Key { key: key.clone() },
            Err(e) => Self::error(e),
        }
    }

    fn error(e: &CheckError) -> Self {
        let class = match e {
            CheckError::Trap { kind, .. } => format!("trap:{}", kind.code()),
            other => other.code().to_owned(),
        };
        Self::Error {
            class,
            message: e.to_string(),
        }
    }
}

/// What the call used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedMetrics {
    /// Wall time, microseconds.
    pub duration_us: u64,
    /// Fuel consumed.
    pub fuel_used: u64,
    /// Largest linear memory, bytes.
    pub peak_memory_bytes: u64,
    /// Artifact operations.
    pub artifact_reads: u32,
    /// Artifact bytes returned.
    pub artifact_bytes: u64,
}

impl From<&CallMetrics> for RecordedMetrics {
    fn from(m: &CallMetrics) -> Self {
        Self {
            duration_us: u64::try_from(m.duration.as_micros()).unwrap_or(u64::MAX),
            fuel_used: m.fuel_used,
            peak_memory_bytes: m.peak_memory_bytes,
            artifact_reads: m.artifact_reads,
            artifact_bytes: m.artifact_bytes,
        }
    }
}

/// One check, recorded (see the crate docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckRecord {
    /// [`RECORD_FORMAT`].
    pub format: String,
    /// The check's id: 32 hex digits, unique per check.
    pub id: String,
    /// The tenant the check ran for.
    pub tenant: String,
    /// The export the call entered.
    pub role: RecordRole,
    /// The component.
    pub verifier: RecordedVerifier,
    /// The tenant's limits for the call.
    pub limits: Limits,
    /// The packet, as the verifier received it.
    pub packet: PacketParts,
    /// SHA-256 of the packet's JSON.
    pub packet_sha256: String,
    /// The clocks the guest saw.
    pub clock: RecordedClock,
    /// The seed of the guest's `wasi:random` streams, hex.
    pub seed: String,
    /// Every artifact operation, in order.
    pub artifacts: Vec<RecordedArtifactOp>,
    /// Every question about a timer and its answer, in runs (at most
    /// [`MAX_TIMER_RUNS`]). Absent from records written before timers were
    /// taped (same format): replaying one, timers answer live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timers: Option<Vec<RecordedTimerOp>>,
    /// The answer.
    pub answer: RecordedAnswer,
    /// What the call used.
    pub metrics: RecordedMetrics,
    /// False when the trace may miss something the guest saw (the call was
    /// stopped at its deadline before the guest did): a replay compares
    /// the answer only.
    pub complete: bool,
    /// SHA-256 of this record's JSON with this field empty: a change to any
    /// field after the record was written is detected.
    pub integrity: String,
}

/// SHA-256 of a value's JSON.
pub(crate) fn json_sha256<T: Serialize>(value: &T) -> String {
    // Plain data with string keys: serialization cannot fail.
    sha256_hex(&serde_json::to_vec(value).unwrap_or_default())
}

/// The record's name for an artifact refusal.
fn refusal_code(e: &ArtifactError) -> (String, Option<u64>) {
    match e {
        ArtifactError::NotFound => ("not_found".into(), None),
        ArtifactError::TooLarge(size) => ("too_large".into(), Some(*size)),
        ArtifactError::LimitReached => ("limit_reached".into(), None),
        _ => ("denied".into(), None),
    }
}

fn refusal(code: &str, bytes: Option<u64>) -> Result<ArtifactError, String> {
    Ok(match code {
        "not_found" => ArtifactError::NotFound,
        "denied" => ArtifactError::Denied,
        "too_large" => ArtifactError::TooLarge(bytes.unwrap_or(0)),
        "limit_reached" => ArtifactError::LimitReached,
        other => return Err(format!("unknown artifact outcome `{other}`")),
    })
}

/// What the checking thread hands to the writer: the call as it happened,
/// with the artifact bytes still in memory.
#[derive(Debug, Clone)]
pub struct RecordInput {
    /// The check's id.
    pub id: String,
    /// The tenant.
    pub tenant: String,
    /// The export entered.
    pub role: RecordRole,
    /// The component.
    pub verifier: RecordedVerifier,
    /// The limits.
    pub limits: Limits,
    /// The packet.
    pub packet: CheckPacket,
    /// What the guest saw.
    pub trace: CallTrace,
    /// The answer.
    pub answer: RecordedAnswer,
    /// What the call used.
    pub metrics: RecordedMetrics,
}

impl RecordInput {
    /// The record, its artifact bytes kept in `cas`.
    pub fn into_record(self, cas: &Cas) -> Result<CheckRecord, RecordError> {
        let packet = self.packet.into_parts();
        let artifacts = self
            .trace
            .artifacts
            .iter()
            .map(|op| record_op(op, cas))
            .collect::<Result<Vec<_>, _>>()?;
        let mut record = CheckRecord {
            format: RECORD_FORMAT.to_owned(),
            id: self.id,
            tenant: self.tenant,
            role: self.role,
            verifier: self.verifier,
            limits: self.limits,
            packet_sha256: json_sha256(&packet),
            packet,
            clock: RecordedClock {
                wall_ms: self.trace.wall_clock_ms,
                monotonic: self
                    .trace
                    .monotonic
                    .iter()
                    .map(|r| (r.nanos, r.count))
                    .collect(),
            },
            seed: hex::encode(self.trace.seed),
            artifacts,
            timers: self
                .trace
                .timers
                .as_ref()
                .map(|ops| ops.iter().map(RecordedTimerOp::from).collect()),
            answer: self.answer,
            metrics: self.metrics,
            complete: self.trace.complete,
            integrity: String::new(),
        };
        record.integrity = json_sha256(&record);
        Ok(record)
    }
}

fn record_op(op: &ArtifactOp, cas: &Cas) -> Result<RecordedArtifactOp, RecordError> {
    Ok(match op {
        ArtifactOp::Read { id, result } => match result {
            Ok(data) => RecordedArtifactOp::Read {
                id: id.clone(),
                outcome: "ok".into(),
                revision: Some(data.revision.clone()),
                bytes: Some(data.bytes.len() as u64),
                sha256: Some(cas.put(&data.bytes)?),
            },
            Err(e) => {
                let (outcome, bytes) = refusal_code(e);
                RecordedArtifactOp::Read {
                    id: id.clone(),
                    outcome,
                    revision: None,
                    bytes,
                    sha256: None,
                }
            }
        },
        ArtifactOp::List { prefix, result } => match result {
            Ok(ids) => RecordedArtifactOp::List {
                prefix: prefix.clone(),
                outcome: "ok".into(),
                ids: Some(ids.clone()),
            },
            Err(e) => RecordedArtifactOp::List {
                prefix: prefix.clone(),
                outcome: refusal_code(e).0,
                ids: None,
            },
        },
    })
}

impl CheckRecord {
    /// Reads the record at `path` and checks its integrity hash and its
    /// packet's hash.
    pub fn load(path: &Path) -> Result<Self, RecordError> {
        let bytes = std::fs::read(path).map_err(|e| RecordError::io(path, e))?;
        let record: Self = serde_json::from_slice(&bytes).map_err(|e| RecordError::Format {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        if record.format != RECORD_FORMAT {
            return Err(RecordError::Format {
                path: path.to_owned(),
                message: format!(
                    "format `{}`, this version reads `{RECORD_FORMAT}`",
                    record.format
                ),
            });
        }
        record.verify()?;
        Ok(record)
    }

    /// Checks the integrity hash and the packet's hash.
    pub fn verify(&self) -> Result<(), RecordError> {
        let found = json_sha256(&Self {
            integrity: String::new(),
            ..self.clone()
        });
        if found != self.integrity {
            return Err(RecordError::Tampered {
                what: format!("record {}", self.id),
                detail: format!("its content hashes to {found}, recorded {}", self.integrity),
            });
        }
        let packet = json_sha256(&self.packet);
        if packet != self.packet_sha256 {
            return Err(RecordError::Tampered {
                what: "packet".into(),
                detail: format!("it hashes to {packet}, recorded {}", self.packet_sha256),
            });
        }
        Ok(())
    }

    /// The packet, checked against the policy's bounds.
    pub fn check_packet(&self) -> Result<CheckPacket, RecordError> {
        CheckPacket::from_parts(self.packet.clone()).map_err(|e| RecordError::Format {
            path: self.id.clone().into(),
            message: format!("packet: {e}"),
        })
    }

    /// The trace to replay: the seed, the clocks, and every artifact answer
    /// with its bytes from `cas`, each checked against its recorded hash.
    pub fn trace(&self, cas: &Cas) -> Result<CallTrace, RecordError> {
        let bad = |message: String| RecordError::Format {
            path: self.id.clone().into(),
            message,
        };
        let seed_bytes = hex::decode(&self.seed).map_err(|e| bad(format!("seed: {e}")))?;
        let seed: [u8; SEED_BYTES] = seed_bytes
            .try_into()
            .map_err(|_| bad("seed: not 32 bytes".into()))?;
        let mut trace = CallTrace::new(seed, self.clock.wall_ms);
        trace.complete = self.complete;
        trace.monotonic = self
            .clock
            .monotonic
            .iter()
            .map(|&(nanos, count)| ClockRun { nanos, count })
            .collect();
        trace.timers = match &self.timers {
            None => None,
            Some(ops) if ops.len() > MAX_TIMER_RUNS => {
                return Err(bad(format!(
                    "timers: {} runs, at most {MAX_TIMER_RUNS}",
                    ops.len()
                )));
            }
            Some(ops) => Some(
                ops.iter()
                    .map(RecordedTimerOp::to_op)
                    .collect::<Result<_, _>>()
                    .map_err(|e| bad(format!("timers: {e}")))?,
            ),
        };
        for op in &self.artifacts {
            trace.artifacts.push(match op {
                RecordedArtifactOp::Read {
                    id,
                    outcome,
                    revision,
                    bytes,
                    sha256,
                } => {
                    let result = if outcome == "ok" {
                        let hash = sha256
                            .as_deref()
                            .ok_or_else(|| bad(format!("artifact {id}: no sha256")))?;
                        let content = cas.get(hash, &format!("artifact {id}"))?;
                        if Some(content.len() as u64) != *bytes {
                            return Err(RecordError::Tampered {
                                what: format!("artifact {id}"),
                                detail: format!(
                                    "{} bytes stored, {bytes:?} recorded",
                                    content.len()
                                ),
                            });
                        }
                        Ok(ArtifactData {
                            id: id.clone(),
                            revision: revision.clone().unwrap_or_default(),
                            size: content.len() as u64,
                            bytes: content,
                        })
                    } else {
                        Err(refusal(outcome, *bytes).map_err(bad)?)
                    };
                    ArtifactOp::Read {
                        id: id.clone(),
                        result,
                    }
                }
                RecordedArtifactOp::List {
                    prefix,
                    outcome,
                    ids,
                } => {
                    let result = if outcome == "ok" {
                        Ok(ids.clone().unwrap_or_default())
                    } else {
                        Err(refusal(outcome, None).map_err(bad)?)
                    };
                    ArtifactOp::List {
                        prefix: prefix.clone(),
                        result,
                    }
                }
            });
        }
        Ok(trace)
    }
}
