//! What the journal holds for each step of an execution, and how a replay
//! compares it with what the loop asks for now.
//!
//! Every step opens with one `ctx.run` entry named `step N` (N counts the
//! steps of the execution: 0 is its setup, then every model call, check
//! and tool call, then its finish). The name says nothing of the step's
//! kind, so Restate never sees two attempts disagree on it; the entry's
//! value does: [`Entry`] carries what was asked (the kind and a
//! fingerprint of the request), what was answered, and the state writes
//! that follow it. A replay compares the journaled entry with what the
//! loop asks for now ([`Asked::compare`]) and, when they differ, ends the
//! execution as failed, naming the difference ([`crate::drain`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use verdict_policy::{CheckerError, Effect};
use verdict_providers::{ModelResponse, ProviderError};

use crate::record::ExecutionRecord;
use crate::setup::Setup;

/// The journal format this worker writes and reads. An execution started
/// by a worker with another format is refused at its setup.
pub(crate) const JOURNAL_FORMAT: u32 = 2;

/// The `ctx.run` name of step `n`.
pub(crate) fn step_name(n: u64) -> String {
    format!("step {n}")
}

/// The `ctx.run` name of a tool call's result entry (after its start).
pub(crate) fn call_name(marker: &StartMarker) -> String {
    format!("call {} {}", marker.sequence, marker.tool)
}

/// Lowercase hex SHA-256 of a value's JSON (maps serialize sorted, so the
/// same value always has the same fingerprint).
pub(crate) fn fingerprint<T: Serialize + ?Sized>(value: &T) -> String {
    hex::encode(Sha256::digest(
        serde_json::to_vec(value).unwrap_or_default(),
    ))
}

/// One state write, journaled with the entry it follows so a replay
/// writes exactly what the first attempt wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "as", rename_all = "snake_case")]
pub(crate) enum StateWrite {
    /// Written as JSON.
    Json { key: String, value: Value },
    /// Written as text (the conversation, the tenant).
    Text { key: String, value: String },
}

impl StateWrite {
    /// The record `record` under `key`.
    pub(crate) fn record(key: &str, record: &ExecutionRecord) -> Self {
        Self::Json {
            key: key.to_owned(),
            value: serde_json::to_value(record).unwrap_or(Value::Null),
        }
    }

    /// The execution record this write holds, when it holds one.
    pub(crate) fn as_record(&self) -> Option<ExecutionRecord> {
        match self {
            Self::Json { key, value } if key.starts_with("execution:") => {
                serde_json::from_value(value.clone()).ok()
            }
            _ => None,
        }
    }
}

/// A model call's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ModelAnswer {
    Response(ModelResponse),
    /// The error, with its class (a replay gives back the same error).
    Error(ProviderError),
}

/// Which checker a check asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CheckRole {
    Completion,
    Progress,
}

/// A check's answer: a verdict (as its JSON) or a key, or the error, as
/// decided within the check's deadline.
pub(crate) type CheckAnswer = Result<String, CheckerError>;

/// The journaled start of a tool call: its admission.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StartMarker {
    pub sequence: u64,
    pub call_id: String,
    pub tool: String,
    pub effect: Effect,
    pub idempotency_key: String,
    /// SHA-256 of the call's arguments.
    pub arguments_sha256: String,
}

/// A tool call's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ToolAnswer {
    Value(Value),
    Failed(String),
    Unknown(String),
    /// Started before a crash, result never journaled, not run again.
    Uncertain,
    /// Started before a crash and run again (idempotent or a read).
    Rerun(Box<ToolAnswer>),
    /// Never run: the execution failed at a mismatch before its result
    /// was journaled.
    Abandoned,
}

/// The value of a tool call's result entry (`call N TOOL`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ToolResult {
    pub answer: ToolAnswer,
    pub sets: Vec<StateWrite>,
}

/// The value of a `step N` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Entry {
    /// Step 0: what the execution runs with.
    Setup { setup: Setup, sets: Vec<StateWrite> },
    Model {
        request_sha256: String,
        answer: ModelAnswer,
    },
    Check {
        role: CheckRole,
        checker: String,
        packet_sha256: String,
        answer: CheckAnswer,
        /// The id of the check's record, when the checker wrote one.
        record: Option<String>,
        sets: Vec<StateWrite>,
    },
    /// A tool call's start; its result is the next entry.
    ToolStart { marker: StartMarker },
    /// The loop ended: the final writes (the conversation, the record).
    Finish {
        sets: Vec<StateWrite>,
        record: Box<ExecutionRecord>,
    },
    /// Journaled when a replay that found a mismatch reached the end of
    /// the journal (the execution then fails).
    End,
}

