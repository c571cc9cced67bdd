//! The detached check packet a completion or progress checker receives.
//!
//! Field names follow the spec (`outputText`, `observedToolCalls`, ...) when
//! serialized as JSON. The bounds are constants here and hold for every
//! [`CheckPacket`]: the engine builds packets within them (cutting the
//! output, dropping the oldest observations), and the only other way to get
//! one — [`CheckPacket::from_parts`], or parsing JSON — refuses a packet
//! outside them instead of cutting it. A checker, and the sandbox lowering a
//! packet for a verifier, can rely on them without measuring again.

use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize};

/// Candidate output is cut to this many characters (Unicode scalar values).
pub const MAX_OUTPUT_CHARS: usize = 32_768;
/// At most this many (most recent) observations are carried.
pub const MAX_OBSERVATIONS: usize = 100;
/// The whole packet serializes to at most this many bytes of JSON.
pub const MAX_PACKET_BYTES: usize = 1024 * 1024;

/// The effect a tool declared when it was registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// An actual read with no external effect.
    Read,
    /// A write or other external effect.
    Write,
    /// Not declared: treated conservatively like a write.
    #[default]
    Unknown,
}

/// The framework's authentic outcome status for a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    /// The tool ran and the framework reported success.
    Succeeded,
    /// The call failed (see [`FailureKind`]).
    Failed,
    /// The tool was not started; its admission may be released.
    NotStarted,
    /// Whether the tool took effect is not known.
    Unknown,
}

/// Why a failed call failed, without error details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// Denied by permissions; the tool never ran.
    Permission,
    /// Arguments rejected before execution; the tool never ran.
    Arguments,
    /// The tool ran and reported an error.
    Execution,
    /// The tool exceeded its deadline.
    Timeout,
    /// The call was cancelled.
    Cancelled,
}

/// A tool call's outcome as the policy observes it: the framework's
/// metadata, never error text, raw arguments or result bodies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObservedOutcome {
    /// The framework's status.
    pub status: OutcomeStatus,
    /// Set when `status` is `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureKind>,
    /// True when the tool actually ran (an execution receipt exists).
    #[serde(default)]
    pub executed: bool,
    /// Lowercase hex SHA-256 of the canonical JSON result, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_fingerprint: Option<String>,
}

/// One actual tool execution observed by the policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Observation {
    /// The tool's registered name.
    pub tool_name: String,
    /// The provider's call id.
    pub call_id: String,
    /// The effect declared at admission.
    pub effect: Effect,
    /// Absent when no authentic outcome was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<ObservedOutcome>,
}

/// The bounded built-in task-state snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskStateSnapshot {
    /// The host scope the state belongs to.
    pub host_scope: String,
    /// The state's revision.
    pub revision: u64,
    /// Bumped by a same-revision restore.
    #[serde(default)]
    pub generation: u64,
    /// The state document.
    pub payload: serde_json::Value,
}

/// The fields of a check packet, as plain data: what a packet file holds.
/// Building one proves nothing; a checker receives a [`CheckPacket`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PacketParts {
    /// The policy execution this check belongs to.
    pub execution_id: String,
    /// Main-loop iteration count at the check.
    pub iteration: u32,
    /// Candidate final output, at most [`MAX_OUTPUT_CHARS`] characters.
    pub output_text: String,
    /// True when `output_text` was cut.
    #[serde(default)]
    pub output_truncated: bool,
    /// The last (at most [`MAX_OBSERVATIONS`]) observations, oldest first.
    #[serde(default)]
    pub observations: Vec<Observation>,
    /// Every observation in this execution, including omitted ones.
    #[serde(default)]
    pub observed_tool_calls: u32,
    /// True when older observations were omitted (exactly when
    /// `observed_tool_calls` exceeds the observations carried).
    #[serde(default)]
    pub observations_truncated: bool,
    /// The task-state snapshot, when the built-in store is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_state: Option<TaskStateSnapshot>,
}