impl Entry {
    /// The state writes that follow this entry (a tool start's follow its
    /// result entry).
    pub(crate) fn sets(&self) -> &[StateWrite] {
        match self {
            Self::Setup { sets, .. } | Self::Check { sets, .. } | Self::Finish { sets, .. } => sets,
            Self::Model { .. } | Self::ToolStart { .. } | Self::End => &[],
        }
    }

    /// What this entry is, in words.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Setup { .. } => "the execution's setup".to_owned(),
            Self::Model { .. } => "a model call".to_owned(),
            Self::Check { role, checker, .. } => format!("{} ({checker:?})", role.describe()),
            Self::ToolStart { marker } => {
                format!(
                    "tool call {} ({}, call {})",
                    marker.sequence, marker.tool, marker.call_id
                )
            }
            Self::Finish { .. } => "the end of the execution".to_owned(),
            Self::End => "the end of a failed replay".to_owned(),
        }
    }
}

impl CheckRole {
    fn describe(self) -> &'static str {
        match self {
            Self::Completion => "a completion check",
            Self::Progress => "a progress sample",
        }
    }
}

/// What the loop asks for at a step, before its answer is known.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Asked {
    Setup(Setup),
    Model {
        request_sha256: String,
    },
    Check {
        role: CheckRole,
        checker: String,
        packet_sha256: String,
    },
    ToolStart(StartMarker),
    Finish,
}

impl Asked {
    /// What the loop asks for, in words.
    fn describe(&self) -> String {
        match self {
            Self::Setup(_) => "the execution's setup".to_owned(),
            Self::Model { .. } => "a model call".to_owned(),
            Self::Check { role, checker, .. } => format!("{} ({checker:?})", role.describe()),
            Self::ToolStart(marker) => {
                format!(
                    "tool call {} ({}, call {})",
                    marker.sequence, marker.tool, marker.call_id
                )
            }
            Self::Finish => "the end of the execution".to_owned(),
        }
    }