/// Why a packet was refused: it breaks a bound or an invariant the engine
/// keeps for every packet it builds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PacketError {
    /// `outputText` is longer than [`MAX_OUTPUT_CHARS`].
    #[error("outputText has {chars} characters (limit {MAX_OUTPUT_CHARS})")]
    OutputTooLong {
        /// Characters found.
        chars: usize,
    },
    /// More than [`MAX_OBSERVATIONS`] observations are carried.
    #[error("the packet carries {count} observations (limit {MAX_OBSERVATIONS})")]
    TooManyObservations {
        /// Observations found.
        count: usize,
    },
    /// `observedToolCalls` counts fewer calls than are carried.
    #[error("observedToolCalls is {observed} but {carried} observations are carried")]
    ObservedBelowCarried {
        /// `observedToolCalls`.
        observed: u32,
        /// Observations carried.
        carried: usize,
    },
    /// `observationsTruncated` disagrees with the counts.
    #[error(
        "observationsTruncated is {flag} but {observed} calls were observed and {carried} are carried"
    )]
    TruncationMismatch {
        /// `observationsTruncated`.
        flag: bool,
        /// `observedToolCalls`.
        observed: u32,
        /// Observations carried.
        carried: usize,
    },
    /// The packet serializes to more than [`MAX_PACKET_BYTES`].
    #[error("the packet is {bytes} bytes as JSON (limit {MAX_PACKET_BYTES})")]
    TooLarge {
        /// Bytes of its JSON.
        bytes: usize,
    },
    /// The text is not JSON of the packet's shape.
    #[error("not a check packet: {0}")]
    Malformed(String),
}

/// The detached packet handed to completion and progress checkers, within
/// every bound. Only the engine and the validating constructors below make
/// one; its fields are read through [`PacketParts`] (it dereferences to
/// them) and cannot be changed. Cloning it is cheap (the fields are shared),
/// so a call that must outlive its caller's borrow can own one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckPacket(Arc<PacketParts>);

impl Serialize for CheckPacket {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl CheckPacket {
    /// A packet the engine built within every bound (no check again).
    pub(crate) fn built(parts: PacketParts) -> Self {
        Self(Arc::new(parts))
    }

    /// Accepts `parts` when they are within every bound and consistent;
    /// refuses them otherwise (nothing is cut).
    pub fn from_parts(parts: PacketParts) -> Result<Self, PacketError> {
        Self::accept(parts, None)
    }

    /// [`CheckPacket::from_parts`], where `text`, when given, is the JSON the
    /// parts were parsed from: a text whose compact form cannot pass the
    /// bound spares serializing the packet again to measure it.
    fn accept(parts: PacketParts, text: Option<&str>) -> Result<Self, PacketError> {
        let chars = parts.output_text.chars().count();
        if chars > MAX_OUTPUT_CHARS {
            return Err(PacketError::OutputTooLong { chars });
        }
        let carried = parts.observations.len();
        if carried > MAX_OBSERVATIONS {
            return Err(PacketError::TooManyObservations { count: carried });
        }
        let observed = parts.observed_tool_calls;
        if (observed as usize) < carried {
            return Err(PacketError::ObservedBelowCarried { observed, carried });
        }
        if parts.observations_truncated != (observed as usize > carried) {
            return Err(PacketError::TruncationMismatch {
                flag: parts.observations_truncated,
                observed,
                carried,
            });
        }
        if text.is_some_and(|text| compact_within_bound(text, &parts)) {
            debug_assert!(json_len(&parts).is_some_and(|n| n <= MAX_PACKET_BYTES));
        } else {
            let bytes = json_len(&parts).unwrap_or(usize::MAX);
            if bytes > MAX_PACKET_BYTES {
                return Err(PacketError::TooLarge { bytes });
            }
        }
        Ok(Self(Arc::new(parts)))
    }

    /// Parses a packet from JSON (the spec's camelCase fields) and accepts
    /// it as [`CheckPacket::from_parts`] does.
    pub fn from_json(text: &str) -> Result<Self, PacketError> {
        let parts: PacketParts =
            serde_json::from_str(text).map_err(|e| PacketError::Malformed(e.to_string()))?;
        Self::accept(parts, Some(text))
    }

    /// The fields, to change and validate again.
    pub fn into_parts(self) -> PacketParts {
        Arc::unwrap_or_clone(self.0)
    }
}

impl Deref for CheckPacket {
    type Target = PacketParts;

    fn deref(&self) -> &PacketParts {
        &self.0
    }
}

impl TryFrom<PacketParts> for CheckPacket {
    type Error = PacketError;

    fn try_from(parts: PacketParts) -> Result<Self, PacketError> {
        Self::from_parts(parts)
    }
}

/// Deserializing validates, as [`CheckPacket::from_parts`].
impl<'de> Deserialize<'de> for CheckPacket {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let parts = PacketParts::deserialize(deserializer)?;
        Self::from_parts(parts).map_err(serde::de::Error::custom)
    }
}

/// Returns `text` cut to at most `max_chars` characters, and whether it was cut.
pub(crate) fn truncate_chars(text: &str, max_chars: usize) -> (&str, bool) {
    match text.char_indices().nth(max_chars) {
        Some((byte, _)) => (&text[..byte], true),
        None => (text, false),
    }
}

/// At most this many bytes more than its text can the compact JSON of a
/// parsed packet have when its task state holds no floating-point number:
/// the fields a text may leave out are written with their defaults
/// (1,769 bytes at most today: 54 at the top of a packet carrying 100
/// observations, 15 in the task state, 17 in each outcome), while
/// whitespace, escapes and integers never grow. Floats can (`1e15` is
/// written `1000000000000000.0`).
pub(crate) const DEFAULTS_SLACK: usize = 4096;

/// True when the compact JSON of `parts`, parsed from `text`, is within
/// [`MAX_PACKET_BYTES`] whatever it is: measuring a max packet by
/// serializing it again cost as much as parsing it (a seventh of a served
/// 1 MiB check's CPU).
fn compact_within_bound(text: &str, parts: &PacketParts) -> bool {
    text.len().saturating_add(DEFAULTS_SLACK) <= MAX_PACKET_BYTES
        && parts
            .task_state
            .as_ref()
            .is_none_or(|state| !holds_float(&state.payload))
}

/// True when `value` holds a number that is not an integer.
fn holds_float(value: &serde_json::Value) -> bool {
    let mut todo = vec![value];
    while let Some(value) = todo.pop() {
        match value {
            serde_json::Value::Number(n) if n.is_f64() => return true,
            serde_json::Value::Array(items) => todo.extend(items),
            serde_json::Value::Object(map) => todo.extend(map.values()),
            _ => {}
        }
    }
    false
}

/// The length of `value` as compact JSON, counted without building it.
pub(crate) fn json_len<T: Serialize + ?Sized>(value: &T) -> Option<usize> {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).ok()?;
    Some(count.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A packet text leaving out every field that has a default, with 100
    /// outcomes and a task state.
    fn sparse(observations: usize) -> String {
        let outcome =
            r#"{"toolName":"t","callId":"c","effect":"read","outcome":{"status":"succeeded"}}"#;
        let list = vec![outcome; observations].join(",");
        format!(
            r#"{{"executionId":"e","iteration":1,"outputText":"","observations":[{list}],"observedToolCalls":{observations},"taskState":{{"hostScope":"h","revision":1,"payload":{{"n":1}}}}}}"#
        )
    }

    #[test]
    fn the_defaults_a_text_leaves_out_stay_within_the_slack() {
        let text = sparse(MAX_OBSERVATIONS);
        let parts: PacketParts = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        let grown = json_len(&parts).unwrap_or(usize::MAX) - text.len();
        assert!(grown <= DEFAULTS_SLACK, "{grown} bytes");
        // And the count in the slack's comment is today's.
        assert_eq!(grown, 1_769);
    }

    #[test]
    fn floats_that_grow_past_the_bound_are_refused_from_a_short_text() {
        // 4 bytes each in the text, 18 once written back.
        let n = (MAX_PACKET_BYTES - DEFAULTS_SLACK) / 5 - 100;
        let floats = vec!["1e15"; n].join(",");
        let text = format!(
            r#"{{"executionId":"e","iteration":1,"outputText":"","taskState":{{"hostScope":"h","revision":1,"payload":[{floats}]}}}}"#
        );
        assert!(text.len() + DEFAULTS_SLACK <= MAX_PACKET_BYTES);
        assert!(matches!(
            CheckPacket::from_json(&text),
            Err(PacketError::TooLarge { .. })
        ));
    }

    #[test]
    fn a_text_near_the_bound_is_measured_exactly() {
        // Whitespace counts in the text, not in the compact JSON: a text
        // over the bound whose compact form is within it is accepted.
        let packet = sparse(1);
        let padded = format!("{packet}{}", " ".repeat(MAX_PACKET_BYTES));
        assert!(CheckPacket::from_json(&padded).is_ok());
        let big = "x".repeat(MAX_PACKET_BYTES);
        let over = format!(
            r#"{{"executionId":"e","iteration":1,"outputText":"","taskState":{{"hostScope":"h","revision":1,"payload":"{big}"}}}}"#
        );
        assert!(matches!(
            CheckPacket::from_json(&over),
            Err(PacketError::TooLarge { .. })
        ));
    }
}