    /// `Ok` when the journaled `entry` answers this request; otherwise
    /// what differs.
    pub(crate) fn compare(&self, entry: &Entry) -> Result<(), String> {
        match (self, entry) {
            (Self::Setup(now), Entry::Setup { setup, .. }) => setup.differences(now),
            (
                Self::Model {
                    request_sha256: now,
                },
                Entry::Model { request_sha256, .. },
            ) => {
                if now == request_sha256 {
                    Ok(())
                } else {
                    Err(
                        "the model request differs from the journaled one (the conversation, \
                         instructions, tools or model changed)"
                            .to_owned(),
                    )
                }
            }
            (
                Self::Check {
                    role: r,
                    checker: c,
                    packet_sha256: p,
                },
                Entry::Check {
                    role,
                    checker,
                    packet_sha256,
                    ..
                },
            ) => {
                if r != role {
                    Err(format!(
                        "the journal holds {}, the loop now asks for {}",
                        entry.describe(),
                        self.describe()
                    ))
                } else if c != checker {
                    Err(format!(
                        "the {} checker changed: journaled {checker:?}, now {c:?}",
                        match role {
                            CheckRole::Completion => "completion",
                            CheckRole::Progress => "progress",
                        }
                    ))
                } else if p != packet_sha256 {
                    Err("the check packet differs from the journaled one".to_owned())
                } else {
                    Ok(())
                }
            }
            (Self::ToolStart(now), Entry::ToolStart { marker }) => {
                if now == marker {
                    Ok(())
                } else if now.tool != marker.tool || now.call_id != marker.call_id {
                    Err(format!(
                        "tool call {} was {} ({}), now {} ({})",
                        marker.sequence, marker.tool, marker.call_id, now.tool, now.call_id
                    ))
                } else if now.effect != marker.effect {
                    Err(format!(
                        "tool {}'s effect was {:?}, now {:?}",
                        now.tool, marker.effect, now.effect
                    ))
                } else {
                    Err(format!(
                        "tool call {} ({}) has other arguments than the journaled one",
                        now.sequence, now.tool
                    ))
                }
            }
            (Self::Finish, Entry::Finish { .. }) => Ok(()),
            _ => Err(format!(
                "the journal holds {}, the loop now asks for {}",
                entry.describe(),
                self.describe()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::time::Duration;
    use verdict_providers::{AttemptRefusal, TimeoutPhase};

    fn round_trip(entry: &Entry) -> Entry {
        serde_json::from_value(serde_json::to_value(entry).unwrap()).unwrap()
    }

    /// A model error comes back from the journal as the same error, class
    /// and all (before, every error came back as `Transport`).
    #[test]
    fn a_journaled_model_error_keeps_its_class() {
        let errors = [
            ProviderError::Server {
                status: 503,
                message: "overloaded".into(),
            },
            ProviderError::RateLimited {
                retry_after: Some(Duration::from_millis(1500)),
                message: "slow down".into(),
            },
            ProviderError::AttemptRefused {
                reason: AttemptRefusal::BudgetSpent { max_calls: 4 },
            },
            ProviderError::Cancelled,
            ProviderError::Timeout {
                phase: TimeoutPhase::FirstByte,
                after: Duration::from_secs(30),
            },
            ProviderError::BadRequest {
                status: 400,
                message: "no".into(),
            },
        ];
        for error in errors {
            let entry = Entry::Model {
                request_sha256: "ab".into(),
                answer: ModelAnswer::Error(error.clone()),
            };
            assert_eq!(round_trip(&entry), entry, "{error}");
        }
    }

    /// A check's error comes back with its class too (an invalid verdict
    /// or an over-long key used to come back as `Failed`).
    #[test]
    fn a_journaled_checker_error_keeps_its_class() {
        for error in [
            CheckerError::Timeout,
            CheckerError::OutOfFuel,
            CheckerError::Failed("trap".into()),
            CheckerError::InvalidVerdict(verdict_policy::VerdictError::ReasonTooLong {
                chars: 401,
            }),
            CheckerError::ProgressKeyTooLong { chars: 4001 },
        ] {
            let entry = Entry::Check {
                role: CheckRole::Progress,
                checker: "sha256:1".into(),
                packet_sha256: "cd".into(),
                answer: Err(error.clone()),
                record: Some("r1".into()),
                sets: vec![],
            };
            assert_eq!(round_trip(&entry), entry, "{error}");
        }
    }

    #[test]
    fn a_step_of_another_kind_is_named_as_such() {
        let journaled = Entry::ToolStart {
            marker: StartMarker {
                sequence: 1,
                call_id: "w1".into(),
                tool: "write_artifact".into(),
                effect: Effect::Write,
                idempotency_key: "c/e:1".into(),
                arguments_sha256: "x".into(),
            },
        };
        let asked = Asked::Model {
            request_sha256: "y".into(),
        };
        let why = asked.compare(&journaled).unwrap_err();
        assert!(why.contains("tool call 1 (write_artifact"), "{why}");
        assert!(why.contains("now asks for a model call"), "{why}");
    }

    #[test]
    fn a_changed_checker_or_request_is_a_difference() {
        let journaled = Entry::Check {
            role: CheckRole::Completion,
            checker: "sha256:old".into(),
            packet_sha256: "p".into(),
            answer: Ok("{}".into()),
            record: None,
            sets: vec![],
        };
        let same = Asked::Check {
            role: CheckRole::Completion,
            checker: "sha256:old".into(),
            packet_sha256: "p".into(),
        };
        assert!(same.compare(&journaled).is_ok());
        let other = Asked::Check {
            role: CheckRole::Completion,
            checker: "sha256:new".into(),
            packet_sha256: "p".into(),
        };
        let why = other.compare(&journaled).unwrap_err();
        assert!(
            why.contains("sha256:old") && why.contains("sha256:new"),
            "{why}"
        );
        let model = Entry::Model {
            request_sha256: "a".into(),
            answer: ModelAnswer::Error(ProviderError::Cancelled),
        };
        assert!(
            Asked::Model {
                request_sha256: "a".into()
            }
            .compare(&model)
            .is_ok()
        );
        assert!(
            Asked::Model {
                request_sha256: "b".into()
            }
            .compare(&model)
            .is_err()
        );
    }
}
